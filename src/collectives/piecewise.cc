#include "collectives/piecewise.h"

#include <algorithm>

namespace dist {

PieceList::PieceList(const Piece* pieces, size_t n, size_t element_bytes)
    : pieces_(pieces), n_(n), element_bytes_(element_bytes) {
  if (n_ == 1) {
    total_ = pieces_[0].count;
    return;
  }
  starts_.reserve(n_);
  for (size_t i = 0; i < n_; ++i) {
    starts_.push_back(total_);
    total_ += pieces_[i].count;
  }
}

size_t PieceList::piece_holding(size_t first) const {
  if (n_ <= 1) return 0;
  // The last piece starting at or before `first`; empty pieces share their
  // start with the next one, and upper_bound steps past them.
  const auto after = std::upper_bound(starts_.begin(), starts_.end(), first);
  return static_cast<size_t>(after - starts_.begin()) - 1;
}

}  // namespace dist
