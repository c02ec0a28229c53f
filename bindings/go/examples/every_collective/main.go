// Every collective on a real multi-process communicator, each result checked
// against a reference this rank computes alone (run by collective_test.go):
//
//	go build -o every_collective ./examples/every_collective
//	dist-run -n 3 -- ./every_collective
package main

import (
	"fmt"
	"os"
	"reflect"

	"distribute"
)

func check(world *distribute.Comm) ([]string, error) {
	r, err := world.Rank()
	if err != nil {
		return nil, err
	}
	n, err := world.Size()
	if err != nil {
		return nil, err
	}
	var failures []string
	expect := func(name string, got, want any) {
		if !reflect.DeepEqual(got, want) {
			failures = append(failures, fmt.Sprintf("%s: got %v, want %v", name, got, want))
		}
	}
	fill := func(v int32, count int) []int32 {
		s := make([]int32, count)
		for i := range s {
			s[i] = v
		}
		return s
	}

	sum := fill(int32(r+1), 4)
	if err := distribute.AllReduce(world, nil, sum, distribute.OpSum); err != nil {
		return nil, err
	}
	expect("all_reduce", sum, fill(int32(n*(n+1)/2), 4))

	root := n - 1
	var max []float32
	if r == root {
		max = make([]float32, 3)
	}
	if err := distribute.Reduce(world, []float32{float32(r), float32(r), float32(r)}, max, distribute.OpMax, root); err != nil {
		return nil, err
	}
	if r == root {
		expect("reduce", max, []float32{float32(n - 1), float32(n - 1), float32(n - 1)})
	}

	b := []float64{float64(r), float64(r)}
	if err := distribute.Broadcast(world, b, root); err != nil {
		return nil, err
	}
	expect("broadcast", b, []float64{float64(root), float64(root)})

	gathered := make([]int64, 2*n)
	if err := distribute.AllGather(world, []int64{int64(10 * r), int64(10*r + 1)}, gathered); err != nil {
		return nil, err
	}
	want := make([]int64, 0, 2*n)
	for k := 0; k < n; k++ {
		want = append(want, int64(10*k), int64(10*k+1))
	}
	expect("all_gather", gathered, want)

	// Block j of rank k's input is [2j + k, 2j + 1 + k]; block r of the sum is ours.
	inputs := make([]int32, 2*n)
	for j := range inputs {
		inputs[j] = int32(j + r)
	}
	block := make([]int32, 2)
	for i := range block {
		for k := 0; k < n; k++ {
			block[i] += int32(2*r + i + k)
		}
	}
	out := make([]int32, 2)
	if err := distribute.ReduceScatter(world, inputs, out, distribute.OpSum); err != nil {
		return nil, err
	}
	expect("reduce_scatter", out, block)
	inPlace := append([]int32(nil), inputs...)
	if err := distribute.ReduceScatter(world, nil, inPlace, distribute.OpSum); err != nil {
		return nil, err
	}
	expect("reduce_scatter in place", inPlace[:2], block)

	exchanged := make([]uint32, n)
	wantExchanged := make([]uint32, n)
	for j := range exchanged {
		exchanged[j] = uint32(100*r + j)
		wantExchanged[j] = uint32(100*j + r)
	}
	if err := distribute.AllToAll(world, nil, exchanged); err != nil {
		return nil, err
	}
	expect("all_to_all", exchanged, wantExchanged)

	reversed, err := world.Split(0, -r)
	if err != nil {
		return nil, err
	}
	reversedRank, _ := reversed.Rank()
	expect("split", reversedRank, n-1-r)
	reversed.Close()

	halves := []distribute.F16{0x3C00, 0x3C00, 0x3C00} // 1.0 each
	request, err := distribute.AllReduceAsync(world, nil, halves, distribute.OpSum)
	if err != nil {
		return nil, err
	}
	if err := request.Wait(-1); err != nil {
		return nil, err
	}
	request.Close()
	nAsHalf := map[int]distribute.F16{2: 0x4000, 3: 0x4200}[n] // 2.0, 3.0
	expect("non-blocking all_reduce", halves, []distribute.F16{nAsHalf, nAsHalf, nAsHalf})
	if err := world.Barrier(); err != nil {
		return nil, err
	}
	if failures, err = checkPath(world, failures); err != nil {
		return nil, err
	}
	return checkHosts(world, failures)
}

