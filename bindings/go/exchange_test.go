package distribute

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// Contexts built through an exchange written in Go: two contexts in this
// process, ranks 0 and 1 on two goroutines, whose all-gather is a barrier and
// shared slots, then a real all-reduce between them; exchanges that fail, panic,
// answer wrongly or never answer; bad arguments.

func exchangeOptions(connectTimeout time.Duration) *ContextOptions {
	return &ContextOptions{Token: "go-exchange-test-token", ConnectTimeout: connectTimeout}
}

// sharedSlots is an all-gather between goroutines: each rank puts its bytes in
// its slot and waits at the barrier; then every slot is read, and a second
// barrier keeps a fast rank's next gather from overwriting a slot before the
// others read it.
type sharedSlots struct {
	mu      sync.Mutex
	cond    *sync.Cond
	slots   [][]byte
	calls   []int
	arrived int
	phase   int
}

func newSharedSlots(size int) *sharedSlots {
	s := &sharedSlots{slots: make([][]byte, size), calls: make([]int, size)}
	s.cond = sync.NewCond(&s.mu)
	return s
}

// barrier waits, with s.mu held, until every rank has arrived.
func (s *sharedSlots) barrier() {
	phase := s.phase
	s.arrived++
	if s.arrived == len(s.slots) {
		s.arrived, s.phase = 0, phase+1
		s.cond.Broadcast()
		return
	}
	for s.phase == phase {
		s.cond.Wait()
	}
}

func (s *sharedSlots) forRank(rank int) ExchangeFunc {
	return func(data []byte) ([][]byte, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.calls[rank]++
		s.slots[rank] = data
		s.barrier()
		everyone := append([][]byte(nil), s.slots...)
		s.barrier()
		return everyone, nil
	}
}

// onGoroutines runs body(rank) on one goroutine per rank; its errors by rank.
func onGoroutines(size int, body func(rank int) error) []error {
	errs := make([]error, size)
	var wg sync.WaitGroup
	for rank := 0; rank < size; rank++ {
		wg.Add(1)
		go func(rank int) {
			defer wg.Done()
			errs[rank] = body(rank)
		}(rank)
	}
	wg.Wait()
	return errs
}

func TestTwoRanksJoinThroughAGoAllGatherAndAllReduce(t *testing.T) {
	exchange := newSharedSlots(2)
	input := func(rank int) []float64 {
		data := make([]float64, 4099)
		for i := range data {
			data[i] = float64(i*(rank+1)) - 7*float64(rank)
		}
		return data
	}
	results := make([][]float64, 2)
	errs := onGoroutines(2, func(rank int) error {
		context, err := NewContextFromExchange(rank, 2, exchange.forRank(rank), exchangeOptions(60*time.Second))
		if err != nil {
			return err
		}
		defer context.Close()
		if r, _ := context.Rank(); r != rank {
			return fmt.Errorf("rank %d, want %d", r, rank)
		}
		if s, _ := context.Size(); s != 2 {
			return fmt.Errorf("size %d, want 2", s)
		}
		world, err := context.World()
		if err != nil {
			return err
		}
		data := input(rank)
		if err := AllReduce(world, nil, data, OpSum); err != nil {
			return err
		}
		count := []int32{int32(rank + 1)}
		if err := AllReduce(world, nil, count, OpMax); err != nil {
			return err
		}
		if count[0] != 2 {
			return fmt.Errorf("max of ranks+1 is %d", count[0])
		}
		results[rank] = data
		return nil
	})
	for rank, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v", rank, err)
		}
	}
	a, b := input(0), input(1)
	for rank, data := range results {
		for i := range data {
			if data[i] != a[i]+b[i] {
				t.Fatalf("rank %d: element %d is %v, want %v", rank, i, data[i], a[i]+b[i])
			}
		}
	}
	if exchange.calls[0] != exchange.calls[1] || exchange.calls[0] < 1 {
		t.Errorf("all-gather calls %v", exchange.calls)
	}
}

