package org.libdistribute;

import com.sun.jna.Callback;
import com.sun.jna.IntegerType;
import com.sun.jna.Library;
import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Pointer;
import com.sun.jna.Structure;
import com.sun.jna.ptr.IntByReference;
import com.sun.jna.ptr.LongByReference;
import com.sun.jna.ptr.PointerByReference;

/**
 * The C ABI of include/c_api.h, one method per function (JNA interface mapping).
 * The idiomatic classes of this package sit on top; to bind a new C function, add
 * its declaration here.
 */
interface DistLibrary extends Library {
  DistLibrary LIB = load();

  /** The C library's setenv, to configure UCX before libdistribute starts it. */
  interface LibC extends Library {
    int setenv(String name, String value, int overwrite);
  }

  private static DistLibrary load() {
    // The JVM itself raises SIGSEGV (null checks, safepoint polls) and handles it;
    // UCX's error handler must not take that signal over, or a JVM thread running
    // Java code in a replica function can abort the process. A value the user set
    // is kept.
    Native.load("c", LibC.class).setenv("UCX_ERROR_SIGNALS", "", 0);
    String build = System.getenv("DIST_BUILD_DIR");
    if (build != null && !build.isEmpty()) {
      NativeLibrary.addSearchPath("distribute", build + "/src");
    }
    return Native.load("distribute", DistLibrary.class);
  }

  /** size_t. */
  final class SizeT extends IntegerType {
    private static final long serialVersionUID = 1L;

    public SizeT() {
      this(0);
    }

    public SizeT(long value) {
      super(Native.SIZE_T_SIZE, value, true);
    }
  }

  @Structure.FieldOrder({"field_mask", "resolver", "task_type", "task_id", "rpc_layer", "environment",
      "cluster_spec_json", "master", "job_names", "job_counts", "num_jobs", "port_base", "tasks_per_node",
      "gpus_per_node", "gpus_per_task", "auto_set_gpu", "members", "num_members", "env", "num_gpus"})
  class ClusterOptionsStruct extends Structure {
    public long field_mask;
    public int resolver;
    public String task_type;
    public int task_id;
    public String rpc_layer;
    public String environment;
    public String cluster_spec_json;
    public String master;
    public Pointer job_names;
    public Pointer job_counts;
    public SizeT num_jobs = new SizeT();
    public int port_base;
    public int tasks_per_node;
    public int gpus_per_node;
    public int gpus_per_task;
    public int auto_set_gpu;
    public Pointer members;
    public SizeT num_members = new SizeT();
    public Pointer env;
    public int num_gpus;
  }

  @Structure.FieldOrder({"field_mask", "token", "token_file", "connect_timeout_ms", "timeout_ms", "timeline"})
  class ContextOptionsStruct extends Structure {
    public long field_mask;
    public String token;
    public String token_file;
    public long connect_timeout_ms;
    public long timeout_ms;
    public String timeline;
  }

  /** dist_oob_t's all-gather: starts one and writes the request (a void*) at {@code request}. */
  interface OobAllgatherFn extends Callback {
    int invoke(Pointer userData, Pointer send, Pointer recv, SizeT bytes, Pointer request);
  }

  /** dist_oob_t's test: 0 complete, 1 in progress, negative failed. */
  interface OobTestFn extends Callback {
    int invoke(Pointer userData, Pointer request);
  }

  /** dist_oob_t's free. */
  interface OobFreeFn extends Callback {
    void invoke(Pointer userData, Pointer request);
  }

  @Structure.FieldOrder({"field_mask", "rank", "size", "allgather", "test", "free", "user_data"})
  class OobStruct extends Structure {
    public long field_mask;
    public int rank;
    public int size;
    public OobAllgatherFn allgather;
    public OobTestFn test;
    public OobFreeFn free;
    public Pointer user_data;
  }

  @Structure.FieldOrder({"field_mask", "timeout_ms", "allreduce", "timing", "stall_warning_ms", "deterministic"})
  class CommOptionsStruct extends Structure {
    public long field_mask;
    public long timeout_ms;
    public int allreduce;
    public int timing;
    public long stall_warning_ms;
    public int deterministic;
  }

  @Structure.FieldOrder({"collective", "path", "algorithm", "calls", "failed", "bytes", "timed_calls", "time_ns",
      "reserved"})
  class CommStatStruct extends Structure {
    public int collective;
    public int path;
    public Pointer algorithm; // static storage in the library
    public long calls;
    public long failed;
    public long bytes;
    public long timed_calls;
    public long time_ns;
    public long[] reserved = new long[4];
  }

  @Structure.FieldOrder({"data", "count", "dtype", "memory_kind", "stream"})
  class BufferStruct extends Structure {
    public Pointer data;
    public long count;
    public int dtype;
    public int memory_kind;
    public Pointer stream;
  }

