// A timeline: what one rank did and when, as Chrome trace events (a JSON
// array, which Perfetto and chrome://tracing load), written to a file of its
// own as events accumulate. Events are spans ("X") on lanes (a communicator,
// a replica, the parameter-server client), each with a few arguments; times
// are the steady clock's, so ranks on one host share them and
// `dist-info timeline merge` aligns those of other hosts.
//
// Recording is on when a context gets a timeline prefix (option or
// DIST_TIMELINE); off, nothing here runs. Thread-safe; a thread of its own
// formats and writes the events.
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

namespace dist {

// The steady clock in nanoseconds, as the events carry it.
int64_t timeline_now_ns();

// Both clocks read at once: what places one process's steady times beside
// another host's (a timeline's header, a flight-recorder dump).
struct ClockReading {
  int64_t steady_ns = 0;
  int64_t system_ns = 0;
};
ClockReading read_clocks();

// One argument of an event. Keys and text values must live as long as the
// program (names from the library's tables); other text is copied by the
// event's `detail`.
struct TimelineArg {
  const char* key = nullptr;
  const char* text = nullptr;  // null: the argument is `number`
  int64_t number = 0;
};

struct TimelineEvent {
  static constexpr int kMaxArgs = 10;
  const char* name = "";      // static
  const char* category = "";  // static: "collective", "phase", "apply_gradients", "replica", "ps"
  int64_t start_ns = 0;
  int64_t duration_ns = 0;
  uint32_t lane = 0;
  int arg_count = 0;
  TimelineArg args[kMaxArgs];
  std::string detail;  // optional free text, written as args.detail (escaped)

  TimelineEvent& add(const char* key, int64_t number);
  TimelineEvent& add(const char* key, const char* text);
};

// Who writes a timeline: what the file's metadata and merge need.
struct TimelineOwner {
  int rank = 0;
  int size = 1;
  std::string task;     // "worker:0"
  std::string host_id;  // equal on ranks that share a machine (and its steady clock)
};

class Timeline {
 public:
  // Opens `path` (replacing it), writes the metadata and starts the writer
  // thread; kInvalidArgument naming the path when it cannot be created.
  Timeline(const std::string& path, const TimelineOwner& owner);
  // Writes what is buffered, closes the array and stops the writer.
  ~Timeline();
  Timeline(const Timeline&) = delete;
  Timeline& operator=(const Timeline&) = delete;

  // The lane called `name`, made (and named in the file) at first use.
  uint32_t lane(const std::string& name);
  // Buffers the event; a full buffer goes to the writer thread, which
  // formats and writes it, so a recording thread never does. It waits only
  // when the writer is several buffers behind (memory stays bounded).
  void record(TimelineEvent event);
  // Returns once every event recorded so far is in the file.
  void flush();
  const std::string& path() const { return path_; }

  // "<prefix>.<rank>.json": each rank's file.
  static std::string path_for(const std::string& prefix, int rank);

 private:
  using Batch = std::vector<TimelineEvent>;
  // Hands buffer_ to the writer. Called with mutex_ held.
  void hand_over_locked();
  void writer_loop();
  // Formats and writes a batch. Called with file_mutex_ held.
  void write_batch_locked(const Batch& batch);
  void write_text_locked(const std::string& text);
  void write_bytes_locked(const char* data, size_t size);

  std::string path_;
  int pid_ = 0;  // the trace's pid field: the rank, so that a merge keeps ranks apart
  std::mutex mutex_;  // guards the buffers, the queue, the lanes and the writer's state
  std::condition_variable wake_writer_;
  std::condition_variable written_;  // a batch was written (or the writer stopped)
  Batch buffer_;                     // being filled
  std::deque<Batch> queue_;          // full, waiting for the writer
  std::vector<Batch> free_;          // written, kept for their memory
  bool writing_ = false;             // the writer holds a batch
  bool stopping_ = false;
  std::map<std::string, uint32_t> lanes_;
  std::mutex file_mutex_;  // guards the file and text_
  std::FILE* file_ = nullptr;
  std::string text_;  // the writer's formatting buffer, kept
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
