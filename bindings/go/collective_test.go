package distribute

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestEachCollectiveOnOneRank(t *testing.T) {
	w := world(t)
	data := []float32{3, -1, 2.5}
	check := func(name string, err error, got []float32) {
		t.Helper()
		if err != nil || !reflect.DeepEqual(got, data) {
			t.Errorf("%s: %v %v", name, err, got)
		}
	}
	out := make([]float32, 3)
	check("all_reduce", AllReduce(w, data, out, OpMean), out)
	out = make([]float32, 3)
	check("reduce", Reduce(w, data, out, OpMin, 0), out)
	b := append([]float32(nil), data...)
	check("broadcast", Broadcast(w, b, 0), b)
	out = make([]float32, 3)
	check("all_gather", AllGather(w, data, out), out)
	out = make([]float32, 3)
	check("reduce_scatter", ReduceScatter(w, data, out, OpSum), out)
	out = make([]float32, 3)
	check("all_to_all", AllToAll(w, data, out), out)
	in := append([]float32(nil), data...)
	for _, err := range []error{ReduceScatter(w, nil, in, OpMax), AllToAll(w, nil, in), AllGather(w, nil, in),
		Reduce(w, nil, in, OpSum, 0)} {
		check("in place", err, in)
	}
	if err := w.Barrier(); err != nil {
		t.Fatal(err)
	}
	if r, s := must(w.Rank()), must(w.Size()); r != 0 || s != 1 {
		t.Errorf("rank %d size %d", r, s)
	}
}

func TestAsyncCollectives(t *testing.T) {
	w := world(t)
	out := make([]int64, 10)
	send := []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	first := must(AllReduceAsync(w, send, out, OpSum))
	bcast := []uint8{7, 7, 7}
	second := must(BroadcastAsync(w, bcast, 0))
	if err := first.Wait(-1); err != nil || !reflect.DeepEqual(out, send) {
		t.Errorf("all_reduce: %v %v", err, out)
	}
	if err := second.Wait(-1); err != nil || !reflect.DeepEqual(bcast, []uint8{7, 7, 7}) {
		t.Errorf("broadcast: %v", err)
	}
	for _, start := range []func() (*Request, error){
		func() (*Request, error) { return ReduceAsync(w, []uint32{1}, make([]uint32, 1), OpSum, 0) },
		func() (*Request, error) { return AllGatherAsync(w, []uint32{1}, make([]uint32, 1)) },
		func() (*Request, error) { return ReduceScatterAsync(w, []uint32{1}, make([]uint32, 1), OpSum) },
		func() (*Request, error) { return AllToAllAsync(w, []uint32{1}, make([]uint32, 1)) },
		w.BarrierAsync,
	} {
		r := must(start())
		if err := r.Wait(30 * time.Second); err != nil {
			t.Error(err)
		}
		if done, err := r.Test(); !done || err != nil {
			t.Errorf("test after wait: %v %v", done, err)
		}
		r.Close()
	}
	first.Close()
	second.Close()
}

func TestWrongArgumentsAreNamed(t *testing.T) {
	w := world(t)
	err := AllReduce(w, make([]float32, 4), make([]float32, 5), OpSum)
	if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "count") {
		t.Errorf("count mismatch: %v", err)
	}
	if err := Broadcast(w, []int32{1, 2}, 5); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("bad root: %v", err)
	}
	timeout, algo := 5*time.Second, AllreduceRing
	if err := w.Configure(CommOptions{Timeout: &timeout, Allreduce: &algo}); err != nil {
		t.Fatal(err)
	}
	bad := AllreduceAlgorithm(42)
	if err := w.Configure(CommOptions{Allreduce: &bad}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("bad algorithm: %v", err)
	}
}

func TestHostsOfOneRank(t *testing.T) {
	w := world(t)
	counts := func(c *Comm) [3]int {
		return [3]int{must(c.LocalRank()), must(c.LocalSize()), must(c.NumHosts())}
	}
	if got := counts(w); got != [3]int{0, 1, 1} {
		t.Errorf("local rank, local size, hosts: %v", got)
	}
	host := must(w.SplitHost())
	if got := [2]int{must(host.Rank()), must(host.Size())}; got != [2]int{0, 1} || counts(host) != [3]int{0, 1, 1} {
		t.Errorf("host communicator: rank and size %v, hosts %v", got, counts(host))
	}
	if p := must(host.Path()); p != PathSelf {
		t.Errorf("host communicator path: %v", p)
	}
	data := []int32{4, -2, 9}
	if err := AllReduce(host, nil, data, OpMax); err != nil || !reflect.DeepEqual(data, []int32{4, -2, 9}) {
		t.Errorf("all_reduce on the host communicator: %v %v", data, err)
	}
	host.Close()
	for name, query := range map[string]func() (int, error){"LocalRank": host.LocalRank, "LocalSize": host.LocalSize,
		"NumHosts": host.NumHosts} {
		if _, err := query(); !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "comm") {
			t.Errorf("%s of a closed communicator: %v", name, err)
		}
	}
	if _, err := host.SplitHost(); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("SplitHost of a closed communicator: %v", err)
	}
	if err := AllReduce(w, nil, data, OpSum); err != nil { // the world outlives its host communicator
		t.Error(err)
	}
}

