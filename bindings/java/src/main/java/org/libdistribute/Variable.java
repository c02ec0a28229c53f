package org.libdistribute;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;
import com.sun.jna.ptr.IntByReference;
import com.sun.jna.ptr.LongByReference;
import com.sun.jna.ptr.PointerByReference;
import java.lang.ref.Cleaner;
import java.util.ArrayList;
import java.util.List;

/**
 * A tf.Variable under a strategy: mirrored (ON_WRITE) or kept per replica
 * (ON_READ). Creation is collective (every worker starts from the chief's initial
 * value). The replica-taking calls are for inside {@link Strategy#run} (that
 * replica's context); the others are cross-replica. Closing the strategy's
 * context closes the variable first; the strategy itself may be closed before it.
 *
 * <p>Under a PARAMETER_SERVER strategy the variable lives on the ps tasks (its name
 * is its identity there); {@link #applyGradient} and the row calls are for such
 * variables only, and there are no local copies.
 */
public final class Variable implements AutoCloseable {
  public static final int SYNC_AUTO = 0;
  public static final int SYNC_ON_WRITE = 1;
  public static final int SYNC_ON_READ = 2;
  public static final int SYNC_NONE = 3;
  public static final int AGGREGATION_NONE = 0;
  public static final int AGGREGATION_SUM = 1;
  public static final int AGGREGATION_MEAN = 2;
  public static final int AGGREGATION_ONLY_FIRST_REPLICA = 3;
  public static final int MAX_RANK = 8;
  static final long OPT_NAME = 1L;
  static final long OPT_DTYPE = 1L << 1;
  static final long OPT_SHAPE = 1L << 2;
  static final long OPT_INITIAL_VALUE = 1L << 3;
  static final long OPT_SYNCHRONIZATION = 1L << 4;
  static final long OPT_AGGREGATION = 1L << 5;
  static final long OPT_OPTIMIZER = 1L << 6;
  static final long OPT_NUM_SHARDS = 1L << 7;
  static final long OPT_MAX_SHARD_BYTES = 1L << 8;
  static final long OPT_MIN_SHARD_BYTES = 1L << 9;
  static final long OPT_MAX_SHARDS = 1L << 10;
  static final long OPT_COLOCATE_WITH = 1L << 11;
  static final long OPT_SYNC_GRADIENTS = 1L << 12;
  static final long OPT_REPLICAS_TO_AGGREGATE = 1L << 13;
  static final long OPT_MAX_STALENESS = 1L << 14;

  private final Handle handle;
  private final Cleaner.Cleanable cleanable;
  /** A PARAMETER_SERVER strategy's cluster, which the C side borrows: kept reachable. */
  @SuppressWarnings("unused")
  private final Cluster cluster;

  /** Where one shard of a variable on parameter servers lives. */
  public record Shard(int server, long firstRow, long rows) {}

  /** dist_variable_options_t; null fields keep the defaults (an F32 scalar of zero named "Variable"). */
  public static final class Options {
    public String name;
    public DType dtype;
    public long[] shape;
    /** All elements, row-major, of the variable's dtype. */
    public NativeBuffer initialValue;
    public Integer synchronization;
    public Integer aggregation;
    /** PARAMETER_SERVER: the servers' optimizer of applyGradient / applyRows (null: refused). */
    public Optimizer.Options optimizer;
    /** PARAMETER_SERVER partitioners (at most one of numShards, maxShardBytes, minShardBytes). */
    public Integer numShards;
    public Long maxShardBytes;
    public Long minShardBytes;
    /** With maxShardBytes or minShardBytes: at most this many shards. */
    public Integer maxShards;
    /** PARAMETER_SERVER: shard i goes to the server of this variable's shard i. */
    public Variable colocateWith;
    /** PARAMETER_SERVER: synchronous applyGradient (TF's SyncReplicasOptimizer). */
    public Boolean syncGradients;
    public Integer replicasToAggregate;
    public Integer maxStaleness;

    /** A variable of initialValue's dtype and element count, one-dimensional. */
    public static Options of(NativeBuffer initialValue) {
      Options o = new Options();
      o.initialValue = initialValue;
      o.dtype = initialValue.dtype();
      o.shape = new long[] {initialValue.count()};
      return o;
    }
  }

