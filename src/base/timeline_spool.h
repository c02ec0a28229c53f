// A timeline's spool: the compact binary file a timeline's events go to while
// the job runs (encoded by the recording thread, written by the timeline's
// writer thread), and the one place that turns it into the Chrome-trace
// JSON. Formatting JSON as events arrive cost more CPU than an 8-byte
// collective on a host whose cores the ranks already fill; a spool record is
// a few dozen bytes, and the names in it (static strings from the library's
// tables) are written once each.
//
// The JSON is made when the timeline closes. A rank that dies first leaves
// its spool, which `dist-info timeline` converts: every whole record before
// the cut becomes an event.
//
// Layout: the magic and an i32 pid in host byte order (a spool is read on
// the machine that wrote it; the pid is every event's "pid", the rank), then
// records. Numbers are LEB128 varints, signed ones zigzagged; a text is a
// length and its bytes. Each record starts with its type byte:
//   text:   a text: one JSON object, copied into the array as it is
//   string: id, text: names an id (ids count from 1; 0 is "none")
//   event:  flags (argument count, 0x80 with detail), name, category, lane,
//           start (change from the previous event's), duration, per argument
//           key, text id (0: a number follows), number; then the detail text
//   collective: changes (a byte: which of kind, dtype, path, algorithm,
//           status, lane, comm and bytes differ from the previous collective
//           record's, bit 0 to bit 7), those fields, the seq's change from
//           the previous one's plus one, start (as for events), duration,
//           waiting, reducing and moving. Every traced call makes one, mostly
//           the same call as the last: about ten bytes, where the file's
//           writes are what tracing costs most on a host the ranks fill.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>

#include "base/function_ref.h"
#include "base/timeline_event.h"

namespace dist {

// "<timeline path>.spool": where a timeline's events wait for its close.
constexpr char kTimelineSpoolSuffix[] = ".spool";
inline std::string timeline_spool_path(const std::string& timeline_path) { return timeline_path + kTimelineSpoolSuffix; }

// A collective record's fields, names as ids: what the encoder and the
// conversion remember of the previous one.
struct SpooledCollective {
  // Written only when they differ from the previous record's: field i is
  // bit i of the record's changes.
  enum Field : int { kKind, kDtype, kPath, kAlgorithm, kStatus, kLane, kComm, kBytes, kFieldCount };
  uint64_t fields[kFieldCount] = {};
  uint64_t seq = 0;
  int64_t start_ns = 0, duration_ns = 0, waiting_ns = 0, reducing_ns = 0, moving_ns = 0;
};

// Appends records to a byte buffer that its owner writes to the spool.
// Remembers which names it has written, so one instance per spool.
class TimelineSpoolEncoder {
 public:
  // What starts a spool: the magic, and the trace's pid for every event.
  static void begin(std::string& out, int32_t pid);
  // One JSON object, copied into the trace unchanged.
  void text(std::string& out, const std::string& json_object);
  void event(std::string& out, const TimelineEvent& event);
  void collective(std::string& out, const TimelineCollective& collective);

 private:
  uint32_t intern(std::string& out, const char* name);
  struct Remembered {
    const char* name = nullptr;
    uint32_t id = 0;
  };
  // The id of `name` (0 for null) in one place of a record.
  uint32_t id_at(std::string& out, Remembered& place, const char* name);
  // By place in an event: its name, category, argument keys and texts.
  Remembered last_name_, last_category_;
  Remembered last_keys_[TimelineEvent::kMaxArgs], last_texts_[TimelineEvent::kMaxArgs];
  // By field of a collective.
  Remembered last_kind_, last_dtype_, last_path_, last_algorithm_, last_status_;
  std::unordered_map<const char*, uint32_t> ids_;
  SpooledCollective last_collective_;  // collectives carry what changed since it
  int64_t last_start_ns_ = 0;          // events carry their start as the change from it
};

struct SpoolConversion {
  size_t events = 0;
  bool cut_short = false;  // the spool ended inside a record (its writer died)
};

// Where a conversion's JSON goes, a piece (of up to about 1 MiB) at a time;
// it throws when it cannot take it.
using TraceSink = FunctionRef<void(const char* data, size_t size)>;

// Gives the trace the spool at `spool_path` holds, as one JSON array, to
// `write`. kInvalidArgument naming the file when it cannot be read or is not a
// spool; a spool cut short gives the events before the cut.
SpoolConversion convert_timeline_spool(const std::string& spool_path, TraceSink write);

}  // namespace dist
