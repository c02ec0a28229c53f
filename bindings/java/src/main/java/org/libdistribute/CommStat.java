package org.libdistribute;

/**
 * One row of {@link Comm#stats()}: the calls of one collective that ran on one path under one
 * algorithm (dist_comm_stat_t). The counters are unsigned 64-bit values.
 *
 * @param algorithm dist_comm_algorithm's name, or "self", "nccl", "staged"
 * @param calls the calls past their argument checks, failed ones included
 * @param bytes carried per rank: count times the element size (per block for all_gather and
 *     all_to_all, every block sent for all_to_all_v, none for a barrier)
 * @param timedCalls the calls {@code timeNs} covers: none while timing is off
 * @param timeNs their time on this rank, in nanoseconds
 */
public record CommStat(Collective collective, CommPath path, String algorithm, long calls, long failed, long bytes,
    long timedCalls, long timeNs) {
  static CommStat of(DistLibrary.CommStatStruct row) {
    return new CommStat(Collective.of(row.collective), CommPath.of(row.path), row.algorithm.getString(0, "UTF-8"),
        row.calls, row.failed, row.bytes, row.timed_calls, row.time_ns);
  }
}
