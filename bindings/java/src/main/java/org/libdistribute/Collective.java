package org.libdistribute;

/** The seven collectives (DIST_COLLECTIVE_*), to ask which algorithm a call runs. */
public enum Collective {
  ALL_REDUCE(0), REDUCE(1), BROADCAST(2), ALL_GATHER(3), REDUCE_SCATTER(4), ALL_TO_ALL(5), BARRIER(6);

  public final int value;

  Collective(int value) {
    this.value = value;
  }
}
