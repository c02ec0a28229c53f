// The collective algorithms and run_collective, over an in-process group with
// one thread per rank: every kind x dtype x op over rank counts 1..5, 7, 8 and
// counts 0, 1, 7, n-1, n+1, primes spanning many pipeline chunks, and about
// 2 MiB; every all-reduce algorithm forced; in-place variants; every root.
//
// Inputs are small integers chosen per op so that every result is exact in
// every dtype (sums and products of a few small values; integer products may
// wrap, and the reference wraps the same way). References are computed here
// with plain scalar loops in int64/double and encoded with this file's own
// f16/bf16 rounding, independently of the library's kernels and conversions.
// Every output buffer has guard bytes on both sides that must stay intact.
//
// One file past 500 lines: every algorithm runs over the one in-process group
// harness and the one independent reference encoder below. Which algorithm a
// call selects is test_algorithm_table.cc's.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/dtype.h"
#include <distribute/c_api.h>
#include "base/status.h"
#include "collectives/algorithm_table.h"
#include "collectives/run_collective.h"
#include "collectives/algorithms/broadcast_binomial.h"
#include "collectives/algorithms/broadcast_scatter_allgather.h"
#include "collectives/collective_call.h"
#include "collectives/signature.h"
#include "support/inproc_channel.h"
#include "transport/channel.h"

// Last: cmocka defines a fail() macro that would clash with dist::fail. Its
// 1.1 header declares its C functions without extern "C" for C++.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
extern "C" {
#include <cmocka.h>
}

namespace {

using dist::AlgorithmOptions;
using dist::CallSignature;
using dist::Channel;
using dist::CollectiveCall;
using dist::CollectiveKind;
using dist::DType;
using dist::InProcessGroup;
using dist::ReduceOp;
using dist::Status;
using dist::TransferId;
using Clock = std::chrono::steady_clock;

// Long enough for a slow peer on two cores to compute a 2 MiB reference
// between calls; short enough that a hang fails the test.
const auto kDeadline = std::chrono::seconds(10);
// Makes even small counts span many pipeline chunks.
constexpr size_t kSmallChunkBytes = 4096;
constexpr size_t kLargeBytes = 2 * 1024 * 1024;

const DType kAllDTypes[] = {DType::I8,  DType::U8,  DType::I32,  DType::U32, DType::I64,
                            DType::U64, DType::F16, DType::BF16, DType::F32, DType::F64};
const ReduceOp kAllOps[] = {ReduceOp::SUM, ReduceOp::PROD, ReduceOp::MIN, ReduceOp::MAX, ReduceOp::MEAN};
const char* const kAllReduceAlgorithms[] = {"ring", "rabenseifner", "recursive_doubling"};

// dist::run_collective with the forced all-reduce resolved from its name, as
// a communicator resolves it when its options change.
void run_collective(Channel& channel, const CollectiveCall& call, const AlgorithmOptions& options) {
  dist::run_collective(channel, call, options, dist::forced_point_to_point(options.all_reduce));
}

// ---- Elements, encoded by this file ---------------------------------------------

size_t element_size(DType dtype) {
  switch (dtype) {
    case DType::I8: case DType::U8: return 1;
    case DType::F16: case DType::BF16: return 2;
    case DType::I32: case DType::U32: case DType::F32: return 4;
    case DType::I64: case DType::U64: case DType::F64: return 8;
  }
  return 0;
}

bool is_unsigned(DType dtype) { return dtype == DType::U8 || dtype == DType::U32 || dtype == DType::U64; }
bool is_float(DType dtype) {
  return dtype == DType::F16 || dtype == DType::BF16 || dtype == DType::F32 || dtype == DType::F64;
}

// A normal, finite value rounded to nearest-even into a 16-bit float with
// `mantissa_bits` stored mantissa bits and exponent bias `bias`.
uint16_t narrow_to_16(double value, int mantissa_bits, int bias) {
  const uint16_t sign = std::signbit(value) ? 0x8000 : 0;
  if (value == 0) return sign;
  int exponent = 0;
  const double fraction = std::frexp(std::fabs(value), &exponent);  // in [0.5, 1)
  double significand = std::nearbyint(std::ldexp(fraction, mantissa_bits + 1));
  if (significand == std::ldexp(1.0, mantissa_bits + 1)) {
    significand /= 2;
    ++exponent;
  }
  const int biased = exponent - 1 + bias;
  const auto mantissa = static_cast<uint16_t>(static_cast<uint32_t>(significand) - (1u << mantissa_bits));
  return static_cast<uint16_t>(sign | (biased << mantissa_bits) | mantissa);
}

template <typename T>
void put(void* at, T value) {
  std::memcpy(at, &value, sizeof value);
}

void store_integer(DType dtype, void* at, int64_t value) {
  switch (dtype) {
    case DType::I8: return put(at, static_cast<int8_t>(value));
    case DType::U8: return put(at, static_cast<uint8_t>(value));
    case DType::I32: return put(at, static_cast<int32_t>(value));
    case DType::U32: return put(at, static_cast<uint32_t>(value));
    case DType::I64: return put(at, static_cast<int64_t>(value));
    case DType::U64: return put(at, static_cast<uint64_t>(value));
    default: return;
  }
}

void store_real(DType dtype, void* at, double value) {
  switch (dtype) {
    case DType::F16: return put(at, narrow_to_16(value, 10, 15));
    case DType::BF16: return put(at, narrow_to_16(value, 7, 127));
    case DType::F32: return put(at, static_cast<float>(value));
    case DType::F64: return put(at, value);
    default: return;
  }
}

// Small integers, the common case, come from a table per float dtype, encoded
// once: the references of the 2 MiB cases would otherwise dominate the run.
constexpr int64_t kTabulated = 512;

void store_exact(DType dtype, void* at, int64_t value) {
  if (!is_float(dtype)) return store_integer(dtype, at, value);
  static const std::vector<std::vector<unsigned char>> tables = [] {
    std::vector<std::vector<unsigned char>> built(16);
    for (DType d : {DType::F16, DType::BF16, DType::F32, DType::F64}) {
      const size_t size = element_size(d);
      std::vector<unsigned char>& table = built[static_cast<size_t>(d)];
      table.resize((2 * kTabulated + 1) * size);
      for (int64_t v = -kTabulated; v <= kTabulated; ++v) {
        store_real(d, table.data() + static_cast<size_t>(v + kTabulated) * size, static_cast<double>(v));
      }
    }
    return built;
  }();
  if (value < -kTabulated || value > kTabulated) return store_real(dtype, at, static_cast<double>(value));
  const size_t size = element_size(dtype);
  std::memcpy(at, tables[static_cast<size_t>(dtype)].data() + static_cast<size_t>(value + kTabulated) * size, size);
}

// A well-mixed hash of (a, b): inputs look unrelated from element to element,
// so data that lands at a wrong offset shows.
inline uint64_t mix(uint64_t a, uint64_t b) {
  uint64_t x = a * 0x9E3779B97F4A7C15ull + b + 0x632BE59BD9B4E019ull;
  x ^= x >> 31;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 29;
  return x;
}

// Inputs of reductions: small integers per op, exact in every dtype.
inline int64_t reduction_input(DType dtype, ReduceOp op, int rank, size_t index) {
  const bool no_negatives = is_unsigned(dtype);
  const uint64_t h = mix(index, static_cast<uint64_t>(rank));
  switch (op) {
    case ReduceOp::SUM:
    case ReduceOp::MEAN: {
      const auto v = static_cast<int64_t>(h % 15);
      return no_negatives ? v : v - 7;  // |sum| <= 8 * 7; odd sums make MEAN round
    }
    case ReduceOp::PROD: {
      // Products of up to 8 of these reach +-256: exact in floats, wrapping in 8 bits.
      static const int64_t kSigned[] = {1, 2, -1, 1, 2};
      static const int64_t kUnsigned[] = {1, 2, 1, 1, 2};
      return no_negatives ? kUnsigned[h % 5] : kSigned[h % 5];
    }
    case ReduceOp::MIN:
    case ReduceOp::MAX: {
      const auto v = static_cast<int64_t>(h % 201);
      return no_negatives ? v : v - 100;
    }
  }
  return 0;
}

// Inputs of data movement: a value per (source, index) that tells sources apart.
inline int64_t movement_input(int source, size_t index) {
  return static_cast<int64_t>(mix(index, static_cast<uint64_t>(source) + 1000) % 97);
}

// The reduction of input(0) .. input(n-1), as the library defines it.
template <typename Input>
void store_reduction(DType dtype, ReduceOp op, int n, const Input& input, void* at) {
  if (!is_float(dtype)) {
    int64_t result = input(0);
    for (int rank = 1; rank < n; ++rank) {
      const int64_t v = input(rank);
      switch (op) {
        case ReduceOp::SUM: case ReduceOp::MEAN: result += v; break;
        case ReduceOp::PROD: result = static_cast<int64_t>(static_cast<uint64_t>(result) * static_cast<uint64_t>(v)); break;
        case ReduceOp::MIN: result = std::min(result, v); break;
        case ReduceOp::MAX: result = std::max(result, v); break;
      }
    }
    if (op == ReduceOp::MEAN) result /= n;  // truncation toward zero
    return store_integer(dtype, at, result);
  }
  double result = static_cast<double>(input(0));
  for (int rank = 1; rank < n; ++rank) {
    const auto v = static_cast<double>(input(rank));
    switch (op) {
      case ReduceOp::SUM: case ReduceOp::MEAN: result += v; break;
      case ReduceOp::PROD: result *= v; break;
      case ReduceOp::MIN: result = std::min(result, v); break;
      case ReduceOp::MAX: result = std::max(result, v); break;
    }
  }
  if (op != ReduceOp::MEAN) return store_exact(dtype, at, static_cast<int64_t>(result));
  // The quotient correctly rounded in the element type (f32 divides in f32).
  if (dtype == DType::F32) return put(at, static_cast<float>(result) / static_cast<float>(n));
  store_real(dtype, at, result / n);
}

// ---- Buffers with guards ---------------------------------------------------------

constexpr size_t kGuardBytes = 64;
constexpr unsigned char kGuardByte = 0xE3;
constexpr unsigned char kUnwrittenByte = 0xA7;  // never a byte of a small test value

class GuardedBuffer {
 public:
  explicit GuardedBuffer(size_t bytes) : bytes_(bytes), storage_(bytes + 2 * kGuardBytes, kGuardByte) {
    std::memset(data(), kUnwrittenByte, bytes);
  }
  unsigned char* data() { return storage_.data() + kGuardBytes; }
  size_t bytes() const { return bytes_; }
  bool guards_intact() const {
    for (size_t i = 0; i < kGuardBytes; ++i) {
      if (storage_[i] != kGuardByte || storage_[kGuardBytes + bytes_ + i] != kGuardByte) return false;
    }
    return true;
  }

