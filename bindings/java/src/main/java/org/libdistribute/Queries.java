package org.libdistribute;

import com.sun.jna.ptr.IntByReference;

/** Calls that return an int32 through an out-parameter. */
final class Queries {
  private Queries() {}

  /** A C call writing its result to `out`; returns its status. */
  interface IntCall {
    int run(IntByReference out);
  }

  /** The value the call wrote; throws on a failed status. */
  static int int32(IntCall call) {
    IntByReference out = new IntByReference();
    DistException.check(call.run(out));
    return out.getValue();
  }
}
