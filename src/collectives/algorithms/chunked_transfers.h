// Point-to-point steps of the tree and recursive algorithms, cut into pipeline
// chunks (Payload::chunks). A step that combines what arrives needs only two
// chunk-sized staging slots, which stay in L2, and combining one chunk overlaps
// the arrival of the next. Sender and receiver cut the same count the same
// way, so their messages pair up one to one.
#pragma once

#include <cstddef>

#include "collectives/algorithms/payload.h"
#include "transport/channel.h"

namespace dist {

// Sends `count` elements of `data` to `peer` in chunks.
void send_chunks(Channel& channel, int peer, const void* data, size_t count, const Payload& payload);

// Receives `count` elements from `peer` (sent with send_chunks) and combines
// them with `mine` into `out` (which may be `mine`): out = theirs op mine when
// `theirs_first`, else mine op theirs.
void receive_and_combine(Channel& channel, int peer, const void* mine, void* out, size_t count, bool theirs_first,
                         const Payload& payload);

// Sends `outgoing_count` elements of `outgoing` to `peer` while receiving the
// peer's `count` elements and combining them as receive_and_combine does.
// Both sides call this with their counts swapped. `outgoing` may be `out`:
// each chunk has left before the combined chunk overwrites it.
void exchange_and_combine(Channel& channel, int peer, const void* outgoing, size_t outgoing_count, const void* mine,
                          void* out, size_t count, bool theirs_first, const Payload& payload);

}  // namespace dist
