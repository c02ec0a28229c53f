package org.libdistribute;

/** Element types (DIST_DTYPE_*) and their sizes in bytes. */
public enum DType {
  I8(0, 1), U8(1, 1), I32(2, 4), U32(3, 4), I64(4, 8), U64(5, 8), F16(6, 2), BF16(7, 2), F32(8, 4), F64(9, 8);

  /** The C value. */
  public final int value;
  public final int size;

  DType(int value, int size) {
    this.value = value;
    this.size = size;
  }

  /**
   * The dtype of a Java primitive array or typed NIO buffer: byte -> I8, int -> I32,
   * long -> I64, float -> F32, double -> F64. Java has no unsigned or half types:
   * U8/U32/U64/F16/BF16 are given explicitly with a ByteBuffer (or ShortBuffer).
   */
  /** The dtype of a DIST_DTYPE_* value. */
  public static DType fromValue(int value) {
    for (DType d : values()) {
      if (d.value == value) return d;
    }
    throw new IllegalArgumentException(value + " is not a DIST_DTYPE value");
  }

  public static DType of(Class<?> elementType) {
    if (elementType == byte.class) return I8;
    if (elementType == int.class) return I32;
    if (elementType == long.class) return I64;
    if (elementType == float.class) return F32;
    if (elementType == double.class) return F64;
    throw new IllegalArgumentException(elementType + " has no libdistribute dtype");
  }
}
