// The address other tasks reach this one at, for a task that listens on a port
// the system picks and tells its address through an exchange (transport/
// oob_bootstrap.h), not through a cluster spec written before it started.
#pragma once

#include <string>

#include "base/environment.h"

namespace dist {

// In this order: DIST_ADDRESS (a host name or numeric address, set by the user
// or launcher); else the IPv4 address of the interface that holds the default
// route (the one traffic to other hosts leaves by); else the first address
// other than loopback that the host name resolves to; else 127.0.0.1 (a task
// that can only meet tasks on its own host).
std::string advertised_host(const Environment& env);

}  // namespace dist
