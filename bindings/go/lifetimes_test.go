package distribute

import (
	"errors"
	"runtime"
	"testing"
	"time"
)

func TestCloseTwiceAndUseAfterClose(t *testing.T) {
	c := must(ClusterFromJSON(`{"cluster": {"worker": ["a:1"]}}`))
	c.Close()
	c.Close()
	if _, err := c.NumTasks("worker"); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("use after close: %v", err)
	}
}

func TestContextClosesItsCommunicatorsFirst(t *testing.T) {
	cluster := must(ClusterFromJSON("{}"))
	defer cluster.Close()
	context := must(NewContext(cluster, nil))
	w := must(context.World())
	child := must(w.Split(0, 0))
	if none := must(w.Split(-1, 0)); none != nil {
		t.Error("a negative color gives no communicator")
	}
	context.Close()
	child.Close() // after its context: a no-op
	context.Close()
	if err := AllReduce(child, nil, []float32{1}, OpSum); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("a closed communicator: %v", err)
	}
	if _, err := context.Rank(); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("a closed context: %v", err)
	}
}

func TestRequestCloseWaitsAndFreesOnce(t *testing.T) {
	w := world(t)
	data := []float64{1.5, 2.5}
	r := must(AllReduceAsync(w, nil, data, OpMax))
	r.Close()
	r.Close()
	out := make([]int32, 3)
	r = must(AllReduceAsync(w, []int32{4, 5, 6}, out, OpSum))
	if err := r.Wait(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	r.Close()
	if out[2] != 6 {
		t.Errorf("copied back %v", out)
	}
}

// Unclosed handles are released by finalizers, each after the handles that
// depend on it (request, then communicator, then context); a wrong order would
// destroy a context under its communicators and crash.
func TestGarbageCollectedHandles(t *testing.T) {
	for i := 0; i < 100; i++ {
		cluster := must(ClusterFromJSON("{}"))
		context := must(NewContext(cluster, nil))
		child := must(must(context.World()).Split(0, 0))
		must(AllReduceAsync(child, nil, []float32{1, 2}, OpSum))
	}
	for i := 0; i < 5; i++ { // each GC cycle finalizes one more layer
		runtime.GC()
		time.Sleep(20 * time.Millisecond)
	}
}

func TestAbortFailsLaterCalls(t *testing.T) {
	_, context := single(t)
	w := must(context.World())
	if err := context.Abort("test says stop"); err != nil {
		t.Fatal(err)
	}
	err := w.Barrier()
	var e *Error
	if !errors.As(err, &e) || e.Status != ErrAborted || !e.PeerFailure() {
		t.Fatalf("got %v", err)
	}
}
