// The host's identity: which running machine this process is on. Two
// processes with the same identity share a kernel, so they can share memory
// (bootstrap's hello, the shared-memory collectives' attach).
#pragma once

#include <string>

namespace dist {

// This machine's name as the kernel reports it ("" when it cannot say).
std::string kernel_hostname();

// "<hostname>/<boot id>": equal on two processes <=> same machine, same boot.
// The boot id tells apart hosts that share a name (containers started from
// one image, a reused VM name).
//
// TEST HOOK: DIST_HOST_ID_FOR_TESTS, when set and not empty, replaces it
// ("test/<value>"), so that processes of one machine can pose as several
// hosts (the hierarchical path's tests give each "host" its own value). Never
// set it in production: processes that pose as different hosts still share
// one machine's memory and links.
std::string host_identity();

}  // namespace dist
