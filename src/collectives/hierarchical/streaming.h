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

// `elements` in chunks of `chunk_bytes` (at least one element each).
class Chunks {
 public:
  Chunks(size_t elements, size_t element_bytes, size_t chunk_bytes)
      : elements_(elements), per_chunk_(chunk_bytes / element_bytes > 0 ? chunk_bytes / element_bytes : 1) {}
  size_t count() const { return (elements_ + per_chunk_ - 1) / per_chunk_; }
  // The most elements a chunk holds (for staging; at least one).
  size_t largest() const { return elements_ < per_chunk_ ? (elements_ > 0 ? elements_ : 1) : per_chunk_; }
  size_t first(size_t c) const { return c * per_chunk_; }  // element
  size_t size(size_t c) const { return elements_ - first(c) < per_chunk_ ? elements_ - first(c) : per_chunk_; }

 private:
  size_t elements_;
  size_t per_chunk_;
};

// The two transfers of each chunk in flight, by chunk number.
class ChunkTransfers {
 public:
  void receive(Channel& rail, size_t c, int peer, void* into, size_t bytes) {
    received_[c % kChunksInFlight] = rail.recv(peer, into, bytes);
  }
  void send(Channel& rail, size_t c, int peer, const void* from, size_t bytes) {
    sent_[c % kChunksInFlight] = rail.send(peer, from, bytes);
  }
  void wait(Channel& rail, size_t c) {
    rail.wait(received_[c % kChunksInFlight]);
    rail.wait(sent_[c % kChunksInFlight]);
  }

 private:
  TransferId received_[kChunksInFlight] = {};
  TransferId sent_[kChunksInFlight] = {};
};

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
