# Completion callbacks (dist_request_on_complete) without Julia code on the
# library's threads. The library calls the callback on the thread that completed
# the request; running Julia there means adopting that thread, which waits for the
# GC, and the GC waits for every Julia thread, one of which may be blocked in a
# ccall on this very communicator: a deadlock. So the C callback is libuv's
# uv_async_send itself (exported by libjulia), with the uv_async_t of a
# Base.AsyncCondition as user_data: the library thread only wakes Julia's event
# loop. A task waiting on the condition then reads the call's status and message
# (dist_request_wait, complete by then) and calls `f`. The library calls
# `callback(user_data, status, message)`; uv_async_send takes only the first
# argument, which the C calling conventions of x86-64 (System V) and AArch64 pass
# in a register, the others being ignored by a callee that does not read them.

"What keeps one registration alive until its callback ran: the request, the condition, `f`."
mutable struct Completion
    request::Any
    cond::Base.AsyncCondition
    f::Any
    ran::Bool
    free_when_done::Bool   # close(request) came first: the task frees it after `f`
end

const PENDING_COMPLETIONS = Set{Completion}()
const PENDING_LOCK = ReentrantLock()

"""
    on_complete(f, request) -> Task

Calls `f(err)` once when the request's call completes: `err` is `nothing` on
success or the call's `DistError`. The library's thread only signals a
`Base.AsyncCondition`; `f` runs on a task of this thread, the next time it yields
(so never inside `on_complete`, even for a request already complete), and may do
anything a task may. What it throws is logged. At most one per request (a second
throws the library's DistError). `close(request)` before the call completed frees
it after `f` ran; the request and `f` stay rooted until then. Returns the task.
"""
function on_complete(f, r::Request)
    cond = Base.AsyncCondition()
    state = Completion(r, cond, f, false, false)
    status = ccall((:dist_request_on_complete, libdistribute), Int32, (Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}),
                   r.ptr, cglobal(:uv_async_send), cond.handle)
    if status != DIST_OK
        message = unsafe_string(ccall((:dist_last_error, libdistribute), Cstring, ()))
        close(cond)   # refused: the library never signals it
        throw(DistError(status, message))
    end
    r.completion = state
    lock(() -> push!(PENDING_COMPLETIONS, state), PENDING_LOCK)
    return @async run_completion(state)
end

function run_completion(state::Completion)
    r = state.request::Request
    try
        wait(state.cond)   # returns at once if signalled before this wait began
        status = gc_safe(() -> ccall((:dist_request_wait, libdistribute), Int32, (Ptr{Cvoid}, Int64), r.ptr, -1))
        err = status == DIST_OK ? nothing :
              DistError(status, unsafe_string(ccall((:dist_last_error, libdistribute), Cstring, ())))
        state.ran = true
        try
            state.f(err)
        catch e
            @error "a completion callback of Distribute threw" exception = (e, catch_backtrace())
        end
    finally
        state.ran = true
        close(state.cond)
        state.free_when_done && free_request(r)
        lock(() -> delete!(PENDING_COMPLETIONS, state), PENDING_LOCK)
    end
    return nothing
end