  Variable(Strategy strategy, Options options) {
    DistLibrary.VariableOptionsStruct s = new DistLibrary.VariableOptionsStruct();
    Memory dims = null;
    if (options.name != null) {
      s.field_mask |= OPT_NAME;
      s.name = options.name;
    }
    if (options.dtype != null) {
      s.field_mask |= OPT_DTYPE;
      s.dtype = options.dtype.value;
    }
    if (options.shape != null) {
      s.field_mask |= OPT_SHAPE;
      dims = new Memory(Math.max(1, options.shape.length) * 8L);
      dims.write(0, options.shape, 0, options.shape.length);
      s.shape = dims;
      s.rank = options.shape.length;
    }
    if (options.initialValue != null) {
      long elements = 1;
      if (options.shape != null) for (long d : options.shape) elements *= d;
      if (elements != options.initialValue.count()
          || (options.dtype != null && options.dtype != options.initialValue.dtype())) {
        throw new IllegalArgumentException("the initial value (" + options.initialValue.count() + " x "
            + options.initialValue.dtype() + ") does not match the variable's dtype and shape");
      }
      s.field_mask |= OPT_INITIAL_VALUE;
      s.initial_value = options.initialValue.pointer();
    }
    if (options.synchronization != null) {
      s.field_mask |= OPT_SYNCHRONIZATION;
      s.synchronization = options.synchronization;
    }
    if (options.aggregation != null) {
      s.field_mask |= OPT_AGGREGATION;
      s.aggregation = options.aggregation;
    }
    DistLibrary.OptimizerOptionsStruct optimizer = null;
    if (options.optimizer != null) {
      optimizer = options.optimizer.toStruct();
      optimizer.write();
      s.field_mask |= OPT_OPTIMIZER;
      s.optimizer = optimizer.getPointer();
    }
    if (options.numShards != null) {
      s.field_mask |= OPT_NUM_SHARDS;
      s.num_shards = options.numShards;
    }
    if (options.maxShardBytes != null) {
      s.field_mask |= OPT_MAX_SHARD_BYTES;
      s.max_shard_bytes = options.maxShardBytes;
    }
    if (options.minShardBytes != null) {
      s.field_mask |= OPT_MIN_SHARD_BYTES;
      s.min_shard_bytes = options.minShardBytes;
    }
    if (options.maxShards != null) {
      s.field_mask |= OPT_MAX_SHARDS;
      s.max_shards = options.maxShards;
    }
    if (options.colocateWith != null) {
      s.field_mask |= OPT_COLOCATE_WITH;
      s.colocate_with = options.colocateWith.handle.get();
    }
    if (options.syncGradients != null) {
      s.field_mask |= OPT_SYNC_GRADIENTS;
      s.sync_gradients = options.syncGradients ? 1 : 0;
    }
    if (options.replicasToAggregate != null) {
      s.field_mask |= OPT_REPLICAS_TO_AGGREGATE;
      s.replicas_to_aggregate = options.replicasToAggregate;
    }
    if (options.maxStaleness != null) {
      s.field_mask |= OPT_MAX_STALENESS;
      s.max_staleness = options.maxStaleness;
    }
    PointerByReference out = new PointerByReference();
    DistException.check(DistLibrary.LIB.dist_variable_create(strategy.handle().get(), s, out));
    java.lang.ref.Reference.reachabilityFence(dims);
    java.lang.ref.Reference.reachabilityFence(optimizer);
    java.lang.ref.Reference.reachabilityFence(options);
    cluster = strategy.borrowedCluster();
    Context context = strategy.context();
    handle = new Handle(out.getValue(), DistLibrary.LIB::dist_variable_destroy,
        context == null ? null : context.handle(), null);
    cleanable = handle.watch(this);
  }

  Handle handle() {
    return handle;
  }

  @Override
  public void close() {
    cleanable.clean();
  }

  public boolean isClosed() {
    return handle.get() == null;
  }

  public String name() {
    PointerByReference out = new PointerByReference();
    DistException.check(DistLibrary.LIB.dist_variable_name(handle.get(), out));
    return Strings.borrowed(out);
  }

  public DType dtype() {
    return DType.fromValue(Queries.int32(out -> DistLibrary.LIB.dist_variable_dtype(handle.get(), out)));
  }

  public long[] shape() {
    PointerByReference dims = new PointerByReference();
    IntByReference rank = new IntByReference();
    DistException.check(DistLibrary.LIB.dist_variable_shape(handle.get(), dims, rank));
    return rank.getValue() == 0 ? new long[0] : dims.getValue().getLongArray(0, rank.getValue());
  }

  public long count() {
    LongByReference out = new LongByReference();
    DistException.check(DistLibrary.LIB.dist_variable_count(handle.get(), out));
    return out.getValue();
  }

  /** SYNC_ON_WRITE, SYNC_ON_READ or SYNC_NONE (never AUTO). */
  public int synchronization() {
    return Queries.int32(out -> DistLibrary.LIB.dist_variable_synchronization(handle.get(), out));
  }

