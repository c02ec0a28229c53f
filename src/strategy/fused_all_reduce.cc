#include "strategy/fused_all_reduce.h"

#ifdef DIST_HAVE_CUDA
#include "strategy/device_all_reduce.h"
#endif

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <deque>
#include <exception>
#include <memory>
#include <string>

#include "base/timeline.h"
#include "collectives/piecewise.h"
#include "collectives/reduce_kernels.h"

namespace dist {
namespace {

// Collectives in flight at once, besides the bucket being packed.
constexpr size_t kMaxInFlight = 3;

struct Bucket {
  std::vector<unsigned char>* storage = nullptr;  // null when the data is the caller's tensor
  unsigned char* data = nullptr;
  DType dtype = DType::F32;
  uint64_t count = 0;
  std::vector<FusedSegment> segments;
  std::shared_ptr<Operation> operation;
  int64_t opened_ns = 0;  // while a timeline records: when packing began
};

void check_tensors(const Strategy& strategy, const std::vector<std::vector<TensorRef>>& per_replica) {
  if (static_cast<int>(per_replica.size()) != strategy.num_local_replicas()) {
    fail_invalid(std::to_string(per_replica.size()) + " replicas' tensors given for " +
                 std::to_string(strategy.num_local_replicas()) + " local replicas");
  }
  const std::vector<TensorRef>& first = per_replica[0];
  for (size_t r = 1; r < per_replica.size(); ++r) {
    for (size_t i = 0; i < first.size(); ++i) {
      const TensorRef& t = per_replica[r][i];
      if (t.dtype != first[i].dtype || t.count != first[i].count) {
        fail_invalid("replica " + std::to_string(r) + "'s tensor " + std::to_string(i) + " is " + name(t.dtype) + "[" +
                     std::to_string(t.count) + "] but replica 0's is " + name(first[i].dtype) + "[" +
                     std::to_string(first[i].count) + "]");
      }
    }
  }
}

// The tensors are reduced in place (and, with one replica, sent from where they
// lie): two that share memory would be reduced twice.
void check_disjoint(const std::vector<std::vector<TensorRef>>& per_replica) {
  struct Span {
    uintptr_t begin, end;
    size_t replica, tensor;
  };
  std::vector<Span> spans;
  for (size_t r = 0; r < per_replica.size(); ++r) {
    for (size_t i = 0; i < per_replica[r].size(); ++i) {
      const TensorRef& t = per_replica[r][i];
      if (t.count == 0) continue;
      const auto begin = reinterpret_cast<uintptr_t>(t.data);
      spans.push_back(Span{begin, begin + t.bytes(), r, i});
    }
  }
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.begin < b.begin; });
  for (size_t k = 1; k < spans.size(); ++k) {
    if (spans[k].begin < spans[k - 1].end) {
      fail_invalid("replica " + std::to_string(spans[k].replica) + "'s tensor " + std::to_string(spans[k].tensor) +
                   " overlaps replica " + std::to_string(spans[k - 1].replica) + "'s tensor " +
                   std::to_string(spans[k - 1].tensor) + " in memory");
    }
  }
}

// The tensors' dtypes in the order they first appear: every worker fuses
// them in this order, one dtype at a time.
std::vector<DType> dtypes_in_order(const std::vector<TensorRef>& tensors) {
  std::vector<DType> dtypes;
  for (const TensorRef& t : tensors) {
    if (std::find(dtypes.begin(), dtypes.end(), t.dtype) == dtypes.end()) dtypes.push_back(t.dtype);
  }
  return dtypes;
}

class FusionPipeline {
 public:
  FusionPipeline(Strategy& strategy, ReduceOp op, const std::vector<std::vector<TensorRef>>& per_replica,
                 const FusedConsumer& consume)
      : strategy_(strategy), op_(op), per_replica_(per_replica), consume_(consume) {
    for (auto& storage : strategy.fusion_buffers()) free_.push_back(&storage);
  }

  // Waits for what is still on the wire before the buffers go away.
  ~FusionPipeline() {
    for (Bucket& bucket : in_flight_) bucket.operation->wait_for(std::chrono::milliseconds(-1));
  }

