#include "strategy/merge_scope.h"

namespace dist {
namespace {

thread_local const Strategy* merging = nullptr;

}  // namespace

bool in_merge_call(const Strategy& strategy) { return merging == &strategy; }

MergeScope::MergeScope(const Strategy& strategy) : previous_(merging) { merging = &strategy; }

MergeScope::~MergeScope() { merging = previous_; }

}  // namespace dist
