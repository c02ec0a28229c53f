package org.libdistribute;

/** A failed libdistribute call: its status code and the library's message. */
public class DistException extends RuntimeException {
  private static final long serialVersionUID = 1L;
  private final int status;
  private final String detail;

  public DistException(int status, String message) {
    super(Status.name(status) + ": " + message);
    this.status = status;
    this.detail = message;
  }

  /** A failed call that {@code cause}, the caller's own code, made fail. */
  DistException(int status, String message, Throwable cause) {
    this(status, message);
    initCause(cause);
  }

  /** The C status code (negative), one of {@link Status}. */
  public int status() {
    return status;
  }

  /** "DIST_ERR_INVALID_ARGUMENT" and so on. */
  public String statusName() {
    return Status.name(status);
  }

  /** The text of dist_last_error() at the time of the failure. */
  public String detail() {
    return detail;
  }

  /** A peer or link failed (-200..-299): the communicator or cluster is affected. */
  public boolean isPeerFailure() {
    return status <= -200 && status >= -299;
  }

  /** Throws for a failed status, reading the calling thread's last error. */
  static void check(int status) {
    if (status != Status.OK) {
      throw new DistException(status, DistLibrary.LIB.dist_last_error());
    }
  }
}
