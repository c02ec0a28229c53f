package distribute

import (
	"errors"
	"reflect"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Completion callbacks (Request.OnComplete) on receives, sends and collectives
// between two ranks on two goroutines: each runs exactly once, also when its
// request was closed (or collected) before the call completed; the result is in
// the receive's slice when it runs; a failed call reaches it as the library's
// *Error; a second callback is refused.

const patience = 60 * time.Second

// counted is a callback that counts its calls and reports each result.
func counted(calls *int32, results chan<- error) func(error) {
	return func(err error) {
		atomic.AddInt32(calls, 1)
		results <- err
	}
}

func TestACallbackRunsOnceAfterItsRequestWasClosed(t *testing.T) {
	var calls int32
	var result error
	var data []float64
	noErrors(t, twoRanks(t, func(rank int, world *Comm, step func()) error {
		if rank == 0 {
			step() // rank 1 has registered its callback and closed its receive
			return Send(world, message(0, 7, 300), 1, 3)
		}
		results := make(chan error, 2)
		data = make([]float64, 300)
		r, err := RecvAsync(world, data, 0, 3)
		if err != nil {
			return err
		}
		if err := r.OnComplete(counted(&calls, results)); err != nil {
			return err
		}
		r.Close() // before the peer sent: the C buffer waits for the callback
		step()
		select {
		case result = <-results:
		case <-time.After(patience):
			t.Error("the callback never ran")
		}
		select {
		case <-results:
			t.Error("a second call")
		case <-time.After(200 * time.Millisecond):
		}
		return nil
	}))
	if calls != 1 || result != nil {
		t.Fatalf("%d calls, result %v", calls, result)
	}
	if !reflect.DeepEqual(data, message(0, 7, 300)) {
		t.Error("the received data was not copied into the slice before the callback ran")
	}
}

func TestACallbackOfACollectedRequestStillRuns(t *testing.T) {
	var calls int32
	results := make(chan error, 1)
	noErrors(t, twoRanks(t, func(rank int, world *Comm, step func()) error {
		if rank == 0 {
			step()
			return Send(world, []int32{1, 2, 3}, 1, 0)
		}
		func() { // the request becomes unreachable: its finalizer frees the handle
			r, err := RecvAsync(world, make([]int32, 3), 0, 0)
			if err == nil {
				err = r.OnComplete(counted(&calls, results))
			}
			if err != nil {
				t.Error(err)
			}
		}()
		for i := 0; i < 3; i++ {
			runtime.GC()
		}
		step()
		select {
		case err := <-results:
			return err
		case <-time.After(patience):
			return errors.New("the callback of a collected request never ran")
		}
	}))
	if calls != 1 {
		t.Errorf("%d calls", calls)
	}
}

func TestAFailedReceiveReachesTheCallbackAsTheLibrarysError(t *testing.T) {
	var fromCallback, fromWait error
	noErrors(t, twoRanks(t, func(rank int, world *Comm, _ func()) error {
		if rank == 0 {
			return Send(world, []uint8{1, 2, 3}, 1, 1)
		}
		var calls int32
		results := make(chan error, 1)
		r, err := RecvAsync(world, make([]uint8, 4), 0, 1)
		if err != nil {
			return err
		}
		defer r.Close()
		if err := r.OnComplete(counted(&calls, results)); err != nil {
			return err
		}
		select {
		case fromCallback = <-results:
		case <-time.After(patience):
			return errors.New("the callback never ran")
		}
		fromWait = r.Wait(-1)
		return nil
	}))
	var e, w *Error
	if !errors.As(fromCallback, &e) || e.Status != ErrMismatch || e.Message == "" {
		t.Fatalf("the callback saw %v", fromCallback)
	}
	if !errors.As(fromWait, &w) || w.Status != e.Status || !strings.HasSuffix(w.Message, e.Message) {
		t.Errorf("Wait says %v, the callback %v", fromWait, fromCallback)
	}
}

func TestAPendingCallbackGetsTheLibrarysErrorWhenItsContextGoes(t *testing.T) {
	var calls int32
	results := make(chan error, 2)
	noErrors(t, twoRanks(t, func(rank int, world *Comm, _ func()) error {
		if rank == 0 {
			return nil // never sends
		}
		r, err := RecvAsync(world, make([]uint8, 4), 0, 77)
		if err != nil {
			return err
		}
		if err := r.OnComplete(counted(&calls, results)); err != nil {
			return err
		}
		return r.Close() // the context closes after this
	}))
	select {
	case err := <-results:
		var e *Error
		if !errors.As(err, &e) || e.Status != ErrAborted || !strings.Contains(e.Message, "destroyed") {
			t.Fatalf("want ErrAborted naming the destroyed communicator, got %v", err)
		}
	case <-time.After(patience):
		t.Fatal("the callback never ran")
	}
	if atomic.LoadInt32(&calls) != 1 {
		t.Errorf("%d calls", calls)
	}
}

func TestACallbackOnAFinishedRequestRunsAtOnce(t *testing.T) {
	w := world(t)
	out := make([]float32, 4)
	r := must(AllReduceAsync(w, []float32{1, 2, 3, 4}, out, OpSum))
	defer r.Close()
	if err := r.Wait(patience); err != nil {
		t.Fatal(err)
	}
	var calls int32
	results := make(chan error, 1)
	if err := r.OnComplete(counted(&calls, results)); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-results:
		if err != nil || calls != 1 {
			t.Fatalf("%d calls, %v", calls, err)
		}
	default:
		t.Fatal("a callback on a finished request runs during OnComplete")
	}
	if !reflect.DeepEqual(out, []float32{1, 2, 3, 4}) {
		t.Errorf("result %v", out)
	}
}

func TestASecondCallbackAndANilOneAreRefused(t *testing.T) {
	w := world(t)
	r := must(w.BarrierAsync())
	var first, second int32
	results := make(chan error, 2)
	if err := r.OnComplete(counted(&first, results)); err != nil {
		t.Fatal(err)
	}
	err := r.OnComplete(counted(&second, results))
	var e *Error
	if !errors.As(err, &e) || e.Status != ErrInvalidArgument || e.Message == "" {
		t.Errorf("a second callback: %v", err)
	}
	if err := r.OnComplete(nil); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("a nil callback: %v", err)
	}
	if err := r.Wait(-1); err != nil {
		t.Fatal(err)
	}
	r.Close()
	if err := <-results; err != nil {
		t.Fatal(err)
	}
	if err := r.OnComplete(func(error) {}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("a closed request: %v", err)
	}
	if atomic.LoadInt32(&first) != 1 || atomic.LoadInt32(&second) != 0 {
		t.Errorf("calls: first %d, second %d", first, second)
	}
}
