// The small all-to-all exchanges a communicator makes about itself (split keys,
// how its ranks can reach each other), as one call on its channel.
#pragma once

#include <cstddef>
#include <cstdint>

#include "collectives/signature.h"
#include "transport/channel.h"

namespace dist {

// Every rank contributes `bytes` bytes from `mine`; `all` (size() * bytes)
// receives rank r's at r * bytes, this rank's included. `kind` names the call
// in the message headers, so that a peer in a different call is a mismatch.
// Brackets the call with begin/end itself.
void exchange_with_all(Channel& channel, CollectiveKind kind, uint64_t seq, Deadline deadline, const void* mine,
                       size_t bytes, void* all);

}  // namespace dist
