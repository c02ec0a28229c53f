// Where a communicator's ranks run: which of them share a host. Hosts are
// numbered in the order their first rank appears in communicator rank order,
// so every rank computes the same layout from the context's host identities.
// The hierarchical path and dist_comm_local_rank/size/num_hosts read it.
#pragma once

#include <string>
#include <vector>

namespace dist {

struct HostLayout {
  std::vector<int> host_of;                 // by communicator rank: its host's number
  std::vector<std::vector<int>> ranks_on;   // by host: its communicator ranks, ascending
  int local_rank = 0;                       // this rank's position among its host's ranks
  int local_size = 1;                       // ranks on this rank's host

  // `host_ids[r]` is communicator rank r's host identity.
  static HostLayout from_host_ids(const std::vector<std::string>& host_ids, int rank);

  int num_hosts() const { return static_cast<int>(ranks_on.size()); }
  // Every host has the same number of ranks.
  bool even() const;
  // More than one host, and more than one rank on some host.
  bool spans_hosts_with_neighbours() const;
};

}  // namespace dist
