package distribute

// #include <stdlib.h>
// #include "dist.h"
import "C"

import (
	"runtime"
	"unsafe"
)

// Synchronization is tf.VariableSynchronization.
type Synchronization int32

const (
	SyncAuto    Synchronization = C.DIST_SYNC_AUTO
	SyncOnWrite Synchronization = C.DIST_SYNC_ON_WRITE
	SyncOnRead  Synchronization = C.DIST_SYNC_ON_READ
	SyncNone    Synchronization = C.DIST_SYNC_NONE
)

// Aggregation is tf.VariableAggregation.
type Aggregation int32

const (
	AggregationNone             Aggregation = C.DIST_AGGREGATION_NONE
	AggregationSum              Aggregation = C.DIST_AGGREGATION_SUM
	AggregationMean             Aggregation = C.DIST_AGGREGATION_MEAN
	AggregationOnlyFirstReplica Aggregation = C.DIST_AGGREGATION_ONLY_FIRST_REPLICA
)

// VariableOptions are dist_variable_options_t (the dtype is T's); zero values and
// nil fields keep the defaults.
type VariableOptions[T Element] struct {
	Name            string
	Shape           []int64 // nil: a scalar
	InitialValue    []T     // every element, row-major; nil: zeros
	Synchronization *Synchronization
	Aggregation     *Aggregation
	// ParameterServer only: the servers' optimizer of VariableApplyGradient and
	// VariableApplyRows (nil: gradients are refused); a partitioner of the rows
	// (zero values unset; default one shard): NumShards shards, or MaxShardBytes /
	// MinShardBytes with MaxShards; ColocateWith, a variable whose shard i places
	// shard i; SyncGradients (with ReplicasToAggregate, MaxStaleness) makes
	// VariableApplyGradient synchronous.
	Optimizer           *OptimizerOptions
	NumShards           int
	MaxShardBytes       uint64
	MinShardBytes       uint64
	MaxShards           int
	ColocateWith        *Variable
	SyncGradients       bool
	ReplicasToAggregate *int
	MaxStaleness        *int
}

// Variable is a distributed variable (dist_variable_t). Replica functions may
// share it (their calls pass their Replica); cross-replica calls (replica nil)
// follow the strategy's rule: one goroutine at a time, outside Run.
type Variable struct {
	core     *handleCore[C.dist_variable_t]
	strategy *Strategy // keeps the strategy wrapper (and its context) reachable
}

// NewVariable creates a variable of s (collective: the chief's initial value is
// broadcast); o may be nil.
func NewVariable[T Element](s *Strategy, o *VariableOptions[T]) (*Variable, error) {
	defer runtime.KeepAlive(s)
	raw := C.dist_variable_options_t{field_mask: C.DIST_VARIABLE_OPT_DTYPE, dtype: C.dist_dtype_t(DTypeOf[T]())}
	var strings cStrings
	defer strings.free()
	var allocated []unsafe.Pointer
	defer func() {
		for _, p := range allocated {
			C.free(p)
		}
	}()
	if o != nil {
		if o.Name != "" {
			raw.field_mask |= C.DIST_VARIABLE_OPT_NAME
			raw.name = strings.add(o.Name)
		}
		elements := int64(1)
		if o.Shape != nil {
			raw.field_mask |= C.DIST_VARIABLE_OPT_SHAPE
			p := cArray(o.Shape)
			allocated = append(allocated, p)
			raw.shape, raw.rank = (*C.int64_t)(p), C.int32_t(len(o.Shape))
			for _, d := range o.Shape {
				elements *= d
			}
		}
		if o.InitialValue != nil {
			// The library reads as many elements as the shape has.
			if int64(len(o.InitialValue)) != elements {
				return nil, invalid("initial value has %d elements, the shape %d", len(o.InitialValue), elements)
			}
			raw.field_mask |= C.DIST_VARIABLE_OPT_INITIAL_VALUE
			p := cArray(o.InitialValue)
			allocated = append(allocated, p)
			raw.initial_value = p
		}
		if o.Synchronization != nil {
			raw.field_mask |= C.DIST_VARIABLE_OPT_SYNCHRONIZATION
			raw.synchronization = C.dist_synchronization_t(*o.Synchronization)
		}
		if o.Aggregation != nil {
			raw.field_mask |= C.DIST_VARIABLE_OPT_AGGREGATION
			raw.aggregation = C.dist_aggregation_t(*o.Aggregation)
		}
		if o.Optimizer != nil {
			// In C memory: raw is Go memory the C call sees, so it holds no Go pointer.
			p := cArray([]C.dist_optimizer_options_t{o.Optimizer.raw()})
			allocated = append(allocated, p)
			raw.field_mask |= C.DIST_VARIABLE_OPT_OPTIMIZER
			raw.optimizer = (*C.dist_optimizer_options_t)(p)
		}
		// The ParameterServer settings: each sets its bit when given.
		set := func(bit C.uint64_t, given bool) bool {
			if given {
				raw.field_mask |= bit
			}
			return given
		}
		raw.num_shards = C.int32_t(o.NumShards)
		set(C.DIST_VARIABLE_OPT_NUM_SHARDS, o.NumShards != 0)
		raw.max_shard_bytes = C.uint64_t(o.MaxShardBytes)
		set(C.DIST_VARIABLE_OPT_MAX_SHARD_BYTES, o.MaxShardBytes != 0)
		raw.min_shard_bytes = C.uint64_t(o.MinShardBytes)
		set(C.DIST_VARIABLE_OPT_MIN_SHARD_BYTES, o.MinShardBytes != 0)
		raw.max_shards = C.int32_t(o.MaxShards)
		set(C.DIST_VARIABLE_OPT_MAX_SHARDS, o.MaxShards != 0)
		if set(C.DIST_VARIABLE_OPT_COLOCATE_WITH, o.ColocateWith != nil) {
			raw.colocate_with = o.ColocateWith.core.live()
			defer runtime.KeepAlive(o.ColocateWith)
		}
		if set(C.DIST_VARIABLE_OPT_SYNC_GRADIENTS, o.SyncGradients) {
			raw.sync_gradients = 1
		}
		if set(C.DIST_VARIABLE_OPT_REPLICAS_TO_AGGREGATE, o.ReplicasToAggregate != nil) {
			raw.replicas_to_aggregate = C.int32_t(*o.ReplicasToAggregate)
		}
		if set(C.DIST_VARIABLE_OPT_MAX_STALENESS, o.MaxStaleness != nil) {
			raw.max_staleness = C.int32_t(*o.MaxStaleness)
		}
	}
	h := s.raw()
	var v *C.dist_variable_t
	if err := call(func() C.dist_status_t { return C.dist_variable_create(h, &raw, &v) }); err != nil {
		return nil, err
	}
	var ctx *contextCore
	if s.context != nil {
		ctx = s.context.contextCore
	}
	variable := &Variable{core: newHandleCore(v, func(h *C.dist_variable_t) { C.dist_variable_destroy(h) }, ctx), strategy: s}
	runtime.SetFinalizer(variable, (*Variable).Close)
	return variable, nil
}

