package distribute

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
)

// mirrored is a single-worker MIRRORED strategy with n logical CPU replicas.
func mirrored(t *testing.T, n int) *Strategy {
	t.Helper()
	kind := Mirrored
	s, err := NewStrategy(nil, &StrategyOptions{Kind: &kind, NumCPUDevices: &n})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestBadStrategyOptionIsInvalidArgumentWithTheCMessage(t *testing.T) {
	kind, zero := Mirrored, 0
	_, err := NewStrategy(nil, &StrategyOptions{Kind: &kind, NumCPUDevices: &zero})
	var e *Error
	if !errors.As(err, &e) || e.Status != ErrInvalidArgument || !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("got %v", err)
	}
	if !strings.Contains(e.Message, "num_cpu_devices 0") {
		t.Errorf("message %q", e.Message)
	}
	one, two := OneDevice, 2
	if _, err := NewStrategy(nil, &StrategyOptions{Kind: &one, NumCPUDevices: &two}); !errors.Is(err, ErrInvalidArgument) ||
		!strings.Contains(err.Error(), "OneDeviceStrategy") {
		t.Errorf("got %v", err)
	}
}

func TestStrategyQueriesAndClose(t *testing.T) {
	s := mirrored(t, 2)
	if k, err := s.Kind(); err != nil || k != Mirrored {
		t.Errorf("kind %v %v", k, err)
	}
	if n, _ := s.NumReplicasInSync(); n != 2 {
		t.Errorf("replicas in sync %d", n)
	}
	if n, _ := s.NumLocalReplicas(); n != 2 {
		t.Errorf("local replicas %d", n)
	}
	if d, err := s.Device(1); err != nil || !strings.HasSuffix(d, "CPU:1") {
		t.Errorf("device %q %v", d, err)
	}
	if _, err := s.Device(2); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("device 2: %v", err)
	}
	if c, err := s.Cluster(); c != nil || err != nil {
		t.Errorf("cluster %v %v", c, err)
	}
	if tt, _ := s.TaskType(); tt != "" {
		t.Errorf("task type %q", tt)
	}
	if id, _ := s.TaskID(); id != -1 {
		t.Errorf("task id %d", id)
	}
	if i, n, err := s.WorkerIndex(); i != 0 || n != 1 || err != nil {
		t.Errorf("worker index %d %d %v", i, n, err)
	}
	s.Close()
	s.Close()
	if _, err := s.Kind(); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("after Close: %v", err)
	}
}

func TestStrategyWithAContextIsClosedWithIt(t *testing.T) {
	cluster, err := ClusterFromJSON("{}")
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	context, err := NewContext(cluster, nil)
	if err != nil {
		t.Fatal(err)
	}
	kind := MultiWorkerMirrored
	s, err := NewStrategy(context, &StrategyOptions{Kind: &kind})
	if err != nil {
		t.Fatal(err)
	}
	v, err := NewVariable[float32](s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c, err := s.Cluster(); err != nil || c == nil {
		t.Errorf("cluster %v %v", c, err)
	} else {
		c.Close()
	}
	context.Close() // closes the variable and the strategy first
	if _, err := v.Count(); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("variable after the context closed: %v", err)
	}
	s.Close()
	v.Close()
}

// crossDevice is a single-worker strategy of kind with cross-device options (two
// logical CPU replicas except OneDevice).
func crossDevice(kind StrategyKind, ops *CrossDeviceOps, reduceTo string) (*Strategy, error) {
	o := &StrategyOptions{Kind: &kind, CrossDeviceOps: ops, ReduceToDevice: reduceTo}
	if kind != OneDevice {
		o.NumCPUDevices = Ptr(2)
	}
	return NewStrategy(nil, o)
}

// invalidWith checks that err is ErrInvalidArgument whose C message contains want.
func invalidWith(t *testing.T, what string, err error, want string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Status != ErrInvalidArgument || !strings.Contains(e.Message, want) {
		t.Errorf("%s: got %v, want ErrInvalidArgument with %q", what, err, want)
	}
}

