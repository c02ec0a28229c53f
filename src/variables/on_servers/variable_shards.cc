#include "variables/on_servers/variable_shards.h"

#include <cstring>

#include "base/status.h"

namespace dist {

void wait_all(ps::PsClient& client, std::vector<ShardRequests>& operations) {
  std::vector<ps::PsRequestPtr> all;
  for (const ShardRequests& operation : operations) all.insert(all.end(), operation.requests.begin(), operation.requests.end());
  client.wait(all);
  for (ShardRequests& operation : operations) {
    if (operation.finish) operation.finish();
  }
}

VariableShards::VariableShards(ps::PsClient& client, const ps::VariableSpec& spec, const VariablePlacement& placement)
    : client_(client), spec_(spec), placement_(placement) {
  spec_.row_offset = 0;
  spec_.rows = spec_.total_rows();
  ps::validate(spec_);
  if (placement_.total_rows != spec_.total_rows() || placement_.row_bytes != spec_.row_bytes()) {
    fail_invalid("variable " + quoted(spec_.name) + ": its placement is for " + std::to_string(placement_.total_rows) +
                 " rows of " + std::to_string(placement_.row_bytes) + " bytes, the variable has " +
                 std::to_string(spec_.total_rows()) + " of " + std::to_string(spec_.row_bytes()));
  }
  for (const ShardPlacement& shard : placement_.shards) {
    if (shard.server < 0 || shard.server >= client_.num_servers()) {
      fail_invalid("variable " + quoted(spec_.name) + ": placed on server " + std::to_string(shard.server) +
                   " of " + std::to_string(client_.num_servers()));
    }
  }
  versions_.assign(placement_.shards.size(), 0);
}

void VariableShards::run(ShardRequests operation) {
  std::vector<ShardRequests> one;
  one.push_back(std::move(operation));
  wait_all(client_, one);
}

void VariableShards::connect_all() {
  for (const ShardPlacement& shard : placement_.shards) client_.connect(shard.server);
}

void VariableShards::remember_versions(ShardRequests& operation) {
  auto requests = operation.requests;
  auto previous = std::move(operation.finish);
  operation.finish = [this, requests, previous] {
    for (size_t i = 0; i < requests.size(); ++i) versions_[i] = requests[i]->version();
    if (previous) previous();
  };
}

ShardRequests VariableShards::start_create(const void* initial) {
  connect_all();
  ShardRequests operation;
  for (const ShardPlacement& shard : placement_.shards) {
    ps::VariableSpec part = spec_;
    part.row_offset = shard.row_offset;
    part.rows = shard.rows;
    const void* slice = initial ? static_cast<const uint8_t*>(initial) + shard.row_offset * placement_.row_bytes : nullptr;
    operation.requests.push_back(client_.create(shard.server, shard.id, part, slice));
  }
  remember_versions(operation);
  return operation;
}

ShardRequests VariableShards::start_read(void* out, uint64_t min_version, uint64_t wait_ms) {
  return start_read(out, std::vector<uint64_t>(placement_.shards.size(), min_version), wait_ms);
}

ShardRequests VariableShards::start_read(void* out, const std::vector<uint64_t>& min_versions, uint64_t wait_ms) {
  connect_all();
  ShardRequests operation;
  for (size_t i = 0; i < placement_.shards.size(); ++i) {
    const ShardPlacement& shard = placement_.shards[i];
    operation.requests.push_back(client_.read(shard.server, shard.id,
                                              static_cast<uint8_t*>(out) + shard.row_offset * placement_.row_bytes,
                                              shard.bytes, min_versions.at(i), wait_ms));
  }
  remember_versions(operation);
  return operation;
}

ShardRequests VariableShards::start_dense(Dense method, const void* data) {
  connect_all();
  ShardRequests operation;
  for (const ShardPlacement& shard : placement_.shards) {
    operation.requests.push_back((client_.*method)(
        shard.server, shard.id, static_cast<const uint8_t*>(data) + shard.row_offset * placement_.row_bytes, shard.bytes));
  }
  remember_versions(operation);
  return operation;
}

ShardRequests VariableShards::start_assign(const void* values) { return start_dense(&ps::PsClient::assign, values); }
ShardRequests VariableShards::start_assign_add(const void* values) { return start_dense(&ps::PsClient::assign_add, values); }
ShardRequests VariableShards::start_assign_sub(const void* values) { return start_dense(&ps::PsClient::assign_sub, values); }

ShardRequests VariableShards::start_apply_gradient(const void* gradient) { return start_apply_gradient(gradient, versions_); }

ShardRequests VariableShards::start_apply_gradient(const void* gradient, const std::vector<uint64_t>& steps) {
  connect_all();
  ShardRequests operation;
  for (size_t i = 0; i < placement_.shards.size(); ++i) {
    const ShardPlacement& shard = placement_.shards[i];
    operation.requests.push_back(client_.apply_gradient(
        shard.server, shard.id, static_cast<const uint8_t*>(gradient) + shard.row_offset * placement_.row_bytes,
        shard.bytes, steps.at(i)));
  }
  // Versions are not taken from a synchronous push: a dropped or pending
  // gradient leaves the version where the last read saw it.
  return operation;
}

namespace {
enum SparseKind { kReadRows, kAddRows, kApplyRows };
}

ShardRequests VariableShards::start_sparse(int kind, const int64_t* rows, size_t count, const void* data, void* out) {
  connect_all();
  const size_t row_bytes = static_cast<size_t>(placement_.row_bytes);
  // Rows are grouped by shard: local indices and the matching value rows.
  struct Group {
    std::vector<int64_t> local;
    std::vector<size_t> positions;  // where each row sits in the caller's arrays
    std::vector<uint8_t> values;    // gathered values (push) or received rows (read)
  };
  auto groups = std::make_shared<std::vector<Group>>(placement_.shards.size());
  for (size_t i = 0; i < count; ++i) {
    if (rows[i] < 0) fail_invalid("variable " + quoted(spec_.name) + ": row index " + std::to_string(rows[i]) + " is negative");
    const ShardPlacement& shard = placement_.shard_of_row(static_cast<uint64_t>(rows[i]));
    Group& group = (*groups)[shard.part];
    group.local.push_back(rows[i] - static_cast<int64_t>(shard.row_offset));
    group.positions.push_back(i);
  }
  ShardRequests operation;
  operation.buffers.push_back(groups);
  for (size_t s = 0; s < groups->size(); ++s) {
    Group& group = (*groups)[s];
    if (group.local.empty()) continue;
    const ShardPlacement& shard = placement_.shards[s];
    group.values.resize(group.local.size() * row_bytes);
    if (kind == kReadRows) {
      operation.requests.push_back(client_.read_rows(shard.server, shard.id, group.local.data(), group.local.size(),
                                                     row_bytes, group.values.data()));
      continue;
    }
    for (size_t j = 0; j < group.positions.size(); ++j) {
      std::memcpy(group.values.data() + j * row_bytes, static_cast<const uint8_t*>(data) + group.positions[j] * row_bytes,
                  row_bytes);
    }
    auto method = kind == kAddRows ? &ps::PsClient::add_rows : &ps::PsClient::apply_rows;
    operation.requests.push_back((client_.*method)(shard.server, shard.id, group.local.data(), group.local.size(),
                                                   row_bytes, group.values.data()));
  }
  if (kind == kReadRows) {
    operation.finish = [groups, out, row_bytes] {
      for (const Group& group : *groups) {
        for (size_t j = 0; j < group.positions.size(); ++j) {
          std::memcpy(static_cast<uint8_t*>(out) + group.positions[j] * row_bytes, group.values.data() + j * row_bytes,
                      row_bytes);
        }
      }
    };
  }
  return operation;
}

ShardRequests VariableShards::start_read_rows(const int64_t* rows, size_t count, void* out) {
  return start_sparse(kReadRows, rows, count, nullptr, out);
}
ShardRequests VariableShards::start_add_rows(const int64_t* rows, size_t count, const void* values) {
  return start_sparse(kAddRows, rows, count, values, nullptr);
}
ShardRequests VariableShards::start_apply_rows(const int64_t* rows, size_t count, const void* gradients) {
  return start_sparse(kApplyRows, rows, count, gradients, nullptr);
}

}  // namespace dist
