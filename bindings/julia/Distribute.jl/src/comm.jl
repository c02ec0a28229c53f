"dist_comm_options_t."
struct CommOptionsC
    field_mask::UInt64
    timeout_ms::Int64
    allreduce::Int32
    timing::Int32
    stall_warning_ms::Int64
    deterministic::Int32
end

"dist_comm_stat_t."
struct CommStatC
    collective::Int32
    path::Int32
    algorithm::Ptr{UInt8}   # static storage in the library
    calls::UInt64
    failed::UInt64
    bytes::UInt64
    timed_calls::UInt64
    time_ns::UInt64
    reserved::NTuple{4, UInt64}
end

"""
    Comm

A communicator. Make its calls from one task at a time, in the same order on
every member; different communicators may be used concurrently. `close` destroys
a split communicator (after waiting for its requests); the world is the context's.
"""
mutable struct Comm
    ptr::Ptr{Cvoid}
    context::Context        # the context outlives its communicators
    owned::Bool
    requests::Vector{Any}   # Requests to finish before the communicator goes
    function Comm(ptr::Ptr{Cvoid}, context::Context, owned::Bool)
        comm = new(ptr, context, owned, Any[])
        finalizer(close, comm)
        return comm
    end
end

function Base.close(c::Comm)
    c.ptr == C_NULL && return nothing
    for request in c.requests
        close(request)
    end
    empty!(c.requests)
    c.owned && ccall((:dist_comm_destroy, libdistribute), Cvoid, (Ptr{Cvoid},), c.ptr)
    c.ptr = C_NULL
    return nothing
end

"The communicator of all members, owned by the context."
function world(context::Context)
    lock(context.lock) do
        if context.world === nothing || context.world.ptr == C_NULL
            out = Ref{Ptr{Cvoid}}(C_NULL)
            check(ccall((:dist_comm_world, libdistribute), Int32, (Ptr{Cvoid}, Ptr{Ptr{Cvoid}}), context.ptr, out))
            context.world = Comm(out[], context, false)
        end
        return context.world
    end
end

"Collective: members with the same color form a communicator ranked by (key, rank); a negative color gives `nothing`."
function split_comm(c::Comm, color::Integer, key::Integer = 0)
    out = Ref{Ptr{Cvoid}}(C_NULL)
    check(ccall((:dist_comm_split, libdistribute), Int32, (Ptr{Cvoid}, Int32, Int32, Ptr{Ptr{Cvoid}}),
                c.ptr, color, key, out))
    out[] == C_NULL && return nothing
    return adopt_child(c, out[])
end

"""
    split_host(c)

Collective: the communicator of this rank's host, its ranks in the order of `c`.
"""
function split_host(c::Comm)
    out = Ref{Ptr{Cvoid}}(C_NULL)
    check(ccall((:dist_comm_split_host, libdistribute), Int32, (Ptr{Cvoid}, Ptr{Ptr{Cvoid}}), c.ptr, out))
    return adopt_child(c, out[])
end

# A communicator split from `c`, closed with its context unless closed before.
function adopt_child(c::Comm, ptr::Ptr{Cvoid})
    child = Comm(ptr, c.context, true)
    lock(() -> push!(c.context.children, child), c.context.lock)
    return child
end

rank(c::Comm) = int_out(out -> ccall((:dist_comm_rank, libdistribute), Int32, (Ptr{Cvoid}, Ptr{Int32}), c.ptr, out))
nranks(c::Comm) = int_out(out -> ccall((:dist_comm_size, libdistribute), Int32, (Ptr{Cvoid}, Ptr{Int32}), c.ptr, out))

"This rank's position among the ranks of its host, in the rank order of `c`."
local_rank(c::Comm) = int_out(out -> ccall((:dist_comm_local_rank, libdistribute), Int32, (Ptr{Cvoid}, Ptr{Int32}),
                                           c.ptr, out))
"How many ranks of `c` run on this rank's host."
local_size(c::Comm) = int_out(out -> ccall((:dist_comm_local_size, libdistribute), Int32, (Ptr{Cvoid}, Ptr{Int32}),
                                           c.ptr, out))
"How many hosts the ranks of `c` run on."
num_hosts(c::Comm) = int_out(out -> ccall((:dist_comm_num_hosts, libdistribute), Int32, (Ptr{Cvoid}, Ptr{Int32}),
                                          c.ptr, out))