func TestCrossDeviceOpsInEffectOnCPUReplicas(t *testing.T) {
	if got := []CrossDeviceOps{CrossDeviceOpsAuto, CrossDeviceOpsNCCLAllReduce, CrossDeviceOpsHierarchicalCopy,
		CrossDeviceOpsReductionToOneDevice}; !reflect.DeepEqual(got, []CrossDeviceOps{0, 1, 2, 3}) {
		t.Errorf("the constants differ from the header: %v", got)
	}
	// Auto resolves to ReductionToOneDevice on CPU replicas, for every kind.
	for _, kind := range []StrategyKind{OneDevice, Mirrored, CentralStorage} {
		s, err := crossDevice(kind, nil, "")
		if err != nil {
			t.Fatal(err)
		}
		if ops, err := s.CrossDeviceOps(); err != nil || ops != CrossDeviceOpsReductionToOneDevice {
			t.Errorf("kind %d: cross-device ops %d %v", kind, ops, err)
		}
		s.Close()
	}
	for _, ops := range []CrossDeviceOps{CrossDeviceOpsAuto, CrossDeviceOpsReductionToOneDevice} {
		s, err := crossDevice(Mirrored, Ptr(ops), "")
		if err != nil {
			t.Fatal(err)
		}
		if got, err := s.CrossDeviceOps(); err != nil || got != CrossDeviceOpsReductionToOneDevice {
			t.Errorf("asked %d: in effect %d %v", ops, got, err)
		}
		s.Close()
	}
	for _, device := range []string{"CPU:0", "/cpu:0", "/device:CPU:0"} {
		s, err := crossDevice(Mirrored, Ptr(CrossDeviceOpsReductionToOneDevice), device)
		if err != nil {
			t.Fatalf("%s: %v", device, err)
		}
		if got, err := s.CrossDeviceOps(); err != nil || got != CrossDeviceOpsReductionToOneDevice {
			t.Errorf("%s: in effect %d %v", device, got, err)
		}
		sum := make([]float32, 2)
		if err := StrategyReduce(s, OpSum, [][]float32{{1.5, -2}, {0.5, 4}}, AxisNone, sum); err != nil ||
			!reflect.DeepEqual(sum, []float32{2, 2}) {
			t.Errorf("%s: reduce %v %v", device, sum, err)
		}
		s.Close()
	}
	s := mirrored(t, 2)
	s.Close()
	if _, err := s.CrossDeviceOps(); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("after Close: %v", err)
	}
}

func TestCrossDeviceOpsAndReduceToDeviceRefusedOnCPUReplicas(t *testing.T) {
	for _, ops := range []CrossDeviceOps{CrossDeviceOpsNCCLAllReduce, CrossDeviceOpsHierarchicalCopy} {
		_, err := crossDevice(Mirrored, Ptr(ops), "")
		invalidWith(t, fmt.Sprintf("ops %d", ops), err, "combines GPU replicas, and this strategy's replicas are CPU devices")
	}
	_, err := crossDevice(Mirrored, Ptr(CrossDeviceOps(7)), "")
	invalidWith(t, "ops 7", err, "cross_device_ops 7 is not one of")
	for _, kind := range []StrategyKind{OneDevice, CentralStorage} {
		_, err := crossDevice(kind, Ptr(CrossDeviceOpsReductionToOneDevice), "")
		invalidWith(t, fmt.Sprintf("kind %d", kind), err, "is for MIRRORED and MULTI_WORKER_MIRRORED")
	}
	cluster, err := ClusterFromJSON(`{"cluster":{"ps":["127.0.0.1:1"]}}`)
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	_, err = NewStrategy(nil, &StrategyOptions{Kind: Ptr(ParameterServer), Cluster: cluster, Token: "t",
		CrossDeviceOps: Ptr(CrossDeviceOpsAuto)})
	invalidWith(t, "ParameterServer", err, "is for MIRRORED and MULTI_WORKER_MIRRORED")
	_, err = crossDevice(Mirrored, Ptr(CrossDeviceOpsReductionToOneDevice), "GPU:0")
	invalidWith(t, "GPU:0", err, `"GPU:0" names a GPU`)
	for _, ops := range []*CrossDeviceOps{nil, Ptr(CrossDeviceOpsAuto)} {
		_, err := crossDevice(Mirrored, ops, "CPU:0")
		invalidWith(t, "reduce_to_device without REDUCTION_TO_ONE_DEVICE", err, "REDUCTION_TO_ONE_DEVICE")
	}
	_, err = NewStrategy(nil, &StrategyOptions{Kind: Ptr(Mirrored), Communication: Ptr(CommunicationNCCL)})
	if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "NCCL") {
		t.Errorf("communication NCCL on CPU replicas: %v", err)
	}
}

