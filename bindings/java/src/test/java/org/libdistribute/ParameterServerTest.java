package org.libdistribute;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import org.junit.After;
import org.junit.Before;
import org.junit.Test;

/**
 * The PARAMETER_SERVER strategy against two parameter servers started in this
 * process: placement, dense and sparse updates against references computed here,
 * the servers' Adagrad, a checkpoint of real values, and errors with the C message.
 */
public class ParameterServerTest {
  private Server a;
  private Server b;
  private Cluster cluster;
  private Strategy strategy;

  @Before
  public void start() {
    a = ServerTest.start();
    b = ServerTest.start();
    cluster = ServerTest.clusterOf(a, b);
    strategy = new Strategy(null, new Strategy.Options().kind(Strategy.PARAMETER_SERVER).cluster(cluster)
        .token(ServerTest.TOKEN));
  }

  @After
  public void stop() {
    strategy.close();
    cluster.close();
    b.close();
    a.close();
  }

  static Variable.Options options(String name, DType dtype, long[] shape, Object initial) {
    Variable.Options o = new Variable.Options();
    o.name = name;
    o.dtype = dtype;
    o.shape = shape;
    o.initialValue = initial == null ? null : NativeBuffer.copyOf(initial);
    return o;
  }

  static Optimizer.Options optimizer(int kind, double learningRate) {
    return new Optimizer.Options().kind(kind).learningRate(learningRate);
  }

  @Test
  public void denseUpdatesAndPlacement() {
    assertEquals(Strategy.PARAMETER_SERVER, strategy.kind());
    assertEquals(1, strategy.numReplicasInSync());
    float[] initial = new float[12];
    float[] gradient = new float[12];
    float[] expected = new float[12];
    for (int i = 0; i < 12; i++) {
      initial[i] = i;
      gradient[i] = i % 2 == 0 ? 2 : -1;
      expected[i] = initial[i] - 0.5f * gradient[i];
    }
    Variable.Options o = options("dense", DType.F32, new long[] {4, 3}, initial);
    o.optimizer = optimizer(Optimizer.SGD, 0.5);
    o.numShards = 2;
    try (Variable w = strategy.variable(o)) {
      assertEquals(List.of(new Variable.Shard(0, 0, 2), new Variable.Shard(1, 2, 2)), w.shards());
      assertEquals(0, w.numCopies());
      w.applyGradient(NativeBuffer.copyOf(gradient), null);
      assertArrayEquals(expected, (float[]) w.read().toArray(), 0f);
      strategy.run(replica -> {
        w.assignAdd(NativeBuffer.copyOf(gradient), replica);
        return null;
      });
      for (int i = 0; i < 12; i++) expected[i] += gradient[i];
      assertArrayEquals(expected, (float[]) w.read().toArray(), 0f);
      assertTrue(a.describe().contains("\"name\":\"dense\"") && b.describe().contains("\"name\":\"dense\""));
    }
  }

  @Test
  public void sparseRows() {
    double[] table = new double[20]; // 5 rows of 4
    for (int i = 0; i < 20; i++) table[i] = i;
    Variable.Options o = options("embedding", DType.F64, new long[] {5, 4}, table);
    o.optimizer = optimizer(Optimizer.SGD, 0.25);
    o.maxShardBytes = 2L * 4 * 8;
    try (Variable e = strategy.variable(o)) {
      assertEquals(3, e.shards().size());
      double[] rows = (double[]) e.readRows(4, 0, 4).toArray();
      for (int i = 0; i < 4; i++) {
        assertEquals(table[16 + i], rows[i], 0);
        assertEquals(table[i], rows[4 + i], 0);
        assertEquals(table[16 + i], rows[8 + i], 0);
      }
      double[] reference = table.clone();
      double[] values = {1, 2, 3, 4, 5, 6, 7, 8};
      e.addRows(new long[] {1, 1}, NativeBuffer.copyOf(values), null);
      for (int j = 0; j < 4; j++) reference[4 + j] += values[j] + values[4 + j];
      double[] gradients = {4, 4, 4, 4, -8, -8, -8, -8};
      e.applyRows(new long[] {3, 0}, NativeBuffer.copyOf(gradients), null);
      for (int j = 0; j < 4; j++) {
        reference[12 + j] -= 0.25 * gradients[j];
        reference[j] -= 0.25 * gradients[4 + j];
      }
      assertArrayEquals(reference, (double[]) e.read().toArray(), 0);
      ServerTest.assertFails(Status.ERR_INVALID_ARGUMENT, "5", () -> e.readRows(5));
    }
  }

