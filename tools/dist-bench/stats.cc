#include "stats.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <utility>
#include <vector>

#include "collective.h"

namespace dist::bench {

namespace {

const char* path_name(dist_comm_path_t path) {
  switch (path) {
    case DIST_COMM_PATH_SELF: return "self";
    case DIST_COMM_PATH_POINT_TO_POINT: return "point_to_point";
    case DIST_COMM_PATH_SHARED_MEMORY: return "shared_memory";
    case DIST_COMM_PATH_HIERARCHICAL: return "hierarchical";
    case DIST_COMM_PATH_NCCL: return "nccl";
    case DIST_COMM_PATH_STAGED: return "staged";
    default: return "unknown";
  }
}

const char* stat_collective_name(dist_collective_t collective) {
  return collective == DIST_COLLECTIVE_ALL_TO_ALL_V ? "all_to_all_v" : collective_name(collective);
}

}  // namespace

void start_stats(dist_comm_t* comm) {
  dist_comm_options_t options = DIST_COMM_OPTIONS_INIT;
  options.field_mask = DIST_COMM_OPT_TIMING;
  options.timing = 1;
  check_status(dist_comm_configure(comm, &options), "turning timing on (--stats)");
  check_status(dist_comm_stats_reset(comm), "comm_stats_reset");
}

std::vector<dist_comm_stat_t> stats_snapshot(const dist_comm_t* comm) {
  uint64_t count = 0;
  check_status(dist_comm_stats(comm, nullptr, 0, &count), "comm_stats");
  std::vector<dist_comm_stat_t> rows(count);
  check_status(dist_comm_stats(comm, rows.data(), rows.size(), &count), "comm_stats");
  rows.resize(count < rows.size() ? count : rows.size());
  return rows;
}

std::string algorithms_between(const std::vector<dist_comm_stat_t>& before, const std::vector<dist_comm_stat_t>& after,
                               dist_collective_t collective) {
  std::vector<std::pair<uint64_t, const char*>> carried;  // (bytes, algorithm)
  uint64_t total = 0;
  for (const dist_comm_stat_t& row : after) {
    if (row.collective != collective) continue;
    uint64_t bytes = row.bytes;
    for (const dist_comm_stat_t& earlier : before) {
      if (earlier.collective == row.collective && earlier.path == row.path &&
          std::strcmp(earlier.algorithm, row.algorithm) == 0) {
        bytes -= earlier.bytes;
      }
    }
    if (bytes == 0) continue;
    carried.emplace_back(bytes, row.algorithm);
    total += bytes;
  }
  std::stable_sort(carried.begin(), carried.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string names;
  for (const auto& [bytes, algorithm] : carried) {
    if (!names.empty() && bytes * 10 < total) break;
    names += (names.empty() ? "" : "+") + std::string(algorithm);
  }
  return names;
}

void print_stats(dist_comm_t* comm, uint64_t bytes) {
  const std::vector<dist_comm_stat_t> rows = stats_snapshot(comm);
  for (const dist_comm_stat_t& row : rows) {
    const double mean_us = row.timed_calls == 0 ? 0.0 : static_cast<double>(row.time_ns) / 1e3 / static_cast<double>(row.timed_calls);
    std::fprintf(stderr, "stats size=%llu %s %s %s calls=%llu failed=%llu bytes=%llu mean_us=%.3f\n",
                 static_cast<unsigned long long>(bytes), stat_collective_name(row.collective), path_name(row.path),
                 row.algorithm, static_cast<unsigned long long>(row.calls), static_cast<unsigned long long>(row.failed),
                 static_cast<unsigned long long>(row.bytes), mean_us);
  }
  check_status(dist_comm_stats_reset(comm), "comm_stats_reset");
}

}  // namespace dist::bench
