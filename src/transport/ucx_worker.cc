#include "transport/ucx_worker.h"

#include <chrono>

#include "base/status.h"
#include "transport/ucx_tuning.h"

namespace dist {

namespace {

[[noreturn]] void fail_ucx(const char* call, ucs_status_t status) {
  fail(Status::kUnavailable, std::string("UCX: ") + call + " failed: " + ucs_status_string(status));
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
  ucp_address_t* address = nullptr;
  size_t length = 0;
  status = ucp_worker_get_address(worker_, &address, &length);
  if (status != UCS_OK) {
    ucp_worker_destroy(worker_);
    ucp_cleanup(context_);
    fail_ucx("ucp_worker_get_address", status);
  }
  address_.assign(reinterpret_cast<const char*>(address), length);
  ucp_worker_release_address(worker_, address);
}

UcxWorker::~UcxWorker() {
  disconnect();
  if (worker_) ucp_worker_destroy(worker_);
  if (context_) ucp_cleanup(context_);
}

void UcxWorker::on_endpoint_error(void* arg, ucp_ep_h, ucs_status_t status) {
  auto* slot = static_cast<ErrorSlot*>(arg);
  if (slot->owner->on_error_) {
    slot->owner->on_error_(slot->rank, std::string("transport error: ") + ucs_status_string(status));
  }
}

void UcxWorker::connect(const std::vector<std::string>& remote_addresses, PeerErrorHandler on_error,
                        ucp_err_handling_mode_t mode) {
  std::lock_guard<std::mutex> guard(lock_);
  on_error_ = std::move(on_error);
  endpoints_.assign(remote_addresses.size(), nullptr);
  bulk_endpoints_.assign(remote_addresses.size(), nullptr);
  // Reserved up front: endpoints keep pointers into this vector.
  error_slots_.resize(remote_addresses.size());
  for (size_t rank = 0; rank < remote_addresses.size(); ++rank) {
    error_slots_[rank] = ErrorSlot{this, static_cast<int>(rank)};
    if (remote_addresses[rank].empty()) continue;
    ucp_ep_params_t params{};
    params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
    params.address = reinterpret_cast<const ucp_address_t*>(remote_addresses[rank].data());
    params.err_mode = mode;
    if (mode != UCP_ERR_HANDLING_MODE_NONE) {
      params.field_mask |= UCP_EP_PARAM_FIELD_ERR_HANDLER;
      params.err_handler.cb = &UcxWorker::on_endpoint_error;
      params.err_handler.arg = &error_slots_[rank];
    }
    ucs_status_t status = ucp_ep_create(worker_, &params, &endpoints_[rank]);
    if (status != UCS_OK) fail_ucx("ucp_ep_create", status);
    bulk_endpoints_[rank] = endpoints_[rank];
    if (mode == UCP_ERR_HANDLING_MODE_NONE || !ucx_bulk_endpoints_enabled()) continue;
    ucp_ep_params_t bulk{};
    bulk.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
    bulk.address = params.address;
    bulk.err_mode = UCP_ERR_HANDLING_MODE_NONE;
    status = ucp_ep_create(worker_, &bulk, &bulk_endpoints_[rank]);
    if (status != UCS_OK) fail_ucx("ucp_ep_create", status);
  }
}

bool UcxWorker::has_bulk_endpoints() const {
  for (size_t rank = 0; rank < endpoints_.size(); ++rank) {
    if (bulk_endpoints_[rank] != endpoints_[rank]) return true;
  }
  return false;
}

void UcxWorker::disconnect(bool force) {
  std::lock_guard<std::mutex> guard(lock_);
  // Flush first, so peers see an orderly close rather than an error. A close
  // that does not finish in time (a peer that is gone, or one busy in a
  // shared-memory wait that does not drive UCX) is left to ucp_worker_destroy:
  // an endpoint whose close has begun must not be closed again, and its
  // request is released either way.
  std::vector<void*> closing;
  auto close = [&](ucp_ep_h endpoint) {
    ucp_request_param_t param{};
    if (force) {
      param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
      param.flags = UCP_EP_CLOSE_FLAG_FORCE;
    }
    void* request = ucp_ep_close_nbx(endpoint, &param);
    if (UCS_PTR_IS_PTR(request)) closing.push_back(request);
  };
  for (size_t rank = 0; rank < endpoints_.size(); ++rank) {
    if (endpoints_[rank] == nullptr) continue;
    if (bulk_endpoints_[rank] != endpoints_[rank]) close(bulk_endpoints_[rank]);
    close(endpoints_[rank]);
    endpoints_[rank] = nullptr;
    bulk_endpoints_[rank] = nullptr;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(2000);
  for (void* request : closing) {
    if (request == nullptr) continue;
    while (ucp_request_check_status(request) == UCS_INPROGRESS && std::chrono::steady_clock::now() < deadline) {
      ucp_worker_progress(worker_);
    }
    ucp_request_free(request);
  }
}

}  // namespace dist
