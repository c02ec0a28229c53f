#include "collectives/hierarchical/hierarchy.h"

#include <algorithm>

#include "base/status.h"
#include "collectives/channel_exchange.h"
#include "collectives/run_collective.h"
#include "collectives/shm/attach.h"

namespace dist {

Hierarchy::Hierarchy(Channel& whole, HostLayout layout, std::unique_ptr<ShmGroup> host_group)
    : whole_(whole), layout_(std::move(layout)), host_group_(std::move(host_group)) {
  if (layout_.even()) {
    std::vector<int> rail;
    for (const auto& ranks : layout_.ranks_on) rail.push_back(ranks[static_cast<size_t>(local_rank())]);
    rail_ = std::make_unique<SubChannel>(whole_, std::move(rail));
  }
  if (local_rank() == 0) {
    std::vector<int> leaders;
    for (const auto& ranks : layout_.ranks_on) leaders.push_back(ranks.front());
    leaders_ = std::make_unique<SubChannel>(whole_, std::move(leaders));
  }
}

int Hierarchy::local_rank_of(int rank) const {
  const auto& ranks = layout_.ranks_on[static_cast<size_t>(layout_.host_of[static_cast<size_t>(rank)])];
  return static_cast<int>(std::find(ranks.begin(), ranks.end(), rank) - ranks.begin());
}

Channel& Hierarchy::rail() {
  if (rail_ == nullptr) fail(Status::kInternal, "the hosts hold different numbers of ranks: there are no rails");
  return *rail_;
}

void Hierarchy::begin(const CallSignature& signature, uint64_t seq, std::chrono::milliseconds timeout,
                      const AlgorithmOptions& options) {
  signature_ = signature;
  words_ = call_words(signature);
  seq_ = seq;
  timeout_ = timeout;
  deadline_ = std::chrono::steady_clock::now() + timeout;
  options_ = &options;
}

void Hierarchy::across(Channel& view, const CollectiveCall& part) {
  view.begin(words_, seq_, deadline_);
  run_collective(view, part, *options_, ForcedAllReduce{});
  view.end();
}

CollectiveCall part_call(const CallSignature& whole, CollectiveKind kind, size_t count, const void* send, void* recv,
                         ReduceOp op, int root) {
  CollectiveCall part;
  part.signature.kind = kind;
  part.signature.dtype = whole.dtype;
  part.signature.op = op;
  part.signature.root = root;
  part.signature.count = count;
  part.send = send;
  part.recv = recv;
  return part;
}

std::unique_ptr<Hierarchy> attach_hierarchy(Channel& channel, const HostLayout& layout, uint64_t& next_seq,
                                            Deadline deadline, const std::vector<std::string>& names,
                                            std::shared_ptr<FailureFlag> failure) {
  // The same numbers on every rank, whatever each host's attach took.
  const uint64_t first = next_seq;
  next_seq += 3;
  uint8_t ready = shared_memory_wanted() ? 1 : 0;
  std::unique_ptr<ShmGroup> group;
  const std::vector<int>& neighbours = layout.ranks_on[static_cast<size_t>(layout.host_of[static_cast<size_t>(channel.rank())])];
  if (neighbours.size() > 1) {
    SubChannel host_view(channel, neighbours);
    std::vector<std::string> host_names;
    for (int r : neighbours) host_names.push_back(names[static_cast<size_t>(r)]);
    uint64_t seq = first;
    group = attach_shared_memory(host_view, seq, deadline, host_names, failure);
    ready = ready && group != nullptr ? 1 : 0;
  }
  std::vector<uint8_t> all(static_cast<size_t>(channel.size()));
  exchange_with_all(channel, CollectiveKind::kCommSetup, first + 2, deadline, &ready, sizeof ready, all.data());
  for (uint8_t r : all) {
    if (r != 1) return nullptr;
  }
  return std::make_unique<Hierarchy>(channel, layout, std::move(group));
}

}  // namespace dist
