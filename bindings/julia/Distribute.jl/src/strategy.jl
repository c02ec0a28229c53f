# Strategies and replica contexts (tf.distribute's Strategy, ReplicaContext and
# merge_call). `run_replicas` calls a Julia function on the library's replica
# threads through a @cfunction trampoline: Julia >= 1.9 adopts those foreign
# threads. What a replica or merge function throws is caught in the trampoline,
# reported to the library as a failed status, and thrown again once every
# replica has returned.

const STRATEGY_KINDS = Dict(:one_device => Int32(0), :mirrored => Int32(1), :multi_worker_mirrored => Int32(2),
                            :central_storage => Int32(3), :parameter_server => Int32(4))
const PLACEMENTS = Dict(:round_robin => Int32(0), :greedy_bytes => Int32(1))
const COMMUNICATIONS = Dict(:auto => Int32(0), :ring => Int32(1), :nccl => Int32(2))
"dist_cross_device_ops_t: how the GPU replicas of one worker combine their values."
const CROSS_DEVICE_OPS = Dict(:auto => Int32(0), :nccl_all_reduce => Int32(1), :hierarchical_copy => Int32(2),
                              :reduction_to_one_device => Int32(3))
const STRATEGY_OPT_KIND = UInt64(1) << 0
const STRATEGY_OPT_NUM_CPU_DEVICES = UInt64(1) << 1
const STRATEGY_OPT_COMMUNICATION = UInt64(1) << 2
const STRATEGY_OPT_BYTES_PER_PACK = UInt64(1) << 3
const STRATEGY_OPT_TIMEOUT_SECONDS = UInt64(1) << 4
const STRATEGY_OPT_BIND_THREADS = UInt64(1) << 5
const STRATEGY_OPT_CLUSTER = UInt64(1) << 6
const STRATEGY_OPT_TOKEN = UInt64(1) << 7
const STRATEGY_OPT_TOKEN_FILE = UInt64(1) << 8
const STRATEGY_OPT_PLACEMENT = UInt64(1) << 9
const STRATEGY_OPT_CROSS_DEVICE_OPS = UInt64(1) << 10
const STRATEGY_OPT_REDUCE_TO_DEVICE = UInt64(1) << 11
const STRATEGY_OPT_NUM_PACKS = UInt64(1) << 12
const AXIS_NONE = Int32(-1)

"dist_strategy_options_t."
struct StrategyOptionsC
    field_mask::UInt64
    kind::Int32
    num_cpu_devices::Int32
    communication::Int32
    bytes_per_pack::UInt64
    timeout_seconds::Float64
    bind_threads::Int32
    cluster::Ptr{Cvoid}
    token::Ptr{UInt8}
    token_file::Ptr{UInt8}
    placement::Int32
    cross_device_ops::Int32
    reduce_to_device::Ptr{UInt8}
    num_packs::Int32
end

"""
    Strategy(context = nothing; kind = :one_device, num_cpu_devices, communication, bytes_per_pack,
             timeout_seconds, bind_threads, cluster, token, token_file, placement, cross_device_ops,
             reduce_to_device, num_packs)

A tf.distribute strategy over a `Context` (`nothing`: one worker alone). `kind` is
`:one_device`, `:mirrored`, `:multi_worker_mirrored`, `:central_storage` or
`:parameter_server`; creating a multi-worker strategy over a context is
collective. Use it from one task at a time; closing the context closes it (and
its variables) first.

`:parameter_server` (tf.distribute's ParameterServerStrategy) keeps variables on
the tasks of a cluster's "ps" job: the context's, or `cluster` without a context
(kept referenced by the strategy and its variables); `token` / `token_file` are
the cluster token the servers expect; `placement` is `:round_robin` (default) or
`:greedy_bytes`.

`cross_device_ops` (`:mirrored` and `:multi_worker_mirrored` only; tf.distribute's
CrossDeviceOps) says how the GPU replicas of one worker combine their values:
`:auto` (default: `:nccl_all_reduce` when every replica is a GPU and NCCL is
available, else `:reduction_to_one_device`), `:nccl_all_reduce`,
`:hierarchical_copy` or `:reduction_to_one_device` (or the C value), the last
summing on `reduce_to_device` (`"CPU:0"` or `"GPU:i"`; default the first
replica's device). CPU replicas take only `:auto` and `:reduction_to_one_device`
to a CPU device.

`num_packs` (1..64; TF's num_packs) makes `apply_gradients!` pack each dtype's
gradients into that many packs of about equal size instead of buckets of
`bytes_per_pack`; only `:nccl_all_reduce` and `:hierarchical_copy` (as given or as
`:auto` chose them) take it, so CPU replicas refuse it.
"""
mutable struct Strategy
    ptr::Ptr{Cvoid}
    context::Union{Context, Nothing}
    cluster::Union{Cluster, Nothing} # borrowed by the C strategy
