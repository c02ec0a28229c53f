#include "ps/shard_store.h"

#include <algorithm>

#include "base/status.h"
#include "ps/checkpoint_reader.h"

namespace dist::ps {

ShardStore::ShardStore() = default;
ShardStore::~ShardStore() = default;

ShardStore::Created ShardStore::create(uint64_t id, const VariableSpec& spec, const void* initial) {
  validate(spec);
  auto check_same = [&](const ShardVariable& existing) {
    if (!same_slice(existing.spec(), spec)) {
      fail(Status::kMismatch, "variable id " + std::to_string(id) + " already holds " + describe(existing.spec()) +
                                  "; cannot create " + describe(spec) + " with it");
    }
  };
  {
    std::shared_lock<std::shared_mutex> read(mutex_);
    auto it = variables_.find(id);
    if (it != variables_.end()) {
      check_same(*it->second);
      return {it->second, CreateOutcome::kExisted};
    }
  }
  // Built outside the lock: a restore reads files and a large shard takes a
  // while to allocate.
  std::shared_ptr<const CheckpointReader> checkpoint = restore_source();
  std::shared_ptr<ShardVariable> built;
  CreateOutcome outcome = CreateOutcome::kCreated;
  if (checkpoint) {
    if (auto state = checkpoint->load(spec)) {
      built = std::make_shared<ShardVariable>(spec, nullptr);
      built->restore(*state);
      outcome = CreateOutcome::kRestored;
    }
  }
  if (!built) built = std::make_shared<ShardVariable>(spec, initial);
  std::unique_lock<std::shared_mutex> write(mutex_);
  auto [it, inserted] = variables_.try_emplace(id, built);
  if (!inserted) {
    check_same(*it->second);
    return {it->second, CreateOutcome::kExisted};
  }
  return {built, outcome};
}

std::shared_ptr<ShardVariable> ShardStore::find(uint64_t id) const {
  std::shared_lock<std::shared_mutex> read(mutex_);
  auto it = variables_.find(id);
  if (it == variables_.end()) fail_invalid("no variable with id " + std::to_string(id) + " on this server");
  return it->second;
}

bool ShardStore::erase(uint64_t id) {
  std::unique_lock<std::shared_mutex> write(mutex_);
  return variables_.erase(id) != 0;
}

std::vector<ShardStore::Entry> ShardStore::entries() const {
  std::vector<Entry> out;
  {
    std::shared_lock<std::shared_mutex> read(mutex_);
    for (const auto& [id, variable] : variables_) out.push_back(Entry{id, variable});
  }
  std::sort(out.begin(), out.end(), [](const Entry& a, const Entry& b) { return a.id < b.id; });
  return out;
}

size_t ShardStore::size() const {
  std::shared_lock<std::shared_mutex> read(mutex_);
  return variables_.size();
}

uint64_t ShardStore::total_bytes() const {
  uint64_t bytes = 0;
  for (const Entry& entry : entries()) bytes += entry.variable->spec().bytes();
  return bytes;
}

size_t ShardStore::restore_from(std::shared_ptr<const CheckpointReader> checkpoint) {
  std::vector<std::pair<std::shared_ptr<ShardVariable>, ShardState>> loaded;
  for (const Entry& entry : entries()) {
    if (auto state = checkpoint->load(entry.variable->spec())) loaded.emplace_back(entry.variable, std::move(*state));
  }
  for (auto& [variable, state] : loaded) variable->restore(state);
  std::unique_lock<std::shared_mutex> write(mutex_);
  checkpoint_ = std::move(checkpoint);
  return loaded.size();
}

std::shared_ptr<const CheckpointReader> ShardStore::restore_source() const {
  std::shared_lock<std::shared_mutex> read(mutex_);
  return checkpoint_;
}

}  // namespace dist::ps
