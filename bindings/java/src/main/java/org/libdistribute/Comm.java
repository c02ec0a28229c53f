package org.libdistribute;

import com.sun.jna.Pointer;
import com.sun.jna.ptr.PointerByReference;
import java.lang.ref.Cleaner;
import java.time.Duration;

/**
 * A communicator. Calls on one communicator must come from one thread at a time
 * and in the same order on every member; different communicators may be used
 * concurrently. Collectives take {@link NativeBuffer}s (a null send means in
 * place); the *Async forms return a {@link Request} that keeps them alive.
 */
public final class Comm implements AutoCloseable {
  public static final int ALLREDUCE_AUTO = 0;
  public static final int ALLREDUCE_RING = 1;
  public static final int ALLREDUCE_RABENSEIFNER = 2;
  public static final int ALLREDUCE_RECURSIVE_DOUBLING = 3;
  /** Needs a communicator whose {@link #path()} is SHARED_MEMORY (else ERR_UNSUPPORTED). */
  public static final int ALLREDUCE_SHARED_MEMORY = 4;
  /**
   * Shared memory within each host, UCX messages between hosts (the hierarchical all-reduces,
   * chosen by size); needs a communicator whose {@link #path()} is HIERARCHICAL (else
   * ERR_UNSUPPORTED).
   */
  public static final int ALLREDUCE_HIERARCHICAL = 5;
  static final long OPT_TIMEOUT_MS = 1L;
  static final long OPT_ALLREDUCE = 1L << 1;

  private final Handle handle;
  private final Cleaner.Cleanable cleanable;
  private final Context context; // the context outlives its communicators

  Comm(Pointer pointer, Context context, boolean owned) {
    this.context = context;
    handle = new Handle(pointer, owned ? DistLibrary.LIB::dist_comm_destroy : Context::destroyNothing,
        context.handle(), null);
    cleanable = handle.watch(this);
  }

  /** Destroys a split communicator after its requests; the world is only detached. Idempotent. */
  @Override
  public void close() {
    cleanable.clean();
  }

  public boolean isClosed() {
    return handle.get() == null;
  }

  Handle handle() {
    return handle;
  }

  public int rank() {
    return Queries.int32(out -> DistLibrary.LIB.dist_comm_rank(handle.get(), out));
  }

  public int size() {
    return Queries.int32(out -> DistLibrary.LIB.dist_comm_size(handle.get(), out));
  }

  /** This rank's position among the ranks of its host, in rank order. */
  public int localRank() {
    return Queries.int32(out -> DistLibrary.LIB.dist_comm_local_rank(handle.get(), out));
  }

  /** How many ranks of this communicator run on this rank's host. */
  public int localSize() {
    return Queries.int32(out -> DistLibrary.LIB.dist_comm_local_size(handle.get(), out));
  }

  /** How many hosts this communicator's ranks run on. */
  public int numHosts() {
    return Queries.int32(out -> DistLibrary.LIB.dist_comm_num_hosts(handle.get(), out));
  }

  /** How this communicator's collectives travel. */
  public CommPath path() {
    return CommPath.of(Queries.int32(out -> DistLibrary.LIB.dist_comm_path(handle.get(), out)));
  }

  /**
   * The algorithm this communicator runs for one collective with {@code bytes} bytes per
   * rank (unsigned): "shm_direct", "ring", "self", ... (see dist_comm_algorithm).
   */
  public String algorithm(Collective collective, long bytes) {
    return algorithm(collective.value, bytes);
  }

  /** {@link #algorithm(Collective, long)} for a raw DIST_COLLECTIVE_* value, which the library checks. */
  public String algorithm(int collective, long bytes) {
    PointerByReference out = new PointerByReference();
    DistException.check(DistLibrary.LIB.dist_comm_algorithm(handle.get(), collective, bytes, out));
    return Strings.borrowed(out);
  }

  /** Collective: members with the same color form a communicator ranked by (key, rank); negative color: null. */
  public Comm split(int color, int key) {
    PointerByReference out = new PointerByReference();
    DistException.check(DistLibrary.LIB.dist_comm_split(handle.get(), color, key, out));
    return out.getValue() == null ? null : new Comm(out.getValue(), context, true);
  }

  /** Collective: the communicator of this rank's host, its ranks in this communicator's order. */
  public Comm splitHost() {
    PointerByReference out = new PointerByReference();
    DistException.check(DistLibrary.LIB.dist_comm_split_host(handle.get(), out));
    return new Comm(out.getValue(), context, true);
  }

  /** timeout and algorithm (ALLREDUCE_*) may be null to keep them. */
  public void configure(Duration timeout, Integer allreduceAlgorithm) {
    DistLibrary.CommOptionsStruct s = new DistLibrary.CommOptionsStruct();
    if (timeout != null) {
      s.field_mask |= OPT_TIMEOUT_MS;
      s.timeout_ms = timeout.toMillis();
    }
    if (allreduceAlgorithm != null) {
      s.field_mask |= OPT_ALLREDUCE;
      s.allreduce = allreduceAlgorithm;
    }
    DistException.check(DistLibrary.LIB.dist_comm_configure(handle.get(), s));
  }

