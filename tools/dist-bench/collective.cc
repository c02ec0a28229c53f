#include "collective.h"

#include <algorithm>

#include "base/status.h"

namespace dist::bench {

namespace {

struct Named {
  const char* name;
  dist_collective_t id;
};

constexpr Named kCollectives[] = {
    {"all_reduce", DIST_COLLECTIVE_ALL_REDUCE},         {"reduce", DIST_COLLECTIVE_REDUCE},
    {"broadcast", DIST_COLLECTIVE_BROADCAST},           {"all_gather", DIST_COLLECTIVE_ALL_GATHER},
    {"reduce_scatter", DIST_COLLECTIVE_REDUCE_SCATTER}, {"all_to_all", DIST_COLLECTIVE_ALL_TO_ALL},
    {"barrier", DIST_COLLECTIVE_BARRIER},
};

dist_buffer_t buffer_of(void* data, uint64_t count, const Dtype& dtype, dist_memory_kind_t memory_kind,
                        void* stream) {
  dist_buffer_t b{};
  b.data = data;
  b.count = count;
  b.dtype = dtype.id;
  b.memory_kind = memory_kind;
  b.stream = stream;
  return b;
}

}  // namespace

dist_collective_t parse_collective(const std::string& name, const std::string& flag) {
  for (const Named& c : kCollectives) {
    if (name == c.name) return c.id;
  }
  fail_invalid(flag + ": " + quoted(name) + " is not a collective dist-bench times (" + collective_names() + ")");
}

const char* collective_name(dist_collective_t collective) {
  for (const Named& c : kCollectives) {
    if (collective == c.id) return c.name;
  }
  return "unknown";
}

std::string collective_names() {
  std::string names;
  for (const Named& c : kCollectives) names += (names.empty() ? "" : "|") + std::string(c.name);
  return names;
}

Layout layout_for(dist_collective_t collective, uint64_t bytes, const Dtype& dtype, int ranks) {
  Layout l;
  if (collective == DIST_COLLECTIVE_BARRIER) return l;
  const uint64_t n = static_cast<uint64_t>(ranks);
  const uint64_t elements = bytes / dtype.size;
  switch (collective) {
    case DIST_COLLECTIVE_ALL_REDUCE:
    case DIST_COLLECTIVE_REDUCE:
    case DIST_COLLECTIVE_BROADCAST:
      l.block = std::max<uint64_t>(elements, 1);
      l.send_count = l.recv_count = l.block;
      l.csv_bytes = l.block * dtype.size;
      break;
    default:  // the size spans n blocks
      l.block = std::max<uint64_t>(elements / n, 1);
      l.send_count = collective == DIST_COLLECTIVE_ALL_GATHER ? l.block : n * l.block;
      l.recv_count = collective == DIST_COLLECTIVE_REDUCE_SCATTER ? l.block : n * l.block;
      l.csv_bytes = n * l.block * dtype.size;
      break;
  }
  l.contribution_bytes = l.block * dtype.size;
  return l;
}

void check_status(dist_status_t status, const std::string& what) {
  if (status != DIST_OK) fail(static_cast<Status>(status), what + ": " + dist_last_error());
}

void call_collective(dist_comm_t* comm, dist_collective_t collective, const Dtype& dtype, const Layout& layout,
                     void* send, void* recv, dist_memory_kind_t memory_kind, void* stream) {
  const dist_buffer_t in = buffer_of(send, layout.send_count, dtype, memory_kind, stream);
  const dist_buffer_t out = buffer_of(recv, layout.recv_count, dtype, memory_kind, stream);
  dist_status_t status = DIST_OK;
  switch (collective) {
    case DIST_COLLECTIVE_ALL_REDUCE:
      status = dist_all_reduce(comm, layout.in_place ? nullptr : &in, &out, DIST_OP_SUM, nullptr);
      break;
    case DIST_COLLECTIVE_REDUCE: status = dist_reduce(comm, &in, &out, DIST_OP_SUM, kRoot, nullptr); break;
    case DIST_COLLECTIVE_BROADCAST: status = dist_broadcast(comm, &out, kRoot, nullptr); break;
    case DIST_COLLECTIVE_ALL_GATHER: status = dist_all_gather(comm, &in, &out, nullptr); break;
    case DIST_COLLECTIVE_REDUCE_SCATTER: status = dist_reduce_scatter(comm, &in, &out, DIST_OP_SUM, nullptr); break;
    case DIST_COLLECTIVE_ALL_TO_ALL: status = dist_all_to_all(comm, &in, &out, nullptr); break;
    default: status = dist_barrier(comm, nullptr); break;
  }
  check_status(status, collective_name(collective));
}

double bus_factor(dist_collective_t collective, int ranks) {
  // At one rank nothing crosses a bus: 0 for the collectives whose factor
  // has (n-1), as nccl-tests reports them (and bench/gpu/nccl_direct.c).
  if (ranks < 1) return 1.0;
  switch (collective) {
    case DIST_COLLECTIVE_ALL_REDUCE: return 2.0 * (ranks - 1) / ranks;
    case DIST_COLLECTIVE_ALL_GATHER:
    case DIST_COLLECTIVE_REDUCE_SCATTER:
    case DIST_COLLECTIVE_ALL_TO_ALL: return static_cast<double>(ranks - 1) / ranks;
    default: return 1.0;
  }
}

}  // namespace dist::bench
