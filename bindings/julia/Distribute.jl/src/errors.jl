"""
    DistError(status, message[, cause])

A failed libdistribute call: `status` is the C status code (negative), `message`
the library's `dist_last_error()` text; `cause`, when not `nothing`, is what the
caller's own code (an exchange's all-gather) threw to make it fail.
"""
struct DistError <: Exception
    status::Int32
    message::String
    cause::Any
end

DistError(status::Integer, message::AbstractString) = DistError(status, message, nothing)

Base.showerror(io::IO, e::DistError) = print(io, status_string(e.status), ": ", e.message)

"The static name of a status code (\"DIST_ERR_INVALID_ARGUMENT\")."
status_string(status::Integer) =
    unsafe_string(ccall((:dist_status_string, libdistribute), Cstring, (Int32,), status))

"A peer or link failed (-200..-299): the communicator or cluster is affected."
is_peer_failure(e::DistError) = -299 <= e.status <= -200

# Throws for a failed status. No task switch can happen between the failing ccall and
# this one, so the thread-local message is the failing call's.
function check(status::Int32)
    status == DIST_OK && return nothing
    message = unsafe_string(ccall((:dist_last_error, libdistribute), Cstring, ()))
    throw(DistError(status, message))
end

# An Int32 out-parameter call: `f(out)` makes the ccall.
function int_out(f)
    out = Ref{Int32}(0)
    check(f(out))
    return Int(out[])
end
