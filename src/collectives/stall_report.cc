#include "collectives/stall_report.h"

#include <map>

#include "collectives/signature.h"

namespace dist {

namespace {

// Where one member is, as the message puts it, and whether that is behind `seq`.
struct Place {
  std::string text;
  bool behind = false;
};

Place place_of(const MemberProgress& p, uint64_t seq) {
  if (!p.answered) return {"did not answer", true};
  if (p.started > p.finished) {
    const uint64_t current = p.started - 1;
    const char* kind = p.kind >= 0 ? name(static_cast<CollectiveKind>(p.kind)) : "a call";
    return {std::string(kind) + " #" + std::to_string(current), current < seq};
  }
  if (p.finished == 0) return {"before its first call", seq > 0};
  if (p.finished <= seq) return {"between calls (done with #" + std::to_string(p.finished - 1) + ")", true};
  return {"past #" + std::to_string(seq), false};
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

std::string joined(const std::vector<std::string>& names) { return compress_task_names(names); }

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
  // Members grouped by where they are, in member order within each group.
  std::map<std::string, std::vector<std::string>> behind, waiting;
  std::vector<std::string> behind_order;
  for (size_t i = 0; i < names.size() && i < progress.size(); ++i) {
    const Place place = place_of(progress[i], seq);
    if (place.behind) {
      if (behind.count(place.text) == 0) behind_order.push_back(place.text);
      behind[place.text].push_back(names[i]);
    } else {
      waiting["#" + std::to_string(seq)].push_back(names[i]);
    }
  }
  if (behind.empty()) return "";
  std::string out;
  for (const std::string& where : behind_order) {
    const std::vector<std::string>& who = behind[where];
    if (!out.empty()) out += "; ";
    const bool plural = who.size() > 1;
    const bool is_state = where == "did not answer" || where.rfind("before", 0) == 0 || where.rfind("between", 0) == 0;
    out += joined(who) + (is_state ? (where == "did not answer" ? " " : (plural ? " are " : " is ")) : (plural ? " are at " : " is at ")) + where;
  }
  out += " on comm " + std::to_string(comm_id);
  const auto& at_call = waiting["#" + std::to_string(seq)];
  if (!at_call.empty()) out += " while " + joined(at_call) + (at_call.size() > 1 ? " wait" : " waits") + " at #" + std::to_string(seq);
  return out;
}

}  // namespace dist
