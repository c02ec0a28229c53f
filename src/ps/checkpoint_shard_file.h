// One server's part of a checkpoint: a binary file holding the shards it had,
// each with its slice description, values, optimizer slots and counters.
//
//   "DISTCKPT" u32 format u32 entries
//   entry:  u32 spec_bytes, spec (ps/spec_codec.h), u64 version, i64 optimizer_step,
//           u32 slots, u64 value_bytes, values, slots x value_bytes
//   "DISTEND!"
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ps/shard_variable.h"

namespace dist::ps {

// File name of server `index` of `count` in a checkpoint directory.
std::string shard_file_name(int32_t index, int32_t count);

struct ShardFileSummary {
  std::string file;  // name inside the checkpoint directory
  uint64_t bytes = 0;
  std::string sha256;
  size_t entries = 0;
};

// Writes the file atomically (base/atomic_file.h) into `directory`.
ShardFileSummary write_shard_file(const std::string& directory, int32_t index, int32_t count,
                                  const std::vector<ShardState>& shards);

// Where one entry's data lies in a shard file.
struct ShardFileEntry {
  std::string path;
  VariableSpec spec;
  uint64_t version = 0;
  int64_t optimizer_step = 0;
  uint32_t slots = 0;
  uint64_t values_offset = 0;  // slot k follows at values_offset + (k + 1) * spec.bytes()
};

// Reads the entry headers of a shard file of `bytes` bytes, checking every
// length and offset against the file; throws invalid-argument naming the file
// and what is wrong with it.
std::vector<ShardFileEntry> index_shard_file(const std::string& path);

}  // namespace dist::ps
