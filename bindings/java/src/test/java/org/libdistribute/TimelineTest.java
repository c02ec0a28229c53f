package org.libdistribute;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.Test;

/** The context's timeline option (dist_context_options_t.timeline) on a one-rank context. */
public class TimelineTest {
  /**
   * A small JSON reader (objects as Maps, arrays as Lists, numbers as Doubles): the
   * JDK has none and the tests depend on JNA and JUnit only.
   */
  static final class Json {
    private final String text;
    private int at;

    private Json(String text) {
      this.text = text;
    }

    static Object parse(String text) {
      Json p = new Json(text);
      Object value = p.value();
      p.skipSpace();
      if (p.at != text.length()) throw new IllegalArgumentException("trailing text at " + p.at);
      return value;
    }

    private void skipSpace() {
      while (at < text.length() && Character.isWhitespace(text.charAt(at))) at++;
    }

    private char peek() {
      skipSpace();
      if (at >= text.length()) throw new IllegalArgumentException("unexpected end of the text");
      return text.charAt(at);
    }

    private void expect(char c) {
      if (peek() != c) throw new IllegalArgumentException("expected '" + c + "' at " + at);
      at++;
    }

    private Object literal(String word, Object value) {
      if (!text.startsWith(word, at)) throw new IllegalArgumentException("bad literal at " + at);
      at += word.length();
      return value;
    }

    private Object value() {
      char c = peek();
      switch (c) {
        case '{': {
          at++;
          Map<String, Object> members = new LinkedHashMap<>();
          if (peek() == '}') {
            at++;
            return members;
          }
          while (true) {
            String key = string();
            expect(':');
            members.put(key, value());
            char next = peek();
            at++;
            if (next == '}') return members;
            if (next != ',') throw new IllegalArgumentException("expected ',' or '}' at " + (at - 1));
          }
        }
        case '[': {
          at++;
          List<Object> items = new ArrayList<>();
          if (peek() == ']') {
            at++;
            return items;
          }
          while (true) {
            items.add(value());
            char next = peek();
            at++;
            if (next == ']') return items;
            if (next != ',') throw new IllegalArgumentException("expected ',' or ']' at " + (at - 1));
          }
        }
        case '"':
          return string();
        case 't':
          return literal("true", Boolean.TRUE);
        case 'f':
          return literal("false", Boolean.FALSE);
        case 'n':
          return literal("null", null);
        default: {
          int start = at;
          while (at < text.length() && "+-.eE0123456789".indexOf(text.charAt(at)) >= 0) at++;
          try {
            return Double.parseDouble(text.substring(start, at));
          } catch (NumberFormatException e) {
            throw new IllegalArgumentException("bad value at " + start, e);
          }
        }
      }
    }

    private String string() {
      expect('"');
      StringBuilder out = new StringBuilder();
      while (true) {
        if (at >= text.length()) throw new IllegalArgumentException("unterminated string");
        char c = text.charAt(at++);
        if (c == '"') return out.toString();
        if (c != '\\') {
          out.append(c);
          continue;
        }
        if (at >= text.length()) throw new IllegalArgumentException("unterminated escape");
        char e = text.charAt(at++);
        switch (e) {
          case '"': case '\\': case '/': out.append(e); break;
          case 'b': out.append('\b'); break;
          case 'f': out.append('\f'); break;
          case 'n': out.append('\n'); break;
          case 'r': out.append('\r'); break;
          case 't': out.append('\t'); break;
          case 'u':
            out.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
            at += 4;
            break;
          default: throw new IllegalArgumentException("bad escape at " + (at - 1));
        }
      }
    }
  }

  @SuppressWarnings("unchecked")
  static Map<String, Object> object(Object value) {
    assertTrue("not an object: " + value, value instanceof Map);
    return (Map<String, Object>) value;
  }

