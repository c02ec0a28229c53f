#include "base/timeline.h"

#include "base/call_phases.h"
#include "base/fast_clock.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "base/atomic_file.h"
#include "base/json.h"
#include "base/log.h"
#include "base/status.h"
#include "base/timeline_spool.h"

namespace dist {

namespace {

// Records go to the writer in buffers of about this many bytes (a few
// thousand events); a recording thread waits only when this many buffers
// are already waiting.
constexpr size_t kBufferBytes = 256 << 10;
constexpr size_t kMostQueued = 8;

}  // namespace

int64_t timeline_now_ns() { return fast_steady_ns(); }

ClockReading read_clocks() {
  ClockReading reading;
  reading.steady_ns = timeline_now_ns();
  reading.system_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  return reading;
}

std::string Timeline::path_for(const std::string& prefix, int rank) { return prefix + "." + std::to_string(rank) + ".json"; }

Timeline::Timeline(const std::string& path, const TimelineOwner& owner)
    : path_(path), spool_path_(timeline_spool_path(path)), pid_(owner.rank) {
  spool_ = std::fopen(spool_path_.c_str(), "wb");
  if (spool_ == nullptr) {
    fail_invalid("timeline: cannot create " + dist::quoted(path) + "'s spool " + dist::quoted(spool_path_) + ": " +
                 std::strerror(errno));
  }
  // An earlier run's trace would read as this one's until this one closes.
  std::remove(path.c_str());
  buffer_.reserve(kBufferBytes + 4096);
  // What merge needs to place this file beside the others: the rank, its
  // host (ranks of one host share the steady clock) and both clocks at once.
  const ClockReading clocks = read_clocks();
  Json process_name = {{"name", "process_name"}, {"ph", "M"}, {"pid", pid_}, {"tid", 0},
                       {"args", {{"name", owner.task + " (rank " + std::to_string(owner.rank) + ")"}}}};
  Json identity = {{"name", "libdistribute"}, {"ph", "M"}, {"pid", pid_}, {"tid", 0},
                   {"args",
                    {{"rank", owner.rank},
                     {"size", owner.size},
                     {"task", owner.task},
                     {"host_id", owner.host_id},
                     {"os_pid", static_cast<int64_t>(getpid())},
                     {"steady_ns", clocks.steady_ns},
                     {"system_ns", clocks.system_ns}}}};
  std::string header;
  TimelineSpoolEncoder::begin(header, pid_);
  encoder_.text(header, dump_json(process_name));
  encoder_.text(header, dump_json(identity));
  {
    std::lock_guard<std::mutex> guard(file_mutex_);
    write_locked(header);
  }
  writer_ = std::thread([this] { writer_loop(); });
  g_open_timelines.fetch_add(1, std::memory_order_relaxed);
}

Timeline::~Timeline() {
  g_open_timelines.fetch_sub(1, std::memory_order_relaxed);
  flush();
  {
    std::lock_guard<std::mutex> guard(mutex_);
    stopping_ = true;
  }
  wake_writer_.notify_all();
  writer_.join();
  std::lock_guard<std::mutex> guard(file_mutex_);
  if (spool_ == nullptr) return;  // writing it failed; the spool keeps what it has
  std::fclose(spool_);
  spool_ = nullptr;
  write_trace(path_, spool_path_);
}

uint32_t Timeline::lane(const std::string& name) {
  std::unique_lock<std::mutex> lock(mutex_);
  auto found = lanes_.find(name);
  if (found != lanes_.end()) return found->second;
  const uint32_t id = static_cast<uint32_t>(lanes_.size() + 1);
  lanes_.emplace(name, id);
  encoder_.text(buffer_, dump_json(Json{{"name", "thread_name"}, {"ph", "M"}, {"pid", pid_}, {"tid", id},
                                        {"args", {{"name", name}}}}));
  encoder_.text(buffer_, dump_json(Json{{"name", "thread_sort_index"}, {"ph", "M"}, {"pid", pid_}, {"tid", id},
                                        {"args", {{"sort_index", id}}}}));
  hand_over_if_full(lock);
  return id;
}

void Timeline::record(const TimelineEvent& event) {
  std::unique_lock<std::mutex> lock(mutex_);
  encoder_.event(buffer_, event);
  hand_over_if_full(lock);
}

void Timeline::record(const TimelineCollective& collective) {
  std::unique_lock<std::mutex> lock(mutex_);
  encoder_.collective(buffer_, collective);
  hand_over_if_full(lock);
}

void Timeline::hand_over_if_full(std::unique_lock<std::mutex>& lock) {
  if (buffer_.size() < kBufferBytes) return;
  written_.wait(lock, [this] { return queue_.size() < kMostQueued || stopping_; });
  hand_over_locked();
  lock.unlock();
  wake_writer_.notify_one();
}

void Timeline::hand_over_locked() {
  queue_.push_back(std::move(buffer_));
  if (free_.empty()) {
    buffer_ = std::string();
    buffer_.reserve(kBufferBytes + 4096);
  } else {
    buffer_ = std::move(free_.back());
    free_.pop_back();
  }
}

void Timeline::flush() {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!buffer_.empty()) hand_over_locked();
  wake_writer_.notify_one();
  written_.wait(lock, [this] { return (queue_.empty() && !writing_) || stopping_; });
  lock.unlock();
  std::lock_guard<std::mutex> file_guard(file_mutex_);
  if (spool_ != nullptr) std::fflush(spool_);
}

