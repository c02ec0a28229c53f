#include <algorithm>
#include <exception>
#include <optional>
#include <string>

#include "base/status.h"
#include "collectives/algorithm_thresholds.h"
#include "collectives/algorithms/block_layout.h"
#include "collectives/reduce_kernels.h"
#include "collectives/shm/algorithms.h"
#include "collectives/shm/memory_copy.h"
#include "collectives/shm/store_choice.h"

namespace dist {

void copy_others_slices(const ShmGroup& group, const PieceList& input, unsigned char* slot, size_t first,
                        size_t per_step, bool streamed) {
  const size_t element = input.element_bytes();
  const int n = group.size();
  const BlockLayout slices(std::min(per_step, input.count() - first), n);
  for (int r = 0; r < n; ++r) {
    if (r == group.rank()) continue;
    unsigned char* into = slot + slices.offset(r) * element;
    input.for_each_part(first + slices.offset(r), slices.size(r), [&](const unsigned char* data, size_t at, size_t k) {
      write_result(into + at * element, data, k * element, streamed);
    });
  }
}

namespace {

// Per step, with the chunk cut into n slices and rank r owning slice r:
//   1. each rank copies into its slot only the slices the others own (for the
//      next step already while it waits for the others in step 2);
//   2. rank r combines slice r of everyone (its own straight from its input)
//      into its slot and hands it to the sink;
//   3. each rank hands the other slices' results to the sink straight from
//      their owners' slots.
// Per rank and element that is about 4 bytes of memory traffic per byte of
// message (copy in (n-1)/n, combine, copy out (n-1)/n, with a sink that
// copies), against 5 for a direct combine of whole slots, and only (n-1)/n of
// it crosses cores.
//
// In steps of `step_bytes` (at most a slot).
void split_all_reduce(ShmGroup& group, const PieceList& input, const ResultSink& sink, DType dtype, ReduceOp op,
                      const PartFinisher* finish, size_t step_bytes) {
  if (finish != nullptr && op != ReduceOp::SUM) fail(Status::kInternal, "a piecewise all-reduce finishes only a SUM");
  const size_t element = size_of(dtype);
  const size_t per_step = step_bytes / element;
  const size_t count = input.count();
  const int n = group.size();
  const int me = group.rank();
  const void* inputs[kShmMaxRanks];
  // A sink that throws must not leave the others waiting halfway through the
  // call: the call runs to its end and the first failure is rethrown then.
  std::exception_ptr sink_failure;
  auto deliver = [&](size_t first, const unsigned char* reduced, size_t elements) {
    if (sink_failure || elements == 0) return;
    try {
      sink(first, reduced, elements);
    } catch (...) {
      sink_failure = std::current_exception();
    }
  };
  // A finisher that fails leaves its part unfinished, which the others must
  // not take for a result: the call fails at once, and the communicator's
  // failure reaches every peer, instead of running to its end.
  auto finish_own = [&](size_t first, const PartInputs& part, unsigned char* out, size_t elements) {
    try {
      (*finish)(first, part, out, elements);
    } catch (const Error&) {
      throw;
    } catch (const std::exception& e) {
      fail(Status::kInternal, std::string("finishing part of an all-reduce: ") + e.what());
    }
  };
  // Hands the finisher this rank's part at `out` of the step: the inputs as
  // they are, or reduced first when there are more than it adds up itself.
  auto finish_part = [&](size_t first_element, unsigned char* out, size_t elements) {
    if (static_cast<size_t>(n) <= kMaxPartInputs) {
      finish_own(first_element, PartInputs{inputs, static_cast<size_t>(n)}, out, elements);
      return;
    }
    reduce_many(out, inputs, static_cast<size_t>(n), elements, dtype, op);
    const void* reduced = out;
    finish_own(first_element, PartInputs{&reduced, 1}, out, elements);
  };
  std::optional<ChosenStores> stores;
  if (count * element >= kChosenCopyInStoresMinBytes) stores.emplace(group.copy_in_stores(), count * element);
  const bool streamed = stores && stores->streamed();
  auto copy_in = [&](unsigned char* slot, size_t first) {
    copy_others_slices(group, input, slot, first, per_step, streamed);
  };
  copy_in(group.my_slot(), 0);
  for_each_step(group, count, per_step, [&](size_t first, size_t elements) {
    const BlockLayout slices(elements, n);
    unsigned char* slot = group.my_slot();
    group.arrive_and_wait();

    const size_t mine = slices.offset(me) * element;
    input.for_each_part(first + slices.offset(me), slices.size(me), [&](const unsigned char* data, size_t at, size_t k) {
      unsigned char* out = slot + mine + at * element;
      for (int r = 0; r < n; ++r) inputs[r] = r == me ? data : group.slot(r) + mine + at * element;
      if (finish == nullptr) {
        reduce_many(out, inputs, static_cast<size_t>(n), k, dtype, op);
      } else {
        finish_part(first + slices.offset(me) + at, out, k);
      }
    });
    if (op == ReduceOp::MEAN) finalize_mean(slot + mine, slices.size(me), dtype, n);
    group.publish_reduced();
    if (finish == nullptr) deliver(first + slices.offset(me), slot + mine, slices.size(me));
    // While the others finish combining, read the next step's input: the
    // memory traffic overlaps the wait instead of following it.
    if (first + elements < count) copy_in(group.my_next_slot(), first + elements);
    group.wait_reduced();

    for (int r = 0; r < n; ++r) {
      if (r == me) continue;
      deliver(first + slices.offset(r), group.slot(r) + slices.offset(r) * element, slices.size(r));
    }
  });
  if (sink_failure) std::rethrow_exception(sink_failure);
  if (stores) stores->finished();
}

}  // namespace

void shm_allreduce_split(ShmGroup& group, const PieceList& input, const ResultSink& sink, DType dtype, ReduceOp op,
                         const PartFinisher* finish) {
  split_all_reduce(group, input, sink, dtype, op, finish, group.step_bytes());
}

void shm_allreduce_split(ShmGroup& group, const void* send, void* recv, size_t count, DType dtype, ReduceOp op) {
  const size_t element = size_of(dtype);
  const Piece whole{send, count};
  const PieceList input(&whole, 1, element);
  auto* out = static_cast<unsigned char*>(recv);
  const bool streamed = streams_result(send, recv, count * element);
  auto write_out = [out, element, streamed](size_t first, const void* reduced, size_t elements) {
    write_result(out + first * element, reduced, elements * element, streamed);
  };
  // A result that overwrites its input takes the short step, which keeps the
  // lines it overwrites cached; into a separate buffer, the whole slot.
  const size_t step_bytes = send == recv ? group.step_bytes() : group.slot_bytes();
  split_all_reduce(group, input, ResultSink(write_out), dtype, op, nullptr, step_bytes);
}

}  // namespace dist
