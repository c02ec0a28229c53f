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

  private final Handle handle;
  private final Cleaner.Cleanable cleanable;
  private Comm world;

  /** dist_context_options_t; null fields keep the defaults. */
  public static final class Options {
    public String token;
    public String tokenFile;
    public Duration connectTimeout;
    public Duration timeout;
  }

  /** Joins the cluster with the default options; blocks until every member connected. */
  public Context(Cluster cluster) {
    this(cluster, new Options());
  }

  public Context(Cluster cluster, Options options) {
    DistLibrary.ContextOptionsStruct s = new DistLibrary.ContextOptionsStruct();
    if (options.token != null) {
      s.field_mask |= OPT_TOKEN;
      s.token = options.token;
    }
    if (options.tokenFile != null) {
      s.field_mask |= OPT_TOKEN_FILE;
      s.token_file = options.tokenFile;
    }
    if (options.connectTimeout != null) {
      s.field_mask |= OPT_CONNECT_TIMEOUT_MS;
      s.connect_timeout_ms = options.connectTimeout.toMillis();
    }
    if (options.timeout != null) {
      s.field_mask |= OPT_TIMEOUT_MS;
      s.timeout_ms = options.timeout.toMillis();
    }
    PointerByReference out = new PointerByReference();
    DistException.check(DistLibrary.LIB.dist_context_create(cluster.pointer(), s, out));
    handle = new Handle(out.getValue(), DistLibrary.LIB::dist_context_destroy, null, null);
    cleanable = handle.watch(this);
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
