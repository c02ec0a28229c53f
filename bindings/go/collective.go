package distribute

// #include <stdlib.h>
// #include <string.h>
// #include "dist.h"
import "C"

import (
	"unsafe"
)

// The collectives are functions, not methods, because Go methods cannot have type
// parameters. A nil send means in place. Blocking calls pass the slices to C
// directly (C uses them only during the call); the *Async calls copy them into C
// memory, because cgo forbids C keeping Go pointers after a call returns, and
// copy the result back into recv when the request completes.

type collective struct {
	kind  C.int
	op    Op
	root  int
	block bool // in-place reduce-scatter: recv's count is len(recv) / size
}

// run issues one collective, blocking or not.
func run[T Element](c *Comm, k collective, send, recv []T, async bool) (*Request, error) {
	dtype := C.dist_dtype_t(DTypeOf[T]())
	recvCount := len(recv)
	if k.block && send == nil {
		size, err := c.Size()
		if err != nil {
			return nil, err
		}
		if len(recv)%size != 0 {
			return nil, invalid("reduce_scatter: %d elements are not a multiple of the %d ranks", len(recv), size)
		}
		recvCount = len(recv) / size
	}
	hasSend, hasRecv := C.int(0), C.int(0)
	if send != nil {
		hasSend = 1
	}
	if recv != nil {
		hasRecv = 1
	}
	issue := func(s, r unsafe.Pointer, out **C.dist_request_t) error {
		return c.locked(func(h *C.dist_comm_t) C.dist_status_t {
			return C.go_collective(k.kind, h, hasSend, s, C.uint64_t(len(send)), hasRecv, r, C.uint64_t(recvCount),
				dtype, C.dist_op_t(k.op), C.int32_t(k.root), out)
		})
	}
	if !async {
		return nil, issue(dataOf(send), dataOf(recv), nil)
	}
	// C memory for the call's lifetime; Request.Wait copies the result back.
	size := C.size_t(unsafe.Sizeof(*new(T)))
	cSend, cRecv := cCopy(send, size), cCopy(recv, size)
	var raw *C.dist_request_t
	if err := issue(cSend, cRecv, &raw); err != nil {
		C.free(cSend)
		C.free(cRecv)
		return nil, err
	}
	return newRequest(raw, c, []unsafe.Pointer{cSend, cRecv}, copyInto(recv, cRecv)), nil
}

// copyInto copies a request's C result back into recv (nil when there is nothing to copy).
func copyInto[T Element](recv []T, result unsafe.Pointer) func() {
	if len(recv) == 0 {
		return nil
	}
	return func() { C.memcpy(dataOf(recv), result, C.size_t(len(recv))*C.size_t(unsafe.Sizeof(recv[0]))) }
}

// cCopy is a C copy of s (nil for an empty slice).
func cCopy[T Element](s []T, size C.size_t) unsafe.Pointer {
	if len(s) == 0 {
		return nil
	}
	p := C.malloc(C.size_t(len(s)) * size)
	C.memcpy(p, dataOf(s), C.size_t(len(s))*size)
	return p
}

// AllReduce reduces send over all ranks into recv (same length); send nil: in place on recv.
func AllReduce[T Element](c *Comm, send, recv []T, op Op) error {
	_, err := run(c, collective{kind: C.GO_ALL_REDUCE, op: op}, send, recv, false)
	return err
}

// Reduce reduces onto root: recv is needed there only (nil elsewhere); send nil: in place.
func Reduce[T Element](c *Comm, send, recv []T, op Op, root int) error {
	_, err := run(c, collective{kind: C.GO_REDUCE, op: op, root: root}, send, recv, false)
	return err
}

// Broadcast sends data from root to every rank.
func Broadcast[T Element](c *Comm, data []T, root int) error {
	_, err := run(c, collective{kind: C.GO_BROADCAST, root: root}, nil, data, false)
	return err
}

// AllGather puts rank r's send at block r of recv (size*len(send)); send nil: this
// rank's block is already in recv.
func AllGather[T Element](c *Comm, send, recv []T) error {
	_, err := run(c, collective{kind: C.GO_ALL_GATHER}, send, recv, false)
	return err
}

// ReduceScatter gives recv (c elements) block rank of the reduction of send (size*c).
// send nil: recv holds size*c inputs and the result lands in its first c.
func ReduceScatter[T Element](c *Comm, send, recv []T, op Op) error {
	_, err := run(c, collective{kind: C.GO_REDUCE_SCATTER, op: op, block: true}, send, recv, false)
	return err
}

// AllToAll sends block j of send to rank j, landing at block rank of its recv; send nil: in place.
func AllToAll[T Element](c *Comm, send, recv []T) error {
	_, err := run(c, collective{kind: C.GO_ALL_TO_ALL}, send, recv, false)
	return err
}

// The non-blocking forms: recv is written when the request completes (Wait).

func AllReduceAsync[T Element](c *Comm, send, recv []T, op Op) (*Request, error) {
	return run(c, collective{kind: C.GO_ALL_REDUCE, op: op}, send, recv, true)
}

func ReduceAsync[T Element](c *Comm, send, recv []T, op Op, root int) (*Request, error) {
	return run(c, collective{kind: C.GO_REDUCE, op: op, root: root}, send, recv, true)
}

func BroadcastAsync[T Element](c *Comm, data []T, root int) (*Request, error) {
	return run(c, collective{kind: C.GO_BROADCAST, root: root}, nil, data, true)
}

func AllGatherAsync[T Element](c *Comm, send, recv []T) (*Request, error) {
	return run(c, collective{kind: C.GO_ALL_GATHER}, send, recv, true)
}

func ReduceScatterAsync[T Element](c *Comm, send, recv []T, op Op) (*Request, error) {
	return run(c, collective{kind: C.GO_REDUCE_SCATTER, op: op, block: true}, send, recv, true)
}

func AllToAllAsync[T Element](c *Comm, send, recv []T) (*Request, error) {
	return run(c, collective{kind: C.GO_ALL_TO_ALL}, send, recv, true)
}
