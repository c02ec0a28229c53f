// Data-parallel training in miniature: every rank computes a gradient from its
// own data, all-reduces it to the mean and applies it to its copy of the
// weights. The copies must stay bit-identical on every rank and match the
// closed-form result.
//
//	go build -o allreduce ./examples/allreduce
//	dist-run -n 2 -- ./allreduce
//
// (When strategies and variables land, the weights become a mirrored variable
// and train a strategy run; the checks stay the same.)
package main

import (
	"fmt"
	"math"
	"os"

	"distribute"
)

const (
	steps        = 5
	size         = 4096
	learningRate = float32(0.5)
)

// localTarget is this rank's data: what it alone would fit the weights to.
func localTarget(rank, i int) float32 { return float32(rank+1) * float32(i%10) }

func train(world *distribute.Comm, rank int) ([]float32, error) {
	weights := make([]float32, size)
	gradient := make([]float32, size)
	for s := 0; s < steps; s++ {
		for i, w := range weights {
			gradient[i] = w - localTarget(rank, i)
		}
		if err := distribute.AllReduce(world, nil, gradient, distribute.OpMean); err != nil {
			return nil, err
		}
		for i := range weights {
			weights[i] -= learningRate * gradient[i]
		}
	}
	return weights, nil
}

// expectedWeight runs the same steps on the mean target, without communication.
func expectedWeight(ranks, i int) float64 {
	mean := 0.0
	for r := 0; r < ranks; r++ {
		mean += float64(localTarget(r, i))
	}
	mean /= float64(ranks)
	w := 0.0
	for s := 0; s < steps; s++ {
		w -= float64(learningRate) * (w - mean)
	}
	return w
}

func run() (bool, error) {
	cluster, err := distribute.ResolveCluster(nil)
	if err != nil {
		return false, err
	}
	defer cluster.Close()
	context, err := distribute.NewContext(cluster, nil)
	if err != nil {
		return false, err
	}
	defer context.Close()
	world, err := context.World()
	if err != nil {
		return false, err
	}
	rank, _ := world.Rank()
	ranks, _ := world.Size()
	weights, err := train(world, rank)
	if err != nil {
		return false, err
	}
	everyone := make([]float32, ranks*size)
	if err := distribute.AllGather(world, weights, everyone); err != nil {
		return false, err
	}
	identical, correct := true, true
	for i, w := range everyone {
		identical = identical && math.Float32bits(w) == math.Float32bits(weights[i%size])
	}
	for i, w := range weights {
		correct = correct && math.Abs(float64(w)-expectedWeight(ranks, i)) <= 1e-5*(1+math.Abs(float64(w)))
	}
	verdict := map[bool]string{true: "identical on all ranks", false: "DIFFERENT across ranks"}[identical]
	fmt.Printf("rank %d of %d: %d steps, weights[7] = %.4f; %s, %s\n", rank, ranks, steps, weights[7], verdict,
		map[bool]string{true: "correct", false: "WRONG"}[correct])
	return identical && correct, nil
}

func main() {
	ok, err := run()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if !ok {
		os.Exit(1)
	}
}
