// The piecewise all-reduce (collectives/piecewise.h) on the shared-memory
// path, with the ranks as threads of this process mapping one real segment:
// pieces cut anywhere (empty ones included) against references computed here,
// every element handed over exactly once and each part within one slot, MEAN,
// several rank counts, a sink that throws on one rank, which must not leave
// the others waiting, and a finisher that rewrites each part on its owner (or
// fails, which must fail every rank). Plus PieceList's addressing on its own,
// and the buffer all-reduce with a slot larger than a step: whole slots into a
// separate result, shorter steps in place.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "collectives/piecewise.h"
#include "collectives/shm/algorithms.h"
#include "collectives/shm/group.h"
#include "collectives/shm/run_shm.h"
#include "collectives/shm/segment.h"
#include "internal_test_support.h"
#include "shm_ranks.h"

namespace {

using dist::DType;
using dist::Piece;
using dist::PieceList;
using dist::ReduceOp;

constexpr size_t kSlotBytes = 4096;  // many steps for small inputs

// ---- PieceList on its own --------------------------------------------------------

struct Span {
  size_t piece, offset, at, elements;
};

std::vector<Span> spans_of(const PieceList& list, size_t first, size_t count) {
  std::vector<Span> spans;
  list.for_each_span(first, count, [&](size_t piece, size_t offset, size_t at, size_t elements) {
    spans.push_back(Span{piece, offset, at, elements});
  });
  return spans;
}

void test_piece_list_addressing(void** state) {
  (void)state;
  std::vector<int32_t> a(3), b(5);
  // Empty pieces at the front, in the middle and at the end.
  const Piece pieces[] = {{nullptr, 0}, {a.data(), 3}, {nullptr, 0}, {nullptr, 0}, {b.data(), 5}, {nullptr, 0}};
  const PieceList list(pieces, 6, sizeof(int32_t));
  assert_int_equal(list.count(), 8);

  std::vector<Span> all = spans_of(list, 0, 8);
  assert_int_equal(all.size(), 2);
  assert_true(all[0].piece == 1 && all[0].offset == 0 && all[0].at == 0 && all[0].elements == 3);
  assert_true(all[1].piece == 4 && all[1].offset == 0 && all[1].at == 3 && all[1].elements == 5);

  // A range starting exactly at a piece boundary skips the empty pieces there.
  std::vector<Span> tail = spans_of(list, 3, 2);
  assert_int_equal(tail.size(), 1);
  assert_true(tail[0].piece == 4 && tail[0].offset == 0 && tail[0].at == 0 && tail[0].elements == 2);

  // Straddling the boundary.
  std::vector<Span> across = spans_of(list, 2, 3);
  assert_int_equal(across.size(), 2);
  assert_true(across[0].piece == 1 && across[0].offset == 2 && across[0].elements == 1);
  assert_true(across[1].piece == 4 && across[1].offset == 0 && across[1].at == 1 && across[1].elements == 2);

  // for_each_part gives the element's address.
  list.for_each_part(4, 1, [&](const unsigned char* data, size_t at, size_t elements) {
    assert_ptr_equal(data, reinterpret_cast<const unsigned char*>(b.data() + 1));
    assert_int_equal(at, 0);
    assert_int_equal(elements, 1);
  });
  assert_int_equal(spans_of(list, 8, 0).size(), 0);

  // One piece, and no pieces at all.
  const PieceList one(&pieces[4], 1, sizeof(int32_t));
  std::vector<Span> middle = spans_of(one, 1, 3);
  assert_true(middle.size() == 1 && middle[0].offset == 1 && middle[0].elements == 3);
  const PieceList none(pieces, 0, sizeof(int32_t));
  assert_int_equal(none.count(), 0);
  assert_int_equal(spans_of(none, 0, 0).size(), 0);
}

// ---- the all-reduce, one thread per rank ----------------------------------------

// Rank r's element i of the concatenated input: small integers, so that sums
// and means are exact in double.
double input_value(int rank, size_t i) { return static_cast<double>((i * 7 + static_cast<size_t>(rank) * 3) % 23); }

struct Delivered {
  std::vector<double> value;
  std::vector<int> times;
  std::vector<double> finished_value;  // what this rank's finisher was given
  std::vector<int> finished_times;
  std::vector<size_t> finished_inputs;  // how many inputs the finisher added up
  size_t largest_part = 0;
};

// Runs one piecewise all-reduce of `sizes` (pieces of f64) on `n` threads.
// `throwing_rank`'s sink throws on its third part (-1: none). Returns what
// each rank received and what each rank's call threw.
struct RunResult {
  std::vector<Delivered> delivered;
  std::vector<std::string> errors;
};

dist::CallSignature f64_all_reduce(size_t count, ReduceOp op) {
  dist::CallSignature signature;
  signature.kind = dist::CollectiveKind::kAllReduce;
  signature.dtype = DType::F64;
  signature.op = op;
  signature.count = count;
  return signature;
}

// Finisher modes: none; each owner rewrites its part to 10 * sum + 1; or the
// finisher of `throwing_rank` throws.
enum class Finish { kNone, kRewrite, kThrow };

RunResult run_piecewise(int n, const std::vector<size_t>& sizes, ReduceOp op, int throwing_rank,
                        Finish finish_mode = Finish::kNone) {
  size_t total = 0;
  for (size_t s : sizes) total += s;
  RunResult result;
  result.delivered.resize(static_cast<size_t>(n));
  result.errors = run_ranks("piecewise", n, kSlotBytes, [&](dist::ShmGroup& group, int r) {
    // Each piece in its own allocation, as a model's tensors are.
    std::vector<std::vector<double>> storage;
    std::vector<Piece> pieces;
    size_t position = 0;
    for (size_t s : sizes) {
      storage.emplace_back(s);
      for (size_t k = 0; k < s; ++k) storage.back()[k] = input_value(r, position + k);
      position += s;
    }
    for (auto& piece : storage) pieces.push_back(Piece{piece.data(), piece.size()});
    const PieceList list(pieces.data(), pieces.size(), sizeof(double));
    Delivered& mine = result.delivered[static_cast<size_t>(r)];
    mine.value.assign(total, -1);
    mine.times.assign(total, 0);
    mine.finished_value.assign(total, -1);
    mine.finished_times.assign(total, 0);
    mine.finished_inputs.assign(total, 0);
    int parts = 0;
    auto finish = [&](size_t first, const dist::PartInputs& inputs, void* out, size_t count) {
      if (finish_mode == Finish::kThrow && r == throwing_rank) throw std::runtime_error("finisher failed");
      auto* values = static_cast<double*>(out);
      for (size_t k = 0; k < count; ++k) {
        // Each element is read from every input before it is written: with
        // one input, `out` may be that input.
        double sum = 0;
        for (size_t p = 0; p < inputs.size; ++p) sum += static_cast<const double*>(inputs.buffers[p])[k];
        mine.finished_value[first + k] = sum;
        mine.finished_inputs[first + k] = inputs.size;
        ++mine.finished_times[first + k];
        values[k] = 10 * sum + 1;
      }
    };
    auto record = [&](size_t first, const void* reduced, size_t count) {
      if (r == throwing_rank && finish_mode == Finish::kNone && ++parts == 3) {
        throw std::runtime_error("sink failed on purpose");
      }
      const auto* values = static_cast<const double*>(reduced);
      for (size_t k = 0; k < count; ++k) {
        mine.value[first + k] = values[k];
        ++mine.times[first + k];
      }
      mine.largest_part = std::max(mine.largest_part, count * sizeof(double));
    };
    group.begin(f64_all_reduce(total, op), 1, std::chrono::seconds(30));
    const dist::PartFinisher finisher(finish);
    dist::shm_allreduce_split(group, list, dist::ResultSink(record), DType::F64, op,
                              finish_mode == Finish::kNone ? nullptr : &finisher);
  });
  return result;
}

void check_against_reference(const RunResult& run, int n, size_t total, ReduceOp op, int skip_rank) {
  for (int r = 0; r < n; ++r) {
    if (r == skip_rank) continue;
    const Delivered& d = run.delivered[static_cast<size_t>(r)];
    if (!run.errors[static_cast<size_t>(r)].empty()) fail_msg("rank %d: %s", r, run.errors[r].c_str());
    if (d.largest_part > kSlotBytes) fail_msg("rank %d got a part of %zu bytes", r, d.largest_part);
    for (size_t i = 0; i < total; ++i) {
      double want = 0;
      for (int q = 0; q < n; ++q) want += input_value(q, i);
      if (op == ReduceOp::MEAN) want /= n;
      if (d.times[i] != 1 || d.value[i] != want) {
        fail_msg("%d ranks, rank %d, element %zu of %zu: delivered %d times, %g, expected %g once", n, r, i, total,
                 d.times[i], d.value[i], want);
      }
    }
  }
}

void test_piecewise_sum_and_mean(void** state) {
  (void)state;
  // 512 doubles fill one slot: pieces cross steps and slices anywhere.
  const std::vector<std::vector<size_t>> layouts = {
      {0},                           // nothing at all
      {1},                           // one element
      {0, 7, 0, 1, 511, 0, 2, 1025},  // empty pieces between odd ones
      {3000},                        // one piece over several steps
      {513, 0, 100, 4099, 0},        // a few steps, ending on an empty piece
  };
  for (int n = 2; n <= 4; ++n) {
    for (const auto& sizes : layouts) {
      size_t total = 0;
      for (size_t s : sizes) total += s;
      for (ReduceOp op : {ReduceOp::SUM, ReduceOp::MEAN}) {
        check_against_reference(run_piecewise(n, sizes, op, -1), n, total, op, -1);
      }
    }
  }
}

void test_piecewise_sink_failure_finishes_the_call(void** state) {
  (void)state;
  const std::vector<size_t> sizes = {700, 0, 2100};
  const RunResult run = run_piecewise(3, sizes, ReduceOp::SUM, 1);
  // The failing rank reports its sink's error after the call has ended...
  assert_string_equal(run.errors[1].c_str(), "sink failed on purpose");
  // ...and the others got every element, as if nothing had happened.
  check_against_reference(run, 3, 2800, ReduceOp::SUM, 1);
}

// With a finisher, each element is finished by exactly one rank (given
// inputs that add up to the reduced value) and received by every other rank
// as the finisher left it; a rank's sink never sees the parts it finished.
void test_piecewise_finisher_rewrites_parts(void** state) {
  (void)state;
  const std::vector<size_t> sizes = {0, 700, 1, 0, 2100};
  for (int n = 2; n <= 3; ++n) {
    const RunResult run = run_piecewise(n, sizes, ReduceOp::SUM, -1, Finish::kRewrite);
    for (size_t i = 0; i < 2801; ++i) {
      double sum = 0;
      for (int q = 0; q < n; ++q) sum += input_value(q, i);
      int finishers = 0;
      for (int r = 0; r < n; ++r) {
        const Delivered& d = run.delivered[static_cast<size_t>(r)];
        if (!run.errors[static_cast<size_t>(r)].empty()) fail_msg("rank %d: %s", r, run.errors[r].c_str());
        if (d.finished_times[i] + d.times[i] != 1) {
          fail_msg("%d ranks, rank %d, element %zu: finished %d times and received %d times", n, r, i,
                   d.finished_times[i], d.times[i]);
        }
        if (d.finished_times[i] == 1) {
          ++finishers;
          if (d.finished_value[i] != sum) fail_msg("element %zu finished from %g, not the sum %g", i, d.finished_value[i], sum);
          // Two ranks' inputs are added up by the finisher; more are reduced
          // first and handed over as one.
          const size_t inputs = n == 2 ? 2 : 1;
          if (d.finished_inputs[i] != inputs) {
            fail_msg("%d ranks, element %zu: the finisher got %zu inputs, not %zu", n, i, d.finished_inputs[i], inputs);
          }
        } else if (d.value[i] != 10 * sum + 1) {
          fail_msg("rank %d received %g for element %zu, not the finished %g", r, d.value[i], i, 10 * sum + 1);
        }
      }
      if (finishers != 1) fail_msg("element %zu was finished by %d ranks", i, finishers);
    }
  }
}

// A finisher that fails must not let the others take its unfinished part
// for a result: every rank's call fails.
void test_piecewise_finisher_failure_fails_everyone(void** state) {
  (void)state;
  const RunResult run = run_piecewise(2, {5000}, ReduceOp::SUM, 0, Finish::kThrow);
  for (int r = 0; r < 2; ++r) {
    if (run.errors[static_cast<size_t>(r)].empty()) fail_msg("rank %d's call succeeded", r);
  }
  if (run.errors[0].find("finisher failed") == std::string::npos) fail_msg("rank 0: %s", run.errors[0].c_str());
}

// The split all-reduce of whole buffers on `n` threads over a segment whose
// slot is larger than kShmStepBytes, out of place (steps of the slot) and
// then in place (steps of kShmStepBytes), each against the sums.
void run_buffer_split(int n) {
  constexpr size_t kBigSlot = dist::kShmStepBytes + 8192;
  const size_t count = 3 * kBigSlot / sizeof(double) + 5;  // a partial last step either way
  std::vector<std::vector<double>> separate(static_cast<size_t>(n)), in_place(static_cast<size_t>(n));
  fail_on_errors(run_ranks("split-steps", n, kBigSlot, [&](dist::ShmGroup& group, int r) {
    std::vector<double> input(count);
    for (size_t i = 0; i < count; ++i) input[i] = input_value(r, i);
    const dist::CallSignature signature = f64_all_reduce(count, ReduceOp::SUM);
    const std::chrono::milliseconds timeout = std::chrono::seconds(30);
    std::vector<double>& out = separate[static_cast<size_t>(r)];
    out.assign(count, -1);
    group.begin(signature, 1, timeout);
    dist::run_shm_algorithm(group, {signature, input.data(), out.data()});
    std::vector<double>& both = in_place[static_cast<size_t>(r)];
    both = input;
    group.begin(signature, 2, timeout);
    dist::run_shm_algorithm(group, {signature, both.data(), both.data()});
  }));
  for (int r = 0; r < n; ++r) {
    for (size_t i = 0; i < count; ++i) {
      double want = 0;
      for (int q = 0; q < n; ++q) want += input_value(q, i);
      const double got_separate = separate[static_cast<size_t>(r)][i];
      const double got_in_place = in_place[static_cast<size_t>(r)][i];
      if (got_separate != want || got_in_place != want) {
        fail_msg("%d ranks, rank %d, element %zu of %zu: %g into a separate buffer, %g in place, expected %g", n, r, i,
                 count, got_separate, got_in_place, want);
      }
    }
  }
}

void test_buffer_split_with_a_slot_larger_than_a_step(void** state) {
  (void)state;
  for (int n = 2; n <= 3; ++n) run_buffer_split(n);
}

// Steps of up to kShmInlineBytes travel in the call record, larger ones in
// the slot, and a call's last step may be small after large ones. The direct
// all-reduce, broadcast, all-gather and reduce over a 4 KiB slot (512 doubles
// a step), for counts whose last step is 8, 16 or 24 bytes, against
// references.
void run_small_and_large_steps(int n) {
  const std::vector<size_t> counts = {1, 2, 3, 512, 513, 514, 515, 1026};
  fail_on_errors(run_ranks("steps", n, kSlotBytes, [&](dist::ShmGroup& group, int r) {
    const std::chrono::milliseconds timeout = std::chrono::seconds(30);
    uint64_t seq = 0;
    auto call = [&](dist::CollectiveKind kind, size_t count, int root) {
      dist::CallSignature signature = f64_all_reduce(count, ReduceOp::SUM);
      signature.kind = kind;
      signature.root = root;
      group.begin(signature, ++seq, timeout);
    };
    // A wrong element fails this rank's run (and, through the shared
    // failure state, stops the others).
    auto expect = [&](const char* what, size_t count, size_t i, double got, double want) {
      if (got != want) {
        throw std::runtime_error(std::string(what) + " of " + std::to_string(count) + " doubles: [" +
                                 std::to_string(i) + "] = " + std::to_string(got) + ", expected " +
                                 std::to_string(want));
      }
    };
    for (size_t count : counts) {
      std::vector<double> input(count), out(count, -1);
      for (size_t i = 0; i < count; ++i) input[i] = input_value(r, i);
      call(dist::CollectiveKind::kAllReduce, count, -1);
      dist::shm_allreduce_direct(group, input.data(), out.data(), count, DType::F64, ReduceOp::SUM);
      for (size_t i = 0; i < count; ++i) {
        double sum = 0;
        for (int q = 0; q < n; ++q) sum += input_value(q, i);
        expect("all-reduce", count, i, out[i], sum);
      }
      const int root = n - 1;
      std::vector<double> buffer = input;
      call(dist::CollectiveKind::kBroadcast, count, root);
      dist::shm_broadcast(group, buffer.data(), count, DType::F64, root);
      for (size_t i = 0; i < count; ++i) expect("broadcast", count, i, buffer[i], input_value(root, i));
      std::vector<double> gathered(count * static_cast<size_t>(n), -1);
      call(dist::CollectiveKind::kAllGather, count, -1);
      dist::shm_allgather(group, input.data(), gathered.data(), count, DType::F64, false);
      for (size_t i = 0; i < gathered.size(); ++i) {
        expect("all-gather", count, i, gathered[i], input_value(static_cast<int>(i / count), i % count));
      }
      std::vector<double> reduced(count, -1);
      call(dist::CollectiveKind::kReduce, count, 0);
      dist::shm_reduce(group, input.data(), r == 0 ? reduced.data() : nullptr, count, DType::F64, ReduceOp::MAX, 0);
      for (size_t i = 0; i < count && r == 0; ++i) {
        double most = input_value(0, i);
        for (int q = 1; q < n; ++q) most = std::max(most, input_value(q, i));
        expect("reduce (max)", count, i, reduced[i], most);
      }
    }
  }));
}

void test_small_steps_in_the_record_large_ones_in_the_slot(void** state) {
  (void)state;
  for (int n = 2; n <= 3; ++n) run_small_and_large_steps(n);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_piece_list_addressing),
      cmocka_unit_test(test_piecewise_sum_and_mean),
      cmocka_unit_test(test_piecewise_sink_failure_finishes_the_call),
      cmocka_unit_test(test_piecewise_finisher_rewrites_parts),
      cmocka_unit_test(test_piecewise_finisher_failure_fails_everyone),
      cmocka_unit_test(test_buffer_split_with_a_slot_larger_than_a_step),
      cmocka_unit_test(test_small_steps_in_the_record_large_ones_in_the_slot),
  };
  return cmocka_run_group_tests_name("shm_piecewise", tests, nullptr, nullptr);
}
