package org.libdistribute;

import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.StringArray;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * dist_cluster_options_t as a builder: every setter sets its field and mask bit;
 * unset fields take the library's documented defaults.
 */
public final class ClusterOptions {
  static final long RESOLVER = 1L;
  static final long TASK_TYPE = 1L << 1;
  static final long TASK_ID = 1L << 2;
  static final long RPC_LAYER = 1L << 3;
  static final long ENVIRONMENT = 1L << 4;
  static final long CLUSTER_SPEC = 1L << 5;
  static final long MASTER = 1L << 6;
  static final long JOBS = 1L << 7;
  static final long PORT_BASE = 1L << 8;
  static final long TASKS_PER_NODE = 1L << 9;
  static final long GPUS_PER_NODE = 1L << 10;
  static final long GPUS_PER_TASK = 1L << 11;
  static final long AUTO_SET_GPU = 1L << 12;
  static final long MEMBERS = 1L << 13;
  static final long ENV = 1L << 14;
  static final long NUM_GPUS = 1L << 15;

  private final DistLibrary.ClusterOptionsStruct s = new DistLibrary.ClusterOptionsStruct();
  private Map<String, Integer> jobs;
  private List<Cluster> members;
  private List<String> env;

  private ClusterOptions set(long bit) {
    s.field_mask |= bit;
    return this;
  }

  /** One of {@link Resolver}. */
  public ClusterOptions resolver(int kind) {
    s.resolver = kind;
    return set(RESOLVER);
  }

  public ClusterOptions taskType(String v) {
    s.task_type = v;
    return set(TASK_TYPE);
  }

  public ClusterOptions taskId(int v) {
    s.task_id = v;
    return set(TASK_ID);
  }

  public ClusterOptions rpcLayer(String v) {
    s.rpc_layer = v;
    return set(RPC_LAYER);
  }

  public ClusterOptions environment(String v) {
    s.environment = v;
    return set(ENVIRONMENT);
  }

  /** SIMPLE: {"worker": ["h:p", ...], ...}. */
  public ClusterOptions clusterSpecJson(String v) {
    s.cluster_spec_json = v;
    return set(CLUSTER_SPEC);
  }

  public ClusterOptions master(String v) {
    s.master = v;
    return set(MASTER);
  }

  /** SLURM, MPI, TORCHRUN: how the ranks split into jobs ({ps: 1, worker: 3}). */
  public ClusterOptions jobs(Map<String, Integer> v) {
    jobs = new LinkedHashMap<>(v);
    return set(JOBS);
  }

  public ClusterOptions portBase(int v) {
    s.port_base = v;
    return set(PORT_BASE);
  }

  public ClusterOptions tasksPerNode(int v) {
    s.tasks_per_node = v;
    return set(TASKS_PER_NODE);
  }

  public ClusterOptions gpusPerNode(int v) {
    s.gpus_per_node = v;
    return set(GPUS_PER_NODE);
  }

  public ClusterOptions gpusPerTask(int v) {
    s.gpus_per_task = v;
    return set(GPUS_PER_TASK);
  }

  public ClusterOptions autoSetGpu(boolean v) {
    s.auto_set_gpu = v ? 1 : 0;
    return set(AUTO_SET_GPU);
  }

  /** UNION: the clusters to merge, in priority order. */
  public ClusterOptions members(List<Cluster> v) {
    members = List.copyOf(v);
    return set(MEMBERS);
  }

  /** "NAME=value" strings read instead of the process environment. */
  public ClusterOptions env(List<String> v) {
    env = List.copyOf(v);
    return set(ENV);
  }

  public ClusterOptions numGpus(int v) {
    s.num_gpus = v;
    return set(NUM_GPUS);
  }

  /** The struct, with its arrays in native memory the struct keeps reachable. */
  DistLibrary.ClusterOptionsStruct toStruct() {
    if (jobs != null) {
      s.job_names = new StringArray(jobs.keySet().toArray(new String[0]));
      Memory counts = new Memory(4L * Math.max(1, jobs.size()));
      int i = 0;
      for (int count : jobs.values()) {
        counts.setInt(4L * i++, count);
      }
      s.job_counts = counts;
      s.num_jobs = new DistLibrary.SizeT(jobs.size());
    }
    if (members != null) {
      Memory handles = new Memory((long) Native.POINTER_SIZE * Math.max(1, members.size()));
      for (int i = 0; i < members.size(); i++) {
        handles.setPointer((long) Native.POINTER_SIZE * i, members.get(i).pointer());
      }
      s.members = handles;
      s.num_members = new DistLibrary.SizeT(members.size());
    }
    if (env != null) {
      s.env = new StringArray(env.toArray(new String[0])); // NULL-terminated
    }
    return s;
  }
}