end

function Strategy(context::Union{Context, Nothing} = nothing; kind::Symbol = :one_device, num_cpu_devices = nothing,
                  communication::Union{Symbol, Nothing} = nothing, bytes_per_pack = nothing,
                  timeout_seconds = nothing, bind_threads = nothing, cluster::Union{Cluster, Nothing} = nothing,
                  token = nothing, token_file = nothing, placement::Union{Symbol, Nothing} = nothing,
                  cross_device_ops::Union{Symbol, Integer, Nothing} = nothing, reduce_to_device = nothing,
                  num_packs::Union{Integer, Nothing} = nothing)
    mask = STRATEGY_OPT_KIND
    num_cpu_devices === nothing || (mask |= STRATEGY_OPT_NUM_CPU_DEVICES)
    communication === nothing || (mask |= STRATEGY_OPT_COMMUNICATION)
    bytes_per_pack === nothing || (mask |= STRATEGY_OPT_BYTES_PER_PACK)
    timeout_seconds === nothing || (mask |= STRATEGY_OPT_TIMEOUT_SECONDS)
    bind_threads === nothing || (mask |= STRATEGY_OPT_BIND_THREADS)
    cluster === nothing || (mask |= STRATEGY_OPT_CLUSTER)
    token === nothing || (mask |= STRATEGY_OPT_TOKEN)
    token_file === nothing || (mask |= STRATEGY_OPT_TOKEN_FILE)
    placement === nothing || (mask |= STRATEGY_OPT_PLACEMENT)
    cross_device_ops === nothing || (mask |= STRATEGY_OPT_CROSS_DEVICE_OPS)
    reduce_to_device === nothing || (mask |= STRATEGY_OPT_REDUCE_TO_DEVICE)
    num_packs === nothing || (mask |= STRATEGY_OPT_NUM_PACKS)
    ops = cross_device_ops === nothing ? Int32(0) :
          cross_device_ops isa Symbol ? CROSS_DEVICE_OPS[cross_device_ops] : Int32(cross_device_ops)
    cluster !== nothing && cluster.ptr == C_NULL && throw(ArgumentError("the cluster is closed"))
    strings = map(opt_path, (token, token_file))
    reduce_to = opt_path(reduce_to_device)
    # A closed context's NULL would silently mean "one worker alone".
    context !== nothing && context.ptr == C_NULL && throw(ArgumentError("the context is closed"))
    out = Ref{Ptr{Cvoid}}(C_NULL)
    GC.@preserve context cluster strings reduce_to begin
        options = StrategyOptionsC(mask, STRATEGY_KINDS[kind], something(num_cpu_devices, 0),
                                   communication === nothing ? Int32(0) : COMMUNICATIONS[communication],
                                   something(bytes_per_pack, 0), something(timeout_seconds, 0.0),
                                   bind_threads === nothing ? Int32(0) : Int32(bind_threads),
                                   cluster === nothing ? C_NULL : cluster.ptr, map(cstr, strings)...,
                                   placement === nothing ? Int32(0) : PLACEMENTS[placement], ops, cstr(reduce_to),
                                   num_packs === nothing ? Int32(0) : Int32(num_packs))
        check(ccall((:dist_strategy_create, libdistribute), Int32, (Ptr{Cvoid}, Ref{StrategyOptionsC}, Ptr{Ptr{Cvoid}}),
                    context === nothing ? C_NULL : context.ptr, options, out))
    end
    strategy = Strategy(out[], context, cluster)
    context === nothing || lock(() -> push!(context.children, strategy), context.lock)
    finalizer(close, strategy)
    return strategy
end

function Base.close(s::Strategy)
    s.ptr == C_NULL && return nothing
    ccall((:dist_strategy_destroy, libdistribute), Cvoid, (Ptr{Cvoid},), s.ptr)
    s.ptr = C_NULL
    return nothing
end

"`:one_device`, `:mirrored`, `:multi_worker_mirrored` or `:central_storage`."
function kind(s::Strategy)
    k = int_out(out -> ccall((:dist_strategy_kind, libdistribute), Int32, (Ptr{Cvoid}, Ptr{Int32}), s.ptr, out))
    return only(name for (name, v) in STRATEGY_KINDS if v == k)
end

