// Who holds a stalled call up, in words, from where each member says it is
// (Context::query_progress): "worker:3 is at all_reduce #1041 on comm 0 while
// worker:0-2 wait at #1042". What a stall warning and a timeout's message say.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "transport/call_progress.h"

namespace dist {

// names[i] and progress[i] are member i's; `seq` is the call that waits.
// "" when every member has reached the call (the holdup is not a late rank).
std::string describe_behind(const std::vector<std::string>& names, const std::vector<MemberProgress>& progress,
                            uint64_t seq, uint32_t comm_id);

// "worker:0-2, chief:0": consecutive task ids of one job as a range.
std::string compress_task_names(const std::vector<std::string>& names);

}  // namespace dist
