#include "base/timeline_spool.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <deque>
#include <memory>
#include <vector>

#include "base/json.h"
#include "base/status.h"

namespace dist {

namespace {

// The last byte is the layout's version: 2 since collective records carry changes.
constexpr char kMagic[8] = {'D', 'I', 'S', 'T', 'T', 'L', 'S', '2'};
enum RecordType : uint8_t { kText = 1, kString = 2, kEvent = 3, kCollective = 4 };
// An event's flags byte: the argument count, and this bit when it has detail.
constexpr uint8_t kHasDetail = 0x80;

// Names and JSON objects larger than this are not ones a timeline writes: a
// length beyond it means the file is damaged, not a record to allocate for.
constexpr uint32_t kLongestField = 64u << 20;

// Numbers as LEB128 varints (signed ones zigzagged first): most of an
// event's fields fit a byte or two.
uint8_t* put_varint(uint8_t* at, uint64_t value) {
  while (value >= 0x80) {
    *at++ = static_cast<uint8_t>(value | 0x80);
    value >>= 7;
  }
  *at++ = static_cast<uint8_t>(value);
  return at;
}

uint64_t zigzag(int64_t value) { return (static_cast<uint64_t>(value) << 1) ^ static_cast<uint64_t>(value >> 63); }
int64_t unzigzag(uint64_t value) { return static_cast<int64_t>(value >> 1) ^ -static_cast<int64_t>(value & 1); }

constexpr size_t kMostVarintBytes = 10;

// A record's fixed part is encoded here, then appended at once.
class RecordBytes {
 public:
  void byte(uint8_t value) { *at_++ = value; }
  void varint(uint64_t value) { at_ = put_varint(at_, value); }
  void signed_varint(int64_t value) { varint(zigzag(value)); }
  void append_to(std::string& out) const {
    out.append(reinterpret_cast<const char*>(bytes_), static_cast<size_t>(at_ - bytes_));
  }

 private:
  // An event's fields: type and flags, 5 varints, 3 per argument (more than
  // a collective's 14).
  uint8_t bytes_[2 + (5 + 3 * TimelineEvent::kMaxArgs) * kMostVarintBytes];
  uint8_t* at_ = bytes_;
};

void put_text(std::string& out, const char* data, size_t length) {
  RecordBytes header;
  header.varint(length);
  header.append_to(out);
  out.append(data, length);
}

// Formatting is most of what a conversion costs: events are written into a
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
  // Names need no escaping; this keeps one from breaking the JSON.
  void plain(const std::string& text) {
    for (char c : text) text_[used_++] = (c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20) ? '?' : c;
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
  void clear() { used_ = 0; }

 private:
  std::string& text_;
  size_t used_ = 0;
};

// Reads a spool through a buffer of its own; every read says whether the
// file still had the bytes (a spool cut short ends inside a record).
class SpoolReader {
 public:
  SpoolReader(std::FILE* file, const std::string& path) : file_(file), path_(path), buffer_(1 << 20) {}
  bool byte(uint8_t& value) {
    if (at_ == end_ && !refill()) return false;
    value = buffer_[at_++];
    return true;
  }
  bool varint(uint64_t& value) {
    value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      uint8_t b = 0;
      if (!byte(b)) return false;
      value |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return true;
    }
    fail_invalid("timeline spool " + dist::quoted(path_) + ": a number longer than 64 bits (the file is damaged)");
  }
  bool signed_varint(int64_t& value) {
    uint64_t raw = 0;
    if (!varint(raw)) return false;
    value = unzigzag(raw);
    return true;
  }
  bool id(uint32_t& value) {
    uint64_t raw = 0;
    if (!varint(raw)) return false;
    if (raw > UINT32_MAX) fail_invalid("timeline spool " + dist::quoted(path_) + ": a name id out of range (the file is damaged)");
    value = static_cast<uint32_t>(raw);
    return true;
  }
  bool text(std::string& text) {
    uint64_t length = 0;
    if (!varint(length)) return false;
    if (length > kLongestField) {
      fail_invalid("timeline spool " + dist::quoted(path_) + ": a field of " + std::to_string(length) +
                   " bytes (the file is damaged)");
    }
    text.resize(length);
    return bytes(text.data(), length);
  }
  bool bytes(void* to, size_t length) {
    for (size_t done = 0; done < length;) {
      if (at_ == end_ && !refill()) return false;
      const size_t n = std::min(end_ - at_, length - done);
      std::memcpy(static_cast<char*>(to) + done, &buffer_[at_], n);
      at_ += n;
      done += n;
    }
    return true;
  }

 private:
  bool refill() {
    at_ = 0;
    end_ = std::fread(buffer_.data(), 1, buffer_.size(), file_);
    return end_ > 0;
  }

