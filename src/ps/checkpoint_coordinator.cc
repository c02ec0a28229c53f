#include "ps/checkpoint_coordinator.h"

#include "base/atomic_file.h"
#include "base/json.h"
#include "ps/checkpoint_manifest.h"
#include "ps/checkpoint_reader.h"

namespace dist::ps {

std::string save_checkpoint(PsClient& client, const std::string& root, int64_t step) {
  if (step < 0) fail_invalid("checkpoint: step " + std::to_string(step) + " is negative");
  make_directories(root);
  const std::string directory = root + "/" + checkpoint_directory_name(step);
  make_directories(directory);
  std::vector<PsRequestPtr> requests;
  for (int s = 0; s < client.num_servers(); ++s) requests.push_back(client.save(s, directory, s, client.num_servers()));
  client.wait(requests);
  CheckpointManifest manifest;
  manifest.step = step;
  for (const PsRequestPtr& request : requests) {
    const std::vector<uint8_t>& bytes = request->response();
    Json reply = parse_json(std::string(bytes.begin(), bytes.end()), "save reply of " + client.server(request->server()).name);
    ShardFileSummary summary;
    summary.file = reply.value("file", "");
    summary.bytes = reply.value("bytes", uint64_t{0});
    summary.sha256 = reply.value("sha256", "");
    summary.entries = reply.value("entries", size_t{0});
    manifest.shards.push_back(summary);
  }
  write_manifest(directory, manifest);
  // Checked as a restore would, before LATEST may point at it.
  CheckpointReader verify(directory);
  write_latest(root, checkpoint_directory_name(step));
  return directory;
}

std::string restore_checkpoint(PsClient& client, const std::string& root_or_directory) {
  std::string directory = latest_checkpoint(root_or_directory);
  if (directory.empty()) directory = root_or_directory;
  // Verified here first, so a corrupt checkpoint is refused before any server
  // changes a value (each server verifies it again for itself).
  CheckpointReader verify(directory);
  std::vector<PsRequestPtr> requests;
  for (int s = 0; s < client.num_servers(); ++s) requests.push_back(client.restore(s, directory));
  client.wait(requests);
  return directory;
}

}  // namespace dist::ps
