# Contexts built through the caller's own exchange (dist_context_create_oob). The
# all-gather runs inside the library's allgather callback, on the joining task,
# and the request is complete when it returns (NULL): a Julia task cannot run on
# while its thread is in C, so the connect deadline bounds the library's side of
# the join, not the function (bound it yourself, as torch's Store does). What the
# function throws, or an answer of the wrong shape, is caught in the trampoline,
# fails the exchange, and becomes the `cause` of the DistError thrown.

"dist_oob_t."
struct OobC
    field_mask::UInt64
    rank::Int32
    size::Int32
    allgather::Ptr{Cvoid}
    test::Ptr{Cvoid}
    free::Ptr{Cvoid}
    user_data::Ptr{Cvoid}
end

mutable struct ExchangeState
    all_gather::Any
    rank::Int
    size::Int
    failure::Any    # the first exception, or nothing
end

"`size` parts as long as `sent`, this rank's own at index `rank + 1`."
function checked_answer(parts, sent::Vector{UInt8}, size::Int, rank::Int)
    parts = [Vector{UInt8}(part) for part in parts]
    length(parts) == size || throw(ArgumentError("the all-gather returned $(length(parts)) items for $size ranks"))
    for (r, part) in enumerate(parts)
        length(part) == length(sent) || throw(ArgumentError(
            "the all-gather returned $(length(part)) bytes for rank $(r - 1), expected $(length(sent))"))
    end
    parts[rank + 1] == sent || throw(ArgumentError("the all-gather returned at index $rank other bytes than this rank sent"))
    return parts
end

function oob_allgather(data::Ptr{Cvoid}, send::Ptr{Cvoid}, recv::Ptr{Cvoid}, bytes::Csize_t,
                       request::Ptr{Ptr{Cvoid}})::Int32
    state = unsafe_pointer_to_objref(data)::ExchangeState
    try
        sent = Vector{UInt8}(undef, bytes)
        bytes > 0 && unsafe_copyto!(pointer(sent), Ptr{UInt8}(send), bytes)
        parts = checked_answer(state.all_gather(sent), sent, state.size, state.rank)
        for (r, part) in enumerate(parts)
            GC.@preserve part unsafe_copyto!(Ptr{UInt8}(recv) + (r - 1) * bytes, pointer(part), bytes)
        end
        unsafe_store!(request, C_NULL)   # complete: test and free are never called
        return Int32(0)
    catch e
        state.failure === nothing && (state.failure = e)
        return Int32(1)
    end
end

# Never called: every request is complete when allgather returns.
oob_test(::Ptr{Cvoid}, ::Ptr{Cvoid})::Int32 = Int32(0)

"""
    Context(all_gather, rank, size; token, token_file, connect_timeout_ms, timeout_ms, timeline)
    Context(rank, size; ...) do data ... end

Joins through the caller's own exchange (dist_context_create_oob), for frameworks
that already have a rendezvous and no cluster spec. `all_gather(data::Vector{UInt8})`
returns every rank's bytes, rank r's at index r + 1, each as long as `data`; it is
called one or more times, in the same order on every rank, inside the library's
callback on this task. What it throws fails the join with a `DistError` whose
`cause` it is. The cluster token authenticates the members as with a cluster;
`timeline` records one as with a cluster.
"""
function Context(all_gather, rank::Integer, size::Integer; token = nothing, token_file = nothing,
                 connect_timeout_ms = nothing, timeout_ms = nothing, timeline = nothing)
    state = ExchangeState(all_gather, rank, size, nothing)
    allgather = @cfunction(oob_allgather, Int32, (Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}, Csize_t, Ptr{Ptr{Cvoid}}))
    test = @cfunction(oob_test, Int32, (Ptr{Cvoid}, Ptr{Cvoid}))
    out = Ref{Ptr{Cvoid}}(C_NULL)
    status = with_context_options(token, token_file, connect_timeout_ms, timeout_ms, timeline) do options
        GC.@preserve state begin
            oob = OobC(0, rank, size, allgather, test, C_NULL, pointer_from_objref(state))
            # GC-safe: the other ranks' threads of this process may collect meanwhile.
            gc_safe(() -> ccall((:dist_context_create_oob, libdistribute), Int32,
                                (Ref{OobC}, Ref{ContextOptionsC}, Ptr{Ptr{Cvoid}}), oob, options, out))
        end
    end
    if status != DIST_OK
        message = unsafe_string(ccall((:dist_last_error, libdistribute), Cstring, ()))
        state.failure === nothing && throw(DistError(status, message))
        throw(DistError(status, string(message, " (", sprint(showerror, state.failure), ")"), state.failure))
    end
    return adopt_context(out[])
end