  std::FILE* file_;
  const std::string& path_;
  std::vector<uint8_t> buffer_;
  size_t at_ = 0, end_ = 0;
};

// An event read from the spool, its names looked up (they point into the
// conversion's table of names, or are the collective's fixed keys).
struct SpooledEvent {
  const std::string* name = nullptr;
  const std::string* category = nullptr;
  uint32_t lane = 0;
  int64_t start_ns = 0, duration_ns = 0;
  int arg_count = 0;
  struct Arg {
    const std::string* key = nullptr;
    const std::string* text = nullptr;  // null: the argument is `number`
    int64_t number = 0;
  } args[TimelineEvent::kMaxArgs];
  std::string detail;

  void add(const std::string& key, int64_t number) { args[arg_count++] = Arg{&key, nullptr, number}; }
  void add(const std::string& key, const std::string& text) { args[arg_count++] = Arg{&key, &text, 0}; }
};

// Appends `e` as one trace event object.
void format_event(EventWriter& json, int32_t pid, const SpooledEvent& e) {
  size_t bound = 160 + e.name->size() + e.category->size();
  for (int i = 0; i < e.arg_count; ++i) {
    bound += 32 + e.args[i].key->size() + (e.args[i].text != nullptr ? e.args[i].text->size() : 0);
  }
  const std::string detail = e.detail.empty() ? std::string() : dump_json(Json(e.detail));
  json.reserve(bound + detail.size() + 16);
  json.literal("{\"name\":\"");
  json.plain(*e.name);
  json.literal("\",\"cat\":\"");
  json.plain(*e.category);
  json.literal("\",\"ph\":\"X\",\"pid\":");
  json.integer(pid);
  json.literal(",\"tid\":");
  json.integer(e.lane);
  json.literal(",\"ts\":");
  json.microseconds(e.start_ns);
  json.literal(",\"dur\":");
  json.microseconds(e.duration_ns < 0 ? 0 : e.duration_ns);
  json.literal(",\"args\":{");
  for (int i = 0; i < e.arg_count; ++i) {
    if (i > 0) json.character(',');
    json.character('"');
    json.plain(*e.args[i].key);
    json.literal("\":");
    if (e.args[i].text != nullptr) {
      json.character('"');
      json.plain(*e.args[i].text);
      json.character('"');
    } else {
      json.integer(e.args[i].number);
    }
  }
  if (!detail.empty()) {
    if (e.arg_count > 0) json.character(',');
    json.literal("\"detail\":");
    json.literal(detail.data(), detail.size());
  }
  json.literal("}}");
}

// What a collective record's event holds besides its fields.
struct CollectiveNames {
  const std::string category = "collective";
  const std::string none;
  const std::string comm = "comm", seq = "seq", dtype = "dtype", bytes = "bytes", path = "path",
                    algorithm = "algorithm", waiting = "waiting_ns", reducing = "reducing_ns",
                    moving = "moving_ns", status = "status";
};

struct FileCloser {
  void operator()(std::FILE* file) const { std::fclose(file); }
};

}  // namespace

void TimelineSpoolEncoder::begin(std::string& out, int32_t pid) {
  out.append(kMagic, sizeof kMagic);
  out.append(reinterpret_cast<const char*>(&pid), sizeof pid);
}

void TimelineSpoolEncoder::text(std::string& out, const std::string& json_object) {
  out.push_back(static_cast<char>(kText));
  put_text(out, json_object.data(), json_object.size());
}

uint32_t TimelineSpoolEncoder::intern(std::string& out, const char* name) {
  if (name == nullptr) return 0;
  auto found = ids_.find(name);
  if (found == ids_.end()) {
    found = ids_.emplace(name, static_cast<uint32_t>(ids_.size() + 1)).first;
    RecordBytes header;
    header.byte(kString);
    header.varint(found->second);
    header.append_to(out);
    put_text(out, name, std::strlen(name));
  }
  return found->second;
}

uint32_t TimelineSpoolEncoder::id_at(std::string& out, Remembered& place, const char* name) {
  // Events of one kind come in runs with the same names in the same
  // places: each place remembers its last name, and only a new one is looked up.
  if (place.name != name) place = Remembered{name, intern(out, name)};
  return place.id;
}

