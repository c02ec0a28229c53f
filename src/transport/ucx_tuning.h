// Defaults libdistribute gives UCX where UCX's own suit its traffic badly,
// through the config of each context (ucp_config_modify), and only where the
// user has not set the variable (UCX_<NAME>), so every UCX setting keeps
// working as UCX documents it. DIST_UCX_DEFAULTS=0 turns them off.
//
// Restricted to TCP, with bulk endpoints (below), messages go eagerly up to
// 512 KiB and by rendezvous above; without them every message goes eagerly.
// UCX's TCP rendezvous writes straight from the sender's buffer and reads
// straight into the receiver's, but only on endpoints without error handling
// (UcxWorker::bulk_endpoint); up to 512 KiB its extra round trip costs more
// than the copies it saves (64 KiB: 104 against 33 us, 1 MiB: level; a 2-rank
// all-reduce under UCX_TLS=tcp, bench/README.md).
//
// Nothing here touches the environment: setenv in a library races with
// getenv in every other thread of the process (UCX reads its variables with
// getenv whenever a context is made), and one such race crashed a parameter-
// server test in the Rust binding's parallel test threads. UCX 1.13 takes the
// TCP transport's own settings (UCX_TCP_TX_SEG_SIZE, ...) only from the
// environment, so the larger TCP segments this library used to set there are
// left to the user; without them the 16 MiB ring all-reduce over UCX_TLS=tcp
// measured 1.90-2.25 GB/s against 1.53-2.59 with them (eight interleaved
// pairs, bench/README.md).
#pragma once

#include <ucp/api/ucp.h>

namespace dist {

// Applies the defaults to `config` (from ucp_config_read) before ucp_init.
// The environment part takes effect because transports read it in ucp_init.
void apply_ucx_defaults(ucp_config_t* config);

// Whether UCX_TLS names only TCP transports ("tcp", or with "self").
bool ucx_restricted_to_tcp();

// Whether large payloads get endpoints of their own without error handling
// (UcxWorker::bulk_endpoint): only restricted to TCP, where a peer that dies
// mid-transfer fails the transfer. UCX's shared-memory transports abort the
// process instead when a peer vanishes under an endpoint without error
// handling (seen with cma), and between hosts UCX_TLS decides which
// transports that could be. DIST_UCX_BULK_ENDPOINTS=0 turns them off.
bool ucx_bulk_endpoints_enabled();

}  // namespace dist
