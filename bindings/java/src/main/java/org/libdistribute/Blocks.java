package org.libdistribute;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;

/**
 * Where each rank's block sits in one buffer of an uneven all-to-all ({@link
 * Comm#allToAllV}): a count per communicator rank (elements; zeros allowed) and,
 * optionally, each block's offset (elements). Without offsets the blocks are packed
 * in rank order. The tables live in native memory, which a request keeps.
 */
public final class Blocks {
  private final long[] counts;
  private final long[] offsets; // null: packed
  private final Memory nativeCounts;
  private final Memory nativeOffsets;

  private Blocks(long[] counts, long[] offsets) {
    for (int j = 0; j < counts.length; j++) {
      if (counts[j] < 0 || (offsets != null && offsets[j] < 0)) {
        throw new DistException(Status.ERR_INVALID_ARGUMENT,
            "allToAllV: block " + j + " has a negative count or offset");
      }
    }
    this.counts = counts.clone();
    this.offsets = offsets == null ? null : offsets.clone();
    nativeCounts = copy(this.counts);
    nativeOffsets = this.offsets == null ? null : copy(this.offsets);
  }

  /** Blocks of {@code counts[j]} elements packed in rank order. */
  public static Blocks packed(long... counts) {
    return new Blocks(counts, null);
  }

  /** Block j is {@code counts[j]} elements at element {@code offsets[j]}. */
  public static Blocks at(long[] counts, long[] offsets) {
    if (offsets.length != counts.length) {
      throw new DistException(Status.ERR_INVALID_ARGUMENT,
          "allToAllV: " + counts.length + " counts but " + offsets.length + " offsets");
    }
    return new Blocks(counts, offsets);
  }

  /** The elements a buffer needs to hold every block. */
  public long extent() {
    long extent = 0;
    long packed = 0;
    for (int j = 0; j < counts.length; j++) {
      long start = offsets == null ? packed : offsets[j];
      packed += counts[j];
      extent = Math.max(extent, start + counts[j]);
    }
    return extent;
  }

  /** The count table, after checking it has one entry per rank (C reads that many). */
  Pointer counts(String which, int size) {
    if (counts.length != size) {
      throw new DistException(Status.ERR_INVALID_ARGUMENT,
          "allToAllV: " + which + " has " + counts.length + " counts for a communicator of " + size + " ranks");
    }
    return nativeCounts;
  }

  /** The offset table, or null when packed. */
  Pointer offsets() {
    return nativeOffsets;
  }

  private static Memory copy(long[] values) {
    Memory m = new Memory(Math.max(1, values.length) * 8L);
    m.write(0, values, 0, values.length);
    return m;
  }
}
