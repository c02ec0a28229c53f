#include "measure.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "base/status.h"
#include "collective.h"
#include "host_buffer.h"
#include "placement.h"
#include "stats.h"
#include "topology/memory_pages.h"
#include "verify.h"

namespace dist::bench {

namespace {

using Clock = std::chrono::steady_clock;

struct Row {
  uint64_t bytes;
  int iters;
  double median_seconds;
  double algbw;
  double busbw;
  std::string algorithm;  // the table's column, and the CSV's variant without --variant
};

// Seconds per call over `calls` back-to-back calls, the slowest rank's.
double time_calls(dist_comm_t* comm, const Options& o, const Layout& layout, const Placement& where, void* send,
                  void* recv, int calls) {
  check_status(dist_barrier(comm, nullptr), "barrier");
  const auto start = Clock::now();
  for (int i = 0; i < calls; ++i) {
    call_collective(comm, o.collective, *o.dtype, layout, send, recv, where.memory_kind(), where.stream());
  }
  return max_over_ranks(comm, std::chrono::duration<double>(Clock::now() - start).count() / calls);
}

// Warm-up calls, then as many timed to estimate one call's time; then
// `repeats` batches sized to share the budget; the median batch.
// `send` and `recv` are where.send()'s and where.recv()'s buffers.
Row measure(dist_comm_t* comm, const Options& o, const Layout& layout, const Placement& where, void* send, void* recv,
            int ranks) {
  constexpr int kWarmCalls = 5;
  // The first calls at a size set up buffers and paths; they are not timed.
  for (int i = 0; i < kWarmCalls; ++i) {
    call_collective(comm, o.collective, *o.dtype, layout, send, recv, where.memory_kind(), where.stream());
  }
  const double per_call = time_calls(comm, o, layout, where, send, recv, kWarmCalls);
  const double batch_seconds = o.seconds_per_size / o.repeats;
  // Every rank must make the same number of calls: per_call is agreed on.
  const int batch = static_cast<int>(std::clamp(batch_seconds / std::max(per_call, 1e-9), 1.0, 1e6));
  std::vector<double> per_iteration;
  for (int r = 0; r < o.repeats; ++r) {
    per_iteration.push_back(time_calls(comm, o, layout, where, send, recv, batch));
  }
  std::sort(per_iteration.begin(), per_iteration.end());
  Row row{};
  row.bytes = layout.csv_bytes;
  row.iters = batch * o.repeats;
  row.median_seconds = per_iteration[per_iteration.size() / 2];
  row.algbw = static_cast<double>(layout.csv_bytes) / row.median_seconds / 1e9;
  row.busbw = row.algbw * bus_factor(o.collective, ranks);
  return row;
}

void print_header(const Options& o, int ranks) {
  if (o.csv) {
    std::printf("impl,variant,nprocs,bytes,iters,median_us,algbw_GBps,busbw_GBps\n");
    return;
  }
  const bool sums = o.collective == DIST_COLLECTIVE_ALL_REDUCE || o.collective == DIST_COLLECTIVE_REDUCE ||
                    o.collective == DIST_COLLECTIVE_REDUCE_SCATTER;
  std::printf("# %s, %s%s, %d rank%s\n", collective_name(o.collective), o.dtype->name, sums ? " sum" : "", ranks,
              ranks == 1 ? "" : "s");
  std::printf("%12s %9s %12s %12s %12s  %s\n", "bytes", "iters", "median_us", "algbw_GB/s", "busbw_GB/s", "algorithm");
}

void print_row(const Options& o, const Row& row, int ranks) {
  const auto bytes = static_cast<unsigned long long>(row.bytes);
  if (o.csv) {
    std::printf("distribute,%s,%d,%llu,%d,%.3f,%.6g,%.6g\n",
                o.variant.empty() ? row.algorithm.c_str() : o.variant.c_str(),
                ranks, bytes, row.iters, row.median_seconds * 1e6, row.algbw, row.busbw);
  } else {
    std::printf("%12llu %9d %12.3f %12.3f %12.3f  %s\n", bytes, row.iters, row.median_seconds * 1e6, row.algbw,
                row.busbw, row.algorithm.c_str());
  }
  std::fflush(stdout);
}

// With --memory cuda: the path the communicator chose at its first call on
// CUDA memory ("nccl" or "staged"); empty where no such call was made (a
// barrier takes no buffers) or the library cannot say.
std::string device_path(dist_comm_t* comm) {
  dist_comm_path_t path = 0;
  if (dist_comm_device_path(comm, &path) != DIST_OK) return "";
  if (path == DIST_COMM_PATH_NCCL) return "nccl";
  if (path == DIST_COMM_PATH_STAGED) return "staged";
  return "path " + std::to_string(path);
}

// One line on stderr, from rank 0, once the path is chosen: which one ran,
// where rank 0's buffers are, and for the staged path why not NCCL.
void report_device_path(const std::string& path, const Placement& where, int ranks) {
  std::string why;
  if (path == "staged") {
    why = where.device_count() < ranks
              ? "; more ranks than GPUs, and NCCL needs a GPU per rank"
              : "; NCCL is off (DIST_NCCL=0) or unavailable (dist-info build says why), or ranks share a GPU";
  }
  std::fprintf(stderr,
               "dist-bench: calls on CUDA memory took the %s path (%d rank%s; rank 0 on CUDA device %d of %d%s)\n",
               path.c_str(), ranks, ranks == 1 ? "" : "s", where.device(), where.device_count(), why.c_str());
  std::fflush(stderr);
}

}  // namespace

int run_benchmark(dist_comm_t* comm, const Options& o) {
  int32_t rank = 0, ranks = 1, local_rank = 0;
  check_status(dist_comm_rank(comm, &rank), "comm_rank");
  check_status(dist_comm_size(comm, &ranks), "comm_size");
  check_status(dist_comm_local_rank(comm, &local_rank), "comm_local_rank");
  if (o.check) require_exact_check(o.collective, *o.dtype, ranks);
  // A barrier moves no data: one row, whatever the sizes.
  std::vector<Layout> layouts;
  for (uint64_t bytes : o.sizes) {
    layouts.push_back(layout_for(o.collective, bytes, *o.dtype, ranks));
    layouts.back().in_place = o.in_place;
    if (o.collective == DIST_COLLECTIVE_BARRIER) break;
  }
  uint64_t send_bytes = 0, recv_bytes = 0;
  for (const Layout& l : layouts) {
    send_bytes = std::max(send_bytes, l.send_count * o.dtype->size);
    recv_bytes = std::max(recv_bytes, l.recv_count * o.dtype->size);
  }
  const HostBuffer send(send_bytes, o.huge_pages), recv(recv_bytes, o.huge_pages);
  if (o.huge_pages && rank == 0) {
    std::fprintf(stderr, "dist-bench: --huge-pages: %.1f of %.1f MiB of the buffers on huge pages (THP mode: %s)\n",
                 static_cast<double>(huge_page_bytes({&send, &recv})) / (1 << 20),
                 static_cast<double>(send_bytes + recv_bytes) / (1 << 20),
                 discover_memory_pages().huge_pages.c_str());
  }

  const Placement where(o.cuda, local_rank, static_cast<size_t>(send_bytes), static_cast<size_t>(recv_bytes));
  if (rank == 0) print_header(o, ranks);
  if (o.stats) start_stats(comm);
  std::string path;  // with --memory cuda: "nccl" or "staged", once the first call chose
  bool path_asked = false;
  for (const Layout& layout : layouts) {
    const char* algorithm = nullptr;
    check_status(dist_comm_algorithm(comm, o.collective, layout.contribution_bytes, &algorithm), "comm_algorithm");
    if (o.check) verify_collective(comm, o.collective, *o.dtype, layout, send.data(), recv.data(), where, rank, ranks);
    const std::vector<dist_comm_stat_t> before = stats_snapshot(comm);
    Row row = measure(comm, o, layout, where, where.send(send.data()), where.recv(recv.data()), ranks);
    // The table's own choice for a separate result, unless the counters say
    // what the timed calls ran (in place, or a choice the library learns).
    row.algorithm = algorithm;
    if (!o.cuda) {
      const std::string ran = algorithms_between(before, stats_snapshot(comm), o.collective);
      if (!ran.empty()) row.algorithm = ran;
    } else {
      if (!path_asked) {
        path_asked = true;
        path = device_path(comm);
        if (rank == 0 && !path.empty()) report_device_path(path, where, ranks);
      }
      // NCCL runs its own algorithms: the host's name would mislead.
      if (path == "nccl") {
        row.algorithm = "nccl";
      } else if (!path.empty()) {
        row.algorithm = path + "/" + algorithm;
      }
    }
    if (rank == 0) print_row(o, row, ranks);
    if (o.stats) {
      if (rank == 0) print_stats(comm, row.bytes);
      else check_status(dist_comm_stats_reset(comm), "comm_stats_reset");
    }
  }
  return 0;
}

}  // namespace dist::bench
