// The manifest of a checkpoint: which shard files it consists of, with their
// sizes and SHA-256 digests, so a restore can refuse a truncated or corrupt
// file before reading a value from it.
//
//   <root>/LATEST                 "ckpt-<step>" of the newest complete checkpoint
//   <root>/ckpt-<step>/manifest.json
//   <root>/ckpt-<step>/shard-<i>-of-<n>.ckpt   one per server
//
// The manifest is written after every shard file, and LATEST after the
// manifest, each atomically: a checkpoint that LATEST names is complete.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ps/checkpoint_shard_file.h"

namespace dist::ps {

struct CheckpointManifest {
  int64_t step = 0;
  std::vector<ShardFileSummary> shards;
};

// "ckpt-<step>"
std::string checkpoint_directory_name(int64_t step);

// Writes <directory>/manifest.json atomically.
void write_manifest(const std::string& directory, const CheckpointManifest& manifest);
// Reads and checks <directory>/manifest.json; invalid-argument naming the problem.
CheckpointManifest read_manifest(const std::string& directory);

// Points <root>/LATEST at <root>/<name>, atomically.
void write_latest(const std::string& root, const std::string& name);
// The checkpoint directory LATEST names, or "" when there is no LATEST.
std::string latest_checkpoint(const std::string& root);

}  // namespace dist::ps
