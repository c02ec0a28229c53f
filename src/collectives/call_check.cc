// check_call: the local checks of one collective call, shared by every path
// (point-to-point algorithms and the shared-memory path).
#include "collectives/call_check.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

#include "base/status.h"

namespace dist {
namespace {

bool has_root(CollectiveKind kind) { return kind == CollectiveKind::kReduce || kind == CollectiveKind::kBroadcast; }

// The buffers one rank passes, in elements; 0 where a buffer is not used.
struct BufferShape {
  size_t send_elements = 0;
  size_t recv_elements = 0;
};

class CallCheck {
 public:
  CallCheck(int ranks, int rank, const CollectiveCall& call)
      : call_(call), ranks_(ranks), rank_(rank) {}

  // What the C layer guarantees: a sane communicator, dtype, op and root.
  // Failing here is a bug in the caller, hence kInternal.
  void check_arguments() const {
    const CallSignature& s = call_.signature;
    if (ranks_ < 1 || rank_ < 0 || rank_ >= ranks_) {
      internal("rank " + std::to_string(rank_) + " of " + std::to_string(ranks_) + " is not a valid position");
    }
    const int32_t kind = static_cast<int32_t>(s.kind);
    if (kind < 0 || (kind > static_cast<int32_t>(CollectiveKind::kSplit) && s.kind != CollectiveKind::kAllToAllV)) {
      internal("collective kind " + std::to_string(kind) + " is not valid");
    }
    if (s.kind == CollectiveKind::kBarrier) return;
    const int32_t dtype = static_cast<int32_t>(s.dtype);
    if (dtype < 0 || dtype >= kDTypeCount) internal("dtype " + std::to_string(dtype) + " is not valid");
    const int32_t op = static_cast<int32_t>(s.op);
    if (reduces(s.kind) && (op < 0 || op >= kReduceOpCount)) internal("op " + std::to_string(op) + " is not valid");
    if (has_root(s.kind) ? s.root < 0 || s.root >= ranks_ : s.root != -1) {
      internal("root " + std::to_string(s.root) + " is not valid for " + std::to_string(ranks_) + " ranks");
    }
  }

  BufferShape shape() const {
    const CallSignature& s = call_.signature;
    const size_t count = static_cast<size_t>(s.count);
    const size_t all_ranks = times_ranks(count);
    BufferShape shape;
    switch (s.kind) {
      case CollectiveKind::kAllReduce:
        shape = {count, count};
        break;
      case CollectiveKind::kReduce:
        shape = {count, rank_ == s.root ? count : 0};
        break;
      case CollectiveKind::kBroadcast:
        shape = {0, count};
        break;
      case CollectiveKind::kAllGather:
      case CollectiveKind::kSplit:
      case CollectiveKind::kCommSetup:
        shape = {count, all_ranks};
        break;
      case CollectiveKind::kReduceScatter:
        // In place the input is recv's n*count elements.
        shape = {all_ranks, in_place() ? all_ranks : count};
        break;
      case CollectiveKind::kAllToAll:
        shape = {all_ranks, all_ranks};
        break;
      case CollectiveKind::kAllToAllV:
        shape = uneven_shape();
        break;
      case CollectiveKind::kBarrier:
        break;
    }
    // Every byte count must be representable too.
    bytes_of(shape.send_elements);
    bytes_of(shape.recv_elements);
    return shape;
  }

  void check_buffers(const BufferShape& shape) const {
    const size_t element = size_of(call_.signature.dtype);
    check_buffer("send", call_.send, shape.send_elements, element);
    check_buffer("recv", call_.recv, shape.recv_elements, element);
    if (shape.send_elements == 0 || shape.recv_elements == 0 || in_place()) return;
    const auto send = reinterpret_cast<uintptr_t>(call_.send);
    const auto recv = reinterpret_cast<uintptr_t>(call_.recv);
    const size_t send_bytes = shape.send_elements * element;
    const size_t recv_bytes = shape.recv_elements * element;
    if (send < recv + recv_bytes && recv < send + send_bytes) {
      fail_invalid(text() + ": the send buffer (" + std::to_string(send_bytes) + " bytes) and the recv buffer (" +
                   std::to_string(recv_bytes) +
                   " bytes) overlap; pass the same pointer for both to run in place");
    }
  }