  void run() {
    const std::vector<TensorRef>& tensors = per_replica_[0];
    const std::vector<DType> dtypes = dtypes_in_order(tensors);
    // With one local replica there is nothing to combine, so a large tensor can
    // go on the wire from where it lies, sparing a copy in and a copy out.
    const bool zero_copy = per_replica_.size() == 1;
    for (DType dtype : dtypes) {
      // No bucket larger than the dtype's tensors together: a small model does
      // not pay for bytes_per_pack of memory it cannot fill.
      uint64_t total = 0;
      for (const TensorRef& t : tensors) total += t.dtype == dtype ? t.count : 0;
      const uint64_t pack = std::max<uint64_t>(1, strategy_.bytes_per_pack() / size_of(dtype));
      const uint64_t capacity = std::max<uint64_t>(1, std::min(total, pack));
      Bucket bucket;
      for (size_t i = 0; i < tensors.size(); ++i) {
        if (tensors[i].dtype != dtype) continue;
        if (zero_copy && tensors[i].count >= std::max<uint64_t>(1, pack / 16)) {
          for (uint64_t offset = 0; offset < tensors[i].count; offset += capacity) {
            send_in_place(i, offset, std::min(capacity, tensors[i].count - offset), dtype);
          }
          continue;
        }
        for (uint64_t offset = 0; offset < tensors[i].count;) {
          if (bucket.storage == nullptr) bucket = open_bucket(dtype, capacity);
          const uint64_t take = std::min(tensors[i].count - offset, capacity - bucket.count);
          bucket.segments.push_back(FusedSegment{i, offset, take, dtype});
          bucket.count += take;
          offset += take;
          if (bucket.count == capacity) {
            send(bucket);
            bucket = Bucket();
          }
        }
      }
      if (bucket.count > 0) send(bucket);
    }
    while (!in_flight_.empty()) finish_oldest();
  }

 private:
  Bucket open_bucket(DType dtype, uint64_t capacity) {
    while (free_.empty() || in_flight_.size() >= kMaxInFlight) finish_oldest();
    Bucket bucket;
    bucket.dtype = dtype;
    if (strategy_.timeline() != nullptr) bucket.opened_ns = timeline_now_ns();
    bucket.storage = free_.back();
    free_.pop_back();
    const size_t capacity_bytes = static_cast<size_t>(capacity) * size_of(dtype);
    if (bucket.storage->size() < capacity_bytes) bucket.storage->resize(capacity_bytes);
    bucket.data = bucket.storage->data();
    return bucket;
  }

  void send_in_place(size_t tensor, uint64_t offset, uint64_t count, DType dtype) {
    while (in_flight_.size() >= kMaxInFlight) finish_oldest();
    Bucket bucket;
    bucket.dtype = dtype;
    if (strategy_.timeline() != nullptr) bucket.opened_ns = timeline_now_ns();
    bucket.data = static_cast<unsigned char*>(per_replica_[0][tensor].data) + offset * size_of(dtype);
    bucket.count = count;
    bucket.segments.push_back(FusedSegment{tensor, offset, count, dtype});
    submit(bucket);
  }

  void submit(Bucket& bucket) {
    bucket.operation =
        strategy_.submit_all_reduce_across_workers(TensorRef{bucket.data, bucket.count, bucket.dtype}, ReduceOp::SUM);
    in_flight_.push_back(std::move(bucket));
  }

  // Packs (combining the local replicas) and puts the bucket on the wire.
  void send(Bucket& bucket) {
    const size_t element = size_of(bucket.dtype);
    std::vector<const void*> inputs(per_replica_.size());
    uint64_t position = 0;
    for (const FusedSegment& s : bucket.segments) {
      for (size_t r = 0; r < per_replica_.size(); ++r) {
        inputs[r] = static_cast<const unsigned char*>(per_replica_[r][s.tensor].data) + s.offset * element;
      }
      reduce_many(bucket.data + position * element, inputs.data(), inputs.size(), s.count, bucket.dtype,
                  ReduceOp::SUM);
      position += s.count;
    }
    submit(bucket);
  }

