package org.libdistribute;

import com.sun.jna.Native;
import com.sun.jna.Pointer;
import com.sun.jna.ptr.PointerByReference;
import java.util.Arrays;
import java.util.List;

/** One replica inside {@link Strategy#run}; valid only during the call it was given to, on that thread. */
public final class ReplicaContext {
  private volatile Pointer pointer;
  private final Strategy strategy;
  private final Strategy.RunState state;

  /** A function run once in cross-replica context with every local replica's value. */
  @FunctionalInterface
  public interface MergeFunction<V, R> {
    R apply(Strategy strategy, List<V> values);
  }

  ReplicaContext(Pointer pointer, Strategy strategy, Strategy.RunState state) {
    this.pointer = pointer;
    this.strategy = strategy;
    this.state = state;
  }

  void end() {
    pointer = null;
  }

  /** The C handle; a context whose call has ended must not silently become cross-replica (NULL). */
  Pointer live() {
    Pointer p = pointer;
    if (p == null) {
      throw new IllegalStateException("this ReplicaContext is no longer valid: its replica function has returned");
    }
    return p;
  }

  /** The id in the sync group: worker rank * local replicas + local index. */
  public int replicaId() {
    return Queries.int32(out -> DistLibrary.LIB.dist_replica_id(pointer, out));
  }

  public int numReplicasInSync() {
    return Queries.int32(out -> DistLibrary.LIB.dist_replica_num_replicas_in_sync(pointer, out));
  }

  public int localIndex() {
    return Queries.int32(out -> DistLibrary.LIB.dist_replica_local_index(pointer, out));
  }

  /**
   * The CUDA device ordinal (under CUDA_VISIBLE_DEVICES) this replica drives, its
   * thread's current device while the replica function runs; -1 for a CPU replica.
   */
  public int device() {
    return Queries.int32(out -> DistLibrary.LIB.dist_replica_device(pointer, out));
  }

  /**
   * The replica's CUDA stream (a cudaStream_t owned by the strategy, the same in
   * every run) as an opaque pointer, to order your own device work with; null for a
   * CPU replica.
   */
  public Pointer stream() {
    PointerByReference out = new PointerByReference();
    DistException.check(DistLibrary.LIB.dist_replica_stream(pointer, out));
    return out.getValue();
  }

  /** The strategy running this replica. */
  public Strategy strategy() {
    PointerByReference out = new PointerByReference();
    DistException.check(DistLibrary.LIB.dist_replica_strategy(pointer, out));
    if (!out.getValue().equals(strategy.handle().get())) {
      throw new IllegalStateException("the library names another strategy than the one running");
    }
    return strategy;
  }

  /** All-reduces buffer in place across every replica in sync (every local replica calls it alike). */
  public void allReduce(NativeBuffer buffer, Op op) {
    DistException.check(DistLibrary.LIB.dist_replica_all_reduce(pointer, op.value, buffer.toStruct()));
  }

  /**
   * Every local replica calls it; fn runs once in cross-replica context with the
   * value of every local replica (in local order) and its result is returned to
   * each. An exception fn throws is thrown from every replica's mergeCall.
   */
  @SuppressWarnings("unchecked")
  public <V, R> R mergeCall(MergeFunction<V, R> fn, V value) {
    int index = localIndex();
    state.mergeValues[index] = value;
    DistLibrary.MergeFn callback = (strategyPointer, values, count, userData) -> {
      synchronized (state) {
        state.mergeError = null;
      }
      try {
        Object[] ordered = new Object[count];
        for (int i = 0; i < count; i++) {
          // Each replica passes its local index + 1 (never NULL) as its value.
          ordered[i] = state.mergeValues[(int) Pointer.nativeValue(values.getPointer((long) i * Native.POINTER_SIZE)) - 1];
        }
        R result = fn.apply(strategy, (List<V>) Arrays.asList(ordered));
        synchronized (state) {
          state.mergeResult = result;
        }
        return Status.OK;
      } catch (Throwable t) {
        synchronized (state) {
          state.mergeError = t;
        }
        return t instanceof DistException ? ((DistException) t).status() : Status.ERR_ABORTED;
      }
    };
    Native.setCallbackThreadInitializer(callback, Strategy.ATTACHED);
    int status = DistLibrary.LIB.dist_replica_merge_call(pointer, callback, new Pointer(index + 1), null);
    synchronized (state) {
      if (status != Status.OK && state.mergeError != null) {
        if (state.mergeError instanceof RuntimeException) throw (RuntimeException) state.mergeError;
        if (state.mergeError instanceof Error) throw (Error) state.mergeError;
        throw new IllegalStateException(state.mergeError);
      }
      DistException.check(status);
      return (R) state.mergeResult;
    }
  }

  /** Records this replica's result of the run (copied): {@link Strategy#localResults()} afterwards. */
  public void setResult(NativeBuffer value) {
    DistException.check(DistLibrary.LIB.dist_replica_set_result(pointer, value.toStruct()));
  }
}
