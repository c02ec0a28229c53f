package distribute

// #include <stdlib.h>
// #include "dist.h"
import "C"

import (
	"runtime"
	"sync"
	"time"
)

// ContextOptions are dist_context_options_t; zero values keep the defaults.
type ContextOptions struct {
	Token          string // else DIST_CLUSTER_TOKEN, else DIST_CLUSTER_TOKEN_FILE
	TokenFile      string
	ConnectTimeout time.Duration // default 120 s
	Timeout        time.Duration // default deadline of every collective: 60 s
	// Timeline records one: this rank writes "<*Timeline>.<rank>.json", a JSON
	// array of Chrome trace events, complete once the context and everything made
	// from it are closed; it turns on timing. A pointer (set it with Ptr) because
	// nil, unlike "", keeps the default: DIST_TIMELINE's value, else off; "" is
	// passed on and refused (ErrInvalidArgument).
	Timeline *string
}

// Context is this process's membership in the cluster. Rank, Size and Abort are
// safe for concurrent use. Close closes the communicators split from it (and
// waits for their requests) before destroying the context, as the C API requires.
// A context the garbage collector finds unreachable is closed by a finalizer;
// every Comm keeps its Context reachable, so that never happens under one.
type Context struct {
	*contextCore
}

// contextCore is the state Close needs. Registries point at cores, never at the
// finalized wrappers, so that no cycle holds a finalizer (Go would never run it).
type contextCore struct {
	mu       sync.Mutex
	handle   *C.dist_context_t
	world    *commCore
	children map[*commCore]struct{}
	// Strategies, variables: closed before the communicators and the context,
	// which must outlive them.
	dependents map[dependent]struct{}
}

// dependent is a handle that needs the context alive.
type dependent interface{ close() }

// NewContext joins the cluster (dist_context_create); options may be nil.
// Blocks until every member has connected.
func NewContext(cluster *Cluster, o *ContextOptions) (*Context, error) {
	var strings cStrings
	defer strings.free()
	raw := o.raw(&strings)
	var h *C.dist_context_t
	if err := cluster.call(func() C.dist_status_t { return C.dist_context_create(cluster.handle, &raw, &h) }); err != nil {
		return nil, err
	}
	return adoptContext(h), nil
}

// raw is dist_context_options_t of o (nil keeps every default); its strings live in strings.
func (o *ContextOptions) raw(strings *cStrings) C.dist_context_options_t {
	var raw C.dist_context_options_t
	if o == nil {
		return raw
	}
	if o.Token != "" {
		raw.field_mask |= C.DIST_CONTEXT_OPT_TOKEN
		raw.token = strings.add(o.Token)
	}
	if o.TokenFile != "" {
		raw.field_mask |= C.DIST_CONTEXT_OPT_TOKEN_FILE
		raw.token_file = strings.add(o.TokenFile)
	}
	if o.ConnectTimeout > 0 {
		raw.field_mask |= C.DIST_CONTEXT_OPT_CONNECT_TIMEOUT_MS
		raw.connect_timeout_ms = C.int64_t(o.ConnectTimeout.Milliseconds())
	}
	if o.Timeout > 0 {
		raw.field_mask |= C.DIST_CONTEXT_OPT_TIMEOUT_MS
		raw.timeout_ms = C.int64_t(o.Timeout.Milliseconds())
	}
	if o.Timeline != nil {
		raw.field_mask |= C.DIST_CONTEXT_OPT_TIMELINE
		raw.timeline = strings.add(*o.Timeline)
	}
	return raw
}

func adoptContext(h *C.dist_context_t) *Context {
	context := &Context{&contextCore{handle: h, children: map[*commCore]struct{}{}, dependents: map[dependent]struct{}{}}}
	runtime.SetFinalizer(context, (*Context).Close)
	return context
}

// Close destroys the context after its communicators. Idempotent.
func (c *Context) Close() error {
	runtime.SetFinalizer(c, nil)
	return c.contextCore.close()
}

func (c *contextCore) close() error {
	c.mu.Lock()
	handle, children, world, dependents := c.handle, c.children, c.world, c.dependents
	c.handle, c.children, c.dependents = nil, map[*commCore]struct{}{}, map[dependent]struct{}{}
	c.mu.Unlock()
	if handle == nil {
		return nil
	}
	for d := range dependents {
		d.close()
	}
	for child := range children {
		child.close()
	}
	if world != nil {
		world.close()
	}
	C.dist_context_destroy(handle)
	return nil
}

func (c *contextCore) live() *C.dist_context_t {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.handle
}

func (c *Context) Rank() (int, error) {
	defer runtime.KeepAlive(c)
	h := c.live()
	var r C.int32_t
	err := call(func() C.dist_status_t { return C.dist_context_rank(h, &r) })
	return int(r), err
}

func (c *Context) Size() (int, error) {
	defer runtime.KeepAlive(c)
	h := c.live()
	var s C.int32_t
	err := call(func() C.dist_status_t { return C.dist_context_size(h, &s) })
	return int(s), err
}

// Abort makes every pending and later call on every communicator fail with
// ErrAborted, here and on every peer. reason may be "".
func (c *Context) Abort(reason string) error {
	defer runtime.KeepAlive(c)
	h := c.live()
	var strings cStrings
	defer strings.free()
	r := strings.addOptional(reason)
	return call(func() C.dist_status_t { return C.dist_context_abort(h, r) })
}

// Dump is the flight recorder (dist_context_dump): JSON with this rank (rank,
// size, task, host_id, pid, steady_ns, system_ns), lost_peers and
// communicators, each with its last calls (seq, kind, dtype, count, state
// "in flight"/"done"/"failed", status, path, algorithm, ...). Safe from any
// goroutine, also while a call hangs.
func (c *Context) Dump() (string, error) {
	defer runtime.KeepAlive(c)
	h := c.live()
	var out *C.char
	if err := call(func() C.dist_status_t { return C.dist_context_dump(h, &out) }); err != nil {
		return "", err
	}
	return takeString(out), nil
}

// World is the communicator of all members, owned by the context: its Close is
// a no-op; closing the context ends it.
func (c *Context) World() (*Comm, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.world == nil || c.world.closed() {
		var h *C.dist_comm_t
		if err := call(func() C.dist_status_t { return C.dist_comm_world(c.handle, &h) }); err != nil {
			return nil, err
		}
		c.world = &commCore{handle: h, ctx: c.contextCore, owned: false}
	}
	return &Comm{commCore: c.world, context: c}, nil
}

func (c *contextCore) adopt(comm *commCore) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.children[comm] = struct{}{}
}

func (c *contextCore) forget(comm *commCore) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.children, comm)
}

func (c *contextCore) adoptDependent(d dependent) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dependents[d] = struct{}{}
}

func (c *contextCore) forgetDependent(d dependent) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.dependents, d)
}