  // A bucket's span on the timeline: packed, on the wire, consumed.
  void record(const Bucket& bucket) {
    Timeline* timeline = strategy_.timeline();
    if (timeline == nullptr) return;
    if (lane_ == 0) lane_ = timeline->lane("buckets");
    TimelineEvent event;
    event.name = "bucket";
    event.category = "apply_gradients";
    event.start_ns = bucket.opened_ns;
    event.duration_ns = timeline_now_ns() - bucket.opened_ns;
    event.lane = lane_;
    event.add("index", static_cast<int64_t>(buckets_done_++))
        .add("dtype", name(bucket.dtype))
        .add("bytes", static_cast<int64_t>(bucket.count * size_of(bucket.dtype)))
        .add("segments", static_cast<int64_t>(bucket.segments.size()))
        .add("packed", bucket.storage != nullptr ? 1 : 0);
    timeline->record(event);
  }

  void finish_oldest() {
    Bucket bucket = std::move(in_flight_.front());
    in_flight_.pop_front();
    bucket.operation->wait_for(std::chrono::milliseconds(-1));
    if (bucket.operation->status() != Status::kOk) {
      throw Error(bucket.operation->status(), bucket.operation->message());
    }
    if (op_ == ReduceOp::MEAN) {
      finalize_mean(bucket.data, bucket.count, bucket.dtype, strategy_.num_replicas_in_sync());
    }
    const size_t element = size_of(bucket.dtype);
    uint64_t position = 0;
    for (const FusedSegment& s : bucket.segments) {
      consume_(s, bucket.data + position * element);
      position += s.count;
    }
    record(bucket);
    if (bucket.storage != nullptr) free_.push_back(bucket.storage);
  }

  Strategy& strategy_;
  ReduceOp op_;
  const std::vector<std::vector<TensorRef>>& per_replica_;
  const FusedConsumer& consume_;
  std::vector<std::vector<unsigned char>*> free_;
  std::deque<Bucket> in_flight_;
  uint32_t lane_ = 0;  // "buckets", once one is recorded
  uint64_t buckets_done_ = 0;
};

// Several local replicas: their tensors are first summed into replica 0's
// (in input order, as the buckets would), which then go into the call.
void combine_into_first_replica(const std::vector<std::vector<TensorRef>>& per_replica) {
  std::vector<const void*> inputs(per_replica.size());
  for (size_t i = 0; i < per_replica[0].size(); ++i) {
    const TensorRef& first = per_replica[0][i];
    for (size_t r = 0; r < per_replica.size(); ++r) inputs[r] = per_replica[r][i].data;
    reduce_many(first.data, inputs.data(), inputs.size(), first.count, first.dtype, ReduceOp::SUM);
  }
}

// Every worker on one host: each dtype's tensors go into a single piecewise
// all-reduce, read where they lie, and each finished part reaches the
// consumer while it is still in cache. No bucket, no copy into one and out of
// it, one call instead of one per bucket; an optimizer as consumer updates
// the weights in the same pass.
void fuse_in_one_call(Strategy& strategy, ReduceOp op, const std::vector<std::vector<TensorRef>>& per_replica,
                      const FusedConsumer& consume, const FusedFinisher* finish) {
  if (per_replica.size() > 1) combine_into_first_replica(per_replica);
  const std::vector<TensorRef>& tensors = per_replica[0];
  // The collective's MEAN divides by the workers; with several local
  // replicas the mean is over all of them, so the call sums and each part
  // is divided here, in a cached copy, before the consumer sees it.
  const bool mean_here = op == ReduceOp::MEAN && per_replica.size() > 1;
  const ReduceOp wire_op = mean_here ? ReduceOp::SUM : op;
  std::vector<unsigned char> part;
  const std::vector<DType> dtypes = dtypes_in_order(tensors);
  std::vector<Piece> pieces;
  std::vector<size_t> tensor_of;  // the tensor each piece is
  for (DType dtype : dtypes) {
    pieces.clear();
    tensor_of.clear();
    for (size_t i = 0; i < tensors.size(); ++i) {
      if (tensors[i].dtype != dtype) continue;
      pieces.push_back(Piece{tensors[i].data, static_cast<size_t>(tensors[i].count)});
      tensor_of.push_back(i);
    }
    const PieceList list(pieces.data(), pieces.size(), size_of(dtype));
    // A consumer that throws is not called again, and the failure waits until
    // the call is over: the other workers are not left waiting halfway.
    std::exception_ptr failure;
    auto to_consumer = [&](size_t first, const void* reduced, size_t count) {
      if (failure) return;
      try {
        if (mean_here) {
          part.assign(static_cast<const unsigned char*>(reduced),
                      static_cast<const unsigned char*>(reduced) + count * size_of(dtype));
          finalize_mean(part.data(), count, dtype, strategy.num_replicas_in_sync());
          reduced = part.data();
        }
        list.for_each_span(first, count, [&](size_t piece, size_t offset, size_t at, size_t elements) {
          consume(FusedSegment{tensor_of[piece], offset, elements, dtype, finish != nullptr},
                  static_cast<const unsigned char*>(reduced) + at * size_of(dtype));
        });
      } catch (...) {
        failure = std::current_exception();
      }
    };
    auto to_finisher = [&](size_t first, const PartInputs& inputs, void* out, size_t count) {
      list.for_each_span(first, count, [&](size_t piece, size_t offset, size_t at, size_t elements) {
        const size_t skip = at * size_of(dtype);
        if (inputs.size < 1 || inputs.size > kMaxPartInputs) {
          fail(Status::kInternal, "fused_all_reduce: a finisher got " + std::to_string(inputs.size) + " inputs");
        }
        const void* shifted_inputs[kMaxPartInputs];  // from the span's first element
        for (size_t i = 0; i < inputs.size; ++i) {
          shifted_inputs[i] = static_cast<const unsigned char*>(inputs.buffers[i]) + skip;
        }
        (*finish)(FusedSegment{tensor_of[piece], offset, elements, dtype, false},
                  PartInputs{shifted_inputs, inputs.size}, static_cast<unsigned char*>(out) + skip);
      });
    };
    const PartFinisher finisher(to_finisher);
    strategy.all_reduce_pieces_across_workers(list, dtype, wire_op, ResultSink(to_consumer),
                                              finish != nullptr ? &finisher : nullptr);
    if (failure) std::rethrow_exception(failure);
  }
}

}  // namespace

