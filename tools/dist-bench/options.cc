#include "options.h"

#include <cerrno>
#include <cstdlib>

#include "base/status.h"
#include "collective.h"

namespace dist::bench {

const char* const kUsage =
    "usage: dist-bench [-n RANKS]\n"
    "                  [--op all_reduce|reduce|broadcast|all_gather|reduce_scatter|all_to_all|barrier]\n"
    "                  [--dtype i8|u8|i32|u32|i64|u64|f16|bf16|f32|f64]\n"
    "                  [--algo auto|NAME]\n"
    "                  [--sizes 8,1K,64M,...]\n"
    "                  [--seconds S] [--repeats R] [--no-check] [--in-place] [--variant LABEL] [--csv]\n"
    "                  [--memory host|cuda] [--huge-pages] [--stats]\n"
    "\n"
    "Times one collective (default all_reduce, f32, sum; root 0 for reduce and\n"
    "broadcast) between the ranks of a cluster (TF_CONFIG, Slurm, MPI or torchrun\n"
    "environment, e.g. under dist-run), or between RANKS local processes it starts\n"
    "itself with -n. Each size (bytes, default 8 B to 256 MiB) is checked once\n"
    "against values every rank computes itself, then timed: warm-up, R batches\n"
    "within S seconds, the median batch's time per call (slowest rank). Rank 0\n"
    "prints a table, or with --csv\n"
    "impl,variant,nprocs,bytes,iters,median_us,algbw_GBps,busbw_GBps\n"
    "where variant is --variant or the algorithm the library used at that size.\n"
    "--algo forces the all-reduce algorithm by a name of the library's table of\n"
    "algorithms (ring, shm_direct, ...; it goes to the ranks as DIST_ALLREDUCE_ALGO,\n"
    "and an unknown name is refused with the table's list). --in-place times all_reduce\n"
    "with its result over its input. --memory cuda times buffers in CUDA device\n"
    "memory (builds with CUDA): each rank on device (local rank % visible devices),\n"
    "on a stream of its own. The library chooses its path for them at the first\n"
    "call: NCCL where every rank has a GPU of its own, else staged through pinned\n"
    "host memory; rank 0 says which on stderr, and without --variant the variant\n"
    "(and the table's algorithm) is \"nccl\", or \"staged/\" and the host algorithm.\n"
    "--huge-pages puts the host buffers on transparent huge pages (2 MiB-aligned,\n"
    "MADV_HUGEPAGE) instead of the kernel's ordinary pages; rank 0 says on stderr\n"
    "how much of them the kernel backs with huge pages. The library's copies\n"
    "between processes pin a peer's pages one by one, so they run faster on them.\n"
    "--stats turns on the library's timing of calls and, after each size, has\n"
    "rank 0 print its counters (dist_comm_stats) on stderr: one line per\n"
    "collective, path and algorithm, with calls, failures, bytes and mean time\n"
    "(the check's and the timing's own calls included).\n"
    "--collective and --algorithm are other names for --op and --algo.\n";

namespace {

// A whole decimal number in [min, max]; the error names the flag.
int64_t parse_number(const std::string& text, const std::string& flag, int64_t min, int64_t max) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) {
    fail_invalid(flag + ": " + quoted(text) + " is not a number");
  }
  errno = 0;
  long long value = std::strtoll(text.c_str(), nullptr, 10);
  if (errno != 0 || value < min || value > max) {
    fail_invalid(flag + ": " + text + " is out of range [" + std::to_string(min) + ", " + std::to_string(max) + "]");
  }
  return value;
}

constexpr uint64_t kLargestSize = uint64_t{1} << 40;

