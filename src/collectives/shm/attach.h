// Whether a new communicator's collectives go through shared memory, decided
// together by its ranks at creation, and the group they then use.
//
// Callers ask only for ranks that share one host (HostLayout, from the
// context's host identities). All ranks must agree, so each says what it can
// do in one exchange over the communicator's channel: whether it wants the
// path (DIST_SHM is not "0", and UCX_TLS, when set, allows shared memory, so
// that a run restricted to TCP stays on TCP) and, for rank 0, the name of a
// segment it has just created. A second exchange confirms that every rank
// mapped it (another /dev/shm, e.g. a container's, does not), and whether it
// can read every peer's memory (single_copy.h). Anything short of every rank
// wanting it with the segment mapped leaves the ranks on point-to-point
// messages.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "collectives/shm/group.h"
#include "transport/channel.h"
#include "transport/failure_flag.h"

namespace dist {

// Uses two sequence numbers from `next_seq`. Returns null when the path is not
// used; throws what the channel throws (a dead peer, a timeout).
std::unique_ptr<ShmGroup> attach_shared_memory(Channel& channel, uint64_t& next_seq, Deadline deadline,
                                               const std::vector<std::string>& names,
                                               std::shared_ptr<FailureFlag> failure);

// This process's own wish, from DIST_SHM and UCX_TLS.
bool shared_memory_wanted();

// Bytes of one data slot of a segment for `ranks` ranks: DIST_SHM_SLOT_BYTES, a
// multiple of 4096 between 4 KiB and 64 MiB, or the default (2 MiB, less when
// many ranks share the segment). Throws invalid-argument for another value.
size_t shared_memory_slot_bytes(int ranks);

}  // namespace dist
