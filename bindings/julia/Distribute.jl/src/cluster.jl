"dist_cluster_options_t, field for field."
struct ClusterOptionsC
    field_mask::UInt64
    resolver::Int32
    task_type::Ptr{UInt8}
    task_id::Int32
    rpc_layer::Ptr{UInt8}
    environment::Ptr{UInt8}
    cluster_spec_json::Ptr{UInt8}
    master::Ptr{UInt8}
    job_names::Ptr{Ptr{UInt8}}
    job_counts::Ptr{Int32}
    num_jobs::Csize_t
    port_base::Int32
    tasks_per_node::Int32
    gpus_per_node::Int32
    gpus_per_task::Int32
    auto_set_gpu::Int32
    members::Ptr{Ptr{Cvoid}}
    num_members::Csize_t
    env::Ptr{Ptr{UInt8}}
    num_gpus::Int32
end

"""
    Cluster

The resolved view of a cluster. Immutable: queries may run concurrently from any
thread. `close(cluster)` releases it (idempotent); so does garbage collection.
"""
mutable struct Cluster
    ptr::Ptr{Cvoid}
    function Cluster(ptr::Ptr{Cvoid})
        c = new(ptr)
        finalizer(close, c)
        return c
    end
end

function Base.close(c::Cluster)
    if c.ptr != C_NULL
        ccall((:dist_cluster_destroy, libdistribute), Cvoid, (Ptr{Cvoid},), c.ptr)
        c.ptr = C_NULL
    end
    return nothing
end

cstr(s::Nothing) = C_NULL
cstr(s::String) = pointer(s)

"""
    resolve_cluster(resolver=:auto; task_type, task_id, rpc_layer, environment,
                    cluster_spec_json, master, jobs, port_base, tasks_per_node,
                    gpus_per_node, gpus_per_task, auto_set_gpu, members, env, num_gpus)

dist_cluster_resolve. `resolver` is :auto, :tf_config, :simple, :slurm, :mpi,
:torchrun or :union; `jobs` a vector of `name => count`; `members` a vector of
Clusters (:union); `env` a vector of "NAME=value" read instead of ENV. Keywords
left as `nothing` take the library's defaults.
"""
function resolve_cluster(resolver::Union{Symbol, Nothing} = nothing;
                         task_type = nothing, task_id = nothing, rpc_layer = nothing, environment = nothing,
                         cluster_spec_json = nothing, master = nothing, jobs = nothing, port_base = nothing,
                         tasks_per_node = nothing, gpus_per_node = nothing, gpus_per_task = nothing,
                         auto_set_gpu = nothing, members = nothing, env = nothing, num_gpus = nothing)
    mask = UInt64(0)
    bit(value, b) = (value === nothing || (mask |= b); value)
    i32(value) = value === nothing ? Int32(0) : Int32(value)
    bit(resolver, CLUSTER_OPT_RESOLVER)
    strings = map(x -> x === nothing ? nothing : String(x),
                  (bit(task_type, CLUSTER_OPT_TASK_TYPE), bit(rpc_layer, CLUSTER_OPT_RPC_LAYER),
                   bit(environment, CLUSTER_OPT_ENVIRONMENT), bit(cluster_spec_json, CLUSTER_OPT_CLUSTER_SPEC),
                   bit(master, CLUSTER_OPT_MASTER)))
    for (value, b) in ((task_id, CLUSTER_OPT_TASK_ID), (port_base, CLUSTER_OPT_PORT_BASE),
                       (tasks_per_node, CLUSTER_OPT_TASKS_PER_NODE), (gpus_per_node, CLUSTER_OPT_GPUS_PER_NODE),
                       (gpus_per_task, CLUSTER_OPT_GPUS_PER_TASK), (auto_set_gpu, CLUSTER_OPT_AUTO_SET_GPU),
                       (num_gpus, CLUSTER_OPT_NUM_GPUS))
        bit(value, b)
    end
    job_names = jobs === nothing ? String[] : [String(first(j)) for j in jobs]
    job_counts = jobs === nothing ? Int32[] : [Int32(last(j)) for j in jobs]
    bit(jobs, CLUSTER_OPT_JOBS)
    member_list = members === nothing ? Cluster[] : collect(Cluster, members)
    bit(members, CLUSTER_OPT_MEMBERS)
    env_list = env === nothing ? String[] : [String(e) for e in env]
    bit(env, CLUSTER_OPT_ENV)
    out = Ref{Ptr{Cvoid}}(C_NULL)
    GC.@preserve strings job_names job_counts member_list env_list begin
        name_ptrs = Ptr{UInt8}[pointer(n) for n in job_names]
        member_ptrs = Ptr{Cvoid}[m.ptr for m in member_list]
        env_ptrs = push!(Ptr{UInt8}[pointer(e) for e in env_list], C_NULL)  # NULL-terminated
        GC.@preserve name_ptrs member_ptrs env_ptrs begin
            options = ClusterOptionsC(
                mask, resolver === nothing ? Int32(0) : RESOLVERS[resolver],
                cstr(strings[1]), i32(task_id), cstr(strings[2]), cstr(strings[3]), cstr(strings[4]),
                cstr(strings[5]),
                jobs === nothing ? C_NULL : pointer(name_ptrs), jobs === nothing ? C_NULL : pointer(job_counts),
                Csize_t(length(job_names)), i32(port_base), i32(tasks_per_node), i32(gpus_per_node),
                i32(gpus_per_task), auto_set_gpu === nothing ? Int32(0) : Int32(auto_set_gpu ? 1 : 0),
                members === nothing ? C_NULL : pointer(member_ptrs), Csize_t(length(member_ptrs)),
                env === nothing ? C_NULL : pointer(env_ptrs), i32(num_gpus))
            check(ccall((:dist_cluster_resolve, libdistribute), Int32,
                        (Ref{ClusterOptionsC}, Ptr{Ptr{Cvoid}}), options, out))
        end
    end
    return Cluster(out[])
