// One UCX context and worker per process context, with an endpoint to every
// peer. UCX runs in serialized mode: every ucp call here is made under lock(),
// which is how several communicators on several threads share one worker.
#pragma once

#include <ucp/api/ucp.h>

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "transport/ucx_log.h"

namespace dist {

// How to reach one peer (UcxWorker::connect).
struct UcxPeer {
  std::string address;          // the peer's worker address (UcxWorker::address); "" for this process
  std::string network_address;  // its network-only address (UcxWorker::network_address)
  bool same_host = true;        // whether the peer shares this machine (topology/host_identity.h)
  std::string location;         // "host NAME (ADDRESS)", for messages
};

class UcxWorker {
 public:
  // Called (under lock()) when UCX reports an endpoint's peer failed.
  using PeerErrorHandler = std::function<void(int rank, const std::string& reason)>;

  // State a transfer's completion callbacks write to, kept alive by the worker
  // when its owner gives the transfer up before UCX has finished with it
  // (keep_until_destroyed).
  class Abandoned {
   public:
    virtual ~Abandoned() = default;
  };

  // `adjust` may change UCX's configuration (after the user's environment and
  // libdistribute's defaults, ucx_tuning.h) before the context starts.
  explicit UcxWorker(const std::function<void(ucp_config_t*)>& adjust = nullptr);
  ~UcxWorker();
  UcxWorker(const UcxWorker&) = delete;
  UcxWorker& operator=(const UcxWorker&) = delete;

  // This worker's address, to hand to peers during bootstrap: with every
  // transport, and with network transports only (for peers on other hosts,
  // which no shared-memory transport reaches).
  const std::string& address() const { return address_; }
  const std::string& network_address() const { return network_address_; }

  // Creates endpoints to every peer (peers[rank]; an empty address is this
  // process). A peer on another host is reached by its network-only address,
  // and gets a bulk endpoint where that is safe (ucx_tuning.h). With
  // UCP_ERR_HANDLING_MODE_NONE on_error is never called (the caller learns of
  // failures another way) and UCX may use every transport.
  void connect(const std::vector<UcxPeer>& peers, PeerErrorHandler on_error,
               ucp_err_handling_mode_t mode = UCP_ERR_HANDLING_MODE_PEER);
  // The same, for peers given by their full addresses only.
  void connect(const std::vector<std::string>& remote_addresses, PeerErrorHandler on_error,
               ucp_err_handling_mode_t mode = UCP_ERR_HANDLING_MODE_PEER);

  ucp_ep_h endpoint(int rank) const { return endpoints_[static_cast<size_t>(rank)]; }
  // The endpoint for large payloads. UCX 1.13 gives an endpoint with error
  // handling no zero-copy rendezvous over TCP (its wireup asks such lanes for
  // memory invalidation, which TCP's memory domain lacks), so a rendezvous
  // moves through receive segments and a copy, at about half the speed. So
  // connect() with UCP_ERR_HANDLING_MODE_PEER also makes a second endpoint
  // per peer without error handling, for payloads only, where
  // ucx_bulk_endpoints_wanted() (ucx_tuning.h) says so: only on request, since
  // UCX aborts when a peer dies under one; failures are still learnt on the
  // first, which carries every header. The same as endpoint() otherwise.
  ucp_ep_h bulk_endpoint(int rank) const { return bulk_endpoints_[static_cast<size_t>(rank)]; }
  // Whether connect() made bulk endpoints (for any peer).
  bool has_bulk_endpoints() const;
  // Whether `rank` is on another host (sends to it take the eager/rendezvous
  // switch made for TCP, ucx_tuning.h).
  bool remote_host(int rank) const { return !peers_[static_cast<size_t>(rank)].same_host; }
  // "NAME on host HOST (ADDRESS)": `name` (the task) and where `rank` runs,
  // for messages about a peer; `name` alone before connect() told where.
  std::string describe(const std::string& name, int rank) const;
  ucp_worker_h worker() const { return worker_; }
  std::mutex& lock() { return lock_; }

  // Takes over state that UCX callbacks of unfinished requests still write
  // to, until the worker is destroyed; `peer`'s endpoints are then closed
  // without waiting for them (call under lock()).
  void keep_until_destroyed(int peer, std::unique_ptr<Abandoned> state);

  // Waits, up to `limit`, until what was sent to the peers not in `lost` (by
  // rank) and without abandoned requests has been delivered.
  void flush(const std::vector<bool>& lost, std::chrono::milliseconds limit);

  // Closes the endpoints. Those of peers in `lost` (by rank; may be empty),
  // and of peers with abandoned requests, are closed at once (force, where
  // UCX allows it: endpoints with error handling, whose requests UCX then
  // completes with an error, as ucp_worker_destroy requires), or left to the
  // worker's destruction; the others are flushed first, within a short grace,
  // so that peers see an orderly close. `force` treats every peer as lost.
  void disconnect(bool force = false, const std::vector<bool>& lost = {});

 private:
  struct ErrorSlot {
    UcxWorker* owner;
    int rank;
  };
  static void on_endpoint_error(void* arg, ucp_ep_h ep, ucs_status_t status);
  ucp_ep_h create_endpoint(const std::string& address, ucp_err_handling_mode_t mode, ErrorSlot* slot);

  UcxLogRoute log_route_;  // first made, last gone: UCX speaks through it throughout
  ucp_context_h context_ = nullptr;
  ucp_worker_h worker_ = nullptr;
  std::string address_;
  std::string network_address_;
  std::vector<UcxPeer> peers_;
  std::vector<ucp_ep_h> endpoints_;
  std::vector<ucp_ep_h> bulk_endpoints_;  // the endpoints_ entry itself where there is no second one
  std::vector<bool> abandoned_;           // by rank: requests were given up on
  std::vector<bool> error_handling_;      // by rank: whether endpoints_ has error handling
  std::vector<ErrorSlot> error_slots_;
  std::vector<std::unique_ptr<Abandoned>> kept_;
  PeerErrorHandler on_error_;
  std::mutex lock_;
};

}  // namespace dist
