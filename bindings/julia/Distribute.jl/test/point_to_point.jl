# Included by runtests.jl: send/recv!, ANY_SOURCE and source, all_to_all_v! and
# on_complete. Bad arguments on one rank; the data-carrying cases between two
# contexts on two threads (julia --threads=2), each rank returning what it saw and
# the checks running after both ended, against values computed here.

distcode(err) = err isa DistError ? err.status : nothing
caught(f) = try
    f()
    nothing
catch e
    e
end

@testset "point to point, uneven all-to-all and completion callbacks" begin
    header = read(joinpath(REPO, "include", "c_api.h"), String)
    @test occursin("#define DIST_ANY_SOURCE ($(ANY_SOURCE))", header)
    @test parse(Int, match(r"#define DIST_TAG_MAX (0x[0-9A-Fa-f]+)", header)[1]) == TAG_MAX

    cluster, context = single()
    w = world(context)
    data = zeros(Float32, 2)
    for bad in (() -> send(w, data, 0), () -> recv!(w, data, 0), () -> send(w, data, 1), () -> recv!(w, data, -2),
                () -> send(w, data, ANY_SOURCE), () -> send(w, data, 0; tag = -1),
                () -> recv!(w, data, 7; async = true))
        err = caught(bad)
        @test distcode(err) == Distribute.DIST_ERR_INVALID_ARGUMENT && !isempty(err.message)
    end
    @test caught(() -> send(w, data, 0; tag = 1 << 40)) isa InexactError
    @test all_to_all_v!(w, zeros(UInt32, 3), [3], UInt32[1, 2, 3], [3]) == UInt32[1, 2, 3]
    for (recv_counts, send_counts, offsets, expected) in (([3], [3, 0], nothing, ArgumentError),
                                                          ([3], [3], [0, 0], ArgumentError),
                                                          ([3], [-1], nothing, ArgumentError),
                                                          ([4], [4], nothing, DistError),
                                                          ([3], [3], [1], DistError))
        err = caught(() -> all_to_all_v!(w, zeros(UInt32, 3), recv_counts, UInt32[1, 2, 3], send_counts;
                                         recv_offsets = offsets))
        @test err isa expected
        expected === DistError && @test err.status == Distribute.DIST_ERR_INVALID_ARGUMENT
    end
    # A callback on a finished request runs on a task of this thread, once it yields.
    r = all_reduce!(w, Float32[2.5, 2.5]; async = true)
    @test wait(r) == Float32[2.5, 2.5]
    seen = Channel{Any}(4)
    task = on_complete(err -> put!(seen, err), r)
    wait(task)
    @test take!(seen) === nothing && !isready(seen)
    err = caught(() -> on_complete(_ -> put!(seen, :second), r))
    @test distcode(err) == Distribute.DIST_ERR_INVALID_ARGUMENT
    close(r)
    @test distcode(caught(() -> source(r))) == Distribute.DIST_ERR_INVALID_ARGUMENT  # closed
    close(context)
    close(cluster)

    if Threads.nthreads() < 2
        @warn "the two-rank point-to-point tests need julia --threads=2 or more; skipped"
    else
        # Both ways, blocking; tags out of order (non-blocking sends); one tag in order; ANY_SOURCE.
        results = two_ranks() do r, w, step
            peer = 1 - r
            if r == 0
                send(w, message(0, 0, 1031), peer; tag = 5)
                send(w, Int32[7, -8, 9], peer; tag = TAG_MAX)
                requests = [send(w, message(0, n, n == 4 ? 0 : 64), peer; tag = tag, async = true)
                            for (n, tag) in ((1, 1), (2, 2), (3, 3), (4, 3), (5, 4))]
                foreach(wait, requests)
                no_source = caught(() -> source(requests[1]))   # a send has none
                foreach(close, requests)
                back = zeros(Float64, 1031)
                from = recv!(w, back, ANY_SOURCE; tag = 0)
                send(w, [1.0, 2.0, 3.0], peer; tag = 11)
                return (back, from, no_source)
            end
            floats, ints = zeros(Float64, 1031), zeros(Int32, 3)
            from = recv!(w, floats, 0; tag = 5)
            recv!(w, ints, 0; tag = TAG_MAX)
            ordered = map(((4, 64), (3, 64), (2, 64), (3, 0), (1, 64))) do (tag, len)
                buffer = zeros(Float64, len)
                recv!(w, buffer, 0; tag = tag)
                buffer
            end
            send(w, message(1, 0, 1031), peer; tag = 0)
            request = recv!(w, zeros(Float64, 3), ANY_SOURCE; tag = 11, async = true)
            final = wait(request)
            final_from = source(request)
            close(request)
            return (floats, ints, from, ordered, final, final_from)
        end
        @test !any(x -> x isa Exception, results)
        back, from, no_source = results[1]
        @test back == message(1, 0, 1031) && from == 1
        @test distcode(no_source) == Distribute.DIST_ERR_INVALID_ARGUMENT
        floats, ints, from, ordered, final, final_from = results[2]
        @test floats == message(0, 0, 1031) && ints == Int32[7, -8, 9] && from == 0
        @test ordered == [message(0, 5, 64), message(0, 3, 64), message(0, 2, 64), Float64[], message(0, 1, 64)]
        @test final == [1.0, 2.0, 3.0] && final_from == 0

        # A count or dtype mismatch fails the receive with the library's message (the sends complete).
        results = two_ranks() do r, w, step
            if r == 0
                send(w, ones(Float32, 5), 1; tag = 0)
                send(w, ones(Int32, 4), 1; tag = 1)
                return nothing
            end
            return (caught(() -> recv!(w, zeros(Float32, 6), 0; tag = 0)),
                    caught(() -> recv!(w, zeros(Float32, 4), 0; tag = 1)))
        end
        @test results[1] === nothing
        for err in results[2]
            @test distcode(err) == Distribute.DIST_ERR_MISMATCH && !isempty(err.message)
        end
        @test occursin("5", results[2][1].message)

        # Uneven blocks with zeros: packed, at offsets, non-blocking.
        counts = [3 0; 4 5]   # counts[i + 1, j + 1]: elements rank i sends to rank j
        block(from, to) = Int64[from * 100 + to * 10 + k - 50 for k in 0:counts[from + 1, to + 1] - 1]
        results = two_ranks() do r, w, step
            send_data = vcat(block(r, 0), block(r, 1))
            recv_counts = [counts[1, r + 1], counts[2, r + 1]]
            packed = all_to_all_v!(w, zeros(Int64, sum(recv_counts)), recv_counts, send_data, counts[r + 1, :])
            gapped = fill(Int64(-1), sum(recv_counts) + 2)   # block 1 first, two untouched, then block 0
            all_to_all_v!(w, gapped, recv_counts, send_data, counts[r + 1, :]; recv_offsets = [recv_counts[2] + 2, 0])
            request = all_to_all_v!(w, zeros(Int64, sum(recv_counts)), recv_counts, send_data, counts[r + 1, :];
                                    async = true)
            started = wait(request)
            close(request)
            return (packed, gapped, started)
        end
        for r in 0:1
            packed, gapped, started = results[r + 1]
            @test packed == started == vcat(block(0, r), block(1, r))
            @test gapped == vcat(block(1, r), [-1, -1], block(0, r))
        end

        # A callback runs once after its request was closed, and the receive's array holds the data.
        results = two_ranks() do r, w, step
            if r == 0
                step()   # rank 1 has registered and closed its receive
                send(w, message(0, 7, 300), 1; tag = 3)
                return nothing
            end
            seen = Channel{Any}(4)
            data = zeros(Float64, 300)
            request = recv!(w, data, 0; tag = 3, async = true)
            on_complete(err -> put!(seen, err), request)
            close(request)   # before the peer sent: its task frees it after the callback
            step()
            timedwait(() -> isready(seen), 60.0)
            got = isready(seen) ? take!(seen) : :never
            sleep(0.2)
            return (got, isready(seen), data, request.ptr == C_NULL)
        end
        @test results[1] === nothing
        got, again, data, freed = results[2]
        @test got === nothing && !again && freed
        @test data == message(0, 7, 300)

        # A pending callback gets the library's error when its context goes.
        pending = Channel{Any}(2)
        two_ranks() do r, w, step
            r == 0 && return nothing   # never sends
            request = recv!(w, zeros(UInt8, 4), 0; tag = 77, async = true)
            on_complete(err -> put!(pending, err), request)
            close(request)
            return nothing             # the context closes after this
        end
        timedwait(() -> isready(pending), 60.0)
        err = isready(pending) ? take!(pending) : :never
        @test distcode(err) == Distribute.DIST_ERR_ABORTED && occursin("destroyed", err.message)

        # A failed receive reaches the callback as the library's DistError.
        results = two_ranks() do r, w, step
            r == 0 && return send(w, UInt8[1, 2, 3], 1; tag = 1)
            seen = Channel{Any}(1)
            request = recv!(w, zeros(UInt8, 4), 0; tag = 1, async = true)
            on_complete(err -> put!(seen, err), request)
            timedwait(() -> isready(seen), 60.0)
            return (isready(seen) ? take!(seen) : :never, caught(() -> wait(request)))
        end
        from_callback, from_wait = results[2]
        @test distcode(from_callback) == Distribute.DIST_ERR_MISMATCH && !isempty(from_callback.message)
        @test distcode(from_wait) == from_callback.status && endswith(from_wait.message, from_callback.message)
    end
end
