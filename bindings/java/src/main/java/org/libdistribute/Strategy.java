package org.libdistribute;

import com.sun.jna.CallbackThreadInitializer;
import com.sun.jna.Native;
import com.sun.jna.Pointer;
import com.sun.jna.ptr.IntByReference;
import com.sun.jna.ptr.PointerByReference;
import java.lang.ref.Cleaner;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;

/**
 * A tf.distribute strategy over an optional {@link Context} (null: one worker alone).
 * Creating a MULTI_WORKER_MIRRORED strategy over a context is collective. Use it
 * from one thread at a time; closing the context closes it first. Its variables
 * keep its state alive, so they may be closed after it.
 */
public final class Strategy implements AutoCloseable {
  public static final int ONE_DEVICE = 0;
  public static final int MIRRORED = 1;
  public static final int MULTI_WORKER_MIRRORED = 2;
  public static final int CENTRAL_STORAGE = 3;
  /** tf.distribute's ParameterServerStrategy: variables on the tasks of a cluster's "ps" job. */
  public static final int PARAMETER_SERVER = 4;
  /** PARAMETER_SERVER placement: servers in turn (the default). */
  public static final int PLACEMENT_ROUND_ROBIN = 0;
  /** PARAMETER_SERVER placement: the server holding the fewest bytes so far. */
  public static final int PLACEMENT_GREEDY_BYTES = 1;
  public static final int COMMUNICATION_AUTO = 0;
  public static final int COMMUNICATION_RING = 1;
  /** MULTI_WORKER_MIRRORED: one NCCL communicator over every GPU replica (UNSUPPORTED on CPU replicas). */
  public static final int COMMUNICATION_NCCL = 2;
  /**
   * Cross-device ops (tf.distribute's CrossDeviceOps), how the GPU replicas of one
   * worker combine their values (MIRRORED and MULTI_WORKER_MIRRORED): the default,
   * NCCL_ALL_REDUCE when every replica is a GPU and NCCL is available, else
   * REDUCTION_TO_ONE_DEVICE.
   */
  public static final int CROSS_DEVICE_OPS_AUTO = 0;
  /** One NCCL communicator over the local GPUs. */
  public static final int CROSS_DEVICE_OPS_NCCL_ALL_REDUCE = 1;
  /** Two halves summed on their first GPU by peer copies, the two sums exchanged. */
  public static final int CROSS_DEVICE_OPS_HIERARCHICAL_COPY = 2;
  /** Every value copied to reduceToDevice, summed there, copied back (the only one besides AUTO for CPU replicas). */
  public static final int CROSS_DEVICE_OPS_REDUCTION_TO_ONE_DEVICE = 3;
  /** reduce(): element-wise over replicas rather than over a batch axis. */
  public static final int AXIS_NONE = -1;
  static final long OPT_KIND = 1L;
  static final long OPT_NUM_CPU_DEVICES = 1L << 1;
  static final long OPT_COMMUNICATION = 1L << 2;
  static final long OPT_BYTES_PER_PACK = 1L << 3;
  static final long OPT_TIMEOUT_SECONDS = 1L << 4;
  static final long OPT_BIND_THREADS = 1L << 5;
  static final long OPT_CLUSTER = 1L << 6;
  static final long OPT_TOKEN = 1L << 7;
  static final long OPT_TOKEN_FILE = 1L << 8;
  static final long OPT_PLACEMENT = 1L << 9;
  static final long OPT_CROSS_DEVICE_OPS = 1L << 10;
  static final long OPT_REDUCE_TO_DEVICE = 1L << 11;
  static final long OPT_NUM_PACKS = 1L << 12;

  /**
   * Replica threads stay attached to the JVM between callbacks: a merge function
   * runs nested inside a replica function on the same thread, where detaching
   * would fail. JNA detaches them when the library's threads exit.
   */
  static final CallbackThreadInitializer ATTACHED = new CallbackThreadInitializer(true, false, "dist-replica");

  private final Handle handle;
  private final Cleaner.Cleanable cleanable;
  private final Context context;
  /** A PARAMETER_SERVER strategy's cluster, borrowed by the C strategy: kept reachable. */
  private final Cluster cluster;

