package distribute

// #include <stdlib.h>
// #include "dist.h"
import "C"

import (
	"runtime"
	"time"
	"unsafe"
)

// StrategyKind is dist_strategy_kind_t.
type StrategyKind int32

const (
	OneDevice           StrategyKind = C.DIST_STRATEGY_ONE_DEVICE
	Mirrored            StrategyKind = C.DIST_STRATEGY_MIRRORED
	MultiWorkerMirrored StrategyKind = C.DIST_STRATEGY_MULTI_WORKER_MIRRORED
	CentralStorage      StrategyKind = C.DIST_STRATEGY_CENTRAL_STORAGE
	// ParameterServer keeps variables on the tasks of a cluster's "ps" job.
	ParameterServer StrategyKind = C.DIST_STRATEGY_PARAMETER_SERVER
)

// Communication is dist_communication_t.
type Communication int32

const (
	CommunicationAuto Communication = C.DIST_COMMUNICATION_AUTO
	CommunicationRing Communication = C.DIST_COMMUNICATION_RING
	// CommunicationNCCL needs GPU replicas on distinct GPUs and NCCL
	// (ErrUnsupported on CPU replicas).
	CommunicationNCCL Communication = C.DIST_COMMUNICATION_NCCL
)

// CrossDeviceOps is dist_cross_device_ops_t (tf.distribute's CrossDeviceOps): how
// the GPU replicas of one worker combine their values, for Mirrored and the local
// step of MultiWorkerMirrored. CPU replicas take only CrossDeviceOpsAuto and
// CrossDeviceOpsReductionToOneDevice to a CPU device.
type CrossDeviceOps int32

const (
	// CrossDeviceOpsAuto (the default) is NCCLAllReduce when every replica is a GPU
	// and NCCL is available, else ReductionToOneDevice.
	CrossDeviceOpsAuto CrossDeviceOps = C.DIST_CROSS_DEVICE_OPS_AUTO
	// CrossDeviceOpsNCCLAllReduce: one NCCL communicator over the local GPUs.
	CrossDeviceOpsNCCLAllReduce CrossDeviceOps = C.DIST_CROSS_DEVICE_OPS_NCCL_ALL_REDUCE
	// CrossDeviceOpsHierarchicalCopy: two halves summed on their first GPU by peer
	// copies, the two sums exchanged (TF's HierarchicalCopyAllReduce).
	CrossDeviceOpsHierarchicalCopy CrossDeviceOps = C.DIST_CROSS_DEVICE_OPS_HIERARCHICAL_COPY
	// CrossDeviceOpsReductionToOneDevice: every value copied to ReduceToDevice,
	// summed there, copied back.
	CrossDeviceOpsReductionToOneDevice CrossDeviceOps = C.DIST_CROSS_DEVICE_OPS_REDUCTION_TO_ONE_DEVICE
)

// Placement is dist_placement_t: where a ParameterServer strategy puts each new
// variable (each shard).
type Placement int32

const (
	RoundRobin  Placement = C.DIST_PLACEMENT_ROUND_ROBIN  // servers in turn (the default)
	GreedyBytes Placement = C.DIST_PLACEMENT_GREEDY_BYTES // the server holding the fewest bytes
)

// StrategyOptions are dist_strategy_options_t; nil fields keep the defaults.
type StrategyOptions struct {
	Kind          *StrategyKind
	NumCPUDevices *int // local replicas, 1..64
	Communication *Communication
	BytesPerPack  *uint64 // gradient fusion bucket; 0: 8 MiB
	Timeout       *time.Duration
	BindThreads   *bool // needs hwloc
	// ParameterServer only: the cluster whose "ps" job holds the variables when
	// there is no context (kept reachable by the strategy), and the cluster token
	// the servers expect (default DIST_CLUSTER_TOKEN, then DIST_CLUSTER_TOKEN_FILE).
	Cluster   *Cluster
	Token     string
	TokenFile string
	Placement *Placement
	// Mirrored and MultiWorkerMirrored only (others refuse it): default
	// CrossDeviceOpsAuto.
	CrossDeviceOps *CrossDeviceOps
	// CrossDeviceOpsReductionToOneDevice: the device it sums on, "CPU:0" or
	// "GPU:i" ("": the first replica's device).
	ReduceToDevice string
	// CrossDeviceOpsNCCLAllReduce and CrossDeviceOpsHierarchicalCopy only (as given
	// or as CrossDeviceOpsAuto chose them; CPU replicas refuse it): ApplyGradients
	// packs each dtype's gradients into this many packs of about equal size (TF's
	// num_packs, 1..64) instead of buckets of BytesPerPack.
	NumPacks *int
}

