package distribute

// #include <stdlib.h>
// #include "dist.h"
import "C"

import (
	"errors"
	"sync"
	"time"
	"unsafe"
)

// Request is a collective in flight. Wait (or Close) must be called; Close waits
// for the call before releasing its C memory. Use from one goroutine at a time.
type Request struct {
	mu           sync.Mutex
	handle       *C.dist_request_t
	comm         *Comm
	cSend, cRecv unsafe.Pointer
	copyBack     func()
	done         bool
}

func (c *Comm) track(r *Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.requests == nil {
		c.requests = map[*Request]struct{}{}
	}
	c.requests[r] = struct{}{}
}

// Test reports whether the call has completed; a failed call returns its error.
func (r *Request) Test() (bool, error) {
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
func (r *Request) finish() {
	if !r.done && r.copyBack != nil {
		r.copyBack()
	}
	r.done = true
}

// Close waits for the call if needed, then frees the request and its C memory. Idempotent.
func (r *Request) Close() error {
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
	r.comm.untrack(r)
	return nil
}

func (c *Comm) untrack(r *Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.requests, r)
}
