# Parameter servers (tf.distribute's ps tasks) run in this process, and checkpoints
# of a cluster's servers.
#
# The server calls its log sink from its own threads; Julia >= 1.9 adopts them for
# the @cfunction trampoline. A Julia thread blocked in a C call would keep such a
# thread from ever collecting garbage, so every call that can wait on the server's
# threads (start, join, stop, destroy, checkpoints) runs in a GC-safe region.

const SERVER_OPT_ADDRESS = UInt64(1) << 0
const SERVER_OPT_TOKEN = UInt64(1) << 1
const SERVER_OPT_TOKEN_FILE = UInt64(1) << 2
const SERVER_OPT_CHECKPOINT_DIR = UInt64(1) << 3
const SERVER_OPT_IO_TIMEOUT_MS = UInt64(1) << 4
const SERVER_OPT_LOG = UInt64(1) << 5
const CHECKPOINT_OPT_TOKEN = UInt64(1) << 0
const CHECKPOINT_OPT_TOKEN_FILE = UInt64(1) << 1
const CHECKPOINT_OPT_TIMEOUT_MS = UInt64(1) << 2

"dist_server_options_t."
struct ServerOptionsC
    field_mask::UInt64
    address::Ptr{UInt8}
    token::Ptr{UInt8}
    token_file::Ptr{UInt8}
    checkpoint_dir::Ptr{UInt8}
    io_timeout_ms::Int64
    log::Ptr{Cvoid}
    log_user_data::Ptr{Cvoid}
end

"dist_checkpoint_options_t."
struct CheckpointOptionsC
    field_mask::UInt64
    token::Ptr{UInt8}
    token_file::Ptr{UInt8}
    timeout_ms::Int64
end

# Runs `call` (a ccall returning a status, touching no Julia object) with this thread
# marked GC-safe, so that the library's threads may run Julia code meanwhile.
function gc_safe(call)
    state = @ccall jl_gc_safe_enter()::Int8
    try
        return call()
    finally
        @ccall jl_gc_safe_leave(state::Int8)::Cvoid
    end
end

function log_trampoline(message::Ptr{UInt8}, sink::Ptr{Cvoid})::Cvoid
    try
        (unsafe_pointer_to_objref(sink)::Base.RefValue{Any})[](unsafe_string(message))
    catch
        # Dropped: nobody waits for the sink, and an exception must not reach C.
    end
    return nothing
end

"""
    Server(cluster = nothing; address, token, token_file, checkpoint_dir, io_timeout_ms, log)

The standard parameter server (`dist_server_start`), serving from background threads
of this process until `stop`ped. `cluster` may be `nothing` when `address` is given
("127.0.0.1:0" picks a free port). `log`, if given, is called with each log line
(a `String`) from the server's threads, possibly concurrently; what it throws is
dropped. `address`, `server_description`, `stop` and `join_server` may be called from any
thread; `close` (or the finalizer) stops, joins and frees it and is idempotent.
"""
mutable struct Server
    ptr::Ptr{Cvoid}
    # The sink the server's threads call, in a mutable box whose address is the
    # user_data: kept until destroy returns.
    log::Union{Base.RefValue{Any},Nothing}
end

opt_path(p) = p === nothing ? nothing : String(p)

function Server(cluster::Union{Cluster,Nothing} = nothing; address = nothing, token = nothing, token_file = nothing,
                checkpoint_dir = nothing, io_timeout_ms = nothing, log = nothing)
    strings = map(opt_path, (address, token, token_file, checkpoint_dir))
    mask = UInt64(0)
    for (bit, value) in zip((SERVER_OPT_ADDRESS, SERVER_OPT_TOKEN, SERVER_OPT_TOKEN_FILE, SERVER_OPT_CHECKPOINT_DIR),
                            strings)
        value === nothing || (mask |= bit)
    end
    io_timeout_ms === nothing || (mask |= SERVER_OPT_IO_TIMEOUT_MS)
    log === nothing || (mask |= SERVER_OPT_LOG)
    server = Server(C_NULL, log === nothing ? nothing : Ref{Any}(log))
    trampoline = @cfunction(log_trampoline, Cvoid, (Ptr{UInt8}, Ptr{Cvoid}))
    out = Ref{Ptr{Cvoid}}(C_NULL)
    cluster_ptr = cluster === nothing ? C_NULL : cluster.ptr
    GC.@preserve strings server cluster begin
        options = Ref(ServerOptionsC(mask, map(cstr, strings)..., something(io_timeout_ms, 0),
                                     log === nothing ? C_NULL : trampoline,
                                     log === nothing ? C_NULL : pointer_from_objref(server.log)))
        check(gc_safe(() -> ccall((:dist_server_start, libdistribute), Int32,
                                  (Ptr{Cvoid}, Ptr{ServerOptionsC}, Ptr{Ptr{Cvoid}}), cluster_ptr, options, out)))
    end
    server.ptr = out[]
    finalizer(close, server)
    return server
