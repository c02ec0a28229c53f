using Distribute
using Test

const REPO = normpath(joinpath(@__DIR__, "..", "..", "..", ".."))
const BUILD = get(ENV, "DIST_BUILD_DIR", joinpath(REPO, "build"))

single() = (cluster = cluster_from_json("{}"); (cluster, Context(cluster)))

include("two_ranks.jl")

@testset "Distribute" begin
    @testset "constants match the header" begin
        header = read(joinpath(REPO, "include", "c_api.h"), String)
        value(name) = parse(Int, match(Regex("#define $name\\s+(-?\\d+)"), header)[1])
        @test Distribute.DIST_ERR_INVALID_ARGUMENT == value("DIST_ERR_INVALID_ARGUMENT")
        @test Distribute.DIST_ERR_TIMEOUT == value("DIST_ERR_TIMEOUT")
        @test Distribute.DIST_ERR_ABORTED == value("DIST_ERR_ABORTED")
        for (T, name) in ((Int8, "I8"), (UInt8, "U8"), (Int32, "I32"), (UInt32, "U32"), (Int64, "I64"),
                          (UInt64, "U64"), (Float16, "F16"), (BF16, "BF16"), (Float32, "F32"), (Float64, "F64"))
            @test Distribute.dtype(T) == value("DIST_DTYPE_$name")
        end
        for (op, name) in ((SUM, "SUM"), (PROD, "PROD"), (MIN, "MIN"), (MAX, "MAX"), (MEAN, "MEAN"))
            @test op.value == value("DIST_OP_$name")
        end
        for (symbol, name) in ((:auto, "AUTO"), (:ring, "RING"), (:rabenseifner, "RABENSEIFNER"),
                               (:recursive_doubling, "RECURSIVE_DOUBLING"), (:shared_memory, "SHARED_MEMORY"),
                               (:hierarchical, "HIERARCHICAL"))
            @test Distribute.ALLREDUCE_ALGORITHMS[symbol] == value("DIST_ALLREDUCE_$name")
        end
        for (v, symbol) in Distribute.COMM_PATHS
            @test v == value("DIST_COMM_PATH_" * uppercase(String(symbol)))
        end
        for (symbol, v) in Distribute.COLLECTIVES
            @test v == value("DIST_COLLECTIVE_" * uppercase(String(symbol)))
        end
        # Every value of these enumerations in the header has its Julia counterpart.
        @test length(Distribute.ALLREDUCE_ALGORITHMS) == count(r"#define DIST_ALLREDUCE_\w+\s+-?\d", header)
        @test length(Distribute.COMM_PATHS) == count(r"#define DIST_COMM_PATH_\w+\s+-?\d", header)
        @test length(Distribute.COLLECTIVES) == count(r"#define DIST_COLLECTIVE_\w+\s+-?\d", header)
        for (symbol, v) in Distribute.CROSS_DEVICE_OPS
            @test v == value("DIST_CROSS_DEVICE_OPS_" * uppercase(String(symbol)))
        end
        @test length(Distribute.CROSS_DEVICE_OPS) == count(r"#define DIST_CROSS_DEVICE_OPS_\w+\s+-?\d", header)
        for (bit, name) in ((Distribute.STRATEGY_OPT_CROSS_DEVICE_OPS, "CROSS_DEVICE_OPS"),
                            (Distribute.STRATEGY_OPT_REDUCE_TO_DEVICE, "REDUCE_TO_DEVICE"),
                            (Distribute.STRATEGY_OPT_NUM_PACKS, "NUM_PACKS"))
            m = match(Regex("#define DIST_STRATEGY_OPT_$name\\s+\\(1ull << (\\d+)\\)"), header)
            @test bit == UInt64(1) << parse(Int, m[1])
        end
        comm_bits = ((Distribute.COMM_OPT_TIMEOUT_MS, "TIMEOUT_MS"), (Distribute.COMM_OPT_ALLREDUCE, "ALLREDUCE"),
                     (Distribute.COMM_OPT_TIMING, "TIMING"), (Distribute.COMM_OPT_STALL_WARNING_MS, "STALL_WARNING_MS"),
                     (Distribute.COMM_OPT_DETERMINISTIC, "DETERMINISTIC"))
        for (bit, name) in comm_bits
            m = match(Regex("#define DIST_COMM_OPT_$name\\s+\\(1ull << (\\d+)\\)"), header)
            @test bit == UInt64(1) << parse(Int, m[1])
        end
        @test length(comm_bits) == count(r"#define DIST_COMM_OPT_\w+\s", header)
        context_bits = ((Distribute.CONTEXT_OPT_TOKEN, "TOKEN"), (Distribute.CONTEXT_OPT_TOKEN_FILE, "TOKEN_FILE"),
                        (Distribute.CONTEXT_OPT_CONNECT_TIMEOUT_MS, "CONNECT_TIMEOUT_MS"),
                        (Distribute.CONTEXT_OPT_TIMEOUT_MS, "TIMEOUT_MS"), (Distribute.CONTEXT_OPT_TIMELINE, "TIMELINE"))
        for (bit, name) in context_bits
            m = match(Regex("#define DIST_CONTEXT_OPT_$name\\s+\\(1ull << (\\d+)\\)"), header)
            @test bit == UInt64(1) << parse(Int, m[1])
        end
        @test length(context_bits) == count(r"#define DIST_CONTEXT_OPT_\w+\s", header)
        @test sizeof(Distribute.DistBuffer) == 32
    end

    @testset "struct layouts match the header" begin
        # bindings/c_layout.py: every struct as the C compiler lays it out.
        report = readlines(`python3 $(joinpath(REPO, "bindings", "c_layout.py"))`)
        @test length(report) >= 9
        for line in report
            cname, total, _, fields... = split(line)
            stem = join(uppercasefirst.(split(cname[length("dist_") + 1:end - length("_t")], "_")))
            T = cname == "dist_buffer_t" ? Distribute.DistBuffer : getfield(Distribute, Symbol(stem, "C"))
            @test sizeof(T) == parse(Int, total)
            @test [String(n) for n in fieldnames(T)] == [first(split(f, ":")) for f in fields]
            for (i, f) in enumerate(fields)
                _, offset, bytes = split(f, ":")
                @test fieldoffset(T, i) == parse(Int, offset) && sizeof(fieldtype(T, i)) == parse(Int, bytes)
            end
        end
        if Sys.WORD_SIZE == 64
            # num_packs (int32) follows reduce_to_device at 88; 4 bytes of tail padding make 96.
            S = Distribute.StrategyOptionsC
            @test fieldnames(S)[end] == :num_packs && fieldtype(S, fieldcount(S)) == Int32
            @test fieldoffset(S, fieldcount(S) - 1) == 80 && fieldoffset(S, fieldcount(S)) == 88
            @test sizeof(S) == 96
            # The appended timeline pointer sits at 40, after timeout_ms (32): 48 bytes in all.
            O = Distribute.ContextOptionsC
            @test fieldnames(O)[end] == :timeline && fieldtype(O, fieldcount(O)) == Ptr{UInt8}
            @test fieldoffset(O, fieldcount(O)) == 40 && sizeof(O) == 48
            @test any(l -> startswith(l, "dist_context_options_t 48 ") && endswith(l, " timeline:40:8"), report)
            # timing (Int32 at 20) ends at 24, where the Int64 stall_warning_ms fits without
            # padding; deterministic (Int32 at 32) takes 4 bytes of tail padding: 40 in all.
            M = Distribute.CommOptionsC
            @test fieldnames(M)[end - 1:end] == (:stall_warning_ms, :deterministic)
            @test fieldtype(M, fieldcount(M) - 1) == Int64 && fieldtype(M, fieldcount(M)) == Int32
            @test fieldoffset(M, fieldcount(M) - 2) == 20
            @test fieldoffset(M, fieldcount(M) - 1) == 24 && fieldoffset(M, fieldcount(M)) == 32 && sizeof(M) == 40
            @test any(l -> startswith(l, "dist_comm_options_t 40 ") &&
                           endswith(l, " stall_warning_ms:24:8 deterministic:32:4"), report)
        end
    end

    @testset "error mapping" begin
        err = try
            resolve_cluster(:tf_config; env = ["TF_CONFIG={\"cluster\": {\"worker\": 3}}"])
            nothing
        catch e
            e
        end
        @test err isa DistError
        @test err.status == Distribute.DIST_ERR_INVALID_ARGUMENT
        @test occursin("TF_CONFIG", err.message) && occursin("worker", err.message)
        @test sprint(showerror, err) == "DIST_ERR_INVALID_ARGUMENT: " * err.message
        @test_throws DistError cluster_from_json("{\"cluster\": {\"worker\": [\"a:1\"]}, \"task\": {\"type\": \"worker\", \"index\": 3}}")
        @test status_string(4242) == "DIST_ERR_UNKNOWN"
        @test version() == 0x000100 && version_string() == "0.1.0"
        @test :ucx in build_features()
        @test occursin("\"version\"", build_info())
    end

    @testset "cluster queries" begin
        sparse = """{"cluster": {"worker": {"1": "h:2222", "3": "h:2223"}, "chief": ["c:1"]},
                     "task": {"type": "worker", "index": 3}, "rpc_layer": "grpc", "environment": "cloud"}"""
        c = resolve_cluster(:tf_config; env = ["TF_CONFIG=" * sparse])
        @test resolver(c) == :tf_config
        @test task_type(c) == "worker" && task_id(c) == 3
        @test rpc_layer(c) == "grpc" && environment(c) == "cloud"
        @test jobs(c) == ["chief", "worker"]
        @test task_indices(c, "worker") == [1, 3]
        @test task_address(c, "worker", 1) == "h:2222"
        @test master(c) == "grpc://h:2223"
        @test master(c, "chief", 0, "ucx") == "ucx://c:1"
        @test num_accelerators(c) >= 0
        @test cuda_visible_devices(c) === nothing
        @test occursin("tf_config", to_json(c))
        ps = cluster_from_json("{\"cluster\": {\"ps\": [\"p:1\"]}}")
        u = resolve_cluster(:union; members = [c, ps])
        @test jobs(u) == ["chief", "ps", "worker"]
        mpi = resolve_cluster(:mpi; env = ["OMPI_COMM_WORLD_RANK=2", "OMPI_COMM_WORLD_SIZE=4",
                                           "OMPI_COMM_WORLD_LOCAL_SIZE=4"], jobs = ["ps" => 1, "worker" => 3])
        @test task_type(mpi) == "worker" && task_id(mpi) == 1
        @test resolver_name(99) === nothing
        foreach(close, (c, ps, u, mpi))
    end

    @testset "handle lifetimes" begin
        c = cluster_from_json("{\"cluster\": {\"worker\": [\"a:1\"]}}")
        close(c)
        close(c)
        @test_throws DistError num_tasks(c, "worker")
        cluster, context = single()
        w = world(context)
        child = split_comm(w, 0)
        @test split_comm(w, -1) === nothing
        close(context)
        @test child.ptr == C_NULL && w.ptr == C_NULL
        close(child)
        @test_throws DistError barrier(child)
        for _ in 1:200
            single()
        end
        GC.gc()
        close(cluster)
    end

    @testset "every dtype" begin
        cluster, context = single()
        w = world(context)
        for T in (Int8, UInt8, Int32, UInt32, Int64, UInt64, Float16, Float32, Float64)
            a = T[1, 2, 3]
            @test all_reduce!(w, zeros(T, 3), a; op = PROD) == a
        end
        b = [BF16(1.5f0), BF16(-2.0f0)]
        all_reduce!(w, b; op = SUM)
        @test Float32.(b) == [1.5f0, -2.0f0]
        @test_throws ArgumentError all_reduce!(w, Int16[1, 2])
        close(context)
        close(cluster)
    end

    @testset "collectives and requests" begin
        cluster, context = single()
        w = world(context)
        @test rank(context) == 0 && nranks(context) == 1
        data = Float32[3, -1, 2.5]
        @test all_reduce!(w, zeros(Float32, 3), data; op = MEAN) == data
        @test reduce!(w, zeros(Float32, 3), data; op = MIN, root = 0) == data
        @test bcast!(w, copy(data)) == data
        @test all_gather!(w, zeros(Float32, 3), data) == data
        @test reduce_scatter!(w, zeros(Float32, 3), data) == data
        @test all_to_all!(w, zeros(Float32, 3), data) == data
        barrier(w)
        r = all_reduce!(w, collect(Int64, 0:9); async = true)
        @test wait_for(r, 30_000)
        @test wait(r) == collect(0:9)
        @test test(r)
        close(r)
        close(r)
        @test_throws DistError all_reduce!(w, zeros(Float32, 5), zeros(Float32, 4))
        configure!(w; timeout_ms = 5000, allreduce = :ring)
        @test comm_path(w) == :self
        err = try device_path(w); nothing catch e; e end  # nothing chosen before a call on CUDA memory
        @test err isa DistError && err.status == Distribute.DIST_ERR_UNAVAILABLE && occursin("CUDA", err.message)
        @test all(algorithm(w, c, 1 << 20) == "self" for c in keys(Distribute.COLLECTIVES))
        err = try algorithm(w, 8, 8); nothing catch e; e end  # one past DIST_COLLECTIVE_ALL_TO_ALL_V
        @test err isa DistError && err.status == Distribute.DIST_ERR_INVALID_ARGUMENT
        @test occursin("collective 8 is not a DIST_COLLECTIVE_* value", err.message)
        @test_throws KeyError algorithm(w, :gather, 8)
        err = try configure!(w; allreduce = :shared_memory); nothing catch e; e end  # one rank shares no segment
        @test err isa DistError && err.status == Distribute.DIST_ERR_UNSUPPORTED
        err = try configure!(w; allreduce = :hierarchical); nothing catch e; e end  # one rank spans no hosts
        @test err isa DistError && err.status == Distribute.DIST_ERR_UNSUPPORTED
        @test occursin("DIST_ALLREDUCE_HIERARCHICAL", err.message)
        @test (local_rank(w), local_size(w), num_hosts(w)) == (0, 1, 1)
        host = split_host(w)
        @test (rank(host), nranks(host), local_rank(host), local_size(host), num_hosts(host)) == (0, 1, 0, 1, 1)
        @test comm_path(host) == :self
        @test all_reduce!(host, Int32[4, -2, 9]; op = MAX) == Int32[4, -2, 9]
        close(host)
        for query in (local_rank, local_size, num_hosts, split_host)
            err = try query(host); nothing catch e; e end  # a closed communicator is an error, not a crash
            @test err isa DistError && err.status == Distribute.DIST_ERR_INVALID_ARGUMENT
            @test occursin("comm", err.message)
        end
        @test all_reduce!(w, Float32[1, 1]) == Float32[1, 1]  # the world outlives its host communicator
        abort!(context, "test says stop")
        err = try barrier(w); nothing catch e; e end
        @test err isa DistError && err.status == Distribute.DIST_ERR_ABORTED
        close(context)
        close(cluster)
    end

    @testset "communicator stats" begin
        cluster, context = single()
        w = world(context)
        reset_comm_stats!(w)
        @test comm_stats(w) == CommStat[]
        data = Float32[1, 2, 3, 4, 5, 6]
        for _ in 1:3
            all_reduce!(w, zeros(Float32, 6), data)
        end
        bcast!(w, zeros(Int64, 5))
        all_to_all_v!(w, zeros(Int32, 4), [4], Int32[1, 2, 3, 4], [4])
        barrier(w)
        # Timing is off by default: no timed calls, no time.
        untimed(collective, calls, bytes) = CommStat(collective, :self, "self", calls, 0, bytes, 0, 0)
        @test comm_stats(w) == [untimed(:all_reduce, 3, 3 * 6 * 4), untimed(:broadcast, 1, 5 * 8),
                                untimed(:all_to_all_v, 1, 4 * 4), untimed(:barrier, 1, 0)]

        configure!(w; timing = true)
        reset_comm_stats!(w)
        @test isempty(comm_stats(w))
        for _ in 1:4
            all_gather!(w, zeros(Float32, 6), data)
        end
        stats = comm_stats(w)
        @test length(stats) == 1
        s = stats[1]
        @test (s.collective, s.path, s.algorithm) == (:all_gather, :self, "self")
        @test (s.calls, s.bytes, s.failed) == (4, 4 * 6 * 4, 0)
        @test s.timed_calls == s.calls && s.time_ns > 0

        configure!(w; timing = false)
        reset_comm_stats!(w)
        r = all_reduce!(w, Int64[1, 2]; op = MAX, async = true)
        @test wait(r) == [1, 2]
        close(r)
        @test comm_stats(w) == [untimed(:all_reduce, 1, 2 * 8)]

        err = try configure!(w; timing = 2); nothing catch e; e end  # only 0 and 1
        @test err isa DistError && err.status == Distribute.DIST_ERR_INVALID_ARGUMENT
        @test occursin("timing 2 must be 0 or 1", err.message)
        host = split_host(w)
        close(host)
        for query in (comm_stats, reset_comm_stats!)
            err = try query(host); nothing catch e; e end
            @test err isa DistError && err.status == Distribute.DIST_ERR_INVALID_ARGUMENT
        end
        close(context)
        close(cluster)
    end

    @testset "stall warning and deterministic reductions" begin
        cluster, context = single()
        w = world(context)
        configure!(w; stall_warning_ms = 5000, deterministic = 1)
        data = Float32[1.5, -2, 3.25, 0.5, 8]
        # One rank: the sum is the rank's own values, bit for bit, in the fixed order too.
        @test reinterpret(UInt32, all_reduce!(w, zeros(Float32, 5), data)) == reinterpret(UInt32, data)
        configure!(w; stall_warning_ms = 0, deterministic = false)  # 0: no warning; the fastest order again
        @test all_reduce!(w, zeros(Float32, 5), data) == data
        err = try configure!(w; stall_warning_ms = -1); nothing catch e; e end
        @test err isa DistError && err.status == Distribute.DIST_ERR_INVALID_ARGUMENT
        @test occursin("stall_warning_ms -1 must be 0 (no warning) or positive", err.message)
        err = try configure!(w; deterministic = 2); nothing catch e; e end  # an integer passes through
        @test err isa DistError && err.status == Distribute.DIST_ERR_INVALID_ARGUMENT
        @test occursin("deterministic 2 must be 0 or 1", err.message)
        close(context)
        close(cluster)
    end

    @testset "flight recorder" begin
        cluster, context = single()
        w = world(context)
        # A deterministic float sum runs as an all_to_all and an all_gather, which the
        # recorder lists instead: pin the default order whatever DIST_DETERMINISTIC says.
        configure!(w; deterministic = false)
        data = Float32[1, 2, 3, 4, 5]
        all_reduce!(w, zeros(Float32, 5), data)
        all_reduce!(w, zeros(Float32, 5), data; op = MAX)
        barrier(w)
        text = context_dump(context)
        @test text isa String && startswith(strip(text), "{")
        # No JSON parser in Julia's standard library: python3 (as for the timeline) parses
        # the dump, written to a file, and prints the fields the test reads, one line each.
        file, io = mktemp()
        write(io, text)
        close(io)
        script = """
        import json, sys
        d = json.load(open(sys.argv[1]))
        print(d["rank"], d["size"], len(d["lost_peers"]), len(d["communicators"]), sep="\\t")
        for c in d["communicators"]:
            print(c["id"], c["path"], c["calls_started"], c["calls_finished"], len(c["calls"]), sep="\\t")
            for call in c["calls"]:
                print(call["seq"], call["kind"], call["dtype"], call["count"], call.get("op"), call["state"], sep="\\t")
        """
        lines = readlines(`python3 -c $script $file`)
        rm(file)
        @test split(lines[1], '\t') == ["0", "1", "0", "1"]
        @test split(lines[2], '\t') == ["0", "self", "3", "3", "3"]
        calls = [split(l, '\t') for l in lines[3:end]]
        @test length(calls) == 3
        @test calls[1] == ["0", "all_reduce", "f32", "5", "sum", "done"]
        @test calls[3][2] == "barrier" && calls[3][6] == "done"
        close(context)
        err = try context_dump(context); nothing catch e; e end
        @test err isa DistError && err.status == Distribute.DIST_ERR_INVALID_ARGUMENT
        close(cluster)
    end

    @testset "timeline" begin
        dir = mktempdir()
        prefix = joinpath(dir, "run")
        cluster = cluster_from_json("{}")
        context = Context(cluster; timeline = prefix)
        w = world(context)
        data = Float32[1, 2, 3, 4, 5]
        @test all_reduce!(w, zeros(Float32, 5), data) == data
        barrier(w)
        close(context)  # closes the world too, and with it the file's array
        file = prefix * ".0.json"
        text = read(file, String)
        @test startswith(strip(text), "[") && endswith(strip(text), "]")
        @test occursin("\"name\":\"all_reduce\"", text) && occursin("\"cat\":\"collective\"", text)
        # No JSON parser in Julia's standard library: python3 (which the layout check
        # above runs too) parses the file and prints each event's fields, one per line.
        script = """
        import json, sys
        events = json.load(open(sys.argv[1]))
        print(type(events).__name__)
        for e in events:
            a = e.get("args", {})
            print(*(str(v) for v in (e.get("name"), e.get("cat"), e.get("ph"), a.get("rank"), a.get("bytes"),
                                     a.get("path"))), sep="\\t")
        """
        lines = readlines(`python3 -c $script $file`)
        @test lines[1] == "list"
        rows = [split(l, '\t') for l in lines[2:end]]
        metadata = filter(r -> r[1] == "libdistribute", rows)
        @test length(metadata) == 1 && metadata[1][3] == "M" && metadata[1][4] == "0"
        calls = filter(r -> r[1] == "all_reduce", rows)
        @test length(calls) == 1
        @test calls[1][2:3] == ["collective", "X"] && calls[1][5] == string(4 * length(data)) && calls[1][6] == "self"
        @test any(r -> r[1] == "barrier" && r[2] == "collective", rows)

        err = try Context(cluster; timeline = ""); nothing catch e; e end
        @test err isa DistError && err.status == Distribute.DIST_ERR_INVALID_ARGUMENT
        @test occursin("timeline is empty", err.message)
        missing_prefix = joinpath(dir, "missing", "run")
        err = try Context(cluster; timeline = missing_prefix); nothing catch e; e end
        @test err isa DistError && err.status == Distribute.DIST_ERR_INVALID_ARGUMENT
        @test occursin("cannot create '$(missing_prefix).0.json'", err.message)
        close(cluster)
    end

    @testset "strategies, replicas and variables" begin
        err = try Strategy(; kind = :mirrored, timeout_seconds = -1.0); nothing catch e; e end
        @test err isa DistError && err.status == Distribute.DIST_ERR_INVALID_ARGUMENT
        @test occursin("timeout_seconds", err.message)
        s = Strategy(; kind = :mirrored, num_cpu_devices = 2)
        @test kind(s) == :mirrored && num_replicas_in_sync(s) == 2 && num_local_replicas(s) == 2
        @test length(devices(s)) == 2 && !has_cluster(s) && worker_index(s) == (0, 1)
        @test run_replicas(r -> (strategy(r) === s, replica_id(r), local_index(r)), s) == [(true, 0, 0), (true, 1, 1)]
        # CPU replicas: no CUDA device, no stream; the context is valid only during its call.
        @test run_replicas(r -> (device(r), stream(r)), s) == [(-1, C_NULL), (-1, C_NULL)]
        gone = only(run_replicas(r -> r, Strategy()))
        err = try device(gone); nothing catch e; e end
        @test err isa DistError && err.status == Distribute.DIST_ERR_INVALID_ARGUMENT
        # Cross-device ops: AUTO resolves to REDUCTION_TO_ONE_DEVICE on CPU replicas, for every kind.
        @test cross_device_ops(s) == :reduction_to_one_device
        for (k, n) in ((:one_device, nothing), (:central_storage, 2))
            other = Strategy(; kind = k, num_cpu_devices = n)
            @test cross_device_ops(other) == :reduction_to_one_device
            close(other)
        end
        for ops in (:auto, :reduction_to_one_device)
            other = Strategy(; kind = :mirrored, num_cpu_devices = 2, cross_device_ops = ops)
            @test cross_device_ops(other) == :reduction_to_one_device
            close(other)
        end
        for to in ("CPU:0", "/cpu:0", "/device:CPU:0")
            other = Strategy(; kind = :mirrored, num_cpu_devices = 2, cross_device_ops = :reduction_to_one_device,
                             reduce_to_device = to)
            @test cross_device_ops(other) == :reduction_to_one_device
            @test reduce(other, [Float32[1.5, -2], Float32[0.5, 4]]) == Float32[2, 2]
            close(other)
        end
        refused(; options...) = try Strategy(; options...); nothing catch e; e end
        invalid(err, text) = err isa DistError && err.status == Distribute.DIST_ERR_INVALID_ARGUMENT &&
                             occursin(text, err.message)
        for ops in (:nccl_all_reduce, :hierarchical_copy)
            @test invalid(refused(; kind = :mirrored, num_cpu_devices = 2, cross_device_ops = ops),
                          "combines GPU replicas, and this strategy's replicas are CPU devices")
        end
        @test invalid(refused(; kind = :mirrored, num_cpu_devices = 2, cross_device_ops = 7),
                      "cross_device_ops 7 is not one of")
        for (k, n) in ((:one_device, nothing), (:central_storage, 2))
            @test invalid(refused(; kind = k, num_cpu_devices = n, cross_device_ops = :reduction_to_one_device),
                          "is for MIRRORED and MULTI_WORKER_MIRRORED")
        end
        ps_cluster = cluster_from_json("{\"cluster\": {\"ps\": [\"127.0.0.1:1\"]}}")
        @test invalid(refused(; kind = :parameter_server, cluster = ps_cluster, token = "t", cross_device_ops = :auto),
                      "is for MIRRORED and MULTI_WORKER_MIRRORED")
        close(ps_cluster)
        @test invalid(refused(; kind = :mirrored, num_cpu_devices = 2, cross_device_ops = :reduction_to_one_device,
                              reduce_to_device = "GPU:0"), "\"GPU:0\" names a GPU")
        @test invalid(refused(; kind = :mirrored, num_cpu_devices = 2, reduce_to_device = "CPU:0"),
                      "REDUCTION_TO_ONE_DEVICE")
        @test invalid(refused(; kind = :mirrored, num_cpu_devices = 2, cross_device_ops = :auto,
                              reduce_to_device = "CPU:0"), "REDUCTION_TO_ONE_DEVICE")
        # num_packs (NCCL and hierarchical copy only) is refused on CPU replicas whatever its
        # value, the ops given or chosen by :auto.
        num_packs_refused = "num_packs is for cross_device_ops NcclAllReduce and HierarchicalCopyAllReduce, " *
                            "and this strategy's are ReductionToOneDevice"
        for n in (1, 4, 64)
            @test invalid(refused(; kind = :mirrored, num_cpu_devices = 2, num_packs = n), num_packs_refused)
        end
        for ops in (:auto, :reduction_to_one_device)
            @test invalid(refused(; kind = :mirrored, num_cpu_devices = 2, cross_device_ops = ops, num_packs = 2),
                          num_packs_refused)
        end
        for (k, n) in ((:one_device, nothing), (:central_storage, 2))
            @test invalid(refused(; kind = k, num_cpu_devices = n, num_packs = 2), num_packs_refused)
        end
        mw_cluster, mw_context = single()
        err = try
            Strategy(mw_context; kind = :multi_worker_mirrored, num_cpu_devices = 2, num_packs = 2)
            nothing
        catch e
            e
        end
        @test invalid(err, num_packs_refused)
        close(mw_context)
        close(mw_cluster)
        err = refused(; kind = :mirrored, communication = :nccl)
        @test err isa DistError && err.status == Distribute.DIST_ERR_UNSUPPORTED && occursin("NCCL", err.message)
        sums = run_replicas(s) do r
            data = fill(Float64(replica_id(r) + 1), 3)
            all_reduce!(r, data)
            set_result!(r, data)
            merge_call((st, values) -> sum(values), r, local_index(r) + 5)
        end
        @test sums == [11, 11]
        @test local_results(s) == [fill(3.0, 3), fill(3.0, 3)]
        # An exception in one replica surfaces from run_replicas as itself.
        err = try
            run_replicas(s) do r
                local_index(r) == 1 && throw(ArgumentError("replica 1 gave up"))
                all_reduce!(r, ones(Float32, 4))
            end
            nothing
        catch e
            e
        end
        @test err isa ArgumentError && err.msg == "replica 1 gave up"
        err = try run_replicas(r -> merge_call((st, v) -> error("merge of $v"), r, local_index(r)), s); nothing catch e; e end
        @test err isa ErrorException && err.msg == "merge of [0, 1]"
        # Variable round trips for several element types.
        for T in (Float32, Float64, Int32, Int64, UInt8, Float16)
            initial = T[1 2 3; 4 5 6]
            v = Variable(s, initial; name = "v")
            @test eltype(v) == T && size(v) == (2, 3) && length(v) == 6 && name(v) == "v"
            @test read(v) == initial && synchronization(v) == :on_write && aggregation(v) == :none
            assign!(v, initial .+ T(1))
            @test all(read_copy(v, c) == initial .+ T(1) for c in 0:(num_copies(v) - 1))
            assign_sub!(v, ones(T, 2, 3))
            @test read(v) == initial
            close(v)
        end
        v = Variable(s, [1.0, 2.0]; aggregation = :mean)
        run_replicas(r -> assign!(v, [4.0 * replica_id(r), 10.0]; replica = r), s)
        @test read(v) == [2.0, 10.0]
        sgd = Optimizer(:sgd; learning_rate = 0.5)
        apply_gradients!(s, [v], [[[1.0, 1.0]], [[3.0, 3.0]]], sgd)
        @test read(v) == [1.0, 9.0] && iterations(sgd) == 1
        @test reduce(s, [Float32[1, 2], Float32[3, 6]]; op = MEAN) == Float32[2, 4]
        parts = split_batch(s, Int32[0, 1, 2, 3, 4])
        @test parts[1] == Int32[0, 1, 2] && parts[2] == Int32[3, 4]
        tensors = batch_all_reduce!(s, [[Int64[1, 2]], [Int64[10, 20]]])
        @test tensors[2][1] == Int64[11, 22]
        input = InputContext(3, 1, 6)
        @test per_replica_batch_size(input, 24) == 4 && shard_files(input, 8) == [1, 4, 7]
        @test shard_range(input, 10) == 4:6
        @test_throws DistError per_replica_batch_size(input, 25)
        mine = input_context(s)
        @test (num_input_pipelines(mine), input_pipeline_id(mine), num_replicas_in_sync(mine)) == (1, 0, 2)
        foreach(close, (mine, input, sgd, v, s))
    end

    @testset "parameter server and checkpoints" begin
        token = "julia-binding-test-token"
        header = read(joinpath(REPO, "include", "c_api.h"), String)
        bits = collect(eachmatch(r"#define DIST_((?:SERVER|CHECKPOINT)_OPT_\w+)\s+\(1ull << (\d+)\)", header))
        @test length(bits) == 9
        for m in bits
            @test getfield(Distribute, Symbol(m[1])) == UInt64(1) << parse(Int, m[2])
        end
        lines = String[]
        line_lock = ReentrantLock()
        server = Server(; address = "127.0.0.1:0", token = token, log = l -> lock(() -> push!(lines, l), line_lock))
        a = address(server)
        @test occursin(r"^127\.0\.0\.1:[1-9][0-9]*$", a)
        described = server_description(server)
        @test occursin("\"address\":\"$a\"", described) && occursin("\"variables\":[]", described)
        @test lock(() -> any(occursin("serving at", l) for l in lines), line_lock)
        e = try join_server(server, 30); nothing catch err; err end
        @test e isa DistError && e.status == Distribute.DIST_ERR_TIMEOUT

        cluster = cluster_from_json("{\"cluster\":{\"ps\":[\"$a\"],\"worker\":[\"127.0.0.1:1\"]}," *
                                    "\"task\":{\"type\":\"worker\",\"index\":0}}")
        root = mktempdir()
        path = checkpoint_save(cluster, root, 6; token = token, timeout_ms = 20000)
        @test path == joinpath(root, "ckpt-6")
        shard = joinpath(path, "shard-00000-of-00001.ckpt")
        @test isfile(shard) && isfile(joinpath(path, "manifest.json")) && isfile(joinpath(root, "LATEST"))
        @test checkpoint_restore(cluster, root; token = token, timeout_ms = 20000) == path
        e = try checkpoint_save(cluster, root, 7; token = "wrong-token"); nothing catch err; err end
        @test e isa DistError && e.status == Distribute.DIST_ERR_AUTH && occursin("ps:0", e.message)
        bytes = read(shard)
        bytes[4] ⊻= 0xff
        write(shard, bytes)
        e = try checkpoint_restore(cluster, root; token = token); nothing catch err; err end
        @test e isa DistError && e.status == Distribute.DIST_ERR_INVALID_ARGUMENT &&
              occursin("is corrupt", e.message) && occursin("shard-00000-of-00001.ckpt", e.message)
        @test_throws DistError Server(; address = "127.0.0.1:0", token = token, checkpoint_dir = root)

        stop(server)
        join_server(server, 5000)
        close(server)
        close(server)   # idempotent
        @test_throws DistError address(server)
        close(cluster)
        rm(root; recursive = true)

        e = try Server(; address = "127.0.0.1", token = token); nothing catch err; err end
        @test e isa DistError && e.status == Distribute.DIST_ERR_INVALID_ARGUMENT && occursin("127.0.0.1", e.message)
        withenv("DIST_CLUSTER_TOKEN" => nothing, "DIST_CLUSTER_TOKEN_FILE" => nothing) do
            e = try Server(; address = "127.0.0.1:0"); nothing catch err; err end
            @test e isa DistError && occursin("needs the cluster token", e.message)
        end
    end

    @testset "parameter-server strategy against in-process servers" begin
        token = "julia-ps-strategy-token"
        servers = [Server(; address = "127.0.0.1:0", token = token) for _ in 1:2]
        ps = join(("\"$(address(s))\"" for s in servers), ",")
        cluster = cluster_from_json("{\"cluster\":{\"ps\":[$ps],\"worker\":[\"127.0.0.1:1\"]}," *
                                    "\"task\":{\"type\":\"worker\",\"index\":0}}")
        s = Strategy(; kind = :parameter_server, cluster = cluster, token = token)
        @test kind(s) == :parameter_server && num_replicas_in_sync(s) == 1

        # C shape (4, 3) is the Julia (3, 4) matrix: four C rows, one per column.
        initial = Float32.(reshape(0:11, 3, 4))
        w = Variable(s, initial; name = "dense", optimizer = (kind = :sgd, learning_rate = 0.5), num_shards = 2)
        @test shards(w) == [(server = 0, rows = 1:2), (server = 1, rows = 3:4)]
        @test num_copies(w) == 0
        g = Float32.(reshape([iseven(i) ? 2 : -1 for i in 0:11], 3, 4))
        apply_gradient!(w, g)
        @test read(w) == initial .- 0.5f0 .* g
        run_replicas(r -> assign_add!(w, g; replica = r), s)
        @test read(w) == initial .- 0.5f0 .* g .+ g

        table = Float64.(reshape(0:19, 4, 5))   # five C rows of four
        e = Variable(s, table; name = "embedding", optimizer = (kind = :sgd, learning_rate = 0.25),
                     max_shard_bytes = 2 * 4 * 8)
        @test length(shards(e)) == 3
        @test read_rows(e, [5, 1, 5]) == table[:, [5, 1, 5]]
        reference = copy(table)
        values = Float64.(reshape(1:8, 4, 2))
        add_rows!(e, [2, 2], values)
        reference[:, 2] .+= values[:, 1] .+ values[:, 2]
        grads = hcat(fill(4.0, 4), fill(-8.0, 4))
        apply_rows!(e, [4, 1], grads)
        reference[:, 4] .-= 0.25 .* grads[:, 1]
        reference[:, 1] .-= 0.25 .* grads[:, 2]
        @test read(e) == reference
        err = try read_rows(e, [6]); nothing catch x; x end
        @test err isa DistError && err.status == Distribute.DIST_ERR_INVALID_ARGUMENT

        a = Variable(s, [3.0, 3.0]; name = "adagrad", optimizer = (kind = :adagrad, learning_rate = 0.5))
        value, acc = [3.0, 3.0], [0.1, 0.1]
        for grad in ([1.0, -2.0], [0.5, 4.0])
            apply_gradient!(a, grad)
            acc .+= grad .^ 2
            value .-= 0.5 .* grad ./ (sqrt.(acc) .+ 1e-7)
        end
        @test isapprox(read(a), value; atol = 1e-12)

        plain = Variable(s, zeros(Float32, 2); name = "plain")
        err = try apply_gradient!(plain, ones(Float32, 2)); nothing catch x; x end
        @test err isa DistError && occursin("plain", err.message)

        root = mktempdir()
        checkpoint_save(cluster, root, 1; token = token, timeout_ms = 20000)
        assign!(plain, [7.0f0, 8.0f0])
        checkpoint_restore(cluster, root; token = token, timeout_ms = 20000)
        @test read(plain) == zeros(Float32, 2)
        foreach(close, (plain, a, e, w, s, cluster))
        foreach(close, servers)
        rm(root; recursive = true)
    end

    @testset "contexts through a Julia exchange" begin
        token = "julia-exchange-test-token"
        # One rank alone, and answers of the wrong shape.
        context = Context(data -> [data], 0, 1; token = token)
        @test (rank(context), nranks(context)) == (0, 1)
        one = Float32[1.5, -2]
        all_reduce!(world(context), one)
        @test one == Float32[1.5, -2]
        close(context)
        for (answer, expected) in ((data -> [data], "1 items for 2 ranks"),
                                   (data -> [data, vcat(data, 0x21)], "expected"),
                                   (data -> [zero(data), data], "other bytes than this rank sent"))
            err = try
                Context(answer, 0, 2; token = token, connect_timeout_ms = 30000)
            catch e
                e
            end
            @test err isa DistError && err.cause isa ArgumentError && occursin(expected, err.message)
        end
        @test_throws DistError Context(data -> [data, data], 2, 2; token = token)
        if Threads.nthreads() < 2
            @warn "the two-rank exchange needs julia --threads=2 or more; skipped"
        else
            # Ranks 0 and 1 on two threads, joined through SharedSlots.
            exchange = SharedSlots(2)
            input(r) = [Float64(i * (r + 1) - 7r) for i in 0:4098]
            results = fetch.([Threads.@spawn begin
                                  c = Context(data -> all_gather(exchange, r, data), r, 2; token = token,
                                              connect_timeout_ms = 60000)
                                  data = input(r)
                                  all_reduce!(world(c), data)
                                  close(c)
                                  data
                              end for r in 0:1])
            @test all(==(input(0) .+ input(1)), results)
            @test exchange.calls[1] == exchange.calls[2] >= 1
            # Both ranks' all-gathers throw: each join fails with its exception as the cause.
            failures = fetch.([Threads.@spawn try
                                   Context(_ -> error("store unreachable from rank $r"), r, 2; token = token,
                                           connect_timeout_ms = 60000)
                               catch e
                                   e
                               end for r in 0:1])
            for (r, err) in zip(0:1, failures)
                @test err isa DistError && err.cause isa ErrorException
                @test occursin("exchange", lowercase(err.message)) && occursin("store unreachable from rank $r", err.message)
            end
        end
    end

    include("point_to_point.jl")

    @testset "strategy example on two ranks" begin
        launcher = joinpath(BUILD, "tools", "dist-run", "dist-run")
        project = normpath(joinpath(@__DIR__, ".."))
        example = joinpath(project, "examples", "strategy_training.jl")
        output = read(`$launcher -n 2 --timeout 300 -- $(Base.julia_cmd()) --project=$project $example`, String)
        lines = filter(l -> occursin("weights hash", l), split(output, '\n'))
        @test length(lines) == 2
        @test all(occursin("4 replicas in sync", l) && occursin("local copies identical, correct", l) for l in lines)
        @test length(unique(match(r"hash (\w+);", l)[1] for l in lines)) == 1
    end

    @testset "two ranks under dist-run" begin
        launcher = joinpath(BUILD, "tools", "dist-run", "dist-run")
        project = normpath(joinpath(@__DIR__, ".."))
        example = joinpath(project, "examples", "allreduce.jl")
        cmd = `$launcher -n 2 --timeout 300 -- $(Base.julia_cmd()) --project=$project $example`
        output = read(cmd, String)
        @test occursin("rank 0 of 2", output) && occursin("rank 1 of 2", output)
        @test count("identical on all ranks, correct", output) == 2
        @test count("path shared_memory; all_reduce of 8 B: shm_direct, of 64 MiB: shm_split", output) == 2
        for r in 0:1
            @test occursin("rank $r: local rank $r of 2 on 1 host(s); host communicator rank $r of 2, " *
                           "path shared_memory, all_reduce 3", output)
        end
    end
end
