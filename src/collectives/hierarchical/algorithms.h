// The hierarchical collectives, one per file, each a sequence of phases on
// the host's group and on views of the channel (hierarchy.h). Buffer shapes
// and in-place rules are those of collective_call.h; run_hierarchical has
// checked the call and begun it. MEAN combines as SUM and divides by the
// communicator's size once, where the result is finished.
//
// "rails": every local rank carries a share between hosts (even layouts).
// "leaders": one rank per host exchanges between hosts (any layout; the
// fewest messages, for small calls).
#pragma once

#include "collectives/collective_call.h"
#include "collectives/hierarchical/hierarchy.h"

namespace dist {

// Reduce-scatter inside the host into the user's buffer, all-reduce of each
// shard on its rail, all-gather inside the host in place.
void hier_allreduce_rails(Hierarchy& h, const CollectiveCall& call);
// Two hosts whose ranks reach each other's memory (single_copy.h): each rank
// streams its block chunk by chunk, summing it in the host while the last
// chunks cross to the other host.
void hier_allreduce_streamed(Hierarchy& h, const CollectiveCall& call);
// Reduce to local rank 0, all-reduce between the leaders, broadcast inside.
void hier_allreduce_leaders(Hierarchy& h, const CollectiveCall& call);
// Two hosts whose ranks reach each other's memory: each rank sums its own
// and its counterpart's block over the host, chunk by chunk, while the last
// chunks of the counterpart's cross to it.
void hier_reduce_scatter_streamed(Hierarchy& h, const CollectiveCall& call);
// Reduce-scatter inside the host of the blocks each rail delivers, then
// reduce-scatter on the rails.
void hier_reduce_scatter_rails(Hierarchy& h, const CollectiveCall& call);
// Two hosts whose ranks reach each other's memory: each rank trades its
// block with its counterpart chunk by chunk and writes both into its host
// peers' results.
void hier_allgather_streamed(Hierarchy& h, const CollectiveCall& call);
// All-gather on the rails, then all-gather inside the host straight into the
// user's buffer.
void hier_allgather_rails(Hierarchy& h, const CollectiveCall& call);
// The root's host shares the message; each rail carries one block of it to
// the other hosts, whose ranks all-gather the blocks.
void hier_broadcast_rails(Hierarchy& h, const CollectiveCall& call);
// The root sends to one rank per host, which shares it inside its host.
void hier_broadcast_leaders(Hierarchy& h, const CollectiveCall& call);
// Reduce inside each host to one rank (the root on its own host), then
// between those ranks to the root.
void hier_reduce_leaders(Hierarchy& h, const CollectiveCall& call);
// Barrier inside each host, between the leaders, and inside again.
void hier_barrier_leaders(Hierarchy& h, const CollectiveCall& call);
// The whole call point to point over the communicator's channel (all-to-all;
// all-gather and reduce-scatter where the hosts are uneven).
void hier_point_to_point(Hierarchy& h, const CollectiveCall& call);

}  // namespace dist
