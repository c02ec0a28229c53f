// ShmGroup: the step protocol of the shared-memory collectives.
//
// A collective call is a sequence of steps. In each step every rank writes its
// contribution into its own data slot, then announces the step (arrive); once
// every rank has arrived, each reads what it needs from the others' slots. The
// slots alternate between steps, and a rank can only be one step ahead of the
// slowest (it waits for everyone's arrival), so a slot is never overwritten
// while a peer still reads it. The split all-reduce adds a second announcement
// per step (publish_reduced) for its reduced slices.
//
// The first step of a call also publishes the call's signature; every rank
// compares all the others' with its own, so ranks that disagree all fail with
// kMismatch naming both sides. Waiting spins briefly (latency), then yields the
// core (more ranks than cores), then sleeps between polls (a peer busy with
// computation); it ends with kTimeout at the deadline, or with the
// communicator's failure (a dead peer, an abort) as soon as it is recorded.
#pragma once

#include <sys/types.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "collectives/shm/agreed_choice.h"
#include "collectives/shm/segment.h"
#include "collectives/shm/store_choice.h"
#include "collectives/signature.h"
#include "transport/failure_flag.h"

namespace dist {

class StallWatch;

class ShmGroup {
 public:
  // `pids`: every rank's process, when each can read every other's memory
  // (single_copy.h); empty otherwise. `cores`: the fewest cores any rank may
  // run on, which every rank must see alike (0: this process's own).
  ShmGroup(ShmSegment segment, int rank, std::vector<std::string> names, std::shared_ptr<FailureFlag> failure,
           std::vector<pid_t> pids = {}, int cores = 0);

  // The cores this process may run on.
  static int usable_cores();

  int rank() const { return rank_; }
  int size() const { return segment_.ranks(); }
  size_t slot_bytes() const { return segment_.slot_bytes(); }
  // The step of every collective but the out-of-place split all-reduce, which
  // takes the whole slot: kShmStepBytes, or the slot when it is smaller.
  size_t step_bytes() const { return std::min(slot_bytes(), kShmStepBytes); }

  // Starts a call; its first step publishes the signature. Its deadline is
  // `timeout` after it first has to wait for a peer beyond a short spin, so a
  // call that never waits long reads no clock.
  void begin(const CallSignature& signature, uint64_t seq, std::chrono::milliseconds timeout);

  // Where this rank puts its contribution of `bytes` to the current step
  // (before arriving), and where any rank's is read (after waiting): up to
  // kShmInlineBytes ride in the call record, whose line every peer reads for
  // the announcement anyway; more go in the slot. A step's slot parts (all-to-all,
  // reduce-scatter) are always in the slot.
  unsigned char* my_area(size_t bytes) const { return bytes <= kShmInlineBytes ? record_data(rank_) : my_slot(); }
  const unsigned char* area(int rank, size_t bytes) const {
    return bytes <= kShmInlineBytes ? record_data(rank) : slot(rank);
  }

  // This rank's slot, and any rank's, for the current step.
  unsigned char* my_slot() const { return segment_.slot(rank_, static_cast<int>(step_ & 1)) + slot_offset_; }
  // This rank's slot for the next step. Writable once arrive_and_wait() of the
  // current step has returned: every peer has then finished the step before,
  // the last one that read it.
  unsigned char* my_next_slot() const {
    return segment_.slot(rank_, static_cast<int>((step_ + 1) & 1)) + slot_offset_;
  }
  const unsigned char* slot(int rank) const { return segment_.slot(rank, static_cast<int>(step_ & 1)) + slot_offset_; }
  // For a call that puts `bytes` (from kShmRotationMinBytes) in each slot:
  // moves where the slots start, for this call only, to the next of as many
  // places as fit in a step's worth of the slot (32 for 8 KiB), taken in turn
  // call by call; the same place on every rank, since calls agree on `bytes`
  // or fail on their signature before anyone reads. A call of more than a
  // step, which has no room for two places, stays put. A block written
  // where the peer read one two calls ago costs more than one written where
  // it read long ago: 8 KiB blocks gather about 25% faster (bench/README.md).
  void rotate_slots(size_t bytes);

  // Announces this rank's contribution to the current step and waits for all.
  void arrive_and_wait() {
    arrive();
    wait_arrived();
  }
  // The same in two halves, for a rank with work of its own to do meanwhile.
  void arrive();
  void wait_arrived() { wait_for_all(Counter::kArrived); }
  // Split all-reduce: announces this rank's reduced slice; then waits for all.
  void publish_reduced();
  void wait_reduced() { wait_for_all(Counter::kReduced); }
  // Moves to the next step of the call.
  void next_step() { ++step_; }

