import org.libdistribute.Cluster;
import org.libdistribute.Comm;
import org.libdistribute.Context;
import org.libdistribute.DType;
import org.libdistribute.NativeBuffer;
import org.libdistribute.Op;

/**
 * Data-parallel training in miniature: every rank computes a gradient from its own
 * data, all-reduces it to the mean and applies it to its copy of the weights. The
 * copies must stay bit-identical on every rank and match the closed-form result.
 *
 * <pre>dist-run -n 2 -- java -cp build/classes:/usr/share/java/jna.jar AllReduce</pre>
 *
 * (StrategyTraining does the same with a strategy, a mirrored variable and
 * applyGradients.)
 */
public final class AllReduce {
  static final int STEPS = 5;
  static final int SIZE = 4096;
  static final float LEARNING_RATE = 0.5f;

  /** This rank's data: what it alone would fit the weights to. */
  static float localTarget(int rank, int i) {
    return (rank + 1) * (float) (i % 10);
  }

  static float[] train(Comm world, int rank) {
    float[] weights = new float[SIZE];
    float[] gradient = new float[SIZE];
    for (int s = 0; s < STEPS; s++) {
      for (int i = 0; i < SIZE; i++) gradient[i] = weights[i] - localTarget(rank, i);
      world.allReduce(gradient, Op.MEAN);
      for (int i = 0; i < SIZE; i++) weights[i] -= LEARNING_RATE * gradient[i];
    }
    return weights;
  }

  /** The same steps on the mean target, without communication. */
  static double expectedWeight(int ranks, int i) {
    double mean = 0;
    for (int r = 0; r < ranks; r++) mean += localTarget(r, i);
    mean /= ranks;
    double w = 0;
    for (int s = 0; s < STEPS; s++) w -= LEARNING_RATE * (w - mean);
    return w;
  }

  public static void main(String[] args) {
    boolean identical = true;
    boolean correct = true;
    try (Cluster cluster = Cluster.fromEnvironment(); Context context = new Context(cluster)) {
      Comm world = context.world();
      int rank = world.rank();
      int ranks = world.size();
      float[] weights = train(world, rank);
      NativeBuffer everyone = NativeBuffer.allocate(DType.F32, (long) ranks * SIZE);
      world.allGather(NativeBuffer.copyOf(weights), everyone);
      float[] all = new float[ranks * SIZE];
      everyone.copyTo(all);
      for (int i = 0; i < all.length; i++) {
        identical &= Float.floatToRawIntBits(all[i]) == Float.floatToRawIntBits(weights[i % SIZE]);
      }
      for (int i = 0; i < SIZE; i++) {
        correct &= Math.abs(weights[i] - expectedWeight(ranks, i)) <= 1e-5 * (1 + Math.abs(weights[i]));
      }
      System.out.printf("rank %d of %d: %d steps, weights[7] = %.4f; %s, %s%n", rank, ranks, STEPS, weights[7],
          identical ? "identical on all ranks" : "DIFFERENT across ranks", correct ? "correct" : "WRONG");
    }
    System.exit(identical && correct ? 0 : 1);
  }
}
