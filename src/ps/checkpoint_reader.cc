#include "ps/checkpoint_reader.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/sha256.h"
#include "base/status.h"
#include "optimizers/optimizer_slots.h"
#include "ps/checkpoint_manifest.h"

namespace dist::ps {
namespace {

void read_range(const std::string& path, uint64_t offset, void* out, size_t bytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(Status::kSystem, "cannot open checkpoint file '" + path + "': " + std::strerror(errno));
  size_t done = 0;
  while (done < bytes) {
    ssize_t n = ::pread(fd, static_cast<char*>(out) + done, bytes - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(fd);
      fail_invalid("checkpoint file '" + path + "' changed or was truncated after it was verified");
    }
    done += static_cast<size_t>(n);
  }
  ::close(fd);
}

}  // namespace

CheckpointReader::CheckpointReader(const std::string& directory) : directory_(directory) {
  CheckpointManifest manifest = read_manifest(directory);
  step_ = manifest.step;
  for (const ShardFileSummary& shard : manifest.shards) {
    const std::string path = directory + "/" + shard.file;
    uint64_t bytes = 0;
    const std::string digest = sha256_of_file(path, &bytes);
    if (bytes != shard.bytes) {
      fail_invalid("checkpoint file '" + path + "' is truncated or was changed: it has " + std::to_string(bytes) +
                   " bytes, the manifest says " + std::to_string(shard.bytes));
    }
    if (digest != shard.sha256) {
      fail_invalid("checkpoint file '" + path + "' is corrupt: its SHA-256 " + digest +
                   " differs from the manifest's " + shard.sha256);
    }
    for (ShardFileEntry& entry : index_shard_file(path)) entries_[entry.spec.name].push_back(std::move(entry));
  }
}

std::shared_ptr<const CheckpointReader> CheckpointReader::open_latest(const std::string& root) {
  std::string directory = latest_checkpoint(root);
  if (directory.empty()) return nullptr;
  return std::make_shared<const CheckpointReader>(directory);
}

size_t CheckpointReader::num_entries() const {
  size_t n = 0;
  for (const auto& [name, list] : entries_) n += list.size();
  return n;
}

std::optional<ShardState> CheckpointReader::load(const VariableSpec& spec) const {
  auto found = entries_.find(spec.name);
  if (found == entries_.end()) return std::nullopt;
  ShardState state;
  state.spec = spec;
  state.values.resize(spec.bytes());
  const size_t row_bytes = spec.row_bytes();
  const uint64_t first = spec.row_offset, last = spec.row_offset + spec.rows;
  const size_t slots = spec.optimizer ? static_cast<size_t>(slot_count(spec.optimizer->kind)) : 0;
  bool slots_complete = slots > 0;
  state.slots.assign(slots, std::vector<uint8_t>(spec.bytes()));
  uint64_t covered = 0;
  for (const ShardFileEntry& entry : found->second) {
    const VariableSpec& saved = entry.spec;
    if (saved.dtype != spec.dtype || saved.shape != spec.shape) {
      fail(Status::kMismatch, "checkpoint " + directory_ + " holds " + quoted(spec.name) + " as " + name(saved.dtype) +
                                  " " + shape_text(saved.shape) + ", the variable is " + name(spec.dtype) + " " +
                                  shape_text(spec.shape));
    }
    const uint64_t begin = std::max(first, saved.row_offset);
    const uint64_t end = std::min(last, saved.row_offset + saved.rows);
    if (begin >= end) continue;
    const size_t bytes = static_cast<size_t>(end - begin) * row_bytes;
    const uint64_t source = (begin - saved.row_offset) * row_bytes;
    const size_t target = static_cast<size_t>(begin - first) * row_bytes;
    read_range(entry.path, entry.values_offset + source, state.values.data() + target, bytes);
    if (entry.slots == slots) {
      for (size_t k = 0; k < slots; ++k) {
        read_range(entry.path, entry.values_offset + (k + 1) * saved.bytes() + source, state.slots[k].data() + target,
                   bytes);
      }
    } else {
      slots_complete = false;
    }
    covered += end - begin;
    state.version = std::max(state.version, entry.version);
    state.optimizer_step = std::max(state.optimizer_step, entry.optimizer_step);
  }
  if (covered != spec.rows) {
    fail(Status::kMismatch, "checkpoint " + directory_ + " covers " + std::to_string(covered) + " of the " +
                                std::to_string(spec.rows) + " rows of " + describe(spec));
  }
  // Slots saved for another optimizer are not used; ShardVariable::restore
  // then keeps fresh ones.
  if (!slots_complete) state.slots.clear();
  return state;
}

}  // namespace dist::ps