void fused_all_reduce(Strategy& strategy, ReduceOp op, const std::vector<std::vector<TensorRef>>& per_replica,
                      const FusedConsumer& consume, const FusedFinisher* finish) {
  if (op != ReduceOp::SUM && op != ReduceOp::MEAN) {
    fail_invalid(std::string("op ") + name(op) + " is not SUM or MEAN");
  }
  if (finish != nullptr && op != ReduceOp::SUM) fail(Status::kInternal, "fused_all_reduce: a finisher needs SUM");
  check_tensors(strategy, per_replica);
  check_disjoint(per_replica);
  if (strategy.all_reduces_pieces_across_workers()) {
    fuse_in_one_call(strategy, op, per_replica, consume, finish);
    return;
  }
  FusionPipeline pipeline(strategy, op, per_replica, consume);
  pipeline.run();
}

FusedConsumer write_back_to_replicas(const std::vector<std::vector<TensorRef>>& per_replica) {
  return [&per_replica](const FusedSegment& s, const void* reduced) {
    const size_t element = size_of(s.dtype);
    for (const std::vector<TensorRef>& tensors : per_replica) {
      unsigned char* target = static_cast<unsigned char*>(tensors[s.tensor].data) + s.offset * element;
      if (target != reduced) std::memcpy(target, reduced, static_cast<size_t>(s.count) * element);
    }
  };
}

void batch_all_reduce(Strategy& strategy, ReduceOp op, const std::vector<std::vector<TensorRef>>& per_replica) {
  bool any_on_device = false, all_on_device = true;
  for (const auto& replica : per_replica) {
    for (const TensorRef& t : replica) {
      any_on_device = any_on_device || t.on_device();
      all_on_device = all_on_device && t.on_device();
    }
  }
  if (!any_on_device) {
    fused_all_reduce(strategy, op, per_replica, write_back_to_replicas(per_replica));
    return;
  }
  if (!all_on_device) fail_invalid("the buffers mix host and CUDA memory: pass one kind");
#ifdef DIST_HAVE_CUDA
  for (size_t i = 0; i < per_replica[0].size(); ++i) {
    std::vector<TensorRef> tensor;
    for (const auto& replica : per_replica) {
      if (replica[i].dtype != per_replica[0][i].dtype || replica[i].count != per_replica[0][i].count) {
        fail_invalid("tensor " + std::to_string(i) + " differs in dtype or count between the local replicas");
      }
      tensor.push_back(replica[i]);
    }
    all_reduce_on_devices(strategy, op, tensor);
  }
#else
  fail(Status::kInternal, "CUDA memory in a build without CUDA");
#endif
}

}  // namespace dist
