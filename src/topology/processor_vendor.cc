#include "topology/processor_vendor.h"

namespace dist {

bool processor_is_amd() {
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
  static const bool amd = [] {
    __builtin_cpu_init();  // may run before the runtime's own constructor
    return __builtin_cpu_is("amd") != 0;
  }();
  return amd;
#else
  return false;
#endif
}

}  // namespace dist
