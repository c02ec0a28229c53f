// dist-info timeline merge: the ranks' timelines (base/timeline.h) as one
// trace; dist-info timeline convert: the trace in a spool a rank left behind
// (base/timeline_spool.h). Ranks on one host share the steady clock and need nothing; another
// host's clock is moved by the median, over the collectives both hosts' ranks
// ran, of how much later the first rank ended each one than that host's ranks
// (a collective ends within microseconds on every rank: its last message
// arrives everywhere at about once). Without a common collective, the hosts'
// wall clocks (written beside the steady clock in each file) place them.
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <glob.h>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "base/atomic_file.h"
#include "base/json.h"
#include "base/status.h"
#include "base/timeline_spool.h"
#include "commands.h"

namespace dist::info {

namespace {

constexpr const char* kUsage =
    "usage: dist-info timeline merge PREFIX [--output FILE]\n"
    "       dist-info timeline merge FILE... --output FILE\n"
    "       dist-info timeline convert SPOOL [--output FILE]\n"
    "  merge: the ranks' timelines (PREFIX.<rank>.json, as DIST_TIMELINE=PREFIX\n"
    "  writes them) as one Chrome trace (PREFIX.json by default), each host's\n"
    "  clock aligned with the first rank's; a rank that died before closing its\n"
    "  timeline left PREFIX.<rank>.json.spool, which is read in its place.\n"
    "  convert: a spool as the trace its rank would have written (FILE.json for\n"
    "  FILE.json.spool by default)\n";

bool is_spool(const std::string& path) {
  const size_t n = std::strlen(kTimelineSpoolSuffix);
  return path.size() > n && path.compare(path.size() - n, n, kTimelineSpoolSuffix) == 0;
}

// A spool's trace, as its rank would have written it.
std::string trace_of_spool(const std::string& path) {
  std::string text;
  auto append = [&](const char* data, size_t size) { text.append(data, size); };
  const SpoolConversion conversion = convert_timeline_spool(path, append);
  if (conversion.cut_short) {
    std::fprintf(stderr, "dist-info: %s ends inside a record (its rank stopped while writing); %zu whole events read\n",
                 path.c_str(), conversion.events);
  }
  return text;
}

struct RankTimeline {
  std::string path;
  Json events;  // the array
  int rank = -1;
  std::string host_id;
  int64_t steady_ns = 0;
  int64_t system_ns = 0;
};

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail_invalid("timeline merge: cannot read " + dist::quoted(path) + ": " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A rank that stopped without closing its file leaves the array open (the
// trace format allows it); the events before are whole.
Json parse_events(const std::string& path) {
  std::string text = is_spool(path) ? trace_of_spool(path) : read_file(path);
  Json events = Json::parse(text, nullptr, false);
  if (events.is_discarded()) {
    while (!text.empty() && (text.back() == ',' || std::isspace(static_cast<unsigned char>(text.back())))) text.pop_back();
    events = Json::parse(text + "\n]", nullptr, false);
  }
  if (events.is_discarded() || !events.is_array()) {
    fail_invalid("timeline merge: " + dist::quoted(path) + " is not a timeline (a JSON array of trace events)");
  }
  return events;
}

RankTimeline load(const std::string& path) {
  RankTimeline t;
  t.path = path;
  t.events = parse_events(path);
  for (const Json& e : t.events) {
    if (!e.is_object() || e.value("ph", "") != "M" || e.value("name", "") != "libdistribute") continue;
    const Json& args = e.at("args");
    t.rank = args.at("rank").get<int>();
    t.host_id = args.at("host_id").get<std::string>();
    t.steady_ns = args.at("steady_ns").get<int64_t>();
    t.system_ns = args.at("system_ns").get<int64_t>();
    return t;
  }
  fail_invalid("timeline merge: " + dist::quoted(path) + " has no libdistribute metadata (not written by libdistribute?)");
}

// (comm, seq) -> when the call ended, in ns of the file's clock.
std::map<std::pair<int64_t, int64_t>, double> collective_ends(const RankTimeline& t) {
  std::map<std::pair<int64_t, int64_t>, double> ends;
  for (const Json& e : t.events) {
    if (!e.is_object() || e.value("cat", "") != "collective" || e.value("ph", "") != "X") continue;
    const Json& args = e.at("args");
    if (args.contains("status")) continue;  // a failed call ends when its rank notices
    const double end_us = e.at("ts").get<double>() + e.at("dur").get<double>();
    ends[{args.at("comm").get<int64_t>(), args.at("seq").get<int64_t>()}] = end_us * 1000.0;
  }
  return ends;
}

struct HostOffset {
  double ns = 0;
  std::string how;  // "same host", "collectives (N)", "wall clock"
};

HostOffset offset_of_host(const RankTimeline& reference, const std::vector<const RankTimeline*>& host) {
  const auto reference_ends = collective_ends(reference);
  std::vector<double> differences;
  for (const RankTimeline* t : host) {
    for (const auto& [call, end] : collective_ends(*t)) {
      auto found = reference_ends.find(call);
      if (found != reference_ends.end()) differences.push_back(found->second - end);
    }
  }
  HostOffset offset;
  if (differences.empty()) {
    // Wall clocks: the same moment in both files, read through each clock.
    const RankTimeline& t = *host.front();
    offset.ns = static_cast<double>((t.system_ns - t.steady_ns) - (reference.system_ns - reference.steady_ns));
    offset.how = "wall clock";
    return offset;
  }
  std::nth_element(differences.begin(), differences.begin() + differences.size() / 2, differences.end());
  offset.ns = differences[differences.size() / 2];
  offset.how = "collectives (" + std::to_string(differences.size()) + ")";
  return offset;
}

// Only "<prefix>.<rank>.json" and "<prefix>.pid<PID>.json".
bool is_rank_file(const std::string& prefix, const std::string& path) {
  if (path.size() < prefix.size() + 6) return false;
  const std::string middle = path.substr(prefix.size() + 1, path.size() - prefix.size() - 6);
  const std::string digits = middle.rfind("pid", 0) == 0 ? middle.substr(3) : middle;
  return !digits.empty() && digits.find_first_not_of("0123456789") == std::string::npos;
}

std::vector<std::string> files_of_prefix(const std::string& prefix) {
  glob_t found{};
  const std::string pattern = prefix + ".*.json";
  std::vector<std::string> files;
  if (glob(pattern.c_str(), 0, nullptr, &found) == 0) {
    for (size_t i = 0; i < found.gl_pathc; ++i) {
      const std::string path = found.gl_pathv[i];
      if (is_rank_file(prefix, path)) files.push_back(path);
    }
  }
  globfree(&found);
  // The spools of ranks that never wrote their file.
  const std::string spools = pattern + kTimelineSpoolSuffix;
  glob_t spooled{};
  if (glob(spools.c_str(), 0, nullptr, &spooled) == 0) {
    for (size_t i = 0; i < spooled.gl_pathc; ++i) {
      const std::string path = spooled.gl_pathv[i];
      const std::string trace = path.substr(0, path.size() - std::strlen(kTimelineSpoolSuffix));
      if (std::find(files.begin(), files.end(), trace) == files.end() && is_rank_file(prefix, trace)) {
        files.push_back(path);
      }
    }
  }
  globfree(&spooled);
  if (files.empty()) fail_invalid("timeline merge: no files " + dist::quoted(pattern));
  return files;
}

// A subcommand's files and its --output (-o), the only flag either takes.
struct FilesAndOutput {
  std::vector<std::string> files;
  std::string output;
};

FilesAndOutput files_and_output(const Args& args, const std::string& command) {
  FilesAndOutput parsed;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--output" || args[i] == "-o") {
      if (i + 1 >= args.size()) fail_invalid(args[i] + " needs a file");
      parsed.output = args[++i];
    } else if (args[i].rfind("-", 0) == 0) {
      fail_invalid("timeline " + command + ": unknown flag " + dist::quoted(args[i]) + "\n" + kUsage);
    } else {
      parsed.files.push_back(args[i]);
    }
  }
  return parsed;
}

int merge(const Args& args) {
  FilesAndOutput parsed = files_and_output(args, "merge");
  std::vector<std::string>& inputs = parsed.files;
  std::string& output = parsed.output;
  if (inputs.empty()) fail_invalid(std::string("timeline merge: no timelines given\n") + kUsage);
  struct stat st{};
  if (inputs.size() == 1 && stat(inputs[0].c_str(), &st) != 0) {
    const std::string prefix = inputs[0];
    inputs = files_of_prefix(prefix);
    if (output.empty()) output = prefix + ".json";
  }
  if (output.empty()) fail_invalid("timeline merge: --output is needed when files are named");

  std::vector<RankTimeline> ranks;
  for (const std::string& path : inputs) ranks.push_back(load(path));
  std::sort(ranks.begin(), ranks.end(), [](const RankTimeline& a, const RankTimeline& b) { return a.rank < b.rank; });
  for (size_t i = 1; i < ranks.size(); ++i) {
    if (ranks[i].rank == ranks[i - 1].rank && ranks[i].host_id == ranks[i - 1].host_id &&
        ranks[i].steady_ns == ranks[i - 1].steady_ns) {
      fail_invalid("timeline merge: " + dist::quoted(ranks[i - 1].path) + " and " + dist::quoted(ranks[i].path) +
                   " are the same rank's timeline");
    }
  }
  const RankTimeline& reference = ranks.front();
  std::map<std::string, std::vector<const RankTimeline*>> hosts;
  for (const RankTimeline& t : ranks) hosts[t.host_id].push_back(&t);
  std::map<std::string, HostOffset> offsets;
  for (const auto& [host, members] : hosts) {
    offsets[host] = host == reference.host_id ? HostOffset{0, "same host"} : offset_of_host(reference, members);
  }

  Json merged = Json::array();
  Json alignment = Json::array();
  for (const RankTimeline& t : ranks) {
    const HostOffset& offset = offsets[t.host_id];
    alignment.push_back({{"file", t.path}, {"rank", t.rank}, {"host_id", t.host_id},
                         {"offset_us", offset.ns / 1000.0}, {"aligned_by", offset.how}});
    for (Json e : t.events) {
      if (e.is_object() && e.contains("ts") && e.at("ts").is_number()) {
        e["ts"] = e.at("ts").get<double>() + offset.ns / 1000.0;
      }
      merged.push_back(std::move(e));
    }
  }
  merged.push_back({{"name", "libdistribute merge"}, {"ph", "M"}, {"pid", reference.rank}, {"tid", 0},
                    {"args", {{"ranks", alignment}}}});
  write_file_atomically(output, dump_json(merged) + "\n");
  std::printf("%s: %zu ranks on %zu host%s\n", output.c_str(), ranks.size(), hosts.size(), hosts.size() == 1 ? "" : "s");
  for (const Json& a : alignment) {
    std::printf("  rank %d %s: %+.3f us (%s)\n", a["rank"].get<int>(), a["file"].get<std::string>().c_str(),
                a["offset_us"].get<double>(), a["aligned_by"].get<std::string>().c_str());
  }
  return 0;
}

int convert(const Args& args) {
  FilesAndOutput parsed = files_and_output(args, "convert");
  if (parsed.files.size() > 1) {
    fail_invalid("timeline convert: one spool at a time (" + dist::quoted(parsed.files[0]) + ", " +
                 dist::quoted(parsed.files[1]) + ")");
  }
  const std::string spool = parsed.files.empty() ? std::string() : parsed.files[0];
  std::string& output = parsed.output;
  if (spool.empty()) fail_invalid(std::string("timeline convert: no spool given\n") + kUsage);
  if (output.empty()) {
    if (!is_spool(spool)) fail_invalid("timeline convert: --output is needed when the spool's name does not end in .spool");
    output = spool.substr(0, spool.size() - std::strlen(kTimelineSpoolSuffix));
  }
  write_file_atomically(output, trace_of_spool(spool));
  std::printf("%s: the trace of %s\n", output.c_str(), spool.c_str());
  return 0;
}

}  // namespace

int timeline_command(const Args& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    std::fputs(kUsage, args.empty() ? stderr : stdout);
    return args.empty() ? 2 : 0;
  }
  if (args[0] == "merge") return merge(Args(args.begin() + 1, args.end()));
  if (args[0] == "convert") return convert(Args(args.begin() + 1, args.end()));
  fail_invalid("timeline: unknown subcommand " + dist::quoted(args[0]) + "\n" + kUsage);
}

}  // namespace dist::info
