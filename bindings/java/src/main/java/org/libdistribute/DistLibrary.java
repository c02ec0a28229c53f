package org.libdistribute;

import com.sun.jna.IntegerType;
import com.sun.jna.Library;
import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Pointer;
import com.sun.jna.Structure;
import com.sun.jna.ptr.IntByReference;
import com.sun.jna.ptr.PointerByReference;

/**
 * The C ABI of include/c_api.h, one method per function (JNA interface mapping).
 * The idiomatic classes of this package sit on top; to bind a new C function, add
 * its declaration here.
 */
interface DistLibrary extends Library {
  DistLibrary LIB = load();

  private static DistLibrary load() {
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

  @Structure.FieldOrder({"field_mask", "token", "token_file", "connect_timeout_ms", "timeout_ms"})
  class ContextOptionsStruct extends Structure {
    public long field_mask;
    public String token;
    public String token_file;
    public long connect_timeout_ms;
    public long timeout_ms;
  }

  @Structure.FieldOrder({"field_mask", "timeout_ms", "allreduce"})
  class CommOptionsStruct extends Structure {
    public long field_mask;
    public long timeout_ms;
    public int allreduce;
  }

  @Structure.FieldOrder({"data", "count", "dtype", "memory_kind", "stream"})
  class BufferStruct extends Structure {
    public Pointer data;
    public long count;
    public int dtype;
    public int memory_kind;
    public Pointer stream;
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
  void dist_context_destroy(Pointer context);
  int dist_context_rank(Pointer context, IntByReference rank);
  int dist_context_size(Pointer context, IntByReference size);
  int dist_context_abort(Pointer context, String reason);

  int dist_comm_world(Pointer context, PointerByReference comm);
  int dist_comm_split(Pointer comm, int color, int key, PointerByReference newComm);
  void dist_comm_destroy(Pointer comm);
  int dist_comm_rank(Pointer comm, IntByReference rank);
  int dist_comm_size(Pointer comm, IntByReference size);
  int dist_comm_configure(Pointer comm, CommOptionsStruct options);
  int dist_comm_path(Pointer comm, IntByReference path);
  int dist_comm_algorithm(Pointer comm, int collective, long bytes, PointerByReference name);

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
}