num_replicas_in_sync(s::Strategy) = int_out(out -> ccall((:dist_strategy_num_replicas_in_sync, libdistribute),
                                                              Int32, (Ptr{Cvoid}, Ptr{Int32}), s.ptr, out))
num_local_replicas(s::Strategy) = int_out(out -> ccall((:dist_strategy_num_local_replicas, libdistribute),
                                                            Int32, (Ptr{Cvoid}, Ptr{Int32}), s.ptr, out))
task_id(s::Strategy) = int_out(out -> ccall((:dist_strategy_task_id, libdistribute), Int32,
                                                 (Ptr{Cvoid}, Ptr{Int32}), s.ptr, out))

"""
    cross_device_ops(strategy) -> Symbol

The cross-device ops in effect (`:auto` resolved by TF's rule): `:nccl_all_reduce`,
`:hierarchical_copy` or `:reduction_to_one_device` (always the last on CPU replicas).
"""
function cross_device_ops(s::Strategy)
    ops = int_out(out -> ccall((:dist_strategy_cross_device_ops, libdistribute), Int32, (Ptr{Cvoid}, Ptr{Int32}),
                               s.ptr, out))
    return only(name for (name, v) in CROSS_DEVICE_OPS if v == ops)
end

"The local devices, one per local replica (\"/job:worker/replica:0/task:1/device:CPU:0\")."
function devices(s::Strategy)
    map(0:num_local_replicas(s) - 1) do i
        out = Ref{Cstring}(C_NULL)
        check(ccall((:dist_strategy_device, libdistribute), Int32, (Ptr{Cvoid}, Int32, Ptr{Cstring}), s.ptr, i, out))
        unsafe_string(out[])
    end
end

"Whether the strategy has a context: `dist_strategy_cluster` is non-NULL (the cluster stays the context's)."
function has_cluster(s::Strategy)
    out = Ref{Ptr{Cvoid}}(C_NULL)
    check(ccall((:dist_strategy_cluster, libdistribute), Int32, (Ptr{Cvoid}, Ptr{Ptr{Cvoid}}), s.ptr, out))
    return out[] != C_NULL
end

"\"worker\", \"chief\", ...; `nothing` for a worker alone."
function task_type(s::Strategy)
    out = Ref{Cstring}(C_NULL)
    check(ccall((:dist_strategy_task_type, libdistribute), Int32, (Ptr{Cvoid}, Ptr{Cstring}), s.ptr, out))
    return out[] == C_NULL ? nothing : unsafe_string(out[])
end

"(this worker's index, number of workers)."
function worker_index(s::Strategy)
    index, count = Ref{Int32}(0), Ref{Int32}(0)
    check(ccall((:dist_strategy_worker_index, libdistribute), Int32, (Ptr{Cvoid}, Ptr{Int32}, Ptr{Int32}),
                s.ptr, index, count))
    return (Int(index[]), Int(count[]))
end

# ---- Running replicas ---------------------------------------------------------

"What one `run_replicas` shares between its replica threads."
mutable struct RunState
    strategy::Strategy
    fn::Any
    results::Vector{Any}
    failure::Any                # the first exception thrown (later ones are its ABORTED echoes)
    merge_values::Vector{Any}
    merge_result::Any
    merge_failure::Any
    lock::Threads.SpinLock
end

"""
    ReplicaContext

One replica inside `run_replicas`; valid only during the call it was given to.
"""
mutable struct ReplicaContext
    ptr::Ptr{Cvoid}
    state::RunState
end

failure_status(e) = e isa DistError && e.status < 0 ? e.status : DIST_ERR_ABORTED

function replica_trampoline(replica::Ptr{Cvoid}, data::Ptr{Cvoid})::Int32
    state = unsafe_pointer_to_objref(data)::RunState
    r = ReplicaContext(replica, state)
    try
        value = state.fn(r)
        index = local_index(r)
        lock(() -> (state.results[index + 1] = value), state.lock)
        return DIST_OK
    catch e
        lock(() -> (state.failure === nothing && (state.failure = e)), state.lock)
        return failure_status(e)
    finally
        r.ptr = C_NULL
    end
end

"""
    run_replicas(fn, strategy) -> Vector

Calls `fn(replica::ReplicaContext)` once per local replica, each on its own
thread, and returns their results in local replica order. If a replica throws,
the replicas waiting for it are released and the first exception is thrown here.
"""
function run_replicas(fn, s::Strategy)
    n = num_local_replicas(s)
    state = RunState(s, fn, Vector{Any}(nothing, n), nothing, Vector{Any}(nothing, n), nothing, nothing,
                     Threads.SpinLock())
    trampoline = @cfunction(replica_trampoline, Int32, (Ptr{Cvoid}, Ptr{Cvoid}))
    status = GC.@preserve state ccall((:dist_strategy_run, libdistribute), Int32, (Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}),
                                      s.ptr, trampoline, pointer_from_objref(state))
    state.failure === nothing || throw(state.failure)
    check(status)
    return state.results
