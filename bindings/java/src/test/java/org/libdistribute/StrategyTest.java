package org.libdistribute;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.util.List;
import org.junit.Test;

/** Strategies, replica functions, merge calls, variables and optimizers in one process. */
public class StrategyTest {
  static final class ReplicaFailure extends RuntimeException {
    private static final long serialVersionUID = 1L;

    ReplicaFailure(String message) {
      super(message);
    }
  }

  private static Strategy mirrored() {
    return new Strategy(null, new Strategy.Options().kind(Strategy.MIRRORED).numCpuDevices(2));
  }

  @Test
  public void badOptionThrowsInvalidArgumentWithTheCMessage() {
    Strategy.Options options = new Strategy.Options().kind(Strategy.MIRRORED);
    options.timeoutSeconds = -1.0;
    try {
      new Strategy(null, options);
      fail("a negative timeout was accepted");
    } catch (DistException e) {
      assertEquals(Status.ERR_INVALID_ARGUMENT, e.status());
      assertEquals("DIST_ERR_INVALID_ARGUMENT", e.statusName());
      assertTrue(e.detail(), e.detail().contains("timeout_seconds"));
    }
  }

  @Test
  public void propertiesOfALocalMirroredStrategy() {
    try (Strategy s = mirrored()) {
      assertEquals(Strategy.MIRRORED, s.kind());
      assertEquals(2, s.numReplicasInSync());
      assertEquals(2, s.numLocalReplicas());
      assertEquals(2, s.devices().size());
      assertNull(s.cluster());
      assertNull(s.taskType());
      assertEquals(-1, s.taskId());
      assertArrayEquals(new int[] {0, 1}, s.workerIndex());
    }
  }

  @Test
  public void runReturnsEachReplicasValueInOrder() {
    try (Strategy s = mirrored()) {
      List<Integer> ids = s.run(r -> {
        assertSame(s, r.strategy());
        NativeBuffer b = NativeBuffer.copyOf(new double[] {r.replicaId() + 1.0});
        r.allReduce(b, Op.SUM);
        r.setResult(b);
        return r.replicaId() * 10 + r.localIndex();
      });
      assertEquals(List.of(0, 11), ids);
      for (NativeBuffer result : s.localResults()) {
        assertArrayEquals(new double[] {3.0}, (double[]) result.toArray(), 0.0);
      }
    }
  }

  @Test
  public void exceptionInOneReplicaSurfacesFromRun() {
    try (Strategy s = mirrored()) {
      try {
        s.run(r -> {
          if (r.localIndex() == 1) throw new ReplicaFailure("replica 1 gave up");
          r.allReduce(NativeBuffer.allocate(DType.F32, 4), Op.SUM); // released when replica 1 fails
          return null;
        });
        fail("run returned although a replica threw");
      } catch (ReplicaFailure e) {
        assertEquals("replica 1 gave up", e.getMessage());
      }
      assertEquals(List.of(0, 1), s.run(ReplicaContext::localIndex)); // still usable
    }
  }

  @Test
  public void mergeCallSeesEveryValueAndItsExceptionsSurface() {
    try (Strategy s = mirrored()) {
      List<Integer> sums = s.run(r -> r.<Integer, Integer>mergeCall((st, values) -> values.get(0) + values.get(1),
          r.localIndex() + 5));
      assertEquals(List.of(11, 11), sums);
      try {
        s.run(r -> r.<Integer, Integer>mergeCall((st, values) -> {
          throw new ReplicaFailure("merge of " + values);
        }, r.localIndex()));
        fail("run returned although the merge function threw");
      } catch (ReplicaFailure e) {
        assertEquals("merge of [0, 1]", e.getMessage());
      }
    }
  }

  @Test
  public void variableRoundTripsForSeveralDtypes() {
    try (Strategy s = mirrored()) {
      Object[] initial = {new float[] {1.5f, -2f, 3f}, new double[] {1e300, -0.5, 7}, new int[] {1, -2, 3},
          new long[] {1L << 40, -2, 3}, new byte[] {1, -2, 3}};
      Object[] next = {new float[] {4f, 5f, 6f}, new double[] {-1, 0, 1}, new int[] {7, 8, 9},
          new long[] {-(1L << 50), 0, 9}, new byte[] {9, 8, 7}};
      for (int k = 0; k < initial.length; k++) {
        try (Variable v = s.variable(Variable.Options.of(NativeBuffer.copyOf(initial[k])))) {
          assertEquals(DType.of(initial[k].getClass().getComponentType()), v.dtype());
          assertArrayEquals(new long[] {3}, v.shape());
          assertEquals(Variable.SYNC_ON_WRITE, v.synchronization());
          assertEquals("Variable", v.name());
          assertArrayEqualsAny(initial[k], v.read().toArray());
          v.assign(NativeBuffer.copyOf(next[k]), null);
          for (int c = 0; c < v.numCopies(); c++) assertArrayEqualsAny(next[k], v.readCopy(c).toArray());
        }
      }
    }
  }

