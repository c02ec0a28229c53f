// The pipeline the streamed collectives between two hosts share: each chunk
// is started (its transfers with the counterpart posted, its work in the host
// done) while earlier chunks still cross the link, and finished (its
// transfers waited for, what came used) in order, at most kChunksInFlight
// behind.
#pragma once

#include <cstddef>

#include "transport/channel.h"

namespace dist {

// Enough to keep the link busy while a rank does the next chunk's work in
// its host.
inline constexpr size_t kChunksInFlight = 4;

// start(c) and finish(c) for every chunk c of `chunks`. An empty call still
// trades the call's header with the counterpart on `rail` (rail rank 1 - own),
// so the two check each other's call.
template <typename Start, typename Finish>
void stream_chunks(Channel& rail, size_t chunks, Start&& start, Finish&& finish) {
  for (size_t c = 0; c < chunks; ++c) {
    if (c >= kChunksInFlight) finish(c - kChunksInFlight);
    start(c);
  }
  for (size_t c = chunks > kChunksInFlight ? chunks - kChunksInFlight : 0; c < chunks; ++c) finish(c);
  if (chunks == 0) {
    const int other = 1 - rail.rank();
    rail.send_recv(other, nullptr, 0, other, nullptr, 0);
  }
}

}  // namespace dist