void TimelineSpoolEncoder::event(std::string& out, const TimelineEvent& e) {
  // Names first: a string record must precede the event that uses it.
  uint32_t keys[TimelineEvent::kMaxArgs];
  uint32_t texts[TimelineEvent::kMaxArgs];
  const uint32_t name = id_at(out, last_name_, e.name);
  const uint32_t category = id_at(out, last_category_, e.category);
  for (int i = 0; i < e.arg_count; ++i) {
    keys[i] = id_at(out, last_keys_[i], e.args[i].key);
    texts[i] = e.args[i].text == nullptr ? 0 : id_at(out, last_texts_[i], e.args[i].text);
  }
  RecordBytes record;
  record.byte(kEvent);
  record.byte(static_cast<uint8_t>(e.arg_count | (e.detail.empty() ? 0 : kHasDetail)));
  record.varint(name);
  record.varint(category);
  record.varint(e.lane);
  // Starts as the change from the previous event's: a few bytes, not eight.
  record.signed_varint(e.start_ns - last_start_ns_);
  last_start_ns_ = e.start_ns;
  record.signed_varint(e.duration_ns);
  for (int i = 0; i < e.arg_count; ++i) {
    record.varint(keys[i]);
    record.varint(texts[i]);
    if (texts[i] == 0) record.signed_varint(e.args[i].number);
  }
  record.append_to(out);
  if (!e.detail.empty()) put_text(out, e.detail.data(), e.detail.size());
}

void TimelineSpoolEncoder::collective(std::string& out, const TimelineCollective& c) {
  using F = SpooledCollective;
  SpooledCollective now;
  now.fields[F::kKind] = id_at(out, last_kind_, c.kind);
  now.fields[F::kDtype] = id_at(out, last_dtype_, c.dtype);
  now.fields[F::kPath] = id_at(out, last_path_, c.path);
  now.fields[F::kAlgorithm] = id_at(out, last_algorithm_, c.algorithm);
  now.fields[F::kStatus] = id_at(out, last_status_, c.status);
  now.fields[F::kLane] = c.lane;
  now.fields[F::kComm] = c.comm;
  now.fields[F::kBytes] = c.bytes;
  uint8_t changes = 0;
  for (int i = 0; i < F::kFieldCount; ++i) {
    if (now.fields[i] != last_collective_.fields[i]) changes |= static_cast<uint8_t>(1u << i);
  }
  RecordBytes record;
  record.byte(kCollective);
  record.byte(changes);
  for (int i = 0; i < F::kFieldCount; ++i) {
    if ((changes & (1u << i)) != 0) record.varint(now.fields[i]);
  }
  record.signed_varint(static_cast<int64_t>(c.seq - (last_collective_.seq + 1)));
  record.signed_varint(c.start_ns - last_start_ns_);
  last_start_ns_ = c.start_ns;
  record.signed_varint(c.duration_ns);
  record.signed_varint(c.waiting_ns);
  record.signed_varint(c.reducing_ns);
  record.signed_varint(c.moving_ns);
  record.append_to(out);
  now.seq = c.seq;
  last_collective_ = now;
}

