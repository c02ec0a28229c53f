// Channel: a communicator's point-to-point view of its transport, and all an
// algorithm may use. The collective algorithms never see UCX, shared memory or
// threads; they post sends and receives between communicator ranks
// and wait for them. The transport owns this interface and implements it
// (ucx_channel.h); the layers above only use it.
//
// Rules every implementation keeps:
//  - Messages between one pair of ranks are matched in the order they were
//    posted (the k-th send from a to b lands in the k-th receive b posted from a).
//  - Every message carries the current call's CallWords and sequence number;
//    a receive whose peer is in a different call fails with Status::kMismatch
//    naming both calls, and a message longer than the receive fails the same way.
//  - wait() never blocks past the call's deadline (Status::kTimeout) and fails
//    fast when a peer is gone (Status::kPeerFailed) or the communicator was
//    aborted (Status::kAborted). After a failure the channel stays failed.
//  - Buffers must stay valid and untouched until their transfer completes.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>

namespace dist {

class StallWatch;

using Deadline = std::chrono::steady_clock::time_point;
using TransferId = uint32_t;

// What identifies one call, as fixed-width words the layer above fills in
// (the collectives' call_words). The transport carries them in every
// message header and compares them; it never reads their meaning.
struct CallWords {
  int32_t word[4] = {0, 0, 0, 0};
  uint64_t long_word = 0;

  bool operator==(const CallWords& other) const {
    return word[0] == other.word[0] && word[1] == other.word[1] && word[2] == other.word[2] &&
           word[3] == other.word[3] && long_word == other.long_word;
  }
  bool operator!=(const CallWords& other) const { return !(*this == other); }
};

// How the layer above names a call in error messages ("all_reduce(f32, sum,
// count=4)"), given to a channel when it is made. Called on error paths only.
using DescribeCall = std::string (*)(const CallWords& call);

class Channel {
 public:
  virtual ~Channel() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;

  // Starts one collective call; its words and seq go into every message.
  virtual void begin(const CallWords& call, uint64_t seq, Deadline deadline) = 0;
  // Ends it; every transfer posted since begin() must have been waited for.
  virtual void end() = 0;

  // Posts a transfer of `bytes` bytes (0 is allowed: the message still carries
  // the header, which is how ranks check each other on empty calls).
  virtual TransferId send(int peer, const void* data, size_t bytes) = 0;
  virtual TransferId recv(int peer, void* data, size_t bytes) = 0;

  // Blocks until the transfer is done; throws dist::Error on failure.
  virtual void wait(TransferId id) = 0;
  // True when done; throws on failure.
  virtual bool test(TransferId id) = 0;

  // Moves the transport's own work along once, without waiting: what a rank
  // that waits elsewhere (in shared memory) calls now and then, since a send
  // the transport already reported done may still need this process to poll
  // before its peer gets it (TCP writes a message's tail as its socket
  // drains). Channels that deliver without polling have nothing to do.
  virtual void progress() {}

  // Who a wait asks about when its call stalls (transport/stall_watch.h);
  // channels that never wait on peers ignore it. Not while calls run.
  virtual void set_stall_watch(StallWatch* watch) { (void)watch; }

  void wait_all(std::initializer_list<TransferId> ids) {
    for (TransferId id : ids) wait(id);
  }
  // The common exchange step: send to one peer while receiving from another.
  void send_recv(int to, const void* send_data, size_t send_bytes, int from, void* recv_data,
                 size_t recv_bytes) {
    TransferId r = recv(from, recv_data, recv_bytes);
    TransferId s = send(to, send_data, send_bytes);
    wait(r);
    wait(s);
  }
};

}  // namespace dist
