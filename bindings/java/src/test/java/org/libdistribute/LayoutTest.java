package org.libdistribute;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import com.sun.jna.Structure;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.Test;

/**
 * Every struct of the header against its JNA declaration in DistLibrary: size, field
 * order and offsets as the C compiler lays them out (bindings/c_layout.py).
 */
public class LayoutTest {
  /** dist_strategy_options_t -> StrategyOptionsStruct. */
  static String javaName(String cName) {
    StringBuilder name = new StringBuilder();
    for (String part : cName.substring("dist_".length(), cName.length() - "_t".length()).split("_")) {
      name.append(Character.toUpperCase(part.charAt(0))).append(part.substring(1));
    }
    return name.append("Struct").toString();
  }

  static List<String> report() throws Exception {
    Process probe = new ProcessBuilder("python3", Fixtures.repo().resolve("bindings/c_layout.py").toString())
        .redirectError(ProcessBuilder.Redirect.INHERIT).start();
    List<String> lines = new ArrayList<>();
    try (BufferedReader r = new BufferedReader(new InputStreamReader(probe.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line = r.readLine(); line != null; line = r.readLine()) lines.add(line);
    }
    assertEquals("bindings/c_layout.py failed", 0, probe.waitFor());
    return lines;
  }

  /** JNA's Structure.fieldOffset (protected), callable here. */
  static Method fieldOffsetMethod() throws Exception {
    Method fieldOffset = Structure.class.getDeclaredMethod("fieldOffset", String.class);
    fieldOffset.setAccessible(true);
    return fieldOffset;
  }

  /** The tests that pin offsets hold for an LP64 ABI only. */
  static void assumeLp64() {
    org.junit.Assume.assumeTrue("the pinned offsets are those of an LP64 ABI", com.sun.jna.Native.POINTER_SIZE == 8);
  }

  /** The probe's line for the struct `cName`, or null. */
  static String headerLine(String cName) throws Exception {
    for (String line : report()) {
      if (line.startsWith(cName + " ")) return line;
    }
    return null;
  }

  @Test
  public void everyStructMatchesTheHeader() throws Exception {
    Method fieldOffset = fieldOffsetMethod();
    List<String> lines = report();
    assertTrue("the probe found " + lines.size() + " structs", lines.size() >= 9);
    for (String line : lines) {
      String[] words = line.split(" ");
      String cName = words[0];
      Class<?> declared = Class.forName(DistLibrary.class.getName() + "$" + javaName(cName));
      Structure s = (Structure) declared.getDeclaredConstructor().newInstance();
      assertEquals(cName + " size", Long.parseLong(words[1]), s.size());
      String[] fields = new String[words.length - 3];
      for (int i = 3; i < words.length; i++) {
        String[] f = words[i].split(":");
        fields[i - 3] = f[0];
        assertEquals(cName + "." + f[0] + " offset", Integer.parseInt(f[1]), fieldOffset.invoke(s, f[0]));
      }
      assertArrayEquals(cName + " fields", fields, declared.getAnnotation(Structure.FieldOrder.class).value());
    }
  }

  @Test
  public void strategyOptionsEndWithNumPacksAndTailPadding() throws Exception {
    assumeLp64();
    Method fieldOffset = fieldOffsetMethod();
    Structure s = new DistLibrary.StrategyOptionsStruct();
    // num_packs (int32) follows reduce_to_device at 88; 4 bytes of tail padding make 96.
    assertEquals(80, fieldOffset.invoke(s, "reduce_to_device"));
    assertEquals(88, fieldOffset.invoke(s, "num_packs"));
    assertEquals(96, s.size());
  }

  @Test
  public void contextOptionsEndWithTheTimeline() throws Exception {
    assumeLp64();
    Method fieldOffset = fieldOffsetMethod();
    Structure s = new DistLibrary.ContextOptionsStruct();
    // The appended timeline pointer sits at 40, after timeout_ms (32): 48 bytes in all.
    assertEquals(32, fieldOffset.invoke(s, "timeout_ms"));
    assertEquals(40, fieldOffset.invoke(s, "timeline"));
    assertEquals(48, s.size());
    String header = headerLine("dist_context_options_t");
    assertTrue("the header's layout: " + header, header != null && header.startsWith("dist_context_options_t 48 ")
        && header.endsWith(" timeline:40:8"));
  }

  @Test
  public void commOptionsEndWithStallWarningAndDeterministic() throws Exception {
    assumeLp64();
    Method fieldOffset = fieldOffsetMethod();
    Structure s = new DistLibrary.CommOptionsStruct();
    // timing (int32 at 20) ends at 24, where the int64 stall_warning_ms fits without padding;
    // deterministic (int32 at 32) takes 4 bytes of tail padding: 40 in all.
    assertEquals(20, fieldOffset.invoke(s, "timing"));
    assertEquals(24, fieldOffset.invoke(s, "stall_warning_ms"));
    assertEquals(32, fieldOffset.invoke(s, "deterministic"));
    assertEquals(40, s.size());
    String header = headerLine("dist_comm_options_t");
    assertTrue("the header's layout: " + header, header != null && header.startsWith("dist_comm_options_t 40 ")
        && header.endsWith(" stall_warning_ms:24:8 deterministic:32:4"));
  }
}
