# Optimizers (Keras SGD, momentum, Adam, Adagrad) and fused gradient application.

const OPTIMIZER_KINDS = Dict(:sgd => Int32(0), :momentum => Int32(1), :adam => Int32(2), :adagrad => Int32(3))
const OPTIMIZER_OPT_KIND = UInt64(1) << 0
const OPTIMIZER_OPT_LEARNING_RATE = UInt64(1) << 1
const OPTIMIZER_OPT_MOMENTUM = UInt64(1) << 2
const OPTIMIZER_OPT_NESTEROV = UInt64(1) << 3
const OPTIMIZER_OPT_BETA_1 = UInt64(1) << 4
const OPTIMIZER_OPT_BETA_2 = UInt64(1) << 5
const OPTIMIZER_OPT_EPSILON = UInt64(1) << 6
const OPTIMIZER_OPT_INITIAL_ACCUMULATOR_VALUE = UInt64(1) << 7

"dist_optimizer_options_t."
struct OptimizerOptionsC
    field_mask::UInt64
    kind::Int32
    learning_rate::Float64
    momentum::Float64
    nesterov::Int32
    beta_1::Float64
    beta_2::Float64
    epsilon::Float64
    initial_accumulator_value::Float64
end

"""
    Optimizer(kind = :sgd; learning_rate, momentum, nesterov, beta_1, beta_2, epsilon, initial_accumulator_value)

Holds the slots of the variables it updates and its step count; used by
`apply_gradients!`. One task at a time.
"""
mutable struct Optimizer
    ptr::Ptr{Cvoid}
end

# dist_optimizer_options_t of `kind` (:sgd, :momentum, :adam or :adagrad); `nothing`
# keeps the library's default. Also a parameter-server variable's optimizer.
function optimizer_options(kind::Symbol = :sgd; learning_rate = nothing, momentum = nothing, nesterov = nothing,
                           beta_1 = nothing, beta_2 = nothing, epsilon = nothing, initial_accumulator_value = nothing)
    mask = OPTIMIZER_OPT_KIND
    learning_rate === nothing || (mask |= OPTIMIZER_OPT_LEARNING_RATE)
    momentum === nothing || (mask |= OPTIMIZER_OPT_MOMENTUM)
    nesterov === nothing || (mask |= OPTIMIZER_OPT_NESTEROV)
    beta_1 === nothing || (mask |= OPTIMIZER_OPT_BETA_1)
    beta_2 === nothing || (mask |= OPTIMIZER_OPT_BETA_2)
    epsilon === nothing || (mask |= OPTIMIZER_OPT_EPSILON)
    initial_accumulator_value === nothing || (mask |= OPTIMIZER_OPT_INITIAL_ACCUMULATOR_VALUE)
    return OptimizerOptionsC(mask, OPTIMIZER_KINDS[kind], something(learning_rate, 0.0), something(momentum, 0.0),
                             nesterov === nothing ? Int32(0) : Int32(nesterov), something(beta_1, 0.0),
                             something(beta_2, 0.0), something(epsilon, 0.0), something(initial_accumulator_value, 0.0))
end

function Optimizer(kind::Symbol = :sgd; hyperparameters...)
    options = optimizer_options(kind; hyperparameters...)
    out = Ref{Ptr{Cvoid}}(C_NULL)
    check(ccall((:dist_optimizer_create, libdistribute), Int32, (Ref{OptimizerOptionsC}, Ptr{Ptr{Cvoid}}), options, out))
    optimizer = Optimizer(out[])
    finalizer(close, optimizer)
    return optimizer
end

function Base.close(o::Optimizer)
    o.ptr == C_NULL && return nothing
    ccall((:dist_optimizer_destroy, libdistribute), Cvoid, (Ptr{Cvoid},), o.ptr)
    o.ptr = C_NULL
    return nothing
end

"apply_gradients! calls made so far."
function iterations(o::Optimizer)
    out = Ref{Int64}(0)
    check(ccall((:dist_optimizer_iterations, libdistribute), Int32, (Ptr{Cvoid}, Ptr{Int64}), o.ptr, out))
    return Int(out[])
end

"""
    apply_gradients!(strategy, variables, per_replica_gradients, optimizer)

Cross-replica (collective): `per_replica_gradients[r][i]` is local replica r's
gradient of `variables[i]`; they are mean-all-reduced in fused buckets, then the
optimizer updates every copy of every variable. The gradients are scratch.
"""
function apply_gradients!(s::Strategy, variables::Vector, per_replica_gradients::Vector, o::Optimizer)
    flat = flatten_per_replica(s, per_replica_gradients, length(variables))
    buffers = [describe(g) for g in flat]
    handles = Ptr{Cvoid}[v.ptr for v in variables]
    GC.@preserve flat variables check(ccall((:dist_strategy_apply_gradients, libdistribute), Int32,
                                            (Ptr{Cvoid}, Ptr{Ptr{Cvoid}}, Ptr{DistBuffer}, Csize_t, Ptr{Cvoid}),
                                            s.ptr, handles, buffers, length(variables), o.ptr))
    return variables
end
