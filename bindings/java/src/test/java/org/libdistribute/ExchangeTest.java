package org.libdistribute;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.function.IntFunction;
import org.junit.Test;

/**
 * Contexts built through an exchange written in Java (Context.fromExchange): two
 * contexts in this process, ranks 0 and 1 on two threads, whose all-gather is a
 * barrier and shared slots, then a real all-reduce between them; exchanges that
 * throw, answer wrongly or never answer; bad arguments.
 */
public class ExchangeTest {
  static Context.Options options(Duration connectTimeout) {
    Context.Options o = new Context.Options();
    o.token = "java-exchange-test-token";
    o.connectTimeout = connectTimeout;
    return o;
  }

  /**
   * An all-gather between threads: each rank puts its bytes in its slot and waits
   * at the barrier; then every slot is read, and a second barrier keeps a fast
   * rank's next gather from overwriting a slot before the others read it.
   */
  static final class SharedSlots {
    final byte[][] slots;
    final AtomicIntegerArray calls;
    final CyclicBarrier barrier;

    SharedSlots(int size) {
      slots = new byte[size][];
      calls = new AtomicIntegerArray(size);
      barrier = new CyclicBarrier(size);
    }

    AllGather forRank(int rank) {
      return data -> {
        calls.incrementAndGet(rank);
        synchronized (slots) {
          slots[rank] = data;
        }
        barrier.await(60, TimeUnit.SECONDS);
        byte[][] everyone;
        synchronized (slots) {
          everyone = slots.clone();
        }
        barrier.await(60, TimeUnit.SECONDS);
        return everyone;
      };
    }
  }

