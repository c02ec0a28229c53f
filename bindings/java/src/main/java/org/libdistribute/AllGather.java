package org.libdistribute;

/** The caller's all-gather for {@link Context#fromExchange}: torch's Store, MPI_Allgather, a key-value store. */
@FunctionalInterface
public interface AllGather {
  /**
   * Exchanges this rank's bytes with every rank: returns every rank's, rank r's at
   * index r, each as long as {@code data}. What it throws fails the join.
   */
  byte[][] allGather(byte[] data) throws Exception;
}
