#include "variables/device_apply_gradients.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#include "gpu/cuda_memory.h"
#include "strategy/device_all_reduce.h"
#include "strategy/gpu_replicas.h"
#include "variables/device_copies.h"

namespace dist {
namespace {

// Elements [offset, offset + count) of variable `variable`, at `at` in a bucket.
struct Segment {
  size_t variable = 0;
  uint64_t offset = 0;
  uint64_t count = 0;
  uint64_t at = 0;
};

// The gradients of one dtype, in call order, cut into buckets of at most
// `per_bucket` elements (a large gradient spans several).
std::vector<std::vector<Segment>> buckets_of(const std::vector<size_t>& members,
                                             const std::vector<Variable*>& variables, uint64_t per_bucket) {
  std::vector<std::vector<Segment>> buckets(1);
  uint64_t filled = 0;
  for (size_t i : members) {
    uint64_t offset = 0;
    const uint64_t count = variables[i]->count();
    while (offset < count) {
      if (filled == per_bucket) {
        buckets.emplace_back();
        filled = 0;
      }
      const uint64_t take = std::min(count - offset, per_bucket - filled);
      buckets.back().push_back(Segment{i, offset, take, filled});
      offset += take;
      filled += take;
    }
  }
  if (buckets.back().empty()) buckets.pop_back();
  return buckets;
}

}  // namespace

void apply_gradients_on_devices(Strategy& strategy, const std::vector<Variable*>& variables,
                                const std::vector<std::vector<TensorRef>>& gradients, WorkerOptimizer& optimizer) {
  optimizer.begin_step();
  const int replicas = strategy.num_local_replicas();
  const int64_t in_sync = strategy.num_replicas_in_sync();
  GpuReplicas& gpus = *strategy.gpus();
  for (DType dtype : {DType::F32, DType::F64}) {
    std::vector<size_t> members;
    for (size_t i = 0; i < variables.size(); ++i) {
      if (variables[i]->dtype() == dtype) members.push_back(i);
    }
    const size_t element = size_of(dtype);
    uint64_t per_bucket = std::max<uint64_t>(1, strategy.bytes_per_pack() / element);
    if (strategy.num_packs()) {
      // TF's num_packs: the dtype's gradients in that many packs of about equal size.
      uint64_t total = 0;
      for (size_t i : members) total += variables[i]->count();
      const auto packs = static_cast<uint64_t>(*strategy.num_packs());
      per_bucket = std::max<uint64_t>(1, (total + packs - 1) / packs);
    }
    for (const std::vector<Segment>& bucket : buckets_of(members, variables, per_bucket)) {
      const uint64_t elements = bucket.back().at + bucket.back().count;
      // Each replica's gradients of the bucket, packed on its GPU in its
      // stream's order; host gradients go through pinned memory (a copy from
      // pageable memory would wait for the stream without a deadline).
      std::vector<TensorRef> sums;
      std::vector<PinnedBlock> staging;
      try {
        for (int r = 0; r < replicas; ++r) {
          const int device = strategy.replica_device(r);
          void* stream = strategy.replica_stream(r);
          auto* pack = static_cast<unsigned char*>(gpus.pack(r, elements * element, strategy.deadline()));
          PinnedBlock host(elements * element);
          bool from_host = false;
          for (const Segment& s : bucket) {
            const TensorRef& gradient = gradients[static_cast<size_t>(r)][s.variable];
            const auto* from = static_cast<const unsigned char*>(gradient.data) + s.offset * element;
            const size_t bytes = static_cast<size_t>(s.count) * element;
            if (gradient.on_device()) {
              DeviceScope producer(gradient.device);
              StreamMark mark(gradient.stream);
              DeviceScope on(device);
              mark.hold(stream);
              copy_between_devices_async(pack + s.at * element, device, from, gradient.device, bytes, stream);
            } else {
              std::memcpy(host.data() + s.at * element, from, bytes);
              DeviceScope on(device);
              copy_to_device_async(pack + s.at * element, host.data() + s.at * element, bytes, stream);
              from_host = true;
            }
          }
          if (from_host) staging.push_back(std::move(host));
          TensorRef sum{pack, elements, dtype};
          sum.memory = MemoryKind::kCuda;
          sum.stream = stream;
          sum.device = device;
          sums.push_back(sum);
        }
        // Waits for every replica's stream: the staging copies are done after it.
        all_reduce_on_devices(strategy, ReduceOp::SUM, sums);
      } catch (...) {
        for (PinnedBlock& block : staging) block.abandon();  // copies may still be running
        throw;
      }
      // Every replica steps its own copy from the same sums: the same bits.
      for (int r = 0; r < replicas; ++r) {
        for (const Segment& s : bucket) {
          const auto* sum = static_cast<const unsigned char*>(sums[static_cast<size_t>(r)].data) + s.at * element;
          optimizer.apply_on_device(*variables[s.variable], r, s.offset, sum, s.count, in_sync,
                                    strategy.replica_stream(r));
        }
      }
    }
  }
  const auto deadline = strategy.deadline();  // one for all the replicas
  for (int r = 0; r < replicas; ++r) {
    DeviceScope on(strategy.replica_device(r));
    StreamMark(strategy.replica_stream(r)).wait(deadline, "apply_gradients on the GPU replicas");
  }
}

}  // namespace dist