  /** dist_strategy_options_t; null fields keep the defaults. */
  public static final class Options {
    public Integer kind;
    public Integer numCpuDevices;
    public Integer communication;
    public Long bytesPerPack;
    public Double timeoutSeconds;
    public Boolean bindThreads;
    /** PARAMETER_SERVER without a context: the cluster whose "ps" job holds the variables. */
    public Cluster cluster;
    /** PARAMETER_SERVER: the cluster token (default DIST_CLUSTER_TOKEN, then DIST_CLUSTER_TOKEN_FILE). */
    public String token;
    public java.nio.file.Path tokenFile;
    /** PARAMETER_SERVER: PLACEMENT_ROUND_ROBIN (default) or PLACEMENT_GREEDY_BYTES. */
    public Integer placement;
    /** MIRRORED and MULTI_WORKER_MIRRORED (others refuse it): a CROSS_DEVICE_OPS_* value, default AUTO. */
    public Integer crossDeviceOps;
    /** CROSS_DEVICE_OPS_REDUCTION_TO_ONE_DEVICE: "CPU:0" or "GPU:i"; default the first replica's device. */
    public String reduceToDevice;
    /**
     * CROSS_DEVICE_OPS_NCCL_ALL_REDUCE and _HIERARCHICAL_COPY only (as given or as AUTO
     * chose them; CPU replicas refuse it): applyGradients packs each dtype's gradients
     * into this many packs of about equal size (TF's num_packs, 1..64) instead of
     * buckets of bytesPerPack.
     */
    public Integer numPacks;

    public Options cluster(Cluster value) {
      cluster = value;
      return this;
    }

    public Options token(String value) {
      token = value;
      return this;
    }

    public Options placement(int value) {
      placement = value;
      return this;
    }

    public Options crossDeviceOps(int value) {
      crossDeviceOps = value;
      return this;
    }

    public Options reduceToDevice(String value) {
      reduceToDevice = value;
      return this;
    }

    public Options numPacks(int value) {
      numPacks = value;
      return this;
    }

    public Options kind(int value) {
      kind = value;
      return this;
    }

    public Options numCpuDevices(int value) {
      numCpuDevices = value;
      return this;
    }
  }

  /** A function run once per local replica, on that replica's thread. */
  @FunctionalInterface
  public interface ReplicaFunction<T> {
    T apply(ReplicaContext replica);
  }

  public Strategy(Context context, Options options) {
    DistLibrary.StrategyOptionsStruct s = new DistLibrary.StrategyOptionsStruct();
    if (options.kind != null) {
      s.field_mask |= OPT_KIND;
      s.kind = options.kind;
    }
    if (options.numCpuDevices != null) {
      s.field_mask |= OPT_NUM_CPU_DEVICES;
      s.num_cpu_devices = options.numCpuDevices;
    }
    if (options.communication != null) {
      s.field_mask |= OPT_COMMUNICATION;
      s.communication = options.communication;
    }
    if (options.bytesPerPack != null) {
      s.field_mask |= OPT_BYTES_PER_PACK;
      s.bytes_per_pack = options.bytesPerPack;
    }
    if (options.timeoutSeconds != null) {
      s.field_mask |= OPT_TIMEOUT_SECONDS;
      s.timeout_seconds = options.timeoutSeconds;
    }
    if (options.bindThreads != null) {
      s.field_mask |= OPT_BIND_THREADS;
      s.bind_threads = options.bindThreads ? 1 : 0;
    }
    if (options.cluster != null) {
      s.field_mask |= OPT_CLUSTER;
      s.cluster = options.cluster.pointer();
      if (s.cluster == null) {
        throw new IllegalStateException("the cluster is closed");
      }
    }
    if (options.token != null) {
      s.field_mask |= OPT_TOKEN;
      s.token = options.token;
    }
    if (options.tokenFile != null) {
      s.field_mask |= OPT_TOKEN_FILE;
      s.token_file = options.tokenFile.toString();
    }
    if (options.placement != null) {
      s.field_mask |= OPT_PLACEMENT;
      s.placement = options.placement;
    }
    if (options.crossDeviceOps != null) {
      s.field_mask |= OPT_CROSS_DEVICE_OPS;
      s.cross_device_ops = options.crossDeviceOps;
    }
    if (options.reduceToDevice != null) {
      s.field_mask |= OPT_REDUCE_TO_DEVICE;
      s.reduce_to_device = options.reduceToDevice;
    }
    if (options.numPacks != null) {
      s.field_mask |= OPT_NUM_PACKS;
      s.num_packs = options.numPacks;
    }
    Pointer contextPointer = context == null ? null : context.handle().get();
    if (context != null && contextPointer == null) {
      // NULL would silently mean "one worker alone".
      throw new IllegalStateException("the context is closed");
    }
    PointerByReference out = new PointerByReference();
    DistException.check(DistLibrary.LIB.dist_strategy_create(contextPointer, s, out));
    this.context = context;
    this.cluster = options.cluster;
    handle = new Handle(out.getValue(), DistLibrary.LIB::dist_strategy_destroy,
        context == null ? null : context.handle(), null);
    cleanable = handle.watch(this);
  }

  Handle handle() {
    return handle;
  }

