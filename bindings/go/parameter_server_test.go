package distribute

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

// psFixture starts two in-process servers and a ParameterServer strategy whose
// cluster's "ps" job holds them.
func psFixture(t *testing.T) (servers [2]*Server, cluster *Cluster, strategy *Strategy) {
	t.Helper()
	var addresses [2]string
	for i := range servers {
		s, err := StartServer(nil, ServerOptions{Address: "127.0.0.1:0", Token: serverToken})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		servers[i] = s
		addresses[i], _ = s.Address()
	}
	cluster, err := ClusterFromJSON(fmt.Sprintf(
		`{"cluster":{"ps":[%q,%q],"worker":["127.0.0.1:1"]},"task":{"type":"worker","index":0}}`,
		addresses[0], addresses[1]))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cluster.Close() })
	strategy, err = NewStrategy(nil, &StrategyOptions{Kind: Ptr(ParameterServer), Cluster: cluster, Token: serverToken})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { strategy.Close() })
	return servers, cluster, strategy
}

func TestParameterServerDense(t *testing.T) {
	servers, _, strategy := psFixture(t)
	if kind, err := strategy.Kind(); err != nil || kind != ParameterServer {
		t.Fatalf("kind %v %v", kind, err)
	}
	if n, err := strategy.NumReplicasInSync(); err != nil || n != 1 {
		t.Fatalf("replicas in sync %d %v", n, err)
	}
	initial := make([]float32, 12)
	for i := range initial {
		initial[i] = float32(i)
	}
	w, err := NewVariable(strategy, &VariableOptions[float32]{Name: "dense", Shape: []int64{4, 3}, InitialValue: initial,
		Optimizer: &OptimizerOptions{Kind: SGD, LearningRate: Ptr(0.5)}, NumShards: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	shards, err := w.Shards()
	if err != nil || fmt.Sprint(shards) != "[{0 0 2} {1 2 2}]" {
		t.Fatalf("shards %v %v", shards, err)
	}
	if n, _ := w.NumCopies(); n != 0 {
		t.Errorf("copies %d", n)
	}
	gradient := make([]float32, 12)
	expected := make([]float32, 12)
	for i := range gradient {
		gradient[i] = float32(2 - 3*(i%2))
		expected[i] = initial[i] - 0.5*gradient[i]
	}
	if err := VariableApplyGradient(w, nil, gradient); err != nil {
		t.Fatal(err)
	}
	got := make([]float32, 12)
	if err := VariableRead(w, nil, got); err != nil || fmt.Sprint(got) != fmt.Sprint(expected) {
		t.Fatalf("after a gradient %v, want %v (%v)", got, expected, err)
	}
	// Replica context: each run's replica adds once.
	for run := 0; run < 2; run++ {
		if err := strategy.Run(func(r *Replica) error { return VariableAssignAdd(w, r, gradient) }); err != nil {
			t.Fatal(err)
		}
	}
	if err := VariableRead(w, nil, got); err != nil {
		t.Fatal(err)
	}
	for i := range got {
		if got[i] != expected[i]+2*gradient[i] {
			t.Fatalf("after two replica assign_adds: %v", got)
		}
	}
	held := 0
	for _, s := range servers {
		text, _ := s.Describe()
		var described struct{ Variables []struct{ Name string } }
		if err := json.Unmarshal([]byte(text), &described); err != nil {
			t.Fatal(err)
		}
		for _, v := range described.Variables {
			if v.Name == "dense" {
				held++
			}
		}
	}
	if held != 2 {
		t.Errorf("the servers hold %d shards of dense, want 2", held)
	}
}

func TestParameterServerSparseRows(t *testing.T) {
	_, _, strategy := psFixture(t)
	table := make([]float64, 20) // 5 rows of 4
	for i := range table {
		table[i] = float64(i)
	}
	e, err := NewVariable(strategy, &VariableOptions[float64]{Name: "embedding", Shape: []int64{5, 4}, InitialValue: table,
		Optimizer: &OptimizerOptions{Kind: SGD, LearningRate: Ptr(0.25)}, MaxShardBytes: 2 * 4 * 8})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if shards, _ := e.Shards(); len(shards) != 3 {
		t.Fatalf("shards %v", shards)
	}
	rows := make([]float64, 12)
	if err := VariableReadRows(e, nil, []int64{4, 0, 4}, rows); err != nil {
		t.Fatal(err)
	}
	for i, row := range []int{4, 0, 4} {
		for j := 0; j < 4; j++ {
			if rows[4*i+j] != table[4*row+j] {
				t.Fatalf("read rows %v", rows)
			}
		}
	}
	reference := append([]float64(nil), table...)
	values := []float64{1, 2, 3, 4, 5, 6, 7, 8}
	if err := VariableAddRows(e, nil, []int64{1, 1}, values); err != nil {
		t.Fatal(err)
	}
	for j := 0; j < 4; j++ {
		reference[4+j] += values[j] + values[4+j]
	}
	gradients := []float64{4, 4, 4, 4, -8, -8, -8, -8}
	if err := VariableApplyRows(e, nil, []int64{3, 0}, gradients); err != nil {
		t.Fatal(err)
	}
	for j := 0; j < 4; j++ {
		reference[12+j] -= 0.25 * gradients[j]
		reference[j] -= 0.25 * gradients[4+j]
	}
	got := make([]float64, 20)
	if err := VariableRead(e, nil, got); err != nil || fmt.Sprint(got) != fmt.Sprint(reference) {
		t.Fatalf("after sparse updates %v, want %v (%v)", got, reference, err)
	}
	var de *Error
	if err := VariableReadRows(e, nil, []int64{5}, rows[:4]); !errors.As(err, &de) || de.Status != ErrInvalidArgument {
		t.Fatalf("row 5 of 5: %v", err)
	}
}

func TestParameterServerAdamMatchesTheFormula(t *testing.T) {
	_, _, strategy := psFixture(t)
	v, err := NewVariable(strategy, &VariableOptions[float64]{Name: "adam", Shape: []int64{3},
		InitialValue: []float64{1, 1, 1}, Optimizer: &OptimizerOptions{Kind: Adam, LearningRate: Ptr(0.1)}})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	const lr, b1, b2, eps = 0.1, 0.9, 0.999, 1e-7
	value, m, s := []float64{1, 1, 1}, make([]float64, 3), make([]float64, 3)
	for step, g := range [][]float64{{1, -2, 0.5}, {0.5, 0.5, -1}} {
		if err := VariableApplyGradient(v, nil, g); err != nil {
			t.Fatal(err)
		}
		alpha := lr * math.Sqrt(1-math.Pow(b2, float64(step+1))) / (1 - math.Pow(b1, float64(step+1)))
		for i := range g {
			m[i] = b1*m[i] + (1-b1)*g[i]
			s[i] = b2*s[i] + (1-b2)*g[i]*g[i]
			value[i] -= alpha * m[i] / (math.Sqrt(s[i]) + eps)
		}
	}
	got := make([]float64, 3)
	if err := VariableRead(v, nil, got); err != nil {
		t.Fatal(err)
	}
	for i := range got {
		if math.Abs(got[i]-value[i]) > 1e-12 {
			t.Fatalf("adam %v, want %v", got, value)
		}
	}
}

func TestParameterServerErrorsAndCheckpoint(t *testing.T) {
	_, cluster, strategy := psFixture(t)
	var e *Error
	plain, err := NewVariable(strategy, &VariableOptions[float32]{Name: "plain", Shape: []int64{2}})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if err := VariableApplyGradient(plain, nil, []float32{1, 1}); !errors.As(err, &e) || !strings.Contains(e.Message, "plain") {
		t.Fatalf("a gradient without an optimizer: %v", err)
	}
	if _, err := NewVariable(strategy, &VariableOptions[float64]{Name: "both", Shape: []int64{4, 2}, NumShards: 2,
		MaxShardBytes: 16}); !errors.As(err, &e) || !strings.Contains(e.Message, "give one partitioner") {
		t.Fatalf("two partitioners: %v", err)
	}
	if _, err := NewStrategy(nil, &StrategyOptions{Kind: Ptr(Mirrored), Cluster: cluster}); !errors.As(err, &e) ||
		!strings.Contains(e.Message, "PARAMETER_SERVER") {
		t.Fatalf("a cluster for MIRRORED: %v", err)
	}

	// A checkpoint of real values: saved, overwritten, restored.
	saved, err := NewVariable(strategy, &VariableOptions[int64]{Name: "saved", Shape: []int64{3, 2},
		InitialValue: []int64{1, 2, 3, 4, 5, 6}, NumShards: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer saved.Close()
	root := t.TempDir()
	o := CheckpointOptions{Token: serverToken, Timeout: 20 * time.Second}
	if _, err := CheckpointSave(cluster, root, 1, o); err != nil {
		t.Fatal(err)
	}
	if err := VariableAssign(saved, nil, make([]int64, 6)); err != nil {
		t.Fatal(err)
	}
	if _, err := CheckpointRestore(cluster, root, o); err != nil {
		t.Fatal(err)
	}
	got := make([]int64, 6)
	if err := VariableRead(saved, nil, got); err != nil || fmt.Sprint(got) != "[1 2 3 4 5 6]" {
		t.Fatalf("restored %v %v", got, err)
	}
}

func TestParameterServerPlacementAdagradAndSync(t *testing.T) {
	_, cluster, _ := psFixture(t)
	s, err := NewStrategy(nil, &StrategyOptions{Kind: Ptr(ParameterServer), Cluster: cluster, Token: serverToken,
		Placement: Ptr(GreedyBytes)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	big, err := NewVariable(s, &VariableOptions[float64]{Name: "big", Shape: []int64{8, 4}}) // 256 bytes: server 0
	if err != nil {
		t.Fatal(err)
	}
	defer big.Close()
	small, _ := NewVariable(s, &VariableOptions[float64]{Name: "small"}) // fewest bytes: server 1
	defer small.Close()
	near, err := NewVariable(s, &VariableOptions[float64]{Name: "near", ColocateWith: big})
	if err != nil {
		t.Fatal(err)
	}
	defer near.Close()
	split, err := NewVariable(s, &VariableOptions[float32]{Name: "split", Shape: []int64{10, 4}, MinShardBytes: 40, MaxShards: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer split.Close()
	servers := []int{}
	for _, v := range []*Variable{big, small, near} {
		shards, err := v.Shards()
		if err != nil {
			t.Fatal(err)
		}
		servers = append(servers, shards[0].Server)
	}
	if fmt.Sprint(servers) != "[0 1 0]" {
		t.Errorf("greedy placement and colocation put them on %v", servers)
	}
	if shards, _ := split.Shards(); len(shards) != 3 || shards[0].Rows != 4 || shards[2].Rows != 3 {
		t.Errorf("min-size partitioner: %v", shards)
	}

	adagrad, err := NewVariable(s, &VariableOptions[float64]{Name: "adagrad", Shape: []int64{2}, InitialValue: []float64{3, 3},
		Optimizer: &OptimizerOptions{Kind: Adagrad, LearningRate: Ptr(0.5)}})
	if err != nil {
		t.Fatal(err)
	}
	defer adagrad.Close()
	value, acc := []float64{3, 3}, []float64{0.1, 0.1}
	for _, g := range [][]float64{{1, -2}, {0.5, 4}} {
		if err := VariableApplyGradient(adagrad, nil, g); err != nil {
			t.Fatal(err)
		}
		for i := range g {
			acc[i] += g[i] * g[i]
			value[i] -= 0.5 * g[i] / (math.Sqrt(acc[i]) + 1e-7)
		}
	}
	got := make([]float64, 2)
	if err := VariableRead(adagrad, nil, got); err != nil || math.Abs(got[0]-value[0]) > 1e-12 || math.Abs(got[1]-value[1]) > 1e-12 {
		t.Fatalf("adagrad %v, want %v (%v)", got, value, err)
	}

	// One worker: each synchronous round is complete with its gradient.
	sync, err := NewVariable(s, &VariableOptions[float32]{Name: "sync", Shape: []int64{3},
		Optimizer: &OptimizerOptions{Kind: SGD, LearningRate: Ptr(1.0)}, SyncGradients: true, ReplicasToAggregate: Ptr(1)})
	if err != nil {
		t.Fatal(err)
	}
	defer sync.Close()
	if err := VariableApplyGradient(sync, nil, []float32{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	after := make([]float32, 3)
	if err := VariableRead(sync, nil, after); err != nil || fmt.Sprint(after) != "[-1 -2 -3]" {
		t.Fatalf("synchronous round %v %v", after, err)
	}
}
