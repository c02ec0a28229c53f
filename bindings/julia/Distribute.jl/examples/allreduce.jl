# Data-parallel training in miniature: every rank computes a gradient from its own
# data, all-reduces it to the mean and applies it to its copy of the weights. The
# copies must stay bit-identical on every rank and match the closed-form result.
#
#     dist-run -n 2 -- julia --project=bindings/julia/Distribute.jl bindings/julia/Distribute.jl/examples/allreduce.jl
#
# (strategy_training.jl does the same with a strategy, a mirrored variable and
# apply_gradients!.)
using Distribute
using Printf

const STEPS = 5
const SIZE = 4096
const LEARNING_RATE = 0.5f0

# This rank's data: what it alone would fit the weights to.
local_target(rank, i) = Float32(rank + 1) * Float32((i - 1) % 10)

function train(world, rank)
    weights = zeros(Float32, SIZE)
    for _ in 1:STEPS
        gradient = Float32[weights[i] - local_target(rank, i) for i in 1:SIZE]
        all_reduce!(world, gradient; op = MEAN)
        weights .-= LEARNING_RATE .* gradient
    end
    return weights
end

# The same steps on the mean target, without communication.
function expected_weight(ranks, i)
    mean = sum(Float64(local_target(r, i)) for r in 0:(ranks - 1)) / ranks
    w = 0.0
    for _ in 1:STEPS
        w -= LEARNING_RATE * (w - mean)
    end
    return w
end

function main()
    cluster = resolve_cluster()
    context = Context(cluster)
    w = world(context)
    r, n = rank(w), nranks(w)
    weights = train(w, r)
    everyone = all_gather!(w, zeros(Float32, n * SIZE), weights)
    identical = all(reinterpret(UInt32, everyone[(k * SIZE + 1):((k + 1) * SIZE)]) == reinterpret(UInt32, weights)
                    for k in 0:(n - 1))
    correct = all(abs(weights[i] - expected_weight(n, i)) <= 1e-5 * (1 + abs(weights[i])) for i in 1:SIZE)
    @printf("rank %d of %d: %d steps, weights[7] = %.4f; %s, %s\n", r, n, STEPS, weights[8],
            identical ? "identical on all ranks" : "DIFFERENT across ranks", correct ? "correct" : "WRONG")
    # Ranks launched on one host share memory; the path and algorithms say so.
    @printf("rank %d: path %s; all_reduce of 8 B: %s, of 64 MiB: %s\n", r, comm_path(w),
            algorithm(w, :all_reduce, 8), algorithm(w, :all_reduce, 64 << 20))
    # All of them on this host: the host communicator holds every rank, in the same order.
    host = split_host(w)
    @printf("rank %d: local rank %d of %d on %d host(s); host communicator rank %d of %d, path %s, all_reduce %d\n",
            r, local_rank(w), local_size(w), num_hosts(w), rank(host), nranks(host), comm_path(host),
            all_reduce!(host, [Int64(r + 1)])[1])
    close(host)
    close(context)
    close(cluster)
    return identical && correct
end

exit(main() ? 0 : 1)
