// The parameter-server protocol: the operations a worker sends to a server over
// a request/response connection (transport/rpc_frame.h), and what each one's
// header arguments and payload hold. Row indices are local to the shard.
//
//   op            args[0]  args[1]        args[2]     payload                    response
//   kCreate       id       -              -           u32 n, spec(n), u8 has_initial, initial?  args: version, CreateOutcome
//   kRead         id       min_version    wait_ms     -                          values; args: version
//   kAssign       id       -              -           values                     args: version
//   kAssignAdd    id       -              -           values                     args: version
//   kAssignSub    id       -              -           values                     args: version
//   kApplyGradient id      worker (i64)   step        gradient                   args: version, accepted, applied
//   kReadRows     id       count          -           count x i64 rows           count rows
//   kAddRows      id       count          -           rows, then count rows      args: version
//   kApplyRows    id       count          -           rows, then count rows      args: version
//   kList         -        -              -           -                          JSON [{id, name, ...}]
//   kSave         -        -              -           JSON {directory, index, count}  JSON {file, bytes, sha256, entries}
//   kRestore      -        -              -           JSON {directory}           args: shards restored
//   kStop         -        -              -           -                          (the server then stops)
//   kDelete       id       -              -           -                          -
//
// A response's code is a dist::Status; on error its payload is the message.
#pragma once

#include <cstdint>

namespace dist::ps {

enum class Op : int32_t {
  kCreate = 1,
  kRead = 2,
  kAssign = 3,
  kAssignAdd = 4,
  kAssignSub = 5,
  kApplyGradient = 6,
  kReadRows = 7,
  kAddRows = 8,
  kApplyRows = 9,
  kList = 10,
  kSave = 11,
  kRestore = 12,
  kStop = 13,
  kDelete = 14,
};

// The longest a read may wait for a version (a synchronous round).
inline constexpr uint64_t kMaxWaitMs = 600000;
// The most rows one sparse request may name.
inline constexpr uint64_t kMaxRowsPerRequest = uint64_t{1} << 26;
// The most bytes of a control payload (JSON of save/restore).
inline constexpr uint64_t kMaxControlBytes = 64 * 1024;

const char* op_name(int32_t op);

}  // namespace dist::ps
