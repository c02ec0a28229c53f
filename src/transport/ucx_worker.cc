#include "transport/ucx_worker.h"

#include <chrono>

#include "base/status.h"
#include "transport/ucx_tuning.h"

namespace dist {

namespace {

[[noreturn]] void fail_ucx(const char* call, ucs_status_t status) {
  fail(Status::kUnavailable, std::string("UCX: ") + call + " failed: " + ucs_status_string(status));
}

// How long an orderly close may wait for a peer that is still there.
constexpr auto kCloseGrace = std::chrono::milliseconds(2000);

// The worker's address, packed with `flags` (ucp_worker_address_flags_t).
std::string worker_address(ucp_worker_h worker, uint32_t flags) {
  ucp_worker_attr_t attr{};
  attr.field_mask = UCP_WORKER_ATTR_FIELD_ADDRESS | UCP_WORKER_ATTR_FIELD_ADDRESS_FLAGS;
  attr.address_flags = flags;
  ucs_status_t status = ucp_worker_query(worker, &attr);
  if (status != UCS_OK) fail_ucx("ucp_worker_query", status);
  std::string address(reinterpret_cast<const char*>(attr.address), attr.address_length);
  ucp_worker_release_address(worker, attr.address);
  return address;
}

// Waits for `request` (from a ucp call) until `deadline`, then frees it;
// whether it finished.
bool settle(ucp_worker_h worker, void* request, std::chrono::steady_clock::time_point deadline) {
  if (!UCS_PTR_IS_PTR(request)) return !UCS_PTR_IS_ERR(request);
  while (ucp_request_check_status(request) == UCS_INPROGRESS && std::chrono::steady_clock::now() < deadline) {
    ucp_worker_progress(worker);
  }
  const bool finished = ucp_request_check_status(request) != UCS_INPROGRESS;
  ucp_request_free(request);
  return finished;
}

}  // namespace

UcxWorker::UcxWorker(const std::function<void(ucp_config_t*)>& adjust) {
  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED;
  params.features = UCP_FEATURE_TAG;
  params.mt_workers_shared = 0;
  ucp_config_t* config = nullptr;
  ucs_status_t status = ucp_config_read(nullptr, nullptr, &config);
  if (status != UCS_OK) fail_ucx("ucp_config_read", status);
  apply_ucx_defaults(config);
  if (adjust) adjust(config);
  status = ucp_init(&params, config, &context_);
  ucp_config_release(config);
  if (status != UCS_OK) fail_ucx("ucp_init", status);

  ucp_worker_params_t worker_params{};
  worker_params.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  worker_params.thread_mode = UCS_THREAD_MODE_SERIALIZED;
  status = ucp_worker_create(context_, &worker_params, &worker_);
  if (status != UCS_OK) {
    ucp_cleanup(context_);
    fail_ucx("ucp_worker_create", status);
  }
  try {
    address_ = worker_address(worker_, 0);
    network_address_ = worker_address(worker_, UCP_WORKER_ADDRESS_FLAG_NET_ONLY);
  } catch (const Error&) {
    ucp_worker_destroy(worker_);
    ucp_cleanup(context_);
    throw;
  }
}

UcxWorker::~UcxWorker() {
  disconnect();
  if (worker_) ucp_worker_destroy(worker_);
  if (context_) ucp_cleanup(context_);
  // Only now may the callbacks' state go: destroying the worker completes
  // (with an error) what was still in flight.
  kept_.clear();
}

void UcxWorker::on_endpoint_error(void* arg, ucp_ep_h, ucs_status_t status) {
  auto* slot = static_cast<ErrorSlot*>(arg);
  if (slot->owner->on_error_) {
    slot->owner->on_error_(slot->rank, std::string("transport error: ") + ucs_status_string(status));
  }
}

ucp_ep_h UcxWorker::create_endpoint(const std::string& address, ucp_err_handling_mode_t mode, ErrorSlot* slot) {
  ucp_ep_params_t params{};
  params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
  params.address = reinterpret_cast<const ucp_address_t*>(address.data());
  params.err_mode = mode;
  if (mode != UCP_ERR_HANDLING_MODE_NONE) {
    params.field_mask |= UCP_EP_PARAM_FIELD_ERR_HANDLER;
    params.err_handler.cb = &UcxWorker::on_endpoint_error;
    params.err_handler.arg = slot;
  }
  ucp_ep_h endpoint = nullptr;
  ucs_status_t status = ucp_ep_create(worker_, &params, &endpoint);
  if (status != UCS_OK) fail_ucx("ucp_ep_create", status);
  return endpoint;
}

void UcxWorker::connect(const std::vector<std::string>& remote_addresses, PeerErrorHandler on_error,
                        ucp_err_handling_mode_t mode) {
  std::vector<UcxPeer> peers(remote_addresses.size());
  for (size_t rank = 0; rank < peers.size(); ++rank) peers[rank].address = remote_addresses[rank];
  connect(peers, std::move(on_error), mode);
}

void UcxWorker::connect(const std::vector<UcxPeer>& peers, PeerErrorHandler on_error, ucp_err_handling_mode_t mode) {
  std::lock_guard<std::mutex> guard(lock_);
  on_error_ = std::move(on_error);
  peers_ = peers;
  endpoints_.assign(peers.size(), nullptr);
  bulk_endpoints_.assign(peers.size(), nullptr);
  abandoned_.assign(peers.size(), false);
  error_handling_.assign(peers.size(), mode != UCP_ERR_HANDLING_MODE_NONE);
  // Reserved up front: endpoints keep pointers into this vector.
  error_slots_.resize(peers.size());
  // Read once: each looks at the environment (and the devices), the same for every peer.
  const bool bulk_to_same_host = ucx_bulk_endpoints_wanted(true);
  const bool bulk_to_other_hosts = ucx_bulk_endpoints_wanted(false);
  for (size_t rank = 0; rank < peers.size(); ++rank) {
    error_slots_[rank] = ErrorSlot{this, static_cast<int>(rank)};
    const UcxPeer& peer = peers[rank];
    if (peer.address.empty()) continue;
    // Another host is reached over the network only: UCX judges shared
    // memory reachable by the boot id alone, which hosts that share a kernel
    // (containers, namespaces) have in common.
    const std::string& address =
        !peer.same_host && !peer.network_address.empty() ? peer.network_address : peer.address;
    endpoints_[rank] = create_endpoint(address, mode, &error_slots_[rank]);
    bulk_endpoints_[rank] = endpoints_[rank];
    if (mode == UCP_ERR_HANDLING_MODE_NONE || !(peer.same_host ? bulk_to_same_host : bulk_to_other_hosts)) continue;
    bulk_endpoints_[rank] = create_endpoint(address, UCP_ERR_HANDLING_MODE_NONE, nullptr);
  }
}

std::string UcxWorker::describe(const std::string& name, int rank) const {
  if (rank < 0 || static_cast<size_t>(rank) >= peers_.size() || peers_[static_cast<size_t>(rank)].location.empty()) {
    return name;
  }
  return name + " on " + peers_[static_cast<size_t>(rank)].location;
}

bool UcxWorker::has_bulk_endpoints() const {
  for (size_t rank = 0; rank < endpoints_.size(); ++rank) {
    if (bulk_endpoints_[rank] != endpoints_[rank]) return true;
  }
  return false;
}

void UcxWorker::keep_until_destroyed(int peer, std::unique_ptr<Abandoned> state) {
  if (peer >= 0 && static_cast<size_t>(peer) < abandoned_.size()) abandoned_[static_cast<size_t>(peer)] = true;
  kept_.push_back(std::move(state));
}

void UcxWorker::flush(const std::vector<bool>& lost, std::chrono::milliseconds limit) {
  std::lock_guard<std::mutex> guard(lock_);
  std::vector<void*> flushes;
  for (size_t rank = 0; rank < endpoints_.size(); ++rank) {
    if (endpoints_[rank] == nullptr || (rank < lost.size() && lost[rank]) || abandoned_[rank]) continue;
    ucp_request_param_t param{};
    flushes.push_back(ucp_ep_flush_nbx(endpoints_[rank], &param));
    if (bulk_endpoints_[rank] != endpoints_[rank]) flushes.push_back(ucp_ep_flush_nbx(bulk_endpoints_[rank], &param));
  }
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (void* request : flushes) settle(worker_, request, deadline);
}

void UcxWorker::disconnect(bool force, const std::vector<bool>& lost) {
  std::lock_guard<std::mutex> guard(lock_);
  struct Closing {
    ucp_ep_h endpoint;
    bool error_handling;
    void* flush;
  };
  std::vector<Closing> closing;
  for (size_t rank = 0; rank < endpoints_.size(); ++rank) {
    if (endpoints_[rank] == nullptr) continue;
    const bool gone = force || (rank < lost.size() && lost[rank]) || abandoned_[rank];
    std::vector<Closing> mine;
    if (bulk_endpoints_[rank] != endpoints_[rank]) mine.push_back(Closing{bulk_endpoints_[rank], false, nullptr});
    mine.push_back(Closing{endpoints_[rank], error_handling_[rank], nullptr});
    endpoints_[rank] = nullptr;
    bulk_endpoints_[rank] = nullptr;
    for (Closing& c : mine) {
      // Flushed first, so that a peer still there sees an orderly close.
      if (!gone) {
        ucp_request_param_t param{};
        c.flush = ucp_ep_flush_nbx(c.endpoint, &param);
      } else {
        c.flush = UCS_STATUS_PTR(UCS_ERR_CANCELED);
      }
      closing.push_back(c);
    }
  }
  const auto deadline = std::chrono::steady_clock::now() + kCloseGrace;
  std::vector<void*> closes;
  for (Closing& c : closing) {
    const bool flushed = settle(worker_, c.flush, deadline);
    ucp_request_param_t param{};
    if (!flushed) {
      // A peer that is gone (or holds requests given up on): an endpoint
      // with error handling is closed by force, which completes its requests
      // with an error (ucp_worker_destroy asserts that none are left). One
      // without cannot be: ucp_worker_destroy takes it back, and its flush or
      // close would wait for an answer that never comes.
      if (!c.error_handling) continue;
      param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
      param.flags = UCP_EP_CLOSE_FLAG_FORCE;
    }
    closes.push_back(ucp_ep_close_nbx(c.endpoint, &param));
  }
  // Closes after a flush or by force have nothing left to wait for; one that
  // still runs at the deadline is released, and its endpoint is the worker's.
  for (void* request : closes) settle(worker_, request, deadline);
}

}  // namespace dist
