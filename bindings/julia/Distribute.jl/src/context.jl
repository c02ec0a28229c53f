"dist_context_options_t."
struct ContextOptionsC
    field_mask::UInt64
    token::Ptr{UInt8}
    token_file::Ptr{UInt8}
    connect_timeout_ms::Int64
    timeout_ms::Int64
    timeline::Ptr{UInt8}
end

"""
    Context(cluster; token, token_file, connect_timeout_ms, timeout_ms, timeline)

Joins the cluster (dist_context_create); blocks until every member has connected.
`timeline` (a path prefix) records a timeline: this rank writes
"<timeline>.<rank>.json", a JSON array of Chrome trace events, complete once the
context and everything made from it are closed; it turns on timing (`nothing`:
DIST_TIMELINE's value, else off; "" is refused with DIST_ERR_INVALID_ARGUMENT).
`rank`, `nranks` and `abort!` may be called from any thread. `close(context)`
closes the communicators split from it (waiting for their requests) first, as the
C API requires; the finalizer does the same.
"""
mutable struct Context
    ptr::Ptr{Cvoid}
    children::Vector{Any}   # Comms to close before the context
    world::Any              # the world Comm, or nothing
    lock::ReentrantLock
end

function Context(cluster::Cluster; token = nothing, token_file = nothing, connect_timeout_ms = nothing,
                 timeout_ms = nothing, timeline = nothing)
    out = Ref{Ptr{Cvoid}}(C_NULL)
    with_context_options(token, token_file, connect_timeout_ms, timeout_ms, timeline) do options
        GC.@preserve cluster check(ccall((:dist_context_create, libdistribute), Int32,
                                         (Ptr{Cvoid}, Ref{ContextOptionsC}, Ptr{Ptr{Cvoid}}), cluster.ptr, options, out))
    end
    return adopt_context(out[])
end

# Calls f(options::ContextOptionsC), whose strings live until it returns.
function with_context_options(f, token, token_file, connect_timeout_ms, timeout_ms, timeline)
    mask = UInt64(0)
    token === nothing || (mask |= CONTEXT_OPT_TOKEN)
    token_file === nothing || (mask |= CONTEXT_OPT_TOKEN_FILE)
    connect_timeout_ms === nothing || (mask |= CONTEXT_OPT_CONNECT_TIMEOUT_MS)
    timeout_ms === nothing || (mask |= CONTEXT_OPT_TIMEOUT_MS)
    timeline === nothing || (mask |= CONTEXT_OPT_TIMELINE)
    t = token === nothing ? nothing : String(token)
    file = token_file === nothing ? nothing : String(token_file)
    prefix = timeline === nothing ? nothing : String(timeline)
    GC.@preserve t file prefix begin
        return f(ContextOptionsC(mask, cstr(t), cstr(file), something(connect_timeout_ms, 0), something(timeout_ms, 0),
                                 cstr(prefix)))
    end
end

function adopt_context(ptr::Ptr{Cvoid})
    context = Context(ptr, Any[], nothing, ReentrantLock())
    finalizer(close, context)
    return context
end

function Base.close(c::Context)
    c.ptr == C_NULL && return nothing
    for child in c.children
        close(child)
    end
    empty!(c.children)
    c.world === nothing || close(c.world)
    ccall((:dist_context_destroy, libdistribute), Cvoid, (Ptr{Cvoid},), c.ptr)
    c.ptr = C_NULL
    return nothing
end

function rank(c::Context)
    out = Ref{Int32}(0)
    check(ccall((:dist_context_rank, libdistribute), Int32, (Ptr{Cvoid}, Ptr{Int32}), c.ptr, out))
    return Int(out[])
end

function nranks(c::Context)
    out = Ref{Int32}(0)
    check(ccall((:dist_context_size, libdistribute), Int32, (Ptr{Cvoid}, Ptr{Int32}), c.ptr, out))
    return Int(out[])
end

"""
    context_dump(c)

The flight recorder (dist_context_dump): a JSON `String` with this rank (rank, size,
task, host_id, pid, steady_ns, system_ns), lost_peers and communicators, each with
its last calls (seq, kind, dtype, count, state "in flight"/"done"/"failed", status,
path, algorithm, ...). May be called from any thread, also while a call hangs.
"""
function context_dump(c::Context)
    out = Ref{Ptr{UInt8}}(C_NULL)
    check(ccall((:dist_context_dump, libdistribute), Int32, (Ptr{Cvoid}, Ptr{Ptr{UInt8}}), c.ptr, out))
    return take_string(out[])
end

"Makes every pending and later call on every communicator fail with DIST_ERR_ABORTED, here and on every peer."
function abort!(c::Context, reason::Union{AbstractString, Nothing} = nothing)
    r = reason === nothing ? nothing : String(reason)
    GC.@preserve r check(ccall((:dist_context_abort, libdistribute), Int32, (Ptr{Cvoid}, Ptr{UInt8}), c.ptr, cstr(r)))
    return nothing
end
