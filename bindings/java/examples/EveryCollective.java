import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.libdistribute.Cluster;
import org.libdistribute.Collective;
import org.libdistribute.Comm;
import org.libdistribute.Context;
import org.libdistribute.DType;
import org.libdistribute.NativeBuffer;
import org.libdistribute.Op;
import org.libdistribute.Request;

/**
 * Every collective on a real multi-process communicator, each result checked against
 * a reference this rank computes alone (run by MultiProcessTest):
 *
 * <pre>dist-run -n 3 -- java -cp build/classes:/usr/share/java/jna.jar EveryCollective</pre>
 */
public final class EveryCollective {
  private final List<String> failures = new ArrayList<>();

  private void expect(String name, Object got, Object want) {
    if (!Arrays.deepEquals(new Object[] {got}, new Object[] {want})) {
      failures.add(name + ": got " + Arrays.deepToString(new Object[] {got}) + ", want "
          + Arrays.deepToString(new Object[] {want}));
    }
  }

  private static int[] ints(NativeBuffer b) {
    int[] out = new int[(int) b.count()];
    b.copyTo(out);
    return out;
  }

  private void check(Comm world) {
    int r = world.rank();
    int n = world.size();
    int root = n - 1;

    int[] sum = {r + 1, r + 1, r + 1, r + 1};
    world.allReduce(sum, Op.SUM);
    int total = n * (n + 1) / 2;
    expect("all_reduce", sum, new int[] {total, total, total, total});

    NativeBuffer max = r == root ? NativeBuffer.allocate(DType.F32, 3) : null;
    world.reduce(NativeBuffer.copyOf(new float[] {r, r, r}), max, Op.MAX, root);
    if (r == root) {
      float[] got = new float[3];
      max.copyTo(got);
      expect("reduce", got, new float[] {n - 1, n - 1, n - 1});
    }

    double[] b = {r, r};
    world.broadcast(b, root);
    expect("broadcast", b, new double[] {root, root});

    NativeBuffer gathered = NativeBuffer.allocate(DType.I64, 2L * n);
    world.allGather(NativeBuffer.copyOf(new long[] {10L * r, 10L * r + 1}), gathered);
    long[] got = new long[2 * n];
    gathered.copyTo(got);
    long[] want = new long[2 * n];
    for (int k = 0; k < n; k++) {
      want[2 * k] = 10L * k;
      want[2 * k + 1] = 10L * k + 1;
    }
    expect("all_gather", got, want);

    // Block j of rank k's input is [2j + k, 2j + 1 + k]; block r of the sum is ours.
    int[] inputs = new int[2 * n];
    for (int j = 0; j < inputs.length; j++) inputs[j] = j + r;
    int[] block = new int[2];
    for (int i = 0; i < 2; i++) {
      for (int k = 0; k < n; k++) block[i] += 2 * r + i + k;
    }
    NativeBuffer out = NativeBuffer.allocate(DType.I32, 2);
    world.reduceScatter(NativeBuffer.copyOf(inputs), out, Op.SUM);
    expect("reduce_scatter", ints(out), block);
    NativeBuffer inPlace = NativeBuffer.copyOf(inputs);
    world.reduceScatter(null, inPlace, Op.SUM);
    expect("reduce_scatter in place", Arrays.copyOf(ints(inPlace), 2), block);

    int[] exchanged = new int[n];
    int[] wantExchanged = new int[n];
    for (int j = 0; j < n; j++) {
      exchanged[j] = 100 * r + j;
      wantExchanged[j] = 100 * j + r;
    }
    NativeBuffer all = NativeBuffer.copyOf(exchanged);
    world.allToAll(null, all);
    expect("all_to_all", ints(all), wantExchanged);

    try (Comm reversed = world.split(0, -r)) {
      expect("split", reversed.rank(), n - 1 - r);
    }

    NativeBuffer doubles = NativeBuffer.copyOf(new double[] {0.5, 0.5});
    try (Request request = world.allReduceAsync(null, doubles, Op.SUM)) {
      request.await();
    }
    double[] halves = new double[2];
    doubles.copyTo(halves);
    expect("non-blocking all_reduce", halves, new double[] {0.5 * n, 0.5 * n});
    world.barrier();
    checkPath(world);
    checkHosts(world);
  }

  /** Every rank runs on this host: it is its own host communicator, in the same order. */
  private void checkHosts(Comm world) {
    int r = world.rank();
    int n = world.size();
    expect("local rank, local size, hosts", new int[] {world.localRank(), world.localSize(), world.numHosts()},
        new int[] {r, n, 1});
    try (Comm host = world.splitHost()) {
      expect("split_host rank, size, hosts", new int[] {host.rank(), host.size(), host.numHosts()},
          new int[] {r, n, 1});
      expect("split_host path", host.path().name(), "SHARED_MEMORY");
      long[] summed = {r + 1, r + 1, r + 1};
      host.allReduce(summed, Op.SUM);
      long total = n * (n + 1) / 2;
      expect("split_host all_reduce", summed, new long[] {total, total, total});
    }
  }

  /** Ranks launched on one host share memory: the path and the algorithms show it. */
  private void checkPath(Comm world) {
    expect("path", world.path().name(), "SHARED_MEMORY");
    expect("8-byte all_reduce", world.algorithm(Collective.ALL_REDUCE, 8), "shm_direct");
    expect("64 MiB all_reduce", world.algorithm(Collective.ALL_REDUCE, 64 << 20), "shm_split");
    expect("broadcast", world.algorithm(Collective.BROADCAST, 8), "shm");
    world.configure(null, Comm.ALLREDUCE_RING); // point to point, even on shared memory
    expect("configured ring", world.algorithm(Collective.ALL_REDUCE, 8), "ring");
    int n = world.size();
    long[] summed = {world.rank() + 1, world.rank() + 1};
    world.allReduce(summed, Op.SUM);
    expect("all_reduce over ring", summed, new long[] {n * (n + 1) / 2, n * (n + 1) / 2});
    world.configure(null, Comm.ALLREDUCE_SHARED_MEMORY);
    expect("configured shared memory", world.algorithm(Collective.ALL_REDUCE, 8), "shm_direct");
  }

  public static void main(String[] args) {
    EveryCollective run = new EveryCollective();
    int rank;
    try (Cluster cluster = Cluster.fromEnvironment(); Context context = new Context(cluster)) {
      rank = context.rank();
      run.check(context.world());
    }
    for (String failure : run.failures) {
      System.out.println("rank " + rank + ": " + failure);
    }
    System.out.println("rank " + rank + ": " + (run.failures.isEmpty() ? "all collectives correct" : "FAILED"));
    System.exit(run.failures.isEmpty() ? 0 : 1);
  }
}
