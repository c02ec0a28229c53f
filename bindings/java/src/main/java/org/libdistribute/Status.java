package org.libdistribute;

/** Status codes (the header's DIST_OK and DIST_ERR_*). */
public final class Status {
  public static final int OK = 0;
  public static final int ERR_INVALID_ARGUMENT = -1;
  public static final int ERR_UNSUPPORTED = -2;
  public static final int ERR_NO_MEMORY = -100;
  public static final int ERR_SYSTEM = -101;
  public static final int ERR_PEER_FAILED = -200;
  public static final int ERR_TIMEOUT = -201;
  public static final int ERR_MISMATCH = -202;
  public static final int ERR_AUTH = -203;
  public static final int ERR_UNAVAILABLE = -204;
  public static final int ERR_ABORTED = -205;
  public static final int ERR_INTERNAL = -300;

  private Status() {}

  /** dist_status_string: "DIST_ERR_UNKNOWN" for a code this library does not know. */
  public static String name(int status) {
    return DistLibrary.LIB.dist_status_string(status);
  }
}
