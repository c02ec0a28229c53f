#include "collectives/host_layout.h"

#include <map>

namespace dist {

HostLayout HostLayout::from_host_ids(const std::vector<std::string>& host_ids, int rank) {
  HostLayout layout;
  std::map<std::string, int> number;
  for (size_t r = 0; r < host_ids.size(); ++r) {
    auto found = number.emplace(host_ids[r], static_cast<int>(layout.ranks_on.size()));
    if (found.second) layout.ranks_on.emplace_back();
    const int host = found.first->second;
    layout.host_of.push_back(host);
    if (static_cast<int>(r) == rank) layout.local_rank = static_cast<int>(layout.ranks_on[static_cast<size_t>(host)].size());
    layout.ranks_on[static_cast<size_t>(host)].push_back(static_cast<int>(r));
  }
  if (rank >= 0 && static_cast<size_t>(rank) < host_ids.size()) {
    layout.local_size = static_cast<int>(layout.ranks_on[static_cast<size_t>(layout.host_of[static_cast<size_t>(rank)])].size());
  }
  return layout;
}

bool HostLayout::even() const {
  for (const auto& ranks : ranks_on) {
    if (ranks.size() != ranks_on.front().size()) return false;
  }
  return true;
}

bool HostLayout::spans_hosts_with_neighbours() const {
  if (ranks_on.size() < 2) return false;
  for (const auto& ranks : ranks_on) {
    if (ranks.size() > 1) return true;
  }
  return false;
}

}  // namespace dist
