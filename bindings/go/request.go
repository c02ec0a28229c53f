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

// Request is a collective in flight. Wait, then Close; Close (or the finalizer of
// an unreachable request) waits for the call before releasing its C memory. Use
// from one goroutine at a time.
type Request struct {
	*requestCore
	comm *Comm // keeps the communicator alive while the request is
}

// requestCore is the state Close needs (see contextCore).
type requestCore struct {
	mu           sync.Mutex
	handle       *C.dist_request_t
	owner        *commCore
	cSend, cRecv unsafe.Pointer
	copyBack     func()
	done         bool
}

func newRequest(raw *C.dist_request_t, c *Comm, cSend, cRecv unsafe.Pointer) *Request {
	r := &Request{requestCore: &requestCore{handle: raw, owner: c.commCore, cSend: cSend, cRecv: cRecv}, comm: c}
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
	if !r.done && r.copyBack != nil {
		r.copyBack()
	}
	r.done = true
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
	C.dist_request_wait(r.handle, -1)
	C.dist_request_free(r.handle)
	C.free(r.cSend)
	C.free(r.cRecv)
	r.handle, r.cSend, r.cRecv = nil, nil, nil
	r.owner.untrack(r)
	return nil
}

func (c *commCore) untrack(r *requestCore) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.requests, r)
}
