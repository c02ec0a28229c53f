package org.libdistribute;

import com.sun.jna.Pointer;
import com.sun.jna.ptr.PointerByReference;
import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Consumer;

/**
 * The standard parameter server (dist_server_t), serving from background threads of
 * this process: tf.distribute's ps task. address, describe, stop and join may be
 * called from any thread; close() (or garbage collection) stops, joins and frees it,
 * and is idempotent. A call after close throws the library's NULL-handle error.
 */
public final class Server implements AutoCloseable {
  static final long OPT_ADDRESS = 1L;
  static final long OPT_TOKEN = 1L << 1;
  static final long OPT_TOKEN_FILE = 1L << 2;
  static final long OPT_CHECKPOINT_DIR = 1L << 3;
  static final long OPT_IO_TIMEOUT_MS = 1L << 4;
  static final long OPT_LOG = 1L << 5;

  /** dist_server_options_t; null fields keep the defaults. */
  public static final class Options {
    /** "host:port"; port 0 picks a free port. Default: the cluster task's address. */
    public String address;
    /** The cluster token; default DIST_CLUSTER_TOKEN, then DIST_CLUSTER_TOKEN_FILE. */
    public String token;
    public Path tokenFile;
    /** A checkpoint root restored from (its LATEST) at start. */
    public Path checkpointDir;
    /** Default 60 s. */
    public Duration ioTimeout;
    /**
     * Receives each log line from the server's threads, possibly concurrently. What
     * it throws is dropped: no call waits for it.
     */
    public Consumer<String> log;

    public Options address(String v) {
      address = v;
      return this;
    }

    public Options token(String v) {
      token = v;
      return this;
    }

    public Options tokenFile(Path v) {
      tokenFile = v;
      return this;
    }

    public Options checkpointDir(Path v) {
      checkpointDir = v;
      return this;
    }

    public Options ioTimeout(Duration v) {
      ioTimeout = v;
      return this;
    }

    public Options log(Consumer<String> v) {
      log = v;
      return this;
    }
  }

  // Calls share it; close takes it exclusively, since destroy must not race them.
  private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
  private final Handle handle;
  private final Cleaner.Cleanable cleanable;

  /** dist_server_start; cluster may be null when the options give the address. */
  public Server(Cluster cluster, Options options) {
    DistLibrary.ServerOptionsStruct s = new DistLibrary.ServerOptionsStruct();
    if (options.address != null) {
      s.field_mask |= OPT_ADDRESS;
      s.address = options.address;
    }
    if (options.token != null) {
      s.field_mask |= OPT_TOKEN;
      s.token = options.token;
    }
    if (options.tokenFile != null) {
      s.field_mask |= OPT_TOKEN_FILE;
      s.token_file = options.tokenFile.toString();
    }
    if (options.checkpointDir != null) {
      s.field_mask |= OPT_CHECKPOINT_DIR;
      s.checkpoint_dir = options.checkpointDir.toString();
    }
    if (options.ioTimeout != null) {
      s.field_mask |= OPT_IO_TIMEOUT_MS;
      s.io_timeout_ms = options.ioTimeout.toMillis();
    }
    DistLibrary.LogFn callback = null;
    if (options.log != null) {
      Consumer<String> sink = options.log;
      callback = (message, userData) -> {
        try {
          sink.accept(message);
        } catch (Throwable t) { // must not unwind into the server's thread
        }
      };
      s.field_mask |= OPT_LOG;
      s.log = callback;
    }
    PointerByReference out = new PointerByReference();
    try {
      DistException.check(DistLibrary.LIB.dist_server_start(cluster == null ? null : cluster.pointer(), s, out));
    } finally {
      Reference.reachabilityFence(cluster);
    }
    // The callback stays reachable until dist_server_destroy has joined the threads calling it.
    handle = new Handle(out.getValue(), DistLibrary.LIB::dist_server_destroy, null, callback);
    cleanable = handle.watch(this);
  }

  /** Stops, joins and frees the server. Idempotent. */
  @Override
  public void close() {
    stopQuietly(); // ends a join running elsewhere, which holds the read lock
    lock.writeLock().lock();
    try {
      cleanable.clean();
    } finally {
      lock.writeLock().unlock();
    }
  }

  public boolean isClosed() {
    return handle.get() == null;
  }

  private void stopQuietly() {
    lock.readLock().lock();
    try {
      Pointer p = handle.get();
      if (p != null) {
        DistLibrary.LIB.dist_server_stop(p);
      }
    } finally {
      lock.readLock().unlock();
    }
  }

  private interface ServerCall {
    int apply(Pointer server);
  }

  private void call(ServerCall f) {
    lock.readLock().lock();
    try {
      DistException.check(f.apply(handle.get()));
    } finally {
      lock.readLock().unlock();
    }
  }

  /** The "host:port" actually listened at. */
  public String address() {
    PointerByReference out = new PointerByReference();
    String[] address = new String[1];
    call(p -> {
      int status = DistLibrary.LIB.dist_server_address(p, out);
      if (status == Status.OK) {
        address[0] = Strings.borrowed(out); // borrowed from the server: copied under the lock
      }
      return status;
    });
    return address[0];
  }

  /** What the server holds, as JSON: address, stopping, requests, variables. */
  public String describe() {
    PointerByReference out = new PointerByReference();
    call(p -> DistLibrary.LIB.dist_server_describe(p, out));
    return Strings.take(out);
  }

  /** Waits until the server has stopped; null waits without bound. ERR_TIMEOUT if it still serves. */
  public void join(Duration timeout) {
    long ms = timeout == null ? -1 : timeout.toMillis();
    call(p -> DistLibrary.LIB.dist_server_join(p, ms));
  }

  /** Asks the server to stop; join waits for it. */
  public void stop() {
    call(DistLibrary.LIB::dist_server_stop);
  }
}