// Close destroys the variable. Idempotent.
func (v *Variable) Close() error { return closeWrapper(v, v.core) }

func (v *Variable) Name() (string, error) {
	defer runtime.KeepAlive(v)
	h := v.core.live()
	var n *C.char
	err := call(func() C.dist_status_t { return C.dist_variable_name(h, &n) })
	return C.GoString(n), err
}

func (v *Variable) DType() (DType, error) {
	defer runtime.KeepAlive(v)
	h := v.core.live()
	var d C.dist_dtype_t
	err := call(func() C.dist_status_t { return C.dist_variable_dtype(h, &d) })
	return DType(d), err
}

func (v *Variable) Shape() ([]int64, error) {
	defer runtime.KeepAlive(v)
	h := v.core.live()
	var shape *C.int64_t
	var rank C.int32_t
	if err := call(func() C.dist_status_t { return C.dist_variable_shape(h, &shape, &rank) }); err != nil {
		return nil, err
	}
	out := make([]int64, int(rank))
	if rank > 0 {
		copy(out, unsafe.Slice((*int64)(unsafe.Pointer(shape)), int(rank)))
	}
	return out, nil
}

// Count is the number of elements.
func (v *Variable) Count() (int, error) {
	defer runtime.KeepAlive(v)
	h := v.core.live()
	var n C.uint64_t
	err := call(func() C.dist_status_t { return C.dist_variable_count(h, &n) })
	return int(n), err
}

// Synchronization as resolved (never SyncAuto).
func (v *Variable) Synchronization() (Synchronization, error) {
	defer runtime.KeepAlive(v)
	h := v.core.live()
	var s C.dist_synchronization_t
	err := call(func() C.dist_status_t { return C.dist_variable_synchronization(h, &s) })
	return Synchronization(s), err
}

func (v *Variable) Aggregation() (Aggregation, error) {
	defer runtime.KeepAlive(v)
	h := v.core.live()
	var a C.dist_aggregation_t
	err := call(func() C.dist_status_t { return C.dist_variable_aggregation(h, &a) })
	return Aggregation(a), err
}

// NumCopies is the number of local copies: local replicas, 1 for CentralStorage
// ON_WRITE, 0 on parameter servers.
func (v *Variable) NumCopies() (int, error) {
	defer runtime.KeepAlive(v)
	h := v.core.live()
	var n C.int32_t
	err := call(func() C.dist_status_t { return C.dist_variable_num_copies(h, &n) })
	return int(n), err
}