end

"dist_cluster_from_json: a TF_CONFIG document (or `to_json`'s output)."
function cluster_from_json(json::AbstractString)
    out = Ref{Ptr{Cvoid}}(C_NULL)
    check(ccall((:dist_cluster_from_json, libdistribute), Int32, (Cstring, Ptr{Ptr{Cvoid}}), json, out))
    return Cluster(out[])
end

"dist_resolver_name: `nothing` for a value that is not a resolver kind."
function resolver_name(kind::Integer)
    p = ccall((:dist_resolver_name, libdistribute), Ptr{UInt8}, (Int32,), kind)
    return borrowed(p)
end

"The resolver that produced the cluster, as a Symbol (:tf_config, :slurm, ...)."
function resolver(c::Cluster)
    out = Ref{Int32}(0)
    check(ccall((:dist_cluster_resolver, libdistribute), Int32, (Ptr{Cvoid}, Ptr{Int32}), c.ptr, out))
    return Symbol(resolver_name(out[]))
end

"This task's type (\"worker\", \"chief\", ...), or `nothing` if unknown."
function task_type(c::Cluster)
    out = Ref{Ptr{UInt8}}(C_NULL)
    check(ccall((:dist_cluster_task_type, libdistribute), Int32, (Ptr{Cvoid}, Ptr{Ptr{UInt8}}), c.ptr, out))
    return borrowed(out[])
end

"The rpc layer, or `nothing` if unset."
function rpc_layer(c::Cluster)
    out = Ref{Ptr{UInt8}}(C_NULL)
    check(ccall((:dist_cluster_rpc_layer, libdistribute), Int32, (Ptr{Cvoid}, Ptr{Ptr{UInt8}}), c.ptr, out))
    return borrowed(out[])
end

"The environment, or `nothing` if unset."
function environment(c::Cluster)
    out = Ref{Ptr{UInt8}}(C_NULL)
    check(ccall((:dist_cluster_environment, libdistribute), Int32, (Ptr{Cvoid}, Ptr{Ptr{UInt8}}), c.ptr, out))
    return borrowed(out[])
