#include "collectives/hierarchical/representatives.h"

namespace dist {

std::vector<int> representatives(const Hierarchy& h, int root) {
  const int root_host = h.layout().host_of[static_cast<size_t>(root)];
  std::vector<int> ranks;
  for (int k = 0; k < h.num_hosts(); ++k) {
    ranks.push_back(k == root_host ? root : h.layout().ranks_on[static_cast<size_t>(k)].front());
  }
  return ranks;
}

}  // namespace dist
