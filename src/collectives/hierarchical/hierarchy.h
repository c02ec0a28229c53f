// The hierarchical path (Path::kHierarchical): a communicator that spans
// several hosts with several ranks on some. The ranks of each host share a
// segment (a ShmGroup over the host's ranks; a host with one rank has none),
// and the hosts exchange UCX messages over views of the communicator's
// channel (sub_channel.h): with the same number of ranks on every host, rail
// k is the ranks with local rank k on every host, so every local rank carries
// its share of the traffic between hosts; the leaders are local rank 0 of
// every host.
//
// One call runs in phases, each on the host's group or on a view. Every
// phase carries the call's own sequence number and signature: the group
// compares the signature among the host's ranks at each phase's first step,
// and every message between hosts carries the call's words in its header, so
// ranks that disagree about the call fail with kMismatch naming their calls,
// whichever phase meets the disagreement first.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "collectives/collective_call.h"
#include "collectives/hierarchical/sub_channel.h"
#include "collectives/host_layout.h"
#include "collectives/shm/group.h"
#include "transport/failure_flag.h"

namespace dist {

class Hierarchy {
 public:
  // `host_group`: the group of this rank's host; null when it is alone there.
  Hierarchy(Channel& whole, HostLayout layout, std::unique_ptr<ShmGroup> host_group);

  int size() const { return whole_.size(); }
  int rank() const { return whole_.rank(); }
  const HostLayout& layout() const { return layout_; }
  int num_hosts() const { return layout_.num_hosts(); }
  int host() const { return layout_.host_of[static_cast<size_t>(rank())]; }
  int local_rank() const { return layout_.local_rank; }
  int local_size() const { return layout_.local_size; }
  // Communicator rank `rank`'s position among its host's ranks.
  int local_rank_of(int rank) const;
  // Every host has the same number of ranks: the rails exist.
  bool even() const { return layout_.even(); }

  ShmGroup* host_group() { return host_group_.get(); }
  const ShmGroup* host_group() const { return host_group_.get(); }
  Channel& whole() { return whole_; }
  // Rank k of the rail is this rank's counterpart on host k. Even layouts only.
  Channel& rail();
  // Rank k is local rank 0 of host k; null unless this rank is one of them.
  Channel* leaders() { return leaders_.get(); }

  // Starts a call: its phases carry `signature` and `seq`; each phase between
  // hosts ends by the call's deadline, `timeout` from now, and each phase on
  // the host's group `timeout` after it first has to wait.
  void begin(const CallSignature& signature, uint64_t seq, std::chrono::milliseconds timeout,
             const AlgorithmOptions& options);

  // A phase on this host's group: runs phase(group) after starting the group
  // on the call; nothing when this rank is alone on its host.
  template <typename Phase>
  void in_host(Phase&& phase) {
    if (host_group_ == nullptr) return;
    host_group_->begin(signature_, seq_, timeout_);
    phase(*host_group_);
  }
  // A phase between hosts: runs `part` over `view` by the point-to-point
  // table (run_collective), its messages carrying the whole call's words.
  void across(Channel& view, const CollectiveCall& part);
  // The same for an algorithm's own transfers: phase(view) posts and waits
  // for them between the view's begin and end.
  template <typename Phase>
  void across_with(Channel& view, Phase&& phase) {
    view.begin(words_, seq_, deadline_);
    phase(view);
    view.end();
  }
  // The call's algorithm options (the pipeline chunk).
  const AlgorithmOptions& options() const { return *options_; }

 private:
  Channel& whole_;
  HostLayout layout_;
  std::unique_ptr<ShmGroup> host_group_;
  std::unique_ptr<SubChannel> rail_;     // null for uneven layouts
  std::unique_ptr<SubChannel> leaders_;  // null unless a leader
  CallSignature signature_;
  CallWords words_;
  uint64_t seq_ = 0;
  std::chrono::milliseconds timeout_{0};
  Deadline deadline_{};
  const AlgorithmOptions* options_ = nullptr;
};

// The part of a call that one phase runs: `kind` over `count` elements of the
// call's dtype, combining by `op`, from `send` into `recv`.
CollectiveCall part_call(const CallSignature& whole, CollectiveKind kind, size_t count, const void* send, void* recv,
                         ReduceOp op, int root = -1);

// The op a phase combines by: SUM for MEAN, whose division by the
// communicator's size happens once, at the end.
inline ReduceOp combining_op(ReduceOp op) { return op == ReduceOp::MEAN ? ReduceOp::SUM : op; }

// Decides, with all ranks of a new communicator over `channel` whose ranks lie
// as `layout` says, whether it takes the hierarchical path: each host's ranks
// attach a segment over a view of the channel (shm/attach.h), then all ranks
// tell each other whether that worked and whether they want shared memory at
// all. Null when any of them did not. Takes three sequence numbers from
// `next_seq` on every rank; throws what the channel throws.
std::unique_ptr<Hierarchy> attach_hierarchy(Channel& channel, const HostLayout& layout, uint64_t& next_seq,
                                            Deadline deadline, const std::vector<std::string>& names,
                                            std::shared_ptr<FailureFlag> failure);

}  // namespace dist
