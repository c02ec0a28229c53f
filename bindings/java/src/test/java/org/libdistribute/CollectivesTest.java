package org.libdistribute;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.time.Duration;
import java.util.List;
import org.junit.Test;

public class CollectivesTest {
  private static float[] read(NativeBuffer b) {
    float[] out = new float[(int) b.count()];
    b.copyTo(out);
    return out;
  }

  @Test
  public void eachCollectiveOnOneRank() {
    float[] data = {3f, -1f, 2.5f};
    try (Cluster cluster = Fixtures.emptyCluster(); Context context = new Context(cluster)) {
      assertEquals(0, context.rank());
      assertEquals(1, context.size());
      Comm w = context.world();
      NativeBuffer in = NativeBuffer.copyOf(data);
      NativeBuffer out = NativeBuffer.allocate(DType.F32, 3);
      w.allReduce(in, out, Op.MEAN);
      assertArrayEquals(data, read(out), 0f);
      out = NativeBuffer.allocate(DType.F32, 3);
      w.reduce(in, out, Op.MIN, 0);
      assertArrayEquals(data, read(out), 0f);
      out = NativeBuffer.allocate(DType.F32, 3);
      w.allGather(in, out);
      assertArrayEquals(data, read(out), 0f);
      out = NativeBuffer.allocate(DType.F32, 3);
      w.reduceScatter(in, out, Op.SUM);
      assertArrayEquals(data, read(out), 0f);
      out = NativeBuffer.allocate(DType.F32, 3);
      w.allToAll(in, out);
      assertArrayEquals(data, read(out), 0f);
      w.reduceScatter(null, in, Op.MAX);
      w.allToAll(null, in);
      w.allGather(null, in);
      w.broadcast(in, 0);
      assertArrayEquals(data, read(in), 0f);
      float[] array = data.clone();
      w.broadcast(array, 0);
      assertArrayEquals(data, array, 0f);
      w.barrier();
    }
  }

  @Test
  public void asyncCollectives() {
    try (Cluster cluster = Fixtures.emptyCluster(); Context context = new Context(cluster)) {
      Comm w = context.world();
      NativeBuffer ints = NativeBuffer.copyOf(new int[] {1, 2, 3});
      Request[] requests = {
        w.allReduceAsync(null, ints, Op.SUM), w.reduceAsync(null, ints, Op.SUM, 0), w.broadcastAsync(ints, 0),
        w.allGatherAsync(null, ints), w.reduceScatterAsync(null, ints, Op.SUM), w.allToAllAsync(null, ints),
        w.barrierAsync()};
      for (Request r : requests) {
        assertTrue(r.await(Duration.ofSeconds(30)));
        r.await();
        r.close();
      }
      int[] back = new int[3];
      ints.copyTo(back);
      assertArrayEquals(new int[] {1, 2, 3}, back);
    }
  }

  @Test
  public void wrongArgumentsAreNamed() {
    try (Cluster cluster = Fixtures.emptyCluster(); Context context = new Context(cluster)) {
      Comm w = context.world();
      try {
        w.allReduce(NativeBuffer.allocate(DType.F32, 4), NativeBuffer.allocate(DType.F32, 5), Op.SUM);
        fail("mismatched counts");
      } catch (DistException e) {
        assertEquals(Status.ERR_INVALID_ARGUMENT, e.status());
        assertTrue(e.detail(), e.detail().contains("count"));
      }
      try {
        w.broadcast(NativeBuffer.allocate(DType.I32, 2), 5);
        fail("root 5 of 1 rank");
      } catch (DistException e) {
        assertEquals(Status.ERR_INVALID_ARGUMENT, e.status());
      }
      w.configure(Duration.ofSeconds(5), Comm.ALLREDUCE_RING);
      try {
        w.configure(null, 42);
        fail("algorithm 42");
      } catch (DistException e) {
        assertEquals(Status.ERR_INVALID_ARGUMENT, e.status());
      }
    }
  }

