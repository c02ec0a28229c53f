// The ranks that speak for their hosts in a rooted call: the root on its own
// host, local rank 0 on every other.
#pragma once

#include <vector>

#include "collectives/hierarchical/hierarchy.h"

namespace dist {

// Host k's representative for a call rooted at communicator rank `root`.
std::vector<int> representatives(const Hierarchy& h, int root);

}  // namespace dist
