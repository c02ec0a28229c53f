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
end

"""
    Variable(strategy, initial::Array; name, synchronization = :auto, aggregation = :none)

A variable mirrored (`:on_write`) or kept per replica (`:on_read`) by `strategy`,
of `initial`'s element type and size. Creation is collective (every worker starts
from the chief's value). `read`, `assign!`, `assign_add!`, `assign_sub!` take
`replica =` inside `run_replicas` and nothing in cross-replica context. The
variable keeps its strategy's state alive; closing the context closes it.
"""
mutable struct Variable{T}
    ptr::Ptr{Cvoid}
end

function Variable(s::Strategy, initial::Array{T}; name::Union{AbstractString, Nothing} = nothing,
                  synchronization::Symbol = :auto, aggregation::Symbol = :none) where {T}
    mask = VARIABLE_OPT_DTYPE | VARIABLE_OPT_SHAPE | VARIABLE_OPT_INITIAL_VALUE | VARIABLE_OPT_SYNCHRONIZATION |
           VARIABLE_OPT_AGGREGATION
    name === nothing || (mask |= VARIABLE_OPT_NAME)
    n = name === nothing ? nothing : String(name)
    dims = Int64[reverse(size(initial))...]
    out = Ref{Ptr{Cvoid}}(C_NULL)
    GC.@preserve n dims initial s begin
        options = VariableOptionsC(mask, cstr(n), dtype(T), isempty(dims) ? Ptr{Int64}(C_NULL) : pointer(dims),
                                   length(dims), Ptr{Cvoid}(pointer(initial)), SYNCHRONIZATIONS[synchronization],
                                   AGGREGATIONS[aggregation])
        check(ccall((:dist_variable_create, libdistribute), Int32, (Ptr{Cvoid}, Ref{VariableOptionsC}, Ptr{Ptr{Cvoid}}),
                    s.ptr, options, out))
    end
    v = Variable{T}(out[])
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

"Local copies: one per local replica, 1 for CENTRAL_STORAGE ON_WRITE."
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
