# Point-to-point messages between two ranks of a communicator (dist_send,
# dist_recv), apart from its collectives: a receive matches the oldest unmatched
# send from its peer with the same tag; one (peer, tag) keeps the order sent. A
# matched pair must agree on dtype and count, else the receive fails with
# DIST_ERR_MISMATCH naming both sides. Each call ends by the communicator's
# deadline at the latest. Blocking calls run in a GC-safe region: while this
# thread waits in C for a peer on another thread of this process, that thread
# may allocate (and collect).

"A receive's `peer` that matches a send from any rank (`recv!` and `source` tell which)."
const ANY_SOURCE = -1
"The largest tag: tags are 0 .. TAG_MAX."
const TAG_MAX = Int(0x7FFFFFFF)   # an Int, as peers and ranks are

# One dist_send / dist_recv: blocking (`async = false`) or a Request keeping `data` rooted.
function p2p(function_name::Symbol, c::Comm, data::Array, peer::Integer, tag::Integer, async::Bool)
    peer32, tag32 = Int32(peer), Int32(tag)   # an InexactError here, not inside the GC-safe region
    b = Ref(describe(data))
    call(out) = function_name === :send ?
        ccall((:dist_send, libdistribute), Int32, (Ptr{Cvoid}, Ref{DistBuffer}, Int32, Int32, Ptr{Ptr{Cvoid}}),
              c.ptr, b, peer32, tag32, out) :
        ccall((:dist_recv, libdistribute), Int32, (Ptr{Cvoid}, Ref{DistBuffer}, Int32, Int32, Ptr{Ptr{Cvoid}}),
              c.ptr, b, peer32, tag32, out)
    if !async
        GC.@preserve data b check(gc_safe(() -> call(Ptr{Ptr{Cvoid}}(C_NULL))))
        return nothing
    end
    out = Ref{Ptr{Cvoid}}(C_NULL)
    GC.@preserve data b check(call(out))
    return Request(out[], c, (data, b), data)
end

"""
    send(c, data, peer; tag = 0, async = false)

Sends `data` to rank `peer` of `c` with `tag`; returns when `data` may be reused
(`async = true`: a `Request`, which keeps `data` rooted until done).
"""
send(c::Comm, data::Array, peer::Integer; tag::Integer = 0, async::Bool = false) =
    p2p(:send, c, data, peer, tag, async)

"""
    recv!(c, data, peer = ANY_SOURCE; tag = 0, async = false)

Receives into `data` (exactly as many elements as were sent) from rank `peer`, or
from any rank with `ANY_SOURCE`, and returns the rank it came from. With
`async = true`, a `Request`: `wait` returns `data`, then `source(request)` the sender.
"""
function recv!(c::Comm, data::Array, peer::Integer = ANY_SOURCE; tag::Integer = 0, async::Bool = false)
    async && return p2p(:recv, c, data, peer, tag, true)
    if peer != ANY_SOURCE
        p2p(:recv, c, data, peer, tag, false)
        return Int(peer)
    end
    request = p2p(:recv, c, data, peer, tag, true)  # only a request tells the sender
    try
        wait(request)
        return source(request)
    finally
        close(request)
    end
end

"""
    source(request)

The communicator rank a completed receive came from; a `DistError` for a request
that is not a receive or has not completed successfully.
"""
source(r::Request) =
    int_out(out -> ccall((:dist_request_source, libdistribute), Int32, (Ptr{Cvoid}, Ptr{Int32}), r.ptr, out))
