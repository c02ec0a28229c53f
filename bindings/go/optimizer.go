package distribute

// #include "dist.h"
import "C"

import "runtime"

// OptimizerKind is dist_optimizer_kind_t.
type OptimizerKind int32

const (
	SGD      OptimizerKind = C.DIST_OPTIMIZER_SGD      // var -= lr * g
	Momentum OptimizerKind = C.DIST_OPTIMIZER_MOMENTUM // Keras SGD with momentum
	Adam     OptimizerKind = C.DIST_OPTIMIZER_ADAM     // Keras Adam
	Adagrad  OptimizerKind = C.DIST_OPTIMIZER_ADAGRAD  // Keras Adagrad
)

// OptimizerOptions are dist_optimizer_options_t; nil fields keep the defaults.
type OptimizerOptions struct {
	Kind         OptimizerKind
	LearningRate *float64 // default 0.01 (Adam 0.001)
	Momentum     *float64 // Momentum; default 0.9
	Nesterov     bool     // Momentum
	Beta1        *float64 // Adam; default 0.9
	Beta2        *float64 // Adam; default 0.999
	Epsilon      *float64 // Adam, Adagrad; default 1e-7
	// Adagrad; default 0.1
	InitialAccumulatorValue *float64
}

// Optimizer holds the slots and step count of the variables it updates. Used by
// one goroutine at a time.
type Optimizer struct {
	core *handleCore[C.dist_optimizer_t]
}

// raw is the C struct of o.
func (o OptimizerOptions) raw() C.dist_optimizer_options_t {
	raw := C.dist_optimizer_options_t{field_mask: C.DIST_OPTIMIZER_OPT_KIND, kind: C.dist_optimizer_kind_t(o.Kind)}
	set := func(bit C.uint64_t, value *float64, field *C.double) {
		if value != nil {
			raw.field_mask |= bit
			*field = C.double(*value)
		}
	}
	set(C.DIST_OPTIMIZER_OPT_LEARNING_RATE, o.LearningRate, &raw.learning_rate)
	set(C.DIST_OPTIMIZER_OPT_MOMENTUM, o.Momentum, &raw.momentum)
	set(C.DIST_OPTIMIZER_OPT_BETA_1, o.Beta1, &raw.beta_1)
	set(C.DIST_OPTIMIZER_OPT_BETA_2, o.Beta2, &raw.beta_2)
	set(C.DIST_OPTIMIZER_OPT_EPSILON, o.Epsilon, &raw.epsilon)
	set(C.DIST_OPTIMIZER_OPT_INITIAL_ACCUMULATOR_VALUE, o.InitialAccumulatorValue, &raw.initial_accumulator_value)
	if o.Nesterov {
		raw.field_mask |= C.DIST_OPTIMIZER_OPT_NESTEROV
		raw.nesterov = 1
	}
	return raw
}

func NewOptimizer(o OptimizerOptions) (*Optimizer, error) {
	raw := o.raw()
	var h *C.dist_optimizer_t
	if err := call(func() C.dist_status_t { return C.dist_optimizer_create(&raw, &h) }); err != nil {
		return nil, err
	}
	opt := &Optimizer{core: newHandleCore(h, func(h *C.dist_optimizer_t) { C.dist_optimizer_destroy(h) }, nil)}
	runtime.SetFinalizer(opt, (*Optimizer).Close)
	return opt, nil
}

// Close destroys the optimizer. Idempotent.
func (o *Optimizer) Close() error { return closeWrapper(o, o.core) }

// Iterations is the number of ApplyGradients calls made so far.
func (o *Optimizer) Iterations() (int64, error) {
	defer runtime.KeepAlive(o)
	h := o.core.live()
	var n C.int64_t
	err := call(func() C.dist_status_t { return C.dist_optimizer_iterations(h, &n) })
	return int64(n), err
}
