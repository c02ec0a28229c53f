/* TensorFlow's own cluster resolver test cases, one row each, as the table
 * test_cluster_tf_cases.c runs through the C ABI and through `dist-info
 * cluster --json`. Each row names the TF test it mirrors (file and test
 * method; TF's tests assign task_type / rpc_layer on a live resolver, which
 * here is a second row with those values given as options). The cases that
 * cannot apply to a C library are listed, with the reason, in README.md
 * ("TensorFlow's resolver cases"). */
#ifndef DIST_TESTS_TF_CASES_CLUSTER_CASES_H
#define DIST_TESTS_TF_CASES_CLUSTER_CASES_H

#include <distribute/c_api.h>

enum { kMaxEnv = 7, kMaxMasters = 4, kMaxMembers = 2 };

/* master(type, id, rpc): NULL type / id / rpc are "not given". `expected`
 * starting with "error: " expects DIST_ERR_INVALID_ARGUMENT whose message
 * holds the rest. */
struct master_case {
  const char* type;
  const char* id;
  const char* rpc;
  const char* expected;
};

/* Integers are written as text so that a field left out means "not given". */
struct cluster_case {
  const char* name; /* "<TF test file>: <test method>[ (variant)]" */
  dist_resolver_kind_t resolver;
  /* Inputs: the environment (NAME=value) and the resolver's arguments. */
  const char* env[kMaxEnv + 1];
  const char* task_type;
  const char* task_id;
  const char* rpc_layer;
  const char* environment;
  const char* cluster_spec; /* SIMPLE */
  const char* master;       /* SIMPLE */
  const char* num_gpus;     /* SIMPLE's num_accelerators={"GPU": n} */
  const char* jobs;         /* SLURM: "ps=1,worker=2" */
  const char* port_base;
  const char* tasks_per_node;
  const char* gpus_per_node;
  const char* gpus_per_task;
  const char* auto_set_gpu;
  const char* members[kMaxMembers + 1]; /* UNION: names of earlier rows */
  /* Expected answers; NULL leaves one unchecked. */
  const char* error;       /* resolving fails with a message holding this */
  const char* cluster;     /* as dist_cluster_to_json writes "cluster" */
  const char* task;        /* "type:id", or "-" for none */
  const char* rpc;         /* "-" for none */
  const char* env_name;    /* the environment property; "-" for none */
  const char* accelerators; /* as dist_cluster_to_json writes "num_accelerators" */
  const char* cuda_visible_devices;
  struct master_case masters[kMaxMasters + 1];
  const char* spot[4]; /* job, index, address: one task of a large cluster */
  const char* num_tasks[2]; /* job, count */
};

#define PS_AND_WORKERS "\"cluster\": {\"ps\": [\"ps0:2222\", \"ps1:2222\"], " \
                       "\"worker\": [\"worker0:2222\", \"worker1:2222\", \"worker2:2222\"]}"
#define PS_AND_WORKERS_JSON "{\"ps\":[\"ps0:2222\",\"ps1:2222\"],\"worker\":[\"worker0:2222\",\"worker1:2222\",\"worker2:2222\"]}"
#define PS_AND_WORKERS_SPEC "{\"ps\": [\"ps0:2222\", \"ps1:2222\"], " \
                            "\"worker\": [\"worker0:2222\", \"worker1:2222\", \"worker2:2222\"]}"
#define TFC "tfconfig_cluster_resolver_test.py: "
#define SLC "slurm_cluster_resolver_test.py: "
#define CRT "cluster_resolver_test.py: "
#define THREE_NODES "SLURM_STEP_NODELIST=t02n13,t02n41,t02n43"

