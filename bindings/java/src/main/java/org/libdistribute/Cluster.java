package org.libdistribute;

import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.Pointer;
import com.sun.jna.ptr.PointerByReference;
import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
import java.util.ArrayList;
import java.util.List;

/**
 * The resolved view of a cluster (TensorFlow's cluster resolvers). Immutable: every
 * query may run concurrently from any thread. close() releases it (idempotent);
 * so does garbage collection.
 */
public final class Cluster implements AutoCloseable {
  private final Handle handle;
  private final Cleaner.Cleanable cleanable;

  private Cluster(Pointer pointer) {
    handle = new Handle(pointer, DistLibrary.LIB::dist_cluster_destroy, null, null);
    cleanable = handle.watch(this);
  }

  /** A cluster borrowed from `owner` (a strategy's context's): close() only detaches it. */
  Cluster(Pointer pointer, Handle owner) {
    handle = new Handle(pointer, Context::destroyNothing, owner, null);
    cleanable = handle.watch(this);
  }

  /** dist_cluster_resolve. */
  public static Cluster resolve(ClusterOptions options) {
    PointerByReference out = new PointerByReference();
    try {
      DistException.check(DistLibrary.LIB.dist_cluster_resolve(options.toStruct(), out));
    } finally {
      Reference.reachabilityFence(options); // its member clusters stay open for the call
    }
    return new Cluster(out.getValue());
  }

  /** Resolves from the environment: TF_CONFIG, Slurm, MPI or torchrun (AUTO). */
  public static Cluster fromEnvironment() {
    return resolve(new ClusterOptions());
  }

  /** A TF_CONFIG document given as a string (or toJson()'s output). */
  public static Cluster fromJson(String json) {
    PointerByReference out = new PointerByReference();
    DistException.check(DistLibrary.LIB.dist_cluster_from_json(json, out));
    return new Cluster(out.getValue());
  }

  Pointer pointer() {
    return handle.get();
  }

  @Override
  public void close() {
    cleanable.clean();
  }

  private String borrowed(int status, PointerByReference out) {
    DistException.check(status);
    return Strings.borrowed(out);
  }

  /** The resolver that produced this cluster, one of {@link Resolver}. */
  public int resolver() {
    return Queries.int32(out -> DistLibrary.LIB.dist_cluster_resolver(pointer(), out));
  }

  /** This task's type, or null if unknown. */
  public String taskType() {
    PointerByReference out = new PointerByReference();
    return borrowed(DistLibrary.LIB.dist_cluster_task_type(pointer(), out), out);
  }

  /** This task's index in its job, or -1 if unknown. */
  public int taskId() {
    return Queries.int32(out -> DistLibrary.LIB.dist_cluster_task_id(pointer(), out));
  }

  public String rpcLayer() {
    PointerByReference out = new PointerByReference();
    return borrowed(DistLibrary.LIB.dist_cluster_rpc_layer(pointer(), out), out);
  }

  public String environment() {
    PointerByReference out = new PointerByReference();
    return borrowed(DistLibrary.LIB.dist_cluster_environment(pointer(), out), out);
  }

  public String cudaVisibleDevices() {
    PointerByReference out = new PointerByReference();
    return borrowed(DistLibrary.LIB.dist_cluster_cuda_visible_devices(pointer(), out), out);
  }

  /** Job names, sorted. */
  public List<String> jobs() {
    Memory count = new Memory(Native.SIZE_T_SIZE);
    DistException.check(DistLibrary.LIB.dist_cluster_num_jobs(pointer(), count));
    long n = Native.SIZE_T_SIZE == 8 ? count.getLong(0) : count.getInt(0);
    List<String> jobs = new ArrayList<>();
    for (long i = 0; i < n; i++) {
      PointerByReference out = new PointerByReference();
      jobs.add(borrowed(DistLibrary.LIB.dist_cluster_job_name(pointer(), new DistLibrary.SizeT(i), out), out));
    }
    return jobs;
  }

  public int numTasks(String job) {
    return Queries.int32(out -> DistLibrary.LIB.dist_cluster_num_tasks(pointer(), job, out));
  }

  /** The task indices of a job, increasing (a sparse job skips some). */
  public int[] taskIndices(String job) {
    int[] indices = new int[numTasks(job)];
    for (int i = 0; i < indices.length; i++) {
      int position = i; // a lambda captures only effectively final locals
      indices[i] = Queries.int32(out -> DistLibrary.LIB.dist_cluster_task_index(pointer(), job, position, out));
    }
    return indices;
  }

  /** "host:port" of a task. */
  public String taskAddress(String job, int taskIndex) {
    PointerByReference out = new PointerByReference();
    return borrowed(DistLibrary.LIB.dist_cluster_task_address(pointer(), job, taskIndex, out), out);
  }

  /** TF's master(task_type, task_id, rpc_layer); null/-1/null ask about this task. */
  public String master(String taskType, int taskId, String rpcLayer) {
    PointerByReference out = new PointerByReference();
    DistException.check(DistLibrary.LIB.dist_cluster_master(pointer(), taskType, taskId, rpcLayer, out));
    return Strings.take(out);
  }

  public String master() {
    return master(null, -1, null);
  }

  /** Accelerators of a type (null means "GPU") available to this task. */
  public int numAccelerators(String deviceType) {
    return Queries.int32(out -> DistLibrary.LIB.dist_cluster_num_accelerators(pointer(), deviceType, out));
  }

  /** The whole resolved view as JSON (dist-info's format). */
  public String toJson() {
    PointerByReference out = new PointerByReference();
    DistException.check(DistLibrary.LIB.dist_cluster_to_json(pointer(), out));
    return Strings.take(out);
  }

  /** dist_resolver_name: null for a value that is not a resolver kind. */
  public static String resolverName(int kind) {
    return DistLibrary.LIB.dist_resolver_name(kind);
  }
}