  // A piecewise all-reduce: pieces and sink instead of send and recv, the
  // pieces' elements as many as the signature's count, each present and aligned.
  void check_pieces() const {
    const CallSignature& s = call_.signature;
    if (s.kind != CollectiveKind::kAllReduce) internal("pieces are for all_reduce only");
    if (call_.sink == nullptr || call_.send != nullptr || call_.recv != nullptr) {
      internal("a piecewise call takes a sink and no send or recv buffer");
    }
    const PieceList& pieces = *call_.pieces;
    if (pieces.count() != static_cast<size_t>(s.count)) {
      internal("its pieces hold " + std::to_string(pieces.count()) + " elements");
    }
    const size_t element = size_of(s.dtype);
    for (size_t i = 0; i < pieces.size(); ++i) {
      const std::string which = "piece " + std::to_string(i);
      bytes_of(pieces.piece(i).count);
      check_buffer(which.c_str(), pieces.piece(i).data, pieces.piece(i).count, element);
    }
  }

  // All-to-all-v: the elements up to the end of the furthest block of each
  // side (make_uneven_blocks kept every block inside its buffer).
  BufferShape uneven_shape() const {
    if (call_.blocks == nullptr || call_.blocks->send_counts.size() != static_cast<size_t>(ranks_) ||
        call_.blocks->recv_counts.size() != static_cast<size_t>(ranks_)) {
      internal("its blocks are not given for every rank");
    }
    if (call_.send == call_.recv && call_.send != nullptr) {
      fail_invalid(text() + ": send and recv are the same buffer; all_to_all_v has no in-place form");
    }
    const UnevenBlocks& b = *call_.blocks;
    BufferShape shape;
    auto extend = [](size_t* elements, uint64_t offset, uint64_t count) {
      if (count > 0) *elements = std::max<size_t>(*elements, static_cast<size_t>(offset + count));
    };
    for (size_t j = 0; j < b.send_counts.size(); ++j) {
      extend(&shape.send_elements, b.send_offsets[j], b.send_counts[j]);
      extend(&shape.recv_elements, b.recv_offsets[j], b.recv_counts[j]);
    }
    return shape;
  }

  // send == recv; for all_gather also send == recv + rank*count (the own block).
  bool in_place() const {
    if (call_.send == call_.recv) return true;
    const CallSignature& s = call_.signature;
    if (s.kind != CollectiveKind::kAllGather && s.kind != CollectiveKind::kSplit) return false;
    if (call_.recv == nullptr) return false;
    const size_t own_block = static_cast<size_t>(s.count) * static_cast<size_t>(rank_) * size_of(s.dtype);
    return call_.send == static_cast<const unsigned char*>(call_.recv) + own_block;
  }

 private:
  [[noreturn]] void internal(const std::string& what) const {
    fail(Status::kInternal, "run_collective: " + text() + ": " + what + " (the caller must check this)");
  }

  // Overflow is found by the multiplication itself, not by a division: a
  // 64-bit division costs tens of cycles, several of them an 8-byte call's
  // whole budget.
  size_t times_ranks(size_t count) const {
    size_t all = 0;
    if (__builtin_mul_overflow(count, static_cast<size_t>(ranks_), &all)) {
      fail_invalid(text() + ": count " + std::to_string(count) + " times " + std::to_string(ranks_) +
                   " ranks overflows the address space");
    }
    return all;
  }

  size_t bytes_of(size_t elements) const {
    size_t bytes = 0;
    if (__builtin_mul_overflow(elements, size_of(call_.signature.dtype), &bytes)) {
      fail_invalid(text() + ": " + std::to_string(elements) + " elements of " + name(call_.signature.dtype) +
                   " overflow the address space");
    }
    return bytes;
  }

  // `element` is a power of two (every dtype's size is).
  void check_buffer(const char* which, const void* buffer, size_t elements, size_t element) const {
    if (elements == 0) return;
    if (buffer == nullptr) internal(std::string(which) + " buffer is null");
    if ((reinterpret_cast<uintptr_t>(buffer) & (element - 1)) != 0) {
      fail_invalid(text() + ": the " + which + " buffer is not aligned to " + std::to_string(element) +
                   " bytes, as " + name(call_.signature.dtype) + " elements must be");
    }
  }

  // Only built for a message: the checks run on every call's fast path.
  std::string text() const { return describe(call_.signature); }

  const CollectiveCall& call_;
  const int ranks_;
  const int rank_;
};

}  // namespace

bool reduces(CollectiveKind kind) {
  return kind == CollectiveKind::kAllReduce || kind == CollectiveKind::kReduce ||
         kind == CollectiveKind::kReduceScatter;
}

void check_call(int ranks, int rank, const CollectiveCall& call) {
  const CallCheck check(ranks, rank, call);
  check.check_arguments();
  if (call.signature.kind == CollectiveKind::kBarrier) return;
  if (call.pieces != nullptr) {
    check.check_pieces();
    return;
  }
  if (call.finish != nullptr) {
    fail(Status::kInternal, "run_collective: a finisher is only for a piecewise all-reduce");
  }
  check.check_buffers(check.shape());
}

}  // namespace dist
