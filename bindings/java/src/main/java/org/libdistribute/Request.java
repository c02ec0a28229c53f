package org.libdistribute;

import com.sun.jna.Pointer;
import java.lang.ref.Cleaner;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * A call in flight: a non-blocking collective, send or receive. It holds its
 * buffers until the call is done; close() (idempotent, also run on garbage
 * collection) waits for the call before freeing the request, so they are never
 * released early, unless {@link #onComplete} registered a listener: then close()
 * frees at once and the listener keeps the buffers until it ran. Use from one
 * thread at a time.
 */
public final class Request implements AutoCloseable {
  private final Handle handle;
  private final Cleaner.Cleanable cleanable;
  private final Object buffers;
  /** Shared with the cleaner (which must not reach this object): a listener holds the buffers. */
  private final AtomicBoolean listened = new AtomicBoolean();

  Request(Pointer pointer, Comm comm, Object buffers) {
    this.buffers = buffers;
    AtomicBoolean listened = this.listened;
    handle = new Handle(pointer, p -> release(p, listened.get()), comm.handle(), buffers);
    cleanable = handle.watch(this);
  }

  private static void release(Pointer p, boolean listened) {
    if (!listened) {
      DistLibrary.LIB.dist_request_wait(p, -1);
    }
    DistLibrary.LIB.dist_request_free(p); // with a listener, the call finishes in the background
  }

  /** True once complete; throws if the call failed. */
  public boolean test() {
    return Queries.int32(done -> DistLibrary.LIB.dist_request_test(handle.get(), done)) != 0;
  }

  /** Waits until the call ends (its deadline bounds it); throws if it failed. */
  public void await() {
    DistException.check(DistLibrary.LIB.dist_request_wait(handle.get(), -1));
  }

  /** Waits up to timeout: false if it ran out (the request stays valid). */
  public boolean await(Duration timeout) {
    int status = DistLibrary.LIB.dist_request_wait(handle.get(), timeout.toMillis());
    if (status == Status.ERR_TIMEOUT) {
      return test(); // this wait ran out (not done), or the call itself ended: its status
    }
    DistException.check(status);
    return true;
  }

  /**
   * The communicator rank a completed receive came from (the sender's for {@link
   * Comm#ANY_SOURCE}); throws for a request that is not a receive or has not completed
   * successfully.
   */
  public int source() {
    return Queries.int32(out -> DistLibrary.LIB.dist_request_source(handle.get(), out));
  }

  /**
   * Calls {@code listener} once when the call completes, with null on success or the
   * call's DistException, on the thread that completed it (a library thread), or at
   * once on this thread if it already has. It must return quickly and must not block
   * on this communicator (no blocking call, no await on one of its requests): hand the
   * result on, e.g. to a CompletableFuture. What it throws goes to that thread's
   * uncaught-exception handler. At most one per request (a second is the library's
   * ERR_INVALID_ARGUMENT). The request stays usable; close() no longer waits.
   */
  public void onComplete(Consumer<DistException> listener) {
    Completion.register(handle.get(), listener, buffers);
    listened.set(true);
  }

  @Override
  public void close() {
    cleanable.clean();
  }
}
