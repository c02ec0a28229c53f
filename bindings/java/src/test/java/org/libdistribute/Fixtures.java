package org.libdistribute;

import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CyclicBarrier;

/** Shared by the tests: a single-process context and where the build is. */
final class Fixtures {
  private Fixtures() {}

  /** A cluster with no tasks: its context is rank 0 of 1. */
  static Cluster emptyCluster() {
    return Cluster.fromJson("{}");
  }

  /** One rank's part of a two-rank test; {@code steps} is a barrier between the ranks. */
  interface RankBody {
    Object run(int rank, Comm world, CyclicBarrier steps) throws Exception;
  }

  /**
   * {@code body} for ranks 0 and 1 of two contexts joined in this process through
   * {@link ExchangeTest.SharedSlots}, each on its own thread: what each returned or
   * threw, by rank. Every call fails by the communicators' 30 s deadline, so a test
   * that goes wrong ends.
   */
  static List<Object> twoRanks(RankBody body) throws Exception {
    ExchangeTest.SharedSlots exchange = new ExchangeTest.SharedSlots(2);
    CyclicBarrier steps = new CyclicBarrier(2);
    Context.Options options = ExchangeTest.options(Duration.ofSeconds(60));
    options.timeout = Duration.ofSeconds(30);
    return ExchangeTest.onThreads(2, rank -> {
      try (Context context = Context.fromExchange(rank, 2, exchange.forRank(rank), options)) {
        return body.run(rank, context.world(), steps);
      } catch (RuntimeException | Error e) {
        throw e;
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    });
  }

  /** The value rank {@code rank} returned; fails the test with what it threw instead. */
  static Object outcome(List<Object> outcomes, int rank) {
    Object outcome = outcomes.get(rank);
    if (outcome instanceof Throwable) throw new AssertionError("rank " + rank + " failed", (Throwable) outcome);
    return outcome;
  }

  static Path repo() {
    String repo = System.getProperty("dist.repo");
    return Paths.get(repo != null ? repo : "../..").toAbsolutePath().normalize();
  }

  static Path buildDir() {
    String build = System.getenv("DIST_BUILD_DIR");
    return build != null && !build.isEmpty() ? Paths.get(build) : repo().resolve("build");
  }
}
