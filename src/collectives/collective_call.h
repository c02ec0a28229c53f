// One collective call as the algorithms see it, and the options that steer
// which algorithm runs it (algorithm_table.h).
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "collectives/piecewise.h"
#include "collectives/signature.h"
#include "collectives/uneven_blocks.h"
#include "transport/channel.h"

namespace dist {

// Buffer shapes per kind (c = signature.count, n = communicator size):
//   all_reduce      send c, recv c          reduce        send c, recv c (root only)
//   broadcast       recv c (in place)       all_gather    send c, recv c*n
//   reduce_scatter  send c*n, recv c        all_to_all    send c*n, recv c*n (blocks of c)
//   barrier         none
//   all_to_all_v    send and recv as `blocks` says (signature.count is 0)
// send == recv means in place; for all_gather in place means the rank's own
// block already sits at recv + rank*c, and for reduce_scatter that the input is
// recv's c*n elements and the result lands in recv's first c elements.
// recv may be null on non-root ranks of reduce.
//
// A piecewise all-reduce (piecewise.h) sets `pieces` and `sink` instead of
// send and recv, and optionally `finish`; it runs only where
// Communicator::takes_pieces() says so.
// What a call whose input is still on its way (a device buffer being copied
// to the host on the caller's stream) waits for before its first transfer.
class InputGate {
 public:
  virtual ~InputGate() = default;
  // Returns once the input is in place; throws kTimeout at `deadline`.
  virtual void wait(std::chrono::steady_clock::time_point deadline) = 0;
};

struct CollectiveCall {
  CallSignature signature;
  const void* send = nullptr;
  void* recv = nullptr;
  const PieceList* pieces = nullptr;
  const ResultSink* sink = nullptr;
  const PartFinisher* finish = nullptr;
  std::shared_ptr<const UnevenBlocks> blocks{};  // all_to_all_v only
  InputGate* gate = nullptr;  // null: the input is in place when the call is made
};

// Which algorithm to use; empty means choose by size and rank count.
struct AlgorithmOptions {
  // A name the table forces the all-reduce by ("ring", "shm_direct", ...:
  // forced_all_reduce_names in algorithm_table.h), as DIST_ALLREDUCE_ALGO.
  std::string all_reduce;
  size_t chunk_bytes = 0;  // pipeline chunk for ring algorithms; 0 = default
};

}  // namespace dist
