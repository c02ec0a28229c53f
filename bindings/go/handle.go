package distribute

// #include "dist.h"
import "C"

import (
	"runtime"
	"sync"
)

// handleCore is the state shared by the strategy-side handles (strategies,
// variables, optimizers, input contexts): the C pointer, its destroy function
// and the context it depends on, if any. Close is idempotent; a wrapper the
// garbage collector finds unreachable is closed by a finalizer.
type handleCore[H any] struct {
	mu      sync.Mutex
	handle  *H
	destroy func(*H)
	ctx     *contextCore
}

func newHandleCore[H any](h *H, destroy func(*H), ctx *contextCore) *handleCore[H] {
	core := &handleCore[H]{handle: h, destroy: destroy, ctx: ctx}
	if ctx != nil {
		ctx.adoptDependent(core)
	}
	return core
}

func (c *handleCore[H]) close() {
	c.mu.Lock()
	h := c.handle
	c.handle = nil
	c.mu.Unlock()
	if h != nil {
		c.destroy(h)
		if c.ctx != nil {
			c.ctx.forgetDependent(c)
		}
	}
}

// live is the handle, or nil after Close (the library then reports a NULL argument).
func (c *handleCore[H]) live() *H {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.handle
}

// closeWrapper clears the finalizer of a wrapper and closes its core.
func closeWrapper[H any](wrapper any, core *handleCore[H]) error {
	runtime.SetFinalizer(wrapper, nil)
	core.close()
	return nil
}
