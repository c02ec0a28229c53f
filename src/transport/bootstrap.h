// Bootstrap: every task listens at its own cluster address; each connects to
// the tasks before it in rank order and accepts the ones after it. Every
// connection is authenticated with the cluster token, then the two sides swap a
// hello (rank, cluster fingerprint, host identity, pid, transport address).
// The connections stay open afterwards as the control channel: they carry
// aborts and goodbyes, and their closing is how a dead peer is noticed.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "transport/socket.h"

namespace dist {

struct PeerHello {
  int32_t rank = -1;
  int32_t size = 0;
  uint64_t cluster_fingerprint = 0;
  int32_t pid = 0;
  std::string host_id;            // topology/host_identity.h: same value <=> same machine (shared memory possible)
  std::string transport_address;  // UCX worker address bytes
  std::string network_address;    // the same with network transports only (for other hosts)
};

struct BootstrapRequest {
  std::vector<std::string> addresses;  // by rank, "host:port"
  std::vector<std::string> names;      // by rank, "worker:1", for messages
  int32_t rank = 0;
  std::string token;
  uint64_t cluster_fingerprint = 0;
  std::string transport_address;
  std::string network_address;
  SteadyTime deadline;
  // The whole connect deadline as the caller set it, which messages name (the
  // time left when the bootstrap starts is less: the transport, and perhaps a
  // rendezvous, started first).
  std::chrono::milliseconds connect_timeout{0};
};

struct BootstrapPeer {
  Socket socket;  // invalid for this rank itself
  PeerHello hello;
};

// Returns one entry per rank (this rank's holds its own hello). Throws kTimeout
// naming the tasks that never came, kAuth when this process is refused or
// a peer cannot prove the token, kMismatch when a peer sees a different cluster.
// `listener`, when valid, already listens at this task's address (bound to a
// port the system picked before the addresses were swapped); else the
// bootstrap binds this task's address itself.
std::vector<BootstrapPeer> run_bootstrap(const BootstrapRequest& request, Socket listener = Socket());

// A stable hash of the member addresses (FNV-1a), so tasks started with
// different cluster specs refuse each other.
uint64_t cluster_fingerprint(const std::vector<std::string>& addresses);

}  // namespace dist
