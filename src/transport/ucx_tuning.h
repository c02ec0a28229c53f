// Defaults libdistribute gives UCX where UCX's own suit its traffic badly,
// through the config of each context (ucp_config_modify), and only where the
// user has not set the variable (UCX_<NAME>), so every UCX setting keeps
// working as UCX documents it. DIST_UCX_DEFAULTS=0 turns them off.
//
// Restricted to TCP, every message goes eagerly instead of by rendezvous
// (TCP has no zero-copy path for rendezvous to win back its extra round trip).
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

}  // namespace dist
