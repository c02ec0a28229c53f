package org.libdistribute;

import com.sun.jna.ptr.PointerByReference;
import java.lang.ref.Reference;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;

/**
 * Checkpoints of a cluster's parameter servers (dist_checkpoint_save/restore): each
 * ps task writes its own shard file, atomically, with a manifest of checksums that a
 * restore verifies before anything changes. Any thread.
 */
public final class Checkpoints {
  static final long OPT_TOKEN = 1L;
  static final long OPT_TOKEN_FILE = 1L << 1;
  static final long OPT_TIMEOUT_MS = 1L << 2;

  private Checkpoints() {}

  /** dist_checkpoint_options_t; null fields keep the defaults. */
  public static final class Options {
    public String token;
    public Path tokenFile;
    /** For every server to finish; default 600 s. */
    public Duration timeout;

    public Options token(String v) {
      token = v;
      return this;
    }

    public Options tokenFile(Path v) {
      tokenFile = v;
      return this;
    }

    public Options timeout(Duration v) {
      timeout = v;
      return this;
    }

    DistLibrary.CheckpointOptionsStruct toStruct() {
      DistLibrary.CheckpointOptionsStruct s = new DistLibrary.CheckpointOptionsStruct();
      if (token != null) {
        s.field_mask |= OPT_TOKEN;
        s.token = token;
      }
      if (tokenFile != null) {
        s.field_mask |= OPT_TOKEN_FILE;
        s.token_file = tokenFile.toString();
      }
      if (timeout != null) {
        s.field_mask |= OPT_TIMEOUT_MS;
        s.timeout_ms = timeout.toMillis();
      }
      return s;
    }
  }

  /** Every ps task of cluster saves its shards as checkpoint step under root; returns root/ckpt-step. */
  public static Path save(Cluster cluster, Path root, long step, Options options) {
    PointerByReference out = new PointerByReference();
    try {
      DistException.check(DistLibrary.LIB.dist_checkpoint_save(cluster.pointer(), root.toString(), step,
          options.toStruct(), out));
    } finally {
      Reference.reachabilityFence(cluster);
    }
    return Paths.get(Strings.take(out));
  }

  /**
   * Every ps task of cluster restores from directory (a root, whose LATEST is used, or
   * one ckpt-step directory); returns the checkpoint directory used.
   */
  public static Path restore(Cluster cluster, Path directory, Options options) {
    PointerByReference out = new PointerByReference();
    try {
      DistException.check(DistLibrary.LIB.dist_checkpoint_restore(cluster.pointer(), directory.toString(),
          options.toStruct(), out));
    } finally {
      Reference.reachabilityFence(cluster);
    }
    return Paths.get(Strings.take(out));
  }
}
