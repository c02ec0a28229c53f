package org.libdistribute;

import com.sun.jna.Pointer;
import com.sun.jna.ptr.PointerByReference;
import java.lang.ref.Reference;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One dist_context_create_oob call through the caller's {@link AllGather}. The
 * library asks for one or more all-gathers, in the same order on every rank. Each
 * runs the function on a daemon thread of its own, so that the library can poll it
 * and give up at its connect deadline; the function cannot be interrupted, so an
 * answer that comes after the library gave up is dropped. Every callback catches
 * everything: nothing may unwind into C (JNA would answer 0, "complete").
 */
final class Exchange {
  private final AllGather function;
  private final int rank;
  private final int size;
  /** Requests in flight by id (the void* the library holds). */
  private final Map<Long, Gather> gathers = new ConcurrentHashMap<>();
  private final AtomicLong ids = new AtomicLong();
  private Throwable failure;
  // Reachable as long as this object, which outlives the C call.
  private final DistLibrary.OobAllgatherFn allgather = this::allgather;
  private final DistLibrary.OobTestFn test = this::test;
  private final DistLibrary.OobFreeFn free = this::free;

  /** One all-gather: the function running on a thread of its own. */
  private static final class Gather {
    final Pointer recv;
    byte[][] parts;
    Throwable error;
    volatile boolean done; // written last: publishes parts and error

    Gather(Pointer recv) {
      this.recv = recv;
    }

    void run(AllGather function, byte[] sent, int size, int rank) {
      try {
        parts = checked(function.allGather(sent), sent, size, rank);
      } catch (Throwable t) {
        error = t;
      } finally {
        done = true;
      }
    }
  }

  private Exchange(AllGather function, int rank, int size) {
    this.function = function;
    this.rank = rank;
    this.size = size;
  }

  /** The answer as {@code size} parts as long as {@code sent}, this rank's own at {@code rank}. */
  static byte[][] checked(byte[][] parts, byte[] sent, int size, int rank) {
    if (parts == null || parts.length != size) {
      throw new IllegalArgumentException("the all-gather returned " + (parts == null ? "null" : parts.length + " items")
          + " for " + size + " ranks");
    }
    for (int r = 0; r < size; r++) {
      int length = parts[r] == null ? -1 : parts[r].length;
      if (length != sent.length) {
        throw new IllegalArgumentException("the all-gather returned " + (length < 0 ? "null" : length + " bytes")
            + " for rank " + r + ", expected " + sent.length);
      }
    }
    if (!Arrays.equals(parts[rank], sent)) {
      throw new IllegalArgumentException("the all-gather returned at index " + rank + " other bytes than this rank sent");
    }
    return parts;
  }

  private synchronized void fail(Throwable t) {
    if (failure == null) failure = t;
  }

  private synchronized Throwable failure() {
    return failure;
  }

  private int allgather(Pointer userData, Pointer send, Pointer recv, DistLibrary.SizeT bytes, Pointer request) {
    try {
      long n = bytes.longValue();
      if (n > Integer.MAX_VALUE - 8) {
        throw new IllegalArgumentException("an all-gather of " + n + " bytes does not fit a Java array");
      }
      byte[] sent = n == 0 ? new byte[0] : send.getByteArray(0, (int) n);
      long id = ids.incrementAndGet();
      Gather gather = new Gather(recv);
      gathers.put(id, gather);
      Thread thread = new Thread(() -> gather.run(function, sent, size, rank), "dist-exchange-" + rank);
      thread.setDaemon(true);
      thread.start();
      request.setPointer(0, new Pointer(id));
      return 0;
    } catch (Throwable t) {
      fail(t);
      return 1;
    }
  }

  private int test(Pointer userData, Pointer request) {
    try {
      Gather gather = gathers.get(Pointer.nativeValue(request));
      if (!gather.done) return 1;
      if (gather.error != null) {
        fail(gather.error);
        return -1;
      }
      for (int r = 0; r < gather.parts.length; r++) {
        byte[] part = gather.parts[r];
        gather.recv.write((long) r * part.length, part, 0, part.length);
      }
      return 0;
    } catch (Throwable t) {
      fail(t);
      return -1;
    }
  }

  private void free(Pointer userData, Pointer request) {
    gathers.remove(Pointer.nativeValue(request)); // a thread still running drops its answer
  }

  /** dist_context_create_oob through {@code function}: the new context's pointer. */
  static Pointer join(int rank, int size, AllGather function, DistLibrary.ContextOptionsStruct options) {
    if (function == null) {
      throw new DistException(Status.ERR_INVALID_ARGUMENT, "Context.fromExchange: allGather is null");
    }
    Exchange exchange = new Exchange(function, rank, size);
    DistLibrary.OobStruct oob = new DistLibrary.OobStruct();
    oob.rank = rank;
    oob.size = size;
    oob.allgather = exchange.allgather;
    oob.test = exchange.test;
    oob.free = exchange.free;
    PointerByReference out = new PointerByReference();
    int status = DistLibrary.LIB.dist_context_create_oob(oob, options, out);
    Reference.reachabilityFence(oob);
    if (status == Status.OK) return out.getValue();
    String message = DistLibrary.LIB.dist_last_error();
    Throwable failure = exchange.failure();
    if (failure == null) throw new DistException(status, message);
    if (failure instanceof Error) throw (Error) failure;
    throw new DistException(status, message + " (" + failure + ")", failure);
  }
}
