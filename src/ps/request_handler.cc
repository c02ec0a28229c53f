#include "ps/request_handler.h"

#include <chrono>
#include <cstring>

#include "base/json.h"
#include "ps/checkpoint_reader.h"
#include "ps/checkpoint_shard_file.h"
#include "ps/atomic_file.h"
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

uint64_t RequestHandler::expected_payload(const RpcHeader& request) const {
  const uint64_t id = request.args[0];
  const uint64_t claimed = request.payload_bytes;
  auto exactly = [&](uint64_t bytes) {
    if (claimed != bytes) {
      fail_invalid(std::string(op_name(request.code)) + " carries " + std::to_string(claimed) +
                   " payload bytes, expected " + std::to_string(bytes));
    }
    return bytes;
  };
  switch (static_cast<Op>(request.code)) {
    case Op::kCreate:
      if (claimed > kMaxSpecBytes + kMaxShardBytes) fail_invalid("create carries " + std::to_string(claimed) + " bytes");
      return claimed;
    case Op::kRead:
    case Op::kList:
    case Op::kStop:
    case Op::kDelete: return exactly(0);
    case Op::kAssign:
    case Op::kAssignAdd:
    case Op::kAssignSub:
    case Op::kApplyGradient: return exactly(store_.find(id)->spec().bytes());
    case Op::kReadRows: return exactly(rows_payload(request.args[1], 0));
    case Op::kAddRows:
    case Op::kApplyRows: return exactly(rows_payload(request.args[1], store_.find(id)->spec().row_bytes()));
    case Op::kSave:
    case Op::kRestore:
      if (claimed > kMaxControlBytes) fail_invalid("control request of " + std::to_string(claimed) + " bytes");
      return claimed;
  }
  fail_invalid("unknown operation " + std::to_string(request.code));
}

Reply RequestHandler::handle(const RpcHeader& request, const uint8_t* payload, std::vector<uint8_t>& scratch,
                             std::vector<uint8_t>* staging) {
  try {
    return run(request, payload, scratch, staging);
  } catch (const Error& e) {
    return error_reply(e.status(), std::string(op_name(request.code)) + ": " + e.what());
  } catch (const std::bad_alloc&) {
    return error_reply(Status::kNoMemory, std::string(op_name(request.code)) + ": out of memory");
  } catch (const std::exception& e) {
    return error_reply(Status::kInternal, std::string(op_name(request.code)) + ": internal error: " + e.what());
  }
}

