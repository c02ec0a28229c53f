package org.libdistribute;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotSame;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertTrue;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.junit.Test;

/**
 * Completion listeners (Request.onComplete) on receives, sends and collectives
 * between two ranks on two threads: each runs exactly once, also when its request
 * was closed before the call completed (the listener keeps the buffers); a failed
 * call reaches it as the library's DistException; a second is refused.
 */
public class CompletionTest {
  /** What one listener saw: its result (empty: success) and its thread. */
  static final class Seen {
    final Optional<DistException> error;
    final Thread thread;

    Seen(DistException error) {
      this.error = Optional.ofNullable(error);
      this.thread = Thread.currentThread();
    }
  }

  static Consumer<DistException> reporting(AtomicInteger calls, BlockingQueue<Seen> seen) {
    return error -> {
      calls.incrementAndGet();
      seen.add(new Seen(error));
    };
  }

  static Seen next(BlockingQueue<Seen> seen) throws InterruptedException {
    Seen s = seen.poll(60, TimeUnit.SECONDS);
    if (s == null) throw new AssertionError("the listener never ran");
    return s;
  }

  @Test
  public void aListenerRunsOnceAfterItsRequestWasClosed() throws Exception {
    List<Object> outcomes = Fixtures.twoRanks((rank, world, steps) -> {
      if (rank == 0) {
        steps.await(60, TimeUnit.SECONDS); // rank 1 has registered and closed its receive
        world.send(NativeBuffer.copyOf(PointToPointTest.message(0, 7, 300)), 1, 3);
        return null;
      }
      AtomicInteger calls = new AtomicInteger();
      BlockingQueue<Seen> seen = new LinkedBlockingQueue<>();
      NativeBuffer data = NativeBuffer.allocate(DType.F64, 300);
      Request r = world.recvAsync(data, 0, 3);
      int before = Completion.pending();
      r.onComplete(reporting(calls, seen));
      r.close(); // before the peer sent: the listener keeps the buffer
      assertEquals("kept reachable until it ran", before + 1, Completion.pending());
      steps.await(60, TimeUnit.SECONDS);
      Seen first = next(seen);
      assertNull("a second call", seen.poll(200, TimeUnit.MILLISECONDS));
      for (int i = 0; i < 600 && Completion.pending() != before; i++) Thread.sleep(100); // released after it returns
      return new Object[] {calls.get(), first, data.toArray(), Completion.pending() - before};
    });
    Fixtures.outcome(outcomes, 0);
    Object[] result = (Object[]) Fixtures.outcome(outcomes, 1);
    assertEquals(1, result[0]);
    Seen seen = (Seen) result[1];
    assertFalse(seen.error.isPresent());
    assertArrayEquals(PointToPointTest.message(0, 7, 300), (double[]) result[2], 0.0);
    assertEquals("released once it ran", 0, result[3]);
  }

  @Test
  public void aListenerOnAKeptRequestRunsOnALibraryThread() throws Exception {
    List<Object> outcomes = Fixtures.twoRanks((rank, world, steps) -> {
      AtomicInteger calls = new AtomicInteger();
      BlockingQueue<Seen> seen = new LinkedBlockingQueue<>();
      NativeBuffer data = rank == 0 ? NativeBuffer.copyOf(new int[] {4, 5, 6}) : NativeBuffer.allocate(DType.I32, 3);
      if (rank == 0) steps.await(60, TimeUnit.SECONDS); // rank 1's listener waits for this send
      try (Request r = rank == 0 ? world.sendAsync(data, 1, 0) : world.recvAsync(data, 0, 0)) {
        r.onComplete(reporting(calls, seen));
        if (rank == 1) steps.await(60, TimeUnit.SECONDS);
        Seen s = next(seen);
        assertTrue(r.test());
        if (rank == 1) assertEquals(0, r.source());
        return new Object[] {calls.get(), s, data.toArray(), Thread.currentThread()};
      }
    });
    for (int rank = 0; rank < 2; rank++) {
      Object[] result = (Object[]) Fixtures.outcome(outcomes, rank);
      assertEquals(1, result[0]);
      assertFalse(((Seen) result[1]).error.isPresent());
      assertArrayEquals(new int[] {4, 5, 6}, (int[]) result[2]);
      if (rank == 1) {
        assertNotSame("a pending receive completes on a library thread", result[3], ((Seen) result[1]).thread);
      }
    }
  }

