// A piecewise all-reduce: the input is many buffers taken one after another
// (the gradients of a model), and the result is handed over part by part as
// each part is finished, instead of being written to one output buffer.
//
// Fusing a model's tensors this way costs one collective call and no packing
// copy; handing over each finished part while it is still in cache lets the
// receiver (an optimizer) consume it without another pass over memory.
// Collectives know nothing of what the receiver does.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "base/function_ref.h"

namespace dist {

// One input buffer of `count` elements.
struct Piece {
  const void* data = nullptr;
  size_t count = 0;
};

// The pieces of one call, addressed as one sequence of count() elements.
class PieceList {
 public:
  PieceList(const Piece* pieces, size_t n, size_t element_bytes);

  size_t count() const { return total_; }
  size_t size() const { return n_; }
  size_t element_bytes() const { return element_bytes_; }
  const Piece& piece(size_t i) const { return pieces_[i]; }

  // Calls fn(piece, offset, at, elements) for the parts of elements [first,
  // first + count) that lie in one piece each, in order: elements [offset,
  // offset + elements) of piece `piece`, at position `at` relative to `first`.
  // Empty pieces have no parts.
  template <typename Fn>
  void for_each_span(size_t first, size_t count, Fn&& fn) const {
    size_t i = piece_holding(first);
    size_t at = 0;
    while (at < count) {
      const size_t offset = first + at - start(i);
      const size_t elements = std::min(count - at, pieces_[i].count - offset);
      if (elements > 0) fn(i, offset, at, elements);
      at += elements;
      ++i;
    }
  }

  // The same with the part's first element instead: fn(data, at, elements).
  template <typename Fn>
  void for_each_part(size_t first, size_t count, Fn&& fn) const {
    for_each_span(first, count, [&](size_t i, size_t offset, size_t at, size_t elements) {
      fn(static_cast<const unsigned char*>(pieces_[i].data) + offset * element_bytes_, at, elements);
    });
  }

 private:
  size_t start(size_t i) const { return n_ == 1 ? 0 : starts_[i]; }
  // The piece holding element `first` (< count()), skipping empty pieces.
  size_t piece_holding(size_t first) const;

  const Piece* pieces_;
  size_t n_;
  size_t element_bytes_;
  size_t total_ = 0;
  std::vector<size_t> starts_;  // first element of each piece; empty for one piece
};

// The callables of a piecewise call are FunctionRefs: handing one over never
// allocates; each must outlive the collective call. A part is elements
// [first, first + count) of the result, and `data` is valid only during the
// call that receives it.

// Receives each finished part of the result.
using ResultSink = FunctionRef<void(size_t first, const void* data, size_t count)>;

// The inputs of one part on the rank that reduces it: `size` buffers (1 to
// kMaxPartInputs) of the part's elements whose element-wise SUM, added in this
// order, is the reduced part: the ranks' inputs in rank order, or, with more
// ranks than that, one buffer already reduced. A finisher adds up so few
// inputs in its own pass; the reduction kernels vectorize any count.
inline constexpr size_t kMaxPartInputs = 2;
struct PartInputs {
  const void* const* buffers = nullptr;
  size_t size = 0;
};

// Optional, for a SUM: called on the one rank that reduces a part, instead of
// reducing it, before any other rank sees it. It reads the part from `inputs`
// and writes into `out` (shared memory, not aliasing the inputs unless
// inputs.size is 1) what the other ranks' sinks receive; that rank's own sink
// is not called for the part. An optimizer uses it to add up the gradients,
// update each weight once, on one worker, and hand the new weights to the
// others, all in one pass, without the sum ever being written.
using PartFinisher = FunctionRef<void(size_t first, const PartInputs& inputs, void* out, size_t count)>;

}  // namespace dist
