// The id of shard `part` of a variable: a 64-bit FNV-1a hash of its name and
// part number, so every worker derives the same id without asking anyone.
#pragma once

#include <cstdint>
#include <string>

namespace dist::ps {

inline uint64_t variable_shard_id(const std::string& name, uint32_t part) {
  uint64_t hash = 1469598103934665603ull;
  auto mix = [&hash](uint8_t byte) {
    hash ^= byte;
    hash *= 1099511628211ull;
  };
  for (char c : name) mix(static_cast<uint8_t>(c));
  mix(0);
  for (int shift = 0; shift < 32; shift += 8) mix(static_cast<uint8_t>(part >> shift));
  return hash;
}

}  // namespace dist::ps
