#include "base/timeline.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "base/json.h"
#include "base/log.h"
#include "base/status.h"
#include "base/timeline_spool.h"

namespace dist {

namespace {

// Events go to the writer in batches of this many; a recording thread waits
// only when this many batches are already waiting.
constexpr size_t kBatchEvents = 4096;
constexpr size_t kMostQueued = 8;

}  // namespace

int64_t timeline_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

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
  buffer_.reserve(kBatchEvents);
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
  {
    std::lock_guard<std::mutex> guard(file_mutex_);
    TimelineSpoolEncoder::begin(spooled_, pid_);
    encoder_.text(spooled_, dump_json(process_name));
    encoder_.text(spooled_, dump_json(identity));
    write_spooled_locked();
  }
  writer_ = std::thread([this] { writer_loop(); });
}

Timeline::~Timeline() {
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
  Json name_event, order_event;
  uint32_t id = 0;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    auto found = lanes_.find(name);
    if (found != lanes_.end()) return found->second;
    id = static_cast<uint32_t>(lanes_.size() + 1);
    lanes_.emplace(name, id);
    name_event = Json{{"name", "thread_name"}, {"ph", "M"}, {"pid", pid_}, {"tid", id}, {"args", {{"name", name}}}};
    order_event = Json{{"name", "thread_sort_index"}, {"ph", "M"}, {"pid", pid_}, {"tid", id},
                       {"args", {{"sort_index", id}}}};
  }
  // Metadata may sit anywhere in the array: written at once, by the caller.
  std::lock_guard<std::mutex> guard(file_mutex_);
  encoder_.text(spooled_, dump_json(name_event));
  encoder_.text(spooled_, dump_json(order_event));
  write_spooled_locked();
  return id;
}

void Timeline::record(TimelineEvent&& event) {
  std::unique_lock<std::mutex> lock(mutex_);
  buffer_.push_back(std::move(event));
  if (buffer_.size() < kBatchEvents) return;
  written_.wait(lock, [this] { return queue_.size() < kMostQueued || stopping_; });
  hand_over_locked();
  lock.unlock();
  wake_writer_.notify_one();
}

void Timeline::hand_over_locked() {
  queue_.push_back(std::move(buffer_));
  if (free_.empty()) {
    buffer_ = Batch();
    buffer_.reserve(kBatchEvents);
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
    Batch batch = std::move(queue_.front());
    queue_.pop_front();
    writing_ = true;
    lock.unlock();
    {
      std::lock_guard<std::mutex> file_guard(file_mutex_);
      write_batch_locked(batch);
    }
    batch.clear();
    lock.lock();
    writing_ = false;
    free_.push_back(std::move(batch));
    written_.notify_all();
  }
}

void Timeline::write_batch_locked(const Batch& batch) {
  for (const TimelineEvent& e : batch) encoder_.event(spooled_, e);
  write_spooled_locked();
}

void Timeline::write_spooled_locked() {
  if (spool_ != nullptr && !spooled_.empty() &&
      std::fwrite(spooled_.data(), 1, spooled_.size(), spool_) != spooled_.size()) {
    // The job goes on without its timeline rather than failing a call that
    // worked; the spool keeps what was written before.
    log_message(LogLevel::kWarn, "timeline: writing " + dist::quoted(spool_path_) + " failed (" +
                                     std::strerror(errno) + "); no more events are recorded there");
    std::fclose(spool_);
    spool_ = nullptr;
  }
  spooled_.clear();
}

void Timeline::write_trace(const std::string& path, const std::string& spool_path) {
  std::FILE* out = std::fopen(path.c_str(), "w");
  bool written = false;
  std::string why;
  if (out == nullptr) {
    why = std::strerror(errno);
  } else {
    try {
      convert_timeline_spool(spool_path, out);
      written = true;
    } catch (const std::exception& e) {
      why = e.what();
    }
    if (std::fclose(out) != 0 && written) {
      written = false;
      why = std::strerror(errno);
    }
  }
  if (written) {
    std::remove(spool_path.c_str());
  } else {
    log_message(LogLevel::kWarn, "timeline: writing " + dist::quoted(path) + " failed (" + why +
                                     "); its events stay in " + dist::quoted(spool_path) +
                                     " for dist-info timeline to convert");
  }
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
  timeline->record(std::move(event_));
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