func replicaHandle(r *Replica) *C.dist_replica_context_t {
	if r == nil {
		return nil
	}
	return r.handle()
}

// VariableRead reads v into out: in replica context (r non-nil) that replica's
// view; with r nil cross-replica (ON_READ: aggregated, a collective).
func VariableRead[T Element](v *Variable, r *Replica, out []T) error {
	defer runtime.KeepAlive(v)
	return bufferCall(C.GO_VAR_READ, v.core.live(), replicaHandle(r), out, OpSum)
}

// VariableAssign assigns value (see the header for how each synchronization and
// aggregation treats it); r nil is cross-replica.
func VariableAssign[T Element](v *Variable, r *Replica, value []T) error {
	defer runtime.KeepAlive(v)
	return bufferCall(C.GO_VAR_ASSIGN, v.core.live(), replicaHandle(r), value, OpSum)
}

func VariableAssignAdd[T Element](v *Variable, r *Replica, value []T) error {
	defer runtime.KeepAlive(v)
	return bufferCall(C.GO_VAR_ASSIGN_ADD, v.core.live(), replicaHandle(r), value, OpSum)
}

func VariableAssignSub[T Element](v *Variable, r *Replica, value []T) error {
	defer runtime.KeepAlive(v)
	return bufferCall(C.GO_VAR_ASSIGN_SUB, v.core.live(), replicaHandle(r), value, OpSum)
}

// VariableReadCopy reads local copy i as stored (a check of the mirroring).
func VariableReadCopy[T Element](v *Variable, i int, out []T) error {
	defer runtime.KeepAlive(v)
	h := v.core.live()
	return call(func() C.dist_status_t {
		return C.go_variable_read_copy(h, C.int32_t(i), dataOf(out), C.uint64_t(len(out)), C.dist_dtype_t(DTypeOf[T]()))
	})
}

// Shard is where one shard of a variable on parameter servers lives.
type Shard struct {
	Server   int    // index in the cluster's "ps" job
	FirstRow uint64 // of the variable's first dimension
	Rows     uint64
}

// Shards lists where a ParameterServer variable lives; empty for others.
func (v *Variable) Shards() ([]Shard, error) {
	defer runtime.KeepAlive(v)
	h := v.core.live()
	var n C.int32_t
	if err := call(func() C.dist_status_t { return C.dist_variable_num_shards(h, &n) }); err != nil {
		return nil, err
	}
	shards := make([]Shard, int(n))
	for i := range shards {
		var server C.int32_t
		var first, rows C.uint64_t
		if err := call(func() C.dist_status_t { return C.dist_variable_shard(h, C.int32_t(i), &server, &first, &rows) }); err != nil {
			return nil, err
		}
		shards[i] = Shard{Server: int(server), FirstRow: uint64(first), Rows: uint64(rows)}
	}
	return shards, nil
}

// VariableApplyGradient sends gradient (the variable's count) to the parameter
// servers, where each shard applies it with the variable's optimizer,
// asynchronously to other workers; r nil is cross-replica.
func VariableApplyGradient[T Element](v *Variable, r *Replica, gradient []T) error {
	defer runtime.KeepAlive(v)
	return bufferCall(C.GO_VAR_APPLY_GRADIENT, v.core.live(), replicaHandle(r), gradient, OpSum)
}

func rowsCall[T Element](kind C.int, v *Variable, r *Replica, rows []int64, data []T) error {
	defer runtime.KeepAlive(v)
	h := v.core.live()
	var first *C.int64_t
	if len(rows) > 0 {
		first = (*C.int64_t)(unsafe.Pointer(&rows[0]))
	}
	return call(func() C.dist_status_t {
		return C.go_rows_call(kind, h, replicaHandle(r), first, C.uint64_t(len(rows)), dataOf(data),
			C.uint64_t(len(data)), C.dist_dtype_t(DTypeOf[T]()))
	})
}

// VariableReadRows reads rows[i] of a ParameterServer variable into out (an
// embedding lookup: len(rows) rows of the product of shape[1:] elements each, in
// the order given; repeats allowed).
func VariableReadRows[T Element](v *Variable, r *Replica, rows []int64, out []T) error {
	return rowsCall(C.GO_ROWS_READ, v, r, rows, out)
}

// VariableAddRows adds row i of values to row rows[i] on the servers (scatter-add;
// a row listed twice gets both).
func VariableAddRows[T Element](v *Variable, r *Replica, rows []int64, values []T) error {
	return rowsCall(C.GO_ROWS_ADD, v, r, rows, values)
}

// VariableApplyRows lets the variable's optimizer update rows[i] with row i of
// gradients, touching no other row (a sparse gradient).
func VariableApplyRows[T Element](v *Variable, r *Replica, rows []int64, gradients []T) error {
	return rowsCall(C.GO_ROWS_APPLY, v, r, rows, gradients)
}