func TestPathAndAlgorithmOfOneRank(t *testing.T) {
	w := world(t)
	if p, err := w.Path(); err != nil || p != PathSelf || p.String() != "self" {
		t.Errorf("path: %v %v", p, err)
	}
	for kind := CollectiveAllReduce; kind <= CollectiveAllToAllV; kind++ {
		if name, err := w.Algorithm(kind, 1<<20); err != nil || name != "self" {
			t.Errorf("collective %d: %q %v", kind, name, err)
		}
	}
	name, err := w.Algorithm(Collective(8), 8) // one past CollectiveAllToAllV
	var e *Error
	if !errors.As(err, &e) || e.Status != ErrInvalidArgument || name != "" ||
		!strings.Contains(e.Message, "collective 8 is not a DIST_COLLECTIVE_* value") {
		t.Errorf("bad collective: %q %v", name, err)
	}
	// One rank shares no segment: the shared-memory all-reduce is refused.
	shm := AllreduceSharedMemory
	if err := w.Configure(CommOptions{Allreduce: &shm}); !errors.Is(err, ErrUnsupported) ||
		!strings.Contains(err.Error(), "DIST_ALLREDUCE_SHARED_MEMORY") {
		t.Errorf("shared memory on one rank: %v", err)
	}
	// One rank spans no hosts: the hierarchical all-reduce is refused too.
	hier := AllreduceHierarchical
	if err := w.Configure(CommOptions{Allreduce: &hier}); !errors.Is(err, ErrUnsupported) ||
		!strings.Contains(err.Error(), "DIST_ALLREDUCE_HIERARCHICAL") {
		t.Errorf("hierarchical on one rank: %v", err)
	}
	if PathPointToPoint.String() != "point_to_point" || PathSharedMemory.String() != "shared_memory" ||
		PathHierarchical.String() != "hierarchical" || PathNCCL.String() != "nccl" ||
		PathStaged.String() != "staged" || CommPath(9).String() != "" {
		t.Error("CommPath names")
	}
}

func TestDevicePathBeforeAnyCallOnCUDAMemory(t *testing.T) {
	if PathNCCL != 4 || PathStaged != 5 {
		t.Errorf("PathNCCL, PathStaged: %d, %d", PathNCCL, PathStaged)
	}
	w := world(t)
	// Nothing is chosen until the first call on CUDA memory (never, without CUDA).
	_, err := w.DevicePath()
	var e *Error
	if !errors.As(err, &e) || e.Status != ErrUnavailable || !strings.Contains(e.Message, "CUDA") {
		t.Errorf("device path: %v", err)
	}
}

// distRun builds an example and runs it under dist-run, whose --timeout bounds the job.
func distRun(t *testing.T, example string, ranks int) string {
	t.Helper()
	launcher := filepath.Join(buildDir(), "tools", "dist-run", "dist-run")
	if _, err := os.Stat(launcher); err != nil {
		t.Fatalf("%s is missing: build the project first", launcher)
	}
	program := filepath.Join(t.TempDir(), example)
	if out, err := exec.Command("go", "build", "-o", program, "./examples/"+example).CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(launcher, "-n", fmt.Sprint(ranks), "--timeout", "120", "--", program).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return string(out)
}

// The example under dist-run with two ranks: both report identical, correct weights.
func TestAllReduceExampleOnTwoRanks(t *testing.T) {
	text := distRun(t, "allreduce", 2)
	if !strings.Contains(text, "rank 0 of 2") || !strings.Contains(text, "rank 1 of 2") ||
		strings.Count(text, "identical on all ranks, correct") != 2 {
		t.Fatalf("unexpected output:\n%s", text)
	}
}

func TestEveryCollectiveAcrossProcesses(t *testing.T) {
	for _, ranks := range []int{2, 3} {
		if text := distRun(t, "every_collective", ranks); strings.Count(text, "all collectives correct") != ranks {
			t.Errorf("%d ranks:\n%s", ranks, text)
		}
	}
}

