package distribute

import (
	"testing"
	"time"
)

// step is a barrier between the ranks of one test, outside any exchange.
func (s *sharedSlots) step() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.barrier()
}

// twoRanks runs body for ranks 0 and 1 of two contexts joined in this process
// through sharedSlots, each on its own goroutine, and returns what each returned;
// step lets the ranks order steps between them. Every call fails by the
// communicators' 30 s deadline, so a test that goes wrong ends.
func twoRanks(t *testing.T, body func(rank int, world *Comm, step func()) error) []error {
	t.Helper()
	exchange, steps := newSharedSlots(2), newSharedSlots(2)
	return onGoroutines(2, func(rank int) error {
		options := &ContextOptions{Token: "go-two-ranks-test-token", ConnectTimeout: 60 * time.Second,
			Timeout: 30 * time.Second}
		context, err := NewContextFromExchange(rank, 2, exchange.forRank(rank), options)
		if err != nil {
			return err
		}
		defer context.Close()
		world, err := context.World()
		if err != nil {
			return err
		}
		return body(rank, world, steps.step)
	})
}

// noErrors fails the test for any rank's error.
func noErrors(t *testing.T, errs []error) {
	t.Helper()
	for rank, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v", rank, err)
		}
	}
}
