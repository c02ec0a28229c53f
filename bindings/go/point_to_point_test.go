package distribute

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// Send and Recv (blocking and not), AnySource and Request.Source, and AllToAllV
// between ranks 0 and 1 of two contexts on two goroutines; mismatches and bad
// arguments. Each rank records what it saw; the checks run after both ended,
// against values computed here.

// message is what rank sends to its peer as message n.
func message(rank, n, length int) []float64 {
	out := make([]float64, length)
	for i := range out {
		out[i] = float64(rank+1)*1000 + float64(n)*10 + float64(i)*0.5
	}
	return out
}

func TestBlockingSendAndRecvCarryDataBothWays(t *testing.T) {
	floats := make([][]float64, 2)
	ints := make([][]int32, 2)
	from := make([]int, 2)
	noErrors(t, twoRanks(t, func(rank int, world *Comm, _ func()) error {
		peer := 1 - rank
		floats[rank], ints[rank] = make([]float64, 1031), make([]int32, 3)
		var err error
		if rank == 0 {
			if err := Send(world, message(0, 0, 1031), peer, 5); err != nil {
				return err
			}
			if err := Send(world, []int32{7, -8, 9}, peer, TagMax); err != nil {
				return err
			}
			if from[rank], err = Recv(world, floats[rank], peer, 0); err != nil {
				return err
			}
			_, err = Recv(world, ints[rank], peer, 1)
			return err
		}
		if from[rank], err = Recv(world, floats[rank], peer, 5); err != nil {
			return err
		}
		if _, err := Recv(world, ints[rank], peer, TagMax); err != nil {
			return err
		}
		if err := Send(world, message(1, 0, 1031), peer, 0); err != nil {
			return err
		}
		return Send(world, []int32{-1 << 31, 0, 1<<31 - 1}, peer, 1)
	}))
	if !reflect.DeepEqual(floats[0], message(1, 0, 1031)) || !reflect.DeepEqual(floats[1], message(0, 0, 1031)) {
		t.Error("float messages differ from what was sent")
	}
	if !reflect.DeepEqual(ints[0], []int32{-1 << 31, 0, 1<<31 - 1}) || !reflect.DeepEqual(ints[1], []int32{7, -8, 9}) {
		t.Errorf("int messages %v", ints)
	}
	if from[0] != 1 || from[1] != 0 {
		t.Errorf("sources %v", from)
	}
}

func TestReceivesMatchByTagAndKeepTheOrderOfOneTag(t *testing.T) {
	var received [][]float64
	noErrors(t, twoRanks(t, func(rank int, world *Comm, _ func()) error {
		if rank == 0 {
			// Non-blocking sends, so that the receiver's order cannot hold them up.
			var requests []*Request
			for _, m := range []struct{ n, tag, length int }{{0, 1, 64}, {1, 2, 64}, {2, 3, 64}, {3, 3, 64}, {4, 4, 0}} {
				r, err := SendAsync(world, message(0, m.n, m.length), 1, m.tag)
				if err != nil {
					return err
				}
				requests = append(requests, r)
			}
			for _, r := range requests {
				if err := r.Wait(-1); err != nil {
					return err
				}
				r.Close()
			}
			return nil
		}
		for _, tag := range []int{4, 3, 2, 3, 1} {
			data := []float64{}
			if tag != 4 {
				data = make([]float64, 64)
			}
			if _, err := Recv(world, data, 0, tag); err != nil {
				return err
			}
			received = append(received, data)
		}
		return nil
	}))
	expected := [][]float64{{}, message(0, 2, 64), message(0, 1, 64), message(0, 3, 64), message(0, 0, 64)}
	if !reflect.DeepEqual(received, expected) {
		t.Errorf("received %v", received)
	}
}