  Context context() {
    return context;
  }

  Cluster borrowedCluster() {
    return cluster;
  }

  @Override
  public void close() {
    cleanable.clean();
  }

  public boolean isClosed() {
    return handle.get() == null;
  }

  /** ONE_DEVICE, MIRRORED, MULTI_WORKER_MIRRORED or CENTRAL_STORAGE. */
  public int kind() {
    return Queries.int32(out -> DistLibrary.LIB.dist_strategy_kind(handle.get(), out));
  }

  public int numReplicasInSync() {
    return Queries.int32(out -> DistLibrary.LIB.dist_strategy_num_replicas_in_sync(handle.get(), out));
  }

  public int numLocalReplicas() {
    return Queries.int32(out -> DistLibrary.LIB.dist_strategy_num_local_replicas(handle.get(), out));
  }

  /** The local devices, one per local replica ("/job:worker/replica:0/task:1/device:CPU:0"). */
  public List<String> devices() {
    List<String> names = new ArrayList<>();
    for (int i = 0, n = numLocalReplicas(); i < n; i++) {
      PointerByReference out = new PointerByReference();
      DistException.check(DistLibrary.LIB.dist_strategy_device(handle.get(), i, out));
      names.add(Strings.borrowed(out));
    }
    return names;
  }

  /**
   * The cross-device ops in effect, a CROSS_DEVICE_OPS_* value with AUTO resolved
   * (CROSS_DEVICE_OPS_REDUCTION_TO_ONE_DEVICE on CPU replicas).
   */
  public int crossDeviceOps() {
    return Queries.int32(out -> DistLibrary.LIB.dist_strategy_cross_device_ops(handle.get(), out));
  }

  /** The cluster of the strategy's context (borrowed: closing it only detaches it); null without a context. */
  public Cluster cluster() {
    PointerByReference out = new PointerByReference();
    DistException.check(DistLibrary.LIB.dist_strategy_cluster(handle.get(), out));
    return out.getValue() == null ? null : new Cluster(out.getValue(), handle);
  }

  /** "worker", "chief", ...; null for a worker alone. */
  public String taskType() {
    PointerByReference out = new PointerByReference();
    DistException.check(DistLibrary.LIB.dist_strategy_task_type(handle.get(), out));
    return Strings.borrowed(out);
  }

  /** -1 for a worker alone. */
  public int taskId() {
    return Queries.int32(out -> DistLibrary.LIB.dist_strategy_task_id(handle.get(), out));
  }

  /** {this worker's index, number of workers}. */
  public int[] workerIndex() {
    IntByReference index = new IntByReference();
    IntByReference count = new IntByReference();
    DistException.check(DistLibrary.LIB.dist_strategy_worker_index(handle.get(), index, count));
    return new int[] {index.getValue(), count.getValue()};
  }

  /** One input pipeline per worker, this worker's index. */
  public InputContext inputContext() {
    PointerByReference out = new PointerByReference();
    DistException.check(DistLibrary.LIB.dist_strategy_input_context(handle.get(), out));
    return new InputContext(out.getValue());
  }

  /** A distributed variable (collective). */
  public Variable variable(Variable.Options options) {
    return new Variable(this, options);
  }

  /**
   * Calls fn once per local replica, each on its own thread, and returns what they
   * returned in local replica order. If a replica throws, the replicas waiting for
   * it are released and the first exception thrown is rethrown here, as it was,
   * once every replica has returned.
   */
  public <T> List<T> run(ReplicaFunction<T> fn) {
    RunState state = new RunState(numLocalReplicas());
    List<T> results = new ArrayList<>(Collections.nCopies(state.replicas, null));
    DistLibrary.ReplicaFn callback = (replicaPointer, userData) -> {
      ReplicaContext replica = new ReplicaContext(replicaPointer, this, state);
      try {
        T value = fn.apply(replica);
        synchronized (results) {
          results.set(replica.localIndex(), value);
        }
        return Status.OK;
      } catch (Throwable t) {
        return state.fail(t);
      } finally {
        replica.end();
      }
    };
    Native.setCallbackThreadInitializer(callback, ATTACHED);
    int status = DistLibrary.LIB.dist_strategy_run(handle.get(), callback, null);
    state.rethrow();
    DistException.check(status);
    return results;
  }

  /** What one run shares between its replica threads. */
  static final class RunState {
    final int replicas;
    private Throwable first;
    final Object[] mergeValues;
    Object mergeResult;
    Throwable mergeError;

    RunState(int replicas) {
      this.replicas = replicas;
      this.mergeValues = new Object[replicas];
    }

