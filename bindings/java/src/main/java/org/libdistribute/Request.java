package org.libdistribute;

import com.sun.jna.Pointer;
import java.lang.ref.Cleaner;
import java.time.Duration;

/**
 * A collective in flight. It holds its buffers until the call is done; close()
 * (idempotent, also run on garbage collection) waits for the call before freeing
 * the request, so they are never released early. Use from one thread at a time.
 */
public final class Request implements AutoCloseable {
  private final Handle handle;
  private final Cleaner.Cleanable cleanable;

  Request(Pointer pointer, Comm comm, Object buffers) {
    handle = new Handle(pointer, Request::waitAndFree, comm.handle(), buffers);
    cleanable = handle.watch(this);
  }

  private static void waitAndFree(Pointer p) {
    DistLibrary.LIB.dist_request_wait(p, -1);
    DistLibrary.LIB.dist_request_free(p);
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

  @Override
  public void close() {
    cleanable.clean();
  }
}