// Strategy is a distribution strategy (dist_strategy_t). The header's thread
// rule: one cross-replica goroutine at a time uses a strategy and its variables
// (Run's replica functions use only their Replica). Close must not race with
// other calls. The context, if any, must outlive it: closing the context
// closes it first.
type Strategy struct {
	core    *handleCore[C.dist_strategy_t]
	context *Context // keeps the context reachable
	cluster *Cluster // keeps a ParameterServer strategy's borrowed cluster reachable
	// borrowed is the view a merge function receives: the library owns it.
	borrowed *C.dist_strategy_t
}

// NewStrategy creates a strategy (dist_strategy_create); context nil is a single
// worker; options may be nil. MultiWorkerMirrored with a context is collective.
func NewStrategy(context *Context, o *StrategyOptions) (*Strategy, error) {
	var raw C.dist_strategy_options_t
	var strings cStrings
	defer strings.free()
	var cluster *Cluster
	if o != nil {
		if o.Kind != nil {
			raw.field_mask |= C.DIST_STRATEGY_OPT_KIND
			raw.kind = C.dist_strategy_kind_t(*o.Kind)
		}
		if o.NumCPUDevices != nil {
			raw.field_mask |= C.DIST_STRATEGY_OPT_NUM_CPU_DEVICES
			raw.num_cpu_devices = C.int32_t(*o.NumCPUDevices)
		}
		if o.Communication != nil {
			raw.field_mask |= C.DIST_STRATEGY_OPT_COMMUNICATION
			raw.communication = C.dist_communication_t(*o.Communication)
		}
		if o.BytesPerPack != nil {
			raw.field_mask |= C.DIST_STRATEGY_OPT_BYTES_PER_PACK
			raw.bytes_per_pack = C.uint64_t(*o.BytesPerPack)
		}
		if o.Timeout != nil {
			raw.field_mask |= C.DIST_STRATEGY_OPT_TIMEOUT_SECONDS
			raw.timeout_seconds = C.double(o.Timeout.Seconds())
		}
		if o.BindThreads != nil {
			raw.field_mask |= C.DIST_STRATEGY_OPT_BIND_THREADS
			if *o.BindThreads {
				raw.bind_threads = 1
			}
		}
		if o.Cluster != nil {
			cluster = o.Cluster
			raw.field_mask |= C.DIST_STRATEGY_OPT_CLUSTER
			raw.cluster = cluster.raw()
		}
		if o.Token != "" {
			raw.field_mask |= C.DIST_STRATEGY_OPT_TOKEN
			raw.token = strings.add(o.Token)
		}
		if o.TokenFile != "" {
			raw.field_mask |= C.DIST_STRATEGY_OPT_TOKEN_FILE
			raw.token_file = strings.add(o.TokenFile)
		}
		if o.Placement != nil {
			raw.field_mask |= C.DIST_STRATEGY_OPT_PLACEMENT
			raw.placement = C.dist_placement_t(*o.Placement)
		}
		if o.CrossDeviceOps != nil {
			raw.field_mask |= C.DIST_STRATEGY_OPT_CROSS_DEVICE_OPS
			raw.cross_device_ops = C.dist_cross_device_ops_t(*o.CrossDeviceOps)
		}
		if o.ReduceToDevice != "" {
			raw.field_mask |= C.DIST_STRATEGY_OPT_REDUCE_TO_DEVICE
			raw.reduce_to_device = strings.add(o.ReduceToDevice)
		}
		if o.NumPacks != nil {
			raw.field_mask |= C.DIST_STRATEGY_OPT_NUM_PACKS
			raw.num_packs = C.int32_t(*o.NumPacks)
		}
	}
	var ctxHandle *C.dist_context_t
	var ctxCore *contextCore
	if context != nil {
		ctxCore = context.contextCore
		ctxHandle = ctxCore.live()
	}
	var h *C.dist_strategy_t
	err := call(func() C.dist_status_t { return C.dist_strategy_create(ctxHandle, &raw, &h) })
	runtime.KeepAlive(context)
	if err != nil {
		return nil, err
	}
	s := &Strategy{core: newHandleCore(h, func(h *C.dist_strategy_t) { C.dist_strategy_destroy(h) }, ctxCore),
		context: context, cluster: cluster}
	runtime.SetFinalizer(s, (*Strategy).Close)
	return s, nil
}

