// The shards of a variable that lives on the parameter servers, seen from a
// worker: its placement (which server holds which rows) and the operations on
// the whole variable, each split into one request per shard with all of them
// in flight together. VariableOnServers (variable_on_servers.h) is built on it.
//
// Every operation has a start_* form returning ShardRequests (requests in
// flight plus whatever must happen when they finish) and a blocking form.
// The ShardRequests of several operations, of one or many variables, can be
// waited on together with wait_all.
//
// An operation is atomic per shard, not across shards: every start_* first
// connects to all the shards' servers (so a server known to be down fails it
// before anything is sent), but a server that dies while the requests are in
// flight leaves the other shards updated. A retried update is then applied
// twice on those shards (at least once, like any retried RPC). If a start_*
// throws, requests already sent still complete: keep the buffers valid until
// the next wait on the client.
//
// Thread rules: as PsClient; one VariableShards from one thread at a time.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ps/client.h"
#include "ps/variable_spec.h"
#include "variables/on_servers/placement.h"

namespace dist {

// One operation's requests, one per shard it touches.
class ShardRequests {
 public:
  std::vector<ps::PsRequestPtr> requests;
  std::vector<std::shared_ptr<void>> buffers;  // kept alive until done
  std::function<void()> finish;                // runs after every request succeeded
};

// Waits for every request of every operation together, then finishes them.
void wait_all(ps::PsClient& client, std::vector<ShardRequests>& operations);

class VariableShards {
 public:
  // `spec` describes the whole variable (its row_offset/rows are ignored);
  // `placement` comes from a Placer. Does not contact the servers: call
  // create() (or start_create) next.
  VariableShards(ps::PsClient& client, const ps::VariableSpec& spec, const VariablePlacement& placement);

  const ps::VariableSpec& spec() const { return spec_; }
  const VariablePlacement& placement() const { return placement_; }
  size_t bytes() const { return spec_.bytes(); }

  // initial: bytes() bytes for the whole variable, or null (zeros).
  ShardRequests start_create(const void* initial);
  // Reads every shard into out (bytes()). min_version waits for synchronous
  // rounds (see ShardVariable::read); each shard's version is remembered.
  ShardRequests start_read(void* out, uint64_t min_version = 0, uint64_t wait_ms = 0);
  // The same with a version to wait for per shard (shards move apart: sparse
  // updates touch only some).
  ShardRequests start_read(void* out, const std::vector<uint64_t>& min_versions, uint64_t wait_ms);
  ShardRequests start_assign(const void* values);
  ShardRequests start_assign_add(const void* values);
  ShardRequests start_assign_sub(const void* values);
  // The step sent with each shard's gradient is the version last seen of it,
  // or steps[i] for shard i.
  ShardRequests start_apply_gradient(const void* gradient);
  ShardRequests start_apply_gradient(const void* gradient, const std::vector<uint64_t>& steps);
  // Global row indices; out/values hold count rows of placement().row_bytes.
  ShardRequests start_read_rows(const int64_t* rows, size_t count, void* out);
  ShardRequests start_add_rows(const int64_t* rows, size_t count, const void* values);
  ShardRequests start_apply_rows(const int64_t* rows, size_t count, const void* gradients);

  void create(const void* initial) { run(start_create(initial)); }
  void read(void* out, uint64_t min_version = 0, uint64_t wait_ms = 0) { run(start_read(out, min_version, wait_ms)); }
  void assign(const void* values) { run(start_assign(values)); }
  void assign_add(const void* values) { run(start_assign_add(values)); }
  void assign_sub(const void* values) { run(start_assign_sub(values)); }
  void apply_gradient(const void* gradient) { run(start_apply_gradient(gradient)); }
  // Blocking forms of any start_* operation.
  void run(ShardRequests operation);
  void read_rows(const int64_t* rows, size_t count, void* out) { run(start_read_rows(rows, count, out)); }
  void add_rows(const int64_t* rows, size_t count, const void* values) { run(start_add_rows(rows, count, values)); }
  void apply_rows(const int64_t* rows, size_t count, const void* g) { run(start_apply_rows(rows, count, g)); }

  // The version of each shard as last seen (read or updated).
  const std::vector<uint64_t>& versions() const { return versions_; }

 private:
  using Dense = ps::PsRequestPtr (ps::PsClient::*)(int, uint64_t, const void*, size_t);
  ShardRequests start_dense(Dense method, const void* data);
  ShardRequests start_sparse(int kind, const int64_t* rows, size_t count, const void* data, void* out);
  void remember_versions(ShardRequests& operation);
  void connect_all();

  ps::PsClient& client_;
  ps::VariableSpec spec_;
  VariablePlacement placement_;
  std::vector<uint64_t> versions_;
};

}  // namespace dist