  public int aggregation() {
    return Queries.int32(out -> DistLibrary.LIB.dist_variable_aggregation(handle.get(), out));
  }

  /** Local copies: one per local replica, 1 for CENTRAL_STORAGE ON_WRITE, 0 on parameter servers. */
  public int numCopies() {
    return Queries.int32(out -> DistLibrary.LIB.dist_variable_num_copies(handle.get(), out));
  }

  private static Pointer replicaPointer(ReplicaContext replica) {
    return replica == null ? null : replica.live();
  }

  /** Reads into out (the variable's dtype and count); replica null: cross-replica. */
  public void read(ReplicaContext replica, NativeBuffer out) {
    DistException.check(DistLibrary.LIB.dist_variable_read(handle.get(), replicaPointer(replica), out.toStruct()));
  }

  /** The value, cross-replica, in fresh native memory. */
  public NativeBuffer read() {
    NativeBuffer out = NativeBuffer.allocate(dtype(), count());
    read(null, out);
    return out;
  }

  /** Local copy i as it is stored. */
  public NativeBuffer readCopy(int i) {
    NativeBuffer out = NativeBuffer.allocate(dtype(), count());
    DistException.check(DistLibrary.LIB.dist_variable_read_copy(handle.get(), i, out.toStruct()));
    return out;
  }

  public void assign(NativeBuffer value, ReplicaContext replica) {
    DistException.check(DistLibrary.LIB.dist_variable_assign(handle.get(), replicaPointer(replica), value.toStruct()));
  }

  public void assignAdd(NativeBuffer value, ReplicaContext replica) {
    DistException.check(
        DistLibrary.LIB.dist_variable_assign_add(handle.get(), replicaPointer(replica), value.toStruct()));
  }

  public void assignSub(NativeBuffer value, ReplicaContext replica) {
    DistException.check(
        DistLibrary.LIB.dist_variable_assign_sub(handle.get(), replicaPointer(replica), value.toStruct()));
  }

  /** PARAMETER_SERVER: the servers apply gradient (the variable's dtype and count) with its optimizer. */
  public void applyGradient(NativeBuffer gradient, ReplicaContext replica) {
    DistException.check(
        DistLibrary.LIB.dist_variable_apply_gradient(handle.get(), replicaPointer(replica), gradient.toStruct()));
  }

  /** Elements of one row: the product of shape[1:]. */
  public long rowElements() {
    long[] dims = shape();
    long elements = 1;
    for (int i = 1; i < dims.length; i++) elements *= dims[i];
    return elements;
  }

  /** PARAMETER_SERVER: rows[i] of the variable into out (rows.length rows; repeats allowed). */
  public void readRows(long[] rows, NativeBuffer out, ReplicaContext replica) {
    DistException.check(DistLibrary.LIB.dist_variable_read_rows(handle.get(), replicaPointer(replica), rows,
        rows.length, out.toStruct()));
  }

  /** PARAMETER_SERVER: rows[i] of the variable in fresh native memory, cross-replica. */
  public NativeBuffer readRows(long... rows) {
    NativeBuffer out = NativeBuffer.allocate(dtype(), rows.length * rowElements());
    readRows(rows, out, null);
    return out;
  }

  /** PARAMETER_SERVER: adds row i of values to row rows[i] on the servers (scatter-add). */
  public void addRows(long[] rows, NativeBuffer values, ReplicaContext replica) {
    DistException.check(DistLibrary.LIB.dist_variable_add_rows(handle.get(), replicaPointer(replica), rows,
        rows.length, values.toStruct()));
  }

  /** PARAMETER_SERVER: the optimizer updates rows[i] with row i of gradients, and no other row. */
  public void applyRows(long[] rows, NativeBuffer gradients, ReplicaContext replica) {
    DistException.check(DistLibrary.LIB.dist_variable_apply_rows(handle.get(), replicaPointer(replica), rows,
        rows.length, gradients.toStruct()));
  }

  /** Where a PARAMETER_SERVER variable lives; empty for other strategies' variables. */
  public List<Shard> shards() {
    int n = Queries.int32(out -> DistLibrary.LIB.dist_variable_num_shards(handle.get(), out));
    List<Shard> shards = new ArrayList<>();
    IntByReference server = new IntByReference();
    LongByReference first = new LongByReference();
    LongByReference rows = new LongByReference();
    for (int i = 0; i < n; i++) {
      DistException.check(DistLibrary.LIB.dist_variable_shard(handle.get(), i, server, first, rows));
      shards.add(new Shard(server.getValue(), first.getValue(), rows.getValue()));
    }
    return shards;
  }
}