// Close destroys the strategy (its variables keep its state alive). Idempotent;
// a no-op on the strategy a merge function receives.
func (s *Strategy) Close() error {
	if s.core == nil {
		return nil
	}
	return closeWrapper(s, s.core)
}

func (s *Strategy) raw() *C.dist_strategy_t {
	if s.core == nil {
		return s.borrowed
	}
	return s.core.live()
}

func (s *Strategy) int32Query(f func(h *C.dist_strategy_t, out *C.int32_t) C.dist_status_t) (int, error) {
	defer runtime.KeepAlive(s)
	h := s.raw()
	var v C.int32_t
	err := call(func() C.dist_status_t { return f(h, &v) })
	return int(v), err
}

func (s *Strategy) Kind() (StrategyKind, error) {
	k, err := s.int32Query(func(h *C.dist_strategy_t, out *C.int32_t) C.dist_status_t {
		return C.dist_strategy_kind(h, (*C.dist_strategy_kind_t)(out))
	})
	return StrategyKind(k), err
}

// NumReplicasInSync is the number of replicas in the sync group (all workers).
func (s *Strategy) NumReplicasInSync() (int, error) {
	return s.int32Query(func(h *C.dist_strategy_t, out *C.int32_t) C.dist_status_t {
		return C.dist_strategy_num_replicas_in_sync(h, out)
	})
}

func (s *Strategy) NumLocalReplicas() (int, error) {
	return s.int32Query(func(h *C.dist_strategy_t, out *C.int32_t) C.dist_status_t {
		return C.dist_strategy_num_local_replicas(h, out)
	})
}

// TaskID is this worker's task id (-1 alone).
func (s *Strategy) TaskID() (int, error) {
	return s.int32Query(func(h *C.dist_strategy_t, out *C.int32_t) C.dist_status_t { return C.dist_strategy_task_id(h, out) })
}

// CrossDeviceOps is the cross-device ops in effect (CrossDeviceOpsAuto resolved
// by TF's rule): CrossDeviceOpsReductionToOneDevice on CPU replicas.
func (s *Strategy) CrossDeviceOps() (CrossDeviceOps, error) {
	ops, err := s.int32Query(func(h *C.dist_strategy_t, out *C.int32_t) C.dist_status_t {
		return C.dist_strategy_cross_device_ops(h, (*C.dist_cross_device_ops_t)(out))
	})
	return CrossDeviceOps(ops), err
}

// Device is the i-th local device, "/job:worker/replica:0/task:1/device:CPU:0".
func (s *Strategy) Device(i int) (string, error) {
	defer runtime.KeepAlive(s)
	h := s.raw()
	var d *C.char
	err := call(func() C.dist_status_t { return C.dist_strategy_device(h, C.int32_t(i), &d) })
	return C.GoString(d), err
}

// TaskType is this worker's task type ("worker", "chief"); "" alone.
func (s *Strategy) TaskType() (string, error) {
	defer runtime.KeepAlive(s)
	h := s.raw()
	var t *C.char
	err := call(func() C.dist_status_t { return C.dist_strategy_task_type(h, &t) })
	return C.GoString(t), err
}