const numPacksRefused = "num_packs is for cross_device_ops NcclAllReduce and HierarchicalCopyAllReduce, " +
	"and this strategy's are ReductionToOneDevice"

func TestNumPacksRefusedOnCPUReplicas(t *testing.T) {
	// CPU replicas always reduce to one device: NumPacks (NCCL and hierarchical copy
	// only) is refused whatever its value, the ops given or chosen by Auto.
	for _, n := range []int{1, 4, 64} {
		_, err := NewStrategy(nil, &StrategyOptions{Kind: Ptr(Mirrored), NumCPUDevices: Ptr(2), NumPacks: Ptr(n)})
		invalidWith(t, fmt.Sprintf("NumPacks %d", n), err, numPacksRefused)
	}
	for _, ops := range []CrossDeviceOps{CrossDeviceOpsAuto, CrossDeviceOpsReductionToOneDevice} {
		_, err := NewStrategy(nil, &StrategyOptions{Kind: Ptr(Mirrored), NumCPUDevices: Ptr(2),
			CrossDeviceOps: Ptr(ops), NumPacks: Ptr(2)})
		invalidWith(t, fmt.Sprintf("ops %d with NumPacks", ops), err, numPacksRefused)
	}
	_, err := NewStrategy(nil, &StrategyOptions{Kind: Ptr(OneDevice), NumPacks: Ptr(2)})
	invalidWith(t, "OneDevice with NumPacks", err, numPacksRefused)
	_, err = NewStrategy(nil, &StrategyOptions{Kind: Ptr(CentralStorage), NumCPUDevices: Ptr(2), NumPacks: Ptr(2)})
	invalidWith(t, "CentralStorage with NumPacks", err, numPacksRefused)
}

func TestCrossDeviceOpsOfMultiWorkerMirrored(t *testing.T) {
	cluster, err := ClusterFromJSON("{}")
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	context, err := NewContext(cluster, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer context.Close()
	s, err := NewStrategy(context, &StrategyOptions{Kind: Ptr(MultiWorkerMirrored), NumCPUDevices: Ptr(2),
		CrossDeviceOps: Ptr(CrossDeviceOpsReductionToOneDevice), ReduceToDevice: "CPU:0"})
	if err != nil {
		t.Fatal(err)
	}
	if ops, err := s.CrossDeviceOps(); err != nil || ops != CrossDeviceOpsReductionToOneDevice {
		t.Errorf("cross-device ops %d %v", ops, err)
	}
	s.Close()
	_, err = NewStrategy(context, &StrategyOptions{Kind: Ptr(MultiWorkerMirrored), NumCPUDevices: Ptr(2),
		CrossDeviceOps: Ptr(CrossDeviceOpsNCCLAllReduce)})
	invalidWith(t, "MultiWorkerMirrored NCCL_ALL_REDUCE", err, "combines GPU replicas, and this strategy's replicas are CPU devices")
	_, err = NewStrategy(context, &StrategyOptions{Kind: Ptr(MultiWorkerMirrored), NumCPUDevices: Ptr(2), NumPacks: Ptr(2)})
	invalidWith(t, "MultiWorkerMirrored with NumPacks", err, numPacksRefused)
}

func TestCPUReplicasHaveNoCUDADeviceOrStream(t *testing.T) {
	for _, n := range []int{1, 2} {
		s := mirrored(t, n)
		var mu sync.Mutex
		var replicas []*Replica
		err := s.Run(func(r *Replica) error {
			device, err := r.Device()
			if err != nil {
				return err
			}
			stream, err := r.Stream()
			if err != nil {
				return err
			}
			if device != -1 || stream != nil {
				t.Errorf("CPU replica: device %d, stream %v", device, stream)
			}
			mu.Lock()
			replicas = append(replicas, r)
			mu.Unlock()
			return nil
		})
		if err != nil || len(replicas) != n {
			t.Fatalf("%d replicas: %v (%d ran)", n, err, len(replicas))
		}
		// Valid only during its call.
		if _, err := replicas[0].Device(); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("Device after the run: %v", err)
		}
		if _, err := replicas[0].Stream(); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("Stream after the run: %v", err)
		}
	}
}