  @Test
  public void hostsOfOneRank() {
    try (Cluster cluster = Fixtures.emptyCluster(); Context context = new Context(cluster)) {
      Comm w = context.world();
      assertArrayEquals(new int[] {0, 1, 1}, new int[] {w.localRank(), w.localSize(), w.numHosts()});
      Comm host = w.splitHost();
      try (host) {
        assertArrayEquals(new int[] {0, 1, 0, 1, 1},
            new int[] {host.rank(), host.size(), host.localRank(), host.localSize(), host.numHosts()});
        assertEquals(CommPath.SELF, host.path());
        long[] data = {4, -2, 9};
        host.allReduce(data, Op.MAX);
        assertArrayEquals(new long[] {4, -2, 9}, data);
      }
      assertTrue(host.isClosed() && !w.isClosed());
      for (Runnable query : new Runnable[] {host::localRank, host::localSize, host::numHosts, host::splitHost}) {
        try {
          query.run();
          fail("a closed communicator");
        } catch (DistException e) {
          assertEquals(Status.ERR_INVALID_ARGUMENT, e.status());
          assertTrue(e.detail(), e.detail().contains("comm"));
        }
      }
      long[] ones = {1, 1};
      w.allReduce(ones, Op.SUM); // the world outlives its host communicator
      assertArrayEquals(new long[] {1, 1}, ones);
    }
  }

  @Test
  public void pathAndAlgorithmOfOneRank() {
    try (Cluster cluster = Fixtures.emptyCluster(); Context context = new Context(cluster)) {
      Comm w = context.world();
      assertEquals(CommPath.SELF, w.path());
      for (Collective c : Collective.values()) {
        assertEquals(c.name(), "self", w.algorithm(c, 1L << 20));
      }
      try {
        w.algorithm(8, 8); // one past ALL_TO_ALL_V
        fail("collective 8");
      } catch (DistException e) {
        assertEquals(Status.ERR_INVALID_ARGUMENT, e.status());
        assertTrue(e.detail(), e.detail().contains("collective 8 is not a DIST_COLLECTIVE_* value"));
      }
      // One rank shares no segment and spans no hosts.
      assertUnsupported(w, Comm.ALLREDUCE_SHARED_MEMORY, "DIST_ALLREDUCE_SHARED_MEMORY");
      assertUnsupported(w, Comm.ALLREDUCE_HIERARCHICAL, "DIST_ALLREDUCE_HIERARCHICAL");
    }
  }

  @Test
  public void devicePathBeforeAnyCallOnCudaMemory() {
    assertArrayEquals(new int[] {4, 5}, new int[] {CommPath.NCCL.value, CommPath.STAGED.value});
    try (Cluster cluster = Fixtures.emptyCluster(); Context context = new Context(cluster)) {
      Comm w = context.world();
      // Nothing is chosen until the first call on CUDA memory (never, without CUDA).
      try {
        w.devicePath();
        fail("a device path before any call on CUDA memory");
      } catch (DistException e) {
        assertEquals(Status.ERR_UNAVAILABLE, e.status());
        assertTrue(e.detail(), e.detail().contains("CUDA"));
      }
    }
  }

  /** Configuring the all-reduce algorithm fails with ERR_UNSUPPORTED naming it. */
  private static void assertUnsupported(Comm w, int algorithm, String name) {
    try {
      w.configure(null, algorithm);
      fail(name + " on one rank");
    } catch (DistException e) {
      assertEquals(Status.ERR_UNSUPPORTED, e.status());
      assertTrue(e.detail(), e.detail().contains(name));
    }
  }

  private static CommStat untimed(Collective collective, long calls, long bytes) {
    return new CommStat(collective, CommPath.SELF, "self", calls, 0, bytes, 0, 0);
  }

