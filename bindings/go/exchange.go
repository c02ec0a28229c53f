package distribute

// #include "dist.h"
import "C"

import (
	"errors"
	"fmt"
	"math"
	"runtime/cgo"
	"sync"
	"unsafe"
)

// A context built through the caller's own exchange (dist_context_create_oob).
// The library asks for one or more all-gathers, in the same order on every rank.
// Each runs the ExchangeFunc on a goroutine of its own, so that the library can poll
// it and give up at its connect deadline; the function cannot be interrupted, so
// an answer that comes after the library gave up is dropped. The exchange and
// each request in flight reach C as runtime/cgo.Handles (no Go pointer does), and
// every exported function recovers, so that no panic crosses C.

// ExchangeFunc is the caller's all-gather for NewContextFromExchange: given this
// rank's bytes, it returns every rank's, rank r's at index r, each as long as data.
type ExchangeFunc func(data []byte) ([][]byte, error)

// ExchangeError is how NewContextFromExchange reports a join that failed because
// the ExchangeFunc did: the library's status and message, and the ExchangeFunc's own
// error (Unwrap) or, when it panicked, the panic value. errors.Is matches the
// status, as *Error does, and errors.As finds an *Error with the library's status
// and message.
type ExchangeError struct {
	Status  Status
	Message string
	Err     error
	Panic   any // non-nil when the ExchangeFunc panicked
}

func (e *ExchangeError) Error() string {
	return fmt.Sprintf("%s: %s: %v", e.Status, e.Message, e.Err)
}

func (e *ExchangeError) Unwrap() error { return e.Err }

func (e *ExchangeError) Is(target error) bool {
	s, ok := target.(Status)
	return ok && s == e.Status
}

func (e *ExchangeError) As(target any) bool {
	if t, ok := target.(**Error); ok {
		*t = &Error{Status: e.Status, Message: e.Message}
		return true
	}
	return false
}

// exchangeState is what the trampolines of one dist_context_create_oob call share.
type exchangeState struct {
	allGather  ExchangeFunc
	rank, size int
	mu         sync.Mutex
	failure    *ExchangeError // Err and Panic, until the C call has returned
}

// gather is one all-gather in flight.
type gather struct {
	recv       unsafe.Pointer // C memory the library keeps for this request
	done       chan struct{}
	parts      [][]byte
	err        error
	panicValue any
}

func (x *exchangeState) fail(err error, panicValue any) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.failure == nil {
		x.failure = &ExchangeError{Err: err, Panic: panicValue}
	}
}

// guard turns a panic of the binding's own code into a failed exchange.
func (x *exchangeState) guard(failed C.int32_t, status *C.int32_t) {
	if v := recover(); v != nil {
		x.fail(fmt.Errorf("panic: %v", v), v)
		*status = failed
	}
}

func (x *exchangeState) start(data []byte, recv unsafe.Pointer) *gather {
	g := &gather{recv: recv, done: make(chan struct{})}
	go func() {
		defer close(g.done)
		defer func() {
			if v := recover(); v != nil {
				g.err, g.panicValue = fmt.Errorf("panic: %v", v), v
			}
		}()
		parts, err := x.allGather(data)
		if err == nil {
			err = checkAnswer(parts, data, x.size, x.rank)
		}
		g.parts, g.err = parts, err
	}()
	return g
}

// checkAnswer wants size parts as long as sent, this rank's own at index rank.
func checkAnswer(parts [][]byte, sent []byte, size, rank int) error {
	if len(parts) != size {
		return fmt.Errorf("the all-gather returned %d items for %d ranks", len(parts), size)
	}
	for r, part := range parts {
		if len(part) != len(sent) {
			return fmt.Errorf("the all-gather returned %d bytes for rank %d, expected %d", len(part), r, len(sent))
		}
	}
	if string(parts[rank]) != string(sent) {
		return fmt.Errorf("the all-gather returned at index %d other bytes than this rank sent", rank)
	}
	return nil
}

//export goOobAllgather
func goOobAllgather(handle C.uintptr_t, send, recv unsafe.Pointer, bytes C.size_t, request *C.uintptr_t) (status C.int32_t) {
	x := cgo.Handle(handle).Value().(*exchangeState)
	defer x.guard(1, &status)
	data := make([]byte, int(bytes))
	if bytes > 0 {
		copy(data, unsafe.Slice((*byte)(send), int(bytes)))
	}
	*request = C.uintptr_t(cgo.NewHandle(x.start(data, recv)))
	return 0
}

//export goOobTest
func goOobTest(handle, request C.uintptr_t) (status C.int32_t) {
	x := cgo.Handle(handle).Value().(*exchangeState)
	defer x.guard(-1, &status)
	g := cgo.Handle(request).Value().(*gather)
	select {
	case <-g.done:
	default:
		return 1
	}
	if g.err != nil {
		x.fail(g.err, g.panicValue)
		return -1
	}
	if len(g.parts) > 0 && len(g.parts[0]) > 0 {
		n := len(g.parts[0])
		recv := unsafe.Slice((*byte)(g.recv), len(g.parts)*n)
		for r, part := range g.parts {
			copy(recv[r*n:], part)
		}
	}
	return 0
}

//export goOobFree
func goOobFree(_, request C.uintptr_t) {
	cgo.Handle(request).Delete() // a goroutine still running drops its answer
}

// NewContextFromExchange joins through the caller's own exchange
// (dist_context_create_oob), for frameworks that already have a rendezvous
// (torch's Store, an MPI communicator, JAX's key-value store) and no cluster
// spec. allGather is called one or more times, in the same order on every rank,
// each time on a goroutine of its own; the connect deadline bounds the whole
// join. When it fails or panics, the join fails with an *ExchangeError carrying
// its error. The cluster token authenticates the members as with a cluster (the
// options, else DIST_CLUSTER_TOKEN / DIST_CLUSTER_TOKEN_FILE); options may be nil.
func NewContextFromExchange(rank, size int, allGather ExchangeFunc, o *ContextOptions) (*Context, error) {
	for _, v := range []int{rank, size} {
		if v < math.MinInt32 || v > math.MaxInt32 {
			return nil, invalid("NewContextFromExchange: rank %d or size %d does not fit in 32 bits", rank, size)
		}
	}
	if allGather == nil {
		return nil, invalid("NewContextFromExchange: allGather is nil")
	}
	x := &exchangeState{allGather: allGather, rank: rank, size: size}
	handle := cgo.NewHandle(x)
	defer handle.Delete()
	var strings cStrings
	defer strings.free()
	raw := o.raw(&strings)
	var h *C.dist_context_t
	err := call(func() C.dist_status_t {
		return C.go_context_create_oob(C.int32_t(rank), C.int32_t(size), C.uintptr_t(handle), &raw, &h)
	})
	if err == nil {
		return adoptContext(h), nil
	}
	x.mu.Lock()
	failure := x.failure
	x.mu.Unlock()
	var library *Error
	if failure == nil || !errors.As(err, &library) {
		return nil, err
	}
	failure.Status, failure.Message = library.Status, library.Message
	return nil, failure
}
