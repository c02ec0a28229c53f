// A POSIX shared-memory segment that every rank of a communicator on one host
// maps: a header (with the group's agreed choices), one control block per
// rank, and two data slots per rank.
//
// Rank 0 creates it under an unguessable name (mode 0600, memory reserved up
// front so that a full /dev/shm is an error here, not a SIGBUS later); the
// others open it by that name; rank 0 unlinks the name once all have mapped it,
// so nothing is left behind even if every process is killed afterwards.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

namespace dist {

// Communicators with more ranks on one host use the point-to-point path.
inline constexpr int kShmMaxRanks = 64;
// The step most collectives take: large enough to amortise a step's two
// cache-line handshakes, small enough that its data stays in the L2 of the
// cores that share it (an in-place all-reduce then overwrites cached lines).
inline constexpr size_t kShmStepBytes = 256 * 1024;

// Below this a call's slots stay put: a few lines the peer has just read are
// written faster than lines it read long ago (256 B-1 KiB: 2-15% slower rotated).
inline constexpr size_t kShmRotationMinBytes = 2048;

// How many bytes of a step's contribution travel in its call record.
inline constexpr size_t kShmInlineBytes = 16;

// What rank q publishes for rank r to read. Counters only grow; a step's data
// and signature are written before its counter is stored (release), and read
// after it is loaded (acquire).
//
// Step s is announced in calls[s % 2]: a peer can be at most one step ahead,
// so the record of a parity is never rewritten while someone still reads it.
// The announcement shares the cache line of the call's signature and of a
// small message's data, so a peer that sees the step has the rest with it:
// one line crosses cores per step instead of two (about 150 ns each here).
struct alignas(64) ShmCallRecord {
  std::atomic<uint64_t> announced{0};  // last step of this parity whose contribution is published
  uint64_t first_step = 0;             // the step at which this call began
  uint64_t seq = 0;
  uint64_t count = 0;
  // A step's contribution of up to kShmInlineBytes rides here instead of in a
  // slot; at offset 32, aligned for any element type.
  alignas(16) unsigned char data[kShmInlineBytes] = {};
  int32_t root = 0;
  int16_t kind = 0;  // the signature's enums, narrowed to leave room for data
  int16_t dtype = 0;
  int16_t op = 0;
};
static_assert(sizeof(ShmCallRecord) == 64, "a call record is one cache line");
static_assert(offsetof(ShmCallRecord, data) % 16 == 0, "inline data is aligned for every element type");

// What a rank of a group with single copies says of its own copies, on a
// line of its own (it changes at every copy): whether it is copying to or
// from a peer's buffer right now, and whether it has left the group after a
// failed call, so that no peer may touch its buffers again (ShmGroup::withdraw).
struct alignas(64) ShmCopyState {
  std::atomic<uint32_t> copying{0};
  std::atomic<uint32_t> withdrawn{0};
};

// The choices every rank of a group makes alike without a message
// (agreed_choice.h): one word per size class, written by rank 0 alone, read
// by every rank at the start of a call; in the header's page, on lines of
// their own.
inline constexpr int kShmAgreedClasses = 64;
struct alignas(64) ShmAgreedChoices {
  std::atomic<uint64_t> words[kShmAgreedClasses];
};

struct alignas(64) ShmRankControl {
  ShmCallRecord calls[2];
  std::atomic<uint64_t> reduced{0};  // last step whose reduced slice is published
  // The chunks of this rank's part of a shared-work call that some rank has
  // taken (ShmGroup::claim_chunk): the call's index in the high 32 bits, the
  // next chunk in the low 32.
  std::atomic<uint64_t> claimed{0};
  uint8_t pad[48];
  ShmCopyState copies;
};

class ShmSegment {
 public:
  // Rank 0: creates and initialises a segment for `ranks` ranks with data slots
  // of `slot_bytes`. Throws kSystem (naming the call and errno) on failure.
  static ShmSegment create(const std::string& name, int ranks, size_t slot_bytes);
  // Other ranks: maps the segment rank 0 created, after checking its layout.
  static ShmSegment open(const std::string& name, int ranks);
  // Removes the name (mappings stay valid). Errors are ignored: best effort.
  static void unlink(const std::string& name);

  ShmSegment() = default;
  ShmSegment(ShmSegment&& other) noexcept;
  ShmSegment& operator=(ShmSegment&& other) noexcept;
  ShmSegment(const ShmSegment&) = delete;
  ShmSegment& operator=(const ShmSegment&) = delete;
  ~ShmSegment();

  bool mapped() const { return base_ != nullptr; }
  int ranks() const { return ranks_; }
  size_t slot_bytes() const { return slot_bytes_; }
  // Inline, with the offsets worked out once: every step of every call
  // reaches them several times.
  ShmRankControl& control(int rank) const { return controls_[rank]; }
  // The group's agreed choices (kShmAgreedClasses words).
  std::atomic<uint64_t>* agreed_words() const { return agreed_->words; }
  // Data slot `which` (0 or 1) of `rank`.
  unsigned char* slot(int rank, int which) const {
    return slots_ + (2 * static_cast<size_t>(rank) + static_cast<size_t>(which)) * slot_bytes_;
  }

 private:
  ShmSegment(void* base, size_t bytes, int ranks, size_t slot_bytes);

  void* base_ = nullptr;
  size_t bytes_ = 0;
  int ranks_ = 0;
  size_t slot_bytes_ = 0;
  ShmAgreedChoices* agreed_ = nullptr;  // in base_
  ShmRankControl* controls_ = nullptr;  // in base_
  unsigned char* slots_ = nullptr;      // in base_
};

}  // namespace dist
