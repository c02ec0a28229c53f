// Saving and restoring a checkpoint of every parameter server, driven from one
// place (the chief, or any worker): every server writes its own shard file in
// parallel, then the coordinator writes the manifest with their checksums,
// then LATEST. A crash at any point leaves LATEST naming the previous complete
// checkpoint.
#pragma once

#include <cstdint>
#include <string>

#include "ps/client.h"

namespace dist::ps {

// Saves into <root>/ckpt-<step>; returns that directory. The root must be a
// directory every server and the coordinator see (a shared file system).
std::string save_checkpoint(PsClient& client, const std::string& root, int64_t step);

// Verifies <directory> (or <root>/LATEST when `directory` holds a LATEST file)
// and makes every server restore its shards from it; returns the checkpoint
// directory used. Servers may be more or fewer than when it was saved.
std::string restore_checkpoint(PsClient& client, const std::string& root_or_directory);

}  // namespace dist::ps
