# Input sharding: dist_input_context_t as InputContext (tf.distribute.InputContext).

"""
    InputContext(num_input_pipelines = 1, input_pipeline_id = 0, num_replicas_in_sync = 1)
    input_context(strategy)

How many input pipelines read data (one per worker), which one this is, and how a
global batch divides among replicas. Immutable: any thread.
"""
mutable struct InputContext
    ptr::Ptr{Cvoid}
    function InputContext(ptr::Ptr{Cvoid})
        input = new(ptr)
        finalizer(close, input)
        return input
    end
end

function InputContext(num_input_pipelines::Integer = 1, input_pipeline_id::Integer = 0,
                      num_replicas_in_sync::Integer = 1)
    out = Ref{Ptr{Cvoid}}(C_NULL)
    check(ccall((:dist_input_context_create, libdistribute), Int32, (Int32, Int32, Int32, Ptr{Ptr{Cvoid}}),
                num_input_pipelines, input_pipeline_id, num_replicas_in_sync, out))
    return InputContext(out[])
end

"The strategy's input context: one pipeline per worker, this worker's index."
function input_context(s::Strategy)
    out = Ref{Ptr{Cvoid}}(C_NULL)
    check(ccall((:dist_strategy_input_context, libdistribute), Int32, (Ptr{Cvoid}, Ptr{Ptr{Cvoid}}), s.ptr, out))
    return InputContext(out[])
end

function Base.close(input::InputContext)
    input.ptr == C_NULL && return nothing
    ccall((:dist_input_context_destroy, libdistribute), Cvoid, (Ptr{Cvoid},), input.ptr)
    input.ptr = C_NULL
    return nothing
end

num_input_pipelines(input::InputContext) = int_out(out -> ccall((:dist_input_context_num_input_pipelines,
                                                                  libdistribute), Int32, (Ptr{Cvoid}, Ptr{Int32}),
                                                                 input.ptr, out))
input_pipeline_id(input::InputContext) = int_out(out -> ccall((:dist_input_context_input_pipeline_id, libdistribute),
                                                               Int32, (Ptr{Cvoid}, Ptr{Int32}), input.ptr, out))
num_replicas_in_sync(input::InputContext) = int_out(out -> ccall((:dist_input_context_num_replicas_in_sync,
                                                                   libdistribute), Int32, (Ptr{Cvoid}, Ptr{Int32}),
                                                                  input.ptr, out))

"global_batch_size ÷ num_replicas_in_sync; a DistError when it does not divide."
function per_replica_batch_size(input::InputContext, global_batch_size::Integer)
    out = Ref{Int64}(0)
    check(ccall((:dist_input_context_per_replica_batch_size, libdistribute), Int32, (Ptr{Cvoid}, Int64, Ptr{Int64}),
                input.ptr, global_batch_size, out))
    return Int(out[])
end

"The (0-based, increasing) indices of the files this pipeline reads: file i goes to pipeline i % pipelines."
function shard_files(input::InputContext, num_files::Integer)
    pipelines = max(num_input_pipelines(input), 1)
    capacity = max(cld(num_files, pipelines), 0)
    indices = Vector{Int64}(undef, max(capacity, 1))
    count = Ref{Int64}(0)
    check(ccall((:dist_input_context_shard_files, libdistribute), Int32,
                (Ptr{Cvoid}, Int64, Ptr{Int64}, Int64, Ptr{Int64}), input.ptr, num_files, indices, capacity, count))
    return indices[1:count[]]
end

"This pipeline's contiguous part of the 0-based range 0:total-1 (empty when it gets nothing)."
function shard_range(input::InputContext, total::Integer)
    begin_, count = Ref{Int64}(0), Ref{Int64}(0)
    check(ccall((:dist_input_context_shard_range, libdistribute), Int32, (Ptr{Cvoid}, Int64, Ptr{Int64}, Ptr{Int64}),
                input.ptr, total, begin_, count))
    return begin_[]:begin_[] + count[] - 1
end
