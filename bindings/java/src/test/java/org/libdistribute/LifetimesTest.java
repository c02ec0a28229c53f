package org.libdistribute;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.time.Duration;
import org.junit.Test;

public class LifetimesTest {
  @Test
  public void closeTwiceThenUseIsTheLibraryError() {
    Cluster c = Cluster.fromJson("{\"cluster\": {\"worker\": [\"a:1\"]}}");
    c.close();
    c.close();
    try {
      c.numTasks("worker");
      fail("a closed cluster answered");
    } catch (DistException e) {
      assertEquals(Status.ERR_INVALID_ARGUMENT, e.status());
    }
  }

  @Test
  public void contextClosesItsCommunicatorsFirst() {
    try (Cluster cluster = Fixtures.emptyCluster()) {
      Context context = new Context(cluster);
      Comm world = context.world();
      Comm child = world.split(0, 0);
      assertNull(world.split(-1, 0));
      assertEquals(1, child.size());
      context.close();
      assertTrue(child.isClosed() && world.isClosed());
      child.close(); // after its context: a no-op
      context.close();
      try {
        child.barrier();
        fail("a closed communicator ran a barrier");
      } catch (DistException e) {
        assertEquals(Status.ERR_INVALID_ARGUMENT, e.status());
      }
    }
  }

  @Test
  public void requestCloseWaitsAndFreesOnce() {
    try (Cluster cluster = Fixtures.emptyCluster(); Context context = new Context(cluster)) {
      NativeBuffer data = NativeBuffer.copyOf(new double[] {1.5, 2.5});
      Request r = context.world().allReduceAsync(null, data, Op.MAX);
      r.close();
      r.close();
      try (Request again = context.world().allReduceAsync(null, data, Op.SUM)) {
        assertTrue(again.await(Duration.ofSeconds(30)));
        assertTrue(again.test());
      }
    }
  }

  @Test
  public void garbageCollectionReleasesUnclosedHandles() throws Exception {
    for (int i = 0; i < 200; i++) {
      Cluster cluster = Fixtures.emptyCluster();
      Context context = new Context(cluster);
      context.world().split(1, 0);
    }
    System.gc();
    Thread.sleep(100);
  }

  @Test
  public void abortFailsLaterCalls() {
    try (Cluster cluster = Fixtures.emptyCluster(); Context context = new Context(cluster)) {
      context.abort("test says stop");
      try {
        context.world().barrier();
        fail("barrier after abort");
      } catch (DistException e) {
        assertEquals(Status.ERR_ABORTED, e.status());
        assertTrue(e.isPeerFailure());
      }
    }
  }
}
