# Distributed variables: dist_variable_t as Variable (tf.Variable under a strategy).
# Julia arrays are column-major: a Julia array of size (m, n) is the C row-major
# shape (n, m) over the same memory, so shapes cross the ABI reversed.

const SYNCHRONIZATIONS = Dict(:auto => Int32(0), :on_write => Int32(1), :on_read => Int32(2), :none => Int32(3))
const AGGREGATIONS = Dict(:none => Int32(0), :sum => Int32(1), :mean => Int32(2), :only_first_replica => Int32(3))
const VARIABLE_OPT_NAME = UInt64(1) << 0
const VARIABLE_OPT_DTYPE = UInt64(1) << 1
const VARIABLE_OPT_SHAPE = UInt64(1) << 2
const VARIABLE_OPT_INITIAL_VALUE = UInt64(1) << 3
const VARIABLE_OPT_SYNCHRONIZATION = UInt64(1) << 4
const VARIABLE_OPT_AGGREGATION = UInt64(1) << 5
const VARIABLE_OPT_OPTIMIZER = UInt64(1) << 6
const VARIABLE_OPT_NUM_SHARDS = UInt64(1) << 7
const VARIABLE_OPT_MAX_SHARD_BYTES = UInt64(1) << 8
const VARIABLE_OPT_MIN_SHARD_BYTES = UInt64(1) << 9
const VARIABLE_OPT_MAX_SHARDS = UInt64(1) << 10
const VARIABLE_OPT_COLOCATE_WITH = UInt64(1) << 11
const VARIABLE_OPT_SYNC_GRADIENTS = UInt64(1) << 12
const VARIABLE_OPT_REPLICAS_TO_AGGREGATE = UInt64(1) << 13
const VARIABLE_OPT_MAX_STALENESS = UInt64(1) << 14
const MAX_RANK = 8

"dist_variable_options_t."
struct VariableOptionsC
    field_mask::UInt64
    name::Ptr{UInt8}
    dtype::Int32
    shape::Ptr{Int64}
    rank::Int32
    initial_value::Ptr{Cvoid}
    synchronization::Int32
    aggregation::Int32
    optimizer::Ptr{Cvoid} # a dist_optimizer_options_t (OptimizerOptionsC, defined later)
    num_shards::Int32
    max_shard_bytes::UInt64
    min_shard_bytes::UInt64
    max_shards::Int32
    colocate_with::Ptr{Cvoid}
    sync_gradients::Int32
    replicas_to_aggregate::Int32
    max_staleness::Int32
end

"""
    Variable(strategy, initial::Array; name, synchronization = :auto, aggregation = :none,
             optimizer, num_shards, max_shard_bytes, min_shard_bytes, max_shards, colocate_with,
             sync_gradients, replicas_to_aggregate, max_staleness)

A variable mirrored (`:on_write`) or kept per replica (`:on_read`) by `strategy`,
of `initial`'s element type and size. Creation is collective (every worker starts
from the chief's value). `read`, `assign!`, `assign_add!`, `assign_sub!` take
`replica =` inside `run_replicas` and nothing in cross-replica context. The
variable keeps its strategy's state alive; closing the context closes it.

Under a `:parameter_server` strategy the variable lives on the ps tasks:
`optimizer` is the servers' optimizer of `apply_gradient!` / `apply_rows!`, a
kind (`:sgd`, `:momentum`, `:adam`, `:adagrad`) or a named tuple with its
hyperparameters, `(kind = :adam, learning_rate = 0.01)`; the partitioner (`num_shards`, or `max_shard_bytes` / `min_shard_bytes` with
`max_shards`) splits its C rows (the last Julia dimension) into shards;
`colocate_with` places shard i with that variable's; `sync_gradients` (with
`replicas_to_aggregate`, `max_staleness`) makes `apply_gradient!` synchronous.
"""
mutable struct Variable{T}
    ptr::Ptr{Cvoid}
    cluster::Union{Cluster, Nothing} # a parameter-server strategy's, borrowed by the C side
end

