# The uneven all-to-all (dist_all_to_all_v): rank i sends its block j to rank j,
# which receives it as its block i; each block has its own length.

# A count or offset table as C reads it: one UInt64 per rank (`nothing` stays NULL).
function block_table(name::String, values, n::Integer)
    values === nothing && return nothing
    length(values) == n ||
        throw(ArgumentError("all_to_all_v!: $name has $(length(values)) entries for a communicator of $n ranks"))
    any(<(0), values) && throw(ArgumentError("all_to_all_v!: $name holds a negative value"))
    return Vector{UInt64}(values)
end

table_ptr(t::Nothing) = Ptr{UInt64}(C_NULL)
table_ptr(t::Vector{UInt64}) = pointer(t)

"""
    all_to_all_v!(c, recv, recv_counts, send, send_counts; recv_offsets, send_offsets, async = false)

Sends block j of `send` (`send_counts[j]` elements, at element `send_offsets[j]`,
0-based, or packed in rank order without offsets) to rank j - 1, and receives rank
j - 1's block for this rank into block j of `recv`. One count (and offset) per rank
of `c`; zeros are allowed. `send_counts` on rank i must equal rank j's
`recv_counts` at i, else DIST_ERR_MISMATCH. Returns `recv` (`async = true`: a
`Request` keeping both arrays and the tables rooted).
"""
function all_to_all_v!(c::Comm, recv::Array, recv_counts, send::Array, send_counts; recv_offsets = nothing,
                       send_offsets = nothing, async::Bool = false)
    check_same_type(send, recv)
    n = nranks(c)
    sc, so = block_table("send_counts", send_counts, n), block_table("send_offsets", send_offsets, n)
    rc, ro = block_table("recv_counts", recv_counts, n), block_table("recv_offsets", recv_offsets, n)
    s, r = Ref(describe(send)), Ref(describe(recv))
    arrays = (send, recv, sc, so, rc, ro, s, r)
    call(out) = ccall((:dist_all_to_all_v, libdistribute), Int32,
                      (Ptr{Cvoid}, Ref{DistBuffer}, Ptr{UInt64}, Ptr{UInt64}, Ref{DistBuffer}, Ptr{UInt64},
                       Ptr{UInt64}, Ptr{Ptr{Cvoid}}),
                      c.ptr, s, table_ptr(sc), table_ptr(so), r, table_ptr(rc), table_ptr(ro), out)
    return issue(call, c, arrays, recv, async; safe_block = true)
end