func TestOneRankJoinsAlone(t *testing.T) {
	context, err := NewContextFromExchange(0, 1, func(data []byte) ([][]byte, error) { return [][]byte{data}, nil },
		exchangeOptions(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer context.Close()
	world, err := context.World()
	if err != nil {
		t.Fatal(err)
	}
	data := []float32{1.5, -2}
	if err := AllReduce(world, nil, data, OpSum); err != nil || data[0] != 1.5 || data[1] != -2 {
		t.Fatalf("%v %v", data, err)
	}
}

type storeError struct{ rank int }

func (e *storeError) Error() string { return fmt.Sprintf("store unreachable from rank %d", e.rank) }

func TestAnExchangeThatFailsFailsTheJoinWithItsError(t *testing.T) {
	start := time.Now()
	errs := onGoroutines(2, func(rank int) error {
		_, err := NewContextFromExchange(rank, 2, func([]byte) ([][]byte, error) { return nil, &storeError{rank} },
			exchangeOptions(60*time.Second))
		return err
	})
	if elapsed := time.Since(start); elapsed > 30*time.Second {
		t.Errorf("a failed exchange must not wait for the connect deadline (%v)", elapsed)
	}
	for rank, err := range errs {
		var exchangeErr *ExchangeError
		var store *storeError
		var library *Error
		switch {
		case !errors.As(err, &exchangeErr):
			t.Fatalf("rank %d: want *ExchangeError, got %v", rank, err)
		case !errors.As(err, &store) || store.rank != rank:
			t.Errorf("rank %d: the ExchangeFunc's error is not reachable: %v", rank, err)
		case !errors.As(err, &library) || library.Status >= 0 || !errors.Is(err, library.Status):
			t.Errorf("rank %d: no library status: %v", rank, err)
		case !strings.Contains(strings.ToLower(exchangeErr.Message), "exchange"):
			t.Errorf("rank %d: the message does not say the exchange failed: %q", rank, exchangeErr.Message)
		case !strings.Contains(err.Error(), fmt.Sprintf("store unreachable from rank %d", rank)):
			t.Errorf("rank %d: %q", rank, err.Error())
		}
	}
}

func TestAPanicInTheExchangeFailsTheJoin(t *testing.T) {
	_, err := NewContextFromExchange(0, 2, func([]byte) ([][]byte, error) { panic("the store went away") },
		exchangeOptions(30*time.Second))
	var exchangeErr *ExchangeError
	if !errors.As(err, &exchangeErr) || exchangeErr.Panic != "the store went away" {
		t.Fatalf("got %v", err)
	}
}

func TestAnAnswerOfTheWrongShapeFailsTheJoin(t *testing.T) {
	cases := []struct {
		answer   func(data []byte) [][]byte
		expected string
	}{
		{func(data []byte) [][]byte { return [][]byte{data} }, "1 items for 2 ranks"},
		{func(data []byte) [][]byte { return [][]byte{data, append(append([]byte(nil), data...), '!')} }, "expected"},
		{func(data []byte) [][]byte { return [][]byte{make([]byte, len(data)), data} }, "other bytes than this rank sent"},
	}
	for _, c := range cases {
		answer := c.answer
		_, err := NewContextFromExchange(0, 2, func(data []byte) ([][]byte, error) { return answer(data), nil },
			exchangeOptions(30*time.Second))
		var exchangeErr *ExchangeError
		if !errors.As(err, &exchangeErr) || !strings.Contains(exchangeErr.Err.Error(), c.expected) {
			t.Errorf("want %q, got %v", c.expected, err)
		}
	}
}

func TestAnExchangeThatNeverAnswersEndsAtTheConnectDeadline(t *testing.T) {
	release := make(chan struct{})
	defer close(release) // its late answer is dropped
	start := time.Now()
	_, err := NewContextFromExchange(0, 2, func(data []byte) ([][]byte, error) {
		<-release
		return [][]byte{data, data}, nil
	}, exchangeOptions(time.Second))
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("want ErrTimeout, got %v", err)
	}
	if elapsed := time.Since(start); elapsed > 11*time.Second {
		t.Errorf("took %v", elapsed)
	}
}

func TestBadExchangeArgumentsAreRefused(t *testing.T) {
	echo := func(data []byte) ([][]byte, error) { return [][]byte{data}, nil }
	for _, c := range []struct {
		rank, size int
		field      string
	}{{2, 2, "rank"}, {-1, 2, "rank"}, {0, 0, "size"}, {1 << 40, 2, "32 bits"}} {
		_, err := NewContextFromExchange(c.rank, c.size, echo, exchangeOptions(30*time.Second))
		if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), c.field) {
			t.Errorf("rank %d size %d: %v", c.rank, c.size, err)
		}
	}
	if _, err := NewContextFromExchange(0, 1, nil, nil); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("nil ExchangeFunc: %v", err)
	}
}
