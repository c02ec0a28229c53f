package org.libdistribute;

import com.sun.jna.Pointer;
import com.sun.jna.ptr.PointerByReference;
import java.lang.ref.Cleaner;
import java.time.Duration;

/**
 * This process's membership in the cluster. rank(), size() and abort() may be
 * called from any thread. close() (idempotent; also run on garbage collection)
 * closes the communicators split from it, waiting for their requests, before the
 * context itself, as the C API requires.
 */
public final class Context implements AutoCloseable {
  static final long OPT_TOKEN = 1L;
  static final long OPT_TOKEN_FILE = 1L << 1;
  static final long OPT_CONNECT_TIMEOUT_MS = 1L << 2;
  static final long OPT_TIMEOUT_MS = 1L << 3;
  static final long OPT_TIMELINE = 1L << 4;

  private final Handle handle;
  private final Cleaner.Cleanable cleanable;
  private Comm world;

  /** dist_context_options_t; null fields keep the defaults. */
  public static final class Options {
    public String token;
    public String tokenFile;
    public Duration connectTimeout;
    public Duration timeout;
    /**
     * Records a timeline: this rank writes {@code "<timeline>.<rank>.json"}, a JSON array of
     * Chrome trace events, complete once the context is closed; turns on timing.
     * null: DIST_TIMELINE's value, else off. "" is refused (ERR_INVALID_ARGUMENT).
     */
    public String timeline;

    DistLibrary.ContextOptionsStruct toStruct() {
      DistLibrary.ContextOptionsStruct s = new DistLibrary.ContextOptionsStruct();
      if (token != null) {
        s.field_mask |= OPT_TOKEN;
        s.token = token;
      }
      if (tokenFile != null) {
        s.field_mask |= OPT_TOKEN_FILE;
        s.token_file = tokenFile;
      }
      if (connectTimeout != null) {
        s.field_mask |= OPT_CONNECT_TIMEOUT_MS;
        s.connect_timeout_ms = connectTimeout.toMillis();
      }
      if (timeout != null) {
        s.field_mask |= OPT_TIMEOUT_MS;
        s.timeout_ms = timeout.toMillis();
      }
      if (timeline != null) {
        s.field_mask |= OPT_TIMELINE;
        s.timeline = timeline;
      }
      // JNA copies the Strings to native memory that the struct holds on to, so they
      // live as long as the struct: across the create call that it is passed to.
      return s;
    }
  }

  /** Joins the cluster with the default options; blocks until every member connected. */
  public Context(Cluster cluster) {
    this(cluster, new Options());
  }

  public Context(Cluster cluster, Options options) {
    this(join(cluster, options));
  }

  private Context(Pointer raw) {
    handle = new Handle(raw, DistLibrary.LIB::dist_context_destroy, null, null);
    cleanable = handle.watch(this);
  }

  private static Pointer join(Cluster cluster, Options options) {
    PointerByReference out = new PointerByReference();
    DistException.check(DistLibrary.LIB.dist_context_create(cluster.pointer(), options.toStruct(), out));
    return out.getValue();
  }

  /**
   * Joins through the caller's own exchange (dist_context_create_oob), for
   * frameworks that already have a rendezvous (torch's Store, an MPI communicator,
   * JAX's key-value store) and no cluster spec. {@code allGather} is called one or
   * more times, in the same order on every rank, each time on a thread of its own;
   * the connect deadline bounds the whole join. What it throws fails the join: the
   * DistException thrown here names it and has it as its cause (a
   * {@link java.lang.Error} is rethrown as it was). The cluster token
   * authenticates the members as with a cluster (the options, else
   * DIST_CLUSTER_TOKEN / DIST_CLUSTER_TOKEN_FILE).
   */
  public static Context fromExchange(int rank, int size, AllGather allGather, Options options) {
    return new Context(Exchange.join(rank, size, allGather, options.toStruct()));
  }

  Handle handle() {
    return handle;
  }

  @Override
  public void close() {
    cleanable.clean();
  }

  public int rank() {
    return Queries.int32(out -> DistLibrary.LIB.dist_context_rank(handle.get(), out));
  }

  public int size() {
    return Queries.int32(out -> DistLibrary.LIB.dist_context_size(handle.get(), out));
  }

  /** Makes every pending and later call on every communicator fail with ERR_ABORTED, here and on every peer. */
  public void abort(String reason) {
    DistException.check(DistLibrary.LIB.dist_context_abort(handle.get(), reason));
  }

  /**
   * The flight recorder (dist_context_dump): JSON with this rank (rank, size, task, host_id, pid,
   * steady_ns, system_ns), lost_peers and communicators, each with its last calls (seq, kind, dtype,
   * count, state "in flight"/"done"/"failed", status, path, algorithm, ...). From any thread, also
   * while a call hangs.
   */
  public String dump() {
    PointerByReference out = new PointerByReference();
    DistException.check(DistLibrary.LIB.dist_context_dump(handle.get(), out));
    return Strings.take(out);
  }

  /** The communicator of all members, owned by the context (closing it only detaches it). */
  public synchronized Comm world() {
    if (world == null || world.isClosed()) {
      PointerByReference out = new PointerByReference();
      DistException.check(DistLibrary.LIB.dist_comm_world(handle.get(), out));
      world = new Comm(out.getValue(), this, false);
    }
    return world;
  }

  static void destroyNothing(Pointer p) {}
}
