// What the C ABI's opaque handles hold.
#pragma once

#include <memory>

#include "c_api/cluster_handle.h"
#include "collectives/communicator.h"
#include "collectives/operation.h"
#include "transport/context.h"

struct dist_comm {
  std::unique_ptr<dist::Communicator> communicator;
  bool is_world = false;
};

struct dist_context {
  std::unique_ptr<dist::Context> context;
  dist_comm world;
  dist_cluster cluster;  // what the context was created from (strategies report it)
};

struct dist_request {
  std::shared_ptr<dist::Operation> operation;
};