end

"This replica's id in the sync group: worker rank × local replicas + local index."
replica_id(r::ReplicaContext) = int_out(out -> ccall((:dist_replica_id, libdistribute), Int32,
                                                         (Ptr{Cvoid}, Ptr{Int32}), r.ptr, out))
num_replicas_in_sync(r::ReplicaContext) = int_out(out -> ccall((:dist_replica_num_replicas_in_sync, libdistribute),
                                                                   Int32, (Ptr{Cvoid}, Ptr{Int32}), r.ptr, out))
local_index(r::ReplicaContext) = int_out(out -> ccall((:dist_replica_local_index, libdistribute), Int32,
                                                          (Ptr{Cvoid}, Ptr{Int32}), r.ptr, out))

"""
    device(replica) -> Int

The CUDA device ordinal (under CUDA_VISIBLE_DEVICES) this replica drives, its
thread's current device while the replica function runs; -1 for a CPU replica.
"""
device(r::ReplicaContext) = int_out(out -> ccall((:dist_replica_device, libdistribute), Int32,
                                                     (Ptr{Cvoid}, Ptr{Int32}), r.ptr, out))

"""
    stream(replica) -> Ptr{Cvoid}

The replica's CUDA stream (a `cudaStream_t` owned by the strategy, the same in
every run), to order your own device work with; `C_NULL` for a CPU replica.
"""
function stream(r::ReplicaContext)
    out = Ref{Ptr{Cvoid}}(C_NULL)
    check(ccall((:dist_replica_stream, libdistribute), Int32, (Ptr{Cvoid}, Ptr{Ptr{Cvoid}}), r.ptr, out))
    return out[]
end

"The strategy running this replica."
function strategy(r::ReplicaContext)
    out = Ref{Ptr{Cvoid}}(C_NULL)
    check(ccall((:dist_replica_strategy, libdistribute), Int32, (Ptr{Cvoid}, Ptr{Ptr{Cvoid}}), r.ptr, out))
    out[] == r.state.strategy.ptr || error("the library names another strategy than the one running")
    return r.state.strategy
end

"All-reduces `data` in place across every replica in sync (every local replica calls it alike)."
function all_reduce!(r::ReplicaContext, data::Array; op::ReduceOp = SUM)
    b = describe(data)
    GC.@preserve data check(ccall((:dist_replica_all_reduce, libdistribute), Int32, (Ptr{Cvoid}, Int32, Ref{DistBuffer}),
                                  r.ptr, op.value, b))
    return data
end

"One merge call: the function and the run it belongs to (user_data of local replica 0)."
struct MergeCall
    fn::Any
    state::RunState
end

function merge_trampoline(strategy::Ptr{Cvoid}, values::Ptr{Ptr{Cvoid}}, n::Int32, data::Ptr{Cvoid})::Int32
    call = unsafe_pointer_to_objref(data)::MergeCall
    state = call.state
    state.merge_failure = nothing
    try
        # Each replica passes its local index + 1 (never NULL) as its value.
        ordered = [state.merge_values[Int(UInt(unsafe_load(values, i)))] for i in 1:n]
        state.merge_result = call.fn(state.strategy, ordered)
        return DIST_OK
    catch e
        state.merge_failure = e
        return failure_status(e)
    end
end

"""
    merge_call(fn, replica, value = nothing)

Every local replica calls it; `fn(strategy, values)` runs once in cross-replica
context with every local replica's value, and its result is returned to each.
What `fn` throws is thrown from every replica's `merge_call`.
"""
function merge_call(fn, r::ReplicaContext, value = nothing)
    state = r.state
    index = local_index(r)
    lock(() -> (state.merge_values[index + 1] = value), state.lock)
    call = MergeCall(fn, state)
    trampoline = @cfunction(merge_trampoline, Int32, (Ptr{Cvoid}, Ptr{Ptr{Cvoid}}, Int32, Ptr{Cvoid}))
    status = GC.@preserve call ccall((:dist_replica_merge_call, libdistribute), Int32,
                                     (Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}),
                                     r.ptr, trampoline, Ptr{Cvoid}(UInt(index + 1)), pointer_from_objref(call))
    status != DIST_OK && state.merge_failure !== nothing && throw(state.merge_failure)
    check(status)
    return state.merge_result
