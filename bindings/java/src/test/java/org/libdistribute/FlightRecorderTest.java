package org.libdistribute;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.Test;

/** The flight recorder (dist_context_dump) on a one-rank context, read with TimelineTest's JSON reader. */
public class FlightRecorderTest {
  private static List<?> array(Object value) {
    assertTrue("not an array: " + value, value instanceof List);
    return (List<?>) value;
  }

  @Test
  public void aDumpAfterTwoAllReducesAndABarrier() {
    try (Cluster cluster = Fixtures.emptyCluster(); Context context = new Context(cluster)) {
      Comm w = context.world();
      // A deterministic float sum runs as an all_to_all and an all_gather, which the recorder
      // lists instead: pin the default order whatever DIST_DETERMINISTIC says.
      w.configure(null, null, null, null, false);
      float[] data = {1f, 2f, 3f, 4f, 5f};
      w.allReduce(data.clone(), Op.SUM);
      w.allReduce(data.clone(), Op.MAX);
      w.barrier();
      String text = context.dump();
      Map<String, Object> dump = TimelineTest.object(TimelineTest.Json.parse(text));
      assertEquals(text, 0.0, dump.get("rank"));
      assertEquals(text, 1.0, dump.get("size"));
      assertEquals(text, List.of(), dump.get("lost_peers"));
      List<?> comms = array(dump.get("communicators"));
      assertEquals(text, 1, comms.size());
      Map<String, Object> comm = TimelineTest.object(comms.get(0));
      assertEquals(0.0, comm.get("id"));
      assertEquals("self", comm.get("path"));
      assertEquals(text, 3.0, comm.get("calls_started"));
      assertEquals(text, 3.0, comm.get("calls_finished"));
      List<?> calls = array(comm.get("calls"));
      assertEquals(text, 3, calls.size());
      Map<String, Object> first = TimelineTest.object(calls.get(0));
      assertEquals("all_reduce", first.get("kind"));
      assertEquals(5.0, first.get("count"));
      assertEquals("f32", first.get("dtype"));
      assertEquals("sum", first.get("op"));
      assertEquals("done", first.get("state"));
      Map<String, Object> last = TimelineTest.object(calls.get(2));
      assertEquals("barrier", last.get("kind"));
      assertEquals("done", last.get("state"));
    }
  }

  @Test
  public void aDumpFromAnotherThreadAndOfAClosedContext() throws Exception {
    Context closed;
    try (Cluster cluster = Fixtures.emptyCluster(); Context context = new Context(cluster)) {
      String text = CompletableFuture.supplyAsync(context::dump).get();
      array(TimelineTest.object(TimelineTest.Json.parse(text)).get("communicators"));
      closed = context;
    }
    try {
      closed.dump();
      fail("dump of a closed context");
    } catch (DistException e) {
      assertEquals(Status.ERR_INVALID_ARGUMENT, e.status());
      assertTrue(e.detail(), e.detail().contains("context"));
    }
  }
}
