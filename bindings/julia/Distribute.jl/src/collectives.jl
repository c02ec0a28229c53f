# The seven collectives over Arrays (zero copy). `send === nothing` means in place.
# With `async=true` each returns a Request that keeps the arrays rooted; otherwise
# the result array.

# Issues one C collective: `f(request_out)` makes the ccall. `safe_block`: a
# blocking call waits in a GC-safe region (other threads may collect meanwhile).
function issue(f, c::Comm, arrays, result, async::Bool; safe_block::Bool = false)
    if !async
        blocking() = f(Ptr{Ptr{Cvoid}}(C_NULL))
        GC.@preserve arrays check(safe_block ? gc_safe(blocking) : blocking())
        return result
    end
    out = Ref{Ptr{Cvoid}}(C_NULL)
    GC.@preserve arrays check(f(out))
    return Request(out[], c, arrays, result)
end

ref(b::Nothing) = Ptr{DistBuffer}(C_NULL)
ref(b::DistBuffer) = Ref(b)

function check_same_type(send, recv)
    send === nothing || recv === nothing || eltype(send) == eltype(recv) ||
        throw(ArgumentError("send holds $(eltype(send)) but recv $(eltype(recv))"))
end

"Element-wise reduction over all ranks into `recv` (in place without `send`)."
function all_reduce!(c::Comm, recv::Array, send::Union{Array, Nothing} = nothing; op::ReduceOp = SUM,
                     async::Bool = false)
    check_same_type(send, recv)
    s, r = describe(send), describe(recv)
    issue(c, (send, recv), recv, async) do out
        ccall((:dist_all_reduce, libdistribute), Int32,
              (Ptr{Cvoid}, Ptr{DistBuffer}, Ptr{DistBuffer}, Int32, Ptr{Ptr{Cvoid}}), c.ptr, ref(s), ref(r), op.value, out)
    end
end

"Reduction onto `root`: `recv` is needed there only (pass `nothing` elsewhere)."
function reduce!(c::Comm, recv::Union{Array, Nothing}, send::Union{Array, Nothing} = nothing; op::ReduceOp = SUM,
                 root::Integer = 0, async::Bool = false)
    check_same_type(send, recv)
    s, r = describe(send), describe(recv)
    issue(c, (send, recv), recv, async) do out
        ccall((:dist_reduce, libdistribute), Int32,
              (Ptr{Cvoid}, Ptr{DistBuffer}, Ptr{DistBuffer}, Int32, Int32, Ptr{Ptr{Cvoid}}),
              c.ptr, ref(s), ref(r), op.value, root, out)
    end
end

"Sends `buffer` from `root` to every rank."
function bcast!(c::Comm, buffer::Array; root::Integer = 0, async::Bool = false)
    b = describe(buffer)
    issue(c, (buffer,), buffer, async) do out
        ccall((:dist_broadcast, libdistribute), Int32, (Ptr{Cvoid}, Ptr{DistBuffer}, Int32, Ptr{Ptr{Cvoid}}),
              c.ptr, ref(b), root, out)
    end
end

"`recv` (nranks × length(send)) gets rank r's `send` at block r (without `send`: own block already there)."
function all_gather!(c::Comm, recv::Array, send::Union{Array, Nothing} = nothing; async::Bool = false)
    check_same_type(send, recv)
    s, r = describe(send), describe(recv)
    issue(c, (send, recv), recv, async) do out
        ccall((:dist_all_gather, libdistribute), Int32,
              (Ptr{Cvoid}, Ptr{DistBuffer}, Ptr{DistBuffer}, Ptr{Ptr{Cvoid}}), c.ptr, ref(s), ref(r), out)
    end
end

"""`recv` (c elements) gets block `rank` of the reduction of `send` (nranks × c). Without
`send`, `recv` holds the nranks × c inputs and the result lands in its first c."""
function reduce_scatter!(c::Comm, recv::Array, send::Union{Array, Nothing} = nothing; op::ReduceOp = SUM,
                         async::Bool = false)
    check_same_type(send, recv)
    count = length(recv)
    if send === nothing
        n = nranks(c)
        count % n == 0 || throw(ArgumentError("reduce_scatter!: $count elements are not a multiple of the $n ranks"))
        count = count ÷ n
    end
    s, r = describe(send), describe(recv, count)
    issue(c, (send, recv), recv, async) do out
        ccall((:dist_reduce_scatter, libdistribute), Int32,
              (Ptr{Cvoid}, Ptr{DistBuffer}, Ptr{DistBuffer}, Int32, Ptr{Ptr{Cvoid}}), c.ptr, ref(s), ref(r), op.value, out)
    end
end

"Block j of `send` goes to rank j, landing as block `rank` of its `recv` (in place without `send`)."
function all_to_all!(c::Comm, recv::Array, send::Union{Array, Nothing} = nothing; async::Bool = false)
    check_same_type(send, recv)
    s, r = describe(send), describe(recv)
    issue(c, (send, recv), recv, async) do out
        ccall((:dist_all_to_all, libdistribute), Int32,
              (Ptr{Cvoid}, Ptr{DistBuffer}, Ptr{DistBuffer}, Ptr{Ptr{Cvoid}}), c.ptr, ref(s), ref(r), out)
    end
end

"Returns when every member has called it."
function barrier(c::Comm; async::Bool = false)
    issue(c, (), nothing, async) do out
        ccall((:dist_barrier, libdistribute), Int32, (Ptr{Cvoid}, Ptr{Ptr{Cvoid}}), c.ptr, out)
    end
end