  @Structure.FieldOrder({"field_mask", "kind", "num_cpu_devices", "communication", "bytes_per_pack",
      "timeout_seconds", "bind_threads", "cluster", "token", "token_file", "placement", "cross_device_ops",
      "reduce_to_device", "num_packs"})
  class StrategyOptionsStruct extends Structure {
    public long field_mask;
    public int kind;
    public int num_cpu_devices;
    public int communication;
    public long bytes_per_pack;
    public double timeout_seconds;
    public int bind_threads;
    public Pointer cluster;
    public String token;
    public String token_file;
    public int placement;
    public int cross_device_ops;
    public String reduce_to_device;
    public int num_packs;
  }

  @Structure.FieldOrder({"field_mask", "name", "dtype", "shape", "rank", "initial_value", "synchronization",
      "aggregation", "optimizer", "num_shards", "max_shard_bytes", "min_shard_bytes", "max_shards", "colocate_with",
      "sync_gradients", "replicas_to_aggregate", "max_staleness"})
  class VariableOptionsStruct extends Structure {
    public long field_mask;
    public String name;
    public int dtype;
    public Pointer shape;
    public int rank;
    public Pointer initial_value;
    public int synchronization;
    public int aggregation;
    public Pointer optimizer;
    public int num_shards;
    public long max_shard_bytes;
    public long min_shard_bytes;
    public int max_shards;
    public Pointer colocate_with;
    public int sync_gradients;
    public int replicas_to_aggregate;
    public int max_staleness;
  }

  @Structure.FieldOrder({"field_mask", "kind", "learning_rate", "momentum", "nesterov", "beta_1", "beta_2",
      "epsilon", "initial_accumulator_value"})
  class OptimizerOptionsStruct extends Structure {
    public long field_mask;
    public int kind;
    public double learning_rate;
    public double momentum;
    public int nesterov;
    public double beta_1;
    public double beta_2;
    public double epsilon;
    public double initial_accumulator_value;
  }

  /** dist_log_fn_t: called from the server's threads, possibly concurrently. */
  interface LogFn extends Callback {
    void invoke(String message, Pointer userData);
  }

  @Structure.FieldOrder({"field_mask", "address", "token", "token_file", "checkpoint_dir", "io_timeout_ms", "log",
      "log_user_data"})
  class ServerOptionsStruct extends Structure {
    public long field_mask;
    public String address;
    public String token;
    public String token_file;
    public String checkpoint_dir;
    public long io_timeout_ms;
    public LogFn log;
    public Pointer log_user_data;
  }

  @Structure.FieldOrder({"field_mask", "token", "token_file", "timeout_ms"})
  class CheckpointOptionsStruct extends Structure {
    public long field_mask;
    public String token;
    public String token_file;
    public long timeout_ms;
  }

  /**
   * dist_request_callback_t: runs once on the library thread that completed the request (JNA
   * attaches it to the JVM for the call); {@code message} is "" on success.
   */
  interface RequestCallback extends Callback {
    void invoke(Pointer userData, int status, String message);
  }

  /** dist_replica_fn_t: JNA attaches the library's replica thread to the JVM for the call. */
  interface ReplicaFn extends Callback {
    int invoke(Pointer replica, Pointer userData);
  }

  /** dist_merge_fn_t. */
  interface MergeFn extends Callback {
    int invoke(Pointer strategy, Pointer values, int numValues, Pointer userData);
  }

  String dist_status_string(int status);
  String dist_last_error();
  int dist_version();
  String dist_version_string();
  int dist_build_features();
  int dist_build_info(PointerByReference json);
  void dist_string_free(Pointer str);

  int dist_cluster_resolve(ClusterOptionsStruct options, PointerByReference cluster);
  int dist_cluster_from_json(String json, PointerByReference cluster);
  void dist_cluster_destroy(Pointer cluster);
  int dist_cluster_resolver(Pointer cluster, IntByReference kind);
  String dist_resolver_name(int kind);
  int dist_cluster_task_type(Pointer cluster, PointerByReference taskType);
  int dist_cluster_task_id(Pointer cluster, IntByReference taskId);
  int dist_cluster_rpc_layer(Pointer cluster, PointerByReference rpcLayer);
  int dist_cluster_environment(Pointer cluster, PointerByReference environment);
  int dist_cluster_num_jobs(Pointer cluster, Pointer numJobs);
  int dist_cluster_job_name(Pointer cluster, SizeT i, PointerByReference jobName);
  int dist_cluster_num_tasks(Pointer cluster, String job, IntByReference numTasks);
  int dist_cluster_task_index(Pointer cluster, String job, int i, IntByReference taskIndex);
  int dist_cluster_task_address(Pointer cluster, String job, int taskIndex, PointerByReference address);
  int dist_cluster_master(Pointer cluster, String taskType, int taskId, String rpcLayer, PointerByReference master);
  int dist_cluster_num_accelerators(Pointer cluster, String deviceType, IntByReference count);
  int dist_cluster_cuda_visible_devices(Pointer cluster, PointerByReference devices);
  int dist_cluster_to_json(Pointer cluster, PointerByReference json);

