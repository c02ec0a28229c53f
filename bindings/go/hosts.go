package distribute

// #include "dist.h"
import "C"

// Members of a communicator run on the same host when they share a kernel.
// Hosts are numbered in the order of their first rank; a rank's local rank is
// its position among the ranks of its host, in communicator rank order.

// LocalRank is this rank's position among the ranks of its host.
func (c *Comm) LocalRank() (int, error) {
	return c.count(func(h *C.dist_comm_t, v *C.int32_t) C.dist_status_t { return C.dist_comm_local_rank(h, v) })
}

// LocalSize is how many ranks of this communicator run on this rank's host.
func (c *Comm) LocalSize() (int, error) {
	return c.count(func(h *C.dist_comm_t, v *C.int32_t) C.dist_status_t { return C.dist_comm_local_size(h, v) })
}

// NumHosts is how many hosts this communicator's ranks run on.
func (c *Comm) NumHosts() (int, error) {
	return c.count(func(h *C.dist_comm_t, v *C.int32_t) C.dist_status_t { return C.dist_comm_num_hosts(h, v) })
}

// SplitHost is collective over c: the communicator of this rank's host, its
// ranks in c's order. Close it when done (the context closes it otherwise).
func (c *Comm) SplitHost() (*Comm, error) {
	var h *C.dist_comm_t
	if err := c.locked(func(p *C.dist_comm_t) C.dist_status_t { return C.dist_comm_split_host(p, &h) }); err != nil {
		return nil, err
	}
	return c.child(h), nil
}
