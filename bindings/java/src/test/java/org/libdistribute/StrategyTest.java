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

  /** A single-worker strategy of `kind` with cross-device options (two CPU replicas except ONE_DEVICE). */
  private static Strategy.Options crossDevice(int kind, Integer ops, String reduceTo) {
    Strategy.Options options = new Strategy.Options().kind(kind);
    if (kind != Strategy.ONE_DEVICE) options.numCpuDevices(2);
    options.crossDeviceOps = ops;
    options.reduceToDevice = reduceTo;
    return options;
  }

  /** Creating the strategy fails with INVALID_ARGUMENT whose C message contains `expected`. */
  private static void refused(Context context, Strategy.Options options, String expected) {
    try {
      new Strategy(context, options).close();
      fail("accepted; expected an error containing " + expected);
    } catch (DistException e) {
      assertEquals(e.detail(), Status.ERR_INVALID_ARGUMENT, e.status());
      assertTrue(e.detail(), e.detail().contains(expected));
    }
  }

  @Test
  public void crossDeviceOpsInEffectOnCpuReplicas() {
    // AUTO resolves to REDUCTION_TO_ONE_DEVICE on CPU replicas, for every kind.
    for (int kind : new int[] {Strategy.ONE_DEVICE, Strategy.MIRRORED, Strategy.CENTRAL_STORAGE}) {
      try (Strategy s = new Strategy(null, crossDevice(kind, null, null))) {
        assertEquals("kind " + kind, Strategy.CROSS_DEVICE_OPS_REDUCTION_TO_ONE_DEVICE, s.crossDeviceOps());
      }
    }
    for (int ops : new int[] {Strategy.CROSS_DEVICE_OPS_AUTO, Strategy.CROSS_DEVICE_OPS_REDUCTION_TO_ONE_DEVICE}) {
      try (Strategy s = new Strategy(null, crossDevice(Strategy.MIRRORED, ops, null))) {
        assertEquals(Strategy.CROSS_DEVICE_OPS_REDUCTION_TO_ONE_DEVICE, s.crossDeviceOps());
      }
    }
    for (String device : new String[] {"CPU:0", "/cpu:0", "/device:CPU:0"}) {
      Strategy.Options options = new Strategy.Options().kind(Strategy.MIRRORED).numCpuDevices(2)
          .crossDeviceOps(Strategy.CROSS_DEVICE_OPS_REDUCTION_TO_ONE_DEVICE).reduceToDevice(device);
      try (Strategy s = new Strategy(null, options)) {
        assertEquals(device, Strategy.CROSS_DEVICE_OPS_REDUCTION_TO_ONE_DEVICE, s.crossDeviceOps());
        NativeBuffer out = NativeBuffer.allocate(DType.F32, 2);
        s.reduce(Op.SUM, new NativeBuffer[] {NativeBuffer.copyOf(new float[] {1.5f, -2}),
            NativeBuffer.copyOf(new float[] {0.5f, 4})}, Strategy.AXIS_NONE, out);
        assertArrayEquals(device, new float[] {2, 2}, (float[]) out.toArray(), 0f);
      }
    }
  }

  @Test
  public void crossDeviceOpsAndReduceToDeviceRefusedOnCpuReplicas() {
    String gpuOnly = "combines GPU replicas, and this strategy's replicas are CPU devices";
    refused(null, crossDevice(Strategy.MIRRORED, Strategy.CROSS_DEVICE_OPS_NCCL_ALL_REDUCE, null), gpuOnly);
    refused(null, crossDevice(Strategy.MIRRORED, Strategy.CROSS_DEVICE_OPS_HIERARCHICAL_COPY, null), gpuOnly);
    refused(null, crossDevice(Strategy.MIRRORED, 7, null), "cross_device_ops 7 is not one of");
    String mirroredOnly = "is for MIRRORED and MULTI_WORKER_MIRRORED";
    refused(null, crossDevice(Strategy.ONE_DEVICE, Strategy.CROSS_DEVICE_OPS_REDUCTION_TO_ONE_DEVICE, null), mirroredOnly);
    refused(null, crossDevice(Strategy.CENTRAL_STORAGE, Strategy.CROSS_DEVICE_OPS_AUTO, null), mirroredOnly);
    try (Cluster cluster = Cluster.fromJson("{\"cluster\": {\"ps\": [\"127.0.0.1:1\"]}}")) {
      refused(null, new Strategy.Options().kind(Strategy.PARAMETER_SERVER).cluster(cluster).token("t")
          .crossDeviceOps(Strategy.CROSS_DEVICE_OPS_AUTO), mirroredOnly);
    }
    refused(null, crossDevice(Strategy.MIRRORED, Strategy.CROSS_DEVICE_OPS_REDUCTION_TO_ONE_DEVICE, "GPU:0"),
        "\"GPU:0\" names a GPU");
    refused(null, crossDevice(Strategy.MIRRORED, null, "CPU:0"), "REDUCTION_TO_ONE_DEVICE");
    refused(null, crossDevice(Strategy.MIRRORED, Strategy.CROSS_DEVICE_OPS_AUTO, "CPU:0"), "REDUCTION_TO_ONE_DEVICE");
    Strategy.Options nccl = new Strategy.Options().kind(Strategy.MIRRORED);
    nccl.communication = Strategy.COMMUNICATION_NCCL;
    try {
      new Strategy(null, nccl).close();
      fail("communication NCCL accepted on CPU replicas");
    } catch (DistException e) {
      assertEquals(e.detail(), Status.ERR_UNSUPPORTED, e.status());
      assertTrue(e.detail(), e.detail().contains("NCCL"));
    }
  }

  static final String NUM_PACKS_REFUSED = "num_packs is for cross_device_ops NcclAllReduce and "
      + "HierarchicalCopyAllReduce, and this strategy's are ReductionToOneDevice";

  @Test
  public void numPacksRefusedOnCpuReplicas() {
    // CPU replicas always reduce to one device: numPacks (NCCL and hierarchical copy
    // only) is refused whatever its value, the ops given or chosen by AUTO.
    for (int numPacks : new int[] {1, 4, 64}) {
      refused(null, crossDevice(Strategy.MIRRORED, null, null).numPacks(numPacks), NUM_PACKS_REFUSED);
    }
    for (int ops : new int[] {Strategy.CROSS_DEVICE_OPS_AUTO, Strategy.CROSS_DEVICE_OPS_REDUCTION_TO_ONE_DEVICE}) {
      refused(null, crossDevice(Strategy.MIRRORED, ops, null).numPacks(2), NUM_PACKS_REFUSED);
    }
    refused(null, crossDevice(Strategy.ONE_DEVICE, null, null).numPacks(2), NUM_PACKS_REFUSED);
    refused(null, crossDevice(Strategy.CENTRAL_STORAGE, null, null).numPacks(2), NUM_PACKS_REFUSED);
  }

  @Test
  public void crossDeviceOpsOfMultiWorkerMirrored() {
    try (Cluster cluster = Fixtures.emptyCluster(); Context context = new Context(cluster)) {
      Strategy.Options options = crossDevice(Strategy.MULTI_WORKER_MIRRORED,
          Strategy.CROSS_DEVICE_OPS_REDUCTION_TO_ONE_DEVICE, "CPU:0");
      try (Strategy s = new Strategy(context, options)) {
        assertEquals(Strategy.CROSS_DEVICE_OPS_REDUCTION_TO_ONE_DEVICE, s.crossDeviceOps());
      }
      refused(context, crossDevice(Strategy.MULTI_WORKER_MIRRORED, Strategy.CROSS_DEVICE_OPS_NCCL_ALL_REDUCE, null),
          "combines GPU replicas, and this strategy's replicas are CPU devices");
      refused(context, crossDevice(Strategy.MULTI_WORKER_MIRRORED, null, null).numPacks(2), NUM_PACKS_REFUSED);
    }
  }

  @Test
  public void cpuReplicasHaveNoCudaDeviceOrStream() {
    try (Strategy s = mirrored()) {
      List<ReplicaContext> replicas = s.run(r -> {
        assertEquals(-1, r.device());
        assertNull(r.stream());
        return r;
      });
      assertEquals(2, replicas.size());
      try {
        replicas.get(0).device(); // valid only during its call
        fail("a replica context answered after its call");
      } catch (DistException e) {
        assertEquals(Status.ERR_INVALID_ARGUMENT, e.status());
      }
    }
    try (Strategy one = new Strategy(null, new Strategy.Options().kind(Strategy.ONE_DEVICE))) {
      assertEquals(List.of(-1), one.run(ReplicaContext::device));
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
