// The NCCL communicator of a host communicator: built over the authenticated
// context, never over NCCL's own unauthenticated bootstrap. Rank 0's unique
// id travels by the communicator's own broadcast; every rank first says
// whether it can join at all, so that one rank without a device fails every
// rank at once instead of leaving the others in NCCL's init until the
// deadline; and the ranks agree once more after the init: all or nothing.
#pragma once

#include <memory>
#include <string>

#include "collectives/communicator.h"
#include "gpu/nccl_communicator.h"

namespace dist {

// Collective over `comm`. On every rank, either every rank returns its part
// of one NCCL communicator over CUDA device `device`, or every rank throws the
// same kind of error naming each rank that failed and why.
std::unique_ptr<NcclCommunicator> setup_nccl(Communicator& comm, int device, SteadyDeadline deadline);

// Every rank says how its part of a setup `stage` went: returns on every rank
// when all are OK, else throws on every rank the first failing rank's status,
// naming each rank that failed and why (the all-or-nothing step of the setups
// here and of a strategy's NCCL ranks).
void agree_on_nccl_stage(Communicator& comm, Status status, const std::string& message, const char* stage);

// Rank 0's fresh unique id, as every rank of `comm` receives it (the first
// step of setup_nccl, apart for tests: it needs NCCL but no device).
ncclUniqueId share_nccl_id(Communicator& comm);

}  // namespace dist
