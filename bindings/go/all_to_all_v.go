package distribute

// #include <stdlib.h>
// #include "dist.h"
import "C"

import "unsafe"

// The uneven all-to-all (dist_all_to_all_v): rank i sends its block j to rank j,
// which receives it as its block i; each block has its own length.

// Blocks places one count per communicator rank (elements; zeros allowed) in a
// buffer of an uneven all-to-all; Offsets nil packs the blocks in rank order,
// else block j starts at element Offsets[j].
type Blocks struct {
	Counts  []int
	Offsets []int
}

// Extent is the number of elements a buffer needs to hold every block.
func (b Blocks) Extent() int {
	extent, packed := 0, 0
	for j, count := range b.Counts {
		start := packed
		if j < len(b.Offsets) {
			start = b.Offsets[j]
		}
		packed += count
		if start+count > extent {
			extent = start + count
		}
	}
	return extent
}

// cArrays copies counts and offsets into C memory after checking their lengths
// (C reads one entry per rank) and signs; the caller frees both (nil offsets: packed).
func (b Blocks) cArrays(which string, size int) (counts, offsets unsafe.Pointer, err error) {
	if len(b.Counts) != size || (b.Offsets != nil && len(b.Offsets) != size) {
		return nil, nil, invalid("AllToAllV: %s has %d counts and %d offsets for a communicator of %d ranks",
			which, len(b.Counts), len(b.Offsets), size)
	}
	for j := range b.Counts {
		if b.Counts[j] < 0 || (b.Offsets != nil && b.Offsets[j] < 0) {
			return nil, nil, invalid("AllToAllV: %s block %d has a negative count or offset", which, j)
		}
	}
	return cArray(uint64s(b.Counts)), cArray(uint64s(b.Offsets)), nil
}

func uint64s(values []int) []uint64 {
	if values == nil {
		return nil
	}
	out := make([]uint64, len(values))
	for i, v := range values {
		out[i] = uint64(v)
	}
	return out
}

// allToAllV issues the call: blocking on the slices themselves, or on C copies
// that the returned request owns with the block tables.
func allToAllV[T Element](c *Comm, send []T, sendBlocks Blocks, recv []T, recvBlocks Blocks,
	async bool) (*Request, error) {
	size, err := c.Size()
	if err != nil {
		return nil, err
	}
	sendCounts, sendOffsets, err := sendBlocks.cArrays("sendBlocks", size)
	if err != nil {
		return nil, err
	}
	recvCounts, recvOffsets, err := recvBlocks.cArrays("recvBlocks", size)
	if err != nil {
		freeAll([]unsafe.Pointer{sendCounts, sendOffsets})
		return nil, err
	}
	memory := []unsafe.Pointer{sendCounts, sendOffsets, recvCounts, recvOffsets}
	sendData, recvData := dataOf(send), dataOf(recv)
	if async {
		elementSize := C.size_t(unsafe.Sizeof(*new(T)))
		sendData, recvData = cCopy(send, elementSize), cCopy(recv, elementSize)
		memory = append(memory, sendData, recvData)
	}
	var raw *C.dist_request_t
	out := (**C.dist_request_t)(nil)
	if async {
		out = &raw
	}
	err = c.locked(func(h *C.dist_comm_t) C.dist_status_t {
		return C.go_all_to_all_v(h, sendData, C.uint64_t(len(send)), (*C.uint64_t)(sendCounts),
			(*C.uint64_t)(sendOffsets), recvData, C.uint64_t(len(recv)), (*C.uint64_t)(recvCounts),
			(*C.uint64_t)(recvOffsets), C.dist_dtype_t(DTypeOf[T]()), out)
	})
	if err != nil || !async {
		freeAll(memory)
		return nil, err
	}
	return newRequest(raw, c, memory, copyInto(recv, recvData)), nil
}

// AllToAllV sends block j of send (as sendBlocks places it) to rank j and receives
// rank j's block for this rank into block j of recv. sendBlocks.Counts[j] on rank
// i must equal recvBlocks.Counts[i] on rank j, else ErrMismatch.
func AllToAllV[T Element](c *Comm, send []T, sendBlocks Blocks, recv []T, recvBlocks Blocks) error {
	_, err := allToAllV(c, send, sendBlocks, recv, recvBlocks, false)
	return err
}

// AllToAllVAsync is the non-blocking form: recv is written when the request
// completes (Wait, or before OnComplete's function runs).
func AllToAllVAsync[T Element](c *Comm, send []T, sendBlocks Blocks, recv []T, recvBlocks Blocks) (*Request, error) {
	return allToAllV(c, send, sendBlocks, recv, recvBlocks, true)
}
