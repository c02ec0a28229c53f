// The example: a MultiWorkerMirrored strategy with two CPU replicas per
// worker trains a mirrored variable. In each step every replica computes a
// gradient from its own data (reading the variable in replica context), and the
// strategy mean-all-reduces the gradients and applies them with SGD. The
// weights must be bit-identical on every rank and every local copy, and match
// the closed-form result.
//
//	go build -o strategy ./examples/strategy
//	dist-run -n 2 -- ./strategy
package main

import (
	"fmt"
	"math"
	"os"

	"distribute"
)

const (
	steps         = 5
	size          = 1024
	localReplicas = 2
	learningRate  = 0.5
)

// target is replica id's data: what it alone would fit the weights to.
func target(id, i int) float32 { return float32(id+1) * float32(i%10) }

// expectedWeight runs the same steps on the mean target of all replicas.
func expectedWeight(replicas, i int) float64 {
	mean := 0.0
	for r := 0; r < replicas; r++ {
		mean += float64(target(r, i))
	}
	mean /= float64(replicas)
	w := 0.0
	for s := 0; s < steps; s++ {
		w -= learningRate * (w - mean)
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
	kind, replicasPerWorker := distribute.MultiWorkerMirrored, localReplicas
	strategy, err := distribute.NewStrategy(context, &distribute.StrategyOptions{Kind: &kind, NumCPUDevices: &replicasPerWorker})
	if err != nil {
		return false, err
	}
	defer strategy.Close()
	rank, workers, err := strategy.WorkerIndex()
	if err != nil {
		return false, err
	}
	replicas, _ := strategy.NumReplicasInSync()
	sync, mean := distribute.SyncOnWrite, distribute.AggregationMean
	weights, err := distribute.NewVariable(strategy, &distribute.VariableOptions[float32]{
		Name: "weights", Shape: []int64{size}, Synchronization: &sync, Aggregation: &mean,
	})
	if err != nil {
		return false, err
	}
	defer weights.Close()
	lr := learningRate
	sgd, err := distribute.NewOptimizer(distribute.OptimizerOptions{Kind: distribute.SGD, LearningRate: &lr})
	if err != nil {
		return false, err
	}
	defer sgd.Close()

	for s := 0; s < steps; s++ {
		gradients := make([][]float32, localReplicas) // one per local replica, each written by its own
		err := strategy.Run(func(r *distribute.Replica) error {
			id, err := r.ID()
			if err != nil {
				return err
			}
			local, err := r.LocalIndex()
			if err != nil {
				return err
			}
			w := make([]float32, size)
			if err := distribute.VariableRead(weights, r, w); err != nil {
				return err
			}
			g := make([]float32, size)
			for i := range g {
				g[i] = w[i] - target(id, i)
			}
			gradients[local] = g
			return nil
		})
		if err != nil {
			return false, err
		}
		if err := distribute.ApplyGradients(strategy, []*distribute.Variable{weights}, gradients, sgd); err != nil {
			return false, err
		}
	}

	result := make([]float32, size)
	if err := distribute.VariableRead(weights, nil, result); err != nil {
		return false, err
	}
	identical := true
	copies, _ := weights.NumCopies()
	for c := 0; c < copies; c++ {
		stored := make([]float32, size)
		if err := distribute.VariableReadCopy(weights, c, stored); err != nil {
			return false, err
		}
		for i := range stored {
			identical = identical && math.Float32bits(stored[i]) == math.Float32bits(result[i])
		}
	}
	world, err := context.World()
	if err != nil {
		return false, err
	}
	everyone := make([]float32, workers*size)
	if err := distribute.AllGather(world, result, everyone); err != nil {
		return false, err
	}
	for i, w := range everyone {
		identical = identical && math.Float32bits(w) == math.Float32bits(result[i%size])
	}
	correct := true
	for i, w := range result {
		correct = correct && math.Abs(float64(w)-expectedWeight(replicas, i)) <= 1e-5*(1+math.Abs(float64(w)))
	}
	iterations, _ := sgd.Iterations()
	verdict := map[bool]string{true: "identical on all ranks", false: "DIFFERENT across ranks or copies"}[identical]
	fmt.Printf("rank %d of %d: %d replicas, %d SGD steps, weights[7] = %.4f; %s, %s\n", rank, workers, replicas,
		iterations, result[7], verdict, map[bool]string{true: "correct", false: "WRONG"}[correct])
	return identical && correct && iterations == steps, nil
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