func TestAnySourceReceivesTellTheSender(t *testing.T) {
	var data [3][]uint64
	var sources [3]int
	var sendSource error
	noErrors(t, twoRanks(t, func(rank int, world *Comm, _ func()) error {
		if rank == 1 {
			if err := Send(world, []uint64{11, 12}, 0, 9); err != nil {
				return err
			}
			if err := Send(world, []uint64{13, 14}, 0, 9); err != nil {
				return err
			}
			r, err := SendAsync(world, []uint64{15}, 0, 10)
			if err != nil {
				return err
			}
			defer r.Close()
			if err := r.Wait(-1); err != nil {
				return err
			}
			_, sendSource = r.Source()
			return nil
		}
		var err error
		data[0] = make([]uint64, 2)
		if sources[0], err = Recv(world, data[0], AnySource, 9); err != nil {
			return err
		}
		for i, shape := range []struct{ length, tag int }{{2, 9}, {1, 10}} {
			data[i+1] = make([]uint64, shape.length)
			r, err := RecvAsync(world, data[i+1], AnySource, shape.tag)
			if err != nil {
				return err
			}
			if err := r.Wait(-1); err != nil {
				return err
			}
			if sources[i+1], err = r.Source(); err != nil {
				return err
			}
			r.Close()
		}
		return nil
	}))
	if !reflect.DeepEqual(data, [3][]uint64{{11, 12}, {13, 14}, {15}}) || sources != [3]int{1, 1, 1} {
		t.Errorf("received %v from %v", data, sources)
	}
	if !errors.Is(sendSource, ErrInvalidArgument) {
		t.Errorf("a send has no source: %v", sendSource)
	}
}

func TestACountOrDTypeMismatchFailsTheReceiveWithTheLibrarysMessage(t *testing.T) {
	var count, dtype error
	noErrors(t, twoRanks(t, func(rank int, world *Comm, _ func()) error {
		if rank == 0 { // the sends complete
			if err := Send(world, []float32{1, 1, 1, 1, 1}, 1, 0); err != nil {
				return err
			}
			return Send(world, []int32{1, 1, 1, 1}, 1, 1)
		}
		_, count = Recv(world, make([]float32, 6), 0, 0)
		_, dtype = Recv(world, make([]float32, 4), 0, 1)
		return nil
	}))
	for _, err := range []error{count, dtype} {
		var e *Error
		if !errors.As(err, &e) || e.Status != ErrMismatch || !e.PeerFailure() || e.Message == "" {
			t.Errorf("want ErrMismatch with a message, got %v", err)
		}
	}
	if count != nil && !strings.Contains(count.Error(), "5") {
		t.Errorf("the message names the sender's count: %v", count)
	}
}

func TestBadPeersAndTagsAreRefused(t *testing.T) {
	w := world(t)
	data := []float32{0, 0}
	_, recvSelf := Recv(w, data, 0, 0)
	_, recvNegative := Recv(w, data, -2, 0)
	_, recvAsync := RecvAsync(w, data, 7, 0)
	_, wide := SendAsync(w, data, 0, 1<<40)
	for i, err := range []error{Send(w, data, 0, 0), recvSelf, Send(w, data, 1, 0), recvNegative,
		Send(w, data, AnySource, 0), Send(w, data, 0, -1), recvAsync, wide} {
		var e *Error
		if !errors.As(err, &e) || e.Status != ErrInvalidArgument || e.Message == "" {
			t.Errorf("case %d: want ErrInvalidArgument with a message, got %v", i, err)
		}
	}
	if !strings.Contains(wide.Error(), "32 bits") {
		t.Errorf("a tag too wide for C: %v", wide)
	}
}

// a2aCounts[i][j] is how many elements rank i sends to rank j.
var a2aCounts = [2][2]int{{3, 0}, {4, 5}}

// a2aBlock is what rank from sends to rank to.
func a2aBlock(from, to int) []int64 {
	out := make([]int64, a2aCounts[from][to])
	for k := range out {
		out[k] = int64(from*100+to*10+k) - 50
	}
	return out
}

