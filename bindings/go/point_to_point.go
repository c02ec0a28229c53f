package distribute

// #include <stdlib.h>
// #include "dist.h"
import "C"

import (
	"math"
	"unsafe"
)

// Point-to-point messages between two ranks of a communicator (dist_send,
// dist_recv), apart from its collectives: a receive matches the oldest unmatched
// send from its peer with the same tag; one (peer, tag) keeps the order sent. A
// matched pair must agree on dtype and count, else the receive fails with
// ErrMismatch naming both sides. Each call ends by the communicator's deadline at
// the latest. Blocking calls pass the slice to C for the call only; the *Async
// calls work on a C copy (cgo forbids C keeping Go pointers), copied back into a
// receive's slice when it completes.

const (
	// AnySource as a receive's peer matches a send from any rank (Recv's result
	// and Request.Source say which).
	AnySource = int(C.DIST_ANY_SOURCE)
	// TagMax is the largest tag: tags are 0 .. TagMax.
	TagMax = int(C.DIST_TAG_MAX)
)

// int32s converts the peer and tag, refusing values C's int32_t cannot hold.
func int32s(function string, peer, tag int) (C.int32_t, C.int32_t, error) {
	for _, v := range []int{peer, tag} {
		if v < math.MinInt32 || v > math.MaxInt32 {
			return 0, 0, invalid("%s: peer %d or tag %d does not fit in 32 bits", function, peer, tag)
		}
	}
	return C.int32_t(peer), C.int32_t(tag), nil
}

// p2p issues one send or receive: blocking on the slice itself, or on a C copy
// that the returned request owns.
func p2p[T Element](c *Comm, isSend bool, data []T, peer, tag int, async bool) (*Request, error) {
	function, kind := "Recv", C.int(0)
	if isSend {
		function, kind = "Send", 1
	}
	p, t, err := int32s(function, peer, tag)
	if err != nil {
		return nil, err
	}
	dtype := C.dist_dtype_t(DTypeOf[T]())
	issue := func(buffer unsafe.Pointer, out **C.dist_request_t) error {
		return c.locked(func(h *C.dist_comm_t) C.dist_status_t {
			return C.go_p2p(kind, h, buffer, C.uint64_t(len(data)), dtype, p, t, out)
		})
	}
	if !async {
		return nil, issue(dataOf(data), nil)
	}
	buffer := cCopy(data, C.size_t(unsafe.Sizeof(*new(T))))
	var raw *C.dist_request_t
	if err := issue(buffer, &raw); err != nil {
		C.free(buffer)
		return nil, err
	}
	var copyBack func()
	if !isSend {
		copyBack = copyInto(data, buffer)
	}
	return newRequest(raw, c, []unsafe.Pointer{buffer}, copyBack), nil
}

// Send sends data to rank peer with tag; it returns when data may be reused.
func Send[T Element](c *Comm, data []T, peer, tag int) error {
	_, err := p2p(c, true, data, peer, tag, false)
	return err
}

// Recv receives into data (exactly as many elements as were sent) from rank peer,
// or from any rank with AnySource, and returns the rank it came from.
func Recv[T Element](c *Comm, data []T, peer, tag int) (int, error) {
	if peer != AnySource {
		_, err := p2p(c, false, data, peer, tag, false)
		return peer, err
	}
	_, t, err := int32s("Recv", peer, tag)
	if err != nil {
		return 0, err
	}
	var source C.int32_t
	err = c.locked(func(h *C.dist_comm_t) C.dist_status_t {
		return C.go_recv_with_source(h, dataOf(data), C.uint64_t(len(data)), C.dist_dtype_t(DTypeOf[T]()),
			C.DIST_ANY_SOURCE, t, &source)
	})
	return int(source), err
}

// SendAsync starts a send of a copy of data (data may be reused at once).
func SendAsync[T Element](c *Comm, data []T, peer, tag int) (*Request, error) {
	return p2p(c, true, data, peer, tag, true)
}

// RecvAsync starts a receive; data is written when the request completes (Wait,
// or before OnComplete's function runs), and Request.Source tells the sender.
func RecvAsync[T Element](c *Comm, data []T, peer, tag int) (*Request, error) {
	return p2p(c, false, data, peer, tag, true)
}
