// The NCCL communicator's setup over the authenticated context
// (collectives/nccl_setup.h), with the ranks as threads of one process, each
// with a context of its own (its own UCX worker, joined through an in-process
// out-of-band exchange). Without a GPU: rank 0's unique id reaches every rank
// intact, and a setup that cannot work fails at once on every rank, naming
// each rank and why. With one: a one-rank NCCL communicator comes up.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#ifdef DIST_HAVE_NCCL
#include <distribute/c_api.h>

#include "c_api/handles.h"
#include "collectives/nccl_setup.h"
#include "gpu/cuda_device.h"
#include "gpu/nccl_library.h"
#endif
// Last: cmocka's fail() macro would clash with the headers above.
#include "internal_test_support.h"

#ifdef DIST_HAVE_NCCL

namespace {

const char* const kToken = "nccl-setup-test-token-0123456789";

// An all-gather between threads: each round completes once every rank gave its part.
struct ThreadExchange {
  explicit ThreadExchange(int n) : size(n) {}
  int size;
  std::mutex mutex;
  std::vector<std::vector<unsigned char>> parts;  // of the current round
  std::vector<std::vector<unsigned char>> rounds_done;
  int arrived = 0;
  int round = 0;
};

struct RankSlot {
  ThreadExchange* exchange;
  int rank;
  int next_round = 0;
};

struct Pending {
  RankSlot* slot;
  int round;
  void* recv;
  size_t bytes;
};

int32_t start_allgather(void* user_data, const void* send, void* recv, size_t bytes, void** request) {
  auto* slot = static_cast<RankSlot*>(user_data);
  ThreadExchange& x = *slot->exchange;
  std::lock_guard<std::mutex> guard(x.mutex);
  const int round = slot->next_round++;
  if (static_cast<int>(x.rounds_done.size()) <= round) x.rounds_done.resize(static_cast<size_t>(round) + 1);
  std::vector<unsigned char>& all = x.rounds_done[static_cast<size_t>(round)];
  if (all.size() < bytes * static_cast<size_t>(x.size) + static_cast<size_t>(x.size)) {
    all.assign(bytes * static_cast<size_t>(x.size) + static_cast<size_t>(x.size), 0);
  }
  std::memcpy(all.data() + bytes * static_cast<size_t>(slot->rank), send, bytes);
  all[bytes * static_cast<size_t>(x.size) + static_cast<size_t>(slot->rank)] = 1;  // arrived flags after the data
  *request = new Pending{slot, round, recv, bytes};
  return 0;
}

int32_t test_allgather(void*, void* request) {
  auto* p = static_cast<Pending*>(request);
  ThreadExchange& x = *p->slot->exchange;
  std::lock_guard<std::mutex> guard(x.mutex);
  const std::vector<unsigned char>& all = x.rounds_done[static_cast<size_t>(p->round)];
  for (int r = 0; r < x.size; ++r) {
    if (all[p->bytes * static_cast<size_t>(x.size) + static_cast<size_t>(r)] == 0) return 1;
  }
  std::memcpy(p->recv, all.data(), p->bytes * static_cast<size_t>(x.size));
  return 0;
}

void free_allgather(void*, void* request) { delete static_cast<Pending*>(request); }

// Runs body(communicator, rank) on n threads, each with its own context.
template <typename Body>
void on_ranks(int n, Body body) {
  ThreadExchange exchange(n);
  std::vector<RankSlot> slots;
  for (int r = 0; r < n; ++r) slots.push_back(RankSlot{&exchange, r});
  std::vector<std::string> errors(static_cast<size_t>(n));
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      dist_oob_t oob{};
      oob.rank = r;
      oob.size = n;
      oob.allgather = start_allgather;
      oob.test = test_allgather;
      oob.free = free_allgather;
      oob.user_data = &slots[static_cast<size_t>(r)];
      dist_context_options_t options = DIST_CONTEXT_OPTIONS_INIT;
      options.field_mask = DIST_CONTEXT_OPT_TOKEN | DIST_CONTEXT_OPT_CONNECT_TIMEOUT_MS;
      options.token = kToken;
      options.connect_timeout_ms = 30000;
      dist_context_t* context = nullptr;
      if (dist_context_create_oob(&oob, &options, &context) != DIST_OK) {
        errors[static_cast<size_t>(r)] = std::string("context: ") + dist_last_error();
        return;
      }
      dist_comm_t* world = nullptr;
      dist_comm_world(context, &world);
      body(*world->communicator, r);
      dist_context_destroy(context);
    });
  }
  for (std::thread& t : threads) t.join();
  for (int r = 0; r < n; ++r) {
    if (!errors[static_cast<size_t>(r)].empty()) fail_msg("rank %d: %s", r, errors[static_cast<size_t>(r)].c_str());
  }
}