void Timeline::writer_loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    wake_writer_.wait(lock, [this] { return !queue_.empty() || stopping_; });
    if (queue_.empty()) return;  // stopping, and everything is written
    std::string records = std::move(queue_.front());
    queue_.pop_front();
    writing_ = true;
    lock.unlock();
    {
      std::lock_guard<std::mutex> file_guard(file_mutex_);
      write_locked(records);
    }
    records.clear();
    lock.lock();
    writing_ = false;
    free_.push_back(std::move(records));
    written_.notify_all();
  }
}

void Timeline::write_locked(const std::string& records) {
  if (spool_ != nullptr && !records.empty() &&
      std::fwrite(records.data(), 1, records.size(), spool_) != records.size()) {
    // The job goes on without its timeline rather than failing a call that
    // worked; the spool keeps what was written before.
    log_message(LogLevel::kWarn, "timeline: writing " + dist::quoted(spool_path_) + " failed (" +
                                     std::strerror(errno) + "); no more events are recorded there");
    std::fclose(spool_);
    spool_ = nullptr;
  }
}

void Timeline::write_trace(const std::string& path, const std::string& spool_path) {
  std::string why;
  try {
    // Whole or not at all: a crash while converting leaves the spool, not
    // a trace cut short under the trace's name.
    AtomicFile trace(path);
    auto write = [&](const char* data, size_t size) { trace.write(data, size); };
    convert_timeline_spool(spool_path, write);
    trace.commit();
    std::remove(spool_path.c_str());
    return;
  } catch (const std::exception& e) {
    why = e.what();
  }
  log_message(LogLevel::kWarn, "timeline: writing " + dist::quoted(path) + " failed (" + why +
                                   "); its events stay in " + dist::quoted(spool_path) +
                                   " for dist-info timeline to convert");
}

TimelineSpan::TimelineSpan(Timeline* timeline, const char* name, const char* category, const std::string& lane)
    : timeline_(timeline) {
  if (timeline_ == nullptr) return;
  event_.name = name;
  event_.category = category;
  event_.lane = timeline_->lane(lane);
  event_.start_ns = timeline_now_ns();
}

void TimelineSpan::end() {
  if (timeline_ == nullptr) return;
  event_.duration_ns = timeline_now_ns() - event_.start_ns;
  Timeline* timeline = timeline_;
  timeline_ = nullptr;
  timeline->record(event_);
}

std::shared_ptr<Timeline> process_timeline() {
  static std::mutex mutex;
  static std::weak_ptr<Timeline> current;
  const char* prefix = std::getenv("DIST_TIMELINE");
  if (prefix == nullptr || *prefix == '\0') return nullptr;
  std::lock_guard<std::mutex> guard(mutex);
  std::shared_ptr<Timeline> timeline = current.lock();
  if (timeline == nullptr) {
    TimelineOwner owner;
    owner.task = "local";
    timeline = std::make_shared<Timeline>(std::string(prefix) + ".pid" + std::to_string(getpid()) + ".json", owner);
    current = timeline;
  }
  return timeline;
}

}  // namespace dist