func TestAllToAllVMovesUnevenBlocksWithZerosPackedAndAtOffsets(t *testing.T) {
	var packed, gapped, started [2][]int64
	noErrors(t, twoRanks(t, func(rank int, world *Comm, _ func()) error {
		send := append(a2aBlock(rank, 0), a2aBlock(rank, 1)...)
		sendBlocks := Blocks{Counts: a2aCounts[rank][:]}
		recvCounts := []int{a2aCounts[0][rank], a2aCounts[1][rank]}
		packed[rank] = make([]int64, recvCounts[0]+recvCounts[1])
		if err := AllToAllV(world, send, sendBlocks, packed[rank], Blocks{Counts: recvCounts}); err != nil {
			return err
		}
		// Into gaps: block 1 first, two untouched elements, then block 0.
		at := Blocks{Counts: recvCounts, Offsets: []int{recvCounts[1] + 2, 0}}
		gapped[rank] = make([]int64, at.Extent())
		for i := range gapped[rank] {
			gapped[rank][i] = -1
		}
		if err := AllToAllV(world, send, sendBlocks, gapped[rank], at); err != nil {
			return err
		}
		started[rank] = make([]int64, len(packed[rank]))
		r, err := AllToAllVAsync(world, send, sendBlocks, started[rank], Blocks{Counts: recvCounts})
		if err != nil {
			return err
		}
		defer r.Close()
		return r.Wait(-1)
	}))
	for rank := 0; rank < 2; rank++ {
		expected := append(a2aBlock(0, rank), a2aBlock(1, rank)...)
		gappedExpected := append(append(a2aBlock(1, rank), -1, -1), a2aBlock(0, rank)...)
		if !reflect.DeepEqual(packed[rank], expected) || !reflect.DeepEqual(started[rank], expected) {
			t.Errorf("rank %d: packed %v, non-blocking %v, want %v", rank, packed[rank], started[rank], expected)
		}
		if !reflect.DeepEqual(gapped[rank], gappedExpected) {
			t.Errorf("rank %d: at offsets %v, want %v", rank, gapped[rank], gappedExpected)
		}
	}
}

func TestAllToAllVCountsThatDisagreeAreAMismatch(t *testing.T) {
	errs := twoRanks(t, func(rank int, world *Comm, _ func()) error {
		// Rank 0 sends 2 elements to rank 1, which expects 3.
		send, recv := Blocks{Counts: []int{1, 2}}, Blocks{Counts: []int{1, 2}}
		if rank == 1 {
			send, recv = Blocks{Counts: []int{2, 1}}, Blocks{Counts: []int{1, 3}}
		}
		return AllToAllV(world, []float32{1.5, 1.5, 1.5}, send, make([]float32, 4), recv)
	})
	seen := 0
	for rank, err := range errs {
		if err == nil {
			continue
		}
		seen++
		var e *Error
		if !errors.As(err, &e) || e.Status != ErrMismatch || e.Message == "" {
			t.Errorf("rank %d: want ErrMismatch, got %v", rank, err)
		}
	}
	if seen == 0 {
		t.Error("no rank saw the mismatch")
	}
}

func TestAllToAllVBadArgumentsAreRefused(t *testing.T) {
	w := world(t)
	send, recv := []uint32{1, 2, 3}, make([]uint32, 3)
	if err := AllToAllV(w, send, Blocks{Counts: []int{3}}, recv, Blocks{Counts: []int{3}}); err != nil ||
		!reflect.DeepEqual(recv, send) {
		t.Fatalf("one rank: a copy, got %v %v", recv, err)
	}
	for _, c := range []struct {
		send, recv Blocks
		expected   string
	}{
		{Blocks{Counts: []int{3, 0}}, Blocks{Counts: []int{3}}, "2 counts"},
		{Blocks{Counts: []int{3}}, Blocks{Counts: []int{3}, Offsets: []int{0, 0}}, "2 offsets"},
		{Blocks{Counts: []int{-1}}, Blocks{Counts: []int{3}}, "negative"},
		{Blocks{Counts: []int{4}}, Blocks{Counts: []int{4}}, ""},
		{Blocks{Counts: []int{3}}, Blocks{Counts: []int{3}, Offsets: []int{1}}, ""},
	} {
		err := AllToAllV(w, send, c.send, recv, c.recv)
		var e *Error
		if !errors.As(err, &e) || e.Status != ErrInvalidArgument || e.Message == "" ||
			!strings.Contains(e.Message, c.expected) {
			t.Errorf("%v -> %v: want ErrInvalidArgument naming %q, got %v", c.send, c.recv, c.expected, err)
		}
	}
}
