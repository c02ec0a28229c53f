#include "collectives/stall_report.h"

#include <algorithm>

#include "collectives/signature.h"

namespace dist {

namespace {

// Where one member is, as the message puts it ("is at all_reduce #4", "are
// between calls ...", "did not answer"), and whether that is behind `seq`.
struct Place {
  const char* one;   // the verb for one member
  const char* many;  // for several
  std::string what;
  bool behind;
  std::string words(size_t members) const { return (members > 1 ? many : one) + what; }
};

Place place_of(const MemberProgress& p, uint64_t seq) {
  if (!p.answered) return {"", "", "did not answer", true};
  if (p.started > p.finished) {
    const uint64_t current = p.started - 1;
    const char* kind = p.kind >= 0 ? name(static_cast<CollectiveKind>(p.kind)) : "a call";
    return {"is at ", "are at ", std::string(kind) + " #" + std::to_string(current), current < seq};
  }
  if (p.finished == 0) return {"is ", "are ", "before its first call", seq > 0};
  if (p.finished <= seq) return {"is ", "are ", "between calls (done with #" + std::to_string(p.finished - 1) + ")", true};
  return {"is ", "are ", "past #" + std::to_string(seq), false};
}

bool parse_task(const std::string& name, std::string* job, long* index) {
  const size_t colon = name.rfind(':');
  if (colon == std::string::npos || colon + 1 >= name.size()) return false;
  const std::string digits = name.substr(colon + 1);
  if (digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 9) return false;
  *job = name.substr(0, colon);
  *index = std::stol(digits);
  return true;
}

}  // namespace

std::string compress_task_names(const std::vector<std::string>& names) {
  std::string out;
  size_t i = 0;
  while (i < names.size()) {
    std::string job, next_job;
    long first = 0, last = 0, next = 0;
    size_t j = i + 1;
    if (parse_task(names[i], &job, &first)) {
      last = first;
      while (j < names.size() && parse_task(names[j], &next_job, &next) && next_job == job && next == last + 1) {
        last = next;
        ++j;
      }
    }
    if (!out.empty()) out += ", ";
    out += j - i >= 3 ? job + ":" + std::to_string(first) + "-" + std::to_string(last) : names[i];
    if (j - i == 2) out += ", " + names[i + 1];
    i = j;
  }
  return out;
}

std::string describe_behind(const std::vector<std::string>& names, const std::vector<MemberProgress>& progress,
                            uint64_t seq, uint32_t comm_id) {
  // The late members grouped by where they are (groups in the order met,
  // members in member order), and the others.
  std::vector<std::pair<Place, std::vector<std::string>>> behind;
  std::vector<std::string> waiting;
  for (size_t i = 0; i < names.size() && i < progress.size(); ++i) {
    const Place place = place_of(progress[i], seq);
    if (!place.behind) {
      waiting.push_back(names[i]);
      continue;
    }
    auto group = std::find_if(behind.begin(), behind.end(), [&](const auto& g) { return g.first.what == place.what; });
    if (group == behind.end()) group = behind.insert(behind.end(), {place, {}});
    group->second.push_back(names[i]);
  }
  if (behind.empty()) return "";
  std::string out;
  for (const auto& [place, who] : behind) {
    if (!out.empty()) out += "; ";
    out += compress_task_names(who) + " " + place.words(who.size());
  }
  out += " on comm " + std::to_string(comm_id);
  if (!waiting.empty()) {
    out += " while " + compress_task_names(waiting) + (waiting.size() > 1 ? " wait" : " waits") + " at #" + std::to_string(seq);
  }
  return out;
}

}  // namespace dist