Reply RequestHandler::run(const RpcHeader& request, const uint8_t* payload, std::vector<uint8_t>& scratch,
                          std::vector<uint8_t>* staging) {
  Reply reply;
  const uint64_t id = request.args[0];
  const uint64_t bytes = request.payload_bytes;
  auto view_of = [&](size_t size) {
    if (scratch.size() < size) scratch.resize(size);
    reply.view = scratch.data();
    reply.view_bytes = size;
    return scratch.data();
  };
  switch (static_cast<Op>(request.code)) {
    case Op::kCreate: {
      ByteReader in(payload, bytes, "create request");
      const uint32_t spec_bytes = in.get<uint32_t>("spec length");
      if (spec_bytes > kMaxSpecBytes) fail_invalid("create request: spec of " + std::to_string(spec_bytes) + " bytes");
      ByteReader spec_in(in.take(spec_bytes, "spec"), spec_bytes, "create request spec");
      VariableSpec spec = decode_spec(spec_in);
      spec_in.expect_end();
      const bool has_initial = in.get<uint8_t>("has_initial") != 0;
      const uint8_t* initial = has_initial ? in.take(spec.bytes(), "initial value") : nullptr;
      in.expect_end();
      ShardStore::Created created = store_.create(id, spec, initial);
      reply.args[0] = created.variable->version();
      reply.args[1] = static_cast<uint64_t>(created.outcome);
      if (created.outcome != CreateOutcome::kExisted && log_) {
        log_(std::string(created.outcome == CreateOutcome::kRestored ? "restored " : "created ") + describe(spec) +
             " (" + std::to_string(spec.bytes()) + " bytes, optimizer " + optimizer_label(spec) + ")");
      }
      return reply;
    }
    case Op::kRead: {
      auto variable = store_.find(id);
      const uint64_t wait_ms = std::min(request.args[2], kMaxWaitMs);
      const auto deadline = ShardVariable::Clock::now() + std::chrono::milliseconds(wait_ms);
      // Sent straight from the shard's values, which stay as they are while
      // the reply holds them (a write meanwhile copies them first).
      reply.shared = variable->share(&reply.args[0], request.args[1], deadline, &stopping_);
      reply.view = reply.shared->data();
      reply.view_bytes = reply.shared->size();
      return reply;
    }
    case Op::kAssign: {
      auto variable = store_.find(id);
      const bool whole = staging != nullptr && payload == staging->data() && staging->size() == variable->spec().bytes();
      reply.args[0] = whole ? variable->assign_exchange(*staging) : variable->assign(payload);
      return reply;
    }
    case Op::kAssignAdd: reply.args[0] = store_.find(id)->assign_add(payload); return reply;
    case Op::kAssignSub: reply.args[0] = store_.find(id)->assign_sub(payload); return reply;
    case Op::kApplyGradient: {
      auto outcome = store_.find(id)->apply_gradient(payload, static_cast<int64_t>(request.args[1]), request.args[2]);
      reply.args[0] = outcome.version;
      reply.args[1] = outcome.accepted ? 1 : 0;
      reply.args[2] = outcome.applied ? 1 : 0;
      return reply;
    }
    case Op::kReadRows:
    case Op::kAddRows:
    case Op::kApplyRows: {
      auto variable = store_.find(id);
      const size_t count = static_cast<size_t>(request.args[1]);
      // The indices are copied out: the payload need not be 8-byte aligned.
      std::vector<int64_t> rows(count);
      if (count) std::memcpy(rows.data(), payload, count * 8);
      const uint8_t* values = payload + count * 8;
      if (static_cast<Op>(request.code) == Op::kReadRows) {
        variable->read_rows(rows.data(), count, view_of(count * variable->spec().row_bytes()));
      } else if (static_cast<Op>(request.code) == Op::kAddRows) {
        reply.args[0] = variable->add_rows(rows.data(), count, values);
      } else {
        reply.args[0] = variable->apply_sparse_gradient(rows.data(), count, values);
      }
      return reply;
    }
    case Op::kList: {
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
    case Op::kSave: {
      Json control = parse_control(payload, bytes, "save request");
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
    case Op::kRestore: {
      Json control = parse_control(payload, bytes, "restore request");
      auto checkpoint = std::make_shared<const CheckpointReader>(control["directory"].get<std::string>());
      reply.args[0] = store_.restore_from(checkpoint);
      if (log_) {
        log_("restored " + std::to_string(reply.args[0]) + " held shards from " + checkpoint->directory() +
             " (step " + std::to_string(checkpoint->step()) + ")");
      }
      return reply;
    }
    case Op::kStop:
      if (log_) log_("asked to stop by a client");
      if (on_stop_) on_stop_();
      return reply;
    case Op::kDelete:
      if (!store_.erase(id)) fail_invalid("no variable with id " + std::to_string(id) + " on this server");
      return reply;
  }
  fail_invalid("unknown operation " + std::to_string(request.code));
}

const char* op_name(int32_t op) {
  switch (static_cast<Op>(op)) {
    case Op::kCreate: return "create";
    case Op::kRead: return "read";
    case Op::kAssign: return "assign";
    case Op::kAssignAdd: return "assign_add";
    case Op::kAssignSub: return "assign_sub";
    case Op::kApplyGradient: return "apply_gradient";
    case Op::kReadRows: return "read_rows";
    case Op::kAddRows: return "add_rows";
    case Op::kApplyRows: return "apply_rows";
    case Op::kList: return "list";
    case Op::kSave: return "save";
    case Op::kRestore: return "restore";
    case Op::kStop: return "stop";
    case Op::kDelete: return "delete";
  }
  return "unknown operation";
}

}  // namespace dist::ps