  @Test
  public void statsCountCallsBytesAndTime() {
    try (Cluster cluster = Fixtures.emptyCluster(); Context context = new Context(cluster)) {
      Comm w = context.world();
      w.resetStats();
      assertEquals(List.of(), w.stats());
      float[] data = {1f, 2f, 3f, 4f, 5f, 6f};
      NativeBuffer in = NativeBuffer.copyOf(data);
      for (int i = 0; i < 3; i++) w.allReduce(in, NativeBuffer.allocate(DType.F32, 6), Op.SUM);
      w.broadcast(NativeBuffer.allocate(DType.I64, 5), 0);
      w.allToAllV(NativeBuffer.copyOf(new int[] {1, 2, 3, 4}), Blocks.packed(4), NativeBuffer.allocate(DType.I32, 4),
          Blocks.packed(4));
      w.barrier();
      // Timing is off by default: no timed calls, no time.
      assertEquals(List.of(untimed(Collective.ALL_REDUCE, 3, 3 * 6 * 4), untimed(Collective.BROADCAST, 1, 5 * 8),
          untimed(Collective.ALL_TO_ALL_V, 1, 4 * 4), untimed(Collective.BARRIER, 1, 0)), w.stats());

      w.configure(null, null, true);
      w.resetStats();
      assertEquals(List.of(), w.stats());
      for (int i = 0; i < 4; i++) w.allGather(in, NativeBuffer.allocate(DType.F32, 6));
      List<CommStat> stats = w.stats();
      assertEquals(stats.toString(), 1, stats.size());
      CommStat timed = stats.get(0);
      assertEquals(Collective.ALL_GATHER, timed.collective());
      assertEquals(CommPath.SELF, timed.path());
      assertEquals("self", timed.algorithm());
      assertEquals(4, timed.calls());
      assertEquals(4 * 6 * 4, timed.bytes());
      assertEquals(0, timed.failed());
      assertEquals(timed.calls(), timed.timedCalls());
      assertTrue(timed.toString(), timed.timeNs() > 0);

      w.configure(null, null, false);
      w.resetStats();
      try (Request r = w.allReduceAsync(null, NativeBuffer.copyOf(new long[] {1, 2}), Op.MAX)) {
        r.await();
      }
      assertEquals(List.of(untimed(Collective.ALL_REDUCE, 1, 2 * 8)), w.stats());
    }
  }

  @Test
  public void statsRefuseABadTimingAndAClosedCommunicator() {
    try (Cluster cluster = Fixtures.emptyCluster(); Context context = new Context(cluster)) {
      Comm w = context.world();
      // configure takes a Boolean: only the C struct can carry another value, which the library refuses.
      DistLibrary.CommOptionsStruct options = new DistLibrary.CommOptionsStruct();
      options.field_mask = Comm.OPT_TIMING;
      options.timing = 2;
      try {
        DistException.check(DistLibrary.LIB.dist_comm_configure(w.handle().get(), options));
        fail("timing 2");
      } catch (DistException e) {
        assertEquals(Status.ERR_INVALID_ARGUMENT, e.status());
        assertTrue(e.detail(), e.detail().contains("timing 2 must be 0 or 1"));
      }
      Comm host = w.splitHost();
      host.close();
      for (Runnable call : new Runnable[] {host::stats, host::resetStats}) {
        try {
          call.run();
          fail("a closed communicator");
        } catch (DistException e) {
          assertEquals(Status.ERR_INVALID_ARGUMENT, e.status());
          assertTrue(e.detail(), e.detail().contains("comm"));
        }
      }
    }
  }

  @Test
  public void stallWarningAndDeterministicOptions() {
    try (Cluster cluster = Fixtures.emptyCluster(); Context context = new Context(cluster)) {
      Comm w = context.world();
      w.configure(null, null, null, Duration.ofMillis(5000), true);
      float[] data = {1.5f, -2f, 3.25f, 0.5f, 8f};
      float[] out = data.clone();
      w.allReduce(out, Op.SUM);
      // One rank: the sum is the rank's own values, bit for bit, in the fixed order too.
      assertArrayEquals(data, out, 0f);
      w.configure(null, null, null, Duration.ZERO, false); // 0: no warning; back to the fastest order
      out = data.clone();
      w.allReduce(out, Op.SUM);
      assertArrayEquals(data, out, 0f);
    }
  }

  @Test
  public void aBadStallWarningOrDeterministicIsRefused() {
    try (Cluster cluster = Fixtures.emptyCluster(); Context context = new Context(cluster)) {
      Comm w = context.world();
      try {
        w.configure(null, null, null, Duration.ofMillis(-1), null);
        fail("stall warning -1 ms");
      } catch (DistException e) {
        assertEquals(Status.ERR_INVALID_ARGUMENT, e.status());
        assertTrue(e.detail(), e.detail().contains("stall_warning_ms -1 must be 0 (no warning) or positive"));
      }
      // configure takes a Boolean: only the C struct can carry 2, which the library refuses.
      DistLibrary.CommOptionsStruct options = new DistLibrary.CommOptionsStruct();
      options.field_mask = Comm.OPT_DETERMINISTIC;
      options.deterministic = 2;
      try {
        DistException.check(DistLibrary.LIB.dist_comm_configure(w.handle().get(), options));
        fail("deterministic 2");
      } catch (DistException e) {
        assertEquals(Status.ERR_INVALID_ARGUMENT, e.status());
        assertTrue(e.detail(), e.detail().contains("deterministic 2 must be 0 or 1"));
      }
    }
  }
}
