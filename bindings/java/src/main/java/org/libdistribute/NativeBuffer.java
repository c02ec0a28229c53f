package org.libdistribute;

import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.Pointer;
import java.nio.Buffer;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.DoubleBuffer;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.nio.LongBuffer;
import java.nio.ShortBuffer;

/**
 * Memory a collective reads or writes: a direct NIO buffer (zero copy; the
 * elements between its position and limit) or native memory it allocates. The
 * buffer object keeps that memory alive while the library uses it.
 */
public final class NativeBuffer {
  private final Object owner; // the NIO buffer or Memory the pointer points into
  private final Pointer data;
  private final long count;
  private final DType dtype;

  private NativeBuffer(Object owner, Pointer data, long count, DType dtype) {
    this.owner = owner;
    this.data = data;
    this.count = count;
    this.dtype = dtype;
  }

  private static NativeBuffer direct(Buffer b, long count, DType dtype) {
    if (!b.isDirect()) {
      throw new IllegalArgumentException("only direct buffers can be shared with native code; "
          + "use ByteBuffer.allocateDirect(...).order(ByteOrder.nativeOrder())");
    }
    Pointer base = Native.getDirectBufferPointer(b);
    return new NativeBuffer(b, base.share((long) b.position() * elementSize(b)), count, dtype);
  }

  private static int elementSize(Buffer b) {
    if (b instanceof ByteBuffer) return 1;
    if (b instanceof ShortBuffer) return 2;
    if (b instanceof IntBuffer || b instanceof FloatBuffer) return 4;
    return 8;
  }

  private static void nativeOrder(ByteOrder order) {
    if (order != ByteOrder.nativeOrder()) {
      throw new IllegalArgumentException("the buffer must be in native byte order (" + ByteOrder.nativeOrder() + ")");
    }
  }

  /** Bytes as any dtype: remaining() must be a multiple of its size. */
  public static NativeBuffer of(ByteBuffer b, DType dtype) {
    if (b.remaining() % dtype.size != 0) {
      throw new IllegalArgumentException(b.remaining() + " bytes are not a whole number of " + dtype);
    }
    if (dtype.size > 1) nativeOrder(b.order());
    return direct(b, b.remaining() / dtype.size, dtype);
  }

  /** 16-bit values as F16 or BF16. */
  public static NativeBuffer of(ShortBuffer b, DType dtype) {
    if (dtype != DType.F16 && dtype != DType.BF16) {
      throw new IllegalArgumentException("a ShortBuffer holds F16 or BF16, not " + dtype);
    }
    nativeOrder(b.order());
    return direct(b, b.remaining(), dtype);
  }

  public static NativeBuffer of(IntBuffer b) {
    nativeOrder(b.order());
    return direct(b, b.remaining(), DType.I32);
  }

  public static NativeBuffer of(LongBuffer b) {
    nativeOrder(b.order());
    return direct(b, b.remaining(), DType.I64);
  }

  public static NativeBuffer of(FloatBuffer b) {
    nativeOrder(b.order());
    return direct(b, b.remaining(), DType.F32);
  }

  public static NativeBuffer of(DoubleBuffer b) {
    nativeOrder(b.order());
    return direct(b, b.remaining(), DType.F64);
  }

  /** Fresh native memory for `count` elements of `dtype`, zeroed. */
  public static NativeBuffer allocate(DType dtype, long count) {
    Memory m = new Memory(Math.max(1, count * dtype.size));
    m.clear();
    return new NativeBuffer(m, m, count, dtype);
  }

  /** A native copy of a Java array (byte, int, long, float or double). */
  public static NativeBuffer copyOf(Object array) {
    DType dtype = DType.of(array.getClass().getComponentType());
    int n = java.lang.reflect.Array.getLength(array);
    NativeBuffer b = allocate(dtype, n);
    b.transfer(array, true);
    return b;
  }

  /** Copies the elements into a Java array of the buffer's type and length. */
  public void copyTo(Object array) {
    if (DType.of(array.getClass().getComponentType()) != dtype || java.lang.reflect.Array.getLength(array) != count) {
      throw new IllegalArgumentException("the array does not match " + count + " x " + dtype);
    }
    transfer(array, false);
  }

  private void transfer(Object array, boolean in) {
    int n = (int) count;
    if (array instanceof byte[]) {
      if (in) data.write(0, (byte[]) array, 0, n); else data.read(0, (byte[]) array, 0, n);
    } else if (array instanceof int[]) {
      if (in) data.write(0, (int[]) array, 0, n); else data.read(0, (int[]) array, 0, n);
    } else if (array instanceof long[]) {
      if (in) data.write(0, (long[]) array, 0, n); else data.read(0, (long[]) array, 0, n);
    } else if (array instanceof float[]) {
      if (in) data.write(0, (float[]) array, 0, n); else data.read(0, (float[]) array, 0, n);
    } else {
      if (in) data.write(0, (double[]) array, 0, n); else data.read(0, (double[]) array, 0, n);
    }
  }

  public long count() {
    return count;
  }

  public DType dtype() {
    return dtype;
  }

  /** The same memory seen as its first `elements` elements (an in-place reduce-scatter's output). */
  NativeBuffer prefix(long elements) {
    return new NativeBuffer(owner, data, elements, dtype);
  }

  Pointer pointer() {
    return data;
  }

  DistLibrary.BufferStruct toStruct() {
    DistLibrary.BufferStruct s = new DistLibrary.BufferStruct();
    fill(s);
    return s;
  }

  private void fill(DistLibrary.BufferStruct s) {
    s.data = data;
    s.count = count;
    s.dtype = dtype.value;
  }

  /** Descriptors of `buffers` in one contiguous native array (a C dist_buffer_t[]). */
  static DistLibrary.BufferStruct[] structs(NativeBuffer[] buffers) {
    DistLibrary.BufferStruct[] out =
        (DistLibrary.BufferStruct[]) new DistLibrary.BufferStruct().toArray(Math.max(1, buffers.length));
    for (int i = 0; i < buffers.length; i++) {
      buffers[i].fill(out[i]);
    }
    return out;
  }

  /** `elements` elements of this buffer's memory at `at` (which points into it), sharing its owner. */
  NativeBuffer view(Pointer at, long elements) {
    return new NativeBuffer(owner, at == null ? data : at, elements, dtype);
  }

  /** A native copy of memory the library lends (count elements of dtype at p). */
  static NativeBuffer copyOf(Pointer p, long count, DType dtype) {
    NativeBuffer b = allocate(dtype, count);
    if (count > 0) {
      b.data.write(0, p.getByteArray(0, (int) (count * dtype.size)), 0, (int) (count * dtype.size));
    }
    return b;
  }

  /** The elements as a new Java array: float[] for F32, double[] for F64, int[] for I32/U32, long[] for I64/U64,
   * byte[] for I8/U8, short[] for F16/BF16. */
  public Object toArray() {
    int n = (int) count;
    switch (dtype) {
      case F32: return data.getFloatArray(0, n);
      case F64: return data.getDoubleArray(0, n);
      case I32: case U32: return data.getIntArray(0, n);
      case I64: case U64: return data.getLongArray(0, n);
      case F16: case BF16: return data.getShortArray(0, n);
      default: return data.getByteArray(0, n);
    }
  }
}
