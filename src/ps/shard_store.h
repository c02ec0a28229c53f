// The variables one parameter server holds, by id. Ids are chosen by the
// clients (variable_shard_id in ps/variable_id.h), so every worker names a
// shard the same way without asking; the store checks that an id always names
// the same variable slice.
//
// A store may have a restore source (the checkpoint it was started or
// restored from): a shard created while the checkpoint holds its rows takes
// the checkpoint's values instead of the creator's initial value. That is how
// a restarted server gets its state back when the workers re-create their
// variables on reconnecting, and how a checkpoint taken with N servers is
// re-sharded onto M.
//
// Thread rules: every method may be called concurrently.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>
#include <vector>

#include "ps/shard_variable.h"

namespace dist::ps {

class CheckpointReader;

enum class CreateOutcome : uint32_t {
  kCreated = 0,   // from the creator's initial value
  kExisted = 1,   // someone created it before; left as it is
  kRestored = 2,  // from the restore source
};

class ShardStore {
 public:
  ShardStore();
  ~ShardStore();

  struct Created {
    std::shared_ptr<ShardVariable> variable;
    CreateOutcome outcome;
  };
  // `initial` holds spec.bytes() bytes or is null (zeros). An id that names a
  // different slice already fails with kMismatch naming both.
  Created create(uint64_t id, const VariableSpec& spec, const void* initial);

  // The shard, or a kInvalidArgument error naming the id.
  std::shared_ptr<ShardVariable> find(uint64_t id) const;

  // Removes a shard; false when it was not there.
  bool erase(uint64_t id);

  struct Entry {
    uint64_t id;
    std::shared_ptr<ShardVariable> variable;
  };
  // Every shard, ordered by id.
  std::vector<Entry> entries() const;
  size_t size() const;
  uint64_t total_bytes() const;

  // Restores every held shard the checkpoint covers (checked in full before
  // any is changed), then keeps it as the source for later creates. Returns
  // how many held shards were restored.
  size_t restore_from(std::shared_ptr<const CheckpointReader> checkpoint);
  std::shared_ptr<const CheckpointReader> restore_source() const;

 private:
  mutable std::shared_mutex mutex_;
  std::unordered_map<uint64_t, std::shared_ptr<ShardVariable>> variables_;
  std::shared_ptr<const CheckpointReader> checkpoint_;
};

}  // namespace dist::ps
