package distribute

// #include "dist.h"
import "C"

// CommPath says how a communicator's collectives travel; all its ranks decide
// it together when it is created (the path of its calls on CUDA memory, PathNCCL
// or PathStaged, at the first such call).
type CommPath int32

const (
	PathSelf         CommPath = C.DIST_COMM_PATH_SELF           // one rank: nothing travels
	PathPointToPoint CommPath = C.DIST_COMM_PATH_POINT_TO_POINT // UCX messages between ranks
	PathSharedMemory CommPath = C.DIST_COMM_PATH_SHARED_MEMORY  // a segment shared by all ranks on one host
	PathHierarchical CommPath = C.DIST_COMM_PATH_HIERARCHICAL   // shared memory within each host, UCX messages between hosts
	PathNCCL         CommPath = C.DIST_COMM_PATH_NCCL           // calls on CUDA memory: NCCL (DevicePath)
	PathStaged       CommPath = C.DIST_COMM_PATH_STAGED         // calls on CUDA memory: through pinned host memory
)

// String is "self", "point_to_point", "shared_memory", "hierarchical", "nccl" or
// "staged" ("" for another value).
func (p CommPath) String() string {
	switch p {
	case PathSelf:
		return "self"
	case PathPointToPoint:
		return "point_to_point"
	case PathSharedMemory:
		return "shared_memory"
	case PathHierarchical:
		return "hierarchical"
	case PathNCCL:
		return "nccl"
	case PathStaged:
		return "staged"
	}
	return ""
}

// Collective names one of the seven collectives or AllToAllV, to ask which
// algorithm it runs; it also names the rows of Comm.Stats.
type Collective int32

const (
	CollectiveAllReduce     Collective = C.DIST_COLLECTIVE_ALL_REDUCE
	CollectiveReduce        Collective = C.DIST_COLLECTIVE_REDUCE
	CollectiveBroadcast     Collective = C.DIST_COLLECTIVE_BROADCAST
	CollectiveAllGather     Collective = C.DIST_COLLECTIVE_ALL_GATHER
	CollectiveReduceScatter Collective = C.DIST_COLLECTIVE_REDUCE_SCATTER
	CollectiveAllToAll      Collective = C.DIST_COLLECTIVE_ALL_TO_ALL
	CollectiveBarrier       Collective = C.DIST_COLLECTIVE_BARRIER
	// CollectiveAllToAllV is AllToAllV; for Algorithm, bytes is its largest block.
	CollectiveAllToAllV Collective = C.DIST_COLLECTIVE_ALL_TO_ALL_V
)

// String is "all_reduce", "reduce", "broadcast", "all_gather", "reduce_scatter",
// "all_to_all", "barrier" or "all_to_all_v" ("" for another value).
func (k Collective) String() string {
	switch k {
	case CollectiveAllReduce:
		return "all_reduce"
	case CollectiveReduce:
		return "reduce"
	case CollectiveBroadcast:
		return "broadcast"
	case CollectiveAllGather:
		return "all_gather"
	case CollectiveReduceScatter:
		return "reduce_scatter"
	case CollectiveAllToAll:
		return "all_to_all"
	case CollectiveBarrier:
		return "barrier"
	case CollectiveAllToAllV:
		return "all_to_all_v"
	}
	return ""
}

// Path says how this communicator's collectives travel.
func (c *Comm) Path() (CommPath, error) {
	var p C.dist_comm_path_t
	err := c.locked(func(h *C.dist_comm_t) C.dist_status_t { return C.dist_comm_path(h, &p) })
	return CommPath(p), err
}

// DevicePath says how this communicator's calls on CUDA memory travel, PathNCCL
// or PathStaged, which its ranks choose together at the first such call. Before
// that call, and in builds without CUDA, it gives ErrUnavailable.
func (c *Comm) DevicePath() (CommPath, error) {
	var p C.dist_comm_path_t
	err := c.locked(func(h *C.dist_comm_t) C.dist_status_t { return C.dist_comm_device_path(h, &p) })
	return CommPath(p), err
}

// Algorithm names the algorithm this communicator runs for one collective with
// bytes bytes per rank: "shm_direct", "ring", "self", ... (see dist_comm_algorithm).
// A value that is not a Collective gives ErrInvalidArgument.
func (c *Comm) Algorithm(kind Collective, bytes uint64) (string, error) {
	var name *C.char
	err := c.locked(func(h *C.dist_comm_t) C.dist_status_t {
		return C.dist_comm_algorithm(h, C.dist_collective_t(kind), C.uint64_t(bytes), &name)
	})
	if err != nil {
		return "", err
	}
	return C.GoString(name), nil
}