// checkHosts: every rank runs on this host, so it is its own host communicator,
// in the same order.
func checkHosts(world *distribute.Comm, failures []string) ([]string, error) {
	var err error
	value := func(query func() (int, error)) int {
		v, e := query()
		if e != nil && err == nil {
			err = e
		}
		return v
	}
	r, n := value(world.Rank), value(world.Size)
	got := []int{value(world.LocalRank), value(world.LocalSize), value(world.NumHosts)}
	if err != nil {
		return nil, err
	}
	if want := []int{r, n, 1}; !reflect.DeepEqual(got, want) {
		failures = append(failures, fmt.Sprintf("local rank, local size, hosts: got %v, want %v", got, want))
	}
	host, err := world.SplitHost()
	if err != nil {
		return nil, err
	}
	defer host.Close()
	summed := []int64{int64(r + 1), int64(r + 1), int64(r + 1)}
	if err := distribute.AllReduce(host, nil, summed, distribute.OpSum); err != nil {
		return nil, err
	}
	path, err := host.Path()
	if err != nil {
		return nil, err
	}
	got = []int{value(host.Rank), value(host.Size), value(host.NumHosts)}
	if err != nil {
		return nil, err
	}
	total := int64(n * (n + 1) / 2)
	if !reflect.DeepEqual(got, []int{r, n, 1}) || path != distribute.PathSharedMemory ||
		!reflect.DeepEqual(summed, []int64{total, total, total}) {
		failures = append(failures, fmt.Sprintf("split_host: rank, size, hosts %v, path %v, all_reduce %v", got, path, summed))
	}
	return failures, nil
}

// checkPath: ranks launched on one host share memory, and the path and the
// algorithms show it.
func checkPath(world *distribute.Comm, failures []string) ([]string, error) {
	path, err := world.Path()
	if err != nil {
		return nil, err
	}
	algorithm := func(kind distribute.Collective, bytes uint64) string {
		name, e := world.Algorithm(kind, bytes)
		if e != nil && err == nil {
			err = e
		}
		return name
	}
	got := []string{path.String(), algorithm(distribute.CollectiveAllReduce, 8),
		algorithm(distribute.CollectiveAllReduce, 64<<20), algorithm(distribute.CollectiveBroadcast, 8)}
	if err != nil {
		return nil, err
	}
	if want := []string{"shared_memory", "shm_direct", "shm_split", "shm"}; !reflect.DeepEqual(got, want) {
		failures = append(failures, fmt.Sprintf("path and algorithms: got %v, want %v", got, want))
	}
	force := func(a distribute.AllreduceAlgorithm) error {
		return world.Configure(distribute.CommOptions{Allreduce: &a})
	}
	if err := force(distribute.AllreduceRing); err != nil { // point to point, even on shared memory
		return nil, err
	}
	ring := algorithm(distribute.CollectiveAllReduce, 8)
	r, _ := world.Rank()
	n, _ := world.Size()
	summed := []int64{int64(r + 1), int64(r + 1), int64(r + 1)}
	if err := distribute.AllReduce(world, nil, summed, distribute.OpSum); err != nil {
		return nil, err
	}
	if err := force(distribute.AllreduceSharedMemory); err != nil {
		return nil, err
	}
	forced := algorithm(distribute.CollectiveAllReduce, 8)
	if err != nil {
		return nil, err
	}
	total := int64(n * (n + 1) / 2)
	if ring != "ring" || forced != "shm_direct" || !reflect.DeepEqual(summed, []int64{total, total, total}) {
		failures = append(failures, fmt.Sprintf("configure: ring gave %s and %v, shared_memory gave %s", ring, summed, forced))
	}
	return failures, nil
}

func main() {
	cluster, err := distribute.ResolveCluster(nil)
	if err == nil {
		defer cluster.Close()
	}
	var context *distribute.Context
	if err == nil {
		context, err = distribute.NewContext(cluster, nil)
	}
	var world *distribute.Comm
	if err == nil {
		defer context.Close()
		world, err = context.World()
	}
	var failures []string
	if err == nil {
		failures, err = check(world)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	rank, _ := world.Rank()
	for _, f := range failures {
		fmt.Printf("rank %d: %s\n", rank, f)
	}
	if len(failures) > 0 {
		fmt.Printf("rank %d: FAILED\n", rank)
		os.Exit(1)
	}
	fmt.Printf("rank %d: all collectives correct\n", rank)
}
