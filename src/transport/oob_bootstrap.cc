#include "transport/oob_bootstrap.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <cstring>
#include <thread>
#include <vector>

#include "base/numbers.h"
#include "base/status.h"
#include "transport/advertised_address.h"
#include "transport/socket.h"

namespace dist {

namespace {

constexpr char kMagic[8] = {'D', 'I', 'S', 'T', 'O', 'O', 'B', '1'};
constexpr size_t kMaxAddress = 240;

// What each rank gives the all-gather: fixed size, every byte written.
struct OobRecord {
  char magic[8];
  int32_t rank;
  int32_t size;
  uint32_t has_token;
  uint32_t reserved;
  uint64_t token_fingerprint;  // tells tokens apart without revealing them
  char address[kMaxAddress];   // "host:port", NUL-padded
};
static_assert(sizeof(OobRecord) == 272, "OobRecord has padding");

uint64_t token_fingerprint(const std::string& token) {
  static const char kLabel[] = "libdistribute out-of-band token fingerprint";
  unsigned char mac[EVP_MAX_MD_SIZE] = {};
  unsigned int length = 0;
  if (HMAC(EVP_sha256(), token.data(), static_cast<int>(token.size()), reinterpret_cast<const unsigned char*>(kLabel),
           sizeof kLabel - 1, mac, &length) == nullptr ||
      length < sizeof(uint64_t)) {
    fail(Status::kInternal, "out-of-band bootstrap: HMAC-SHA256 failed");
  }
  uint64_t fingerprint = 0;
  std::memcpy(&fingerprint, mac, sizeof fingerprint);
  return fingerprint;
}

// Frees the caller's request on every way out: after this the caller's
// exchange may no longer touch the buffers.
class RequestGuard {
 public:
  RequestGuard(const OobExchange& exchange, void* request) : exchange_(exchange), request_(request) {}
  ~RequestGuard() {
    if (exchange_.free) exchange_.free(request_);
  }
  RequestGuard(const RequestGuard&) = delete;
  RequestGuard& operator=(const RequestGuard&) = delete;

 private:
  const OobExchange& exchange_;
  void* request_;
};

// One all-gather through the caller's callbacks, polled until the deadline.
void all_gather(const OobExchange& exchange, const void* send, void* recv, size_t bytes, SteadyTime deadline,
                std::chrono::milliseconds connect_timeout) {
  void* request = nullptr;
  const int32_t started = exchange.allgather(send, recv, bytes, &request);
  if (started != 0) {
    fail(Status::kPeerFailed, "out-of-band bootstrap: the caller's exchange failed: allgather returned " +
                                  std::to_string(started));
  }
  if (request == nullptr) return;
  RequestGuard guard(exchange, request);
  auto pause = std::chrono::microseconds(50);
  while (true) {
    const int32_t state = exchange.test(request);
    if (state == 0) return;
    if (state < 0) {
      fail(Status::kPeerFailed, "out-of-band bootstrap: the caller's exchange failed: test returned " +
                                    std::to_string(state));
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      fail(Status::kTimeout, "out-of-band bootstrap: the caller's exchange (allgather) did not complete within " +
                                 describe_seconds(connect_timeout) + " (the connect deadline); rank " +
                                 std::to_string(exchange.rank) + " of " + std::to_string(exchange.size) +
                                 " waited for the others");
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(10000));
  }
}

// Every rank checks every record, so all ranks fail alike and name the rank.
void check_records(const std::vector<OobRecord>& records, const OobRecord& mine) {
  for (size_t r = 0; r < records.size(); ++r) {
    const OobRecord& record = records[r];
    const std::string who = "out-of-band bootstrap: rank " + std::to_string(r);
    if (std::memcmp(record.magic, kMagic, sizeof kMagic) != 0) {
      fail(Status::kMismatch, who + "'s part of the exchange is not libdistribute's (the caller's all-gather must "
                                    "put rank r's bytes at offset r * bytes)");
    }
    if (record.rank != static_cast<int32_t>(r)) {
      fail(Status::kMismatch, who + "'s place in the exchange holds rank " + std::to_string(record.rank) +
                                  "'s part (the caller's all-gather must order the parts by rank)");
    }
    if (record.size != mine.size) {
      fail(Status::kMismatch, who + " says the job has " + std::to_string(record.size) + " tasks; rank " +
                                  std::to_string(mine.rank) + " says " + std::to_string(mine.size));
    }
    if (std::memchr(record.address, '\0', kMaxAddress) == nullptr) {
      fail(Status::kMismatch, who + " sent an address without an end");
    }
  }
  const std::string me = "rank " + std::to_string(mine.rank);
  const std::string how = " (set DIST_CLUSTER_TOKEN, DIST_CLUSTER_TOKEN_FILE or the token option on every rank)";
  for (size_t r = 0; r < records.size(); ++r) {
    const OobRecord& record = records[r];
    const std::string who = "out-of-band bootstrap: rank " + std::to_string(r);
    if (record.has_token && !mine.has_token) {
      fail(Status::kAuth, "out-of-band bootstrap: " + me + " has no cluster token, unlike rank " +
                              std::to_string(r) + how);
    }
    if (!record.has_token && mine.has_token) fail(Status::kAuth, who + " has no cluster token, unlike " + me + how);
    if (record.token_fingerprint != mine.token_fingerprint) {
      fail(Status::kAuth, who + " has a different cluster token than " + me);
    }
  }
}

// The callbacks are there: the C ABI checked them (src/c_api/context.cc).
void check_exchange(const OobExchange& exchange) {
  if (exchange.size < 1) fail_invalid("oob.size " + std::to_string(exchange.size) + " must be at least 1");
  if (exchange.rank < 0 || exchange.rank >= exchange.size) {
    fail_invalid("oob.rank " + std::to_string(exchange.rank) + " is out of range for oob.size " +
                 std::to_string(exchange.size));
  }
}

}  // namespace

JoinedContext join_out_of_band(const OobExchange& exchange, const ContextOptions& options) {
  check_exchange(exchange);
  const SteadyTime deadline = std::chrono::steady_clock::now() + options.connect_timeout;
  const auto token = load_cluster_token(options.token, options.env);

  // Listening before the exchange: the port is the system's pick and stays
  // this task's, with no window in which another process could take it.
  const std::string host = advertised_host(options.env);
  Socket listener = listen_on(HostPort{host, 0});
  const std::string address = join_address(HostPort{host, local_address(listener).port});
  if (address.size() >= kMaxAddress) fail_invalid("out-of-band bootstrap: address '" + address + "' is too long");

  OobRecord mine{};
  std::memcpy(mine.magic, kMagic, sizeof kMagic);
  mine.rank = exchange.rank;
  mine.size = exchange.size;
  mine.has_token = token ? 1 : 0;
  mine.token_fingerprint = token ? token_fingerprint(*token) : 0;
  std::memcpy(mine.address, address.data(), address.size());

  std::vector<OobRecord> records(static_cast<size_t>(exchange.size));
  all_gather(exchange, &mine, records.data(), sizeof mine, deadline, options.connect_timeout);
  check_records(records, mine);

  JoinedContext join;
  std::vector<std::string> addresses;
  for (const OobRecord& record : records) addresses.emplace_back(record.address);
  join.cluster.resolver = ResolverKind::kSimple;
  join.cluster.spec.set_job("worker", addresses);
  join.cluster.spec.validate("out-of-band bootstrap: the exchanged addresses");
  join.cluster.task_type = "worker";
  join.cluster.task_id = exchange.rank;
  join.context = std::make_unique<Context>(join.cluster, options, std::move(listener), deadline);
  return join;
}

}  // namespace dist