end

"The CUDA_VISIBLE_DEVICES this task should use, or `nothing`."
function cuda_visible_devices(c::Cluster)
    out = Ref{Ptr{UInt8}}(C_NULL)
    check(ccall((:dist_cluster_cuda_visible_devices, libdistribute), Int32, (Ptr{Cvoid}, Ptr{Ptr{UInt8}}), c.ptr, out))
    return borrowed(out[])
end

"This task's index in its job, or -1 if unknown."
function task_id(c::Cluster)
    out = Ref{Int32}(0)
    check(ccall((:dist_cluster_task_id, libdistribute), Int32, (Ptr{Cvoid}, Ptr{Int32}), c.ptr, out))
    return Int(out[])
end

"Job names, sorted."
function jobs(c::Cluster)
    n = Ref{Csize_t}(0)
    check(ccall((:dist_cluster_num_jobs, libdistribute), Int32, (Ptr{Cvoid}, Ptr{Csize_t}), c.ptr, n))
    names = String[]
    for i in 0:(Int(n[]) - 1)
        out = Ref{Ptr{UInt8}}(C_NULL)
        check(ccall((:dist_cluster_job_name, libdistribute), Int32, (Ptr{Cvoid}, Csize_t, Ptr{Ptr{UInt8}}),
                    c.ptr, i, out))
        push!(names, borrowed(out[]))
    end
    return names
end

function num_tasks(c::Cluster, job::AbstractString)
    out = Ref{Int32}(0)
    check(ccall((:dist_cluster_num_tasks, libdistribute), Int32, (Ptr{Cvoid}, Cstring, Ptr{Int32}), c.ptr, job, out))
    return Int(out[])
end

"The task indices of a job, increasing (a sparse job skips some)."
function task_indices(c::Cluster, job::AbstractString)
    map(0:(num_tasks(c, job) - 1)) do i
        out = Ref{Int32}(0)
        check(ccall((:dist_cluster_task_index, libdistribute), Int32, (Ptr{Cvoid}, Cstring, Int32, Ptr{Int32}),
                    c.ptr, job, i, out))
        Int(out[])
    end
end

"\"host:port\" of a task."
function task_address(c::Cluster, job::AbstractString, index::Integer)
    out = Ref{Ptr{UInt8}}(C_NULL)
    check(ccall((:dist_cluster_task_address, libdistribute), Int32, (Ptr{Cvoid}, Cstring, Int32, Ptr{Ptr{UInt8}}),
                c.ptr, job, index, out))
    return borrowed(out[])
end

"TF's master(task_type, task_id, rpc_layer); the defaults ask about this task."
function master(c::Cluster, task_type = nothing, task_id::Integer = -1, rpc_layer = nothing)
    out = Ref{Ptr{UInt8}}(C_NULL)
    t = task_type === nothing ? nothing : String(task_type)
    r = rpc_layer === nothing ? nothing : String(rpc_layer)
    GC.@preserve t r begin
        check(ccall((:dist_cluster_master, libdistribute), Int32,
                    (Ptr{Cvoid}, Ptr{UInt8}, Int32, Ptr{UInt8}, Ptr{Ptr{UInt8}}), c.ptr, cstr(t), task_id, cstr(r), out))
    end
    return take_string(out[])
end

"Accelerators of a device type (\"GPU\") available to this task."
function num_accelerators(c::Cluster, device_type::AbstractString = "GPU")
    out = Ref{Int32}(0)
    check(ccall((:dist_cluster_num_accelerators, libdistribute), Int32, (Ptr{Cvoid}, Cstring, Ptr{Int32}),
                c.ptr, device_type, out))
    return Int(out[])
end

"The whole resolved view as JSON (dist-info's format)."
function to_json(c::Cluster)
    out = Ref{Ptr{UInt8}}(C_NULL)
    check(ccall((:dist_cluster_to_json, libdistribute), Int32, (Ptr{Cvoid}, Ptr{Ptr{UInt8}}), c.ptr, out))
    return take_string(out[])
end
