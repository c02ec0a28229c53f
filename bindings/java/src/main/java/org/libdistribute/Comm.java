package org.libdistribute;

import com.sun.jna.Pointer;
import com.sun.jna.ptr.LongByReference;
import com.sun.jna.ptr.PointerByReference;
import java.lang.ref.Cleaner;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

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
  /** A receive's peer that matches a send from any rank ({@link #recv} and {@link Request#source} tell which). */
  public static final int ANY_SOURCE = -1;
  /** The largest tag: tags are 0 .. TAG_MAX. */
  public static final int TAG_MAX = 0x7FFFFFFF;
  static final long OPT_TIMEOUT_MS = 1L;
  static final long OPT_ALLREDUCE = 1L << 1;
  static final long OPT_TIMING = 1L << 2;
  static final long OPT_STALL_WARNING_MS = 1L << 3;
  static final long OPT_DETERMINISTIC = 1L << 4;

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
   * How this communicator's calls on CUDA memory travel ({@link CommPath#NCCL} or {@link
   * CommPath#STAGED}), which its ranks choose together at the first such call; before that call,
   * and in builds without CUDA, a DistException with ERR_UNAVAILABLE.
   */
  public CommPath devicePath() {
    return CommPath.of(Queries.int32(out -> DistLibrary.LIB.dist_comm_device_path(handle.get(), out)));
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
    configure(timeout, allreduceAlgorithm, null);
  }

  /**
   * As {@link #configure(Duration, Integer)}, and {@code timing}: whether to time every call for
   * {@link #stats()} (off by default: two clock reads a call); null keeps it.
   */
  public void configure(Duration timeout, Integer allreduceAlgorithm, Boolean timing) {
    configure(timeout, allreduceAlgorithm, timing, null, null);
  }

  /**
   * As {@link #configure(Duration, Integer, Boolean)}, and {@code stallWarning}: how long a call
   * waits for its peers before each waiting rank logs who is behind and where (default 30 s;
   * {@link Duration#ZERO}: no warning; negative: ERR_INVALID_ARGUMENT; under 1 ms rounds up), and
   * {@code deterministic}: whether float SUM, PROD and MEAN reductions combine the ranks in rank
   * order, the same bits on every path (off by default). null keeps each.
   */
  public void configure(Duration timeout, Integer allreduceAlgorithm, Boolean timing, Duration stallWarning,
      Boolean deterministic) {
    DistLibrary.CommOptionsStruct s = new DistLibrary.CommOptionsStruct();
    if (timeout != null) {
      s.field_mask |= OPT_TIMEOUT_MS;
      s.timeout_ms = timeout.toMillis();
    }
    if (allreduceAlgorithm != null) {
      s.field_mask |= OPT_ALLREDUCE;
      s.allreduce = allreduceAlgorithm;
    }
    if (timing != null) {
      s.field_mask |= OPT_TIMING;
      s.timing = timing ? 1 : 0;
    }
    if (stallWarning != null) {
      s.field_mask |= OPT_STALL_WARNING_MS;
      long ms = stallWarning.toMillis();
      // toMillis truncates a positive duration: under 1 ms must not become 0 (no warning).
      if (!stallWarning.isNegative() && stallWarning.compareTo(Duration.ofMillis(ms)) > 0) ms++;
      s.stall_warning_ms = ms;
    }
    if (deterministic != null) {
      s.field_mask |= OPT_DETERMINISTIC;
      s.deterministic = deterministic ? 1 : 0;
    }
    DistException.check(DistLibrary.LIB.dist_comm_configure(handle.get(), s));
  }

  /**
   * This communicator's counters: one row per collective, path and algorithm that ran, in the
   * order they first ran (an unmodifiable list).
   */
  public List<CommStat> stats() {
    LongByReference count = new LongByReference();
    DistException.check(DistLibrary.LIB.dist_comm_stats(handle.get(), null, 0, count));
    while (true) {
      long capacity = count.getValue();
      // toArray lays the rows out contiguously; JNA writes the first and reads them all back.
      DistLibrary.CommStatStruct[] rows = capacity == 0 ? new DistLibrary.CommStatStruct[0]
          : (DistLibrary.CommStatStruct[]) new DistLibrary.CommStatStruct().toArray((int) capacity);
      DistException.check(
          DistLibrary.LIB.dist_comm_stats(handle.get(), capacity == 0 ? null : rows[0], capacity, count));
      // A request completing meanwhile may have added a row: then ask again with room for it.
      if (count.getValue() <= capacity) {
        List<CommStat> stats = new ArrayList<>();
        for (int i = 0; i < count.getValue(); i++) {
          rows[i].read();
          stats.add(CommStat.of(rows[i]));
        }
        return Collections.unmodifiableList(stats);
      }
    }
  }

  /** Sets every counter of {@link #stats()} to zero; call it between calls on this communicator. */
  public void resetStats() {
    DistException.check(DistLibrary.LIB.dist_comm_stats_reset(handle.get()));
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

  // ---- Point to point: apart from the collectives. A receive matches the oldest
  // unmatched send from its peer with the same tag; one (peer, tag) keeps the order
  // sent. A matched pair must agree on dtype and count, else the receive fails with
  // ERR_MISMATCH naming both sides. Each call ends by the communicator's deadline.

  /** Sends buffer to rank peer with tag; returns when buffer may be reused. */
  public void send(NativeBuffer buffer, int peer, int tag) {
    DistException.check(DistLibrary.LIB.dist_send(handle.get(), struct(buffer), peer, tag, null));
  }

  public Request sendAsync(NativeBuffer buffer, int peer, int tag) {
    DistLibrary.BufferStruct b = struct(buffer);
    PointerByReference out = new PointerByReference();
    DistException.check(DistLibrary.LIB.dist_send(handle.get(), b, peer, tag, out));
    return new Request(out.getValue(), this, new Object[] {buffer, b});
  }

  /**
   * Receives into buffer (exactly as many elements as were sent) from rank peer, or from
   * any rank with {@link #ANY_SOURCE}; returns the rank it came from.
   */
  public int recv(NativeBuffer buffer, int peer, int tag) {
    if (peer != ANY_SOURCE) {
      DistException.check(DistLibrary.LIB.dist_recv(handle.get(), struct(buffer), peer, tag, null));
      return peer;
    }
    try (Request request = recvAsync(buffer, peer, tag)) { // only a request tells the sender
      request.await();
      return request.source();
    }
  }

  /** A receive in flight; {@link Request#source} tells the sender once it completed. */
  public Request recvAsync(NativeBuffer buffer, int peer, int tag) {
    DistLibrary.BufferStruct b = struct(buffer);
    PointerByReference out = new PointerByReference();
    DistException.check(DistLibrary.LIB.dist_recv(handle.get(), b, peer, tag, out));
    return new Request(out.getValue(), this, new Object[] {buffer, b});
  }

  // ---- The uneven all-to-all: rank i sends its block j to rank j, which receives
  // it as its block i; each block has its own length. sendBlocks' count j on rank i
  // must equal recvBlocks' count i on rank j, else ERR_MISMATCH.

  /** Block j of send (as sendBlocks places it) goes to rank j; block j of recv comes from rank j. */
  public void allToAllV(NativeBuffer send, Blocks sendBlocks, NativeBuffer recv, Blocks recvBlocks) {
    allToAllV(send, sendBlocks, recv, recvBlocks, false);
  }

  public Request allToAllVAsync(NativeBuffer send, Blocks sendBlocks, NativeBuffer recv, Blocks recvBlocks) {
    return allToAllV(send, sendBlocks, recv, recvBlocks, true);
  }

  private Request allToAllV(NativeBuffer send, Blocks sendBlocks, NativeBuffer recv, Blocks recvBlocks,
      boolean async) {
    int n = size();
    DistLibrary.BufferStruct s = struct(send);
    DistLibrary.BufferStruct r = struct(recv);
    PointerByReference out = async ? new PointerByReference() : null;
    // Null blocks reach the library as NULL tables, which it refuses by name.
    Pointer sendCounts = sendBlocks == null ? null : sendBlocks.counts("sendBlocks", n);
    Pointer sendOffsets = sendBlocks == null ? null : sendBlocks.offsets();
    Pointer recvCounts = recvBlocks == null ? null : recvBlocks.counts("recvBlocks", n);
    Pointer recvOffsets = recvBlocks == null ? null : recvBlocks.offsets();
    DistException.check(DistLibrary.LIB.dist_all_to_all_v(handle.get(), s, sendCounts, sendOffsets, r, recvCounts,
        recvOffsets, out));
    // The request keeps the buffers, their descriptors and the block tables until it is done.
    return async ? new Request(out.getValue(), this, new Object[] {send, recv, s, r, sendBlocks, recvBlocks}) : null;
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
