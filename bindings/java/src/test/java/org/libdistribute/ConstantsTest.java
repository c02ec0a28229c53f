package org.libdistribute;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.nio.file.Files;
import java.util.HashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.Test;

/** Every Java constant that mirrors a #define has the header's value. */
public class ConstantsTest {
  private static Map<String, Long> header() throws Exception {
    String text = Files.readString(Fixtures.repo().resolve("include/c_api.h"));
    Matcher m = Pattern.compile(
        "(?m)^#define\\s+(DIST_\\w+)\\s+\\(?(0x[0-9A-Fa-f]+|-?\\d+)(?:ull|u)?(?:\\s*<<\\s*(\\d+)\\))?").matcher(text);
    Map<String, Long> values = new HashMap<>();
    while (m.find()) {
      String literal = m.group(2);
      long v = literal.startsWith("0x") ? Long.parseLong(literal.substring(2), 16) : Long.parseLong(literal);
      values.put(m.group(1), m.group(3) == null ? v : v << Integer.parseInt(m.group(3)));
    }
    return values;
  }

  @Test
  public void everyMirroredConstantMatches() throws Exception {
    Map<String, Long> h = header();
    Map<String, Long> java = new HashMap<>();
    java.put("DIST_OK", (long) Status.OK);
    java.put("DIST_ERR_INVALID_ARGUMENT", (long) Status.ERR_INVALID_ARGUMENT);
    java.put("DIST_ERR_UNSUPPORTED", (long) Status.ERR_UNSUPPORTED);
    java.put("DIST_ERR_NO_MEMORY", (long) Status.ERR_NO_MEMORY);
    java.put("DIST_ERR_SYSTEM", (long) Status.ERR_SYSTEM);
    java.put("DIST_ERR_PEER_FAILED", (long) Status.ERR_PEER_FAILED);
    java.put("DIST_ERR_TIMEOUT", (long) Status.ERR_TIMEOUT);
    java.put("DIST_ERR_MISMATCH", (long) Status.ERR_MISMATCH);
    java.put("DIST_ERR_AUTH", (long) Status.ERR_AUTH);
    java.put("DIST_ERR_UNAVAILABLE", (long) Status.ERR_UNAVAILABLE);
    java.put("DIST_ERR_ABORTED", (long) Status.ERR_ABORTED);
    java.put("DIST_ERR_INTERNAL", (long) Status.ERR_INTERNAL);
    java.put("DIST_FEATURE_UCX", (long) Distribute.FEATURE_UCX);
    java.put("DIST_FEATURE_CUDA", (long) Distribute.FEATURE_CUDA);
    java.put("DIST_FEATURE_NCCL", (long) Distribute.FEATURE_NCCL);
    java.put("DIST_FEATURE_HWLOC", (long) Distribute.FEATURE_HWLOC);
    String[] resolvers = {"AUTO", "TF_CONFIG", "SIMPLE", "SLURM", "MPI", "TORCHRUN", "UNION"};
    int[] resolverValues = {Resolver.AUTO, Resolver.TF_CONFIG, Resolver.SIMPLE, Resolver.SLURM, Resolver.MPI,
        Resolver.TORCHRUN, Resolver.UNION};
    for (int i = 0; i < resolvers.length; i++) java.put("DIST_RESOLVER_" + resolvers[i], (long) resolverValues[i]);
    String[] opts = {"RESOLVER", "TASK_TYPE", "TASK_ID", "RPC_LAYER", "ENVIRONMENT", "CLUSTER_SPEC", "MASTER", "JOBS",
        "PORT_BASE", "TASKS_PER_NODE", "GPUS_PER_NODE", "GPUS_PER_TASK", "AUTO_SET_GPU", "MEMBERS", "ENV", "NUM_GPUS"};
    long[] optValues = {ClusterOptions.RESOLVER, ClusterOptions.TASK_TYPE, ClusterOptions.TASK_ID,
        ClusterOptions.RPC_LAYER, ClusterOptions.ENVIRONMENT, ClusterOptions.CLUSTER_SPEC, ClusterOptions.MASTER,
        ClusterOptions.JOBS, ClusterOptions.PORT_BASE, ClusterOptions.TASKS_PER_NODE, ClusterOptions.GPUS_PER_NODE,
        ClusterOptions.GPUS_PER_TASK, ClusterOptions.AUTO_SET_GPU, ClusterOptions.MEMBERS, ClusterOptions.ENV,
        ClusterOptions.NUM_GPUS};
    for (int i = 0; i < opts.length; i++) java.put("DIST_CLUSTER_OPT_" + opts[i], optValues[i]);
    java.put("DIST_CONTEXT_OPT_TOKEN", Context.OPT_TOKEN);
    java.put("DIST_CONTEXT_OPT_TOKEN_FILE", Context.OPT_TOKEN_FILE);
    java.put("DIST_CONTEXT_OPT_CONNECT_TIMEOUT_MS", Context.OPT_CONNECT_TIMEOUT_MS);
    java.put("DIST_CONTEXT_OPT_TIMEOUT_MS", Context.OPT_TIMEOUT_MS);
    java.put("DIST_CONTEXT_OPT_TIMELINE", Context.OPT_TIMELINE);
    java.put("DIST_ANY_SOURCE", (long) Comm.ANY_SOURCE);
    java.put("DIST_TAG_MAX", (long) Comm.TAG_MAX);
    java.put("DIST_COMM_OPT_TIMEOUT_MS", Comm.OPT_TIMEOUT_MS);
    java.put("DIST_COMM_OPT_ALLREDUCE", Comm.OPT_ALLREDUCE);
    java.put("DIST_COMM_OPT_TIMING", Comm.OPT_TIMING);
    java.put("DIST_COMM_OPT_STALL_WARNING_MS", Comm.OPT_STALL_WARNING_MS);
    java.put("DIST_COMM_OPT_DETERMINISTIC", Comm.OPT_DETERMINISTIC);
    java.put("DIST_ALLREDUCE_AUTO", (long) Comm.ALLREDUCE_AUTO);
    java.put("DIST_ALLREDUCE_RING", (long) Comm.ALLREDUCE_RING);
    java.put("DIST_ALLREDUCE_RABENSEIFNER", (long) Comm.ALLREDUCE_RABENSEIFNER);
    java.put("DIST_ALLREDUCE_RECURSIVE_DOUBLING", (long) Comm.ALLREDUCE_RECURSIVE_DOUBLING);
    java.put("DIST_ALLREDUCE_SHARED_MEMORY", (long) Comm.ALLREDUCE_SHARED_MEMORY);
    java.put("DIST_ALLREDUCE_HIERARCHICAL", (long) Comm.ALLREDUCE_HIERARCHICAL);
    for (CommPath p : CommPath.values()) java.put("DIST_COMM_PATH_" + p.name(), (long) p.value);
    for (Collective c : Collective.values()) java.put("DIST_COLLECTIVE_" + c.name(), (long) c.value);
    for (DType d : DType.values()) java.put("DIST_DTYPE_" + d.name(), (long) d.value);
    for (Op o : Op.values()) java.put("DIST_OP_" + o.name(), (long) o.value);
    String[] kinds = {"ONE_DEVICE", "MIRRORED", "MULTI_WORKER_MIRRORED", "CENTRAL_STORAGE", "PARAMETER_SERVER"};
    int[] kindValues = {Strategy.ONE_DEVICE, Strategy.MIRRORED, Strategy.MULTI_WORKER_MIRRORED, Strategy.CENTRAL_STORAGE,
        Strategy.PARAMETER_SERVER};
    for (int i = 0; i < kinds.length; i++) java.put("DIST_STRATEGY_" + kinds[i], (long) kindValues[i]);
    java.put("DIST_COMMUNICATION_AUTO", (long) Strategy.COMMUNICATION_AUTO);
    java.put("DIST_COMMUNICATION_RING", (long) Strategy.COMMUNICATION_RING);
    java.put("DIST_COMMUNICATION_NCCL", (long) Strategy.COMMUNICATION_NCCL);
    java.put("DIST_STRATEGY_OPT_KIND", Strategy.OPT_KIND);
    java.put("DIST_STRATEGY_OPT_NUM_CPU_DEVICES", Strategy.OPT_NUM_CPU_DEVICES);
    java.put("DIST_STRATEGY_OPT_COMMUNICATION", Strategy.OPT_COMMUNICATION);
    java.put("DIST_STRATEGY_OPT_BYTES_PER_PACK", Strategy.OPT_BYTES_PER_PACK);
    java.put("DIST_STRATEGY_OPT_TIMEOUT_SECONDS", Strategy.OPT_TIMEOUT_SECONDS);
    java.put("DIST_STRATEGY_OPT_BIND_THREADS", Strategy.OPT_BIND_THREADS);
    java.put("DIST_STRATEGY_OPT_CLUSTER", Strategy.OPT_CLUSTER);
    java.put("DIST_STRATEGY_OPT_TOKEN", Strategy.OPT_TOKEN);
    java.put("DIST_STRATEGY_OPT_TOKEN_FILE", Strategy.OPT_TOKEN_FILE);
    java.put("DIST_STRATEGY_OPT_PLACEMENT", Strategy.OPT_PLACEMENT);
    java.put("DIST_STRATEGY_OPT_CROSS_DEVICE_OPS", Strategy.OPT_CROSS_DEVICE_OPS);
    java.put("DIST_STRATEGY_OPT_REDUCE_TO_DEVICE", Strategy.OPT_REDUCE_TO_DEVICE);
    java.put("DIST_STRATEGY_OPT_NUM_PACKS", Strategy.OPT_NUM_PACKS);
    String[] crossDeviceOps = {"AUTO", "NCCL_ALL_REDUCE", "HIERARCHICAL_COPY", "REDUCTION_TO_ONE_DEVICE"};
    int[] crossDeviceOpsValues = {Strategy.CROSS_DEVICE_OPS_AUTO, Strategy.CROSS_DEVICE_OPS_NCCL_ALL_REDUCE,
        Strategy.CROSS_DEVICE_OPS_HIERARCHICAL_COPY, Strategy.CROSS_DEVICE_OPS_REDUCTION_TO_ONE_DEVICE};
    for (int i = 0; i < crossDeviceOps.length; i++) {
      java.put("DIST_CROSS_DEVICE_OPS_" + crossDeviceOps[i], (long) crossDeviceOpsValues[i]);
    }
    java.put("DIST_PLACEMENT_ROUND_ROBIN", (long) Strategy.PLACEMENT_ROUND_ROBIN);
    java.put("DIST_PLACEMENT_GREEDY_BYTES", (long) Strategy.PLACEMENT_GREEDY_BYTES);
    java.put("DIST_AXIS_NONE", (long) Strategy.AXIS_NONE);
    java.put("DIST_SYNC_AUTO", (long) Variable.SYNC_AUTO);
    java.put("DIST_SYNC_ON_WRITE", (long) Variable.SYNC_ON_WRITE);
    java.put("DIST_SYNC_ON_READ", (long) Variable.SYNC_ON_READ);
    java.put("DIST_SYNC_NONE", (long) Variable.SYNC_NONE);
    java.put("DIST_AGGREGATION_NONE", (long) Variable.AGGREGATION_NONE);
    java.put("DIST_AGGREGATION_SUM", (long) Variable.AGGREGATION_SUM);
    java.put("DIST_AGGREGATION_MEAN", (long) Variable.AGGREGATION_MEAN);
    java.put("DIST_AGGREGATION_ONLY_FIRST_REPLICA", (long) Variable.AGGREGATION_ONLY_FIRST_REPLICA);
    java.put("DIST_VARIABLE_OPT_NAME", Variable.OPT_NAME);
    java.put("DIST_VARIABLE_OPT_DTYPE", Variable.OPT_DTYPE);
    java.put("DIST_VARIABLE_OPT_SHAPE", Variable.OPT_SHAPE);
    java.put("DIST_VARIABLE_OPT_INITIAL_VALUE", Variable.OPT_INITIAL_VALUE);
    java.put("DIST_VARIABLE_OPT_SYNCHRONIZATION", Variable.OPT_SYNCHRONIZATION);
    java.put("DIST_VARIABLE_OPT_AGGREGATION", Variable.OPT_AGGREGATION);
    String[] psVariableOpts = {"OPTIMIZER", "NUM_SHARDS", "MAX_SHARD_BYTES", "MIN_SHARD_BYTES", "MAX_SHARDS",
        "COLOCATE_WITH", "SYNC_GRADIENTS", "REPLICAS_TO_AGGREGATE", "MAX_STALENESS"};
    long[] psVariableOptValues = {Variable.OPT_OPTIMIZER, Variable.OPT_NUM_SHARDS, Variable.OPT_MAX_SHARD_BYTES,
        Variable.OPT_MIN_SHARD_BYTES, Variable.OPT_MAX_SHARDS, Variable.OPT_COLOCATE_WITH, Variable.OPT_SYNC_GRADIENTS,
        Variable.OPT_REPLICAS_TO_AGGREGATE, Variable.OPT_MAX_STALENESS};
    for (int i = 0; i < psVariableOpts.length; i++) {
      java.put("DIST_VARIABLE_OPT_" + psVariableOpts[i], psVariableOptValues[i]);
    }
    java.put("DIST_MAX_RANK", (long) Variable.MAX_RANK);
    java.put("DIST_OPTIMIZER_SGD", (long) Optimizer.SGD);
    java.put("DIST_OPTIMIZER_MOMENTUM", (long) Optimizer.MOMENTUM);
    java.put("DIST_OPTIMIZER_ADAM", (long) Optimizer.ADAM);
    java.put("DIST_OPTIMIZER_ADAGRAD", (long) Optimizer.ADAGRAD);
    java.put("DIST_OPTIMIZER_OPT_KIND", Optimizer.OPT_KIND);
    java.put("DIST_OPTIMIZER_OPT_LEARNING_RATE", Optimizer.OPT_LEARNING_RATE);
    java.put("DIST_OPTIMIZER_OPT_MOMENTUM", Optimizer.OPT_MOMENTUM);
    java.put("DIST_OPTIMIZER_OPT_NESTEROV", Optimizer.OPT_NESTEROV);
    java.put("DIST_OPTIMIZER_OPT_BETA_1", Optimizer.OPT_BETA_1);
    java.put("DIST_OPTIMIZER_OPT_BETA_2", Optimizer.OPT_BETA_2);
    java.put("DIST_OPTIMIZER_OPT_EPSILON", Optimizer.OPT_EPSILON);
    java.put("DIST_OPTIMIZER_OPT_INITIAL_ACCUMULATOR_VALUE", Optimizer.OPT_INITIAL_ACCUMULATOR_VALUE);
    String[] serverOpts = {"ADDRESS", "TOKEN", "TOKEN_FILE", "CHECKPOINT_DIR", "IO_TIMEOUT_MS", "LOG"};
    long[] serverOptValues = {Server.OPT_ADDRESS, Server.OPT_TOKEN, Server.OPT_TOKEN_FILE, Server.OPT_CHECKPOINT_DIR,
        Server.OPT_IO_TIMEOUT_MS, Server.OPT_LOG};
    for (int i = 0; i < serverOpts.length; i++) java.put("DIST_SERVER_OPT_" + serverOpts[i], serverOptValues[i]);
    java.put("DIST_CHECKPOINT_OPT_TOKEN", Checkpoints.OPT_TOKEN);
    java.put("DIST_CHECKPOINT_OPT_TOKEN_FILE", Checkpoints.OPT_TOKEN_FILE);
    java.put("DIST_CHECKPOINT_OPT_TIMEOUT_MS", Checkpoints.OPT_TIMEOUT_MS);
    assertTrue("header parse found " + h.size(), h.size() > 60);
    for (Map.Entry<String, Long> e : java.entrySet()) {
      assertEquals(e.getKey(), h.get(e.getKey()), e.getValue());
    }
    // Every value of the header's enumerations has its Java counterpart.
    for (String name : h.keySet()) {
      if (name.matches("DIST_(ERR|RESOLVER|ALLREDUCE|COMM_PATH|COLLECTIVE|DTYPE|OP|STRATEGY|COMMUNICATION|SYNC|AGGREGATION"
          + "|VARIABLE_OPT|OPTIMIZER|SERVER_OPT|CHECKPOINT_OPT|PLACEMENT|CROSS_DEVICE_OPS)_\\w+")) {
        assertTrue(name + " has no Java counterpart", java.containsKey(name));
      }
    }
  }
}
