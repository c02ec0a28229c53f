// A file that appears whole or not at all: written to a temporary name next to
// its final path, fsync'ed, renamed over the path, and the directory fsync'ed
// so the rename itself survives a crash. On request its SHA-256 is computed
// on the way (checkpoints keep it; it costs more than the writing).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/sha256.h"

namespace dist {

class AtomicFile {
 public:
  enum class Digest : bool { kNone, kSha256 };
  explicit AtomicFile(std::string path, Digest digest = Digest::kNone);
  // Removes the temporary file unless commit() ran.
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(const void* data, size_t bytes);
  uint64_t bytes() const { return bytes_; }
  // Makes the file durable under its final name; returns its SHA-256 (hex),
  // or "" without Digest::kSha256.
  std::string commit();

 private:
  std::string path_;
  std::string temporary_;
  int fd_ = -1;
  uint64_t bytes_ = 0;
  std::optional<Sha256> digest_;
};

// mkdir -p; throws kSystem naming the directory.
void make_directories(const std::string& path);

// Writes `text` to `path` atomically.
void write_file_atomically(const std::string& path, const std::string& text);

// The whole file; throws kSystem naming it when it cannot be read.
std::string read_small_file(const std::string& path, size_t max_bytes);

}  // namespace dist
