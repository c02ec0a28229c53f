package org.libdistribute;

/**
 * How a communicator's collectives travel (DIST_COMM_PATH_*), decided by all its ranks at creation
 * (the path of its calls on CUDA memory, NCCL or STAGED, at the first such call).
 */
public enum CommPath {
  /** one rank: nothing travels */
  SELF(0),
  /** UCX messages between ranks */
  POINT_TO_POINT(1),
  /** a memory segment shared by all ranks, on one host */
  SHARED_MEMORY(2),
  /** shared memory within each host, UCX messages between hosts */
  HIERARCHICAL(3),
  /** calls on CUDA memory: NCCL ({@link Comm#devicePath}) */
  NCCL(4),
  /** calls on CUDA memory: through pinned host memory */
  STAGED(5);

  public final int value;

  CommPath(int value) {
    this.value = value;
  }

  static CommPath of(int value) {
    for (CommPath p : values()) {
      if (p.value == value) return p;
    }
    throw new DistException(Status.ERR_INVALID_ARGUMENT, "unknown communicator path " + value);
  }
}