  @Test
  public void adagradOnTheServersMatchesTheFormula() {
    Variable.Options o = options("adagrad", DType.F64, new long[] {2}, new double[] {3, 3});
    o.optimizer = optimizer(Optimizer.ADAGRAD, 0.5);
    try (Variable v = strategy.variable(o)) {
      double[] value = {3, 3};
      double[] accumulator = {0.1, 0.1};
      for (double[] g : new double[][] {{1, -2}, {0.5, 4}}) {
        v.applyGradient(NativeBuffer.copyOf(g), null);
        for (int i = 0; i < 2; i++) {
          accumulator[i] += g[i] * g[i];
          value[i] -= 0.5 * g[i] / (Math.sqrt(accumulator[i]) + 1e-7);
        }
      }
      assertArrayEquals(value, (double[]) v.read().toArray(), 1e-12);
    }
  }

  @Test
  public void greedyPlacementColocationAndMinSizePartitioner() {
    try (Strategy greedy = new Strategy(null, new Strategy.Options().kind(Strategy.PARAMETER_SERVER).cluster(cluster)
            .token(ServerTest.TOKEN).placement(Strategy.PLACEMENT_GREEDY_BYTES));
         Variable big = greedy.variable(options("big", DType.F64, new long[] {8, 4}, null));
         Variable small = greedy.variable(options("small", DType.F64, null, null))) {
      Variable.Options near = options("near", DType.F32, null, null);
      near.colocateWith = big;
      Variable.Options split = options("split", DType.F32, new long[] {10, 4}, null);
      split.minShardBytes = 40L;
      split.maxShards = 3;
      try (Variable n = greedy.variable(near); Variable s = greedy.variable(split)) {
        assertEquals(0, big.shards().get(0).server());
        assertEquals(1, small.shards().get(0).server());
        assertEquals(0, n.shards().get(0).server());
        assertEquals(List.of(4L, 3L, 3L), s.shards().stream().map(Variable.Shard::rows).toList());
      }
    }
  }

  @Test
  public void errorsAndACheckpointOfValues() throws Exception {
    try (Variable plain = strategy.variable(options("plain", DType.F32, new long[] {2}, null))) {
      ServerTest.assertFails(Status.ERR_INVALID_ARGUMENT, "plain",
          () -> plain.applyGradient(NativeBuffer.copyOf(new float[] {1, 1}), null));
    }
    Variable.Options both = options("both", DType.F64, new long[] {4, 2}, null);
    both.numShards = 2;
    both.maxShardBytes = 16L;
    ServerTest.assertFails(Status.ERR_INVALID_ARGUMENT, "give one partitioner", () -> strategy.variable(both));
    ServerTest.assertFails(Status.ERR_INVALID_ARGUMENT, "PARAMETER_SERVER",
        () -> new Strategy(null, new Strategy.Options().kind(Strategy.MIRRORED).cluster(cluster)));

    Variable.Options saved = options("saved", DType.I64, new long[] {3, 2}, new long[] {1, 2, 3, 4, 5, 6});
    saved.numShards = 2;
    Path root = Files.createTempDirectory("dist-java-ps-ckpt");
    Checkpoints.Options o = new Checkpoints.Options().token(ServerTest.TOKEN).timeout(Duration.ofSeconds(20));
    try (Variable v = strategy.variable(saved)) {
      Checkpoints.save(cluster, root, 1, o);
      v.assign(NativeBuffer.copyOf(new long[6]), null);
      Checkpoints.restore(cluster, root, o);
      assertArrayEquals(new long[] {1, 2, 3, 4, 5, 6}, (long[]) v.read().toArray());
    } finally {
      try (var files = Files.walk(root)) {
        files.sorted(Collections.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }
}
