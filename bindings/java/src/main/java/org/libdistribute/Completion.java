package org.libdistribute;

import com.sun.jna.Pointer;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * A completion callback registered with dist_request_on_complete. The library
 * calls it once, on the thread that completed the request. Until then it stays in
 * {@link #AWAITING_CALLBACK}, which keeps it (the JNA Callback, the function C
 * calls through JNA) and the request's buffers reachable, also after the request
 * was closed; after it ran, both may be collected.
 */
final class Completion implements DistLibrary.RequestCallback {
  private static final Set<Completion> AWAITING_CALLBACK = ConcurrentHashMap.newKeySet();

  private final Consumer<DistException> listener;
  private final Object buffers; // never read: keeps what the call uses until it ends

  private Completion(Consumer<DistException> listener, Object buffers) {
    this.listener = listener;
    this.buffers = buffers;
  }

  /** Registers {@code listener} on a live request; throws the library's error if refused. */
  static void register(Pointer request, Consumer<DistException> listener, Object buffers) {
    if (listener == null) {
      throw new DistException(Status.ERR_INVALID_ARGUMENT, "onComplete: the listener is null");
    }
    Completion completion = new Completion(listener, buffers);
    AWAITING_CALLBACK.add(completion);
    int status = DistLibrary.LIB.dist_request_on_complete(request, completion, null);
    if (status != Status.OK) {
      String message = DistLibrary.LIB.dist_last_error();
      AWAITING_CALLBACK.remove(completion); // refused: C never calls it
      throw new DistException(status, message);
    }
  }

  @Override
  public void invoke(Pointer userData, int status, String message) {
    try {
      listener.accept(status == Status.OK ? null : new DistException(status, message));
    } catch (Throwable t) {
      // Nothing may unwind into C: the thread's handler reports it, as for a thread of its own.
      Thread thread = Thread.currentThread();
      thread.getUncaughtExceptionHandler().uncaughtException(thread, t);
    } finally {
      AWAITING_CALLBACK.remove(this);
    }
  }

  /** How many callbacks are registered and have not run (for the tests). */
  static int pending() {
    return AWAITING_CALLBACK.size();
  }
}