server_optimizer(kind::Symbol) = optimizer_options(kind)
server_optimizer(spec::NamedTuple) = optimizer_options(spec.kind; Base.structdiff(spec, NamedTuple{(:kind,)})...)

function Variable(s::Strategy, initial::Array{T}; name::Union{AbstractString, Nothing} = nothing,
                  synchronization::Symbol = :auto, aggregation::Symbol = :none, optimizer = nothing,
                  num_shards = nothing, max_shard_bytes = nothing, min_shard_bytes = nothing, max_shards = nothing,
                  colocate_with::Union{Variable, Nothing} = nothing, sync_gradients = nothing,
                  replicas_to_aggregate = nothing, max_staleness = nothing) where {T}
    mask = VARIABLE_OPT_DTYPE | VARIABLE_OPT_SHAPE | VARIABLE_OPT_INITIAL_VALUE | VARIABLE_OPT_SYNCHRONIZATION |
           VARIABLE_OPT_AGGREGATION
    name === nothing || (mask |= VARIABLE_OPT_NAME)
    for (bit, value) in ((VARIABLE_OPT_OPTIMIZER, optimizer), (VARIABLE_OPT_NUM_SHARDS, num_shards),
                         (VARIABLE_OPT_MAX_SHARD_BYTES, max_shard_bytes), (VARIABLE_OPT_MIN_SHARD_BYTES, min_shard_bytes),
                         (VARIABLE_OPT_MAX_SHARDS, max_shards), (VARIABLE_OPT_COLOCATE_WITH, colocate_with),
                         (VARIABLE_OPT_SYNC_GRADIENTS, sync_gradients),
                         (VARIABLE_OPT_REPLICAS_TO_AGGREGATE, replicas_to_aggregate),
                         (VARIABLE_OPT_MAX_STALENESS, max_staleness))
        value === nothing || (mask |= bit)
    end
    n = name === nothing ? nothing : String(name)
    dims = Int64[reverse(size(initial))...]
    server_opt = Ref(optimizer === nothing ? optimizer_options() : server_optimizer(optimizer))
    out = Ref{Ptr{Cvoid}}(C_NULL)
    GC.@preserve n dims initial s server_opt colocate_with begin
        options = VariableOptionsC(mask, cstr(n), dtype(T), isempty(dims) ? Ptr{Int64}(C_NULL) : pointer(dims),
                                   length(dims), Ptr{Cvoid}(pointer(initial)), SYNCHRONIZATIONS[synchronization],
                                   AGGREGATIONS[aggregation],
                                   optimizer === nothing ? C_NULL :
                                       Ptr{Cvoid}(Base.unsafe_convert(Ptr{OptimizerOptionsC}, server_opt)),
                                   something(num_shards, 0), something(max_shard_bytes, 0),
                                   something(min_shard_bytes, 0), something(max_shards, 0),
                                   colocate_with === nothing ? C_NULL : colocate_with.ptr,
                                   sync_gradients === nothing ? Int32(0) : Int32(sync_gradients),
                                   something(replicas_to_aggregate, 0), something(max_staleness, 0))
        check(ccall((:dist_variable_create, libdistribute), Int32, (Ptr{Cvoid}, Ref{VariableOptionsC}, Ptr{Ptr{Cvoid}}),
                    s.ptr, options, out))
    end
    v = Variable{T}(out[], s.cluster)
    s.context === nothing || lock(() -> push!(s.context.children, v), s.context.lock)
    finalizer(close, v)
    return v
end

function Base.close(v::Variable)
    v.ptr == C_NULL && return nothing
    ccall((:dist_variable_destroy, libdistribute), Cvoid, (Ptr{Cvoid},), v.ptr)
    v.ptr = C_NULL
    return nothing
end

function name(v::Variable)
    out = Ref{Cstring}(C_NULL)
    check(ccall((:dist_variable_name, libdistribute), Int32, (Ptr{Cvoid}, Ptr{Cstring}), v.ptr, out))
    return unsafe_string(out[])
end

