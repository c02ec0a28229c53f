package org.libdistribute;

import com.sun.jna.Pointer;
import com.sun.jna.ptr.PointerByReference;

/** C strings out of the library. */
final class Strings {
  private Strings() {}

  /** A borrowed const char* (null stays null), copied. */
  static String borrowed(PointerByReference out) {
    Pointer p = out.getValue();
    return p == null ? null : p.getString(0, "UTF-8");
  }

  /** A char* the library handed over: copied, then freed. */
  static String take(PointerByReference out) {
    Pointer p = out.getValue();
    try {
      return p == null ? "" : p.getString(0, "UTF-8");
    } finally {
      DistLibrary.LIB.dist_string_free(p);
    }
  }
}
