package distribute

import (
	"encoding/json"
	"errors"
	"testing"
)

// flightRecord is the part of dist_context_dump's JSON the tests read.
type flightRecord struct {
	Rank          *int   `json:"rank"`
	Size          int    `json:"size"`
	Task          string `json:"task"`
	LostPeers     []any  `json:"lost_peers"`
	Communicators []struct {
		ID            *int   `json:"id"`
		Path          string `json:"path"`
		CallsStarted  int    `json:"calls_started"`
		CallsFinished int    `json:"calls_finished"`
		Calls         []struct {
			Seq   int    `json:"seq"`
			Kind  string `json:"kind"`
			Dtype string `json:"dtype"`
			Count int    `json:"count"`
			Op    string `json:"op"`
			State string `json:"state"`
		} `json:"calls"`
	} `json:"communicators"`
}

func TestDumpAfterTwoAllReducesAndABarrier(t *testing.T) {
	_, context := single(t)
	w := must(context.World())
	// A deterministic float sum runs as an all_to_all and an all_gather, which the
	// recorder lists instead: pin the default order whatever DIST_DETERMINISTIC says.
	if err := w.Configure(CommOptions{Deterministic: Ptr(false)}); err != nil {
		t.Fatal(err)
	}
	data := []float32{1, 2, 3, 4, 5}
	out := make([]float32, len(data))
	for _, op := range []Op{OpSum, OpMax} {
		if err := AllReduce(w, data, out, op); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Barrier(); err != nil {
		t.Fatal(err)
	}
	text, err := context.Dump()
	if err != nil {
		t.Fatal(err)
	}
	var dump flightRecord
	if err := json.Unmarshal([]byte(text), &dump); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, text)
	}
	if dump.Rank == nil || *dump.Rank != 0 || dump.Size != 1 || dump.LostPeers == nil || len(dump.LostPeers) != 0 {
		t.Errorf("this rank:\n%s", text)
	}
	if len(dump.Communicators) != 1 {
		t.Fatalf("communicators:\n%s", text)
	}
	comm := dump.Communicators[0]
	if comm.ID == nil || *comm.ID != 0 || comm.Path != "self" || comm.CallsStarted != 3 || comm.CallsFinished != 3 ||
		len(comm.Calls) != 3 {
		t.Fatalf("the world:\n%s", text)
	}
	first, last := comm.Calls[0], comm.Calls[2]
	if first.Kind != "all_reduce" || first.Count != 5 || first.Dtype != "f32" || first.Op != "sum" || first.State != "done" {
		t.Errorf("first call %+v", first)
	}
	if last.Kind != "barrier" || last.State != "done" || last.Seq != 2 {
		t.Errorf("last call %+v", last)
	}
}

func TestDumpOfAClosedContextIsRefused(t *testing.T) {
	_, context := single(t)
	// Another goroutine may read the recorder at any time.
	done := make(chan error)
	go func() {
		_, err := context.Dump()
		done <- err
	}()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	context.Close()
	if _, err := context.Dump(); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("Dump of a closed context: %v", err)
	}
}