  private static void assertArrayEqualsAny(Object expected, Object actual) {
    assertTrue(java.util.Objects.deepEquals(expected, actual));
  }

  @Test
  public void replicaAssignAggregatesAndApplyGradientsRunsSgd() {
    try (Strategy s = mirrored(); Optimizer sgd = Optimizer.sgd(0.5)) {
      Variable.Options o = Variable.Options.of(NativeBuffer.copyOf(new double[] {1, 2}));
      o.aggregation = Variable.AGGREGATION_MEAN;
      try (Variable v = s.variable(o)) {
        s.run(r -> {
          v.assign(NativeBuffer.copyOf(new double[] {r.replicaId() * 4, 10}), r);
          return null;
        });
        assertArrayEquals(new double[] {2, 10}, (double[]) v.read().toArray(), 0.0);
        NativeBuffer[][] grads = {{NativeBuffer.copyOf(new double[] {1, 1})}, {NativeBuffer.copyOf(new double[] {3, 3})}};
        s.applyGradients(new Variable[] {v}, grads, sgd);
        assertArrayEquals(new double[] {1, 9}, (double[]) v.read().toArray(), 0.0);
        assertEquals(1, sgd.iterations());
      }
    }
  }

  @Test
  public void reduceSplitBatchAndInputContexts() {
    try (Strategy s = mirrored()) {
      NativeBuffer out = NativeBuffer.allocate(DType.F32, 2);
      s.reduce(Op.MEAN, new NativeBuffer[] {NativeBuffer.copyOf(new float[] {1, 2}), NativeBuffer.copyOf(new float[] {3, 6})},
          Strategy.AXIS_NONE, out);
      assertArrayEquals(new float[] {2, 4}, (float[]) out.toArray(), 0f);
      NativeBuffer[] parts = s.splitBatch(NativeBuffer.copyOf(new int[] {0, 1, 2, 3, 4}), 5);
      assertArrayEquals(new int[] {0, 1, 2}, (int[]) parts[0].toArray());
      assertArrayEquals(new int[] {3, 4}, (int[]) parts[1].toArray());
      try (InputContext in = new InputContext(3, 1, 6)) {
        assertEquals(4, in.perReplicaBatchSize(24));
        assertArrayEquals(new long[] {1, 4, 7}, in.shardFiles(8));
        assertArrayEquals(new long[] {4, 3}, in.shardRange(10));
      }
      try (InputContext in = s.inputContext()) {
        assertEquals(1, in.numInputPipelines());
        assertEquals(0, in.inputPipelineId());
        assertEquals(2, in.numReplicasInSync());
      }
      NativeBuffer[][] tensors = {{NativeBuffer.copyOf(new long[] {1, 2})}, {NativeBuffer.copyOf(new long[] {10, 20})}};
      s.batchAllReduce(Op.SUM, tensors);
      assertArrayEquals(new long[] {11, 22}, (long[]) tensors[1][0].toArray());
    }
  }

  @Test
  public void closingTheContextClosesStrategiesAndVariables() {
    try (Cluster cluster = Fixtures.emptyCluster()) {
      Context context = new Context(cluster);
      Strategy s = new Strategy(context, new Strategy.Options().kind(Strategy.MULTI_WORKER_MIRRORED).numCpuDevices(2));
      Variable v = s.variable(Variable.Options.of(NativeBuffer.copyOf(new float[] {1})));
      assertEquals(0, s.cluster().jobs().size());
      context.close();
      assertTrue(s.isClosed() && v.isClosed());
      try {
        new Strategy(context, new Strategy.Options().kind(Strategy.MULTI_WORKER_MIRRORED));
        fail("a strategy was made over a closed context");
      } catch (IllegalStateException e) {
        assertTrue(e.getMessage(), e.getMessage().contains("context is closed"));
      }
      try {
        v.read();
        fail("a closed variable was read");
      } catch (DistException e) {
        assertEquals(Status.ERR_INVALID_ARGUMENT, e.status());
      }
    }
  }
}
