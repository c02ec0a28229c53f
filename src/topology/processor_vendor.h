// Whose processor this is, where the fastest way to copy memory depends on it
// (collectives/shm/memory_copy.h).
#pragma once

namespace dist {

// Whether this process runs on an AMD processor (x86 CPUID; false elsewhere).
// Read once; every rank of a host sees the same.
bool processor_is_amd();

}  // namespace dist
