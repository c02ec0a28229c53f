#include "collectives/channel_exchange.h"

#include <cstring>
#include <vector>

#include "base/status.h"

namespace dist {

void exchange_with_all(Channel& channel, CollectiveKind kind, uint64_t seq, Deadline deadline, const void* mine,
                       size_t bytes, void* all) {
  CallSignature signature;
  signature.kind = kind;
  signature.dtype = DType::U8;
  signature.count = bytes;
  auto* gathered = static_cast<unsigned char*>(all);
  const int n = channel.size();
  const int me = channel.rank();
  std::memcpy(gathered + static_cast<size_t>(me) * bytes, mine, bytes);
  try {
    channel.begin(call_words(signature), seq, deadline);
    std::vector<TransferId> transfers;
    for (int peer = 0; peer < n; ++peer) {
      if (peer == me) continue;
      transfers.push_back(channel.recv(peer, gathered + static_cast<size_t>(peer) * bytes, bytes));
      transfers.push_back(channel.send(peer, mine, bytes));
    }
    for (TransferId t : transfers) channel.wait(t);
    channel.end();
  } catch (const Error&) {
    channel.end();
    throw;
  }
}

}  // namespace dist
