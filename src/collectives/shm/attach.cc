#include "collectives/shm/attach.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>

#include "base/status.h"
#include "collectives/channel_exchange.h"
#include "collectives/shm/single_copy.h"

namespace dist {
namespace {

// A slot holds one step of a collective. Most take steps of kShmStepBytes;
// the out-of-place split all-reduce takes the whole slot, and ran faster with
// 2 MiB than with 256 KiB on a machine with 2 MiB of L2 per core (16 MiB:
// 6.3-6.6 GB/s against 4.9-5.2; bench/README.md). The slots of a segment (two
// per rank) stay within 16 MiB up to 32 ranks; a slot is never smaller than a
// step, as before (64 ranks: 32 MiB).
constexpr size_t kLargestDefaultSlotBytes = 2 << 20;
constexpr size_t kDefaultSegmentDataBytes = 16 << 20;

size_t default_slot_bytes(int ranks) {
  const size_t share = kDefaultSegmentDataBytes / (2 * static_cast<size_t>(ranks)) / 4096 * 4096;
  return std::clamp(share, kShmStepBytes, kLargestDefaultSlotBytes);
}

struct AttachRecord {
  uint8_t wants = 0;
  uint8_t created = 0;  // rank 0: the segment exists under `segment`
  uint8_t reserved[6] = {};
  char segment[64] = {};
  SingleCopyProbe probe;  // all zero when this rank does not want single copies
};

struct MappedRecord {
  uint64_t mapped = 0;
  uint64_t reads_all = 0;  // this rank could read (and write back) every peer's probe
  uint64_t cores = 0;      // this process may run on this many
};

// Whether this rank can read and write the memory of every other rank.
bool reads_every_peer(const std::vector<AttachRecord>& all, int me) {
  for (size_t r = 0; r < all.size(); ++r) {
    if (static_cast<int>(r) != me && !single_copy_reaches(all[r].probe)) return false;
  }
  return true;
}

std::string unique_segment_name() {
  std::random_device random;
  char name[64];
  std::snprintf(name, sizeof name, "/libdistribute-%ld-%08x%08x", static_cast<long>(getpid()), random(), random());
  return name;
}

// Shared-memory transports as UCX_TLS names them ("all", "sm", "shm", posix,
// sysv, cma, knem, xpmem); a list starting with '^' excludes, so allows them.
bool ucx_allows_shared_memory(const char* tls) {
  if (tls == nullptr || *tls == '\0' || *tls == '^') return true;
  std::string list(tls);
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find(',', start);
    if (end == std::string::npos) end = list.size();
    const std::string name = list.substr(start, end - start);
    for (const char* allowed : {"all", "sm", "shm", "posix", "sysv", "cma", "knem", "xpmem"}) {
      if (name == allowed) return true;
    }
    start = end + 1;
  }
  return false;
}

}  // namespace

bool shared_memory_wanted() {
  const char* setting = std::getenv("DIST_SHM");
  if (setting != nullptr && std::strcmp(setting, "0") == 0) return false;
  return ucx_allows_shared_memory(std::getenv("UCX_TLS"));
}

size_t shared_memory_slot_bytes(int ranks) {
  const char* setting = std::getenv("DIST_SHM_SLOT_BYTES");
  if (setting == nullptr || *setting == '\0') return default_slot_bytes(ranks);
  char* end = nullptr;
  const unsigned long long bytes = std::strtoull(setting, &end, 10);
  if (*end != '\0' || bytes < 4096 || bytes > (64ull << 20) || bytes % 4096 != 0) {
    fail_invalid(std::string("DIST_SHM_SLOT_BYTES: '") + setting +
                 "' is not a multiple of 4096 between 4096 and 67108864");
  }
  return static_cast<size_t>(bytes);
}

std::unique_ptr<ShmGroup> attach_shared_memory(Channel& channel, uint64_t& next_seq, Deadline deadline,
                                               const std::vector<std::string>& names,
                                               std::shared_ptr<FailureFlag> failure) {
  const int n = channel.size();
  const int me = channel.rank();
  AttachRecord mine;
  mine.wants = shared_memory_wanted() && n <= kShmMaxRanks ? 1 : 0;
  if (single_copy_wanted()) mine.probe = single_copy_probe();
  ShmSegment segment;
  std::string name;
  if (me == 0 && mine.wants) {
    name = unique_segment_name();
    try {
      segment = ShmSegment::create(name, n, shared_memory_slot_bytes(n));
      mine.created = 1;
      std::snprintf(mine.segment, sizeof mine.segment, "%s", name.c_str());
    } catch (const Error&) {
      mine.wants = 0;  // e.g. /dev/shm is full: fall back, do not fail
    }
  }
  std::vector<AttachRecord> all(static_cast<size_t>(n));
  try {
    exchange_with_all(channel, CollectiveKind::kCommSetup, next_seq++, deadline, &mine, sizeof mine, all.data());
  } catch (...) {
    if (mine.created) ShmSegment::unlink(name);
    throw;
  }
  bool usable = all[0].created == 1;
  for (const AttachRecord& record : all) {
    usable = usable && record.wants == 1;
  }
  if (!usable) {
    if (mine.created) ShmSegment::unlink(name);
    return nullptr;
  }
  MappedRecord mapped;
  if (me != 0) {
    all[0].segment[sizeof all[0].segment - 1] = '\0';  // from the wire: terminate before use
    try {
      segment = ShmSegment::open(all[0].segment, n);
      mapped.mapped = 1;
    } catch (const Error&) {
      mapped.mapped = 0;  // e.g. another user or another /dev/shm: fall back
    }
  } else {
    mapped.mapped = 1;
  }
  mapped.reads_all = mine.probe.pid != 0 && reads_every_peer(all, me) ? 1 : 0;
  mapped.cores = static_cast<uint64_t>(ShmGroup::usable_cores());
  std::vector<MappedRecord> confirmations(static_cast<size_t>(n));
  try {
    exchange_with_all(channel, CollectiveKind::kCommSetup, next_seq++, deadline, &mapped, sizeof mapped,
                      confirmations.data());
  } catch (...) {
    if (me == 0) ShmSegment::unlink(name);
    throw;
  }
  if (me == 0) ShmSegment::unlink(name);
  bool single_copy = true;
  uint64_t fewest_cores = mapped.cores;
  for (const MappedRecord& record : confirmations) {
    if (record.mapped != 1) return nullptr;
    single_copy = single_copy && record.reads_all == 1;
    fewest_cores = std::min(fewest_cores, std::max<uint64_t>(record.cores, 1));
  }
  // Single copies only when every rank can read every other: each rank then
  // takes the same path in every call.
  std::vector<pid_t> pids;
  if (single_copy) {
    for (const AttachRecord& record : all) pids.push_back(static_cast<pid_t>(record.probe.pid));
  }
  // Every rank makes the same choices from these (single_copy.h's sizes).
  return std::make_unique<ShmGroup>(std::move(segment), me, names, std::move(failure), std::move(pids),
                                    static_cast<int>(std::min<uint64_t>(fewest_cores, kShmMaxRanks + 1)));
}

}  // namespace dist
