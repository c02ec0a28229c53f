package distribute

// #include "dist.h"
import "C"

import "runtime"

// InputContext is TF's InputContext: how many input pipelines read data, which
// one this is, and how a global batch divides among replicas. Immutable: safe
// for concurrent use.
type InputContext struct {
	core *handleCore[C.dist_input_context_t]
}

func wrapInputContext(h *C.dist_input_context_t) *InputContext {
	in := &InputContext{core: newHandleCore(h, func(h *C.dist_input_context_t) { C.dist_input_context_destroy(h) }, nil)}
	runtime.SetFinalizer(in, (*InputContext).Close)
	return in
}

func NewInputContext(numInputPipelines, inputPipelineID, numReplicasInSync int) (*InputContext, error) {
	var h *C.dist_input_context_t
	if err := call(func() C.dist_status_t {
		return C.dist_input_context_create(C.int32_t(numInputPipelines), C.int32_t(inputPipelineID),
			C.int32_t(numReplicasInSync), &h)
	}); err != nil {
		return nil, err
	}
	return wrapInputContext(h), nil
}

// Close destroys the input context. Idempotent.
func (in *InputContext) Close() error { return closeWrapper(in, in.core) }

func (in *InputContext) int32Query(f func(h *C.dist_input_context_t, out *C.int32_t) C.dist_status_t) (int, error) {
	defer runtime.KeepAlive(in)
	h := in.core.live()
	var v C.int32_t
	err := call(func() C.dist_status_t { return f(h, &v) })
	return int(v), err
}

func (in *InputContext) NumInputPipelines() (int, error) {
	return in.int32Query(func(h *C.dist_input_context_t, out *C.int32_t) C.dist_status_t {
		return C.dist_input_context_num_input_pipelines(h, out)
	})
}

func (in *InputContext) InputPipelineID() (int, error) {
	return in.int32Query(func(h *C.dist_input_context_t, out *C.int32_t) C.dist_status_t {
		return C.dist_input_context_input_pipeline_id(h, out)
	})
}

func (in *InputContext) NumReplicasInSync() (int, error) {
	return in.int32Query(func(h *C.dist_input_context_t, out *C.int32_t) C.dist_status_t {
		return C.dist_input_context_num_replicas_in_sync(h, out)
	})
}

// PerReplicaBatchSize is globalBatchSize / NumReplicasInSync; an error when it does not divide.
func (in *InputContext) PerReplicaBatchSize(globalBatchSize int64) (int64, error) {
	defer runtime.KeepAlive(in)
	h := in.core.live()
	var n C.int64_t
	err := call(func() C.dist_status_t {
		return C.dist_input_context_per_replica_batch_size(h, C.int64_t(globalBatchSize), &n)
	})
	return int64(n), err
}

// ShardFiles are the indices of the files this pipeline reads (file i belongs to
// pipeline i % NumInputPipelines).
func (in *InputContext) ShardFiles(numFiles int64) ([]int64, error) {
	pipelines, err := in.NumInputPipelines()
	if err != nil {
		return nil, err
	}
	defer runtime.KeepAlive(in)
	h := in.core.live()
	// Pipeline p gets the files p, p + pipelines, ...: at most ceil(files / pipelines).
	capacity := int64(0)
	if numFiles > 0 && pipelines > 0 {
		capacity = (numFiles + int64(pipelines) - 1) / int64(pipelines)
	}
	indices := make([]int64, capacity+1)
	var count C.int64_t
	err = call(func() C.dist_status_t {
		return C.dist_input_context_shard_files(h, C.int64_t(numFiles), (*C.int64_t)(&indices[0]), C.int64_t(capacity), &count)
	})
	if err != nil {
		return nil, err
	}
	return indices[:int(count)], nil
}

// ShardRange is this pipeline's contiguous part [begin, begin+count) of [0, total).
func (in *InputContext) ShardRange(total int64) (begin, count int64, err error) {
	defer runtime.KeepAlive(in)
	h := in.core.live()
	var b, n C.int64_t
	err = call(func() C.dist_status_t { return C.dist_input_context_shard_range(h, C.int64_t(total), &b, &n) })
	return int64(b), int64(n), err
}
