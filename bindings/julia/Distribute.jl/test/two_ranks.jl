# An all-gather between the threads of this process, for contexts joined through it:
# shared slots and a barrier made of an atomic counter, waited for without yielding,
# since the all-gather runs inside the library's callback. `barrier_wait` alone is a
# barrier between the ranks.
mutable struct SharedSlots
    slots::Vector{Vector{UInt8}}
    arrived::Threads.Atomic{Int}
    barriers::Vector{Int}   # barriers passed, by rank
    calls::Vector{Int}      # all-gathers, by rank
end
SharedSlots(n) = SharedSlots(Vector{Vector{UInt8}}(undef, n), Threads.Atomic{Int}(0), zeros(Int, n), zeros(Int, n))

function barrier_wait(s::SharedSlots, rank)
    s.barriers[rank + 1] += 1
    target = length(s.slots) * s.barriers[rank + 1]
    Threads.atomic_add!(s.arrived, 1)
    while s.arrived[] < target
        GC.safepoint()
        Libc.systemsleep(0.001)
    end
end

function all_gather(s::SharedSlots, rank, data)
    s.calls[rank + 1] += 1
    s.slots[rank + 1] = data
    barrier_wait(s, rank)
    everyone = copy(s.slots)
    barrier_wait(s, rank)
    return everyone
end

# body(rank, world, step) for ranks 0 and 1 of two contexts joined through SharedSlots,
# each on its own thread (needs julia --threads=2); what each returned or threw, by
# rank. step() is a barrier between them; every call fails by the 30 s deadline.
function two_ranks(body)
    exchange, steps = SharedSlots(2), SharedSlots(2)
    return fetch.([Threads.@spawn begin
                       c = Context(data -> all_gather(exchange, r, data), r, 2; token = "julia-two-ranks-test-token",
                                   connect_timeout_ms = 60000, timeout_ms = 30000)
                       try
                           body(r, world(c), () -> barrier_wait(steps, r))
                       catch e
                           e
                       finally
                           close(c)
                       end
                   end for r in 0:1])
end

# The message rank r sends to its peer as message n.
message(r, n, len) = [(r + 1) * 1000.0 + n * 10.0 + i * 0.5 for i in 0:len - 1]