 private:
  size_t bytes_;
  std::vector<unsigned char> storage_;
};

// "" when `actual` equals `expected`, else where and how they differ.
std::string compare(const unsigned char* actual, const std::vector<unsigned char>& expected, size_t element,
                    const char* what) {
  if (expected.empty() || std::memcmp(actual, expected.data(), expected.size()) == 0) return "";
  for (size_t i = 0; i < expected.size(); ++i) {
    if (actual[i] == expected[i]) continue;
    const size_t index = i / element;
    std::string got;
    std::string want;
    char hex[4];
    for (size_t b = 0; b < element; ++b) {
      std::snprintf(hex, sizeof hex, "%02x", actual[index * element + element - 1 - b]);
      got += hex;
      std::snprintf(hex, sizeof hex, "%02x", expected[index * element + element - 1 - b]);
      want += hex;
    }
    return std::string(what) + " element " + std::to_string(index) + " is 0x" + got + ", expected 0x" + want;
  }
  return "";
}

// ---- Cases ------------------------------------------------------------------------

enum class Placement {
  kSeparate,  // distinct send and recv
  kInPlace,   // send == recv
  kOwnBlock,  // all_gather: send == recv + rank*count
};

enum class BroadcastVia { kDispatcher, kBinomial, kScatterAllGather };

struct Case {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  DType dtype = DType::F32;
  ReduceOp op = ReduceOp::SUM;
  int root = -1;
  size_t count = 0;
  std::string algorithm;  // forced all-reduce algorithm
  size_t chunk_bytes = 0;
  Placement placement = Placement::kSeparate;
  bool null_recv_off_root = false;
  BroadcastVia broadcast = BroadcastVia::kDispatcher;

