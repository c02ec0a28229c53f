// Which algorithm runs a collective call, by kind, message size and rank count,
// and how large the pipeline chunks are.
//
// The numbers below are starting points from the algorithms' cost models
// (latency steps versus bytes moved per rank); they are to be tuned by
// measurement with dist-bench on the target machines, per rank count.
#pragma once

#include <cstddef>
#include <string>

#include "collectives/collective_call.h"
#include "collectives/signature.h"

namespace dist {

enum class Algorithm {
  kAllReduceRing,
  kAllReduceRabenseifner,
  kAllReduceRecursiveDoubling,
  kReduceBinomial,
  kBroadcastBinomial,
  kBroadcastScatterAllGather,
  kAllGatherRing,
  kReduceScatterRing,
  kAllToAllPairwise,
  kBarrierDissemination,
};

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

// The algorithm for `kind` moving `bytes` per rank (the size of `count`
// elements) among `ranks` ranks. options.all_reduce, when not empty, forces the
// all-reduce algorithm; an unknown name throws invalid-argument.
Algorithm choose_algorithm(CollectiveKind kind, size_t bytes, int ranks, const AlgorithmOptions& options);

// options.chunk_bytes, or kDefaultChunkBytes when it is 0.
size_t choose_chunk_bytes(const AlgorithmOptions& options);

// "ring", "rabenseifner", "recursive_doubling", "reduce_binomial", ...
const char* name(Algorithm algorithm);

}  // namespace dist