"The element type the library reports (the same as T)."
Base.eltype(v::Variable) = element_type(int_out(out -> ccall((:dist_variable_dtype, libdistribute), Int32,
                                                              (Ptr{Cvoid}, Ptr{Int32}), v.ptr, out)))

"The Julia dimensions (the C shape reversed)."
function Base.size(v::Variable)
    dims, rank = Ref{Ptr{Int64}}(C_NULL), Ref{Int32}(0)
    check(ccall((:dist_variable_shape, libdistribute), Int32, (Ptr{Cvoid}, Ptr{Ptr{Int64}}, Ptr{Int32}),
                v.ptr, dims, rank))
    return Tuple(Int(unsafe_load(dims[], i)) for i in rank[]:-1:1)
end

function Base.length(v::Variable)
    out = Ref{UInt64}(0)
    check(ccall((:dist_variable_count, libdistribute), Int32, (Ptr{Cvoid}, Ptr{UInt64}), v.ptr, out))
    return Int(out[])
end

"`:on_write`, `:on_read` or `:none` (never `:auto`)."
function synchronization(v::Variable)
    k = int_out(out -> ccall((:dist_variable_synchronization, libdistribute), Int32, (Ptr{Cvoid}, Ptr{Int32}),
                             v.ptr, out))
    return only(name for (name, value) in SYNCHRONIZATIONS if value == k)
end

function aggregation(v::Variable)
    k = int_out(out -> ccall((:dist_variable_aggregation, libdistribute), Int32, (Ptr{Cvoid}, Ptr{Int32}), v.ptr, out))
    return only(name for (name, value) in AGGREGATIONS if value == k)
end

"Local copies: one per local replica, 1 for CENTRAL_STORAGE ON_WRITE, 0 on parameter servers."
num_copies(v::Variable) = int_out(out -> ccall((:dist_variable_num_copies, libdistribute), Int32,
                                               (Ptr{Cvoid}, Ptr{Int32}), v.ptr, out))

# The C handle of a replica context (NULL: cross-replica). One whose function has
# returned must not silently become cross-replica.
function replica_ptr(replica)
    replica === nothing && return C_NULL
    replica.ptr == C_NULL && throw(ArgumentError("this ReplicaContext is no longer valid: its function has returned"))
    return replica.ptr
end

"Reads into `out` (cross-replica without `replica`; ON_READ variables then aggregate, collectively)."
function Base.read!(v::Variable{T}, out::Array{T}; replica = nothing) where {T}
    b = describe(out)
    GC.@preserve out check(ccall((:dist_variable_read, libdistribute), Int32, (Ptr{Cvoid}, Ptr{Cvoid}, Ref{DistBuffer}),
                                 v.ptr, replica_ptr(replica), b))
    return out
end

Base.read(v::Variable{T}; replica = nothing) where {T} = read!(v, Array{T}(undef, size(v)); replica = replica)

"Local copy `i` (0-based) as stored."
function read_copy(v::Variable{T}, i::Integer) where {T}
    out = Array{T}(undef, size(v))
    b = describe(out)
    GC.@preserve out check(ccall((:dist_variable_read_copy, libdistribute), Int32, (Ptr{Cvoid}, Int32, Ref{DistBuffer}),
                                 v.ptr, i, b))
    return out
end

# One assign* call: `call(variable, replica, buffer)` makes the ccall.
function update!(call, v::Variable{T}, value::Array{T}, replica) where {T}
    b = describe(value)
    GC.@preserve value check(call(v.ptr, replica_ptr(replica), b))
    return v
end

"In a replica every local replica calls it and the values are aggregated; cross-replica it sets every copy."
assign!(v::Variable{T}, value::Array{T}; replica = nothing) where {T} =
    update!((p, r, b) -> ccall((:dist_variable_assign, libdistribute), Int32, (Ptr{Cvoid}, Ptr{Cvoid}, Ref{DistBuffer}),
                               p, r, b), v, value, replica)

assign_add!(v::Variable{T}, value::Array{T}; replica = nothing) where {T} =
    update!((p, r, b) -> ccall((:dist_variable_assign_add, libdistribute), Int32,
                               (Ptr{Cvoid}, Ptr{Cvoid}, Ref{DistBuffer}), p, r, b), v, value, replica)

