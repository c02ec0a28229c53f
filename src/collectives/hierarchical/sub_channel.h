// A view of a channel restricted to some of its ranks: view rank i is parent
// rank ranks[i]. It is the same channel underneath (same communicator id,
// tags, call sequence and failure state), so a call may run part of its work
// between a subset of the ranks (the hierarchical path's rails and leaders)
// without a communicator of its own, and a peer lost anywhere fails the
// whole communicator. begin() and end() are the parent's: a view's phase of a
// call brackets its transfers as a whole call would.
#pragma once

#include <vector>

#include "transport/channel.h"

namespace dist {

class SubChannel : public Channel {
 public:
  // `ranks` must hold parent.rank(), each parent rank at most once.
  SubChannel(Channel& parent, std::vector<int> ranks);

  int rank() const override { return rank_; }
  int size() const override { return static_cast<int>(ranks_.size()); }
  void begin(const CallWords& call, uint64_t seq, Deadline deadline) override { parent_.begin(call, seq, deadline); }
  void end() override { parent_.end(); }
  TransferId send(int peer, const void* data, size_t bytes) override;
  TransferId recv(int peer, void* data, size_t bytes) override;
  void wait(TransferId id) override { parent_.wait(id); }
  bool test(TransferId id) override { return parent_.test(id); }
  void progress() override { parent_.progress(); }

 private:
  int parent_rank(int peer) const;

  Channel& parent_;
  std::vector<int> ranks_;
  int rank_ = -1;
};

}  // namespace dist
