#include "collectives/shm/segment.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>
#include <utility>

#include "base/status.h"

namespace dist {
namespace {

constexpr uint64_t kMagic = 0x64697374'73686d36ull;  // "distshm6": the chunks claimed in each rank's control line
constexpr size_t kPage = 4096;

struct ShmHeader {
  uint64_t magic;
  uint32_t ranks;
  uint32_t reserved;
  uint64_t slot_bytes;
  uint64_t total_bytes;
};

size_t round_up(size_t bytes, size_t to) { return (bytes + to - 1) / to * to; }

size_t agreed_offset() { return round_up(sizeof(ShmHeader), alignof(ShmAgreedChoices)); }
size_t controls_offset() { return round_up(agreed_offset() + sizeof(ShmAgreedChoices), kPage); }
size_t slots_offset(int ranks) {
  return controls_offset() + round_up(sizeof(ShmRankControl) * static_cast<size_t>(ranks), kPage);
}
size_t total_bytes(int ranks, size_t slot_bytes) {
  return slots_offset(ranks) + 2 * static_cast<size_t>(ranks) * slot_bytes;
}

[[noreturn]] void fail_system(const std::string& what, const std::string& name, int error) {
  fail(Status::kSystem, what + " of shared-memory segment " + name + " failed: " + std::strerror(error));
}

void* map(int fd, size_t bytes, const std::string& name) {
  void* base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    const int error = errno;
    close(fd);
    fail_system("mmap", name, error);
  }
  close(fd);
  return base;
}

}  // namespace

ShmSegment ShmSegment::create(const std::string& name, int ranks, size_t slot_bytes) {
  if (ranks < 1 || slot_bytes == 0 || slot_bytes % kPage != 0) {
    fail(Status::kInternal, "shared-memory segment: bad layout (" + std::to_string(ranks) + " ranks, slots of " +
                                std::to_string(slot_bytes) + " bytes)");
  }
  const size_t bytes = total_bytes(ranks, slot_bytes);
  const int fd = shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, S_IRUSR | S_IWUSR);
  if (fd < 0) fail_system("shm_open", name, errno);
  // Reserve the pages now: on a full tmpfs a plain ftruncate succeeds and the
  // first touch of a missing page raises SIGBUS.
  const int reserve = posix_fallocate(fd, 0, static_cast<off_t>(bytes));
  if (reserve != 0) {
    close(fd);
    unlink(name);
    fail_system("posix_fallocate(" + std::to_string(bytes) + " bytes)", name, reserve);
  }
  void* base;
  try {
    base = map(fd, bytes, name);
  } catch (...) {
    unlink(name);
    throw;
  }
  auto* controls = reinterpret_cast<unsigned char*>(base) + controls_offset();
  for (int r = 0; r < ranks; ++r) new (controls + sizeof(ShmRankControl) * static_cast<size_t>(r)) ShmRankControl();
  new (static_cast<unsigned char*>(base) + agreed_offset()) ShmAgreedChoices();  // value-initialized: all zero
  auto* header = static_cast<ShmHeader*>(base);
  header->ranks = static_cast<uint32_t>(ranks);
  header->slot_bytes = slot_bytes;
  header->total_bytes = bytes;
  // Last, so that a rank that sees the magic sees a complete layout.
  std::atomic_thread_fence(std::memory_order_release);
  header->magic = kMagic;
  return ShmSegment(base, bytes, ranks, slot_bytes);
}

ShmSegment ShmSegment::open(const std::string& name, int ranks) {
  const int fd = shm_open(name.c_str(), O_RDWR, 0);
  if (fd < 0) fail_system("shm_open", name, errno);
  struct stat info;
  if (fstat(fd, &info) != 0) {
    const int error = errno;
    close(fd);
    fail_system("fstat", name, error);
  }
  const size_t bytes = static_cast<size_t>(info.st_size);
  if (bytes < slots_offset(ranks)) {
    close(fd);
    fail(Status::kSystem, "shared-memory segment " + name + " holds " + std::to_string(bytes) +
                              " bytes, too few for " + std::to_string(ranks) + " ranks");
  }
  void* base = map(fd, bytes, name);
  const auto* header = static_cast<const ShmHeader*>(base);
  std::atomic_thread_fence(std::memory_order_acquire);
  // The segment was written by another process: believe nothing unchecked.
  if (header->magic != kMagic || header->ranks != static_cast<uint32_t>(ranks) || header->total_bytes != bytes ||
      header->slot_bytes == 0 || header->slot_bytes % kPage != 0 ||
      total_bytes(ranks, header->slot_bytes) != bytes) {
    munmap(base, bytes);
    fail(Status::kSystem, "shared-memory segment " + name + " does not have the expected layout for " +
                              std::to_string(ranks) + " ranks");
  }
  return ShmSegment(base, bytes, ranks, header->slot_bytes);
}

void ShmSegment::unlink(const std::string& name) { shm_unlink(name.c_str()); }

ShmSegment::ShmSegment(void* base, size_t bytes, int ranks, size_t slot_bytes)
    : base_(base),
      bytes_(bytes),
      ranks_(ranks),
      slot_bytes_(slot_bytes),
      agreed_(reinterpret_cast<ShmAgreedChoices*>(static_cast<unsigned char*>(base) + agreed_offset())),
      controls_(reinterpret_cast<ShmRankControl*>(static_cast<unsigned char*>(base) + controls_offset())),
      slots_(static_cast<unsigned char*>(base) + slots_offset(ranks)) {}

ShmSegment::ShmSegment(ShmSegment&& other) noexcept { *this = std::move(other); }

ShmSegment& ShmSegment::operator=(ShmSegment&& other) noexcept {
  if (this != &other) {
    if (base_ != nullptr) munmap(base_, bytes_);
    base_ = std::exchange(other.base_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    ranks_ = other.ranks_;
    slot_bytes_ = other.slot_bytes_;
    agreed_ = std::exchange(other.agreed_, nullptr);
    controls_ = std::exchange(other.controls_, nullptr);
    slots_ = std::exchange(other.slots_, nullptr);
  }
  return *this;
}

ShmSegment::~ShmSegment() {
  if (base_ != nullptr) munmap(base_, bytes_);
}

}  // namespace dist