func TestStatsCountCallsBytesAndTime(t *testing.T) {
	w := world(t)
	if err := w.ResetStats(); err != nil {
		t.Fatal(err)
	}
	if stats, err := w.Stats(); err != nil || len(stats) != 0 {
		t.Fatalf("stats of a fresh communicator: %v %v", stats, err)
	}
	data := []float32{1, 2, 3, 4, 5, 6}
	for i := 0; i < 3; i++ {
		if err := AllReduce(w, data, make([]float32, 6), OpSum); err != nil {
			t.Fatal(err)
		}
	}
	if err := Broadcast(w, make([]int64, 5), 0); err != nil {
		t.Fatal(err)
	}
	if err := AllToAllV(w, []int32{1, 2, 3, 4}, Blocks{Counts: []int{4}}, make([]int32, 4), Blocks{Counts: []int{4}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Barrier(); err != nil {
		t.Fatal(err)
	}
	row := func(kind Collective, calls, bytes uint64) CommStat {
		// Timing is off by default: no timed calls, no time.
		return CommStat{Collective: kind, Path: PathSelf, Algorithm: "self", Calls: calls, Bytes: bytes}
	}
	want := []CommStat{row(CollectiveAllReduce, 3, 3*6*4), row(CollectiveBroadcast, 1, 5*8),
		row(CollectiveAllToAllV, 1, 4*4), row(CollectiveBarrier, 1, 0)}
	if stats, err := w.Stats(); err != nil || !reflect.DeepEqual(stats, want) {
		t.Errorf("stats:\n got %+v %v\nwant %+v", stats, err, want)
	}

	on, off := true, false
	if err := w.Configure(CommOptions{Timing: &on}); err != nil {
		t.Fatal(err)
	}
	if err := w.ResetStats(); err != nil {
		t.Fatal(err)
	}
	if stats, err := w.Stats(); err != nil || len(stats) != 0 {
		t.Errorf("stats after a reset: %v %v", stats, err)
	}
	for i := 0; i < 4; i++ {
		if err := AllGather(w, data, make([]float32, 6)); err != nil {
			t.Fatal(err)
		}
	}
	stats, err := w.Stats()
	if err != nil || len(stats) != 1 {
		t.Fatalf("timed stats: %+v %v", stats, err)
	}
	s := stats[0]
	if s.Collective != CollectiveAllGather || s.Collective.String() != "all_gather" || s.Path != PathSelf ||
		s.Algorithm != "self" || s.Calls != 4 || s.Bytes != 4*6*4 || s.Failed != 0 ||
		s.TimedCalls != s.Calls || s.Time <= 0 {
		t.Errorf("timed all_gather: %+v", s)
	}

	if err := w.Configure(CommOptions{Timing: &off}); err != nil {
		t.Fatal(err)
	}
	if err := w.ResetStats(); err != nil {
		t.Fatal(err)
	}
	request := must(AllReduceAsync(w, nil, []uint8{1, 2, 3}, OpMax))
	if err := request.Wait(-1); err != nil {
		t.Fatal(err)
	}
	request.Close()
	if stats, err := w.Stats(); err != nil || !reflect.DeepEqual(stats, []CommStat{row(CollectiveAllReduce, 1, 3)}) {
		t.Errorf("stats of a request with timing off again: %+v %v", stats, err)
	}
	if CollectiveAllToAllV.String() != "all_to_all_v" || Collective(8).String() != "" {
		t.Error("Collective names")
	}
}

func TestStatsOfAClosedCommunicatorAreRefused(t *testing.T) {
	w := world(t)
	host := must(w.SplitHost())
	host.Close()
	if _, err := host.Stats(); !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "comm") {
		t.Errorf("Stats of a closed communicator: %v", err)
	}
	if err := host.ResetStats(); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("ResetStats of a closed communicator: %v", err)
	}
}

func TestStallWarningAndDeterministicOptions(t *testing.T) {
	w := world(t)
	stall, on := 5000*time.Millisecond, true
	if err := w.Configure(CommOptions{StallWarning: &stall, Deterministic: &on}); err != nil {
		t.Fatal(err)
	}
	data := []float32{1.5, -2, 3.25, 0.5, 8}
	out := make([]float32, len(data))
	if err := AllReduce(w, data, out, OpSum); err != nil {
		t.Fatal(err)
	}
	// One rank: the sum is the rank's own values, bit for bit, in the fixed order too.
	if !reflect.DeepEqual(out, data) {
		t.Errorf("deterministic all_reduce: %v, want %v", out, data)
	}
	none, off := time.Duration(0), false // 0: no warning; back to the fastest order
	if err := w.Configure(CommOptions{StallWarning: &none, Deterministic: &off}); err != nil {
		t.Fatal(err)
	}
	if err := AllReduce(w, data, out, OpSum); err != nil || !reflect.DeepEqual(out, data) {
		t.Errorf("all_reduce after turning both off: %v %v", out, err)
	}
}

func TestBadStallWarningAndDeterministicAreRefused(t *testing.T) {
	w := world(t)
	negative := -time.Millisecond
	var e *Error
	err := w.Configure(CommOptions{StallWarning: &negative})
	if !errors.As(err, &e) || e.Status != ErrInvalidArgument ||
		!strings.Contains(e.Message, "stall_warning_ms -1 must be 0 (no warning) or positive") {
		t.Errorf("a negative stall warning: %v", err)
	}
	// CommOptions.Deterministic is a *bool, so 2 cannot be expressed through it;
	// only the C struct could carry it, and cgo is not allowed in _test.go files.
	// A stall warning under 1 ms rounds away from zero, never to 0 (no warning).
	for d, want := range map[time.Duration]int64{time.Microsecond: 1, -time.Microsecond: -1, 1500 * time.Microsecond: 2,
		5 * time.Second: 5000, 0: 0, -2 * time.Millisecond: -2} {
		if got := wholeMillis(d); got != want {
			t.Errorf("wholeMillis(%v) = %d, want %d", d, got, want)
		}
	}
	sub := -time.Microsecond
	if err := w.Configure(CommOptions{StallWarning: &sub}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("a negative stall warning under 1 ms: %v", err)
	}
}