  /** One C collective; `out` is null for a blocking call. */
  private interface Call {
    int run(Pointer comm, DistLibrary.BufferStruct send, DistLibrary.BufferStruct recv, PointerByReference out);
  }

  private static DistLibrary.BufferStruct struct(NativeBuffer b) {
    return b == null ? null : b.toStruct();
  }

  private Request issue(Call call, NativeBuffer send, NativeBuffer recv, boolean async) {
    DistLibrary.BufferStruct s = struct(send);
    DistLibrary.BufferStruct r = struct(recv);
    PointerByReference out = async ? new PointerByReference() : null;
    DistException.check(call.run(handle.get(), s, r, out));
    // The request keeps the buffers and their descriptors reachable until it is done.
    return async ? new Request(out.getValue(), this, new Object[] {send, recv, s, r}) : null;
  }

  private NativeBuffer reduceScatterTarget(NativeBuffer send, NativeBuffer recv) {
    if (send != null) return recv;
    int n = size();
    if (recv.count() % n != 0) {
      throw new DistException(Status.ERR_INVALID_ARGUMENT,
          "reduce_scatter: " + recv.count() + " elements are not a multiple of the " + n + " ranks");
    }
    return recv.prefix(recv.count() / n);
  }

  /** Reduces send over all ranks into recv (same count); send null: in place. */
  public void allReduce(NativeBuffer send, NativeBuffer recv, Op op) {
    issue((c, s, r, o) -> DistLibrary.LIB.dist_all_reduce(c, s, r, op.value, o), send, recv, false);
  }

  public Request allReduceAsync(NativeBuffer send, NativeBuffer recv, Op op) {
    return issue((c, s, r, o) -> DistLibrary.LIB.dist_all_reduce(c, s, r, op.value, o), send, recv, true);
  }

  /** Reduces onto root; recv may be null elsewhere; send null: in place. */
  public void reduce(NativeBuffer send, NativeBuffer recv, Op op, int root) {
    issue((c, s, r, o) -> DistLibrary.LIB.dist_reduce(c, s, r, op.value, root, o), send, recv, false);
  }

  public Request reduceAsync(NativeBuffer send, NativeBuffer recv, Op op, int root) {
    return issue((c, s, r, o) -> DistLibrary.LIB.dist_reduce(c, s, r, op.value, root, o), send, recv, true);
  }

  /** Sends buffer from root to every rank. */
  public void broadcast(NativeBuffer buffer, int root) {
    issue((c, s, r, o) -> DistLibrary.LIB.dist_broadcast(c, r, root, o), null, buffer, false);
  }

  public Request broadcastAsync(NativeBuffer buffer, int root) {
    return issue((c, s, r, o) -> DistLibrary.LIB.dist_broadcast(c, r, root, o), null, buffer, true);
  }

  /** recv (size x send) gets rank r's send at block r; send null: own block already in recv. */
  public void allGather(NativeBuffer send, NativeBuffer recv) {
    issue((c, s, r, o) -> DistLibrary.LIB.dist_all_gather(c, s, r, o), send, recv, false);
  }

  public Request allGatherAsync(NativeBuffer send, NativeBuffer recv) {
    return issue((c, s, r, o) -> DistLibrary.LIB.dist_all_gather(c, s, r, o), send, recv, true);
  }

  /** recv (c) gets block rank of the reduction of send (size x c); send null: recv holds the inputs, result first. */
  public void reduceScatter(NativeBuffer send, NativeBuffer recv, Op op) {
    issue((c, s, r, o) -> DistLibrary.LIB.dist_reduce_scatter(c, s, r, op.value, o), send,
        reduceScatterTarget(send, recv), false);
  }

  public Request reduceScatterAsync(NativeBuffer send, NativeBuffer recv, Op op) {
    return issue((c, s, r, o) -> DistLibrary.LIB.dist_reduce_scatter(c, s, r, op.value, o), send,
        reduceScatterTarget(send, recv), true);
  }

  /** Block j of send goes to rank j, landing as block rank of its recv; send null: in place. */
  public void allToAll(NativeBuffer send, NativeBuffer recv) {
    issue((c, s, r, o) -> DistLibrary.LIB.dist_all_to_all(c, s, r, o), send, recv, false);
  }

  public Request allToAllAsync(NativeBuffer send, NativeBuffer recv) {
    return issue((c, s, r, o) -> DistLibrary.LIB.dist_all_to_all(c, s, r, o), send, recv, true);
  }

  public void barrier() {
    issue((c, s, r, o) -> DistLibrary.LIB.dist_barrier(c, o), null, null, false);
  }

  public Request barrierAsync() {
    return issue((c, s, r, o) -> DistLibrary.LIB.dist_barrier(c, o), null, null, true);
  }

  /** In-place all-reduce of a Java array (copied through native memory). */
  public void allReduce(Object array, Op op) {
    NativeBuffer b = NativeBuffer.copyOf(array);
    allReduce(null, b, op);
    b.copyTo(array);
  }

  /** Broadcast of a Java array from root (copied through native memory). */
  public void broadcast(Object array, int root) {
    NativeBuffer b = NativeBuffer.copyOf(array);
    broadcast(b, root);
    b.copyTo(array);
  }
}