  int dist_context_create(Pointer cluster, ContextOptionsStruct options, PointerByReference context);
  int dist_context_create_oob(OobStruct oob, ContextOptionsStruct options, PointerByReference context);
  void dist_context_destroy(Pointer context);
  int dist_context_rank(Pointer context, IntByReference rank);
  int dist_context_size(Pointer context, IntByReference size);
  int dist_context_abort(Pointer context, String reason);
  /** json: a char* to free with dist_string_free (Strings.take). */
  int dist_context_dump(Pointer context, PointerByReference json);

  int dist_comm_world(Pointer context, PointerByReference comm);
  int dist_comm_split(Pointer comm, int color, int key, PointerByReference newComm);
  void dist_comm_destroy(Pointer comm);
  int dist_comm_rank(Pointer comm, IntByReference rank);
  int dist_comm_size(Pointer comm, IntByReference size);
  int dist_comm_configure(Pointer comm, CommOptionsStruct options);
  int dist_comm_path(Pointer comm, IntByReference path);
  int dist_comm_device_path(Pointer comm, IntByReference path);
  int dist_comm_local_rank(Pointer comm, IntByReference localRank);
  int dist_comm_local_size(Pointer comm, IntByReference localSize);
  int dist_comm_num_hosts(Pointer comm, IntByReference numHosts);
  int dist_comm_split_host(Pointer comm, PointerByReference hostComm);
  int dist_comm_algorithm(Pointer comm, int collective, long bytes, PointerByReference name);
  /** stats: the first of {@code capacity} contiguous rows (Structure.toArray), or null for 0. */
  int dist_comm_stats(Pointer comm, CommStatStruct stats, long capacity, LongByReference count);
  int dist_comm_stats_reset(Pointer comm);

  int dist_all_reduce(Pointer comm, BufferStruct send, BufferStruct recv, int op, PointerByReference request);
  int dist_reduce(Pointer comm, BufferStruct send, BufferStruct recv, int op, int root, PointerByReference request);
  int dist_broadcast(Pointer comm, BufferStruct buffer, int root, PointerByReference request);
  int dist_all_gather(Pointer comm, BufferStruct send, BufferStruct recv, PointerByReference request);
  int dist_reduce_scatter(Pointer comm, BufferStruct send, BufferStruct recv, int op, PointerByReference request);
  int dist_all_to_all(Pointer comm, BufferStruct send, BufferStruct recv, PointerByReference request);
  int dist_barrier(Pointer comm, PointerByReference request);

  int dist_request_test(Pointer request, IntByReference done);
  int dist_request_wait(Pointer request, long timeoutMs);
  void dist_request_free(Pointer request);
  int dist_request_source(Pointer request, IntByReference source);
  int dist_request_on_complete(Pointer request, RequestCallback callback, Pointer userData);

  /** The count and offset arrays are native memory ({@link Blocks}), so that a request can keep them. */
  int dist_all_to_all_v(Pointer comm, BufferStruct send, Pointer sendCounts, Pointer sendOffsets, BufferStruct recv,
      Pointer recvCounts, Pointer recvOffsets, PointerByReference request);
  int dist_send(Pointer comm, BufferStruct buffer, int peer, int tag, PointerByReference request);
  int dist_recv(Pointer comm, BufferStruct buffer, int peer, int tag, PointerByReference request);

