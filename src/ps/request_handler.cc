#include "ps/request_handler.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <iterator>

#include "base/atomic_file.h"
#include "base/json.h"
#include "ps/checkpoint_reader.h"
#include "ps/checkpoint_shard_file.h"
#include "ps/protocol.h"
#include "ps/spec_codec.h"

namespace dist::ps {
namespace {

constexpr uint64_t kMaxSpecBytes = 16 * 1024;

uint64_t rows_payload(uint64_t count, uint64_t row_bytes) {
  if (count > kMaxRowsPerRequest) {
    fail_invalid(std::to_string(count) + " rows in one request, more than " + std::to_string(kMaxRowsPerRequest));
  }
  return count * (8 + row_bytes);
}

Json parse_control(const uint8_t* payload, uint64_t bytes, const char* what) {
  Json document = parse_json(std::string(reinterpret_cast<const char*>(payload), bytes), what);
  if (!document.is_object() || !document.contains("directory") || !document["directory"].is_string()) {
    fail_invalid(std::string(what) + ": needs a 'directory' string");
  }
  return document;
}

void set_bytes(Reply& reply, const std::string& text) { reply.payload.assign(text.begin(), text.end()); }

}  // namespace

Reply error_reply(Status status, const std::string& message) {
  Reply reply;
  reply.status = status;
  set_bytes(reply, message.substr(0, 60000));
  return reply;
}

RequestHandler::RequestHandler(ShardStore& store, const std::atomic<bool>& stopping, std::function<void()> on_stop,
                               Log log)
    : store_(store), stopping_(stopping), on_stop_(std::move(on_stop)), log_(std::move(log)) {}

// How an operation's payload size is checked, before the payload is read.
enum class PayloadSize {
  kEmpty,           // no payload
  kCreateRequest,   // a spec and maybe an initial value, bounded
  kVariableValues,  // exactly the variable's values
  kRowIndices,      // exactly args[1] row indices
  kRowsAndValues,   // exactly args[1] row indices, then as many rows of values
  kControl,         // a JSON document of at most kMaxControlBytes
};

struct RequestHandler::Operation {
  Op op;
  const char* name;
  PayloadSize payload;
  Reply (RequestHandler::*handle)(const Call&);
};

const RequestHandler::Operation* RequestHandler::find_operation(int32_t code) {
  // In Op order, so that a code is its row's index plus one.
  static constexpr Operation kOperations[] = {
      {Op::kCreate, "create", PayloadSize::kCreateRequest, &RequestHandler::create},
      {Op::kRead, "read", PayloadSize::kEmpty, &RequestHandler::read},
      {Op::kAssign, "assign", PayloadSize::kVariableValues, &RequestHandler::assign},
      {Op::kAssignAdd, "assign_add", PayloadSize::kVariableValues, &RequestHandler::assign_add},
      {Op::kAssignSub, "assign_sub", PayloadSize::kVariableValues, &RequestHandler::assign_sub},
      {Op::kApplyGradient, "apply_gradient", PayloadSize::kVariableValues, &RequestHandler::apply_gradient},
      {Op::kReadRows, "read_rows", PayloadSize::kRowIndices, &RequestHandler::read_rows},
      {Op::kAddRows, "add_rows", PayloadSize::kRowsAndValues, &RequestHandler::add_rows},
      {Op::kApplyRows, "apply_rows", PayloadSize::kRowsAndValues, &RequestHandler::apply_rows},
      {Op::kList, "list", PayloadSize::kEmpty, &RequestHandler::list},
      {Op::kSave, "save", PayloadSize::kControl, &RequestHandler::save},
      {Op::kRestore, "restore", PayloadSize::kControl, &RequestHandler::restore},
      {Op::kStop, "stop", PayloadSize::kEmpty, &RequestHandler::stop},
      {Op::kDelete, "delete", PayloadSize::kEmpty, &RequestHandler::erase},
  };
  static_assert([] {
    for (size_t i = 0; i < std::size(kOperations); ++i) {
      if (static_cast<size_t>(kOperations[i].op) != i + 1) return false;
    }
    return true;
  }(), "kOperations must list the Ops in order, from 1");
  if (code < 1 || static_cast<size_t>(code) > std::size(kOperations)) return nullptr;
  return &kOperations[code - 1];
}

const RequestHandler::Operation& RequestHandler::operation_of(int32_t code) {
  const Operation* operation = find_operation(code);
  if (!operation) fail_invalid("unknown operation " + std::to_string(code));
  return *operation;
}

const char* op_name(int32_t op) {
  const RequestHandler::Operation* operation = RequestHandler::find_operation(op);
  return operation ? operation->name : "unknown operation";
}

uint64_t RequestHandler::expected_payload(const RpcHeader& request) const {
  const Operation& operation = operation_of(request.code);
  const uint64_t id = request.args[0];
  const uint64_t claimed = request.payload_bytes;
  auto exactly = [&](uint64_t bytes) {
    if (claimed != bytes) {
      fail_invalid(std::string(operation.name) + " carries " + std::to_string(claimed) +
                   " payload bytes, expected " + std::to_string(bytes));
    }
    return bytes;
  };
  switch (operation.payload) {
    case PayloadSize::kEmpty: return exactly(0);
    case PayloadSize::kCreateRequest:
      if (claimed > kMaxSpecBytes + kMaxShardBytes) fail_invalid("create carries " + std::to_string(claimed) + " bytes");
      return claimed;
    case PayloadSize::kVariableValues: return exactly(store_.find(id)->spec().bytes());
    case PayloadSize::kRowIndices: return exactly(rows_payload(request.args[1], 0));
    case PayloadSize::kRowsAndValues:
      return exactly(rows_payload(request.args[1], store_.find(id)->spec().row_bytes()));
    case PayloadSize::kControl:
      if (claimed > kMaxControlBytes) fail_invalid("control request of " + std::to_string(claimed) + " bytes");
      return claimed;
  }
  fail(Status::kInternal, std::string(operation.name) + ": no rule for its payload size");
}

Reply RequestHandler::handle(const RpcHeader& request, const uint8_t* payload, std::vector<uint8_t>& scratch,
                             std::vector<uint8_t>* staging) {
  try {
    return (this->*operation_of(request.code).handle)(Call{request, payload, scratch, staging});
  } catch (const Error& e) {
    return error_reply(e.status(), std::string(op_name(request.code)) + ": " + e.what());
  } catch (const std::bad_alloc&) {
    return error_reply(Status::kNoMemory, std::string(op_name(request.code)) + ": out of memory");
  } catch (const std::exception& e) {
    return error_reply(Status::kInternal, std::string(op_name(request.code)) + ": internal error: " + e.what());
  }
}

Reply RequestHandler::create(const Call& call) {
  Reply reply;
  ByteReader in(call.payload, call.header.payload_bytes, "create request");
  const uint32_t spec_bytes = in.get<uint32_t>("spec length");
  if (spec_bytes > kMaxSpecBytes) fail_invalid("create request: spec of " + std::to_string(spec_bytes) + " bytes");
  ByteReader spec_in(in.take(spec_bytes, "spec"), spec_bytes, "create request spec");
  VariableSpec spec = decode_spec(spec_in);
  spec_in.expect_end();
  const bool has_initial = in.get<uint8_t>("has_initial") != 0;
  const uint8_t* initial = has_initial ? in.take(spec.bytes(), "initial value") : nullptr;
  in.expect_end();
  ShardStore::Created created = store_.create(call.header.args[0], spec, initial);
  reply.args[0] = created.variable->version();
  reply.args[1] = static_cast<uint64_t>(created.outcome);
  if (created.outcome != CreateOutcome::kExisted && log_) {
    log_(std::string(created.outcome == CreateOutcome::kRestored ? "restored " : "created ") + describe(spec) + " (" +
         std::to_string(spec.bytes()) + " bytes, optimizer " + optimizer_label(spec) + ")");
  }
  return reply;
}

Reply RequestHandler::read(const Call& call) {
  Reply reply;
  auto variable = store_.find(call.header.args[0]);
  const uint64_t wait_ms = std::min(call.header.args[2], kMaxWaitMs);
  const auto deadline = ShardVariable::Clock::now() + std::chrono::milliseconds(wait_ms);
  // Sent straight from the shard's values, which stay as they are while
  // the reply holds them (a write meanwhile copies them first).
  reply.shared = variable->share(&reply.args[0], call.header.args[1], deadline, &stopping_);
  reply.view = reply.shared->data();
  reply.view_bytes = reply.shared->size();
  return reply;
}

Reply RequestHandler::assign(const Call& call) {
  Reply reply;
  auto variable = store_.find(call.header.args[0]);
  const bool whole = call.staging != nullptr && call.payload == call.staging->data() &&
                     call.staging->size() == variable->spec().bytes();
  reply.args[0] = whole ? variable->assign_exchange(*call.staging) : variable->assign(call.payload);
  return reply;
}

Reply RequestHandler::assign_add(const Call& call) {
  Reply reply;
  reply.args[0] = store_.find(call.header.args[0])->assign_add(call.payload);
  return reply;
}

Reply RequestHandler::assign_sub(const Call& call) {
  Reply reply;
  reply.args[0] = store_.find(call.header.args[0])->assign_sub(call.payload);
  return reply;
}

Reply RequestHandler::apply_gradient(const Call& call) {
  Reply reply;
  auto outcome = store_.find(call.header.args[0])
                     ->apply_gradient(call.payload, static_cast<int64_t>(call.header.args[1]), call.header.args[2]);
  reply.args[0] = outcome.version;
  reply.args[1] = outcome.accepted ? 1 : 0;
  reply.args[2] = outcome.applied ? 1 : 0;
  return reply;
}

namespace {

// The args[1] row indices at the start of a sparse request's payload, copied
// out: the payload need not be 8-byte aligned.
std::vector<int64_t> row_indices(const RpcHeader& request, const uint8_t* payload) {
  const size_t count = static_cast<size_t>(request.args[1]);
  std::vector<int64_t> rows(count);
  if (count) std::memcpy(rows.data(), payload, count * 8);
  return rows;
}

}  // namespace

Reply RequestHandler::read_rows(const Call& call) {
  Reply reply;
  auto variable = store_.find(call.header.args[0]);
  const std::vector<int64_t> rows = row_indices(call.header, call.payload);
  const size_t bytes = rows.size() * variable->spec().row_bytes();
  if (call.scratch.size() < bytes) call.scratch.resize(bytes);
  reply.view = call.scratch.data();
  reply.view_bytes = bytes;
  variable->read_rows(rows.data(), rows.size(), call.scratch.data());
  return reply;
}

Reply RequestHandler::update_rows(const Call& call, RowUpdate update) {
  Reply reply;
  auto variable = store_.find(call.header.args[0]);
  const std::vector<int64_t> rows = row_indices(call.header, call.payload);
  reply.args[0] = (variable.get()->*update)(rows.data(), rows.size(), call.payload + rows.size() * 8);
  return reply;
}

Reply RequestHandler::add_rows(const Call& call) { return update_rows(call, &ShardVariable::add_rows); }

Reply RequestHandler::apply_rows(const Call& call) { return update_rows(call, &ShardVariable::apply_sparse_gradient); }

Reply RequestHandler::list(const Call&) {
  Reply reply;
  Json list = Json::array();
  for (const ShardStore::Entry& entry : store_.entries()) {
    const VariableSpec& spec = entry.variable->spec();
    list.push_back({{"id", entry.id}, {"name", spec.name}, {"dtype", name(spec.dtype)}, {"shape", spec.shape},
                    {"row_offset", spec.row_offset}, {"rows", spec.rows}, {"bytes", spec.bytes()},
                    {"optimizer", optimizer_label(spec)}, {"version", entry.variable->version()}});
  }
  set_bytes(reply, list.dump());
  return reply;
}

Reply RequestHandler::save(const Call& call) {
  Reply reply;
  Json control = parse_control(call.payload, call.header.payload_bytes, "save request");
  const int64_t index = control.value("index", int64_t{-1});
  const int64_t count = control.value("count", int64_t{-1});
  if (index < 0 || count <= 0 || index >= count || count > 65536) {
    fail_invalid("save request: shard " + std::to_string(index) + " of " + std::to_string(count) + " is not valid");
  }
  const std::string directory = control["directory"].get<std::string>();
  make_directories(directory);
  std::vector<ShardState> states;
  for (const ShardStore::Entry& entry : store_.entries()) states.push_back(entry.variable->snapshot());
  ShardFileSummary summary =
      write_shard_file(directory, static_cast<int32_t>(index), static_cast<int32_t>(count), states);
  if (log_) log_("saved " + std::to_string(summary.entries) + " shards to " + directory + "/" + summary.file);
  set_bytes(reply, Json{{"file", summary.file}, {"bytes", summary.bytes}, {"sha256", summary.sha256},
                        {"entries", summary.entries}}
                       .dump());
  return reply;
}

Reply RequestHandler::restore(const Call& call) {
  Reply reply;
  Json control = parse_control(call.payload, call.header.payload_bytes, "restore request");
  auto checkpoint = std::make_shared<const CheckpointReader>(control["directory"].get<std::string>());
  reply.args[0] = store_.restore_from(checkpoint);
  if (log_) {
    log_("restored " + std::to_string(reply.args[0]) + " held shards from " + checkpoint->directory() + " (step " +
         std::to_string(checkpoint->step()) + ")");
  }
  return reply;
}

Reply RequestHandler::stop(const Call&) {
  if (log_) log_("asked to stop by a client");
  if (on_stop_) on_stop_();
  return Reply{};
}

Reply RequestHandler::erase(const Call& call) {
  const uint64_t id = call.header.args[0];
  if (!store_.erase(id)) fail_invalid("no variable with id " + std::to_string(id) + " on this server");
  return Reply{};
}

}  // namespace dist::ps
