// Defaults libdistribute gives UCX where UCX's own suit its traffic badly,
// through the config of each context (ucp_config_modify), and only where the
// user has not set the variable (UCX_<NAME>), so every UCX setting keeps
// working as UCX documents it. DIST_UCX_DEFAULTS=0 turns them off.
//
// Restricted to TCP (UCX_TLS=tcp), with bulk endpoints (below, on request),
// messages go eagerly up to 512 KiB and by rendezvous above; without them
// eagerly at every size. UCX's TCP rendezvous writes straight from the
// sender's buffer and reads straight into the receiver's, but only on
// endpoints without error handling (UcxWorker::bulk_endpoint); up to 512 KiB
// its extra round trip costs more than the copies it saves (64 KiB: 104
// against 33 us, 1 MiB: level; a 2-rank all-reduce under UCX_TLS=tcp,
// bench/README.md). UCX's own threshold for TCP (RNDV_THRESH=auto) is far
// lower: between two hosts a 64 KiB all-reduce took 224-285 us with it and
// 94-243 us at 512 KiB. Where only TCP is used (UCX_TLS=tcp) the threshold
// is the context's (RNDV_THRESH); otherwise UCX's own stays for every other
// transport (shared memory on this host), and sends to other hosts ask for
// UCX's "local" threshold (UCP_OP_ATTR_FLAG_FAST_CMPL), which is
// RNDV_SEND_NBR_THRESH, set here to the same 512 KiB and used by nothing else.
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
void apply_ucx_defaults(ucp_config_t* config);

// Whether UCX_TLS names only TCP transports ("tcp", or with "self").
bool ucx_restricted_to_tcp();

// Whether UCX can reach other hosts only through TCP: UCX_TLS names no network
// transport but tcp, or names none at all (unset, "all", "^...") on a machine
// without RDMA devices (/sys/class/infiniband).
bool ucx_network_is_tcp_only();

// Whether large payloads to a peer get an endpoint of their own without error
// handling (UcxWorker::bulk_endpoint): only on request, DIST_UCX_BULK_ENDPOINTS=1,
// and only where every transport UCX could pick for that peer is TCP (on the
// same host restricted to it, UCX_TLS=tcp; to another host where
// ucx_network_is_tcp_only()). They move about a quarter more over TCP (UCX
// 1.13 copies every rendezvous out of its receive segments on an endpoint
// with error handling), but UCX does not survive a peer that dies under one:
// with TCP's zero-copy PUT it aborted on `tcp_ep.c:939 Assertion ep->flags &
// UCT_TCP_EP_FLAG_PUT_TX_WAITING_ACK`, without PUT on `uct_iface.h:884
// Assertion comp->count > 0` (3 and 1 of 400 and 200 kills of a rank in the
// middle of 16 MiB all-reduces between two emulated hosts, none of 400 without
// them), and the shared-memory and RDMA transports abort as well (seen with
// cma). So they are for jobs that would rather go faster than outlive a peer.
bool ucx_bulk_endpoints_wanted(bool same_host);

}  // namespace dist
