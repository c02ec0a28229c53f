package distribute

// #include "dist.h"
import "C"

import (
	"errors"
	"fmt"
	"runtime/cgo"
	"sync"
	"unsafe"
)

// The C library calls replica and merge functions on its own threads. It gets a
// runtime/cgo.Handle as user_data (an integer, so no Go pointer reaches C), and
// the C trampolines of bridge.c call the exported functions below, which
// recover a panic and turn it and any error into a status for C, keeping the Go
// value for the caller of Run or MergeCall.

// ReplicaError is how Run and MergeCall report a replica function that failed:
// which replica, the status C saw, the function's error (Unwrap) and, when it
// panicked, the panic value.
type ReplicaError struct {
	Replica int
	Status  Status
	Err     error
	Panic   any // non-nil when the function panicked
}

func (e *ReplicaError) Error() string { return fmt.Sprintf("replica %d: %v", e.Replica, e.Err) }
func (e *ReplicaError) Unwrap() error { return e.Err }

// Is matches the status, as *Error does.
func (e *ReplicaError) Is(target error) bool {
	s, ok := target.(Status)
	return ok && s == e.Status
}

// failureSlot keeps the failure of the callbacks of one C call.
type failureSlot struct {
	mu    sync.Mutex
	first *ReplicaError
}

// guard runs fn as replica `replica` and returns the status for C: a library
// error keeps its status; another error, or a panic, is ErrAborted.
func (f *failureSlot) guard(replica int, fn func() error) (status C.dist_status_t) {
	defer func() {
		if v := recover(); v != nil {
			f.record(&ReplicaError{Replica: replica, Status: ErrAborted, Err: fmt.Errorf("panic: %v", v), Panic: v})
			status = C.DIST_ERR_ABORTED
		}
	}()
	err := fn()
	if err == nil {
		return C.DIST_OK
	}
	var already *ReplicaError
	if errors.As(err, &already) {
		f.record(already)
		return C.dist_status_t(already.Status)
	}
	failure := &ReplicaError{Replica: replica, Status: ErrAborted, Err: err}
	var e *Error
	if errors.As(err, &e) {
		failure.Status = e.Status
	}
	f.record(failure)
	return C.dist_status_t(failure.Status)
}

// record keeps the first failure, except that a panic replaces an error: the
// other replicas' errors (ErrAborted, a failed merge call) are its consequences.
func (f *failureSlot) record(e *ReplicaError) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.first == nil || (f.first.Panic == nil && e.Panic != nil) {
		f.first = e
	}
}

// result is the error of the C call: the callback's own failure when there was
// one, else the library's.
func (f *failureSlot) result(err error) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.first != nil {
		return f.first
	}
	return err
}

type runState struct {
	fn func(*Replica) error
	failureSlot
}

//export goReplicaCall
func goReplicaCall(replica *C.dist_replica_context_t, handle C.uintptr_t) C.dist_status_t {
	state := cgo.Handle(handle).Value().(*runState)
	r := &Replica{raw: replica}
	defer r.invalidate()
	id, _ := r.ID()
	return state.guard(id, func() error { return state.fn(r) })
}

type mergeState struct {
	fn func(*Strategy, []any) error
	failureSlot
}

//export goMergeCall
func goMergeCall(strategy *C.dist_strategy_t, values *C.uintptr_t, n C.int32_t, handle C.uintptr_t) C.dist_status_t {
	state := cgo.Handle(handle).Value().(*mergeState)
	handles := unsafe.Slice(values, int(n))
	all := make([]any, len(handles))
	for i, h := range handles {
		all[i] = cgo.Handle(h).Value().(mergeValue).value
	}
	return state.guard(0, func() error { return state.fn(&Strategy{borrowed: strategy}, all) })
}

// mergeValue boxes a merge value, so that a nil interface still gets a handle.
type mergeValue struct{ value any }