// WorkerIndex is this worker's index among the workers and their number.
func (s *Strategy) WorkerIndex() (index, workers int, err error) {
	defer runtime.KeepAlive(s)
	h := s.raw()
	var i, n C.int32_t
	err = call(func() C.dist_status_t { return C.dist_strategy_worker_index(h, &i, &n) })
	return int(i), int(n), err
}

// Cluster is a copy of the context's cluster (nil without a context); the
// caller closes it.
func (s *Strategy) Cluster() (*Cluster, error) {
	defer runtime.KeepAlive(s)
	h := s.raw()
	var c *C.dist_cluster_t
	var json *C.char
	err := call(func() C.dist_status_t {
		if status := C.dist_strategy_cluster(h, &c); status != C.DIST_OK || c == nil {
			return status
		}
		return C.dist_cluster_to_json(c, &json)
	})
	if err != nil || c == nil {
		return nil, err
	}
	text := C.GoString(json)
	C.dist_string_free(json)
	return ClusterFromJSON(text)
}

// InputContext is this worker's input context (one pipeline per worker).
func (s *Strategy) InputContext() (*InputContext, error) {
	defer runtime.KeepAlive(s)
	h := s.raw()
	var in *C.dist_input_context_t
	if err := call(func() C.dist_status_t { return C.dist_strategy_input_context(h, &in) }); err != nil {
		return nil, err
	}
	return wrapInputContext(in), nil
}

// cBuffers copies slices into one C allocation described by a C array of
// dist_buffer_t (cgo forbids Go memory that holds Go pointers from reaching C).
// copyBack copies the C data back into the slices; free releases both.
type cBuffers[T Element] struct {
	slices [][]T
	data   unsafe.Pointer
	descs  *C.dist_buffer_t
}

func newCBuffers[T Element](slices [][]T) *cBuffers[T] {
	size := int(unsafe.Sizeof(*new(T)))
	total := 0
	for _, s := range slices {
		total += len(s)
	}
	b := &cBuffers[T]{slices: slices, data: C.malloc(C.size_t(total*size + 1)), descs: C.go_buffers_new(C.size_t(len(slices)))}
	offset := 0
	dtype := C.dist_dtype_t(DTypeOf[T]())
	for i, s := range slices {
		p := unsafe.Add(b.data, offset*size)
		copy(unsafe.Slice((*T)(p), len(s)), s)
		C.go_buffer_set(b.descs, C.size_t(i), p, C.uint64_t(len(s)), dtype)
		offset += len(s)
	}
	return b
}

func (b *cBuffers[T]) copyBack() {
	size := int(unsafe.Sizeof(*new(T)))
	offset := 0
	for _, s := range b.slices {
		copy(s, unsafe.Slice((*T)(unsafe.Add(b.data, offset*size)), len(s)))
		offset += len(s)
	}
}

func (b *cBuffers[T]) free() {
	C.free(b.data)
	C.free(unsafe.Pointer(b.descs))
}

// Axis of StrategyReduce: AxisNone reduces element-wise.
const AxisNone = int(C.DIST_AXIS_NONE)

// StrategyReduce is strategy.reduce(op, per-replica values, axis) in
// cross-replica context: values[i] is local replica i's value. axis AxisNone
// reduces element-wise; 0 sums batches of rows of len(result) elements.
func StrategyReduce[T Element](s *Strategy, op Op, values [][]T, axis int, result []T) error {
	defer runtime.KeepAlive(s)
	h := s.raw()
	in := newCBuffers(values)
	defer in.free()
	out := newCBuffers([][]T{result})
	defer out.free()
	err := call(func() C.dist_status_t {
		return C.dist_strategy_reduce(h, C.dist_op_t(op), in.descs, C.int32_t(len(values)), C.int32_t(axis), out.descs)
	})
	if err == nil {
		out.copyBack()
	}
	return err
}

