#include "collectives/deterministic.h"

#include <cstring>
#include <vector>

#include "base/dtype.h"
#include "base/status.h"
#include "collectives/reduce_kernels.h"

namespace dist {

namespace {

// A data-movement part of `whole` (marked with its memory kind, as the
// staged path marks its host calls, so that the ranks' kinds of call still meet).
CollectiveCall movement(const CollectiveCall& whole, CollectiveKind kind, uint64_t count, const void* send, void* recv) {
  CollectiveCall call;
  call.signature.kind = kind;
  call.signature.dtype = whole.signature.dtype;
  call.signature.memory = whole.signature.memory;
  call.signature.count = count;
  call.send = send;
  call.recv = recv;
  return call;
}

// Every rank's part of this rank's block, in rank order, combined into `out`
// (`parts`: n blocks of `block` elements), and a MEAN divided.
void combine_in_rank_order(void* out, const unsigned char* parts, int n, uint64_t block, DType dtype, ReduceOp op) {
  const size_t bytes = static_cast<size_t>(block) * size_of(dtype);
  std::vector<const void*> inputs(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) inputs[static_cast<size_t>(r)] = parts + static_cast<size_t>(r) * bytes;
  const ReduceOp combine = op == ReduceOp::MEAN ? ReduceOp::SUM : op;
  reduce_many(out, inputs.data(), inputs.size(), static_cast<size_t>(block), dtype, combine);
  if (op == ReduceOp::MEAN) finalize_mean(out, static_cast<size_t>(block), dtype, n);
}

}  // namespace

bool needs_fixed_order(const CallSignature& s) {
  if (!is_floating(s.dtype)) return false;
  if (s.op != ReduceOp::SUM && s.op != ReduceOp::PROD && s.op != ReduceOp::MEAN) return false;
  return s.kind == CollectiveKind::kAllReduce || s.kind == CollectiveKind::kReduce ||
         s.kind == CollectiveKind::kReduceScatter;
}

void run_in_fixed_order(const CollectiveCall& call, int rank, int n,
                        const std::function<void(const CollectiveCall&)>& move) {
  const CallSignature& s = call.signature;
  const size_t element = size_of(s.dtype);
  const uint64_t count = s.count;
  if (s.kind == CollectiveKind::kReduceScatter) {
    // The input is already n blocks of `count`: block r goes to rank r.
    std::vector<unsigned char> parts(static_cast<size_t>(count) * n * element);
    const void* input = call.send != nullptr ? call.send : call.recv;
    move(movement(call, CollectiveKind::kAllToAll, count, input, parts.data()));
    combine_in_rank_order(call.recv, parts.data(), n, count, s.dtype, s.op);
    return;
  }
  // all_reduce and reduce: n blocks of ceil(count / n), the last ones padded.
  const uint64_t block = (count + static_cast<uint64_t>(n) - 1) / static_cast<uint64_t>(n);
  const size_t padded = static_cast<size_t>(block) * static_cast<size_t>(n) * element;
  const void* input = call.send != nullptr ? call.send : call.recv;
  std::vector<unsigned char> scattered, parts(padded), gathered;
  const void* blocks = input;
  if (block * static_cast<uint64_t>(n) != count) {
    scattered.assign(padded, 0);  // zeros never reach a result: the padding is cut off
    std::memcpy(scattered.data(), input, static_cast<size_t>(count) * element);
    blocks = scattered.data();
  }
  move(movement(call, CollectiveKind::kAllToAll, block, blocks, parts.data()));
  std::vector<unsigned char> mine(static_cast<size_t>(block) * element);
  combine_in_rank_order(mine.data(), parts.data(), n, block, s.dtype, s.op);
  // The blocks round: straight into the result when it holds them all.
  const bool into_result = s.kind == CollectiveKind::kAllReduce && block * static_cast<uint64_t>(n) == count;
  if (!into_result) gathered.resize(padded);
  void* all = into_result ? call.recv : gathered.data();
  move(movement(call, CollectiveKind::kAllGather, block, mine.data(), all));
  if (into_result) return;
  if (s.kind == CollectiveKind::kAllReduce || rank == s.root) {
    std::memcpy(call.recv, gathered.data(), static_cast<size_t>(count) * element);
  }
}

}  // namespace dist