func TestRunCallsEachReplicaOnceAndAllReduces(t *testing.T) {
	s := mirrored(t, 2)
	var mu sync.Mutex
	var seen []int
	err := s.Run(func(r *Replica) error {
		id, err := r.ID()
		if err != nil {
			return err
		}
		if n, _ := r.NumReplicasInSync(); n != 2 {
			t.Errorf("replicas in sync %d", n)
		}
		if local, _ := r.LocalIndex(); local != id {
			t.Errorf("local index %d of replica %d", local, id)
		}
		if st, err := r.Strategy(); err != nil || st.raw() != s.raw() {
			t.Errorf("strategy %v", err)
		}
		data := []float64{float64(id + 1), 10 * float64(id+1)}
		if err := ReplicaAllReduce(r, OpSum, data); err != nil {
			return err
		}
		mu.Lock()
		seen = append(seen, id)
		mu.Unlock()
		return SetResult(r, data)
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Ints(seen)
	if !reflect.DeepEqual(seen, []int{0, 1}) {
		t.Errorf("replicas %v", seen)
	}
	results, err := LocalResults[float64](s)
	if err != nil || !reflect.DeepEqual(results, [][]float64{{3, 30}, {3, 30}}) {
		t.Errorf("results %v %v", results, err)
	}
	if _, err := LocalResults[float32](s); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("wrong dtype: %v", err)
	}
}

func TestAPanicInOneReplicaIsReturnedAsAnError(t *testing.T) {
	s := mirrored(t, 2)
	err := s.Run(func(r *Replica) error {
		if local, _ := r.LocalIndex(); local == 1 {
			panic("replica one gives up")
		}
		// Waits for replica 1, which never comes: released with ErrAborted.
		return ReplicaAllReduce(r, OpSum, []int32{1})
	})
	var re *ReplicaError
	if !errors.As(err, &re) || re.Panic != "replica one gives up" || re.Replica != 1 {
		t.Fatalf("got %#v", err)
	}
	if err := s.Run(func(*Replica) error { return nil }); err != nil {
		t.Errorf("the strategy must run again: %v", err)
	}
}

func TestAnErrorInOneReplicaFailsRun(t *testing.T) {
	s := mirrored(t, 2)
	v, err := NewVariable(s, &VariableOptions[float32]{Shape: []int64{3}})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	err = s.Run(func(r *Replica) error {
		if local, _ := r.LocalIndex(); local == 1 {
			return VariableRead(v, r, make([]float32, 2)) // too short
		}
		return nil
	})
	var re *ReplicaError
	if !errors.As(err, &re) || re.Replica != 1 || !errors.Is(err, ErrInvalidArgument) || re.Panic != nil {
		t.Fatalf("got %v", err)
	}
	// A plain Go error is reported as it is, with ErrAborted for C.
	plain := errors.New("no data")
	err = s.Run(func(r *Replica) error {
		if local, _ := r.LocalIndex(); local == 0 {
			return plain
		}
		return nil
	})
	if !errors.Is(err, plain) || !errors.Is(err, ErrAborted) {
		t.Errorf("got %v", err)
	}
}

func variableRoundTrip[T Element](t *testing.T, values, sumOfTwo []T) {
	t.Helper()
	s := mirrored(t, 2)
	sum := AggregationSum
	v, err := NewVariable(s, &VariableOptions[T]{Name: "v", Shape: []int64{2, 2}, InitialValue: values, Aggregation: &sum})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	name, _ := v.Name()
	dtype, _ := v.DType()
	shape, _ := v.Shape()
	count, _ := v.Count()
	sync, _ := v.Synchronization()
	agg, _ := v.Aggregation()
	if name != "v" || dtype != DTypeOf[T]() || !reflect.DeepEqual(shape, []int64{2, 2}) || count != 4 ||
		sync != SyncOnWrite || agg != AggregationSum {
		t.Errorf("metadata %q %v %v %d %v %v", name, dtype, shape, count, sync, agg)
	}
	read := func() []T {
		out := make([]T, 4)
		if err := VariableRead(v, nil, out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	if got := read(); !reflect.DeepEqual(got, values) {
		t.Errorf("initial %v", got)
	}
	zero := make([]T, 4)
	if err := VariableAssign(v, nil, zero); err != nil || !reflect.DeepEqual(read(), zero) {
		t.Errorf("assign zero: %v %v", err, read())
	}
	if err := VariableAssignAdd(v, nil, values); err != nil {
		t.Fatal(err)
	}
	if n, _ := v.NumCopies(); n != 2 {
		t.Errorf("copies %d", n)
	}
	for c := 0; c < 2; c++ {
		stored := make([]T, 4)
		if err := VariableReadCopy(v, c, stored); err != nil || !reflect.DeepEqual(stored, values) {
			t.Errorf("copy %d: %v %v", c, stored, err)
		}
	}
	// In replica context each replica assigns values; SUM aggregates both.
	if err := s.Run(func(r *Replica) error { return VariableAssign(v, r, values) }); err != nil {
		t.Fatal(err)
	}
	if got := read(); !reflect.DeepEqual(got, sumOfTwo) {
		t.Errorf("after replica assign %v, want %v", got, sumOfTwo)
	}
	if err := s.Run(func(r *Replica) error { return VariableAssignSub(v, r, values) }); err != nil {
		t.Fatal(err)
	}
	if got := read(); !reflect.DeepEqual(got, zero) {
		t.Errorf("after replica assign_sub %v", got)
	}
	if err := VariableAssignSub(v, nil, values[:3]); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("wrong length: %v", err)
	}
}

func TestVariableRoundTripsForSeveralDTypes(t *testing.T) {
	variableRoundTrip(t, []float32{1.5, -2, 0.25, 8}, []float32{3, -4, 0.5, 16})
	variableRoundTrip(t, []float64{1e-300, -2.5, 3, 1e300}, []float64{2e-300, -5, 6, 2e300})
	variableRoundTrip(t, []int32{1, -2, 1 << 29, 7}, []int32{2, -4, 1 << 30, 14})
	variableRoundTrip(t, []int64{1 << 40, -3, 0, 9}, []int64{1 << 41, -6, 0, 18})
}

func TestInitialValueOfTheWrongLength(t *testing.T) {
	s := mirrored(t, 2)
	if _, err := NewVariable(s, &VariableOptions[float32]{Shape: []int64{3}, InitialValue: []float32{1, 2}}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("got %v", err)
	}
}

func TestMergeCallSeesEveryValueAndRecoversPanics(t *testing.T) {
	s := mirrored(t, 2)
	var merged []any
	err := s.Run(func(r *Replica) error {
		local, _ := r.LocalIndex()
		return r.MergeCall(100+local, func(cross *Strategy, values []any) error {
			if n, _ := cross.NumLocalReplicas(); n != 2 {
				t.Errorf("local replicas %d", n)
			}
			merged = values
			return nil
		})
	})
	if err != nil || !reflect.DeepEqual(merged, []any{100, 101}) {
		t.Fatalf("merged %v %v", merged, err)
	}
	err = s.Run(func(r *Replica) error {
		return r.MergeCall(nil, func(*Strategy, []any) error { panic("merge gives up") })
	})
	var re *ReplicaError
	if !errors.As(err, &re) || re.Panic != "merge gives up" {
		t.Errorf("got %v", err)
	}
}

func TestReduceSplitBatchAndBatchAllReduce(t *testing.T) {
	s := mirrored(t, 2)
	result := make([]float32, 2)
	if err := StrategyReduce(s, OpSum, [][]float32{{1, 2}, {3, 4}}, AxisNone, result); err != nil ||
		!reflect.DeepEqual(result, []float32{4, 6}) {
		t.Errorf("reduce %v %v", result, err)
	}
	if err := StrategyReduce(s, OpMean, [][]float32{{1, 1, 2, 2, 3, 3}, {6, 2}}, 0, result); err != nil ||
		!reflect.DeepEqual(result, []float32{3, 2}) {
		t.Errorf("reduce axis 0 %v %v", result, err)
	}
	batch := []int32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9} // 5 rows of 2
	parts, err := SplitBatch(s, batch, 5)
	if err != nil || !reflect.DeepEqual(parts, [][]int32{batch[0:6], batch[6:10]}) || &parts[1][0] != &batch[6] {
		t.Errorf("split %v %v", parts, err)
	}
	buffers := [][]float64{{1, 1, 1}, {2}, {3, 3, 3}, {4}}
	if err := BatchAllReduce(s, OpMean, buffers); err != nil ||
		!reflect.DeepEqual(buffers, [][]float64{{2, 2, 2}, {3}, {2, 2, 2}, {3}}) {
		t.Errorf("batch all-reduce %v %v", buffers, err)
	}
	if err := BatchAllReduce(s, OpSum, [][]float32{{1}}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("one buffer for two replicas: %v", err)
	}
}

func TestApplyGradientsWithSGDAndOptimizerErrors(t *testing.T) {
	s := mirrored(t, 2)
	w, err := NewVariable(s, &VariableOptions[float64]{Shape: []int64{2}, InitialValue: []float64{1, 1}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	lr := 0.5
	sgd, err := NewOptimizer(OptimizerOptions{Kind: SGD, LearningRate: &lr})
	if err != nil {
		t.Fatal(err)
	}
	defer sgd.Close()
	if err := ApplyGradients(s, []*Variable{w}, [][]float64{{1, 2}, {3, 6}}, sgd); err != nil {
		t.Fatal(err)
	}
	got := make([]float64, 2)
	if err := VariableRead(w, nil, got); err != nil || !reflect.DeepEqual(got, []float64{0, -1}) {
		t.Errorf("weights %v %v", got, err)
	}
	if n, _ := sgd.Iterations(); n != 1 {
		t.Errorf("iterations %d", n)
	}
	if err := ApplyGradients(s, []*Variable{w}, [][]float64{{1, 2}}, sgd); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("too few gradients: %v", err)
	}
	bad := -1.0
	if _, err := NewOptimizer(OptimizerOptions{Kind: SGD, LearningRate: &bad}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("negative learning rate: %v", err)
	}
	m := 0.5
	if o, err := NewOptimizer(OptimizerOptions{Kind: Momentum, Momentum: &m, Nesterov: true}); err != nil {
		t.Error(err)
	} else {
		o.Close()
	}
	one := 1.0
	if _, err := NewOptimizer(OptimizerOptions{Kind: Adam, Beta1: &one}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("beta_1 = 1: %v", err)
	}
}

func TestInputContexts(t *testing.T) {
	in, err := NewInputContext(3, 1, 6)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	p, _ := in.NumInputPipelines()
	id, _ := in.InputPipelineID()
	n, _ := in.NumReplicasInSync()
	if p != 3 || id != 1 || n != 6 {
		t.Errorf("%d %d %d", p, id, n)
	}
	if b, err := in.PerReplicaBatchSize(60); b != 10 || err != nil {
		t.Errorf("per replica %d %v", b, err)
	}
	if _, err := in.PerReplicaBatchSize(61); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("61: %v", err)
	}
	if files, err := in.ShardFiles(8); err != nil || !reflect.DeepEqual(files, []int64{1, 4, 7}) {
		t.Errorf("files %v %v", files, err)
	}
	if _, err := in.ShardFiles(2); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("2 files: %v", err)
	}
	if b, c, err := in.ShardRange(10); b != 4 || c != 3 || err != nil {
		t.Errorf("range %d %d %v", b, c, err)
	}
	if _, err := NewInputContext(2, 2, 2); err == nil {
		t.Error("pipeline id 2 of 2 accepted")
	}
	s := mirrored(t, 2)
	own, err := s.InputContext()
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close()
	if p, _ := own.NumInputPipelines(); p != 1 {
		t.Errorf("own pipelines %d", p)
	}
}

// The example under dist-run with two ranks of two replicas each.
func TestStrategyExampleOnTwoRanks(t *testing.T) {
	text := distRun(t, "strategy", 2)
	if !strings.Contains(text, "rank 0 of 2: 4 replicas") || !strings.Contains(text, "rank 1 of 2: 4 replicas") ||
		strings.Count(text, "identical on all ranks, correct") != 2 {
		t.Fatalf("unexpected output:\n%s", text)
	}
}
