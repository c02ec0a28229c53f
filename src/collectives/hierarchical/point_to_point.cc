#include "collectives/hierarchical/algorithms.h"

namespace dist {

void hier_point_to_point(Hierarchy& h, const CollectiveCall& call) { h.across(h.whole(), call); }

}  // namespace dist
