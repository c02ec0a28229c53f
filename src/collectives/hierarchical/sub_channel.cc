#include "collectives/hierarchical/sub_channel.h"

#include <string>

#include "base/status.h"

namespace dist {

SubChannel::SubChannel(Channel& parent, std::vector<int> ranks) : parent_(parent), ranks_(std::move(ranks)) {
  for (size_t i = 0; i < ranks_.size(); ++i) {
    if (ranks_[i] < 0 || ranks_[i] >= parent.size()) {
      fail(Status::kInternal, "a channel view names rank " + std::to_string(ranks_[i]) + " of " +
                                  std::to_string(parent.size()));
    }
    if (ranks_[i] == parent.rank()) rank_ = static_cast<int>(i);
  }
  if (rank_ < 0) fail(Status::kInternal, "a channel view does not hold its own rank");
}

int SubChannel::parent_rank(int peer) const {
  if (peer < 0 || peer >= size()) {
    fail(Status::kInternal, "a channel view of " + std::to_string(size()) + " ranks has no rank " + std::to_string(peer));
  }
  return ranks_[static_cast<size_t>(peer)];
}

TransferId SubChannel::send(int peer, const void* data, size_t bytes) {
  return parent_.send(parent_rank(peer), data, bytes);
}

TransferId SubChannel::recv(int peer, void* data, size_t bytes) {
  return parent_.recv(parent_rank(peer), data, bytes);
}

}  // namespace dist
