#include "topology/thread_binding.h"

#include <pthread.h>
#include <sched.h>

#include <climits>
#include <cstring>
#include <memory>
#include <string>

#include "base/status.h"

#ifdef DIST_HAVE_HWLOC
#include <hwloc.h>
#endif

namespace dist {

#ifdef DIST_HAVE_HWLOC
namespace {

struct TopologyCloser {
  void operator()(hwloc_topology_t topology) const { hwloc_topology_destroy(topology); }
};
using Topology = std::unique_ptr<std::remove_pointer_t<hwloc_topology_t>, TopologyCloser>;

std::vector<unsigned> pus_of(hwloc_const_bitmap_t set) {
  std::vector<unsigned> pus;
  int index = -1;
  while ((index = hwloc_bitmap_next(set, index)) != -1) pus.push_back(static_cast<unsigned>(index));
  return pus;
}

}  // namespace

std::vector<std::vector<unsigned>> spread_threads(int count) {
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) fail(Status::kSystem, "hwloc_topology_init failed");
  Topology topology(raw);
  if (hwloc_topology_load(raw) != 0) fail(Status::kSystem, "hwloc_topology_load failed");
  hwloc_obj_t root = hwloc_get_root_obj(raw);
  // hwloc_distrib allocates the sets it fills in; they are freed here, also
  // when it fails partway (hwloc_bitmap_free ignores the NULL ones).
  std::vector<hwloc_bitmap_t> sets(static_cast<size_t>(count), nullptr);
  const int failed = hwloc_distrib(raw, &root, 1, sets.data(), static_cast<unsigned>(count), INT_MAX, 0);
  std::vector<std::vector<unsigned>> out;
  for (auto& set : sets) {
    if (failed == 0 && set != nullptr) {
      // One PU of the set: the thread then stays on one core instead of moving.
      hwloc_bitmap_singlify(set);
      out.push_back(pus_of(set));
    }
    hwloc_bitmap_free(set);
  }
  if (failed != 0 || out.size() != sets.size()) {
    fail(Status::kSystem, "hwloc_distrib failed to spread " + std::to_string(count) + " threads");
  }
  return out;
}
#else
std::vector<std::vector<unsigned>> spread_threads(int) {
  fail(Status::kUnsupported, "binding replica threads needs hwloc, which this build does not include");
}
#endif

void bind_current_thread(const std::vector<unsigned>& pus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (unsigned pu : pus) {
    if (pu < CPU_SETSIZE) CPU_SET(pu, &set);
  }
  const int error = pthread_setaffinity_np(pthread_self(), sizeof set, &set);
  if (error != 0) fail(Status::kSystem, std::string("pthread_setaffinity_np: ") + std::strerror(error));
}

}  // namespace dist
