package org.libdistribute;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.util.ArrayList;
import java.util.List;
import org.junit.Test;

/**
 * send and recv (blocking and not), ANY_SOURCE and Request.source, and allToAllV
 * between ranks 0 and 1 of two contexts on two threads; mismatches and bad
 * arguments. Each rank returns what it saw; the checks run after both ended,
 * against values computed here.
 */
public class PointToPointTest {
  /** What rank sends to its peer as message n. */
  static double[] message(int rank, int n, int length) {
    double[] out = new double[length];
    for (int i = 0; i < length; i++) out[i] = (rank + 1) * 1000.0 + n * 10.0 + i * 0.5;
    return out;
  }

  static DistException thrown(Runnable call) {
    try {
      call.run();
    } catch (DistException e) {
      return e;
    }
    throw new AssertionError("the call must fail");
  }

  @Test
  public void blockingSendAndRecvCarryDataBothWays() throws Exception {
    List<Object> outcomes = Fixtures.twoRanks((rank, world, steps) -> {
      int peer = 1 - rank;
      NativeBuffer floats = NativeBuffer.allocate(DType.F64, 1031);
      NativeBuffer ints = NativeBuffer.allocate(DType.I32, 3);
      int from;
      if (rank == 0) {
        world.send(NativeBuffer.copyOf(message(0, 0, 1031)), peer, 5);
        world.send(NativeBuffer.copyOf(new int[] {7, -8, 9}), peer, Comm.TAG_MAX);
        from = world.recv(floats, peer, 0);
        world.recv(ints, peer, 1);
      } else {
        from = world.recv(floats, peer, 5);
        world.recv(ints, peer, Comm.TAG_MAX);
        world.send(NativeBuffer.copyOf(message(1, 0, 1031)), peer, 0);
        world.send(NativeBuffer.copyOf(new int[] {Integer.MIN_VALUE, 0, Integer.MAX_VALUE}), peer, 1);
      }
      return new Object[] {floats.toArray(), ints.toArray(), from};
    });
    Object[] zero = (Object[]) Fixtures.outcome(outcomes, 0);
    Object[] one = (Object[]) Fixtures.outcome(outcomes, 1);
    assertArrayEquals(message(1, 0, 1031), (double[]) zero[0], 0.0);
    assertArrayEquals(new int[] {Integer.MIN_VALUE, 0, Integer.MAX_VALUE}, (int[]) zero[1]);
    assertEquals(1, zero[2]);
    assertArrayEquals(message(0, 0, 1031), (double[]) one[0], 0.0);
    assertArrayEquals(new int[] {7, -8, 9}, (int[]) one[1]);
    assertEquals(0, one[2]);
  }

  @Test
  public void receivesMatchByTagAndKeepTheOrderOfOneTag() throws Exception {
    int[][] messages = {{0, 1, 64}, {1, 2, 64}, {2, 3, 64}, {3, 3, 64}, {4, 4, 0}}; // n, tag, length
    List<Object> outcomes = Fixtures.twoRanks((rank, world, steps) -> {
      List<double[]> received = new ArrayList<>();
      if (rank == 0) { // non-blocking sends, so that the receiver's order cannot hold them up
        List<Request> requests = new ArrayList<>();
        for (int[] m : messages) requests.add(world.sendAsync(NativeBuffer.copyOf(message(0, m[0], m[2])), 1, m[1]));
        for (Request r : requests) {
          r.await();
          r.close();
        }
        return received;
      }
      for (int tag : new int[] {4, 3, 2, 3, 1}) {
        NativeBuffer data = NativeBuffer.allocate(DType.F64, tag == 4 ? 0 : 64);
        world.recv(data, 0, tag);
        received.add((double[]) data.toArray());
      }
      return received;
    });
    Fixtures.outcome(outcomes, 0);
    @SuppressWarnings("unchecked")
    List<double[]> received = (List<double[]>) Fixtures.outcome(outcomes, 1);
    double[][] expected = {new double[0], message(0, 2, 64), message(0, 1, 64), message(0, 3, 64), message(0, 0, 64)};
    assertEquals(expected.length, received.size());
    for (int i = 0; i < expected.length; i++) assertArrayEquals("receive " + i, expected[i], received.get(i), 0.0);
  }

