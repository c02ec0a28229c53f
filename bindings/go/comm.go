package distribute

// #include "dist.h"
import "C"

import (
	"runtime"
	"sync"
	"time"
)

// AllreduceAlgorithm picks the all-reduce algorithm of a communicator.
type AllreduceAlgorithm int32

const (
	AllreduceAuto              AllreduceAlgorithm = C.DIST_ALLREDUCE_AUTO
	AllreduceRing              AllreduceAlgorithm = C.DIST_ALLREDUCE_RING
	AllreduceRabenseifner      AllreduceAlgorithm = C.DIST_ALLREDUCE_RABENSEIFNER
	AllreduceRecursiveDoubling AllreduceAlgorithm = C.DIST_ALLREDUCE_RECURSIVE_DOUBLING
	// AllreduceSharedMemory needs a communicator whose Path is PathSharedMemory
	// (else ErrUnsupported).
	AllreduceSharedMemory AllreduceAlgorithm = C.DIST_ALLREDUCE_SHARED_MEMORY
	// AllreduceHierarchical (shared memory within each host, UCX messages
	// between hosts; the hierarchical all-reduces, chosen by size) needs a
	// communicator whose Path is PathHierarchical (else ErrUnsupported).
	AllreduceHierarchical AllreduceAlgorithm = C.DIST_ALLREDUCE_HIERARCHICAL
)

// CommOptions are dist_comm_options_t; nil fields keep the current defaults.
type CommOptions struct {
	Timeout   *time.Duration
	Allreduce *AllreduceAlgorithm
	// Timing times every call for Stats (off by default: two clock reads a call).
	Timing *bool
	// StallWarning is how long a call waits for its peers before each waiting
	// rank logs who is behind and where (default 30 s); 0: no warning; a
	// negative one is ErrInvalidArgument.
	StallWarning *time.Duration
	// Deterministic makes float SUM, PROD and MEAN reductions combine the ranks
	// in rank order, the same bits on every path (off by default).
	Deterministic *bool
}

// Comm is a communicator. Its calls are serialised by a mutex, but every member
// must still make the same calls in the same order, so use it from one goroutine
// at a time. Different communicators may be used concurrently. A split
// communicator the garbage collector finds unreachable is closed by a finalizer.
type Comm struct {
	*commCore
	context *Context // keeps the context alive while the communicator is
}

// commCore is the state Close needs (see contextCore).
type commCore struct {
	mu       sync.Mutex
	handle   *C.dist_comm_t
	ctx      *contextCore
	owned    bool // false for the world, which the context owns
	requests map[*requestCore]struct{}
}

// Close destroys a split communicator after waiting for its requests; for the
// world it is a no-op (the context owns it). Idempotent.
func (c *Comm) Close() error {
	if !c.owned {
		return nil
	}
	runtime.SetFinalizer(c, nil)
	return c.commCore.close()
}

func (c *commCore) closed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.handle == nil
}

func (c *commCore) close() error {
	c.mu.Lock()
	handle, requests := c.handle, c.requests
	c.handle, c.requests = nil, nil
	c.mu.Unlock()
	if handle == nil {
		return nil
	}
	for r := range requests {
		r.close()
	}
	if c.owned {
		C.dist_comm_destroy(handle)
		c.ctx.forget(c)
	}
	return nil
}

// locked runs f with the communicator's lock held and its (possibly nil) handle.
func (c *Comm) locked(f func(h *C.dist_comm_t) C.dist_status_t) error {
	defer runtime.KeepAlive(c) // no finalizer may destroy the handle during the call
	c.mu.Lock()
	defer c.mu.Unlock()
	return call(func() C.dist_status_t { return f(c.handle) })
}

// count runs one of the header's int32_t queries of a communicator.
func (c *Comm) count(query func(h *C.dist_comm_t, value *C.int32_t) C.dist_status_t) (int, error) {
	var v C.int32_t
	err := c.locked(func(h *C.dist_comm_t) C.dist_status_t { return query(h, &v) })
	return int(v), err
}

func (c *Comm) Rank() (int, error) {
	return c.count(func(h *C.dist_comm_t, v *C.int32_t) C.dist_status_t { return C.dist_comm_rank(h, v) })
}

func (c *Comm) Size() (int, error) {
	return c.count(func(h *C.dist_comm_t, v *C.int32_t) C.dist_status_t { return C.dist_comm_size(h, v) })
}

// Split is collective over c: members with the same color form a new communicator
// ranked by (key, rank). A negative color gives nil (the member joins none).
func (c *Comm) Split(color, key int) (*Comm, error) {
	var h *C.dist_comm_t
	if err := c.locked(func(p *C.dist_comm_t) C.dist_status_t {
		return C.dist_comm_split(p, C.int32_t(color), C.int32_t(key), &h)
	}); err != nil || h == nil {
		return nil, err
	}
	return c.child(h), nil
}

// child wraps a communicator split from c, owned by c's context until closed.
func (c *Comm) child(h *C.dist_comm_t) *Comm {
	child := &Comm{commCore: &commCore{handle: h, ctx: c.ctx, owned: true}, context: c.context}
	c.ctx.adopt(child.commCore)
	runtime.SetFinalizer(child, (*Comm).Close)
	return child
}

// Configure applies to the calls made after it.
func (c *Comm) Configure(o CommOptions) error {
	var raw C.dist_comm_options_t
	if o.Timeout != nil {
		raw.field_mask |= C.DIST_COMM_OPT_TIMEOUT_MS
		raw.timeout_ms = C.int64_t(o.Timeout.Milliseconds())
	}
	if o.Allreduce != nil {
		raw.field_mask |= C.DIST_COMM_OPT_ALLREDUCE
		raw.allreduce = C.dist_allreduce_algorithm_t(*o.Allreduce)
	}
	if o.Timing != nil {
		raw.field_mask |= C.DIST_COMM_OPT_TIMING
		if *o.Timing {
			raw.timing = 1
		}
	}
	if o.StallWarning != nil {
		raw.field_mask |= C.DIST_COMM_OPT_STALL_WARNING_MS
		raw.stall_warning_ms = C.int64_t(wholeMillis(*o.StallWarning))
	}
	if o.Deterministic != nil {
		raw.field_mask |= C.DIST_COMM_OPT_DETERMINISTIC
		if *o.Deterministic {
			raw.deterministic = 1
		}
	}
	return c.locked(func(h *C.dist_comm_t) C.dist_status_t { return C.dist_comm_configure(h, &raw) })
}

// wholeMillis is d in milliseconds, rounded away from zero: a stall warning under
// 1 ms must not become 0 (no warning), nor a negative one 0 (accepted).
func wholeMillis(d time.Duration) int64 {
	ms := d.Milliseconds()
	if d > 0 && time.Duration(ms)*time.Millisecond < d {
		ms++
	} else if d < 0 && time.Duration(ms)*time.Millisecond > d {
		ms--
	}
	return ms
}

// Barrier returns when every member has called it.
func (c *Comm) Barrier() error {
	_, err := run[uint8](c, collective{kind: C.GO_BARRIER}, nil, nil, false)
	return err
}

// BarrierAsync starts a barrier.
func (c *Comm) BarrierAsync() (*Request, error) {
	return run[uint8](c, collective{kind: C.GO_BARRIER}, nil, nil, true)
}
