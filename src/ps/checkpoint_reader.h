// A checkpoint opened for restoring: the manifest read, every shard file's
// size and SHA-256 checked against it, and the entries indexed by variable
// name. Values are read from the files only when a shard asks for them, so a
// server restores just its part of a large checkpoint.
//
// load() assembles any slice of a variable from whichever checkpoint entries
// overlap it, which is how a checkpoint written by N servers restores onto M.
//
// Thread rules: after construction every method may be called concurrently.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ps/checkpoint_shard_file.h"
#include "ps/shard_variable.h"

namespace dist::ps {

class CheckpointReader {
 public:
  // `directory` is one checkpoint (".../ckpt-<step>"). Throws invalid-argument
  // naming the file for a missing, truncated or corrupt part.
  explicit CheckpointReader(const std::string& directory);

  // The newest checkpoint under `root` (its LATEST), or null when none.
  static std::shared_ptr<const CheckpointReader> open_latest(const std::string& root);

  // The state of `spec`'s slice, or nothing when the checkpoint does not hold
  // the variable. kMismatch when it holds it with another dtype or shape, or
  // does not cover every row of the slice.
  std::optional<ShardState> load(const VariableSpec& spec) const;

  int64_t step() const { return step_; }
  const std::string& directory() const { return directory_; }
  size_t num_entries() const;

 private:
  std::string directory_;
  int64_t step_ = 0;
  std::map<std::string, std::vector<ShardFileEntry>> entries_;  // by variable name
};

}  // namespace dist::ps