static const struct cluster_case kClusterCases[] = {
    /* ---- TFConfigClusterResolver ---------------------------------------------- */
    {.name = TFC "testNormalClusterSpecRead", .resolver = DIST_RESOLVER_TF_CONFIG,
     .env = {"TF_CONFIG={" PS_AND_WORKERS ", \"task\": {\"type\": \"ps\", \"index\": 0}}"},
     .cluster = PS_AND_WORKERS_JSON, .task = "ps:0"},
    {.name = TFC "testSparseClusterSpecRead", .resolver = DIST_RESOLVER_TF_CONFIG,
     .env = {"TF_CONFIG={\"cluster\": {\"ps\": [\"ps0:2222\", \"ps1:2222\"], \"worker\": {\"1\": \"worker1:2222\"}},"
             " \"task\": {\"type\": \"worker\", \"index\": 1}}"},
     .cluster = "{\"ps\":[\"ps0:2222\",\"ps1:2222\"],\"worker\":{\"1\":\"worker1:2222\"}}", .task = "worker:1",
     .num_tasks = {"worker", "1"}},
    {.name = TFC "testAutomaticMasterRead", .resolver = DIST_RESOLVER_TF_CONFIG,
     .env = {"TF_CONFIG={" PS_AND_WORKERS ", \"task\": {\"type\": \"ps\", \"index\": 0}}"},
     .masters = {{NULL, NULL, NULL, "ps0:2222"}}},
    {.name = TFC "testSpecifiedTaskTypeAndIndexMasterRead", .resolver = DIST_RESOLVER_TF_CONFIG,
     .env = {"TF_CONFIG={" PS_AND_WORKERS ", \"task\": {\"type\": \"ps\", \"index\": 0}}"},
     .masters = {{"worker", "1", NULL, "worker1:2222"}}},
    {.name = TFC "testSessionMasterRead", .resolver = DIST_RESOLVER_TF_CONFIG,
     .env = {"TF_CONFIG={" PS_AND_WORKERS ", \"session_master\": \"sessionmaster:2222\","
             " \"task\": {\"type\": \"ps\", \"index\": 0}}"},
     .task = "ps:0",
     .masters = {{NULL, NULL, NULL, "sessionmaster:2222"}, {"worker", "1", NULL, "sessionmaster:2222"}}},
    {.name = TFC "testRpcLayerRead", .resolver = DIST_RESOLVER_TF_CONFIG,
     .env = {"TF_CONFIG={" PS_AND_WORKERS ", \"rpc_layer\": \"grpc\", \"task\": {\"type\": \"ps\", \"index\": 0}}"},
     .masters = {{NULL, NULL, NULL, "grpc://ps0:2222"}}},
    {.name = TFC "testTaskTypeIndexRpcRead", .resolver = DIST_RESOLVER_TF_CONFIG,
     .env = {"TF_CONFIG={" PS_AND_WORKERS ", \"rpc_layer\": \"grpc\", \"task\": {\"type\": \"ps\", \"index\": 0}}"},
     .task = "ps:0", .rpc = "grpc"},
    {.name = TFC "testParameterOverrides", .resolver = DIST_RESOLVER_TF_CONFIG,
     .env = {"TF_CONFIG={" PS_AND_WORKERS ", \"rpc_layer\": \"grpc\", \"task\": {\"type\": \"ps\", \"index\": 1}}"},
     .task_type = "ps", .task_id = "0",
     .task = "ps:0", .masters = {{NULL, NULL, NULL, "grpc://ps0:2222"}}},
    {.name = TFC "testParameterOverrides (task_type, task_id and rpc_layer set)",
     .resolver = DIST_RESOLVER_TF_CONFIG,
     .env = {"TF_CONFIG={" PS_AND_WORKERS ", \"rpc_layer\": \"grpc\", \"task\": {\"type\": \"ps\", \"index\": 1}}"},
     .task_type = "worker", .task_id = "1", .rpc_layer = "test",
     .task = "worker:1", .rpc = "test", .masters = {{NULL, NULL, NULL, "test://worker1:2222"}}},
    {.name = TFC "testTaskTypeCastToString", .resolver = DIST_RESOLVER_TF_CONFIG,
     .env = {"TF_CONFIG={\"cluster\": {\"123456\": [\"ps0:2222\", \"ps1:2222\"],"
             " \"worker\": [\"worker0:2222\", \"worker1:2222\", \"worker2:2222\"]},"
             " \"rpc_layer\": \"grpc\", \"task\": {\"type\": 123456, \"index\": 0}}"},
     .task = "123456:0", .masters = {{NULL, NULL, NULL, "grpc://ps0:2222"}}},
    {.name = TFC "testTaskIndexCastToInteger", .resolver = DIST_RESOLVER_TF_CONFIG,
     .env = {"TF_CONFIG={" PS_AND_WORKERS ", \"rpc_layer\": \"grpc\", \"task\": {\"type\": \"ps\", \"index\": \"1\"}}"},
     .task = "ps:1"},
    {.name = TFC "testTaskIndexOverride", .resolver = DIST_RESOLVER_TF_CONFIG,
     .env = {"TF_CONFIG={\"cluster\": {\"worker\": [\"worker0:2222\", \"worker1:2222\"]},"
             " \"task\": {\"type\": \"worker\", \"index\": \"0\"}}"},
     .task_id = "1", .task = "worker:1"},
    {.name = TFC "testZeroItemsInClusterSpecMasterRead", .resolver = DIST_RESOLVER_TF_CONFIG,
     .env = {"TF_CONFIG=\n    {}\n    "},
     .cluster = "{}", .task = "-", .masters = {{NULL, NULL, NULL, ""}}},
    {.name = TFC "testOneItemInClusterSpecMasterRead", .resolver = DIST_RESOLVER_TF_CONFIG,
     .env = {"TF_CONFIG={\"cluster\": {\"worker\": [\"worker0:2222\"]}}"},
     .task = "-", .masters = {{NULL, NULL, NULL, ""}, {"worker", "0", NULL, ""}}},
    {.name = TFC "master() of several tasks and no task (TF raises)", .resolver = DIST_RESOLVER_TF_CONFIG,
     .env = {"TF_CONFIG={" PS_AND_WORKERS "}"},
     .task = "-",
     .masters = {{NULL, NULL, NULL, "error: no task type and id were given"}, {"ps", "1", NULL, "ps1:2222"}}},

    /* ---- SlurmClusterResolver ------------------------------------------------- */
    {.name = SLC "test_expand_tasks_per_node ('2')", .resolver = DIST_RESOLVER_SLURM,
     .env = {"SLURM_PROCID=0", "SLURM_STEP_NUM_TASKS=2", "SLURM_STEP_NODELIST=n1", "SLURM_STEP_TASKS_PER_NODE=2"},
     .gpus_per_node = "2", .cluster = "{\"worker\":[\"n1:8888\",\"n1:8889\"]}"},
    {.name = SLC "test_expand_tasks_per_node ('2,1,3')", .resolver = DIST_RESOLVER_SLURM,
     .env = {"SLURM_PROCID=5", "SLURM_STEP_NUM_TASKS=6", "SLURM_STEP_NODELIST=n[1-3]",
             "SLURM_STEP_TASKS_PER_NODE=2,1,3"},
     .gpus_per_node = "3",
     .cluster = "{\"worker\":[\"n1:8888\",\"n1:8889\",\"n2:8888\",\"n3:8888\",\"n3:8889\",\"n3:8890\"]}",
     .task = "worker:5", .cuda_visible_devices = "2", .accelerators = "{\"GPU\":1}"},
    {.name = SLC "test_expand_tasks_per_node ('3(x2),2,1')", .resolver = DIST_RESOLVER_SLURM,
     .env = {"SLURM_PROCID=0", "SLURM_STEP_NUM_TASKS=9", "SLURM_STEP_NODELIST=n[1-4]",
             "SLURM_STEP_TASKS_PER_NODE=3(x2),2,1"},
     .gpus_per_node = "3",
     .cluster = "{\"worker\":[\"n1:8888\",\"n1:8889\",\"n1:8890\",\"n2:8888\",\"n2:8889\",\"n2:8890\","
                "\"n3:8888\",\"n3:8889\",\"n4:8888\"]}"},
    {.name = SLC "test_expand_tasks_per_node ('3(x2),2,11(x4)')", .resolver = DIST_RESOLVER_SLURM,
     .env = {"SLURM_PROCID=51", "SLURM_STEP_NUM_TASKS=52", "SLURM_STEP_NODELIST=n[1-7]",
             "SLURM_STEP_TASKS_PER_NODE=3(x2),2,11(x4)"},
     .gpus_per_node = "11", .num_tasks = {"worker", "52"}, .spot = {"worker", "51", "n7:8898"},
     .task = "worker:51", .cuda_visible_devices = "10"},
    {.name = SLC "test_expand_tasks_per_node ('13(x10)')", .resolver = DIST_RESOLVER_SLURM,
     .env = {"SLURM_PROCID=0", "SLURM_STEP_NUM_TASKS=130", "SLURM_STEP_NODELIST=n[0-9]",
             "SLURM_STEP_TASKS_PER_NODE=13(x10)"},
     .gpus_per_node = "13", .num_tasks = {"worker", "130"}, .spot = {"worker", "129", "n9:8900"}},
    {.name = SLC "testSimpleRetrievalFromEnv", .resolver = DIST_RESOLVER_SLURM,
     .env = {"SLURM_PROCID=0", "SLURM_STEP_NUM_TASKS=3", "SLURM_STEP_TASKS_PER_NODE=1(x3)", THREE_NODES,
             "CUDA_VISIBLE_DEVICES=0"},
     .cluster = "{\"worker\":[\"t02n13:8888\",\"t02n41:8888\",\"t02n43:8888\"]}",
     .masters = {{"worker", "0", "grpc", "grpc://t02n13:8888"}}, .accelerators = "{\"GPU\":1}",
     .cuda_visible_devices = "0"},
    {.name = SLC "testSimpleSuccessfulRetrieval", .resolver = DIST_RESOLVER_SLURM,
     .env = {"SLURM_PROCID=0", "SLURM_STEP_NUM_TASKS=3", THREE_NODES},
     .jobs = "ps=1,worker=2", .port_base = "8888", .tasks_per_node = "1", .gpus_per_node = "1",
     .gpus_per_task = "1", .auto_set_gpu = "0",
     .cluster = "{\"ps\":[\"t02n13:8888\"],\"worker\":[\"t02n41:8888\",\"t02n43:8888\"]}", .task = "ps:0"},
    {.name = SLC "testSimpleMasterRetrieval", .resolver = DIST_RESOLVER_SLURM,
     .env = {"SLURM_PROCID=0", "SLURM_STEP_NUM_TASKS=3", THREE_NODES},
     .jobs = "ps=1,worker=2", .port_base = "8888", .tasks_per_node = "1", .gpus_per_node = "1",
     .gpus_per_task = "1", .auto_set_gpu = "0", .task_type = "worker", .task_id = "1",
     .rpc = "grpc", .masters = {{NULL, NULL, NULL, "grpc://t02n43:8888"}}},
    {.name = SLC "testSimpleMasterRetrieval (rpc_layer set to 'ab')", .resolver = DIST_RESOLVER_SLURM,
     .env = {"SLURM_PROCID=0", "SLURM_STEP_NUM_TASKS=3", THREE_NODES},
     .jobs = "ps=1,worker=2", .port_base = "8888", .tasks_per_node = "1", .gpus_per_node = "1",
     .gpus_per_task = "1", .auto_set_gpu = "0", .task_type = "worker", .task_id = "1", .rpc_layer = "ab",
     .masters = {{"ps", "0", NULL, "ab://t02n13:8888"}, {"ps", "0", "test", "test://t02n13:8888"}}},
    {.name = SLC "testTaskPerNodeNotSetRetrieval", .resolver = DIST_RESOLVER_SLURM,
     .env = {"SLURM_PROCID=0", "SLURM_STEP_NUM_TASKS=3", "SLURM_STEP_TASKS_PER_NODE=1(x3)", THREE_NODES},
     .jobs = "ps=1,worker=2", .port_base = "8888", .gpus_per_node = "1", .gpus_per_task = "1",
     .auto_set_gpu = "0",
     .cluster = "{\"ps\":[\"t02n13:8888\"],\"worker\":[\"t02n41:8888\",\"t02n43:8888\"]}"},
    {.name = SLC "testMultiTaskPerNodeRetrieval", .resolver = DIST_RESOLVER_SLURM,
     .env = {"SLURM_PROCID=1", "SLURM_STEP_NUM_TASKS=5", "SLURM_STEP_TASKS_PER_NODE=2(x2),1", THREE_NODES,
             "CUDA_VISIBLE_DEVICES="},
     .jobs = "ps=1,worker=4", .port_base = "8888", .gpus_per_node = "2", .gpus_per_task = "1",
     .auto_set_gpu = "1",
     .cluster = "{\"ps\":[\"t02n13:8888\"],\"worker\":[\"t02n13:8889\",\"t02n41:8888\",\"t02n41:8889\","
                "\"t02n43:8888\"]}",
     .task = "worker:0", .cuda_visible_devices = "1"},
    {.name = SLC "testMultipleGpusPerTaskRetrieval", .resolver = DIST_RESOLVER_SLURM,
     .env = {"SLURM_PROCID=1", "SLURM_STEP_NUM_TASKS=5", "SLURM_STEP_TASKS_PER_NODE=2(x2),1", THREE_NODES,
             "CUDA_VISIBLE_DEVICES="},
     .jobs = "ps=1,worker=4", .port_base = "8888", .gpus_per_node = "4", .gpus_per_task = "2",
     .auto_set_gpu = "1",
     .cluster = "{\"ps\":[\"t02n13:8888\"],\"worker\":[\"t02n13:8889\",\"t02n41:8888\",\"t02n41:8889\","
                "\"t02n43:8888\"]}",
     .cuda_visible_devices = "2,3", .accelerators = "{\"GPU\":2}"},
    {.name = SLC "node order (TF sorts the nodes by name, each keeping its task count)",
     .resolver = DIST_RESOLVER_SLURM,
     .env = {"SLURM_PROCID=2", "SLURM_STEP_NUM_TASKS=4", "SLURM_STEP_NODELIST=n9,n10,a1",
             "SLURM_STEP_TASKS_PER_NODE=2,1,1", "CUDA_VISIBLE_DEVICES=0,1"},
     .cluster = "{\"worker\":[\"a1:8888\",\"n10:8888\",\"n9:8888\",\"n9:8889\"]}", .task = "worker:2",
     .cuda_visible_devices = "0", .accelerators = "{\"GPU\":1}", .rpc = "grpc"},

    {.name = SLC "testSimpleSuccessfulRetrieval (no SLURM_STEP_NUM_TASKS: TF reads it for default jobs only)",
     .resolver = DIST_RESOLVER_SLURM, .env = {"SLURM_PROCID=2", THREE_NODES},
     .jobs = "ps=1,worker=2", .tasks_per_node = "1", .gpus_per_node = "1", .gpus_per_task = "1",
     .auto_set_gpu = "0",
     .cluster = "{\"ps\":[\"t02n13:8888\"],\"worker\":[\"t02n41:8888\",\"t02n43:8888\"]}", .task = "worker:1"},

    /* ---- Where TF's answer is an accident of Python (README.md says why) --------- */
    {.name = "libdistribute: CUDA_VISIBLE_DEVICES=\"\" is no GPU (TF counts one)", .resolver = DIST_RESOLVER_SLURM,
     .env = {"SLURM_PROCID=1", "SLURM_STEP_NUM_TASKS=2", "SLURM_STEP_NODELIST=n1", "SLURM_STEP_TASKS_PER_NODE=2",
             "CUDA_VISIBLE_DEVICES="},
     .accelerators = "{\"GPU\":0}", .cuda_visible_devices = ""},
    {.name = "libdistribute: CUDA_VISIBLE_DEVICES lists the job's GPUs: a task gets its share of them (TF: 2,3)",
     .resolver = DIST_RESOLVER_SLURM,
     .env = {"SLURM_PROCID=1", "SLURM_STEP_NUM_TASKS=2", "SLURM_STEP_NODELIST=n1", "SLURM_STEP_TASKS_PER_NODE=2",
             "CUDA_VISIBLE_DEVICES=4,5,6,7"},
     .accelerators = "{\"GPU\":2}", .cuda_visible_devices = "6,7"},
    {.name = "libdistribute: SLURMD_NODENAME contradicts TF's sorted node order", .resolver = DIST_RESOLVER_SLURM,
     .env = {"SLURM_PROCID=0", "SLURM_STEP_NUM_TASKS=2", "SLURM_STEP_NODELIST=n[9-10]",
             "SLURM_STEP_TASKS_PER_NODE=1(x2)", "SLURMD_NODENAME=n9", "CUDA_VISIBLE_DEVICES="},
     .error = "rank 0 runs on 'n9' (SLURMD_NODENAME) but TensorFlow's layout (nodes sorted by name, ranks in blocks) "
              "puts it on 'n10'"},
    {.name = "libdistribute: SLURMD_NODENAME shows srun placed ranks cyclically, not in TF's blocks",
     .resolver = DIST_RESOLVER_SLURM,
     .env = {"SLURM_PROCID=1", "SLURM_STEP_NUM_TASKS=4", "SLURM_STEP_NODELIST=n[1-2]",
             "SLURM_STEP_TASKS_PER_NODE=2(x2)", "SLURMD_NODENAME=n2", "CUDA_VISIBLE_DEVICES="},
     .error = "rank 1 runs on 'n2' (SLURMD_NODENAME) but TensorFlow's layout"},
    {.name = "libdistribute: SLURMD_NODENAME agrees with TF's sorted node order", .resolver = DIST_RESOLVER_SLURM,
     .env = {"SLURM_PROCID=0", "SLURM_STEP_NUM_TASKS=2", "SLURM_STEP_NODELIST=n[09-10]",
             "SLURM_STEP_TASKS_PER_NODE=1(x2)", "SLURMD_NODENAME=n09", "CUDA_VISIBLE_DEVICES="},
     .cluster = "{\"worker\":[\"n09:8888\",\"n10:8888\"]}", .masters = {{NULL, NULL, NULL, "grpc://n09:8888"}}},
    {.name = "libdistribute: TF_CONFIG task.type 1.5 (TF's str() has no JSON spelling)",
     .resolver = DIST_RESOLVER_TF_CONFIG, .env = {"TF_CONFIG={\"task\": {\"type\": 1.5}}"},
     .error = "TF_CONFIG: task: type 1.5 must be a string"},
    {.name = "libdistribute: SIMPLE master() without a task or master option is \"\" (TF: \"grpc://\")",
     .resolver = DIST_RESOLVER_SIMPLE, .cluster_spec = PS_AND_WORKERS_SPEC, .rpc_layer = "grpc",
     .masters = {{NULL, NULL, NULL, ""}}},
    {.name = "libdistribute: SIMPLE master() without a task is the master option", .resolver = DIST_RESOLVER_SIMPLE,
     .cluster_spec = PS_AND_WORKERS_SPEC, .rpc_layer = "grpc", .master = "10.0.0.1:8470", .task_type = "ps",
     .task_id = "1", .masters = {{NULL, NULL, NULL, "grpc://10.0.0.1:8470"}, {"ps", NULL, NULL, "grpc://10.0.0.1:8470"}}},

    /* ---- SimpleClusterResolver and UnionClusterResolver ------------------------- */
    {.name = CRT "testSingleClusterResolver (member)", .resolver = DIST_RESOLVER_SIMPLE,
     .cluster_spec = PS_AND_WORKERS_SPEC, .cluster = PS_AND_WORKERS_JSON, .accelerators = "{}", .task = "-",
     .rpc = "-"},
    {.name = CRT "testSingleClusterResolver", .resolver = DIST_RESOLVER_UNION,
     .members = {CRT "testSingleClusterResolver (member)"}, .cluster = PS_AND_WORKERS_JSON},
    {.name = CRT "testInitSimpleClusterResolver", .resolver = DIST_RESOLVER_SIMPLE,
     .cluster_spec = PS_AND_WORKERS_SPEC, .task_type = "ps", .task_id = "1", .environment = "cloud",
     .num_gpus = "8", .rpc_layer = "grpc",
     .task = "ps:1", .env_name = "cloud", .accelerators = "{\"GPU\":8}", .rpc = "grpc"},
    {.name = CRT "testOverrideSimpleClusterResolver", .resolver = DIST_RESOLVER_SIMPLE,
     .cluster_spec = PS_AND_WORKERS_SPEC, .task_type = "worker", .task_id = "2", .environment = "cloud",
     .num_gpus = "8", .rpc_layer = "http", .task = "worker:2", .rpc = "http"},
    {.name = CRT "testSimpleOverrideMasterWithTaskIndexZero", .resolver = DIST_RESOLVER_SIMPLE,
     .cluster_spec = PS_AND_WORKERS_SPEC, .masters = {{"worker", "0", "grpc", "grpc://worker0:2222"}}},
    {.name = CRT "testSimpleOverrideMasterWithRpcLayer", .resolver = DIST_RESOLVER_SIMPLE,
     .cluster_spec = PS_AND_WORKERS_SPEC, .masters = {{"worker", "2", "grpc", "grpc://worker2:2222"}}},
    {.name = CRT "testSimpleOverrideMaster", .resolver = DIST_RESOLVER_SIMPLE,
     .cluster_spec = PS_AND_WORKERS_SPEC, .masters = {{"worker", "2", NULL, "worker2:2222"}}},
    {.name = CRT "testUnionClusterResolverGetProperties (resolver1)", .resolver = DIST_RESOLVER_SIMPLE,
     .cluster_spec = PS_AND_WORKERS_SPEC, .task_type = "ps", .task_id = "1", .environment = "cloud",
     .num_gpus = "8", .rpc_layer = "grpc"},
    {.name = CRT "testUnionClusterResolverGetProperties (resolver2)", .resolver = DIST_RESOLVER_SIMPLE,
     .cluster_spec = "{\"ps\": [\"ps2:2222\", \"ps3:2222\"], \"worker\": [\"worker3:2222\", \"worker4:2222\","
                     " \"worker5:2222\"]}",
     .task_type = "worker", .task_id = "2", .environment = "local", .num_gpus = "16", .rpc_layer = "http"},
    {.name = CRT "testUnionClusterResolverGetProperties", .resolver = DIST_RESOLVER_UNION,
     .members = {CRT "testUnionClusterResolverGetProperties (resolver1)",
                 CRT "testUnionClusterResolverGetProperties (resolver2)"},
     .task = "ps:1", .env_name = "cloud", .accelerators = "{\"GPU\":8}", .rpc = "grpc"},
    {.name = CRT "testUnionClusterResolverGetProperties (task_type, task_id and rpc_layer set)",
     .resolver = DIST_RESOLVER_UNION,
     .members = {CRT "testUnionClusterResolverGetProperties (resolver1)",
                 CRT "testUnionClusterResolverGetProperties (resolver2)"},
     .task_type = "worker", .task_id = "2", .rpc_layer = "http", .task = "worker:2", .rpc = "http"},
    {.name = CRT "ps only", .resolver = DIST_RESOLVER_SIMPLE,
     .cluster_spec = "{\"ps\": [\"ps0:2222\", \"ps1:2222\"]}"},
    {.name = CRT "three workers", .resolver = DIST_RESOLVER_SIMPLE,
     .cluster_spec = "{\"worker\": [\"worker0:2222\", \"worker1:2222\", \"worker2:2222\"]}"},
    {.name = CRT "testTwoNonOverlappingJobMergedClusterResolver", .resolver = DIST_RESOLVER_UNION,
     .members = {CRT "ps only", CRT "three workers"}, .cluster = PS_AND_WORKERS_JSON},
    {.name = CRT "testMergedClusterResolverMaster", .resolver = DIST_RESOLVER_UNION,
     .members = {CRT "ps only", CRT "three workers"},
     .masters = {{NULL, NULL, NULL, ""}, {"worker", "1", NULL, "worker1:2222"},
                 {"worker", "1", "grpc", "grpc://worker1:2222"}}},
    {.name = CRT "two workers", .resolver = DIST_RESOLVER_SIMPLE,
     .cluster_spec = "{\"worker\": [\"worker4:2222\", \"worker5:2222\"]}"},
    {.name = CRT "testOverlappingJobMergedClusterResolver", .resolver = DIST_RESOLVER_UNION,
     .members = {CRT "two workers", CRT "three workers"},
     .cluster = "{\"worker\":[\"worker4:2222\",\"worker5:2222\",\"worker0:2222\",\"worker1:2222\",\"worker2:2222\"]}"},
    {.name = CRT "sparse workers 7, 9", .resolver = DIST_RESOLVER_SIMPLE,
     .cluster_spec = "{\"worker\": {\"7\": \"worker4:2222\", \"9\": \"worker5:2222\"}}"},
    {.name = CRT "sparse workers 3, 6, 7", .resolver = DIST_RESOLVER_SIMPLE,
     .cluster_spec = "{\"worker\": {\"3\": \"worker0:2222\", \"6\": \"worker1:2222\", \"7\": \"worker2:2222\"}}"},
    {.name = CRT "testOverlappingSparseJobMergedClusterResolverThrowError", .resolver = DIST_RESOLVER_UNION,
     .members = {CRT "sparse workers 7, 9", CRT "sparse workers 3, 6, 7"},
     .error = "gives worker:7, which an earlier member already gives"},
    {.name = CRT "sparse workers 1, 2, 3", .resolver = DIST_RESOLVER_SIMPLE,
     .cluster_spec = "{\"worker\": {\"1\": \"worker0:2222\", \"2\": \"worker1:2222\", \"3\": \"worker2:2222\"}}"},
    {.name = CRT "testOverlappingDictAndListThrowError", .resolver = DIST_RESOLVER_UNION,
     .members = {CRT "two workers", CRT "sparse workers 1, 2, 3"},
     .error = "gives worker:1, which an earlier member already gives"},
    {.name = CRT "sparse workers 5, 9", .resolver = DIST_RESOLVER_SIMPLE,
     .cluster_spec = "{\"worker\": {\"5\": \"worker4:2222\", \"9\": \"worker5:2222\"}}"},
    {.name = CRT "testOverlappingJobNonOverlappingKey", .resolver = DIST_RESOLVER_UNION,
     .members = {CRT "sparse workers 5, 9", CRT "sparse workers 3, 6, 7"},
     .cluster = "{\"worker\":{\"3\":\"worker0:2222\",\"5\":\"worker4:2222\",\"6\":\"worker1:2222\","
                "\"7\":\"worker2:2222\",\"9\":\"worker5:2222\"}}"},
    {.name = CRT "testMixedModeNonOverlappingKey", .resolver = DIST_RESOLVER_UNION,
     .members = {CRT "two workers", CRT "sparse workers 3, 6, 7"},
     .cluster = "{\"worker\":{\"0\":\"worker4:2222\",\"1\":\"worker5:2222\",\"3\":\"worker0:2222\","
                "\"6\":\"worker1:2222\",\"7\":\"worker2:2222\"}}"},
    {.name = CRT "sparse workers 1, 3, 5", .resolver = DIST_RESOLVER_SIMPLE,
     .cluster_spec = "{\"worker\": {\"1\": \"worker0:2222\", \"3\": \"worker1:2222\", \"5\": \"worker2:2222\"}}"},
    {.name = CRT "testRetainSparseJobWithNoMerging", .resolver = DIST_RESOLVER_UNION,
     .members = {CRT "sparse workers 1, 3, 5"},
     .cluster = "{\"worker\":{\"1\":\"worker0:2222\",\"3\":\"worker1:2222\",\"5\":\"worker2:2222\"}}"},
    {.name = "libdistribute: UNION master() without a task is the first member's; with one, the union's layer",
     .resolver = DIST_RESOLVER_UNION,
     .members = {"libdistribute: SIMPLE master() without a task is the master option", CRT "two workers"},
     .task = "ps:1", .rpc = "grpc",
     .cluster = "{\"ps\":[\"ps0:2222\",\"ps1:2222\"],\"worker\":[\"worker0:2222\",\"worker1:2222\","
                "\"worker2:2222\",\"worker4:2222\",\"worker5:2222\"]}",
     .masters = {{NULL, NULL, NULL, "grpc://10.0.0.1:8470"}, {"worker", "4", NULL, "worker5:2222"},
                 {"worker", "4", "x", "x://worker5:2222"}}},
};

/* slurm_cluster_resolver_test.py: test_expand_hostlist, through
 * `dist-info expand-hostlist` (the order is the list's, before any sorting). */
static const struct {
  const char* expression;
  const char* hosts; /* one per line */
} kHostlistCases[] = {
    {"n1", "n1\n"},
    {"n[1,3]", "n1\nn3\n"},
    {"n[1-3]", "n1\nn2\nn3\n"},
    {"n[1-2],m5,o[3-4,6,7-9]", "n1\nn2\nm5\no3\no4\no6\no7\no8\no9\n"},
    {"n[0001-0003],m5,o[009-011]", "n0001\nn0002\nn0003\nm5\no009\no010\no011\n"},
};

#endif /* DIST_TESTS_TF_CASES_CLUSTER_CASES_H */
