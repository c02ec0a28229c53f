// Which strategy's merge call the current thread is running, if any: a merge
// function runs in cross-replica context while its run() is still active.
#pragma once

namespace dist {

class Strategy;

// True while this thread runs a merge function of `strategy`.
bool in_merge_call(const Strategy& strategy);

// Marks the current thread as running a merge function of `strategy` for the
// scope's lifetime (scopes nest).
class MergeScope {
 public:
  explicit MergeScope(const Strategy& strategy);
  ~MergeScope();
  MergeScope(const MergeScope&) = delete;
  MergeScope& operator=(const MergeScope&) = delete;

 private:
  const Strategy* previous_;
};

}  // namespace dist
