// The rendezvous at the master's address, for launchers that give every task
// its rank but no list of hosts (torchrun, mpirun across hosts). Rank 0 listens
// at the rendezvous address; every task listens for the bootstrap on a port the
// system picks, connects to rank 0 (retrying until the deadline), proves the
// cluster token (transport/handshake.h) and tells its rank, the job's size and
// its "host:port" (host: this end of its connection to rank 0, the address that
// reaches this host from there). Once all have joined, rank 0 answers each with
// every task's address; the usual bootstrap then runs on those.
//
//   task -> rank 0 : handshake, "DISTJOIN" rank size address_bytes, address
//   rank 0 -> task : "DISTADDR" size bytes, addresses joined by '\n'
//                 or "DISTFAIL" status bytes, why (a task disagrees with rank 0,
//                    or rank 0 gave up: the message names the missing ranks)
#pragma once

#include <string>
#include <vector>

#include "cluster/resolved_cluster.h"
#include "transport/socket.h"

namespace dist {

struct RendezvousOutcome {
  std::vector<std::string> addresses;  // by rank: where each task listens for the bootstrap
  Socket listener;                     // this task's, listening at addresses[rank]
};

// Throws kTimeout at the deadline: on rank 0 naming the ranks that never joined,
// elsewhere naming the rendezvous address when rank 0 cannot be reached or never
// answers; kAuth when the token differs; kMismatch when a task disagrees with
// rank 0 on the job's size or two tasks claim one rank.
RendezvousOutcome run_rendezvous(const RendezvousPoint& point, const std::string& token, SteadyTime deadline);

}  // namespace dist