// BatchAllReduce is the fused all-reduce: buffers[r*n+i] is local replica r's
// tensor i (n = len(buffers) / local replicas); afterwards every replica's tensor i holds the sum (or mean).
func BatchAllReduce[T Element](s *Strategy, op Op, buffers [][]T) error {
	defer runtime.KeepAlive(s)
	replicas, err := s.NumLocalReplicas()
	if err != nil {
		return err
	}
	// The library reads local replicas * n descriptors.
	if replicas < 1 || len(buffers)%replicas != 0 {
		return invalid("BatchAllReduce: %d buffers do not divide among %d local replicas", len(buffers), replicas)
	}
	h := s.raw()
	b := newCBuffers(buffers)
	defer b.free()
	err = call(func() C.dist_status_t {
		return C.dist_strategy_batch_all_reduce(h, C.dist_op_t(op), b.descs, C.size_t(len(buffers)/replicas))
	})
	if err == nil {
		b.copyBack()
	}
	return err
}

// ApplyGradients mean-all-reduces grads (grads[r*len(vars)+i] is local replica
// r's gradient of vars[i]) and lets the optimizer update every copy. The
// gradients are scratch: with one local replica, large ones hold the sum afterwards.
func ApplyGradients[T Element](s *Strategy, vars []*Variable, grads [][]T, optimizer *Optimizer) error {
	defer runtime.KeepAlive(s)
	defer runtime.KeepAlive(vars)
	defer runtime.KeepAlive(optimizer)
	replicas, err := s.NumLocalReplicas()
	if err != nil {
		return err
	}
	if len(grads) != replicas*len(vars) {
		return invalid("ApplyGradients: %d gradients for %d variables and %d local replicas (need %d)",
			len(grads), len(vars), replicas, replicas*len(vars))
	}
	h := s.raw()
	raw := make([]*C.dist_variable_t, len(vars)+1) // C pointers only: allowed in Go memory
	for i, v := range vars {
		raw[i] = v.core.live()
	}
	b := newCBuffers(grads)
	defer b.free()
	o := optimizer.core.live()
	err = call(func() C.dist_status_t {
		return C.dist_strategy_apply_gradients(h, &raw[0], b.descs, C.size_t(len(vars)), o)
	})
	if err == nil {
		b.copyBack()
	}
	return err
}

// SplitBatch splits this worker's batch of rows rows across the local replicas
// without copying: one sub-slice of batch per local replica (empty when a replica
// gets none).
func SplitBatch[T Element](s *Strategy, batch []T, rows int) ([][]T, error) {
	defer runtime.KeepAlive(s)
	n, err := s.NumLocalReplicas()
	if err != nil {
		return nil, err
	}
	h := s.raw()
	offsets, counts := make([]int64, n+1), make([]int64, n+1)
	err = call(func() C.dist_status_t {
		return C.go_split_batch(h, dataOf(batch), C.uint64_t(len(batch)), C.dist_dtype_t(DTypeOf[T]()), C.uint64_t(rows),
			(*C.int64_t)(&offsets[0]), (*C.int64_t)(&counts[0]), C.int32_t(n))
	})
	if err != nil {
		return nil, err
	}
	size := int64(unsafe.Sizeof(*new(T)))
	parts := make([][]T, n)
	for i := range parts {
		start := offsets[i] / size
		parts[i] = batch[start : start+counts[i]]
	}
	return parts, nil
}

// LocalResults are the values the local replicas set with SetResult in the last
// Run, in local replica order (nil for a replica that set none).
func LocalResults[T Element](s *Strategy) ([][]T, error) {
	defer runtime.KeepAlive(s)
	h := s.raw()
	var results *C.dist_buffer_t
	var count C.int32_t
	if err := call(func() C.dist_status_t { return C.dist_strategy_local_results(h, &results, &count) }); err != nil {
		return nil, err
	}
	out := make([][]T, int(count))
	for i, b := range unsafe.Slice(results, int(count)) {
		if b.count == 0 || b.data == nil {
			continue
		}
		if DType(b.dtype) != DTypeOf[T]() {
			return nil, invalid("local result %d has dtype %d, not the requested %d", i, int(b.dtype), int(DTypeOf[T]()))
		}
		out[i] = append([]T(nil), unsafe.Slice((*T)(b.data), int(b.count))...)
	}
	return out, nil
}
