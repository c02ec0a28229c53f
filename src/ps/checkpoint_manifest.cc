#include "ps/checkpoint_manifest.h"

#include <sys/stat.h>

#include "base/atomic_file.h"
#include "base/json.h"
#include "base/status.h"

namespace dist::ps {
namespace {

constexpr const char* kFormat = "libdistribute-checkpoint";
constexpr size_t kMaxManifestBytes = 64 << 20;

bool safe_file_name(const std::string& name) {
  if (name.empty() || name == "." || name == "..") return false;
  for (char c : name) {
    if (c == '/' || c == '\0') return false;
  }
  return true;
}

bool is_hex_digest(const std::string& text) {
  if (text.size() != 64) return false;
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

}  // namespace

std::string checkpoint_directory_name(int64_t step) { return "ckpt-" + std::to_string(step); }

void write_manifest(const std::string& directory, const CheckpointManifest& manifest) {
  Json shards = Json::array();
  for (const ShardFileSummary& shard : manifest.shards) {
    shards.push_back({{"file", shard.file}, {"bytes", shard.bytes}, {"sha256", shard.sha256}, {"entries", shard.entries}});
  }
  Json document = {{"format", kFormat}, {"version", 1}, {"step", manifest.step}, {"shards", shards}};
  write_file_atomically(directory + "/manifest.json", document.dump(2) + "\n");
}

CheckpointManifest read_manifest(const std::string& directory) {
  const std::string path = directory + "/manifest.json";
  const std::string what = "checkpoint manifest '" + path + "'";
  Json document = parse_json(read_small_file(path, kMaxManifestBytes), what);
  auto bad = [&](const std::string& problem) { fail_invalid(what + ": " + problem); };
  if (!document.is_object() || document.value("format", "") != kFormat) bad("not a libdistribute checkpoint manifest");
  if (!document.contains("version") || document["version"] != 1) bad("unknown manifest version");
  if (!document.contains("step") || !document["step"].is_number_integer()) bad("'step' is missing or not an integer");
  if (!document.contains("shards") || !document["shards"].is_array()) bad("'shards' is missing or not a list");
  CheckpointManifest manifest;
  manifest.step = document["step"].get<int64_t>();
  for (const Json& shard : document["shards"]) {
    if (!shard.is_object() || !shard.contains("file") || !shard["file"].is_string() || !shard.contains("bytes") ||
        !shard["bytes"].is_number_unsigned() || !shard.contains("sha256") || !shard["sha256"].is_string()) {
      bad("a shard entry lacks 'file', 'bytes' or 'sha256'");
    }
    ShardFileSummary summary;
    summary.file = shard["file"].get<std::string>();
    summary.bytes = shard["bytes"].get<uint64_t>();
    summary.sha256 = shard["sha256"].get<std::string>();
    if (!safe_file_name(summary.file)) bad("shard file name " + dist::quoted(summary.file) + " is not a plain file name");
    if (!is_hex_digest(summary.sha256)) bad("the sha256 of " + summary.file + " is not 64 hex digits");
    manifest.shards.push_back(summary);
  }
  return manifest;
}

void write_latest(const std::string& root, const std::string& name) {
  write_file_atomically(root + "/LATEST", name + "\n");
}

std::string latest_checkpoint(const std::string& root) {
  struct stat info {};
  const std::string path = root + "/LATEST";
  if (::stat(path.c_str(), &info) != 0) return "";
  std::string name = read_small_file(path, 4096);
  while (!name.empty() && (name.back() == '\n' || name.back() == '\r')) name.pop_back();
  if (!safe_file_name(name)) fail_invalid("'" + path + "' does not name a checkpoint directory");
  return root + "/" + name;
}

}  // namespace dist::ps