assign_sub!(v::Variable{T}, value::Array{T}; replica = nothing) where {T} =
    update!((p, r, b) -> ccall((:dist_variable_assign_sub, libdistribute), Int32,
                               (Ptr{Cvoid}, Ptr{Cvoid}, Ref{DistBuffer}), p, r, b), v, value, replica)

# ---- Variables on parameter servers ---------------------------------------------
# C rows are the last Julia dimension: row indices here are 1-based Julia indices
# into it, converted to the C rows (0-based) at the call.

"Parameter server: the servers apply `gradient` (the variable's size) with the variable's optimizer."
apply_gradient!(v::Variable{T}, gradient::Array{T}; replica = nothing) where {T} =
    update!((p, r, b) -> ccall((:dist_variable_apply_gradient, libdistribute), Int32,
                               (Ptr{Cvoid}, Ptr{Cvoid}, Ref{DistBuffer}), p, r, b), v, gradient, replica)

c_rows(rows::AbstractVector{<:Integer}) = Int64[r - 1 for r in rows]

# One row call: `call(variable, replica, rows, count, buffer)` makes the ccall.
function rows_call!(call, v::Variable{T}, rows::AbstractVector{<:Integer}, data::Array{T}, replica) where {T}
    indices = c_rows(rows)
    b = describe(data)
    GC.@preserve data indices check(call(v.ptr, replica_ptr(replica), indices, length(indices), b))
    return data
end

"""
    read_rows(v, rows; replica) -> Array

Rows `rows` (1-based indices into the last dimension; repeats allowed) of a
parameter-server variable: an array of size (size(v)[1:end-1]..., length(rows)).
"""
read_rows(v::Variable{T}, rows::AbstractVector{<:Integer}; replica = nothing) where {T} =
    rows_call!((p, r, i, n, b) -> ccall((:dist_variable_read_rows, libdistribute), Int32,
                                        (Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Int64}, UInt64, Ref{DistBuffer}), p, r, i, n, b),
               v, rows, Array{T}(undef, Base.front(size(v))..., length(rows)), replica)

"Parameter server: adds slice i of `values` (along the last dimension) to row rows[i] (scatter-add)."
function add_rows!(v::Variable{T}, rows::AbstractVector{<:Integer}, values::Array{T}; replica = nothing) where {T}
    rows_call!((p, r, i, n, b) -> ccall((:dist_variable_add_rows, libdistribute), Int32,
                                        (Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Int64}, UInt64, Ref{DistBuffer}), p, r, i, n, b),
               v, rows, values, replica)
    return v
end

"Parameter server: the optimizer updates rows[i] with slice i of `gradients`, and no other row."
function apply_rows!(v::Variable{T}, rows::AbstractVector{<:Integer}, gradients::Array{T}; replica = nothing) where {T}
    rows_call!((p, r, i, n, b) -> ccall((:dist_variable_apply_rows, libdistribute), Int32,
                                        (Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Int64}, UInt64, Ref{DistBuffer}), p, r, i, n, b),
               v, rows, gradients, replica)
    return v
end

"""
    shards(v) -> Vector{NamedTuple}

Where a parameter-server variable lives: per shard, `server` (its index in the
"ps" job, 0-based as task indices are) and `rows` (the 1-based range of the last
dimension it holds). Empty for other strategies' variables.
"""
function shards(v::Variable)
    n = int_out(out -> ccall((:dist_variable_num_shards, libdistribute), Int32, (Ptr{Cvoid}, Ptr{Int32}), v.ptr, out))
    map(0:n - 1) do i
        server, first, count = Ref{Int32}(0), Ref{UInt64}(0), Ref{UInt64}(0)
        check(ccall((:dist_variable_shard, libdistribute), Int32,
                    (Ptr{Cvoid}, Int32, Ptr{Int32}, Ptr{UInt64}, Ptr{UInt64}), v.ptr, i, server, first, count))
        (server = Int(server[]), rows = Int(first[]) + 1:Int(first[] + count[]))
    end
end
