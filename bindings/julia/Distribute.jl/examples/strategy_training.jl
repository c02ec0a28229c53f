# Data-parallel training with a MULTI_WORKER_MIRRORED strategy: two replicas per
# worker each compute a gradient from their own data; apply_gradients!
# mean-all-reduces them over every replica of every worker and applies them with
# SGD to every copy of the mirrored weights. Each rank prints a hash of its
# weights' bits, identical on every rank (the test compares them).
#
#     dist-run -n 2 -- julia --threads=1 --project=bindings/julia/Distribute.jl bindings/julia/Distribute.jl/examples/strategy_training.jl
using Distribute
using Printf

const STEPS = 5
const SIZE = 4096
const LEARNING_RATE = 0.5
const LOCAL_REPLICAS = 2

# Replica `id`'s data: what it alone would fit the weights to.
target(id, i) = Float32(id + 1) * Float32((i - 1) % 10)

# The same steps on the mean target, without communication.
function expected_weight(replicas, i)
    mean = sum(Float64(target(r, i)) for r in 0:(replicas - 1)) / replicas
    w = 0.0
    for _ in 1:STEPS
        w -= LEARNING_RATE * (w - mean)
    end
    return w
end

function main()
    cluster = resolve_cluster()
    context = Context(cluster)
    strategy = Strategy(context; kind = :multi_worker_mirrored, num_cpu_devices = LOCAL_REPLICAS)
    sgd = Optimizer(:sgd; learning_rate = LEARNING_RATE)
    weights = Variable(strategy, zeros(Float32, SIZE); name = "weights")
    for _ in 1:STEPS
        # d/dw of |w - target|^2 / 2 on each replica's data, on its own thread.
        grads = run_replicas(strategy) do replica
            read(weights; replica = replica) .- Float32[target(replica_id(replica), i) for i in 1:SIZE]
        end
        apply_gradients!(strategy, [weights], [[g] for g in grads], sgd)
    end
    value = read(weights)
    copies_equal = all(read_copy(weights, c) == value for c in 0:(num_copies(weights) - 1))
    replicas = num_replicas_in_sync(strategy)
    correct = all(abs(value[i] - expected_weight(replicas, i)) <= 1e-5 * (1 + abs(value[i])) for i in 1:SIZE)
    index, workers = worker_index(strategy)
    @printf("rank %d of %d: %d replicas in sync, %d steps, weights hash %s; %s, %s\n", index, workers, replicas,
            iterations(sgd), string(hash(reinterpret(UInt32, value)); base = 16),
            copies_equal ? "local copies identical" : "local copies DIFFER", correct ? "correct" : "WRONG")
    close(context)   # closes the strategy and the variable first
    close(sgd)
    close(cluster)
    return copies_equal && correct
end

exit(main() ? 0 : 1)