std::chrono::steady_clock::time_point in_seconds(int seconds) {
  return std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
}

void test_unique_id_reaches_every_rank(void**) {
  if (!dist::NcclLibrary::instance().available()) skip();
  constexpr int n = 3;
  std::vector<ncclUniqueId> ids(n);
  on_ranks(n, [&](dist::Communicator& comm, int rank) { ids[static_cast<size_t>(rank)] = dist::share_nccl_id(comm); });
  const ncclUniqueId zero{};
  assert_memory_not_equal(&ids[0], &zero, sizeof zero);
  for (int r = 1; r < n; ++r) assert_memory_equal(&ids[static_cast<size_t>(r)], &ids[0], sizeof ids[0]);
  // A second setup gets a fresh id: ids are never reused.
  std::vector<ncclUniqueId> again(n);
  on_ranks(n, [&](dist::Communicator& comm, int rank) { again[static_cast<size_t>(rank)] = dist::share_nccl_id(comm); });
  assert_memory_not_equal(&again[0], &ids[0], sizeof ids[0]);
}

void test_setup_without_a_device_fails_on_every_rank(void**) {
  if (dist::cuda_device_count() > 0) skip();  // the GPU case below covers such machines
  constexpr int n = 2;
  std::vector<std::string> messages(n);
  std::vector<int> statuses(n, 0);
  const auto start = std::chrono::steady_clock::now();
  on_ranks(n, [&](dist::Communicator& comm, int rank) {
    try {
      dist::setup_nccl(comm, 0, in_seconds(60));
    } catch (const dist::Error& e) {
      statuses[static_cast<size_t>(rank)] = static_cast<int>(e.status());
      messages[static_cast<size_t>(rank)] = e.what();
    }
  });
  print_message("rank 0 was told: %s\n", messages[0].c_str());
  // At once, not at the deadline: no rank entered NCCL's init.
  assert_true(std::chrono::steady_clock::now() - start < std::chrono::seconds(30));
  for (int r = 0; r < n; ++r) {
    const std::string& m = messages[static_cast<size_t>(r)];
    assert_int_equal(statuses[static_cast<size_t>(r)], static_cast<int>(dist::Status::kUnavailable));
    if (m.find("NCCL setup failed before init") == std::string::npos || m.find("rank 0: ") == std::string::npos ||
        m.find("rank 1: ") == std::string::npos) {
      fail_msg("rank %d: %s", r, m.c_str());
    }
  }
}

// With a device (a lent GPU machine): one rank, one NCCL communicator.
void test_one_rank_on_a_device(void**) {
  if (dist::cuda_device_count() == 0 || !dist::NcclLibrary::instance().available()) skip();
  on_ranks(1, [&](dist::Communicator& comm, int) {
    auto nccl = dist::setup_nccl(comm, 0, in_seconds(60));
    assert_non_null(nccl.get());
    nccl->check();
    assert_int_equal(nccl->device(), 0);
  });
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_unique_id_reaches_every_rank),
      cmocka_unit_test(test_setup_without_a_device_fails_on_every_rank),
      cmocka_unit_test(test_one_rank_on_a_device),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}

#else  // built without NCCL: nothing to set up

namespace {
void test_built_without_nccl(void**) { skip(); }
}  // namespace

int main() {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_built_without_nccl)};
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
#endif
