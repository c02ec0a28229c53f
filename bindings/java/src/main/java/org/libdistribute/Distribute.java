package org.libdistribute;

import com.sun.jna.ptr.PointerByReference;

/** Version and build report of the loaded library. */
public final class Distribute {
  public static final int FEATURE_UCX = 1;
  public static final int FEATURE_CUDA = 1 << 1;
  public static final int FEATURE_NCCL = 1 << 2;
  public static final int FEATURE_HWLOC = 1 << 3;

  private Distribute() {}

  /** DIST_VERSION_HEX of the loaded library (0xMMmmpp). */
  public static int version() {
    return DistLibrary.LIB.dist_version();
  }

  public static String versionString() {
    return DistLibrary.LIB.dist_version_string();
  }

  /** A bitwise OR of FEATURE_*. */
  public static int buildFeatures() {
    return DistLibrary.LIB.dist_build_features();
  }

  /** The build report as JSON. */
  public static String buildInfo() {
    PointerByReference out = new PointerByReference();
    DistException.check(DistLibrary.LIB.dist_build_info(out));
    return Strings.take(out);
  }
}