end

"Records this replica's result of the run (copied): `local_results(strategy)` afterwards."
function set_result!(r::ReplicaContext, value::Array)
    b = describe(value)
    GC.@preserve value check(ccall((:dist_replica_set_result, libdistribute), Int32, (Ptr{Cvoid}, Ref{DistBuffer}),
                                   r.ptr, b))
    return nothing
end

"What each local replica passed to `set_result!` in the last run (copies; `nothing` for one that set none)."
function local_results(s::Strategy)
    results, count = Ref{Ptr{DistBuffer}}(C_NULL), Ref{Int32}(0)
    check(ccall((:dist_strategy_local_results, libdistribute), Int32, (Ptr{Cvoid}, Ptr{Ptr{DistBuffer}}, Ptr{Int32}),
                s.ptr, results, count))
    map(1:count[]) do i
        b = unsafe_load(results[], i)
        b.data == C_NULL ? nothing : copy(unsafe_wrap(Array, Ptr{element_type(b.dtype)}(b.data), Int(b.count)))
    end
end

# ---- Cross-replica calls (collective) --------------------------------------------

"""
    reduce(strategy, values; op = SUM, axis = nothing) -> Array

tf's strategy.reduce: `values[i]` is local replica i's array. `axis = nothing`:
the element-wise SUM or MEAN over all replicas; `axis = 0`: of every replica's
rows (the last Julia dimension, the C row-major first one).
"""
function Base.reduce(s::Strategy, values::Vector{<:Array{T}}; op::ReduceOp = SUM, axis = nothing) where {T}
    isempty(values) && throw(ArgumentError("reduce needs one value per local replica"))
    dims = size(values[1])
    result = Array{T}(undef, axis === nothing ? dims : dims[1:end - 1])
    buffers = [describe(v) for v in values]
    out = describe(result)
    GC.@preserve values result check(ccall((:dist_strategy_reduce, libdistribute), Int32,
                                           (Ptr{Cvoid}, Int32, Ptr{DistBuffer}, Int32, Int32, Ref{DistBuffer}),
                                           s.ptr, op.value, buffers, length(values),
                                           axis === nothing ? AXIS_NONE : Int32(axis), out))
    return result
end

"""
    split_batch(strategy, batch) -> Vector of views

This worker's batch split across the local replicas without copying: rows are
the last dimension of `batch` (the C row-major first), ceil(rows / replicas) each.
"""
function split_batch(s::Strategy, batch::Array)
    n = num_local_replicas(s)
    rows = ndims(batch) == 0 ? 1 : size(batch, ndims(batch))
    row = rows == 0 ? 0 : length(batch) ÷ rows
    parts = Vector{DistBuffer}(undef, n)
    b = describe(batch)
    GC.@preserve batch parts check(ccall((:dist_strategy_split_batch, libdistribute), Int32,
                                         (Ptr{Cvoid}, Ref{DistBuffer}, UInt64, Ptr{DistBuffer}, Int32),
                                         s.ptr, b, rows, parts, n))
    base = UInt(pointer(batch))
    map(parts) do p
        start = p.data == C_NULL ? 0 : Int((UInt(p.data) - base) ÷ sizeof(eltype(batch)))
        flat = view(vec(batch), start + 1:start + Int(p.count))
        ndims(batch) <= 1 || row == 0 ? flat : reshape(flat, size(batch)[1:end - 1]..., :)
    end
end

function flatten_per_replica(s::Strategy, per_replica, n)
    replicas = num_local_replicas(s)
    length(per_replica) == replicas ||
        throw(ArgumentError("one vector of arrays per local replica ($replicas) is needed, got $(length(per_replica))"))
    for (r, arrays) in enumerate(per_replica)
        length(arrays) == n || throw(ArgumentError("replica $(r - 1) has $(length(arrays)) arrays, expected $n"))
    end
    return [a for arrays in per_replica for a in arrays]
end

"Fused in-place all-reduce: `per_replica[r][i]` is local replica r's tensor i."
function batch_all_reduce!(s::Strategy, per_replica::Vector; op::ReduceOp = SUM)
    n = isempty(per_replica) ? 0 : length(per_replica[1])
    flat = flatten_per_replica(s, per_replica, n)
    buffers = [describe(a) for a in flat]
    GC.@preserve flat check(ccall((:dist_strategy_batch_all_reduce, libdistribute), Int32,
                                  (Ptr{Cvoid}, Int32, Ptr{DistBuffer}, Csize_t), s.ptr, op.value, buffers, n))
    return per_replica
end
