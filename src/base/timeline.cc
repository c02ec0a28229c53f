#include "base/timeline.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdlib>
#include <cstring>

#include "base/json.h"
#include "base/log.h"
#include "base/status.h"

namespace dist {

namespace {

// Events are written in batches of this many: formatting waits for them.
constexpr size_t kFlushEvents = 4096;

// Microseconds with three decimals, as the format wants "ts" and "dur".
void append_microseconds(std::string& out, int64_t ns) {
  char text[32];
  const int64_t whole = ns / 1000, fraction = ns % 1000;
  std::snprintf(text, sizeof text, "%" PRId64 ".%03" PRId64, whole, fraction < 0 ? -fraction : fraction);
  out += text;
}

// Static names need no escaping; this checks that they need none.
void append_plain(std::string& out, const char* text) {
  for (const char* c = text; *c != '\0'; ++c) {
    out += (*c == '"' || *c == '\\' || static_cast<unsigned char>(*c) < 0x20) ? '?' : *c;
  }
}

}  // namespace

int64_t timeline_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
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
  // What merge needs to place this file beside the others: the rank, its
  // host (ranks of one host share the steady clock) and both clocks at once.
  const int64_t steady = timeline_now_ns();
  const int64_t system = std::chrono::duration_cast<std::chrono::nanoseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  Json process_name = {{"name", "process_name"}, {"ph", "M"}, {"pid", pid_}, {"tid", 0},
                       {"args", {{"name", owner.task + " (rank " + std::to_string(owner.rank) + ")"}}}};
  Json identity = {{"name", "libdistribute"}, {"ph", "M"}, {"pid", pid_}, {"tid", 0},
                   {"args",
                    {{"rank", owner.rank},
                     {"size", owner.size},
                     {"task", owner.task},
                     {"host_id", owner.host_id},
                     {"os_pid", static_cast<int64_t>(getpid())},
                     {"steady_ns", steady},
                     {"system_ns", system}}}};
  std::lock_guard<std::mutex> guard(file_mutex_);
  write_text_locked("[\n" + dump_json(process_name) + ",\n" + dump_json(identity));
}

Timeline::~Timeline() {
  flush();
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
  std::lock_guard<std::mutex> guard(file_mutex_);
  write_text_locked(metadata);
  return id;
}

void Timeline::record(TimelineEvent event) {
  std::vector<TimelineEvent> full;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    buffer_.push_back(std::move(event));
    if (buffer_.size() < kFlushEvents) return;
    full.swap(buffer_);
  }
  std::lock_guard<std::mutex> guard(file_mutex_);
  write_locked(full);
}

void Timeline::flush() {
  std::vector<TimelineEvent> pending;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    pending.swap(buffer_);
  }
  std::lock_guard<std::mutex> guard(file_mutex_);
  write_locked(pending);
  if (file_ != nullptr) std::fflush(file_);
}

void Timeline::write_locked(const std::vector<TimelineEvent>& events) {
  std::string out;
  out.reserve(events.size() * 200);
  for (const TimelineEvent& e : events) {
    out += ",\n{\"name\":\"";
    append_plain(out, e.name);
    out += "\",\"cat\":\"";
    append_plain(out, e.category);
    out += "\",\"ph\":\"X\",\"pid\":";
    out += std::to_string(pid_);
    out += ",\"tid\":";
    out += std::to_string(e.lane);
    out += ",\"ts\":";
    append_microseconds(out, e.start_ns);
    out += ",\"dur\":";
    append_microseconds(out, e.duration_ns < 0 ? 0 : e.duration_ns);
    out += ",\"args\":{";
    for (int i = 0; i < e.arg_count; ++i) {
      if (i > 0) out += ',';
      out += '"';
      append_plain(out, e.args[i].key);
      out += "\":";
      if (e.args[i].text != nullptr) {
        out += '"';
        append_plain(out, e.args[i].text);
        out += '"';
      } else {
        out += std::to_string(e.args[i].number);
      }
    }
    if (!e.detail.empty()) {
      out += e.arg_count > 0 ? ",\"detail\":" : "\"detail\":";
      out += dump_json(Json(e.detail));
    }
    out += "}}";
  }
  write_text_locked(out);
}

void Timeline::write_text_locked(const std::string& text) {
  if (file_ == nullptr || text.empty()) return;
  if (std::fwrite(text.data(), 1, text.size(), file_) != text.size()) {
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
