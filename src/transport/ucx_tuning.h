// Defaults libdistribute gives UCX where UCX's own suit its traffic badly.
// Each applies only when the user has not set the variable (UCX_<NAME>), so
// every UCX setting keeps working as UCX documents it. The TCP segment sizes
// reach UCX only through the environment (ucx_tuning.cc says why): the first
// context of a process sets UCX_TCP_TX_SEG_SIZE and UCX_TCP_RX_SEG_SIZE there
// when they are unset. DIST_UCX_DEFAULTS=0 turns all of this off.
//
// Measured on loopback with UCX 1.13 (dist-bench -n 2, ring all-reduce,
// UCX_TLS=tcp, 16 MiB float32): 1.65 GB/s bus bandwidth with UCX's defaults,
// 2.0 with 64 KiB TCP send segments and 256 KiB receive segments (UCX sends a
// large message in 8 KiB segments by default: four times the system calls),
// and 2.12 when, restricted to TCP, every message also goes eagerly instead
// of by rendezvous (TCP has no zero-copy path for rendezvous to win back its
// extra round trip).
#pragma once

#include <ucp/api/ucp.h>

namespace dist {

// Applies the defaults to `config` (from ucp_config_read) before ucp_init.
// The environment part takes effect because transports read it in ucp_init.
void apply_ucx_defaults(ucp_config_t* config);

}  // namespace dist
