package distribute

// #include "dist.h"
import "C"

import (
	"runtime/cgo"
	"sync"
	"unsafe"
)

// Run calls fn once per local replica, each on its own library thread, and
// returns when all have returned. A replica that returns an error or panics
// fails the run (replicas waiting for it are released with ErrAborted); Run
// then returns a *ReplicaError naming it, with the panic value if it panicked.
// fn runs on C threads: it must use its Replica only on that call's goroutine.
func (s *Strategy) Run(fn func(r *Replica) error) error {
	h := s.raw()
	state := &runState{fn: fn}
	handle := cgo.NewHandle(state)
	defer handle.Delete()
	err := call(func() C.dist_status_t { return C.go_strategy_run(h, C.uintptr_t(handle)) })
	if err == nil {
		return nil
	}
	return state.result(err)
}

// Replica is the replica a replica function runs as, valid during that call only.
type Replica struct {
	mu  sync.Mutex
	raw *C.dist_replica_context_t
}

func (r *Replica) invalidate() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.raw = nil
}

func (r *Replica) handle() *C.dist_replica_context_t {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.raw
}

func (r *Replica) int32Query(f func(h *C.dist_replica_context_t, out *C.int32_t) C.dist_status_t) (int, error) {
	h := r.handle()
	var v C.int32_t
	err := call(func() C.dist_status_t { return f(h, &v) })
	return int(v), err
}

// ID is the replica's id in the sync group: worker rank * local replicas + local index.
func (r *Replica) ID() (int, error) {
	return r.int32Query(func(h *C.dist_replica_context_t, out *C.int32_t) C.dist_status_t { return C.dist_replica_id(h, out) })
}

func (r *Replica) NumReplicasInSync() (int, error) {
	return r.int32Query(func(h *C.dist_replica_context_t, out *C.int32_t) C.dist_status_t {
		return C.dist_replica_num_replicas_in_sync(h, out)
	})
}

func (r *Replica) LocalIndex() (int, error) {
	return r.int32Query(func(h *C.dist_replica_context_t, out *C.int32_t) C.dist_status_t {
		return C.dist_replica_local_index(h, out)
	})
}

// Device is the CUDA device ordinal (under CUDA_VISIBLE_DEVICES) this replica
// drives, its thread's current device while the replica function runs; -1 for a
// CPU replica.
func (r *Replica) Device() (int, error) {
	return r.int32Query(func(h *C.dist_replica_context_t, out *C.int32_t) C.dist_status_t {
		return C.dist_replica_device(h, out)
	})
}

// Stream is the replica's CUDA stream (a cudaStream_t owned by the strategy, the
// same in every run) as an opaque C pointer, to order the caller's own device
// work with; nil for a CPU replica.
func (r *Replica) Stream() (unsafe.Pointer, error) {
	h := r.handle()
	var stream unsafe.Pointer
	err := call(func() C.dist_status_t { return C.dist_replica_stream(h, &stream) })
	return stream, err
}

// Strategy is the strategy being run (borrowed: its Close is a no-op).
func (r *Replica) Strategy() (*Strategy, error) {
	h := r.handle()
	var s *C.dist_strategy_t
	if err := call(func() C.dist_status_t { return C.dist_replica_strategy(h, &s) }); err != nil {
		return nil, err
	}
	return &Strategy{borrowed: s}, nil
}

// MergeCall: every local replica calls it with its value; once all have arrived,
// local replica 0's fn runs once in cross-replica context with every replica's
// value (local replica order), and each call returns fn's result.
func (r *Replica) MergeCall(value any, fn func(s *Strategy, values []any) error) error {
	h := r.handle()
	state := &mergeState{fn: fn}
	stateHandle, valueHandle := cgo.NewHandle(state), cgo.NewHandle(mergeValue{value})
	defer stateHandle.Delete()
	defer valueHandle.Delete()
	err := call(func() C.dist_status_t {
		return C.go_replica_merge_call(h, C.uintptr_t(valueHandle), C.uintptr_t(stateHandle))
	})
	if err == nil {
		return nil
	}
	return state.result(err)
}

func bufferCall[T Element](kind C.int, v *C.dist_variable_t, r *C.dist_replica_context_t, data []T, op Op) error {
	return call(func() C.dist_status_t {
		return C.go_buffer_call(kind, v, r, dataOf(data), C.uint64_t(len(data)), C.dist_dtype_t(DTypeOf[T]()), C.dist_op_t(op))
	})
}

// ReplicaAllReduce all-reduces data in place across every replica in sync (every
// local replica calls it with the same length and op).
func ReplicaAllReduce[T Element](r *Replica, op Op, data []T) error {
	return bufferCall(C.GO_REPLICA_ALL_REDUCE, nil, r.handle(), data, op)
}

// SetResult records this replica's result of the run (copied), for LocalResults.
func SetResult[T Element](r *Replica, value []T) error {
	return bufferCall(C.GO_SET_RESULT, nil, r.handle(), value, OpSum)
}
