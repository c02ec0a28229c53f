#include "verify.h"

#include <cstdio>
#include <cstring>
#include <string>

#include "base/status.h"

namespace dist::bench {

namespace {

// Never a result, so an output that was not written shows up.
constexpr int64_t kPoison = -7;

// Inputs of the reductions: 1..3, so a sum over n ranks stays at or below 3n.
int64_t reduce_input(int rank, uint64_t position) { return 1 + static_cast<int64_t>((position + rank) % 3); }
constexpr int64_t kLargestReduceInput = 3;

// Inputs of the collectives that move data: 1..101, exact in every dtype, and
// different for every rank below 101 at one position.
int64_t data(int rank, uint64_t position) { return 1 + static_cast<int64_t>((7 * static_cast<uint64_t>(rank) + position) % 101); }

// all_to_all: block `to` of rank `from`'s send buffer; sender and receiver
// both change the value (101 is prime and does not divide 11, 5 or 6).
int64_t exchanged(int from, int to, uint64_t position) {
  return 1 + static_cast<int64_t>((11 * static_cast<uint64_t>(from) + 5 * static_cast<uint64_t>(to) + position) % 101);
}

bool is_reduction(dist_collective_t c) {
  return c == DIST_COLLECTIVE_ALL_REDUCE || c == DIST_COLLECTIVE_REDUCE || c == DIST_COLLECTIVE_REDUCE_SCATTER;
}

// The sum over ranks of reduce_input depends on position % 3 only.
struct RankSums {
  int64_t by_residue[3] = {0, 0, 0};
  RankSums(int ranks) {
    for (int k = 0; k < 3; ++k) {
      for (int q = 0; q < ranks; ++q) by_residue[k] += reduce_input(q, static_cast<uint64_t>(k));
    }
  }
  int64_t at(uint64_t position) const { return by_residue[position % 3]; }
};

void fill(const Dtype& dtype, void* array, uint64_t count, int64_t value) {
  for (uint64_t i = 0; i < count; ++i) store_integer(dtype, array, i, value);
}

// The input this rank contributes.
void fill_input(dist_collective_t c, const Dtype& dtype, const Layout& l, void* send, void* recv, int rank) {
  fill(dtype, recv, l.recv_count, kPoison);
  for (uint64_t i = 0; i < l.send_count; ++i) {
    switch (c) {
      case DIST_COLLECTIVE_ALL_GATHER: store_integer(dtype, send, i, data(rank, i)); break;
      case DIST_COLLECTIVE_ALL_TO_ALL: store_integer(dtype, send, i, exchanged(rank, static_cast<int>(i / l.block), i % l.block)); break;
      default: store_integer(dtype, send, i, reduce_input(rank, i)); break;
    }
  }
  if (c == DIST_COLLECTIVE_BROADCAST && rank == kRoot) {
    for (uint64_t i = 0; i < l.recv_count; ++i) store_integer(dtype, recv, i, data(kRoot, i));
  }
  // In place the input is the result buffer.
  if (l.in_place) std::memcpy(recv, send, static_cast<size_t>(l.send_count * dtype.size));
}

// What element i of this rank's result must be.
int64_t expected(dist_collective_t c, const Layout& l, const RankSums& sums, int rank, uint64_t i) {
  switch (c) {
    case DIST_COLLECTIVE_BROADCAST: return data(kRoot, i);
    case DIST_COLLECTIVE_ALL_GATHER: return data(static_cast<int>(i / l.block), i % l.block);
    case DIST_COLLECTIVE_REDUCE_SCATTER: return sums.at(static_cast<uint64_t>(rank) * l.block + i);
    case DIST_COLLECTIVE_ALL_TO_ALL: return exchanged(static_cast<int>(i / l.block), rank, i % l.block);
    default: return sums.at(i);  // all_reduce, reduce
  }
}

// "" when every element is right, else what the first wrong one is.
std::string first_wrong_element(dist_collective_t c, const Dtype& dtype, const Layout& l, const void* recv, int rank,
                                int ranks) {
  if (c == DIST_COLLECTIVE_REDUCE && rank != kRoot) return "";
  const RankSums sums(ranks);
  const auto* result = static_cast<const unsigned char*>(recv);
  unsigned char want[8];
  for (uint64_t i = 0; i < l.recv_count; ++i) {
    const int64_t value = expected(c, l, sums, rank, i);
    store_integer(dtype, want, 0, value);
    if (std::memcmp(result + i * dtype.size, want, dtype.size) != 0) {
      char text[160];
      std::snprintf(text, sizeof text, "element %llu of %llu on rank %d is %.17g, expected %.17g",
                    static_cast<unsigned long long>(i), static_cast<unsigned long long>(l.recv_count), rank,
                    load_as_double(dtype, recv, i), load_as_double(dtype, want, 0));
      return text;
    }
  }
  return "";
}

}  // namespace

void require_exact_check(dist_collective_t collective, const Dtype& dtype, int ranks) {
  if (!is_reduction(collective) || dtype.exact_limit == 0) return;
  if (kLargestReduceInput * ranks > dtype.exact_limit) {
    fail_invalid("--dtype " + std::string(dtype.name) + ": the check's sums over " + std::to_string(ranks) +
                 " ranks would exceed " + std::to_string(dtype.exact_limit) +
                 ", beyond which it is not exact; use --no-check or fewer ranks");
  }
}

double max_over_ranks(dist_comm_t* comm, double value) {
  dist_buffer_t b{};
  b.data = &value;
  b.count = 1;
  b.dtype = DIST_DTYPE_F64;
  b.memory_kind = DIST_MEMORY_HOST;
  check_status(dist_all_reduce(comm, nullptr, &b, DIST_OP_MAX, nullptr), "all_reduce (max over ranks)");
  return value;
}

void verify_collective(dist_comm_t* comm, dist_collective_t collective, const Dtype& dtype, const Layout& layout,
                       void* send, void* recv, const Placement& where, int rank, int ranks) {
  if (collective == DIST_COLLECTIVE_BARRIER) {
    call_collective(comm, collective, dtype, layout, send, recv);  // no data: completing is the check
    return;
  }
  fill_input(collective, dtype, layout, send, recv, rank);
  const size_t send_bytes = static_cast<size_t>(layout.send_count * dtype.size);
  const size_t recv_bytes = static_cast<size_t>(layout.recv_count * dtype.size);
  where.upload(send, send_bytes, recv, recv_bytes);
  call_collective(comm, collective, dtype, layout, where.send(send), where.recv(recv), where.memory_kind(),
                  where.stream());
  where.download(recv, recv_bytes);
  const std::string wrong = first_wrong_element(collective, dtype, layout, recv, rank, ranks);
  const std::string what = std::string(collective_name(collective)) + " " + dtype.name + " at " +
                           std::to_string(layout.csv_bytes) + " bytes: wrong result, ";
  // Said before the ranks agree: once another rank fails, a launcher may end
  // this one before it could say which element was wrong.
  if (!wrong.empty()) {
    std::fprintf(stderr, "dist-bench: %s%s\n", what.c_str(), wrong.c_str());
    std::fflush(stderr);
  }
  const bool any_wrong = max_over_ranks(comm, wrong.empty() ? 0.0 : 1.0) > 0.0;
  if (!any_wrong) return;
  if (!wrong.empty()) throw CheckReported();
  fail(Status::kInternal, what + "seen on another rank");
}

}  // namespace dist::bench
