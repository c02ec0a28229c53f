// The events of a timeline (base/timeline.h) as a recording thread makes
// them: a span with a few arguments, whose names point into the library's
// tables; and a collective's span, whose arguments are fixed.
#pragma once

#include <cstdint>
#include <string>

namespace dist {

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

  // Arguments beyond kMaxArgs are dropped. Inline: a collective adds nine.
  TimelineEvent& add(const char* key, int64_t number) {
    if (arg_count < kMaxArgs) args[arg_count++] = TimelineArg{key, nullptr, number};
    return *this;
  }
  TimelineEvent& add(const char* key, const char* text) {
    if (arg_count < kMaxArgs) args[arg_count++] = TimelineArg{key, text == nullptr ? "" : text, 0};
    return *this;
  }
};

// The event of one traced collective: the span every traced call makes, so
// its fields are in place (recording it copies about a hundred bytes) and its
// spool record has a fixed layout. Its trace event is named `kind`, in the
// category "collective", with the arguments comm, seq, dtype, bytes, path,
// algorithm, waiting_ns, reducing_ns, moving_ns and, when it failed, status.
struct TimelineCollective {
  // Static names from the library's tables.
  const char* kind = "";
  const char* dtype = "";
  const char* path = "";
  const char* algorithm = nullptr;  // null: written as ""
  const char* status = nullptr;     // null: the call succeeded
  int64_t start_ns = 0;
  int64_t duration_ns = 0;
  uint32_t lane = 0;
  uint32_t comm = 0;
  uint64_t seq = 0;
  uint64_t bytes = 0;
  int64_t waiting_ns = 0;
  int64_t reducing_ns = 0;
  int64_t moving_ns = 0;
};

}  // namespace dist
