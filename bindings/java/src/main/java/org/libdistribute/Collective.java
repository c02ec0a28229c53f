package org.libdistribute;

/**
 * The seven collectives and all_to_all_v (DIST_COLLECTIVE_*), to ask which algorithm a call runs
 * (for ALL_TO_ALL_V, bytes is its largest block) and to name the rows of {@link Comm#stats()}.
 */
public enum Collective {
  ALL_REDUCE(0), REDUCE(1), BROADCAST(2), ALL_GATHER(3), REDUCE_SCATTER(4), ALL_TO_ALL(5), BARRIER(6),
  ALL_TO_ALL_V(7);

  public final int value;

  Collective(int value) {
    this.value = value;
  }

  static Collective of(int value) {
    for (Collective c : values()) {
      if (c.value == value) return c;
    }
    throw new DistException(Status.ERR_INVALID_ARGUMENT, "unknown collective " + value);
  }
}
