package distribute

// #include <stdlib.h>
// #include "dist.h"
import "C"

import (
	"errors"
	"runtime"
	"sync"
	"time"
	"unsafe"
)

// Request is a call in flight: a non-blocking collective, send or receive. Wait,
// then Close; Close (or the finalizer of an unreachable request) waits for the
// call before releasing its C memory, unless OnComplete registered a function:
// then the memory stays until that function has run. Use from one goroutine at a
// time.
type Request struct {
	*requestCore
	comm *Comm // keeps the communicator alive while the request is
}

// requestCore is the state Close needs (see contextCore).
type requestCore struct {
	mu       sync.Mutex
	handle   *C.dist_request_t
	owner    *commCore
	memory   []unsafe.Pointer // C memory the call uses until it ends
	copyBack func()           // copies the result into the caller's slice
	copied   sync.Once
	done     bool
	complete *completion // set by OnComplete
}

// newRequest tracks a request on c; memory (C.malloc'd, nil entries allowed) is
// freed once the call is over, after copyBack (may be nil) ran on success.
func newRequest(raw *C.dist_request_t, c *Comm, memory []unsafe.Pointer, copyBack func()) *Request {
	r := &Request{requestCore: &requestCore{handle: raw, owner: c.commCore, memory: memory, copyBack: copyBack}, comm: c}
	c.mu.Lock()
	if c.requests == nil {
		c.requests = map[*requestCore]struct{}{}
	}
	c.requests[r.requestCore] = struct{}{}
	c.mu.Unlock()
	runtime.SetFinalizer(r, (*Request).Close)
	return r
}

// Test reports whether the call has completed; a failed call returns its error.
func (r *Request) Test() (bool, error) {
	defer runtime.KeepAlive(r)
	r.mu.Lock()
	defer r.mu.Unlock()
	var done C.int32_t
	err := call(func() C.dist_status_t { return C.dist_request_test(r.handle, &done) })
	if err == nil && done != 0 {
		r.finish()
	}
	return done != 0, err
}

// Wait waits for completion (timeout < 0: until the call's own deadline) and
// writes the result into the recv slice. If only this wait ran out, it returns an
// error matching ErrTimeout and the request stays valid.
func (r *Request) Wait(timeout time.Duration) error {
	defer runtime.KeepAlive(r)
	r.mu.Lock()
	defer r.mu.Unlock()
	ms := C.int64_t(-1)
	if timeout >= 0 {
		ms = C.int64_t(timeout.Milliseconds())
	}
	err := call(func() C.dist_status_t { return C.dist_request_wait(r.handle, ms) })
	if errors.Is(err, ErrTimeout) && ms >= 0 {
		// This wait ran out, or the call itself timed out: test tells which.
		var done C.int32_t
		status := call(func() C.dist_status_t { return C.dist_request_test(r.handle, &done) })
		if done == 0 {
			return err
		}
		err = status
	}
	if err == nil {
		r.finish()
	}
	return err
}

// finish copies the result out once.
func (r *requestCore) finish() {
	r.copyOut()
	r.done = true
}

// copyOut copies the result into the caller's slice, once (Wait, Test or the
// completion callback, whichever sees the success first).
func (r *requestCore) copyOut() {
	if r.copyBack != nil {
		r.copied.Do(r.copyBack)
	}
}

// Source is the communicator rank a completed receive came from (the sender's for
// AnySource). An error for a request that is not a receive or has not completed
// successfully (Wait has not returned nil, or Test true).
func (r *Request) Source() (int, error) {
	defer runtime.KeepAlive(r)
	r.mu.Lock()
	defer r.mu.Unlock()
	var source C.int32_t
	err := call(func() C.dist_status_t { return C.dist_request_source(r.handle, &source) })
	return int(source), err
}

// Close waits for the call if needed, then frees the request and its C memory. Idempotent.
func (r *Request) Close() error {
	runtime.SetFinalizer(r, nil)
	return r.requestCore.close()
}

func (r *requestCore) close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.handle == nil {
		return nil
	}
	if r.complete != nil {
		// The callback says when the call is over: its memory waits for it, and the
		// handle goes now (the library lets the call finish in the background).
		C.dist_request_free(r.handle)
		r.complete.park(r.memory)
	} else {
		C.dist_request_wait(r.handle, -1)
		C.dist_request_free(r.handle)
		freeAll(r.memory)
	}
	r.handle, r.memory = nil, nil
	r.owner.untrack(r)
	return nil
}

func freeAll(memory []unsafe.Pointer) {
	for _, p := range memory {
		C.free(p)
	}
}

func (c *commCore) untrack(r *requestCore) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.requests, r)
}
