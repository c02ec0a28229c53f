package org.libdistribute;

/** Resolver kinds (DIST_RESOLVER_*). */
public final class Resolver {
  public static final int AUTO = 0;
  public static final int TF_CONFIG = 1;
  public static final int SIMPLE = 2;
  public static final int SLURM = 3;
  public static final int MPI = 4;
  public static final int TORCHRUN = 5;
  public static final int UNION = 6;

  private Resolver() {}
}