  /** body(rank) on one thread per rank; what each returned or threw, by rank. */
  static List<Object> onThreads(int size, IntFunction<Object> body) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(size);
    try {
      List<Future<Object>> futures = new ArrayList<>();
      for (int rank = 0; rank < size; rank++) {
        final int r = rank;
        futures.add(pool.submit(() -> {
          try {
            return body.apply(r);
          } catch (RuntimeException e) {
            return e;
          }
        }));
      }
      List<Object> outcomes = new ArrayList<>();
      for (Future<Object> f : futures) outcomes.add(f.get(150, TimeUnit.SECONDS));
      return outcomes;
    } finally {
      pool.shutdownNow();
    }
  }

  static double[] input(int rank) {
    double[] data = new double[4099];
    for (int i = 0; i < data.length; i++) data[i] = (double) i * (rank + 1) - 7.0 * rank;
    return data;
  }

  @Test
  public void twoRanksJoinThroughAJavaAllGatherAndAllReduce() throws Exception {
    SharedSlots exchange = new SharedSlots(2);
    List<Object> outcomes = onThreads(2, rank -> {
      try (Context context = Context.fromExchange(rank, 2, exchange.forRank(rank), options(Duration.ofSeconds(60)))) {
        assertEquals(rank, context.rank());
        assertEquals(2, context.size());
        double[] data = input(rank);
        context.world().allReduce(data, Op.SUM);
        int[] count = {rank + 1};
        context.world().allReduce(count, Op.MAX);
        assertEquals(2, count[0]);
        return data;
      }
    });
    double[] a = input(0);
    double[] b = input(1);
    double[] reference = new double[a.length];
    for (int i = 0; i < a.length; i++) reference[i] = a[i] + b[i];
    for (Object outcome : outcomes) {
      if (outcome instanceof Throwable) throw new AssertionError("a rank failed", (Throwable) outcome);
      assertArrayEquals(reference, (double[]) outcome, 0.0);
    }
    assertEquals(exchange.calls.get(0), exchange.calls.get(1));
    assertTrue(exchange.calls.get(0) >= 1);
  }

  @Test
  public void oneRankJoinsAlone() {
    try (Context context = Context.fromExchange(0, 1, data -> new byte[][] {data}, options(Duration.ofSeconds(30)))) {
      assertEquals(0, context.rank());
      assertEquals(1, context.size());
      float[] data = {1.5f, -2f};
      context.world().allReduce(data, Op.SUM);
      assertArrayEquals(new float[] {1.5f, -2f}, data, 0f);
    }
  }

  @Test
  public void anExchangeThatThrowsFailsTheJoinWithItsExceptionAsTheCause() throws Exception {
    IOException[] thrown = {new IOException("store unreachable from rank 0"), new IOException("store unreachable from rank 1")};
    long start = System.nanoTime();
    List<Object> outcomes = onThreads(2, rank -> Context.fromExchange(rank, 2, data -> {
      throw thrown[rank];
    }, options(Duration.ofSeconds(60))));
    assertTrue("a failed exchange must not wait for the connect deadline",
        System.nanoTime() - start < TimeUnit.SECONDS.toNanos(30));
    for (int rank = 0; rank < 2; rank++) {
      Object outcome = outcomes.get(rank);
      if (!(outcome instanceof DistException)) fail("rank " + rank + ": want a DistException, got " + outcome);
      DistException e = (DistException) outcome;
      assertTrue(e.status() < 0);
      assertSame(thrown[rank], e.getCause());
      assertTrue(e.getMessage(), e.detail().toLowerCase().contains("exchange"));
      assertTrue(e.getMessage(), e.getMessage().contains("store unreachable from rank " + rank));
    }
  }

  @Test
  public void anAnswerOfTheWrongShapeFailsTheJoin() {
    List<AllGather> answers = Arrays.asList(
        data -> new byte[][] {data},
        data -> new byte[][] {data, Arrays.copyOf(data, data.length + 1)},
        data -> new byte[][] {new byte[data.length], data},
        data -> null);
    String[] expected = {"1 items for 2 ranks", "expected", "other bytes than this rank sent", "returned null"};
    for (int i = 0; i < expected.length; i++) {
      try {
        Context.fromExchange(0, 2, answers.get(i), options(Duration.ofSeconds(30))).close();
        fail("a wrong answer must fail the join");
      } catch (DistException e) {
        assertTrue(e.getCause() instanceof IllegalArgumentException);
        assertTrue(e.getMessage(), e.getMessage().contains(expected[i]));
      }
    }
  }

  @Test
  public void anErrorInTheExchangeIsRethrownAsItWas() {
    AssertionError thrown = new AssertionError("checked inside the exchange");
    try {
      Context.fromExchange(0, 2, data -> {
        throw thrown;
      }, options(Duration.ofSeconds(30))).close();
      fail("the join must fail");
    } catch (AssertionError e) {
      assertSame(thrown, e);
    }
  }

  @Test
  public void anExchangeThatNeverAnswersEndsAtTheConnectDeadline() {
    CountDownLatch release = new CountDownLatch(1);
    long start = System.nanoTime();
    try {
      Context.fromExchange(0, 2, data -> {
        release.await(60, TimeUnit.SECONDS);
        return new byte[][] {data, data}; // too late: dropped
      }, options(Duration.ofSeconds(1))).close();
      fail("the deadline must end the join");
    } catch (DistException e) {
      assertEquals(e.getMessage(), Status.ERR_TIMEOUT, e.status());
      assertNull(e.getCause());
      assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(1 + 10));
    } finally {
      release.countDown();
    }
  }

  @Test
  public void badArgumentsAreRefused() {
    int[][] cases = {{2, 2}, {-1, 2}, {0, 0}};
    String[] fields = {"rank", "rank", "size"};
    for (int i = 0; i < cases.length; i++) {
      try {
        Context.fromExchange(cases[i][0], cases[i][1], data -> new byte[][] {data}, options(Duration.ofSeconds(30)))
            .close();
        fail("rank " + cases[i][0] + " of " + cases[i][1] + " must be refused");
      } catch (DistException e) {
        assertEquals(Status.ERR_INVALID_ARGUMENT, e.status());
        assertTrue(e.getMessage(), e.detail().contains(fields[i]));
      }
    }
    try {
      Context.fromExchange(0, 1, null, options(Duration.ofSeconds(30)));
      fail("a null AllGather must be refused");
    } catch (DistException e) {
      assertEquals(Status.ERR_INVALID_ARGUMENT, e.status());
    }
  }
}