  @Test
  public void anySourceReceivesTellTheSender() throws Exception {
    List<Object> outcomes = Fixtures.twoRanks((rank, world, steps) -> {
      if (rank == 1) {
        world.send(NativeBuffer.copyOf(new long[] {11, 12}), 0, 9);
        world.send(NativeBuffer.copyOf(new long[] {13, 14}), 0, 9);
        try (Request r = world.sendAsync(NativeBuffer.copyOf(new long[] {15}), 0, 10)) {
          r.await();
          return new Object[] {thrown(r::source)}; // a send has no source
        }
      }
      NativeBuffer first = NativeBuffer.allocate(DType.I64, 2);
      int firstFrom = world.recv(first, Comm.ANY_SOURCE, 9);
      NativeBuffer second = NativeBuffer.allocate(DType.I64, 2);
      NativeBuffer third = NativeBuffer.allocate(DType.I64, 1);
      int[] from = new int[2];
      try (Request r = world.recvAsync(second, Comm.ANY_SOURCE, 9)) {
        r.await();
        from[0] = r.source();
      }
      try (Request r = world.recvAsync(third, Comm.ANY_SOURCE, 10)) {
        while (!r.await(java.time.Duration.ofSeconds(30))) {
          // an await that ran out: the request stays valid
        }
        from[1] = r.source();
      }
      return new Object[] {first.toArray(), firstFrom, second.toArray(), from[0], third.toArray(), from[1]};
    });
    DistException noSource = (DistException) ((Object[]) Fixtures.outcome(outcomes, 1))[0];
    assertEquals(Status.ERR_INVALID_ARGUMENT, noSource.status());
    Object[] seen = (Object[]) Fixtures.outcome(outcomes, 0);
    assertArrayEquals(new long[] {11, 12}, (long[]) seen[0]);
    assertArrayEquals(new long[] {13, 14}, (long[]) seen[2]);
    assertArrayEquals(new long[] {15}, (long[]) seen[4]);
    assertEquals(1, seen[1]);
    assertEquals(1, seen[3]);
    assertEquals(1, seen[5]);
  }

  @Test
  public void aCountOrDTypeMismatchFailsTheReceiveWithTheLibrarysMessage() throws Exception {
    List<Object> outcomes = Fixtures.twoRanks((rank, world, steps) -> {
      if (rank == 0) { // the sends complete
        world.send(NativeBuffer.copyOf(new float[] {1, 1, 1, 1, 1}), 1, 0);
        world.send(NativeBuffer.copyOf(new int[] {1, 1, 1, 1}), 1, 1);
        return null;
      }
      DistException count = thrown(() -> world.recv(NativeBuffer.allocate(DType.F32, 6), 0, 0));
      DistException dtype = thrown(() -> world.recv(NativeBuffer.allocate(DType.F32, 4), 0, 1));
      return new DistException[] {count, dtype};
    });
    Fixtures.outcome(outcomes, 0);
    DistException[] errors = (DistException[]) Fixtures.outcome(outcomes, 1);
    for (DistException e : errors) {
      assertEquals(e.getMessage(), Status.ERR_MISMATCH, e.status());
      assertTrue(e.isPeerFailure());
      assertFalse(e.detail().isEmpty());
    }
    assertTrue(errors[0].getMessage(), errors[0].detail().contains("5"));
  }

  @Test
  public void badPeersTagsAndBuffersAreRefused() {
    try (Cluster cluster = Fixtures.emptyCluster(); Context context = new Context(cluster)) {
      Comm world = context.world();
      NativeBuffer data = NativeBuffer.allocate(DType.F32, 2);
      Runnable[] calls = {
          () -> world.send(data, 0, 0), () -> world.recv(data, 0, 0), () -> world.send(data, 1, 0),
          () -> world.recv(data, -2, 0), () -> world.send(data, Comm.ANY_SOURCE, 0), () -> world.send(data, 0, -1),
          () -> world.recvAsync(data, 7, 0), () -> world.send(null, 0, 0)};
      for (int i = 0; i < calls.length; i++) {
        DistException e = thrown(calls[i]);
        assertEquals("case " + i + ": " + e.getMessage(), Status.ERR_INVALID_ARGUMENT, e.status());
        assertFalse("case " + i, e.detail().isEmpty());
      }
    }
  }

  /** COUNTS[i][j]: how many elements rank i sends to rank j. */
  static final long[][] COUNTS = {{3, 0}, {4, 5}};

  /** What rank from sends to rank to. */
  static long[] block(int from, int to) {
    long[] out = new long[(int) COUNTS[from][to]];
    for (int k = 0; k < out.length; k++) out[k] = from * 100 + to * 10 + k - 50;
    return out;
  }

  static long[] concat(long[]... parts) {
    int n = 0;
    for (long[] p : parts) n += p.length;
    long[] out = new long[n];
    int at = 0;
    for (long[] p : parts) {
      System.arraycopy(p, 0, out, at, p.length);
      at += p.length;
    }
    return out;
  }

