// One UCX context and worker per process context, with an endpoint to every
// peer. UCX runs in serialized mode: every ucp call here is made under lock(),
// which is how several communicators on several threads share one worker.
#pragma once

#include <ucp/api/ucp.h>

#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace dist {

class UcxWorker {
 public:
  // Called (under lock()) when UCX reports an endpoint's peer failed.
  using PeerErrorHandler = std::function<void(int rank, const std::string& reason)>;

  // `adjust` may change UCX's configuration (after the user's environment and
  // libdistribute's defaults, ucx_tuning.h) before the context starts.
  explicit UcxWorker(const std::function<void(ucp_config_t*)>& adjust = nullptr);
  ~UcxWorker();
  UcxWorker(const UcxWorker&) = delete;
  UcxWorker& operator=(const UcxWorker&) = delete;

  // This worker's address, to hand to peers during bootstrap.
  const std::string& address() const { return address_; }

  // Creates endpoints; remote_addresses[rank] is empty for this process itself.
  // With UCP_ERR_HANDLING_MODE_NONE on_error is never called (the caller
  // learns of failures another way) and UCX may use every transport.
  void connect(const std::vector<std::string>& remote_addresses, PeerErrorHandler on_error,
               ucp_err_handling_mode_t mode = UCP_ERR_HANDLING_MODE_PEER);

  ucp_ep_h endpoint(int rank) const { return endpoints_[static_cast<size_t>(rank)]; }
  // The endpoint for large payloads. UCX 1.13 moves a rendezvous without
  // zero-copy on an endpoint with error handling: over TCP through its
  // receive segments and a copy, at about half the speed. So where
  // ucx_bulk_endpoints_enabled() (ucx_tuning.h), connect() with
  // UCP_ERR_HANDLING_MODE_PEER also makes a second endpoint per peer without
  // error handling, for payloads only; failures are still learnt on the
  // first, which carries every header. The same as endpoint() otherwise.
  ucp_ep_h bulk_endpoint(int rank) const { return bulk_endpoints_[static_cast<size_t>(rank)]; }
  // Whether connect() made bulk endpoints.
  bool has_bulk_endpoints() const;
  ucp_worker_h worker() const { return worker_; }
  std::mutex& lock() { return lock_; }

  // Closes the endpoints, flushing what can be flushed within a short grace;
  // `force` closes at once without flushing (for a peer known to be gone, or
  // whose operations were all cancelled).
  void disconnect(bool force = false);

 private:
  struct ErrorSlot {
    UcxWorker* owner;
    int rank;
  };
  static void on_endpoint_error(void* arg, ucp_ep_h ep, ucs_status_t status);

  ucp_context_h context_ = nullptr;
  ucp_worker_h worker_ = nullptr;
  std::string address_;
  std::vector<ucp_ep_h> endpoints_;
  std::vector<ucp_ep_h> bulk_endpoints_;  // the endpoints_ entry itself where there is no second one
  std::vector<ErrorSlot> error_slots_;
  PeerErrorHandler on_error_;
  std::mutex lock_;
};

}  // namespace dist
