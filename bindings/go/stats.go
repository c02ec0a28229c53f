package distribute

// #include <stdlib.h>
// #include "dist.h"
import "C"

import (
	"time"
	"unsafe"
)

// CommStat is one row of Comm.Stats: the calls of one collective that ran on
// one path under one algorithm (dist_comm_stat_t).
type CommStat struct {
	Collective Collective
	Path       CommPath
	Algorithm  string // dist_comm_algorithm's name, or "self", "nccl", "staged"
	Calls      uint64 // the calls past their argument checks, failed ones included
	Failed     uint64
	// Bytes carried per rank: count times the element size (per block for
	// AllGather and AllToAll, every block sent for AllToAllV, none for a Barrier).
	Bytes      uint64
	TimedCalls uint64        // the calls Time covers: none while timing is off
	Time       time.Duration // time_ns: their time on this rank
}

// Stats reads this communicator's counters: one row per collective, path and
// algorithm that ran, in the order they first ran. Timing (CommOptions.Timing)
// is off by default, so TimedCalls and Time stay 0 until it is turned on.
func (c *Comm) Stats() ([]CommStat, error) {
	var count C.uint64_t
	if err := c.locked(func(h *C.dist_comm_t) C.dist_status_t { return C.dist_comm_stats(h, nil, 0, &count) }); err != nil {
		return nil, err
	}
	for {
		capacity := count
		// C memory: the rows hold C pointers (the algorithms' static names); one
		// spare row keeps the allocation from ever being empty.
		raw := (*C.dist_comm_stat_t)(C.calloc(C.size_t(capacity)+1, C.sizeof_dist_comm_stat_t))
		err := c.locked(func(h *C.dist_comm_t) C.dist_status_t { return C.dist_comm_stats(h, raw, capacity, &count) })
		if err != nil || count > capacity {
			C.free(unsafe.Pointer(raw))
			if err != nil {
				return nil, err
			}
			continue // a request completing meanwhile added a row: ask again with room for it
		}
		rows := unsafe.Slice(raw, int(count))
		stats := make([]CommStat, len(rows))
		for i, r := range rows {
			stats[i] = CommStat{Collective: Collective(r.collective), Path: CommPath(r.path),
				Algorithm: C.GoString(r.algorithm), Calls: uint64(r.calls), Failed: uint64(r.failed),
				Bytes: uint64(r.bytes), TimedCalls: uint64(r.timed_calls), Time: time.Duration(r.time_ns)}
		}
		C.free(unsafe.Pointer(raw))
		return stats, nil
	}
}

// ResetStats sets every counter of Stats to zero. Call it between calls: a
// request still running may count after it.
func (c *Comm) ResetStats() error {
	return c.locked(func(h *C.dist_comm_t) C.dist_status_t { return C.dist_comm_stats_reset(h) })
}