    /** Records a replica's or merge function's failure; the status the library gets. */
    synchronized int fail(Throwable t) {
      if (first == null) first = t; // later ones are its ABORTED echoes
      return t instanceof DistException && ((DistException) t).status() < 0 ? ((DistException) t).status()
          : Status.ERR_ABORTED;
    }

    synchronized void rethrow() {
      if (first instanceof RuntimeException) throw (RuntimeException) first;
      if (first instanceof Error) throw (Error) first;
      if (first != null) throw new IllegalStateException(first); // a sneaky checked exception
    }
  }

  /** What each local replica passed to setResult in the last run (copies; null for one that set none). */
  public List<NativeBuffer> localResults() {
    PointerByReference results = new PointerByReference();
    IntByReference count = new IntByReference();
    DistException.check(DistLibrary.LIB.dist_strategy_local_results(handle.get(), results, count));
    List<NativeBuffer> out = new ArrayList<>();
    if (count.getValue() == 0) return out;
    DistLibrary.BufferStruct first = com.sun.jna.Structure.newInstance(DistLibrary.BufferStruct.class,
        results.getValue());
    first.read();
    for (com.sun.jna.Structure s : first.toArray(count.getValue())) {
      DistLibrary.BufferStruct b = (DistLibrary.BufferStruct) s;
      out.add(b.data == null ? null : NativeBuffer.copyOf(b.data, b.count, DType.fromValue(b.dtype)));
    }
    return out;
  }

  /**
   * tf's strategy.reduce in cross-replica context (collective): values[i] is local
   * replica i's value. axis AXIS_NONE: the element-wise SUM or MEAN over all
   * replicas; axis 0: of every replica's rows (result holds one row).
   */
  public void reduce(Op op, NativeBuffer[] values, int axis, NativeBuffer result) {
    DistException.check(DistLibrary.LIB.dist_strategy_reduce(handle.get(), op.value, NativeBuffer.structs(values),
        values.length, axis, result.toStruct()));
  }

  /** This worker's batch of `rows` rows split across the local replicas: views of batch (no copy). */
  public NativeBuffer[] splitBatch(NativeBuffer batch, long rows) {
    int n = numLocalReplicas();
    DistLibrary.BufferStruct[] parts =
        (DistLibrary.BufferStruct[]) new DistLibrary.BufferStruct().toArray(Math.max(1, n));
    DistException.check(DistLibrary.LIB.dist_strategy_split_batch(handle.get(), batch.toStruct(), rows, parts, n));
    NativeBuffer[] views = new NativeBuffer[n];
    for (int i = 0; i < n; i++) {
      views[i] = batch.view(parts[i].data, parts[i].count);
    }
    return views;
  }

  /** Fused in-place all-reduce (collective): perReplica[r][i] is local replica r's tensor i. */
  public void batchAllReduce(Op op, NativeBuffer[][] perReplica) {
    NativeBuffer[] flat = flatten(perReplica, -1);
    DistException.check(DistLibrary.LIB.dist_strategy_batch_all_reduce(handle.get(), op.value,
        NativeBuffer.structs(flat), new DistLibrary.SizeT(perReplica.length == 0 ? 0 : perReplica[0].length)));
  }

  /**
   * Cross-replica (collective): gradients[r][i] is local replica r's gradient of
   * variables[i]; mean-all-reduced in fused buckets, then applied by the optimizer
   * to every copy. The gradient buffers are scratch.
   */
  public void applyGradients(Variable[] variables, NativeBuffer[][] gradients, Optimizer optimizer) {
    NativeBuffer[] flat = flatten(gradients, variables.length);
    Pointer[] vars = new Pointer[Math.max(1, variables.length)];
    for (int i = 0; i < variables.length; i++) vars[i] = variables[i].handle().get();
    DistException.check(DistLibrary.LIB.dist_strategy_apply_gradients(handle.get(), vars, NativeBuffer.structs(flat),
        new DistLibrary.SizeT(variables.length), optimizer.handle().get()));
  }

  private NativeBuffer[] flatten(NativeBuffer[][] perReplica, int n) {
    int replicas = numLocalReplicas();
    if (perReplica.length != replicas) {
      throw new IllegalArgumentException("one array of buffers per local replica (" + replicas + ") is needed, got "
          + perReplica.length);
    }
    int each = n >= 0 ? n : (replicas == 0 ? 0 : perReplica[0].length);
    List<NativeBuffer> flat = new ArrayList<>();
    for (int r = 0; r < replicas; r++) {
      if (perReplica[r].length != each) {
        throw new IllegalArgumentException("replica " + r + " has " + perReplica[r].length + " buffers, expected "
            + each);
      }
      flat.addAll(Arrays.asList(perReplica[r]));
    }
    return flat.toArray(new NativeBuffer[0]);
  }
}