"""
    comm_path(c)

How the collectives of `c` travel: `:self` (one rank), `:point_to_point` (UCX
messages), `:shared_memory` (a segment shared by all ranks, on one host) or
`:hierarchical` (shared memory within each host, UCX messages between hosts).
"""
function comm_path(c::Comm)
    out = Ref{Int32}(0)
    check(ccall((:dist_comm_path, libdistribute), Int32, (Ptr{Cvoid}, Ptr{Int32}), c.ptr, out))
    haskey(COMM_PATHS, out[]) || throw(DistError(DIST_ERR_INVALID_ARGUMENT, "unknown communicator path $(out[])"))
    return COMM_PATHS[out[]]
end

"""
    device_path(c)

How the calls of `c` on CUDA memory travel: `:nccl` or `:staged` (through pinned
host memory), which its ranks choose together at the first such call. Before that
call, and in builds without CUDA, a `DistError` with `DIST_ERR_UNAVAILABLE`.
"""
function device_path(c::Comm)
    out = Ref{Int32}(0)
    check(ccall((:dist_comm_device_path, libdistribute), Int32, (Ptr{Cvoid}, Ptr{Int32}), c.ptr, out))
    haskey(COMM_PATHS, out[]) || throw(DistError(DIST_ERR_INVALID_ARGUMENT, "unknown communicator path $(out[])"))
    return COMM_PATHS[out[]]
end

"""
    algorithm(c, collective, bytes)

The algorithm `c` runs for `collective` (`:all_reduce`, `:reduce`, `:broadcast`,
`:all_gather`, `:reduce_scatter`, `:all_to_all`, `:barrier`, or a raw
DIST_COLLECTIVE_* value, which the library checks) with `bytes` bytes per rank:
"shm_direct", "ring", "self", ...
"""
function algorithm(c::Comm, collective::Union{Symbol,Integer}, bytes::Integer)
    kind = collective isa Symbol ? COLLECTIVES[collective] : Int32(collective)
    out = Ref{Ptr{UInt8}}(C_NULL)
    check(ccall((:dist_comm_algorithm, libdistribute), Int32, (Ptr{Cvoid}, Int32, UInt64, Ptr{Ptr{UInt8}}),
                c.ptr, kind, bytes, out))
    return unsafe_string(out[])
end

"""`timeout_ms` and `allreduce` (:auto, :ring, :rabenseifner, :recursive_doubling, :shared_memory,
:hierarchical) apply to later calls; :shared_memory needs `comm_path` :shared_memory and
:hierarchical needs :hierarchical (else DIST_ERR_UNSUPPORTED). `timing` (true or false)
times every call for `comm_stats` (off by default: two clock reads a call).
`stall_warning_ms`: how long a call waits for its peers before each waiting rank logs
who is behind and where (default 30000; 0: no warning; negative is refused).
`deterministic` (true or false): float SUM, PROD and MEAN reductions combine the
ranks in rank order, the same bits on every path (off by default)."""
function configure!(c::Comm; timeout_ms = nothing, allreduce = nothing, timing = nothing,
                    stall_warning_ms = nothing, deterministic = nothing)
    mask = UInt64(0)
    timeout_ms === nothing || (mask |= COMM_OPT_TIMEOUT_MS)
    allreduce === nothing || (mask |= COMM_OPT_ALLREDUCE)
    timing === nothing || (mask |= COMM_OPT_TIMING)
    stall_warning_ms === nothing || (mask |= COMM_OPT_STALL_WARNING_MS)
    deterministic === nothing || (mask |= COMM_OPT_DETERMINISTIC)
    algorithm = allreduce === nothing ? Int32(0) : allreduce isa Symbol ? ALLREDUCE_ALGORITHMS[allreduce] : Int32(allreduce)
    # Any integer passes through: the library refuses timing or deterministic not 0
    # or 1, and a negative stall warning.
    options = CommOptionsC(mask, something(timeout_ms, 0), algorithm, timing === nothing ? Int32(0) : Int32(timing),
                           Int64(something(stall_warning_ms, 0)),
                           deterministic === nothing ? Int32(0) : Int32(deterministic))
    check(ccall((:dist_comm_configure, libdistribute), Int32, (Ptr{Cvoid}, Ref{CommOptionsC}), c.ptr, options))
    return c
end