uint64_t parse_size(const std::string& text) {
  if (text.empty()) fail_invalid("--sizes: an empty size");
  uint64_t scale = 1;
  std::string digits = text;
  switch (text.back()) {
    case 'K': case 'k': scale = 1ull << 10; digits.pop_back(); break;
    case 'M': case 'm': scale = 1ull << 20; digits.pop_back(); break;
    case 'G': case 'g': scale = 1ull << 30; digits.pop_back(); break;
    default: break;
  }
  const uint64_t bytes = static_cast<uint64_t>(parse_number(digits, "--sizes", 1, kLargestSize)) * scale;
  if (bytes > kLargestSize) fail_invalid("--sizes: " + text + " is above 1 TiB");
  return bytes;
}

std::vector<uint64_t> parse_sizes(const std::string& list) {
  std::vector<uint64_t> sizes;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    sizes.push_back(parse_size(list.substr(start, comma == std::string::npos ? std::string::npos : comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return sizes;
}

}  // namespace

Options parse_options(int argc, char** argv) {
  Options o;
  o.dtype = &parse_dtype("f32", "--dtype");
  o.sizes = {8, 64, 1024, 16 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20, 64 << 20, 256 << 20};
  std::string algorithm_flag;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) fail_invalid(flag + " needs a value");
      return argv[++i];
    };
    if (flag == "-n") {
      o.launch_ranks = static_cast<int>(parse_number(value(), "-n", 1, 64));
    } else if (flag == "--op" || flag == "--collective") {
      o.collective = parse_collective(value(), flag);
    } else if (flag == "--dtype") {
      o.dtype = &parse_dtype(value(), flag);
    } else if (flag == "--algo" || flag == "--algorithm") {
      o.algorithm = value();
      if (o.algorithm.empty()) fail_invalid(flag + " needs an algorithm name");
      algorithm_flag = flag;
    } else if (flag == "--sizes") {
      o.sizes = parse_sizes(value());
    } else if (flag == "--seconds") {
      std::string text = value();
      char* end = nullptr;
      o.seconds_per_size = std::strtod(text.c_str(), &end);
      if (end == text.c_str() || *end != '\0' || !(o.seconds_per_size > 0 && o.seconds_per_size < 3600)) {
        fail_invalid("--seconds: " + quoted(text) + " is not a number of seconds in (0, 3600)");
      }
    } else if (flag == "--repeats") {
      o.repeats = static_cast<int>(parse_number(value(), "--repeats", 1, 1000));
    } else if (flag == "--no-check") {
      o.check = false;
    } else if (flag == "--in-place") {
      o.in_place = true;
    } else if (flag == "--variant") {
      o.variant = value();
      if (o.variant.empty() || o.variant.find_first_of(",\n\"") != std::string::npos) {
        fail_invalid("--variant: " + quoted(o.variant) + " must be non-empty, without commas, quotes or newlines");
      }
    } else if (flag == "--memory") {
      const std::string memory = value();
      if (memory != "host" && memory != "cuda") fail_invalid("--memory: " + quoted(memory) + " is neither host nor cuda");
      o.cuda = memory == "cuda";
    } else if (flag == "--huge-pages") {
      o.huge_pages = true;
    } else if (flag == "--stats") {
      o.stats = true;
    } else if (flag == "--csv") {
      o.csv = true;
    } else {
      fail_invalid("unknown flag " + quoted(flag));
    }
  }
  // The algorithm choice is the all-reduce's; other collectives pick their own.
  if (o.algorithm != "auto" && o.collective != DIST_COLLECTIVE_ALL_REDUCE) {
    fail_invalid(algorithm_flag + ": " + o.algorithm + " chooses the all_reduce algorithm; " +
                 collective_name(o.collective) + " takes only auto");
  }
  if (o.in_place && o.collective != DIST_COLLECTIVE_ALL_REDUCE) {
    fail_invalid(std::string("--in-place: only all_reduce is timed in place, not ") + collective_name(o.collective));
  }
  if (o.huge_pages && o.cuda) fail_invalid("--huge-pages: host buffers only, not with --memory cuda");
  return o;
}

}  // namespace dist::bench