  CallSignature signature() const {
    CallSignature s;
    s.kind = kind;
    s.dtype = dtype;
    s.op = op;
    s.root = root;
    s.count = count;
    return s;
  }
};

std::string describe_case(const Case& c, int n) {
  static const char* const kPlacements[] = {"separate", "in place", "own block"};
  static const char* const kBroadcasts[] = {"", " via binomial", " via scatter/all-gather"};
  std::string text = dist::describe(c.signature()) + " on " + std::to_string(n) + " ranks, " +
                     kPlacements[static_cast<int>(c.placement)];
  if (!c.algorithm.empty()) text += ", algorithm " + c.algorithm;
  if (c.chunk_bytes != 0) text += ", chunk " + std::to_string(c.chunk_bytes) + " B";
  if (c.null_recv_off_root) text += ", null recv off root";
  return text + kBroadcasts[static_cast<int>(c.broadcast)];
}

// What `rank` must find in its recv buffer after case `c` on n ranks.
std::vector<unsigned char> expected_output(const Case& c, int n, int rank) {
  const size_t element = element_size(c.dtype);
  const size_t count = c.count;
  const size_t all = count * static_cast<size_t>(n);
  const size_t recv_elements = c.kind == CollectiveKind::kReduce && rank != c.root && c.null_recv_off_root ? 0 : count;
  auto at = [&](unsigned char* base, size_t index) { return base + index * element; };
  std::vector<unsigned char> expected;
  auto expect = [&](size_t elements) { expected.assign(elements * element, 0); };
  switch (c.kind) {
    case CollectiveKind::kAllReduce:
      expect(count);
      for (size_t i = 0; i < count; ++i) {
        store_reduction(c.dtype, c.op, n, [&](int r) { return reduction_input(c.dtype, c.op, r, i); },
                        at(expected.data(), i));
      }
      break;
    case CollectiveKind::kReduce:
      expect(recv_elements);
      if (rank == c.root) {
        for (size_t i = 0; i < count; ++i) {
          store_reduction(c.dtype, c.op, n, [&](int r) { return reduction_input(c.dtype, c.op, r, i); },
                          at(expected.data(), i));
        }
      } else {
        std::fill(expected.begin(), expected.end(), kUnwrittenByte);  // recv untouched off the root
      }
      break;
    case CollectiveKind::kBroadcast:
      expect(count);
      for (size_t i = 0; i < count; ++i) store_exact(c.dtype, at(expected.data(), i), movement_input(c.root, i));
      break;
    case CollectiveKind::kAllGather:
      expect(all);
      for (int from = 0; from < n; ++from) {
        for (size_t i = 0; i < count; ++i) {
          store_exact(c.dtype, at(expected.data(), static_cast<size_t>(from) * count + i), movement_input(from, i));
        }
      }
      break;
    case CollectiveKind::kReduceScatter:
      expect(count);  // in place only the first `count` elements are defined
      for (size_t i = 0; i < count; ++i) {
        const size_t source = static_cast<size_t>(rank) * count + i;
        store_reduction(c.dtype, c.op, n, [&](int r) { return reduction_input(c.dtype, c.op, r, source); },
                        at(expected.data(), i));
      }
      break;
    case CollectiveKind::kAllToAll:
      expect(all);
      for (int from = 0; from < n; ++from) {
        for (size_t i = 0; i < count; ++i) {
          store_exact(c.dtype, at(expected.data(), static_cast<size_t>(from) * count + i),
                      movement_input(from * n + rank, i));
        }
      }
      break;
    default: break;
  }

  return expected;
}

// One case's expected output when every rank expects the same: computed once
// by whichever rank needs it first, released after the last comparison.
struct SharedReference {
  std::once_flag computed;
  std::vector<unsigned char> bytes;
  std::atomic<int> finished{0};
};

// Runs one case on this rank and checks its outputs: "" or what went wrong.
std::string run_case(Channel& channel, const Case& c, uint64_t seq, SharedReference& reference) {
  const int n = channel.size();
  const int rank = channel.rank();
  const size_t element = element_size(c.dtype);
  const size_t count = c.count;
  const size_t all = count * static_cast<size_t>(n);
  const bool in_place = c.placement != Placement::kSeparate;
  auto at = [&](unsigned char* base, size_t index) { return base + index * element; };

  size_t send_elements = 0;
  size_t recv_elements = 0;
  switch (c.kind) {
    case CollectiveKind::kAllReduce: send_elements = recv_elements = count; break;
    case CollectiveKind::kReduce:
      send_elements = count;
      recv_elements = rank == c.root || !c.null_recv_off_root ? count : 0;
      break;
    case CollectiveKind::kBroadcast: recv_elements = count; break;
    case CollectiveKind::kAllGather: send_elements = count; recv_elements = all; break;
    case CollectiveKind::kReduceScatter: send_elements = all; recv_elements = in_place ? all : count; break;
    case CollectiveKind::kAllToAll: send_elements = recv_elements = all; break;
    default: return "unsupported kind in test";
  }
  const bool root_in_place = c.kind == CollectiveKind::kReduce && in_place && rank == c.root;
  const bool shares_buffer = in_place && (c.kind != CollectiveKind::kReduce || root_in_place);
  GuardedBuffer send_buffer(shares_buffer ? 0 : send_elements * element);
  GuardedBuffer recv_buffer(recv_elements * element);
  // Where this rank's input goes.
  unsigned char* input = shares_buffer ? recv_buffer.data() : send_buffer.data();

  // Inputs.
  switch (c.kind) {
    case CollectiveKind::kAllReduce:
    case CollectiveKind::kReduce:
    case CollectiveKind::kReduceScatter:
      for (size_t i = 0; i < send_elements; ++i) {
        store_exact(c.dtype, at(input, i), reduction_input(c.dtype, c.op, rank, i));
      }
      break;
    case CollectiveKind::kBroadcast:
      if (rank == c.root) {
        for (size_t i = 0; i < count; ++i) store_exact(c.dtype, at(recv_buffer.data(), i), movement_input(rank, i));
      }
      break;
    case CollectiveKind::kAllGather:
      if (in_place) input = at(recv_buffer.data(), static_cast<size_t>(rank) * count);
      for (size_t i = 0; i < count; ++i) store_exact(c.dtype, at(input, i), movement_input(rank, i));
      break;
    case CollectiveKind::kAllToAll:
      for (int to = 0; to < n; ++to) {
        for (size_t i = 0; i < count; ++i) {
          store_exact(c.dtype, at(input, static_cast<size_t>(to) * count + i), movement_input(rank * n + to, i));
        }
      }
      break;
    default: break;
  }

  CollectiveCall call;
  call.signature = c.signature();
  call.recv = recv_elements > 0 || c.kind != CollectiveKind::kReduce ? recv_buffer.data() : nullptr;
  if (c.kind == CollectiveKind::kReduce && rank != c.root && c.null_recv_off_root) call.recv = nullptr;
  if (c.kind == CollectiveKind::kAllGather && c.placement == Placement::kInPlace) {
    call.send = recv_buffer.data();
  } else if (c.kind != CollectiveKind::kBroadcast) {
    call.send = input;
  }
  AlgorithmOptions options;
  options.all_reduce = c.algorithm;
  options.chunk_bytes = c.chunk_bytes;

  // Expected outputs, computed before the call so peers wait less.
  std::vector<unsigned char> own_expected;
  const std::vector<unsigned char>* expected = &own_expected;
  const bool same_everywhere = c.kind == CollectiveKind::kAllReduce || c.kind == CollectiveKind::kBroadcast ||
                               c.kind == CollectiveKind::kAllGather;
  if (same_everywhere) {
    std::call_once(reference.computed, [&] { reference.bytes = expected_output(c, n, rank); });
    expected = &reference.bytes;
  } else {
    own_expected = expected_output(c, n, rank);
  }

  // Inputs must be read, never written (unless in place): kept to compare.
  const bool check_input = !shares_buffer && c.kind != CollectiveKind::kBroadcast && c.placement != Placement::kOwnBlock;
  const std::vector<unsigned char> input_before =
      check_input ? std::vector<unsigned char>(send_buffer.data(), send_buffer.data() + send_buffer.bytes())
                  : std::vector<unsigned char>();

  channel.begin(dist::call_words(call.signature), seq, Clock::now() + kDeadline);
  if (c.kind == CollectiveKind::kBroadcast && c.broadcast == BroadcastVia::kBinomial) {
    dist::broadcast_binomial(channel, call.recv, count, c.dtype, c.root, options);
  } else if (c.kind == CollectiveKind::kBroadcast && c.broadcast == BroadcastVia::kScatterAllGather) {
    dist::broadcast_scatter_allgather(channel, call.recv, count, c.dtype, c.root, options);
  } else {
    run_collective(channel, call, options);
  }
  channel.end();

  std::string problem;
  if (!send_buffer.guards_intact()) problem = "the send buffer's guard bytes changed";
  if (!recv_buffer.guards_intact()) problem = "the recv buffer's guard bytes changed";
  if (problem.empty() && (c.kind != CollectiveKind::kReduce || rank == c.root || !c.null_recv_off_root)) {
    const std::string difference = compare(recv_buffer.data(), *expected, element, "recv");
    if (!difference.empty()) problem = "rank " + std::to_string(rank) + ": " + difference;
  }
  if (problem.empty() && check_input && !input_before.empty() &&
      std::memcmp(input_before.data(), send_buffer.data(), send_buffer.bytes()) != 0) {
    problem = "rank " + std::to_string(rank) + ": the send buffer was modified";
  }
  if (same_everywhere && ++reference.finished == n) {
    reference.bytes.clear();
    reference.bytes.shrink_to_fit();
  }
  return problem;
}

// Runs every case in order on an n-rank group (one call each, seq = index)
// and fails the test with the first problems found.
void run_cases(int n, const std::vector<Case>& cases) {
  InProcessGroup group(n);
  std::vector<SharedReference> references(cases.size());
  std::vector<std::string> problems(n);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < n; ++rank) {
    threads.emplace_back([&, rank] {
      Channel& channel = group.channel(rank);
      for (size_t index = 0; index < cases.size(); ++index) {
        try {
          const std::string problem = run_case(channel, cases[index], index, references[index]);
          if (!problem.empty() && problems[rank].empty()) problems[rank] = describe_case(cases[index], n) + ": " + problem;
        } catch (const dist::Error& error) {
          problems[rank] = describe_case(cases[index], n) + ": rank " + std::to_string(rank) + " threw status " +
                           std::to_string(static_cast<int>(error.status())) + ": " + error.what();
          return;  // the group has failed; later cases cannot run
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  std::string report;
  for (const std::string& problem : problems) {
    if (!problem.empty()) report += problem + "\n";
  }
  if (!report.empty()) fail_msg("%s", report.c_str());
}

// 0, 1, 7, n-1, n+1 without repeats.
std::vector<size_t> small_counts(int n) {
  std::vector<size_t> counts = {0, 1, 7, static_cast<size_t>(n - 1), static_cast<size_t>(n + 1)};
  std::sort(counts.begin(), counts.end());
  counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
  return counts;
}

bool is_prime(size_t value) {
  if (value < 2) return false;
  for (size_t d = 2; d * d <= value; ++d) {
    if (value % d == 0) return false;
  }
  return true;
}

// A prime count whose per-rank blocks span several chunks of `chunk_bytes`.
size_t prime_count(DType dtype, int n, size_t chunk_bytes) {
  size_t count = std::max<size_t>(1, chunk_bytes / element_size(dtype)) * (static_cast<size_t>(n) * 2 + 1) + 1;
  while (!is_prime(count)) ++count;
  return count;
}

// About 2 MiB of elements, odd so that no rank count divides it evenly.
size_t large_count(DType dtype) { return kLargeBytes / element_size(dtype) + 3; }

const int kCommonRankCounts[] = {1, 2, 3, 4};
const int kMoreRankCounts[] = {5, 7, 8};
const DType kSomeDTypes[] = {DType::U8, DType::I32, DType::F16, DType::BF16, DType::F64};

Case reduction_case(CollectiveKind kind, DType dtype, ReduceOp op, size_t count) {
  Case c;
  c.kind = kind;
  c.dtype = dtype;
  c.op = op;
  c.count = count;
  return c;
}

// ---- all_reduce ---------------------------------------------------------------------

// Every dtype x op x small count x algorithm x placement on 1..4 ranks, and
// a subset of dtypes on 5, 7 and 8.
void test_all_reduce_small(void**) {
  auto cases_for = [](int n, const std::vector<DType>& dtypes) {
    std::vector<Case> cases;
    for (DType dtype : dtypes) {
      for (ReduceOp op : kAllOps) {
        for (size_t count : small_counts(n)) {
          for (const char* algorithm : kAllReduceAlgorithms) {
            for (Placement placement : {Placement::kSeparate, Placement::kInPlace}) {
              Case c = reduction_case(CollectiveKind::kAllReduce, dtype, op, count);
              c.algorithm = algorithm;
              c.placement = placement;
              cases.push_back(c);
            }
          }
        }
      }
    }
    return cases;
  };
  const std::vector<DType> all(std::begin(kAllDTypes), std::end(kAllDTypes));
  const std::vector<DType> some(std::begin(kSomeDTypes), std::end(kSomeDTypes));
  for (int n : kCommonRankCounts) run_cases(n, cases_for(n, all));
  for (int n : kMoreRankCounts) run_cases(n, cases_for(n, some));
}

// Prime counts spanning many small chunks (and chunks of one element), every
// algorithm, the dispatcher's own choice too.
void test_all_reduce_chunked(void**) {
  for (int n : {2, 3, 4, 5, 7, 8}) {
    std::vector<Case> cases;
    for (DType dtype : kAllDTypes) {
      const bool many_ranks = n > 4;
      if (many_ranks && dtype != DType::I32 && dtype != DType::BF16 && dtype != DType::F64) continue;
      for (ReduceOp op : {ReduceOp::SUM, ReduceOp::MAX, ReduceOp::MEAN}) {
        for (const char* algorithm : {"ring", "rabenseifner", "recursive_doubling", ""}) {
          for (Placement placement : {Placement::kSeparate, Placement::kInPlace}) {
            Case c = reduction_case(CollectiveKind::kAllReduce, dtype, op, prime_count(dtype, n, kSmallChunkBytes));
            c.algorithm = algorithm;
            c.chunk_bytes = kSmallChunkBytes;
            c.placement = placement;
            cases.push_back(c);
          }
        }
      }
    }
    // A chunk smaller than one element still moves one element per message.
    for (const char* algorithm : kAllReduceAlgorithms) {
      Case c = reduction_case(CollectiveKind::kAllReduce, DType::F64, ReduceOp::PROD, 23);
      c.algorithm = algorithm;
      c.chunk_bytes = 1;
      cases.push_back(c);
    }
    run_cases(n, cases);
  }
}

// About 2 MiB per rank with the default chunk, for a few dtypes and ops.
void test_all_reduce_large(void**) {
  struct Kind {
    DType dtype;
    ReduceOp op;
  };
  const Kind kinds[] = {{DType::F32, ReduceOp::SUM}, {DType::BF16, ReduceOp::MEAN}, {DType::I64, ReduceOp::MAX},
                        {DType::U8, ReduceOp::PROD}};
  for (int n : {2, 3, 4, 8}) {
    std::vector<Case> cases;
    for (const Kind& kind : kinds) {
      if (n == 8 && kind.dtype != DType::F32) continue;
      for (const char* algorithm : {"ring", "rabenseifner", "recursive_doubling", ""}) {
        for (Placement placement : {Placement::kSeparate, Placement::kInPlace}) {
          // In place at this size: the two bandwidth algorithms, on up to 4 ranks.
          const bool bandwidth = algorithm == std::string("ring") || algorithm == std::string("rabenseifner");
          if (placement == Placement::kInPlace && (n == 8 || !bandwidth)) continue;
          Case c = reduction_case(CollectiveKind::kAllReduce, kind.dtype, kind.op, large_count(kind.dtype));
          c.algorithm = algorithm;
          c.placement = placement;
          cases.push_back(c);
        }
      }
    }
    run_cases(n, cases);
  }
}

// ---- reduce ---------------------------------------------------------------------------

void test_reduce(void**) {
  for (int n : {1, 2, 3, 4, 5, 8}) {
    const bool many_ranks = n > 4;
    std::vector<Case> cases;
    for (int root = 0; root < n; ++root) {
      for (DType dtype : kAllDTypes) {
        if (many_ranks && dtype != DType::I8 && dtype != DType::F32 && dtype != DType::BF16) continue;
        for (ReduceOp op : kAllOps) {
          for (size_t count : small_counts(n)) {
            for (Placement placement : {Placement::kSeparate, Placement::kInPlace}) {
              Case c = reduction_case(CollectiveKind::kReduce, dtype, op, count);
              c.root = root;
              c.placement = placement;
              c.null_recv_off_root = (count + static_cast<size_t>(root)) % 2 == 0;
              cases.push_back(c);
            }
          }
        }
        // Many chunks through the tree.
        Case c = reduction_case(CollectiveKind::kReduce, dtype, ReduceOp::SUM, prime_count(dtype, n, kSmallChunkBytes));
        c.root = root;
        c.chunk_bytes = kSmallChunkBytes;
        cases.push_back(c);
        c.op = ReduceOp::MEAN;
        c.placement = Placement::kInPlace;
        cases.push_back(c);
      }
    }
    Case large = reduction_case(CollectiveKind::kReduce, DType::F32, ReduceOp::SUM, large_count(DType::F32));
    large.root = n - 1;
    cases.push_back(large);
    run_cases(n, cases);
  }
}

// ---- broadcast --------------------------------------------------------------------------

// Every root, both algorithms called directly (including the scatter/all-gather
// one on tiny counts), and the dispatcher on sizes on both sides of its threshold.
void test_broadcast(void**) {
  for (int n : {1, 2, 3, 4, 5, 7, 8}) {
    const bool many_ranks = n > 4;
    std::vector<Case> cases;
    for (int root = 0; root < n; ++root) {
      for (DType dtype : kAllDTypes) {
        if (many_ranks && dtype != DType::U8 && dtype != DType::F16 && dtype != DType::I64) continue;
        std::vector<size_t> counts = small_counts(n);
        counts.push_back(prime_count(dtype, n, kSmallChunkBytes));
        for (size_t count : counts) {
          for (BroadcastVia via : {BroadcastVia::kDispatcher, BroadcastVia::kBinomial, BroadcastVia::kScatterAllGather}) {
            Case c;
            c.kind = CollectiveKind::kBroadcast;
            c.dtype = dtype;
            c.root = root;
            c.count = count;
            c.broadcast = via;
            c.chunk_bytes = count > 100 ? kSmallChunkBytes : 0;
            cases.push_back(c);
          }
        }
      }
      Case large;
      large.kind = CollectiveKind::kBroadcast;
      large.dtype = DType::I32;
      large.root = root;
      large.count = large_count(DType::I32);  // the dispatcher's scatter/all-gather range
      cases.push_back(large);
    }
    run_cases(n, cases);
  }
}

// ---- all_gather, reduce_scatter, all_to_all ------------------------------------------

void test_all_gather(void**) {
  for (int n : {1, 2, 3, 4, 5, 7, 8}) {
    const bool many_ranks = n > 4;
    std::vector<Case> cases;
    for (DType dtype : kAllDTypes) {
      if (many_ranks && dtype != DType::I8 && dtype != DType::BF16 && dtype != DType::U64) continue;
      std::vector<size_t> counts = small_counts(n);
      counts.push_back(prime_count(dtype, 1, kSmallChunkBytes));
      for (size_t count : counts) {
        for (Placement placement : {Placement::kSeparate, Placement::kInPlace, Placement::kOwnBlock}) {
          Case c;
          c.kind = CollectiveKind::kAllGather;
          c.dtype = dtype;
          c.count = count;
          c.placement = placement;
          c.chunk_bytes = count > 100 ? kSmallChunkBytes : 0;
          cases.push_back(c);
        }
      }
    }
    Case large;
    large.kind = CollectiveKind::kAllGather;
    large.dtype = DType::F32;
    large.count = large_count(DType::F32) / static_cast<size_t>(n);
    cases.push_back(large);
    run_cases(n, cases);
  }
}

void test_reduce_scatter(void**) {
  for (int n : {1, 2, 3, 4, 5, 8}) {
    const bool many_ranks = n > 4;
    std::vector<Case> cases;
    for (DType dtype : kAllDTypes) {
      if (many_ranks && dtype != DType::U32 && dtype != DType::F16 && dtype != DType::F64) continue;
      for (ReduceOp op : kAllOps) {
        std::vector<size_t> counts = small_counts(n);
        counts.push_back(prime_count(dtype, 1, kSmallChunkBytes));
        for (size_t count : counts) {
          for (Placement placement : {Placement::kSeparate, Placement::kInPlace}) {
            Case c = reduction_case(CollectiveKind::kReduceScatter, dtype, op, count);
            c.placement = placement;
            c.chunk_bytes = count > 100 ? kSmallChunkBytes : 0;
            cases.push_back(c);
          }
        }
      }
    }
    for (Placement placement : {Placement::kSeparate, Placement::kInPlace}) {
      Case large = reduction_case(CollectiveKind::kReduceScatter, DType::F32, ReduceOp::SUM,
                                  large_count(DType::F32) / static_cast<size_t>(n));
      large.placement = placement;
      cases.push_back(large);
    }
    run_cases(n, cases);
  }
}

void test_all_to_all(void**) {
  for (int n : {1, 2, 3, 4, 5, 7, 8}) {
    const bool many_ranks = n > 4;
    std::vector<Case> cases;
    for (DType dtype : kAllDTypes) {
      if (many_ranks && dtype != DType::U8 && dtype != DType::I32 && dtype != DType::BF16) continue;
      std::vector<size_t> counts = small_counts(n);
      counts.push_back(prime_count(dtype, 1, kSmallChunkBytes));
      for (size_t count : counts) {
        for (Placement placement : {Placement::kSeparate, Placement::kInPlace}) {
          Case c;
          c.kind = CollectiveKind::kAllToAll;
          c.dtype = dtype;
          c.count = count;
          c.placement = placement;
          cases.push_back(c);
        }
      }
    }
    Case large;
    large.kind = CollectiveKind::kAllToAll;
    large.dtype = DType::I64;
    large.count = large_count(DType::I64) / static_cast<size_t>(n * n);
    large.placement = Placement::kInPlace;
    cases.push_back(large);
    run_cases(n, cases);
  }
}

// ---- barrier ------------------------------------------------------------------------------

// Nobody leaves round k before everyone has arrived at it, even when ranks
// arrive late on purpose.
void test_barrier(void**) {
  for (int n : {1, 2, 3, 4, 5, 7, 8}) {
    constexpr int kRounds = 20;
    InProcessGroup group(n);
    std::atomic<int> arrived{0};
    std::vector<std::string> problems(n);
    std::vector<std::thread> threads;
    for (int rank = 0; rank < n; ++rank) {
      threads.emplace_back([&, rank] {
        try {
          Channel& channel = group.channel(rank);
          CallSignature barrier;
          for (int round = 0; round < kRounds; ++round) {
            if ((round + rank) % 5 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
            ++arrived;
            channel.begin(dist::call_words(barrier), static_cast<uint64_t>(round), Clock::now() + kDeadline);
            run_collective(channel, CollectiveCall{barrier, nullptr, nullptr}, AlgorithmOptions{});
            channel.end();
            if (arrived.load() < n * (round + 1)) {
              problems[rank] = "rank " + std::to_string(rank) + " left round " + std::to_string(round) + " early";
            }
          }
        } catch (const dist::Error& error) {
          problems[rank] = error.what();
        }
      });
    }
    for (std::thread& thread : threads) thread.join();
    for (const std::string& problem : problems) {
      if (!problem.empty()) fail_msg("%d ranks: %s", n, problem.c_str());
    }
  }
}

// ---- Messages actually sent ---------------------------------------------------------------

// A Channel that counts what passes through it.
class CountingChannel : public Channel {
 public:
  explicit CountingChannel(Channel& inner) : inner_(inner) {}
  int rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  void begin(const dist::CallWords& call, uint64_t seq, dist::Deadline deadline) override {
    inner_.begin(call, seq, deadline);
  }
  void end() override { inner_.end(); }
  TransferId send(int peer, const void* data, size_t bytes) override {
    ++messages;
    bytes_sent += bytes;
    return inner_.send(peer, data, bytes);
  }
  TransferId recv(int peer, void* data, size_t bytes) override {
    ++messages;
    return inner_.recv(peer, data, bytes);
  }
  void wait(TransferId id) override { inner_.wait(id); }
  bool test(TransferId id) override { return inner_.test(id); }

  size_t messages = 0;
  size_t bytes_sent = 0;

 private:
  Channel& inner_;
};

struct Traffic {
  size_t messages = 0;
  size_t bytes_sent = 0;
};

// Runs `signature` once on n ranks with buffers large enough for any kind;
// returns each rank's traffic.
std::vector<Traffic> traffic_of(int n, const CallSignature& signature, const AlgorithmOptions& options) {
  InProcessGroup group(n);
  std::vector<Traffic> traffic(n);
  std::vector<std::string> problems(n);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < n; ++rank) {
    threads.emplace_back([&, rank] {
      try {
        CountingChannel channel(group.channel(rank));
        const size_t bytes = std::max<size_t>(1, signature.count * static_cast<size_t>(n) * 8);
        std::vector<double> send(bytes / 8 + 1, 1.0);
        std::vector<double> recv(bytes / 8 + 1, 0.0);
        channel.begin(dist::call_words(signature), 0, Clock::now() + kDeadline);
        run_collective(channel, CollectiveCall{signature, send.data(), recv.data()}, options);
        channel.end();
        traffic[rank] = {channel.messages, channel.bytes_sent};
      } catch (const dist::Error& error) {
        problems[rank] = error.what();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const std::string& problem : problems) {
    if (!problem.empty()) fail_msg("%s: %s", dist::describe(signature).c_str(), problem.c_str());
  }
  return traffic;
}

CallSignature signature_of(CollectiveKind kind, DType dtype, uint64_t count, int root = -1) {
  CallSignature s;
  s.kind = kind;
  s.dtype = dtype;
  s.root = root;
  s.count = count;
  return s;
}

const CollectiveKind kDataKinds[] = {CollectiveKind::kAllReduce, CollectiveKind::kReduce,
                                     CollectiveKind::kBroadcast, CollectiveKind::kAllGather,
                                     CollectiveKind::kReduceScatter, CollectiveKind::kAllToAll};

bool rooted(CollectiveKind kind) { return kind == CollectiveKind::kReduce || kind == CollectiveKind::kBroadcast; }

// One rank: no messages at all. Empty calls on several ranks: every rank still
// sends or receives, so it sees its peers' calls.
void test_message_counts(void**) {
  for (CollectiveKind kind : kDataKinds) {
    const auto alone = traffic_of(1, signature_of(kind, DType::F64, 7, rooted(kind) ? 0 : -1), {});
    assert_int_equal(alone[0].messages, 0);
    for (int n : {2, 3, 5}) {
      for (const char* algorithm : {"ring", "rabenseifner", "recursive_doubling"}) {
        AlgorithmOptions options;
        options.all_reduce = algorithm;
        const auto traffic = traffic_of(n, signature_of(kind, DType::F64, 0, rooted(kind) ? n - 1 : -1), options);
        for (int rank = 0; rank < n; ++rank) {
          if (traffic[rank].messages == 0) {
            fail_msg("%s (%s) on %d ranks: rank %d exchanged no message", dist::name(kind), algorithm, n, rank);
          }
        }
        if (kind != CollectiveKind::kAllReduce) break;
      }
    }
  }
  const auto alone = traffic_of(1, signature_of(CollectiveKind::kBarrier, DType::U8, 0), {});
  assert_int_equal(alone[0].messages, 0);
}

// The ring all-reduce sends every block but its own in the reduce-scatter
// pass and every block but its successor's in the all-gather pass: 2(n-1)/n
// of the message, nothing more.
void test_ring_moves_minimal_bytes(void**) {
  for (int n : {2, 3, 4, 5}) {
    const uint64_t count = 100003;
    AlgorithmOptions options;
    options.all_reduce = "ring";
    options.chunk_bytes = 8192;
    const auto traffic = traffic_of(n, signature_of(CollectiveKind::kAllReduce, DType::F32, count), options);
    for (int rank = 0; rank < n; ++rank) {
      auto block = [&](int b) { return count / n + (static_cast<uint64_t>(b) < count % n ? 1 : 0); };
      const uint64_t expected = (2 * count - block(rank) - block((rank + 1) % n)) * 4;
      assert_int_equal(traffic[rank].bytes_sent, expected);
    }
  }
}

// ---- Mismatches -------------------------------------------------------------------------

// Rank `odd` calls `other`, everyone else `usual`: every rank's call fails with
// kMismatch, and the message names both calls.
void expect_mismatch(int n, int odd, const CallSignature& usual, const CallSignature& other) {
  InProcessGroup group(n);
  std::vector<Status> statuses(n, Status::kOk);
  std::vector<std::string> messages(n);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < n; ++rank) {
    threads.emplace_back([&, rank] {
      const CallSignature& mine = rank == odd ? other : usual;
      const size_t bytes = std::max<uint64_t>(1, std::max(usual.count, other.count)) * static_cast<size_t>(n) * 8;
      std::vector<double> send(bytes / 8, 1.0);
      std::vector<double> recv(bytes / 8, 0.0);
      try {
        Channel& channel = group.channel(rank);
        channel.begin(dist::call_words(mine), 5, Clock::now() + kDeadline);
        run_collective(channel, CollectiveCall{mine, send.data(), recv.data()}, AlgorithmOptions{});
        channel.end();
      } catch (const dist::Error& error) {
        statuses[rank] = error.status();
        messages[rank] = error.what();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  const std::string usual_text = dist::describe(usual);
  const std::string other_text = dist::describe(other);
  for (int rank = 0; rank < n; ++rank) {
    if (statuses[rank] != Status::kMismatch) {
      fail_msg("%s vs %s on %d ranks: rank %d ended with status %d (%s)", usual_text.c_str(), other_text.c_str(), n,
               rank, static_cast<int>(statuses[rank]), messages[rank].c_str());
    }
    for (const std::string& needle : {usual_text, other_text, std::string("(call 5)")}) {
      if (messages[rank].find(needle) == std::string::npos) {
        fail_msg("rank %d: \"%s\" does not name \"%s\"", rank, messages[rank].c_str(), needle.c_str());
      }
    }
  }
}

void test_mismatch(void**) {
  const CallSignature all_reduce = signature_of(CollectiveKind::kAllReduce, DType::F32, 10);
  for (int n : {2, 3, 4}) {
    for (int odd : {0, n - 1}) {
      // Kinds.
      expect_mismatch(n, odd, all_reduce, signature_of(CollectiveKind::kBroadcast, DType::F32, 10, 0));
      expect_mismatch(n, odd, all_reduce, signature_of(CollectiveKind::kAllGather, DType::F32, 10));
      expect_mismatch(n, odd, all_reduce, signature_of(CollectiveKind::kReduce, DType::F32, 10, 0));
      expect_mismatch(n, odd, all_reduce, signature_of(CollectiveKind::kBarrier, DType::U8, 0));
      expect_mismatch(n, odd, signature_of(CollectiveKind::kAllToAll, DType::I32, 3),
                      signature_of(CollectiveKind::kReduceScatter, DType::I32, 3));
      // Counts, including an empty call and sizes that pick different algorithms.
      expect_mismatch(n, odd, all_reduce, signature_of(CollectiveKind::kAllReduce, DType::F32, 20));
      expect_mismatch(n, odd, all_reduce, signature_of(CollectiveKind::kAllReduce, DType::F32, 0));
      expect_mismatch(n, odd, all_reduce, signature_of(CollectiveKind::kAllReduce, DType::F32, 300000));
      // Dtypes (same element size too), ops.
      expect_mismatch(n, odd, all_reduce, signature_of(CollectiveKind::kAllReduce, DType::I32, 10));
      expect_mismatch(n, odd, all_reduce, signature_of(CollectiveKind::kAllReduce, DType::F64, 10));
      CallSignature max = all_reduce;
      max.op = ReduceOp::MAX;
      expect_mismatch(n, odd, all_reduce, max);
      // Roots: a rank that only sends (a broadcast root, a reduce leaf) fails too.
      expect_mismatch(n, odd, signature_of(CollectiveKind::kBroadcast, DType::I32, 4, 0),
                      signature_of(CollectiveKind::kBroadcast, DType::I32, 4, 1));
      expect_mismatch(n, odd, signature_of(CollectiveKind::kReduce, DType::I32, 4, 0),
                      signature_of(CollectiveKind::kReduce, DType::I32, 4, n - 1));
      expect_mismatch(n, odd, signature_of(CollectiveKind::kBroadcast, DType::I32, 0, 0),
                      signature_of(CollectiveKind::kBroadcast, DType::I32, 0, 1));
    }
  }
}

// ---- Argument checks and selection ----------------------------------------------------

void expect_error(Status status, const char* needle, const std::function<void()>& action) {
  try {
    action();
  } catch (const dist::Error& error) {
    if (error.status() != status || std::string(error.what()).find(needle) == std::string::npos) {
      fail_msg("got status %d \"%s\", expected status %d containing \"%s\"", static_cast<int>(error.status()),
               error.what(), static_cast<int>(status), needle);
    }
    return;
  }
  fail_msg("no error; expected one containing \"%s\"", needle);
}

// Errors found before any message is sent, on a single rank.
void test_argument_checks(void**) {
  std::vector<float> buffer(64, 1.0f);
  auto run = [&](const CallSignature& signature, const void* send, void* recv, const AlgorithmOptions& options) {
    InProcessGroup group(1);
    Channel& channel = group.channel(0);
    channel.begin(dist::call_words(signature), 0, Clock::now() + kDeadline);
    run_collective(channel, CollectiveCall{signature, send, recv}, options);
    channel.end();
  };
  const CallSignature sum = signature_of(CollectiveKind::kAllReduce, DType::F32, 16);
  expect_error(Status::kInvalidArgument, "overlap",
               [&] { run(sum, buffer.data(), buffer.data() + 4, {}); });
  expect_error(Status::kInvalidArgument, "not aligned to 4 bytes", [&] {
    run(sum, buffer.data(), reinterpret_cast<unsigned char*>(buffer.data() + 32) + 2, {});
  });
  AlgorithmOptions unknown;
  unknown.all_reduce = "butterfly";
  expect_error(Status::kInvalidArgument, "'butterfly'", [&] { run(sum, buffer.data(), buffer.data() + 32, unknown); });
  expect_error(Status::kInternal, "send buffer is null", [&] { run(sum, nullptr, buffer.data(), {}); });
  expect_error(Status::kInternal, "root 1", [&] {
    run(signature_of(CollectiveKind::kBroadcast, DType::F32, 4, 1), nullptr, buffer.data(), {});
  });
  CallSignature bad_dtype = sum;
  bad_dtype.dtype = static_cast<DType>(42);
  expect_error(Status::kInternal, "dtype 42", [&] { run(bad_dtype, buffer.data(), buffer.data() + 32, {}); });
  expect_error(Status::kInvalidArgument, "overflow", [&] {
    run(signature_of(CollectiveKind::kAllGather, DType::F64, UINT64_MAX / 4), buffer.data(), buffer.data() + 32, {});
  });
  // In place and empty calls are fine; a lone rank copies.
  run(sum, buffer.data(), buffer.data(), {});
  run(signature_of(CollectiveKind::kAllReduce, DType::F32, 0), nullptr, nullptr, {});
  std::vector<float> out(16, 0.0f);
  run(sum, buffer.data(), out.data(), {});
  assert_true(out[15] == 1.0f);
}

}  // namespace

int main() {
  const CMUnitTest tests[] = {
      cmocka_unit_test(test_all_reduce_small),  cmocka_unit_test(test_all_reduce_chunked),
      cmocka_unit_test(test_all_reduce_large),  cmocka_unit_test(test_reduce),
      cmocka_unit_test(test_broadcast),         cmocka_unit_test(test_all_gather),
      cmocka_unit_test(test_reduce_scatter),    cmocka_unit_test(test_all_to_all),
      cmocka_unit_test(test_barrier),           cmocka_unit_test(test_message_counts),
      cmocka_unit_test(test_ring_moves_minimal_bytes), cmocka_unit_test(test_mismatch),
      cmocka_unit_test(test_argument_checks),
  };
  return cmocka_run_group_tests_name("algorithms", tests, nullptr, nullptr);
}
