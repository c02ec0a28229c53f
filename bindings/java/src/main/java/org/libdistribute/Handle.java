package org.libdistribute;

import com.sun.jna.Pointer;
import java.lang.ref.Cleaner;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * One C handle and how to destroy it, shared by an AutoCloseable wrapper and the
 * Cleaner that releases it if the wrapper is collected unclosed. Destroying runs
 * once: children first (a context's communicators, a communicator's requests),
 * then this handle. A destroyed handle reads as null, so a call on a closed
 * object reaches the library as NULL and fails with its own error.
 */
final class Handle implements Runnable {
  static final Cleaner CLEANER = Cleaner.create();

  private Pointer pointer;
  private final Consumer<Pointer> destroy;
  private final Handle parent;
  private final List<Handle> children = new ArrayList<>();
  /** What the C side uses until destroy: a request's buffers. */
  private Object keepAlive;

  Handle(Pointer pointer, Consumer<Pointer> destroy, Handle parent, Object keepAlive) {
    this.pointer = pointer;
    this.destroy = destroy;
    this.parent = parent;
    this.keepAlive = keepAlive;
    if (parent != null) {
      parent.adopt(this);
    }
  }

  /** Registers `owner` so that collecting it destroys the handle. */
  Cleaner.Cleanable watch(Object owner) {
    return CLEANER.register(owner, this);
  }

  synchronized Pointer get() {
    return pointer;
  }

  private synchronized void adopt(Handle child) {
    if (pointer == null) {
      throw new DistException(Status.ERR_INVALID_ARGUMENT, "the parent handle is already closed");
    }
    children.add(child);
  }

  private synchronized void forget(Handle child) {
    children.remove(child);
  }

  @Override
  public void run() {
    Pointer p;
    List<Handle> kids;
    synchronized (this) {
      p = pointer;
      pointer = null;
      kids = new ArrayList<>(children);
      children.clear();
    }
    for (Handle child : kids) {
      child.run();
    }
    if (p != null) {
      destroy.accept(p);
    }
    synchronized (this) {
      keepAlive = null;
    }
    if (parent != null) {
      parent.forget(this);
    }
  }
}