end

function Base.close(s::Server)
    s.ptr == C_NULL && return nothing
    ptr, s.ptr = s.ptr, C_NULL
    gc_safe(() -> ccall((:dist_server_destroy, libdistribute), Cvoid, (Ptr{Cvoid},), ptr))
    s.log = nothing
    return nothing
end

"The \"host:port\" actually listened at."
function address(s::Server)
    out = Ref{Ptr{UInt8}}(C_NULL)
    check(ccall((:dist_server_address, libdistribute), Int32, (Ptr{Cvoid}, Ptr{Ptr{UInt8}}), s.ptr, out))
    return borrowed(out[])
end

"What the server holds, as a JSON string: address, stopping, requests, variables."
function server_description(s::Server)
    out = Ref{Ptr{UInt8}}(C_NULL)
    check(ccall((:dist_server_describe, libdistribute), Int32, (Ptr{Cvoid}, Ptr{Ptr{UInt8}}), s.ptr, out))
    return take_string(out[])
end

"""
    join_server(server, timeout_ms = -1)

Waits until the server has stopped (`timeout_ms < 0`: without bound); a `DistError`
with `DIST_ERR_TIMEOUT` when it still serves at the timeout.
"""
function join_server(s::Server, timeout_ms::Integer = -1)
    blocking_call(ptr -> ccall((:dist_server_join, libdistribute), Int32, (Ptr{Cvoid}, Int64), ptr, timeout_ms), s)
end

"Asks the server to stop; `join_server` waits for it."
stop(s::Server) = blocking_call(ptr -> ccall((:dist_server_stop, libdistribute), Int32, (Ptr{Cvoid},), ptr), s)

# A call on the server that may wait for its threads, GC-safe.
function blocking_call(call, s::Server)
    ptr = s.ptr
    check(gc_safe(() -> call(ptr)))
    return nothing
end

function checkpoint_options(token, token_file, timeout_ms)
    strings = map(opt_path, (token, token_file))
    mask = UInt64(0)
    strings[1] === nothing || (mask |= CHECKPOINT_OPT_TOKEN)
    strings[2] === nothing || (mask |= CHECKPOINT_OPT_TOKEN_FILE)
    timeout_ms === nothing || (mask |= CHECKPOINT_OPT_TIMEOUT_MS)
    return strings, mask
end

"""
    checkpoint_save(cluster, root, step; token, token_file, timeout_ms) -> String

Every ps task of `cluster` saves its shards as checkpoint `step` under `root`;
returns the checkpoint directory, "<root>/ckpt-<step>".
"""
function checkpoint_save(c::Cluster, root::AbstractString, step::Integer; token = nothing, token_file = nothing,
                         timeout_ms = nothing)
    strings, mask = checkpoint_options(token, token_file, timeout_ms)
    out = Ref{Ptr{UInt8}}(C_NULL)
    root = String(root)
    GC.@preserve strings root c begin
        options = Ref(CheckpointOptionsC(mask, map(cstr, strings)..., something(timeout_ms, 0)))
        cluster_ptr, root_ptr = c.ptr, pointer(root)
        check(gc_safe(() -> ccall((:dist_checkpoint_save, libdistribute), Int32,
                                  (Ptr{Cvoid}, Ptr{UInt8}, Int64, Ptr{CheckpointOptionsC}, Ptr{Ptr{UInt8}}),
                                  cluster_ptr, root_ptr, step, options, out)))
    end
    return take_string(out[])
end

"""
    checkpoint_restore(cluster, directory; token, token_file, timeout_ms) -> String

Every ps task of `cluster` restores from `directory` (a root, whose LATEST is used,
or one ckpt-<step> directory); returns the checkpoint directory used. A corrupt or
truncated checkpoint is refused with a `DistError` naming the file.
"""
function checkpoint_restore(c::Cluster, directory::AbstractString; token = nothing, token_file = nothing,
                            timeout_ms = nothing)
    strings, mask = checkpoint_options(token, token_file, timeout_ms)
    out = Ref{Ptr{UInt8}}(C_NULL)
    directory = String(directory)
    GC.@preserve strings directory c begin
        options = Ref(CheckpointOptionsC(mask, map(cstr, strings)..., something(timeout_ms, 0)))
        cluster_ptr, directory_ptr = c.ptr, pointer(directory)
        check(gc_safe(() -> ccall((:dist_checkpoint_restore, libdistribute), Int32,
                                  (Ptr{Cvoid}, Ptr{UInt8}, Ptr{CheckpointOptionsC}, Ptr{Ptr{UInt8}}),
                                  cluster_ptr, directory_ptr, options, out)))
    end
    return take_string(out[])
end