  @Test
  public void allToAllVMovesUnevenBlocksWithZerosPackedAndAtOffsets() throws Exception {
    List<Object> outcomes = Fixtures.twoRanks((rank, world, steps) -> {
      NativeBuffer send = NativeBuffer.copyOf(concat(block(rank, 0), block(rank, 1)));
      Blocks sendBlocks = Blocks.packed(COUNTS[rank]);
      long[] recvCounts = {COUNTS[0][rank], COUNTS[1][rank]};
      NativeBuffer packed = NativeBuffer.allocate(DType.I64, recvCounts[0] + recvCounts[1]);
      world.allToAllV(send, sendBlocks, packed, Blocks.packed(recvCounts));
      // Into gaps: block 1 first, two untouched elements, then block 0.
      Blocks at = Blocks.at(recvCounts, new long[] {recvCounts[1] + 2, 0});
      long[] minusOnes = new long[(int) at.extent()];
      java.util.Arrays.fill(minusOnes, -1);
      NativeBuffer gapped = NativeBuffer.copyOf(minusOnes);
      world.allToAllV(send, sendBlocks, gapped, at);
      NativeBuffer started = NativeBuffer.allocate(DType.I64, packed.count());
      try (Request r = world.allToAllVAsync(send, sendBlocks, started, Blocks.packed(recvCounts))) {
        r.await();
      }
      return new long[][] {(long[]) packed.toArray(), (long[]) gapped.toArray(), (long[]) started.toArray()};
    });
    for (int rank = 0; rank < 2; rank++) {
      long[][] seen = (long[][]) Fixtures.outcome(outcomes, rank);
      long[] expected = concat(block(0, rank), block(1, rank));
      assertArrayEquals("rank " + rank, expected, seen[0]);
      assertArrayEquals("rank " + rank + " at offsets", concat(block(1, rank), new long[] {-1, -1}, block(0, rank)),
          seen[1]);
      assertArrayEquals("rank " + rank + " non-blocking", expected, seen[2]);
    }
  }

  @Test
  public void allToAllVCountsThatDisagreeAreAMismatch() throws Exception {
    List<Object> outcomes = Fixtures.twoRanks((rank, world, steps) -> {
      // Rank 0 sends 2 elements to rank 1, which expects 3.
      Blocks send = rank == 0 ? Blocks.packed(1, 2) : Blocks.packed(2, 1);
      Blocks recv = rank == 0 ? Blocks.packed(1, 2) : Blocks.packed(1, 3);
      world.allToAllV(NativeBuffer.copyOf(new float[] {1.5f, 1.5f, 1.5f}), send, NativeBuffer.allocate(DType.F32, 4),
          recv);
      return "no error";
    });
    int seen = 0;
    for (Object outcome : outcomes) {
      if (!(outcome instanceof DistException)) continue;
      seen++;
      DistException e = (DistException) outcome;
      assertEquals(e.getMessage(), Status.ERR_MISMATCH, e.status());
      assertFalse(e.detail().isEmpty());
    }
    assertTrue("some rank must see the mismatch: " + outcomes, seen > 0);
  }

  @Test
  public void allToAllVBadArgumentsAreRefused() {
    try (Cluster cluster = Fixtures.emptyCluster(); Context context = new Context(cluster)) {
      Comm world = context.world();
      NativeBuffer send = NativeBuffer.copyOf(new int[] {1, 2, 3});
      NativeBuffer recv = NativeBuffer.allocate(DType.I32, 3);
      world.allToAllV(send, Blocks.packed(3), recv, Blocks.packed(3));
      assertArrayEquals(new int[] {1, 2, 3}, (int[]) recv.toArray());
      Object[][] cases = {
          {Blocks.packed(3, 0), Blocks.packed(3), "2 counts"},
          {Blocks.packed(4), Blocks.packed(4), ""},
          {Blocks.packed(3), Blocks.at(new long[] {3}, new long[] {1}), ""},
          {null, Blocks.packed(3), ""}};
      for (Object[] c : cases) {
        DistException e = thrown(() -> world.allToAllV(send, (Blocks) c[0], recv, (Blocks) c[1]));
        assertEquals(e.getMessage(), Status.ERR_INVALID_ARGUMENT, e.status());
        assertTrue(e.getMessage(), !e.detail().isEmpty() && e.detail().contains((String) c[2]));
      }
      Runnable[] badBlocks = {() -> Blocks.packed(-1), () -> Blocks.at(new long[] {1}, new long[] {0, 0})};
      for (Runnable bad : badBlocks) {
        assertEquals(Status.ERR_INVALID_ARGUMENT, thrown(bad).status());
      }
      try {
        world.allToAllV(send, Blocks.packed(3), null, Blocks.packed(3));
        fail("a null recv buffer must be refused");
      } catch (DistException e) {
        assertEquals(Status.ERR_INVALID_ARGUMENT, e.status());
      }
    }
  }
}