SpoolConversion convert_timeline_spool(const std::string& spool_path, TraceSink write) {
  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(spool_path.c_str(), "rb"));
  if (file == nullptr) {
    fail_invalid("timeline spool: cannot read " + dist::quoted(spool_path) + ": " + std::strerror(errno));
  }
  char magic[sizeof kMagic];
  int32_t pid = 0;
  const bool has_magic = std::fread(magic, sizeof magic, 1, file.get()) == 1;
  if (has_magic && std::memcmp(magic, kMagic, sizeof kMagic - 1) == 0 && magic[sizeof kMagic - 1] != kMagic[sizeof kMagic - 1]) {
    fail_invalid("timeline spool: " + dist::quoted(spool_path) + " has layout " + std::string(1, magic[sizeof kMagic - 1]) +
                 "; this build reads layout " + std::string(1, kMagic[sizeof kMagic - 1]) +
                 " (convert it with the dist-info of the build that wrote it)");
  }
  if (!has_magic || std::memcmp(magic, kMagic, sizeof kMagic) != 0 || std::fread(&pid, sizeof pid, 1, file.get()) != 1) {
    fail_invalid("timeline spool: " + dist::quoted(spool_path) + " is not a libdistribute timeline spool");
  }
  auto damaged = [&](const std::string& what) {
    fail_invalid("timeline spool " + dist::quoted(spool_path) + ": " + what + " (the file is damaged)");
  };
  SpoolReader in(file.get(), spool_path);
  // A deque: the names an event points to stay where they are as more come.
  std::deque<std::string> strings(1);  // id 0: none
  const CollectiveNames fixed;
  auto string_of = [&](uint32_t id) -> const std::string& {
    if (id == 0 || id >= strings.size()) damaged("string " + std::to_string(id) + " is used before it is named");
    return strings[id];
  };
  std::string text, field;
  EventWriter json(text);
  SpoolConversion conversion;
  bool first = true;
  auto separate = [&] {
    json.reserve(2);
    if (!first) json.literal(",\n");
    first = false;
  };
  auto drain = [&](bool always) {
    if (!always && json.used() < (1u << 20)) return;
    write(text.data(), json.used());
    json.clear();
  };
  json.reserve(2);
  json.literal("[\n");
  int64_t last_start_ns = 0;
  SpooledCollective last_collective;  // what a collective record's changes apply to
  for (;;) {
    uint8_t type = 0;
    if (!in.byte(type)) break;
    bool whole = true;
    if (type == kText) {
      whole = in.text(field);
      if (whole) {
        separate();
        json.reserve(field.size());
        json.literal(field.data(), field.size());
      }
    } else if (type == kString) {
      uint32_t id = 0;
      whole = in.id(id) && in.text(field);
      if (whole) {
        if (id != strings.size()) damaged("string " + std::to_string(id) + " is out of order");
        strings.push_back(field);
      }
    } else if (type == kEvent) {
      SpooledEvent e;
      uint8_t flags = 0;
      uint32_t name = 0, category = 0;
      int64_t start_change = 0;
      whole = in.byte(flags) && in.id(name) && in.id(category) && in.id(e.lane) && in.signed_varint(start_change) &&
              in.signed_varint(e.duration_ns);
      const int arg_count = flags & ~kHasDetail;
      if (whole && arg_count > TimelineEvent::kMaxArgs) {
        damaged("an event with " + std::to_string(arg_count) + " arguments");
      }
      for (int i = 0; whole && i < arg_count; ++i) {
        uint32_t key = 0, text = 0;
        int64_t number = 0;
        whole = in.id(key) && in.id(text) && (text != 0 || in.signed_varint(number));
        if (!whole) break;
        if (text != 0) {
          e.add(string_of(key), string_of(text));
        } else {
          e.add(string_of(key), number);
        }
      }
      if (whole && (flags & kHasDetail) != 0) whole = in.text(e.detail);
      if (whole) {
        e.name = &string_of(name);
        e.category = &string_of(category);
        e.start_ns = last_start_ns + start_change;
        last_start_ns = e.start_ns;
        separate();
        format_event(json, pid, e);
        ++conversion.events;
      }
    } else if (type == kCollective) {
      using F = SpooledCollective;
      SpooledCollective& c = last_collective;
      uint8_t changes = 0;
      whole = in.byte(changes);
      for (int i = 0; whole && i < F::kFieldCount; ++i) {
        if ((changes & (1u << i)) != 0) whole = in.varint(c.fields[i]);
      }
      int64_t seq_change = 0, start_change = 0;
      whole = whole && in.signed_varint(seq_change) && in.signed_varint(start_change) &&
              in.signed_varint(c.duration_ns) && in.signed_varint(c.waiting_ns) && in.signed_varint(c.reducing_ns) &&
              in.signed_varint(c.moving_ns);
      if (whole) {
        for (int field : {F::kKind, F::kDtype, F::kPath, F::kAlgorithm, F::kStatus, F::kLane, F::kComm}) {
          if (c.fields[field] > UINT32_MAX) damaged("a collective's field " + std::to_string(field) + " out of range");
        }
        c.seq += 1 + static_cast<uint64_t>(seq_change);
        c.start_ns = last_start_ns + start_change;
        last_start_ns = c.start_ns;
        auto id = [&](int field) { return static_cast<uint32_t>(c.fields[field]); };
        SpooledEvent e;
        e.name = &string_of(id(F::kKind));
        e.category = &fixed.category;
        e.lane = id(F::kLane);
        e.start_ns = c.start_ns;
        e.duration_ns = c.duration_ns;
        e.add(fixed.comm, static_cast<int64_t>(c.fields[F::kComm]));
        e.add(fixed.seq, static_cast<int64_t>(c.seq));
        e.add(fixed.dtype, string_of(id(F::kDtype)));
        e.add(fixed.bytes, static_cast<int64_t>(c.fields[F::kBytes]));
        e.add(fixed.path, string_of(id(F::kPath)));
        e.add(fixed.algorithm, id(F::kAlgorithm) == 0 ? fixed.none : string_of(id(F::kAlgorithm)));
        e.add(fixed.waiting, c.waiting_ns);
        e.add(fixed.reducing, c.reducing_ns);
        e.add(fixed.moving, c.moving_ns);
        if (id(F::kStatus) != 0) e.add(fixed.status, string_of(id(F::kStatus)));
        separate();
        format_event(json, pid, e);
        ++conversion.events;
      }
    } else {
      damaged("a record of unknown type " + std::to_string(type));
    }
    if (!whole) {
      conversion.cut_short = true;
      break;
    }
    drain(false);
  }
  json.reserve(3);
  json.literal("\n]\n");
  drain(true);
  return conversion;
}

}  // namespace dist
