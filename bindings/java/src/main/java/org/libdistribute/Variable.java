package org.libdistribute;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;
import com.sun.jna.ptr.IntByReference;
import com.sun.jna.ptr.LongByReference;
import com.sun.jna.ptr.PointerByReference;
import java.lang.ref.Cleaner;

/**
 * A tf.Variable under a strategy: mirrored (ON_WRITE) or kept per replica
 * (ON_READ). Creation is collective (every worker starts from the chief's initial
 * value). The replica-taking calls are for inside {@link Strategy#run} (that
 * replica's context); the others are cross-replica. Closing the strategy's
 * context closes the variable first; the strategy itself may be closed before it.
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

  private final Handle handle;
  private final Cleaner.Cleanable cleanable;

  /** dist_variable_options_t; null fields keep the defaults (an F32 scalar of zero named "Variable"). */
  public static final class Options {
    public String name;
    public DType dtype;
    public long[] shape;
    /** All elements, row-major, of the variable's dtype. */
    public NativeBuffer initialValue;
    public Integer synchronization;
    public Integer aggregation;

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
    PointerByReference out = new PointerByReference();
    DistException.check(DistLibrary.LIB.dist_variable_create(strategy.handle().get(), s, out));
    java.lang.ref.Reference.reachabilityFence(dims);
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

  /** Local copies: one per local replica, 1 for CENTRAL_STORAGE ON_WRITE. */
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
}
