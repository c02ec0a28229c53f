#include "ps/checkpoint_shard_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "base/atomic_file.h"
#include "ps/spec_codec.h"

namespace dist::ps {
namespace {

constexpr char kMagic[8] = {'D', 'I', 'S', 'T', 'C', 'K', 'P', 'T'};
constexpr char kEnd[8] = {'D', 'I', 'S', 'T', 'E', 'N', 'D', '!'};
constexpr uint32_t kFormat = 1;

// pread of exactly `bytes`, or an error saying the file is truncated.
void read_at(int fd, const std::string& path, uint64_t offset, void* out, size_t bytes) {
  size_t done = 0;
  while (done < bytes) {
    ssize_t n = ::pread(fd, static_cast<char*>(out) + done, bytes - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(Status::kSystem, "cannot read '" + path + "': " + std::strerror(errno));
    if (n == 0) fail_invalid("checkpoint file '" + path + "' is truncated at byte " + std::to_string(offset + done));
    done += static_cast<size_t>(n);
  }
}

}  // namespace

std::string shard_file_name(int32_t index, int32_t count) {
  char name[64];
  std::snprintf(name, sizeof name, "shard-%05d-of-%05d.ckpt", index, count);
  return name;
}

ShardFileSummary write_shard_file(const std::string& directory, int32_t index, int32_t count,
                                  const std::vector<ShardState>& shards) {
  ShardFileSummary summary;
  summary.file = shard_file_name(index, count);
  AtomicFile file(directory + "/" + summary.file, AtomicFile::Digest::kSha256);
  ByteWriter head;
  head.append(kMagic, sizeof kMagic);
  head.put(kFormat);
  head.put(static_cast<uint32_t>(shards.size()));
  file.write(head.bytes().data(), head.bytes().size());
  for (const ShardState& shard : shards) {
    ByteWriter spec;
    encode_spec(shard.spec, spec);
    ByteWriter entry;
    entry.put(static_cast<uint32_t>(spec.bytes().size()));
    entry.append(spec.bytes().data(), spec.bytes().size());
    entry.put(shard.version);
    entry.put(shard.optimizer_step);
    entry.put(static_cast<uint32_t>(shard.slots.size()));
    entry.put(static_cast<uint64_t>(shard.values.size()));
    file.write(entry.bytes().data(), entry.bytes().size());
    file.write(shard.values.data(), shard.values.size());
    for (const auto& slot : shard.slots) file.write(slot.data(), slot.size());
  }
  file.write(kEnd, sizeof kEnd);
  summary.bytes = file.bytes();
  summary.entries = shards.size();
  summary.sha256 = file.commit();
  return summary;
}

std::vector<ShardFileEntry> index_shard_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(Status::kSystem, "cannot open checkpoint file '" + path + "': " + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat info {};
  if (::fstat(fd, &info) != 0) fail(Status::kSystem, "cannot stat '" + path + "': " + std::strerror(errno));
  const uint64_t size = static_cast<uint64_t>(info.st_size);
  const std::string what = "checkpoint file '" + path + "'";

  char head[16];
  read_at(fd, path, 0, head, sizeof head);
  if (std::memcmp(head, kMagic, sizeof kMagic) != 0) fail_invalid(what + " is not a libdistribute checkpoint shard");
  ByteReader head_reader(head + 8, 8, what);
  const uint32_t format = head_reader.get<uint32_t>("format");
  if (format != kFormat) fail_invalid(what + " has format " + std::to_string(format) + ", expected " + std::to_string(kFormat));
  const uint32_t count = head_reader.get<uint32_t>("entries");

  std::vector<ShardFileEntry> entries;
  uint64_t offset = sizeof head;
  for (uint32_t i = 0; i < count; ++i) {
    uint32_t spec_bytes = 0;
    read_at(fd, path, offset, &spec_bytes, sizeof spec_bytes);
    if (spec_bytes > size) fail_invalid(what + ": entry " + std::to_string(i) + " claims a header larger than the file");
    std::vector<uint8_t> header(spec_bytes + 28);
    read_at(fd, path, offset + 4, header.data(), header.size());
    ByteReader reader(header.data(), header.size(), what + " entry " + std::to_string(i));
    ShardFileEntry entry;
    entry.path = path;
    ByteReader spec_reader(reader.take(spec_bytes, "spec"), spec_bytes, reader.what());
    entry.spec = decode_spec(spec_reader);
    spec_reader.expect_end();
    entry.version = reader.get<uint64_t>("version");
    entry.optimizer_step = reader.get<int64_t>("optimizer_step");
    entry.slots = reader.get<uint32_t>("slots");
    const uint64_t value_bytes = reader.get<uint64_t>("value_bytes");
    if (value_bytes != entry.spec.bytes()) {
      fail_invalid(reader.what() + ": " + std::to_string(value_bytes) + " value bytes for " + describe(entry.spec));
    }
    if (entry.slots > 2) fail_invalid(reader.what() + ": " + std::to_string(entry.slots) + " slots");
    entry.values_offset = offset + 4 + header.size();
    const uint64_t data_bytes = value_bytes * (1 + entry.slots);
    if (entry.values_offset > size || data_bytes > size - entry.values_offset) {
      fail_invalid(what + " is truncated inside entry " + std::to_string(i) + " (" + entry.spec.name + ")");
    }
    offset = entry.values_offset + data_bytes;
    entries.push_back(std::move(entry));
  }
  char end[8];
  read_at(fd, path, offset, end, sizeof end);
  if (std::memcmp(end, kEnd, sizeof kEnd) != 0 || offset + sizeof end != size) {
    fail_invalid(what + " does not end after its " + std::to_string(count) + " entries");
  }
  return entries;
}

}  // namespace dist::ps
