// The shared-memory collectives with their ranks as threads of one test
// process, each with its own ShmGroup over one real segment: for the C++
// suites that call the shm algorithms directly (test_shm_*.cc).
#pragma once

#include <unistd.h>

#include <exception>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "collectives/shm/group.h"
#include "collectives/shm/segment.h"
#include "internal_test_support.h"
#include "transport/failure_flag.h"

// The segments of one group of `n` ranks as threads: rank 0's created, the
// others opened, the name removed at once.
inline std::vector<dist::ShmSegment> map_segments(const std::string& purpose, int n, size_t slot_bytes) {
  const std::string name = "/dist-test-" + purpose + "-" + std::to_string(getpid()) + "-" + std::to_string(n);
  std::vector<dist::ShmSegment> segments;
  segments.push_back(dist::ShmSegment::create(name, n, slot_bytes));
  for (int r = 1; r < n; ++r) segments.push_back(dist::ShmSegment::open(name, n));
  dist::ShmSegment::unlink(name);
  return segments;
}

inline std::vector<std::string> rank_names(int n) {
  std::vector<std::string> names;
  for (int r = 0; r < n; ++r) names.push_back("rank " + std::to_string(r));
  return names;
}

// Runs body(group, rank) on `n` threads, each rank with its group over one
// segment (slots of `slot_bytes`; `pids` as ShmGroup takes them), and
// returns what each rank's body threw ("" for none). A rank that throws sets
// the failure state all ranks share (with its status), as a communicator's
// failure reaches its peers, so no other rank waits on.
template <typename Body>
std::vector<std::string> run_ranks(const std::string& purpose, int n, size_t slot_bytes, Body body,
                                   const std::vector<pid_t>& pids = {}) {
  std::vector<dist::ShmSegment> segments = map_segments(purpose, n, slot_bytes);
  auto failure = std::make_shared<dist::FailureFlag>();
  const std::vector<std::string> names = rank_names(n);
  std::vector<std::string> errors(static_cast<size_t>(n));
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      dist::ShmGroup group(std::move(segments[static_cast<size_t>(r)]), r, names, failure, pids);
      try {
        body(group, r);
      } catch (const dist::Error& e) {
        errors[static_cast<size_t>(r)] = e.what();
        failure->set(e.status(), e.what());
      } catch (const std::exception& e) {
        errors[static_cast<size_t>(r)] = e.what();
        failure->set(dist::Status::kInternal, e.what());
      }
    });
  }
  for (std::thread& t : threads) t.join();
  return errors;
}

inline void fail_on_errors(const std::vector<std::string>& errors) {
  for (size_t r = 0; r < errors.size(); ++r) {
    if (!errors[r].empty()) fail_msg("%zu ranks, rank %zu: %s", errors.size(), r, errors[r].c_str());
  }
}
