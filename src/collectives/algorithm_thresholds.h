// The sizes where one algorithm gives way to another (the rows of
// algorithm_table.cc apply by them), and the pipeline chunks.
//
// The point-to-point numbers are starting points from the algorithms' cost
// models (latency steps versus bytes moved per rank), to be tuned by
// measurement with dist-bench on the target machines, per rank count; the
// shared-memory ones were measured (bench/README.md).
#pragma once

#include <cstddef>

#include "collectives/collective_call.h"

namespace dist {

// All-reduce messages up to this size use recursive doubling: log2(n) steps,
// each moving the whole message; latency dominates.
inline constexpr size_t kRecursiveDoublingMaxBytes = 16 * 1024;
// Up to this size Rabenseifner (log2(n) steps each way, bandwidth-optimal for
// power-of-two n) beats the ring's 2(n-1) steps.
inline constexpr size_t kRabenseifnerMaxBytes = 1024 * 1024;
// With a rank count that is not a power of two, Rabenseifner first folds the
// extra ranks in with a whole-message transfer, so the ring wins earlier.
inline constexpr size_t kRabenseifnerFoldedMaxBytes = 256 * 1024;
// Broadcasts from this size (and with more than two ranks) scatter the message
// and all-gather it around a ring, so the root sends it about once instead of
// log2(n) times.
inline constexpr size_t kScatterAllGatherMinBytes = 512 * 1024;
// Pipeline chunk of the ring, tree and exchange algorithms: large enough to
// amortize a message's overhead, small enough that a handful of staging
// chunks stay in L2 (2 MiB per core here).
inline constexpr size_t kDefaultChunkBytes = 256 * 1024;
// The chunk where large payloads move by zero-copy rendezvous (UCX bulk
// endpoints over TCP): each chunk then costs a handshake round trip, which
// 1 MiB amortizes. 16 MiB all-reduce over UCX_TLS=tcp, 2 ranks: 2.96-3.26
// GB/s with 1 MiB chunks, 1.79-1.98 with 256 KiB (bench/README.md).
inline constexpr size_t kZeroCopyChunkBytes = 1024 * 1024;

// options.chunk_bytes, or kDefaultChunkBytes when it is 0.
inline size_t choose_chunk_bytes(const AlgorithmOptions& options) {
  return options.chunk_bytes == 0 ? kDefaultChunkBytes : options.chunk_bytes;
}

// Up to this many bytes per rank, every rank of a shared-memory group
// combines the whole message itself: one announcement per step instead of
// two, and the extra reads cost less than the second handshake. Above it, the
// split moves less memory.
inline constexpr size_t kShmDirectMaxBytes = 16 * 1024;

// Data that only moves (all-gather, all-to-all) is copied straight from the
// peers' buffers, when the group can (single_copy.h), for blocks of these
// sizes: one copy instead of two. Below, the system call and the second
// handshake cost more than the copy saved; with more ranks than cores, more
// so. Above kSingleCopyMaxBytes, the kernel's copy, whose writes pull every
// destination line into the cache first, loses to the slots' streamed writes
// for an all-gather (32 MiB blocks, 2 ranks: 7.4-9.0 ms against 7.4-7.7; on
// 2026-12-02, 9 interleaved pairs of dist-bench, single copy / slots: 32 MiB
// 1.11, 64 MiB 1.19). An all-to-all keeps the single copy at any block size
// with a core for every rank: there the slots cost a third copy (into the
// slot, out of it, and the own block), and single copy / slots was 0.84 at
// 24 MiB blocks, 0.82-0.86 at 32, 0.96-0.99 at 64, 0.91 at 128 (9 pairs each,
// two runs; 0.88-0.89 at 32 and 64 MiB in 7 pairs on 2026-12-01). With more
// ranks than cores that was not measured, and the bound stays.
// The least is where the slots stop being ahead in this machine's slow mode
// (cross-core round trips 3-4x longer, lines written by another core read at
// half speed: bench/modes/probe): 2 ranks, all-gathers and all-to-alls of 16
// KiB blocks took 2.7-3.0 us through the slots against 5-7 us read singly in
// the fast mode, and 6-7 us either way in the slow one; with 32 KiB blocks
// the slots were still ahead in the fast mode (5 against 8-10 us) but behind
// in the slow one (12-13 against 8-10), where the single copy keeps its time.
inline constexpr size_t kSingleCopyMinBlockBytes = 32 * 1024;
inline constexpr size_t kSingleCopyMinBytesSharedCores = 128 * 1024;
inline constexpr size_t kSingleCopyMaxBytes = 16 * 1024 * 1024;

// From these sizes a broadcast's root writes its chunks into its slot with
// ordinary or non-temporal stores, whichever its recent calls of the size
// found faster (shm/store_choice.h), because neither wins in both of this
// machine's modes. In the slow mode an ordinary store to
// a line the other core has just read runs at 4-6 GB/s (13-15 in the fast
// mode), a non-temporal one at 9-18 in both, and the readers then read from
// memory at 13-16 GB/s in both modes instead of 25-35 (fast) or 11-13 (slow)
// from the writer's cache. 2 ranks, interleaved, ten rounds (dist-bench):
// 64 KiB 5.2-6.9 us streamed, against 5.2-6.8 (fast) and 14-17 (slow)
// through plain slots and 8.5-12.6 for the single copy the root's buffer was
// read with before; 256 KiB 19-27 against 13-15 / 45-62 and 27-35; 1 MiB
// 76-105 against 54-58 / 180-223 and 97-149; 2 MiB 161-212 against 96-118 /
// 400-470 us; 16 MiB 1.7-2.9 against 1.7-2.0 / 3.7-4.1 ms. Below 64 KiB the
// streamed stores lose in the fast mode (32 KiB 3.0-4.1 against 1.6-3.2 us)
// and gain little in the slow one, so those keep ordinary stores.
inline constexpr size_t kChosenStoresMinBytes = 64 * 1024;

// From this size the split all-reduce's ranks copy their inputs into their
// slots with the stores their recent calls found faster, for the same
// reason: non-temporal copies in took 1 MiB 161-165 us against 107-111 in the
// fast mode, and 125-172 against 222-242 in the slow one (4 and 16 MiB the
// same trade); at 256 KiB a call is about 40 us, long enough for the trials.
inline constexpr size_t kChosenCopyInStoresMinBytes = 256 * 1024;

// The split all-reduce writes each reduced slice straight into the peers'
// results (shm_allreduce_split_write), when the group can, for messages of
// these sizes. Measured interleaved against the split through the slots, 2
// ranks (dist-bench): out of place 256 KiB 25-29 against 35-39 us, 4 MiB
// 598-640 against 690-720, 16 MiB 2.40-2.53 against 2.54-2.61 ms, 64 MiB
// 15.4-16.0 against 12.0-12.6 ms (the kernel's writes read each destination
// line first, from memory; the split streams its results); in place, where
// those lines were just read by their owner, 16 MiB 2.07-2.14 against
// 2.63-2.83 ms, 64 MiB 9.2-9.7 against 11.3-12.1, 128 MiB level. 128 KiB and
// below: level. With more ranks than cores the bounds are lower.
inline constexpr size_t kSplitWriteMinBytes = 256 * 1024;
// In place, from this size and with a core for every rank, each rank reads
// its slice of the peers' inputs and writes the result into theirs
// (shm_read_write): two handshakes per call instead of one per slot. 2 ranks,
// f32 in place (dist-bench, two interleaved runs): 64 KiB 18 against 24 us,
// 256 KiB 42-48 against 87-98, 1 MiB 151-161 against 336-373, 16 MiB 4.1
// against 4.7-5.9 ms, 64 MiB 16.0-16.7 against 24.7-28.6. Out of place it
// was not ahead (1 MiB 164-195 against 106-112 us), nor with 3 ranks on 2
// cores below 4 MiB.
inline constexpr size_t kReadWriteMinBytes = 64 * 1024;
inline constexpr size_t kSplitWriteMaxBytes = 16 * 1024 * 1024;
inline constexpr size_t kSplitWriteMaxBytesSharedCores = 4 * 1024 * 1024;
inline constexpr size_t kSplitWriteMaxBytesInPlace = 64 * 1024 * 1024;
inline constexpr size_t kSplitWriteMaxBytesInPlaceSharedCores = 16 * 1024 * 1024;

// The hierarchical path (collectives/hierarchical/): up to this size an
// all-reduce crosses between hosts through one rank per host (one message per
// host and step, the least latency); above it every local rank carries its
// share on its rail (all links and cores busy, the least time per byte).
// Measured on 2 emulated hosts x 2 ranks (bench/README.md, "Many hosts"),
// leaders' time over rails' in four interleaved runs: at 256 KiB 0.37-0.84 in
// every run, at 64 KiB 0.37-0.96 in three and 1.61 in one; from 1 MiB the runs
// disagree (0.30-1.93). The emulated hosts share two cores, which favours the
// fewer processes leaders keep busy: to be tuned again on real hosts.
inline constexpr size_t kHierarchicalLeadersMaxBytes = 256 * 1024;
// Broadcasts from this size split the message over the rails.
inline constexpr size_t kHierarchicalRailsMinBroadcastBytes = 256 * 1024;
}  // namespace dist