  // Whether this group's ranks copy blocks straight from each other's buffers.
  bool single_copy() const { return !pids_.empty(); }
  // Whether the ranks outnumber the cores some rank may run on (the same on
  // every rank).
  bool shares_cores() const { return shares_cores_; }
  // What a rank does on each idle turn of a long wait, besides yielding: in a
  // job across hosts, its communicator keeps UCX moving (Channel::progress),
  // because a peer on another host may be waiting on data this process holds.
  void set_idle_work(std::function<void()> work) { idle_work_ = std::move(work); }
  // Who a wait asks about when its call stalls (transport/stall_watch.h).
  void set_stall_watch(StallWatch* watch) { stall_ = watch; }
  // Copies `bytes` at `remote` in `rank`'s process to `local`; returns 0 or
  // an errno (read_process_memory), or kPeerWithdrew when `rank` has left
  // the group (withdraw). Only when single_copy().
  int read_from(int rank, const void* remote, void* local, size_t bytes) const;
  // The other way: copies `bytes` at `local` to `remote` in `rank`'s process.
  int write_to(int rank, void* remote, const void* local, size_t bytes) const;
  // After a failed call, before it returns to the caller: this rank leaves
  // the group for good (a failed communicator runs no more calls), so that
  // the caller may free or reuse the buffers it passed. A peer that has not
  // yet seen the failure may still be copying into or out of them: this
  // marks the rank withdrawn, which every later copy checks first, then waits
  // until no peer is in the middle of a copy (a peer that is gone copies
  // nothing). Once is enough; later calls return at once.
  void withdraw();
  // Throws the communicator's failure, if it has one.
  void check_failure() const { failure_->check(); }
  // Waits up to `most` for the communicator's failure to be recorded (by its
  // monitor, a peer's report or a call), then throws it; returns if none came.
  void await_failure(std::chrono::milliseconds most) const;
  // The name of `rank`, for messages.
  const std::string& name_of(int rank) const { return names_[static_cast<size_t>(rank)]; }
  // How this rank writes its slot where that is chosen call by call
  // (store_choice.h): as a broadcast's root, and copying the split
  // all-reduce's inputs in. Each learns from its own calls.
  StoreChoice& broadcast_stores() { return broadcast_stores_; }
  StoreChoice& copy_in_stores() { return copy_in_stores_; }
  // Whether an out-of-place all-reduce reads and writes the peers' buffers
  // or splits through the slots, where that is learned (agreed_choice.h):
  // rank 0 decides for every rank.
  AgreedChoice& all_reduce_choice() { return all_reduce_choice_; }
  // How many calls began on this group before the current one: the same on
  // every rank (each call takes at least one step that every rank arrives at).
  uint64_t call_index() const { return calls_ - 1; }
  // Work shared by claiming (shm_allreduce_read_write): takes the next of the
  // `chunks` chunks of `owner`'s part of the current call that no rank has
  // taken, and returns its index, or `chunks` when all are taken. Every rank
  // may claim any part's chunks; each chunk goes to one rank. The parts' words
  // start afresh at each call, which is safe because no rank can claim in the
  // next call before every rank has ended this one (the call's last step).
  size_t claim_chunk(int owner, size_t chunks);
  // How many chunks of other ranks' parts this rank has done, over the
  // group's life (tests/test_shm_claimed_chunks).
  uint64_t chunks_taken_over() const { return chunks_taken_over_; }

 private:
  enum class Counter { kArrived, kReduced };
  void wait_for_all(Counter counter);
  // Runs copy() (a process_vm transfer with `rank`'s process) unless `rank`
  // has withdrawn, flagged as copying while it runs (withdraw).
  template <typename Copy>
  int copy_with(int rank, Copy&& copy) const;
  void check_signature(int peer) const;
  // describe() of the current call, for messages.
  std::string describe_call() const;
  unsigned char* record_data(int rank) const { return segment_.control(rank).calls[step_ & 1].data; }
  [[noreturn]] void timed_out(int peer, const char* what) const;

  ShmSegment segment_;
  int rank_;
  std::vector<std::string> names_;
  std::shared_ptr<FailureFlag> failure_;
  std::vector<pid_t> pids_;
  bool shares_cores_;    // more ranks than some rank may use cores
  unsigned spin_polls_;  // polls before the first yield: fewer when ranks outnumber cores
  std::function<void()> idle_work_;
  StallWatch* stall_ = nullptr;
  uint64_t step_ = 1;  // counters start at 0: "nothing published yet"
  uint64_t call_first_step_ = 0;
  // The call's signature as the call record carries it, its one copy here:
  // arrive() writes it, check_signature() compares a peer's with it (not with
  // this rank's own record, a line the peers are polling), and messages
  // decode it (describe_call).
  struct RecordedSignature {
    int16_t kind = 0;
    int16_t dtype = 0;
    int16_t op = 0;
    int32_t root = 0;
    uint64_t count = 0;
  } recorded_;
  uint64_t seq_ = 0;
  std::chrono::milliseconds timeout_{0};
  std::chrono::steady_clock::time_point deadline_{};  // unset (epoch) until the call first waits long
  StoreChoice broadcast_stores_;
  StoreChoice copy_in_stores_;
  AgreedChoice all_reduce_choice_;
  uint64_t calls_ = 0;  // begin()s so far
  size_t slot_offset_ = 0;  // rotate_slots(); 0 from begin()
  uint64_t chunks_taken_over_ = 0;
};

}  // namespace dist
