package org.libdistribute;

/** Reductions (DIST_OP_*). */
public enum Op {
  SUM(0), PROD(1), MIN(2), MAX(3), /** sum / communicator size; integers truncate */ MEAN(4);

  public final int value;

  Op(int value) {
    this.value = value;
  }
}
