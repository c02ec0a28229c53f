// A timeline: what one rank did and when, as Chrome trace events (a JSON
// array, which Perfetto and chrome://tracing load), written to a file of its
// own as events accumulate. Events are spans ("X") on lanes (a communicator,
// a replica, the parameter-server client), each with a few arguments; times
// are the steady clock's, so ranks on one host share them and
// `dist-info timeline merge` aligns those of other hosts.
//
// Recording is on when a context gets a timeline prefix (option or
// DIST_TIMELINE); off, nothing here runs. Thread-safe; a recorded event is
// encoded as a record of the timeline's spool (base/timeline_spool.h) at
// once, and a thread of its own writes full buffers of records to the
// spool, which becomes the JSON file when the timeline closes.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/timeline_event.h"
#include "base/timeline_spool.h"

namespace dist {

// The steady clock in nanoseconds, as the events carry it (read through
// base/fast_clock.h: a traced call reads it four times).
int64_t timeline_now_ns();

// Both clocks read at once: what places one process's steady times beside
// another host's (a timeline's header, a flight-recorder dump).
struct ClockReading {
  int64_t steady_ns = 0;
  int64_t system_ns = 0;
};
ClockReading read_clocks();

// Who writes a timeline: what the file's metadata and merge need.
struct TimelineOwner {
  int rank = 0;
  int size = 1;
  std::string task;     // "worker:0"
  std::string host_id;  // equal on ranks that share a machine (and its steady clock)
};

class Timeline {
 public:
  // Opens the spool of `path` (and removes an older `path`), writes the
  // metadata and starts the writer thread; kInvalidArgument naming the path
  // when the spool cannot be created.
  Timeline(const std::string& path, const TimelineOwner& owner);
  // Writes what is buffered, stops the writer and turns the spool into
  // `path` (keeping the spool, with a warning, where that fails).
  ~Timeline();
  Timeline(const Timeline&) = delete;
  Timeline& operator=(const Timeline&) = delete;

  // The lane called `name`, made (and named in the file) at first use.
  uint32_t lane(const std::string& name);
  // Encodes the event into the buffer; a full buffer goes to the writer
  // thread, so a recording thread never writes the file. It waits only when
  // the writer is several buffers behind (memory stays bounded).
  void record(const TimelineEvent& event);
  void record(const TimelineCollective& collective);
  // Returns once every event recorded so far is in the spool.
  void flush();
  const std::string& path() const { return path_; }

  // "<prefix>.<rank>.json": each rank's file.
  static std::string path_for(const std::string& prefix, int rank);

 private:
  // After a record: hands a full buffer_ over. Called with `lock` held.
  void hand_over_if_full(std::unique_lock<std::mutex>& lock);
  // Hands buffer_ to the writer. Called with mutex_ held.
  void hand_over_locked();
  void writer_loop();
  // Writes `records` to the spool. Called with file_mutex_ held.
  void write_locked(const std::string& records);
  // The trace at `path` from the spool, which is removed once it is.
  static void write_trace(const std::string& path, const std::string& spool_path);

  std::string path_;
  std::string spool_path_;
  int pid_ = 0;  // the trace's pid field: the rank, so that a merge keeps ranks apart
  std::mutex mutex_;  // guards the encoder, the buffers, the queue, the lanes and the writer's state
  std::condition_variable wake_writer_;
  std::condition_variable written_;  // a buffer was written (or the writer stopped)
  TimelineSpoolEncoder encoder_;
  std::string buffer_;               // records, being filled
  std::deque<std::string> queue_;    // full, waiting for the writer
  std::vector<std::string> free_;    // written, kept for their memory
  bool writing_ = false;             // the writer holds a buffer
  bool stopping_ = false;
  std::map<std::string, uint32_t> lanes_;
  std::mutex file_mutex_;  // guards the spool
  std::FILE* spool_ = nullptr;
  std::thread writer_;
};

// One span on a timeline, from its making to its end (or destruction):
// nothing at all when `timeline` is null.
class TimelineSpan {
 public:
  TimelineSpan(Timeline* timeline, const char* name, const char* category, const std::string& lane);
  ~TimelineSpan() { end(); }
  TimelineSpan(const TimelineSpan&) = delete;
  TimelineSpan& operator=(const TimelineSpan&) = delete;

  bool recording() const { return timeline_ != nullptr; }
  // Its arguments (only while recording()).
  TimelineEvent& event() { return event_; }
  // Records it now; later calls do nothing.
  void end();

 private:
  Timeline* timeline_;
  TimelineEvent event_;
};

// The timeline DIST_TIMELINE asks for in a process that records without a
// context (a strategy of local replicas): "<prefix>.pid<PID>.json", shared
// by everything in the process; null when DIST_TIMELINE is unset.
std::shared_ptr<Timeline> process_timeline();

}  // namespace dist
