package distribute

// #include <stdlib.h>
// #include "dist.h"
import "C"

import (
	"runtime"
	"runtime/cgo"
	"sync"
	"unsafe"
)

// Completion callbacks (dist_request_on_complete). C gets a runtime/cgo.Handle as
// user_data (an integer: no Go pointer reaches C); the trampoline of bridge.c
// calls goRequestComplete on the library thread that completed the request, which
// deletes the handle, so each callback's state is released exactly once. A
// request closed before its call ended parks its C memory here until then.

// completion is one request's callback and whether it has run.
type completion struct {
	fn      func(error)
	request *requestCore
	mu      sync.Mutex
	ran     bool
	parked  []unsafe.Pointer
}

// park frees memory once the callback has run (now, if it has).
func (c *completion) park(memory []unsafe.Pointer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ran {
		freeAll(memory)
		return
	}
	c.parked = append(c.parked, memory...)
}

// finished marks the call over and frees what a Close parked.
func (c *completion) finished() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ran = true
	freeAll(c.parked)
	c.parked = nil
}

// OnComplete runs fn once when the call completes: with nil on success (the recv
// slice then already holds the result) or the call's *Error. It runs on the
// thread that completed the call (a library thread), or at once on this goroutine
// if the call already has; like a goroutine of its own, a panic in it ends the
// program. It must return quickly and must not block on this communicator (no
// blocking call, no Wait on one of its requests) nor call this request's methods
// (it may run inside OnComplete): hand the result to a channel.
// At most one per request (a second is the library's ErrInvalidArgument). The
// request stays usable (Test, Wait, Source); Close no longer waits for the call.
func (r *Request) OnComplete(fn func(error)) error {
	defer runtime.KeepAlive(r)
	if fn == nil {
		return invalid("OnComplete: fn is nil")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	state := &completion{fn: fn, request: r.requestCore}
	handle := cgo.NewHandle(state)
	// A closed request (NULL) or a second callback: the library refuses.
	err := call(func() C.dist_status_t { return C.go_request_on_complete(r.handle, C.uintptr_t(handle)) })
	if err != nil {
		handle.Delete() // refused: C never calls the trampoline
		return err
	}
	r.complete = state
	return nil
}

//export goRequestComplete
func goRequestComplete(handle C.uintptr_t, status C.dist_status_t, message *C.char) {
	h := cgo.Handle(handle)
	state := h.Value().(*completion)
	h.Delete()
	var err error
	if status != C.DIST_OK {
		err = &Error{Status: Status(status), Message: C.GoString(message)}
	} else {
		state.request.copyOut() // the C memory lives until finished() below
	}
	defer state.finished()
	state.fn(err)
}