"""
    CommStat

One row of `comm_stats`: the calls of one `collective` (a key of
`Distribute.COLLECTIVES`) that ran on one `path` (as `comm_path` names it) under
one `algorithm`; `calls` counts those past their argument checks, failed ones
included; `bytes` what they carried per rank (count times the element size: per
block for all_gather and all_to_all, every block sent for all_to_all_v, none for
a barrier); `timed_calls` the calls `time_ns` covers (none while timing is off).
"""
struct CommStat
    collective::Symbol
    path::Symbol
    algorithm::String
    calls::UInt64
    failed::UInt64
    bytes::UInt64
    timed_calls::UInt64
    time_ns::UInt64
end

function CommStat(row::CommStatC)
    collective = findfirst(==(row.collective), COLLECTIVES)
    collective === nothing &&
        throw(DistError(DIST_ERR_INVALID_ARGUMENT, "unknown collective $(row.collective) in stats"))
    haskey(COMM_PATHS, row.path) || throw(DistError(DIST_ERR_INVALID_ARGUMENT, "unknown communicator path $(row.path)"))
    return CommStat(collective, COMM_PATHS[row.path], unsafe_string(row.algorithm), row.calls, row.failed, row.bytes,
                    row.timed_calls, row.time_ns)
end

"""
    comm_stats(c)

The counters of `c`: a `Vector{CommStat}`, one per collective, path and algorithm
that ran, in the order they first ran.
"""
function comm_stats(c::Comm)
    count = Ref{UInt64}(0)
    stats(rows, capacity) = ccall((:dist_comm_stats, libdistribute), Int32,
                                  (Ptr{Cvoid}, Ptr{CommStatC}, UInt64, Ptr{UInt64}), c.ptr, rows, capacity, count)
    check(stats(Ptr{CommStatC}(C_NULL), 0))
    while true
        capacity = count[]
        rows = Vector{CommStatC}(undef, capacity)
        check(stats(rows, capacity))
        # A request completing meanwhile may have added a row: then ask again with room for it.
        count[] <= capacity && return [CommStat(rows[i]) for i in 1:count[]]
    end
end

"Sets every counter of `comm_stats(c)` to zero; call it between calls on `c`."
function reset_comm_stats!(c::Comm)
    check(ccall((:dist_comm_stats_reset, libdistribute), Int32, (Ptr{Cvoid},), c.ptr))
    return c
end

"""
    Request

A call in flight (`async=true`): a collective, send or receive. It keeps its
arrays rooted until done; `close` (and the finalizer) waits for the call before
freeing it, or, with a pending `on_complete`, leaves the freeing to that
callback's task. Waits run in a GC-safe region (another thread of this process
may be the peer this one waits for).
"""
mutable struct Request
    ptr::Ptr{Cvoid}
    comm::Comm
    arrays::Any
    result::Any
    completion::Any         # the Completion of on_complete, or nothing
    function Request(ptr::Ptr{Cvoid}, comm::Comm, arrays, result)
        r = new(ptr, comm, arrays, result, nothing)
        push!(comm.requests, r)
        finalizer(close, r)
        return r
    end
end

function Base.close(r::Request)
    r.ptr == C_NULL && return nothing
    completion = r.completion
    if completion !== nothing && !completion.ran
        completion.free_when_done = true   # its task frees the request after the callback
        return nothing
    end
    return free_request(r)
end

function free_request(r::Request)
    r.ptr == C_NULL && return nothing
    ccall((:dist_request_wait, libdistribute), Int32, (Ptr{Cvoid}, Int64), r.ptr, -1)  # also from the finalizer
    ccall((:dist_request_free, libdistribute), Cvoid, (Ptr{Cvoid},), r.ptr)
    r.ptr = C_NULL
    r.arrays = nothing
    return nothing
end

"True once complete; throws the call's DistError if it failed."
function test(r::Request)
    done = Ref{Int32}(0)
    check(ccall((:dist_request_test, libdistribute), Int32, (Ptr{Cvoid}, Ptr{Int32}), r.ptr, done))
    return done[] != 0
end

"Waits until the call ends (its deadline bounds it) and returns the result array."
function Base.wait(r::Request)
    check(gc_safe(() -> ccall((:dist_request_wait, libdistribute), Int32, (Ptr{Cvoid}, Int64), r.ptr, -1)))
    return r.result
end

"Waits up to `timeout_ms`: false if this wait ran out (the request stays valid)."
function wait_for(r::Request, timeout_ms::Integer)
    status = gc_safe(() -> ccall((:dist_request_wait, libdistribute), Int32, (Ptr{Cvoid}, Int64), r.ptr, timeout_ms))
    status == DIST_ERR_TIMEOUT && return test(r)  # ran out (not done), or the call's own status
    check(status)
    return true
end
