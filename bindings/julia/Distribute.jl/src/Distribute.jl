"""
    Distribute

libdistribute from Julia: clusters (TensorFlow's cluster resolvers), contexts that
join them, communicators and collectives over `Array`s, strategies, distributed
variables and optimizers, in-process parameter servers and their checkpoints,
through the library's
stable C ABI (`ccall`; no compiled code).

```julia
using Distribute
cluster = resolve_cluster()              # TF_CONFIG, Slurm, MPI or torchrun
context = Context(cluster)               # waits for every member
g = ones(Float32, 1024)
all_reduce!(world(context), g; op=MEAN)
close(context); close(cluster)
```
"""
module Distribute

import Libdl

export DistError, Cluster, Context, Comm, Request, BF16
export resolve_cluster, cluster_from_json, task_type, task_id, rpc_layer, environment, jobs, num_tasks,
       task_indices, task_address, master, num_accelerators, cuda_visible_devices, to_json, resolver,
       resolver_name
export world, split_comm, rank, nranks, configure!, abort!, context_dump, comm_path, device_path, algorithm
export local_rank, local_size, num_hosts, split_host, CommStat, comm_stats, reset_comm_stats!
export all_reduce!, reduce!, bcast!, all_gather!, reduce_scatter!, all_to_all!, barrier, test, wait_for
export all_to_all_v!, send, recv!, source, on_complete, ANY_SOURCE, TAG_MAX
export version, version_string, build_features, build_info, status_string
export SUM, PROD, MIN, MAX, MEAN
export Strategy, ReplicaContext, Variable, Optimizer, InputContext
export kind, num_replicas_in_sync, num_local_replicas, devices, cross_device_ops, has_cluster, worker_index,
       run_replicas, replica_id, local_index, device, stream, strategy, merge_call, set_result!, local_results,
       split_batch, batch_all_reduce!, apply_gradients!, iterations, name, synchronization, aggregation,
       num_copies, read_copy, assign!, assign_add!, assign_sub!, input_context, num_input_pipelines,
       input_pipeline_id, per_replica_batch_size, shard_files, shard_range
export Server, address, server_description, join_server, stop, checkpoint_save, checkpoint_restore
export apply_gradient!, read_rows, add_rows!, apply_rows!, shards

"""
Where libdistribute is: `DIST_LIBRARY` (the .so itself), else `DIST_BUILD_DIR` or the
`build/` directory of this checkout, else an installed `libdistribute.so.0`. Fixed
when the package is (pre)compiled.
"""
const libdistribute = let
    explicit = get(ENV, "DIST_LIBRARY", "")
    build = get(ENV, "DIST_BUILD_DIR", joinpath(@__DIR__, "..", "..", "..", "..", "build"))
    in_build = joinpath(build, "src", "libdistribute.so")
    !isempty(explicit) ? explicit : isfile(in_build) ? abspath(in_build) : "libdistribute.so.0"
end

include("constants.jl")
include("errors.jl")
include("version.jl")
include("dtypes.jl")
include("cluster.jl")
include("context.jl")
include("exchange.jl")
include("comm.jl")
include("collectives.jl")
include("all_to_all_v.jl")
include("point_to_point.jl")
include("completion.jl")
include("strategy.jl")
include("input.jl")
include("variables.jl")
include("optimizer.jl")
include("server.jl")

end # module
