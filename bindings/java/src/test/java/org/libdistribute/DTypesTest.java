package org.libdistribute;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.fail;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.ShortBuffer;
import org.junit.Test;

public class DTypesTest {
  @Test
  public void javaTypesMapToTheirDTypes() {
    assertEquals(DType.I8, DType.of(byte.class));
    assertEquals(DType.I32, DType.of(int.class));
    assertEquals(DType.I64, DType.of(long.class));
    assertEquals(DType.F32, DType.of(float.class));
    assertEquals(DType.F64, DType.of(double.class));
    for (Class<?> none : new Class<?>[] {short.class, char.class, boolean.class, Integer.class}) {
      try {
        DType.of(none);
        fail(none + " mapped");
      } catch (IllegalArgumentException expected) {
        // no C counterpart
      }
    }
    ByteBuffer bytes = ByteBuffer.allocateDirect(64).order(ByteOrder.nativeOrder());
    assertEquals(DType.F32, NativeBuffer.of(bytes.asFloatBuffer()).dtype());
    assertEquals(DType.F64, NativeBuffer.of(bytes.asDoubleBuffer()).dtype());
    assertEquals(DType.I32, NativeBuffer.of(bytes.asIntBuffer()).dtype());
    assertEquals(DType.I64, NativeBuffer.of(bytes.asLongBuffer()).dtype());
    assertEquals(16, NativeBuffer.of(bytes.asFloatBuffer()).count());
    for (DType d : DType.values()) {
      NativeBuffer b = NativeBuffer.of(bytes, d);
      assertEquals(d, b.dtype());
      assertEquals(64 / d.size, b.count());
    }
  }

  @Test
  public void everyDTypeGoesThroughTheLibrary() {
    try (Cluster cluster = Fixtures.emptyCluster(); Context context = new Context(cluster)) {
      Comm world = context.world();
      for (DType d : DType.values()) {
        ByteBuffer in = ByteBuffer.allocateDirect(4 * d.size).order(ByteOrder.nativeOrder());
        for (int i = 0; i < in.capacity(); i++) in.put(i, (byte) (i % d.size == 0 ? 1 : 0));
        ByteBuffer out = ByteBuffer.allocateDirect(in.capacity()).order(ByteOrder.nativeOrder());
        world.allReduce(NativeBuffer.of(in, d), NativeBuffer.of(out, d), Op.MAX); // one rank: a copy
        assertEquals(d.toString(), in, out);
      }
      byte[] b = {-3, 4};
      world.allReduce(b, Op.SUM);
      assertArrayEquals(new byte[] {-3, 4}, b);
      long[] l = {-(1L << 40), 3};
      world.allReduce(l, Op.PROD);
      assertArrayEquals(new long[] {-(1L << 40), 3}, l);
      ShortBuffer halves = ByteBuffer.allocateDirect(4).order(ByteOrder.nativeOrder()).asShortBuffer();
      halves.put(0, (short) 0x3C00).put(1, (short) 0x4000);
      world.allReduce(null, NativeBuffer.of(halves, DType.F16), Op.SUM);
      assertEquals((short) 0x4000, halves.get(1));
    }
  }

  @Test
  public void heapBuffersAndForeignOrderAreRefused() {
    try {
      NativeBuffer.of(ByteBuffer.allocate(8), DType.U8);
      fail("a heap buffer was accepted");
    } catch (IllegalArgumentException expected) {
      // not addressable from C
    }
    try {
      ByteOrder other = ByteOrder.nativeOrder() == ByteOrder.BIG_ENDIAN ? ByteOrder.LITTLE_ENDIAN : ByteOrder.BIG_ENDIAN;
      NativeBuffer.of(ByteBuffer.allocateDirect(8).order(other).asFloatBuffer());
      fail("a foreign byte order was accepted");
    } catch (IllegalArgumentException expected) {
      // the library reads native order
    }
  }
}
