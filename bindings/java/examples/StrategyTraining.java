import java.security.MessageDigest;
import java.util.List;
import org.libdistribute.Cluster;
import org.libdistribute.Context;
import org.libdistribute.DType;
import org.libdistribute.NativeBuffer;
import org.libdistribute.Optimizer;
import org.libdistribute.Strategy;
import org.libdistribute.Variable;

/**
 * Data-parallel training with a MULTI_WORKER_MIRRORED strategy: two replicas per
 * worker each compute a gradient from their own data; applyGradients
 * mean-all-reduces them over every replica of every worker and applies them with
 * SGD to every copy of the mirrored weights. Each rank prints the SHA-256 of its
 * weights' bytes (identical on every rank; the test compares them).
 *
 * <pre>dist-run -n 2 -- java -cp build/classes:/usr/share/java/jna.jar StrategyTraining</pre>
 */
public final class StrategyTraining {
  static final int STEPS = 5;
  static final int SIZE = 4096;
  static final double LEARNING_RATE = 0.5;
  static final int LOCAL_REPLICAS = 2;

  /** Replica `id`'s data: what it alone would fit the weights to. */
  static float target(int id, int i) {
    return (id + 1) * (float) (i % 10);
  }

  /** The same steps on the mean target, without communication. */
  static double expectedWeight(int replicas, int i) {
    double mean = 0;
    for (int r = 0; r < replicas; r++) mean += target(r, i);
    mean /= replicas;
    double w = 0;
    for (int s = 0; s < STEPS; s++) w -= LEARNING_RATE * (w - mean);
    return w;
  }

  public static void main(String[] args) throws Exception {
    boolean ok;
    try (Cluster cluster = Cluster.fromEnvironment();
         Context context = new Context(cluster);
         Strategy strategy = new Strategy(context,
             new Strategy.Options().kind(Strategy.MULTI_WORKER_MIRRORED).numCpuDevices(LOCAL_REPLICAS));
         Optimizer sgd = Optimizer.sgd(LEARNING_RATE);
         Variable weights = strategy.variable(Variable.Options.of(NativeBuffer.allocate(DType.F32, SIZE)))) {
      for (int s = 0; s < STEPS; s++) {
        // d/dw of |w - target|^2 / 2 on each replica's data, on its own thread.
        List<NativeBuffer> grads = strategy.run(replica -> {
          NativeBuffer w = NativeBuffer.allocate(DType.F32, SIZE);
          weights.read(replica, w);
          float[] g = (float[]) w.toArray();
          for (int i = 0; i < SIZE; i++) g[i] -= target(replica.replicaId(), i);
          return NativeBuffer.copyOf(g);
        });
        NativeBuffer[][] perReplica = new NativeBuffer[grads.size()][];
        for (int r = 0; r < grads.size(); r++) perReplica[r] = new NativeBuffer[] {grads.get(r)};
        strategy.applyGradients(new Variable[] {weights}, perReplica, sgd);
      }
      float[] value = (float[]) weights.read().toArray();
      boolean copiesEqual = true;
      for (int c = 0; c < weights.numCopies(); c++) {
        copiesEqual &= java.util.Arrays.equals((float[]) weights.readCopy(c).toArray(), value);
      }
      boolean correct = true;
      for (int i = 0; i < SIZE; i++) {
        correct &= Math.abs(value[i] - expectedWeight(strategy.numReplicasInSync(), i)) <= 1e-5 * (1 + Math.abs(value[i]));
      }
      byte[] bytes = new byte[SIZE * 4];
      java.nio.ByteBuffer.wrap(bytes).order(java.nio.ByteOrder.nativeOrder()).asFloatBuffer().put(value);
      StringBuilder hex = new StringBuilder();
      for (byte b : MessageDigest.getInstance("SHA-256").digest(bytes)) hex.append(String.format("%02x", b));
      int[] worker = strategy.workerIndex();
      System.out.printf("rank %d of %d: %d replicas in sync, %d steps, weights sha256 %s; %s, %s%n", worker[0],
          worker[1], strategy.numReplicasInSync(), sgd.iterations(), hex,
          copiesEqual ? "local copies identical" : "local copies DIFFER", correct ? "correct" : "WRONG");
      ok = copiesEqual && correct;
    }
    System.exit(ok ? 0 : 1);
  }
}
