// Gloo's collectives, timed by peer_measure and checked by peer_collective.
// One process per rank, started by bench/compare (see gloo_rendezvous.h); one
// collective, one algorithm and one transport mode per launch, every size.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>

#include "gloo_algorithms.h"
#include "gloo_harness.h"
#include "gloo_rendezvous.h"
#include "peer_collective.h"
#include "peer_csv.h"
#include "peer_measure.h"
#include "peer_options.h"

namespace {

struct Bench {
  std::shared_ptr<gloo::Context> context;
  std::unique_ptr<GlooHarness> harness;
  GlooCall call;
};

void runCall(void* self) { static_cast<Bench*>(self)->call.run(); }

void runBarrier(void* self) { static_cast<Bench*>(self)->harness->barrier(); }

void maxOverRanks(void* self, double* v, size_t n) {
  static_cast<Bench*>(self)->harness->maxOverRanks(v, n);
}

struct Buffer {
  float* data = nullptr;
  explicit Buffer(size_t count) {
    const size_t bytes = (count * sizeof(float) + 4095) & ~size_t{4095};
    data = static_cast<float*>(std::aligned_alloc(4096, bytes ? bytes : 4096));
    if (!data) throw std::bad_alloc();
  }
  ~Buffer() { std::free(data); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
};

// Wrong elements on the worst rank.
double worstWrong(Bench& bench, peer_collective_t collective, size_t block) {
  const auto& c = bench.call;
  double wrong = static_cast<double>(peer_collective_check(
      collective, bench.context->rank, bench.context->size, block, c.result, c.result_count));
  maxOverRanks(&bench, &wrong, 1);
  return wrong;
}

enum class Outcome { kMeasured, kTooSlow, kWrong };

Outcome benchSize(Bench& bench, const peer_options_t& opts, peer_collective_t collective,
                  const std::string& variant, size_t bytes) {
  const int rank = bench.context->rank, nprocs = bench.context->size;
  GlooBuffers b{};
  if (!peer_collective_counts(collective, bytes, nprocs, &b.in_count, &b.out_count, &b.block)) {
    if (rank == 0)
      std::fprintf(stderr, "skipped: gloo %s %zu B: not whole floats per rank for %d ranks\n",
                   variant.c_str(), bytes, nprocs);
    return Outcome::kMeasured;
  }
  Buffer in(b.in_count), out(b.out_count);
  b.in = in.data;
  b.out = out.data;
  peer_collective_fill(collective, rank, nprocs, b.block, b.in, b.in_count, b.out, b.out_count);
  bench.call = makeGlooCall(bench.context, collective, opts.variant, b);

  bench.call.run();
  double wrong = worstWrong(bench, collective, b.block);
  peer_timing_t t{0, 0.0, 0.0};
  if (wrong == 0) {
    // In-place reductions would grow their input every call; zeros keep it finite.
    if (bench.call.accumulates) std::memset(b.in, 0, b.in_count * sizeof(float));
    peer_ops_t ops{&bench, runCall, runBarrier, maxOverRanks};
    t = peer_measure(&ops, opts.budget_s, opts.max_call_s);
    if (!bench.call.accumulates) wrong = worstWrong(bench, collective, b.block);
  }
  bench.call = GlooCall{};
  if (wrong != 0) {
    if (rank == 0)
      std::fprintf(stderr, "gloo %s %zu B: %.0f wrong elements on the worst rank\n",
                   variant.c_str(), bytes, wrong);
    return Outcome::kWrong;
  }
  if (t.iters == 0) {
    if (rank == 0)
      std::fprintf(stderr, "skipped: gloo %s from %zu B up: one call took %.2f s (--max-call %.2f s)\n",
                   variant.c_str(), bytes, t.first_s, opts.max_call_s);
    return Outcome::kTooSlow;
  }
  if (rank == 0)
    peer_csv_row(stdout, "gloo", variant.c_str(), nprocs, bytes, t.iters, t.median_s,
                 peer_collective_busbw_factor(collective, nprocs));
  return Outcome::kMeasured;
}

}  // namespace

int main(int argc, char** argv) {
  // A peer that died must show up as Gloo's error message, not as SIGPIPE.
  std::signal(SIGPIPE, SIG_IGN);
  peer_options_t opts;
  if (!peer_options_parse(argc, argv, "ring", &opts)) return 2;
  if (opts.num_collectives != 1) {
    std::fprintf(stderr, "gloo_bench: one --collective per launch\n");
    return 2;
  }
  const peer_collective_t collective = opts.collectives[0];
  const bool busyPoll = std::strcmp(opts.mode, "busypoll") == 0;
  const std::string variant = std::string(peer_collective_name(collective)) + "/" + opts.variant +
                              (busyPoll ? "+busypoll" : "");
  size_t bytes = 0;  // the size being measured, for the error message
  // Outlives the handler below: the error is printed before this rank's
  // sockets close, so the cause comes ahead of the peers' "connection reset".
  Bench bench;
  try {
    bench.context = glooJoin(busyPoll);
    bench.harness = std::make_unique<GlooHarness>(bench.context, glooUsesOptionsApi(opts.variant));
    if (bench.context->rank == 0 && opts.header) peer_csv_header(stdout);
    for (int s = 0; s < opts.num_sizes; s++) {
      bytes = opts.sizes[s];
      const Outcome outcome = benchSize(bench, opts, collective, variant, bytes);
      if (outcome == Outcome::kWrong) return 3;
      if (outcome == Outcome::kTooSlow) break;
    }
    // Nobody tears down its connections while a peer may still be writing.
    bench.harness->barrier();
  } catch (const std::exception& e) {
    // The options API (gloo::allreduce and friends) works on unbound buffers,
    // which this Gloo's TCP pair accepts only in its default (async) mode.
    const bool syncRefusal = busyPoll && std::strstr(e.what(), "!sync_");
    std::fprintf(stderr, "gloo %s at %zu B: %s%s\n", variant.c_str(), bytes, e.what(),
                 syncRefusal ? " (the TCP pair refuses unbound buffers in sync/busy-poll mode)" : "");
    return 3;
  }
  return 0;
}