  @Test
  public void aFailedReceiveReachesTheListenerAsTheLibrarysError() throws Exception {
    List<Object> outcomes = Fixtures.twoRanks((rank, world, steps) -> {
      if (rank == 0) {
        world.send(NativeBuffer.copyOf(new byte[] {1, 2, 3}), 1, 1);
        return null;
      }
      BlockingQueue<Seen> seen = new LinkedBlockingQueue<>();
      try (Request r = world.recvAsync(NativeBuffer.allocate(DType.I8, 4), 0, 1)) {
        r.onComplete(reporting(new AtomicInteger(), seen));
        DistException fromListener = next(seen).error.orElseThrow(() -> new AssertionError("no error"));
        DistException fromAwait = PointToPointTest.thrown(r::await);
        return new DistException[] {fromListener, fromAwait};
      }
    });
    Fixtures.outcome(outcomes, 0);
    DistException[] errors = (DistException[]) Fixtures.outcome(outcomes, 1);
    assertEquals(errors[0].getMessage(), Status.ERR_MISMATCH, errors[0].status());
    assertFalse(errors[0].detail().isEmpty());
    assertEquals(errors[1].status(), errors[0].status());
    assertTrue(errors[1].detail(), errors[1].detail().endsWith(errors[0].detail())); // the wait's names itself too
  }

  @Test
  public void aPendingListenerGetsTheLibrarysErrorWhenItsContextGoes() throws Exception {
    AtomicInteger calls = new AtomicInteger();
    BlockingQueue<Seen> seen = new LinkedBlockingQueue<>();
    List<Object> outcomes = Fixtures.twoRanks((rank, world, steps) -> {
      if (rank == 1) { // rank 0 never sends
        Request r = world.recvAsync(NativeBuffer.allocate(DType.U8, 4), 0, 77);
        r.onComplete(reporting(calls, seen));
        r.close();
      }
      return null; // the contexts close after this
    });
    Fixtures.outcome(outcomes, 0);
    Fixtures.outcome(outcomes, 1);
    DistException error = next(seen).error.orElseThrow(() -> new AssertionError("no error"));
    assertEquals(error.getMessage(), Status.ERR_ABORTED, error.status());
    assertTrue(error.getMessage(), error.detail().contains("destroyed"));
    assertEquals(1, calls.get());
  }

  @Test
  public void aListenerOnAFinishedRequestRunsAtOnceAndASecondIsRefused() throws Exception {
    try (Cluster cluster = Fixtures.emptyCluster(); Context context = new Context(cluster)) {
      Comm world = context.world();
      NativeBuffer data = NativeBuffer.copyOf(new float[] {2.5f, 2.5f});
      try (Request r = world.allReduceAsync(null, data, Op.SUM)) {
        r.await();
        AtomicInteger first = new AtomicInteger();
        AtomicInteger second = new AtomicInteger();
        BlockingQueue<Seen> seen = new LinkedBlockingQueue<>();
        r.onComplete(reporting(first, seen));
        Seen s = seen.poll();
        assertTrue("ran during onComplete", s != null);
        assertSame(Thread.currentThread(), s.thread);
        DistException again = PointToPointTest.thrown(() -> r.onComplete(reporting(second, seen)));
        assertEquals(Status.ERR_INVALID_ARGUMENT, again.status());
        assertFalse(again.detail().isEmpty());
        assertEquals(Status.ERR_INVALID_ARGUMENT, PointToPointTest.thrown(() -> r.onComplete(null)).status());
        assertEquals(1, first.get());
        assertEquals(0, second.get());
      }
      assertArrayEquals(new float[] {2.5f, 2.5f}, (float[]) data.toArray(), 0f);
    }
  }

  @Test
  public void aThrowingListenerDoesNotReachTheLibrary() throws Exception {
    try (Cluster cluster = Fixtures.emptyCluster(); Context context = new Context(cluster)) {
      Comm world = context.world();
      Thread.UncaughtExceptionHandler previous = Thread.currentThread().getUncaughtExceptionHandler();
      BlockingQueue<Throwable> reported = new LinkedBlockingQueue<>();
      Thread.currentThread().setUncaughtExceptionHandler((t, e) -> reported.add(e));
      try (Request r = world.barrierAsync()) {
        r.await(); // complete: the listener runs on this thread, whose handler is ours
        IllegalStateException boom = new IllegalStateException("the listener fails");
        r.onComplete(error -> {
          throw boom;
        });
        assertSame(boom, reported.poll(60, TimeUnit.SECONDS));
      } finally {
        Thread.currentThread().setUncaughtExceptionHandler(previous);
      }
      world.barrier();
    }
  }
}