  @Test
  public void theReaderReadsJson() {
    Object parsed = Json.parse(" [{\"a\": [1, -2.5e1, true, null], \"b\\\"\\u0041\": \"x\\ny\"}, {}] ");
    List<Object> expectedA = new ArrayList<>(List.of(1.0, -25.0, true));
    expectedA.add(null);
    Map<String, Object> first = new LinkedHashMap<>();
    first.put("a", expectedA);
    first.put("b\"A", "x\ny");
    assertEquals(List.of(first, Map.of()), parsed);
    for (String bad : new String[] {"[1,", "[1] x", "{\"a\" 1}"}) {
      try {
        Json.parse(bad);
        fail("parsed " + bad);
      } catch (IllegalArgumentException expected) {
        // refused, as it should be
      }
    }
  }

  @Test
  public void aTimelineRecordsTheCollectives() throws Exception {
    Path dir = Files.createTempDirectory("dist-java-timeline");
    Path prefix = dir.resolve("run");
    float[] data = {1f, 2f, 3f, 4f, 5f};
    Context.Options options = new Context.Options();
    options.timeline = prefix.toString();
    try (Cluster cluster = Fixtures.emptyCluster(); Context context = new Context(cluster, options)) {
      Comm w = context.world();
      float[] inPlace = data.clone();
      w.allReduce(inPlace, Op.SUM);
      assertArrayEquals(data, inPlace, 0f);
      w.barrier();
    } // closing the context closes the file's array
    Path file = dir.resolve("run.0.json");
    String text = Files.readString(file);
    String trimmed = text.trim();
    assertTrue(text, trimmed.startsWith("[") && trimmed.endsWith("]"));
    assertTrue(text, text.contains("\"name\":\"all_reduce\"") && text.contains("\"cat\":\"collective\""));

    Object parsed = Json.parse(text);
    assertTrue("not an array: " + text, parsed instanceof List);
    List<Map<String, Object>> metadata = new ArrayList<>();
    List<Map<String, Object>> calls = new ArrayList<>();
    boolean barrier = false;
    for (Object item : (List<?>) parsed) {
      Map<String, Object> event = object(item);
      Object name = event.get("name");
      if ("libdistribute".equals(name)) metadata.add(event);
      if ("all_reduce".equals(name)) calls.add(event);
      barrier |= "barrier".equals(name) && "collective".equals(event.get("cat"));
    }
    assertEquals(text, 1, metadata.size());
    assertEquals("M", metadata.get(0).get("ph"));
    assertEquals(0.0, object(metadata.get(0).get("args")).get("rank"));
    assertEquals(text, 1, calls.size());
    Map<String, Object> call = calls.get(0);
    Map<String, Object> args = object(call.get("args"));
    assertEquals("collective", call.get("cat"));
    assertEquals("X", call.get("ph"));
    assertEquals((double) (data.length * 4), args.get("bytes"));
    assertEquals("self", args.get("path"));
    assertEquals("f32", args.get("dtype"));
    assertTrue(text, barrier);
    Files.delete(file);
    Files.delete(dir);
  }

  @Test
  public void anEmptyTimelineIsRefused() {
    Context.Options options = new Context.Options();
    options.timeline = "";
    try (Cluster cluster = Fixtures.emptyCluster()) {
      ServerTest.assertFails(Status.ERR_INVALID_ARGUMENT, "timeline is empty", () -> new Context(cluster, options));
    }
  }

  @Test
  public void aTimelineInAMissingDirectoryNamesTheFile() throws Exception {
    Path dir = Files.createTempDirectory("dist-java-timeline");
    Path prefix = dir.resolve("missing").resolve("run");
    Context.Options options = new Context.Options();
    options.timeline = prefix.toString();
    try (Cluster cluster = Fixtures.emptyCluster()) {
      ServerTest.assertFails(Status.ERR_INVALID_ARGUMENT, "cannot create '" + prefix + ".0.json'",
          () -> new Context(cluster, options));
    }
    Files.delete(dir);
  }
}
