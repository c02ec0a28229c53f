#include "base/timeline.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>

#include "base/json.h"
#include "base/log.h"
#include "base/status.h"

namespace dist {

namespace {

// Events go to the writer in batches of this many; a recording thread waits
// only when this many batches are already waiting.
constexpr size_t kBatchEvents = 4096;
constexpr size_t kMostQueued = 8;

// Formatting is most of what recording costs: events are written into a
// buffer with room for the largest event made first, by a cursor, with
// to_chars for numbers (no locale, no allocation, no capacity checks).
class EventWriter {
 public:
  explicit EventWriter(std::string& text) : text_(text) {}
  // Room for `bytes` more.
  void reserve(size_t bytes) {
    if (text_.size() - used_ >= bytes) return;
    text_.resize(std::max(text_.size() * 2, used_ + bytes));
  }
  void literal(const char* text, size_t length) {
    std::memcpy(&text_[used_], text, length);
    used_ += length;
  }
  template <size_t N>
  void literal(const char (&text)[N]) {
    literal(text, N - 1);
  }
  void character(char c) { text_[used_++] = c; }
  // Static names need no escaping; this keeps them from breaking the JSON.
  void plain(const char* text) {
    for (const char* c = text; *c != '\0'; ++c) {
      text_[used_++] = (*c == '"' || *c == '\\' || static_cast<unsigned char>(*c) < 0x20) ? '?' : *c;
    }
  }
  void integer(int64_t value) {
    const auto result = std::to_chars(&text_[used_], &text_[used_] + 24, value);
    used_ = static_cast<size_t>(result.ptr - text_.data());
  }
  // Microseconds with three decimals, as the format wants "ts" and "dur".
  void microseconds(int64_t ns) {
    if (ns < 0) {
      character('-');
      ns = -ns;
    }
    integer(ns / 1000);
    const int64_t fraction = ns % 1000;
    character('.');
    character(static_cast<char>('0' + fraction / 100));
    character(static_cast<char>('0' + fraction / 10 % 10));
    character(static_cast<char>('0' + fraction % 10));
  }
  size_t used() const { return used_; }

 private:
  std::string& text_;
  size_t used_ = 0;
};

// The most an event takes besides its names, keys and detail.
constexpr size_t kEventFixedBytes = 160 + TimelineEvent::kMaxArgs * 32;

size_t event_bound(const TimelineEvent& e) {
  size_t bytes = kEventFixedBytes + std::strlen(e.name) + std::strlen(e.category) + 8 * e.detail.size();
  for (int i = 0; i < e.arg_count; ++i) {
    bytes += std::strlen(e.args[i].key) + (e.args[i].text != nullptr ? std::strlen(e.args[i].text) : 0);
  }
  return bytes;
}

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

TimelineEvent& TimelineEvent::add(const char* key, int64_t number) {
  if (arg_count < kMaxArgs) {
    args[arg_count].key = key;
    args[arg_count].text = nullptr;
    args[arg_count].number = number;
    ++arg_count;
  }
  return *this;
}

TimelineEvent& TimelineEvent::add(const char* key, const char* text) {
  if (arg_count < kMaxArgs) {
    args[arg_count].key = key;
    args[arg_count].text = text == nullptr ? "" : text;
    ++arg_count;
  }
  return *this;
}

std::string Timeline::path_for(const std::string& prefix, int rank) { return prefix + "." + std::to_string(rank) + ".json"; }

Timeline::Timeline(const std::string& path, const TimelineOwner& owner) : path_(path), pid_(owner.rank) {
  file_ = std::fopen(path.c_str(), "w");
  if (file_ == nullptr) fail_invalid("timeline: cannot create " + dist::quoted(path) + ": " + std::strerror(errno));
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
    write_text_locked("[\n" + dump_json(process_name) + ",\n" + dump_json(identity));
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
  if (file_ != nullptr) {
    std::fputs("\n]\n", file_);
    std::fclose(file_);
  }
}

uint32_t Timeline::lane(const std::string& name) {
  std::string metadata;
  uint32_t id = 0;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    auto found = lanes_.find(name);
    if (found != lanes_.end()) return found->second;
    id = static_cast<uint32_t>(lanes_.size() + 1);
    lanes_.emplace(name, id);
    metadata = ",\n" + dump_json(Json{{"name", "thread_name"}, {"ph", "M"}, {"pid", pid_}, {"tid", id},
                                      {"args", {{"name", name}}}}) +
               ",\n" + dump_json(Json{{"name", "thread_sort_index"}, {"ph", "M"}, {"pid", pid_}, {"tid", id},
                                      {"args", {{"sort_index", id}}}});
  }
  // Metadata may sit anywhere in the array: written at once, by the caller.
  std::lock_guard<std::mutex> guard(file_mutex_);
  write_text_locked(metadata);
  return id;
}

void Timeline::record(TimelineEvent event) {
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
  if (file_ != nullptr) std::fflush(file_);
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
  EventWriter out(text_);
  for (const TimelineEvent& e : batch) {
    out.reserve(event_bound(e));
    out.literal(",\n{\"name\":\"");
    out.plain(e.name);
    out.literal("\",\"cat\":\"");
    out.plain(e.category);
    out.literal("\",\"ph\":\"X\",\"pid\":");
    out.integer(pid_);
    out.literal(",\"tid\":");
    out.integer(e.lane);
    out.literal(",\"ts\":");
    out.microseconds(e.start_ns);
    out.literal(",\"dur\":");
    out.microseconds(e.duration_ns < 0 ? 0 : e.duration_ns);
    out.literal(",\"args\":{");
    for (int i = 0; i < e.arg_count; ++i) {
      if (i > 0) out.character(',');
      out.character('"');
      out.plain(e.args[i].key);
      out.literal("\":");
      if (e.args[i].text != nullptr) {
        out.character('"');
        out.plain(e.args[i].text);
        out.character('"');
      } else {
        out.integer(e.args[i].number);
      }
    }
    if (!e.detail.empty()) {
      if (e.arg_count > 0) out.character(',');
      out.literal("\"detail\":");
      const std::string escaped = dump_json(Json(e.detail));
      out.literal(escaped.data(), escaped.size());
    }
    out.literal("}}");
  }
  write_bytes_locked(text_.data(), out.used());
}

void Timeline::write_text_locked(const std::string& text) { write_bytes_locked(text.data(), text.size()); }

void Timeline::write_bytes_locked(const char* data, size_t size) {
  if (file_ == nullptr || size == 0) return;
  if (std::fwrite(data, 1, size, file_) != size) {
    // The job goes on without its timeline rather than failing a call that
    // worked; the file keeps what was written before.
    log_message(LogLevel::kWarn, "timeline: writing " + dist::quoted(path_) + " failed (" + std::strerror(errno) +
                                     "); no more events are recorded there");
    std::fclose(file_);
    file_ = nullptr;
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