  int dist_strategy_create(Pointer context, StrategyOptionsStruct options, PointerByReference strategy);
  void dist_strategy_destroy(Pointer strategy);
  int dist_strategy_kind(Pointer strategy, IntByReference kind);
  int dist_strategy_num_replicas_in_sync(Pointer strategy, IntByReference count);
  int dist_strategy_num_local_replicas(Pointer strategy, IntByReference count);
  int dist_strategy_device(Pointer strategy, int i, PointerByReference device);
  int dist_strategy_cross_device_ops(Pointer strategy, IntByReference ops);
  int dist_strategy_cluster(Pointer strategy, PointerByReference cluster);
  int dist_strategy_task_type(Pointer strategy, PointerByReference taskType);
  int dist_strategy_task_id(Pointer strategy, IntByReference taskId);
  int dist_strategy_worker_index(Pointer strategy, IntByReference index, IntByReference numWorkers);
  int dist_strategy_run(Pointer strategy, ReplicaFn fn, Pointer userData);
  int dist_replica_id(Pointer replica, IntByReference id);
  int dist_replica_num_replicas_in_sync(Pointer replica, IntByReference count);
  int dist_replica_local_index(Pointer replica, IntByReference index);
  int dist_replica_strategy(Pointer replica, PointerByReference strategy);
  int dist_replica_device(Pointer replica, IntByReference device);
  int dist_replica_stream(Pointer replica, PointerByReference stream);
  int dist_replica_all_reduce(Pointer replica, int op, BufferStruct buffer);
  int dist_replica_merge_call(Pointer replica, MergeFn fn, Pointer value, Pointer userData);
  int dist_replica_set_result(Pointer replica, BufferStruct value);
  int dist_strategy_local_results(Pointer strategy, PointerByReference results, IntByReference count);
  int dist_strategy_reduce(Pointer strategy, int op, BufferStruct[] values, int numValues, int axis,
      BufferStruct result);
  int dist_input_context_create(int numInputPipelines, int inputPipelineId, int numReplicasInSync,
      PointerByReference input);
  int dist_strategy_input_context(Pointer strategy, PointerByReference input);
  void dist_input_context_destroy(Pointer input);
  int dist_input_context_num_input_pipelines(Pointer input, IntByReference count);
  int dist_input_context_input_pipeline_id(Pointer input, IntByReference id);
  int dist_input_context_num_replicas_in_sync(Pointer input, IntByReference count);
  int dist_input_context_per_replica_batch_size(Pointer input, long globalBatchSize, LongByReference perReplica);
  int dist_input_context_shard_files(Pointer input, long numFiles, long[] indices, long capacity,
      LongByReference count);
  int dist_input_context_shard_range(Pointer input, long total, LongByReference begin, LongByReference count);
  int dist_strategy_split_batch(Pointer strategy, BufferStruct batch, long rows, BufferStruct[] perReplica,
      int numPerReplica);

  int dist_variable_create(Pointer strategy, VariableOptionsStruct options, PointerByReference variable);
  void dist_variable_destroy(Pointer variable);
  int dist_variable_name(Pointer variable, PointerByReference name);
  int dist_variable_dtype(Pointer variable, IntByReference dtype);
  int dist_variable_shape(Pointer variable, PointerByReference shape, IntByReference rank);
  int dist_variable_count(Pointer variable, LongByReference count);
  int dist_variable_synchronization(Pointer variable, IntByReference synchronization);
  int dist_variable_aggregation(Pointer variable, IntByReference aggregation);
  int dist_variable_read(Pointer variable, Pointer replica, BufferStruct out);
  int dist_variable_assign(Pointer variable, Pointer replica, BufferStruct value);
  int dist_variable_assign_add(Pointer variable, Pointer replica, BufferStruct value);
  int dist_variable_assign_sub(Pointer variable, Pointer replica, BufferStruct value);
  int dist_variable_apply_gradient(Pointer variable, Pointer replica, BufferStruct gradient);
  int dist_variable_read_rows(Pointer variable, Pointer replica, long[] rows, long count, BufferStruct out);
  int dist_variable_add_rows(Pointer variable, Pointer replica, long[] rows, long count, BufferStruct values);
  int dist_variable_apply_rows(Pointer variable, Pointer replica, long[] rows, long count, BufferStruct gradients);
  int dist_variable_num_shards(Pointer variable, IntByReference count);
  int dist_variable_shard(Pointer variable, int i, IntByReference server, LongByReference firstRow,
      LongByReference rows);
  int dist_variable_num_copies(Pointer variable, IntByReference count);
  int dist_variable_read_copy(Pointer variable, int i, BufferStruct out);

  int dist_optimizer_create(OptimizerOptionsStruct options, PointerByReference optimizer);
  void dist_optimizer_destroy(Pointer optimizer);
  int dist_optimizer_iterations(Pointer optimizer, LongByReference iterations);
  int dist_strategy_batch_all_reduce(Pointer strategy, int op, BufferStruct[] buffers, SizeT n);
  int dist_strategy_apply_gradients(Pointer strategy, Pointer[] vars, BufferStruct[] grads, SizeT n,
      Pointer optimizer);

  int dist_server_start(Pointer cluster, ServerOptionsStruct options, PointerByReference server);
  int dist_server_address(Pointer server, PointerByReference address);
  int dist_server_describe(Pointer server, PointerByReference json);
  int dist_server_join(Pointer server, long timeoutMs);
  int dist_server_stop(Pointer server);
  void dist_server_destroy(Pointer server);
  int dist_checkpoint_save(Pointer cluster, String root, long step, CheckpointOptionsStruct options,
      PointerByReference path);
  int dist_checkpoint_restore(Pointer cluster, String directory, CheckpointOptionsStruct options,
      PointerByReference path);
}
