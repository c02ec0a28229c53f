/*
 * libdistribute — the stable C ABI.
 *
 * This header is the library's only exported surface, so it is one file past 500
 * lines: users include one header, as they do NCCL's or libuv's. It compiles as
 * C99 and as C++ (-Wall -Wextra -Werror -pedantic). Conventions, once for the
 * whole file:
 *
 *  - Every function returns dist_status_t: DIST_OK (0) or a negative error code.
 *    On every error, dist_last_error() returns a thread-local message saying what
 *    was wrong and where. The message stays until the next error on that thread.
 *  - Handles are opaque. Each object has a create/destroy pair; destroy(NULL) is a
 *    no-op. Output parameters come last and are written only on success.
 *  - Strings the library returns through `const char**` are borrowed: they live as
 *    long as the handle they came from. Strings returned through `char**` are the
 *    caller's and are released with dist_string_free().
 *  - No C enums: kinds and flags are fixed-width integers with #defined values.
 *  - Option structs begin with `uint64_t field_mask`; a field is read only when its
 *    bit is set, otherwise it takes the documented default. Initialise them with
 *    the matching *_INIT macro (all fields unset). New fields are only appended,
 *    so a program built against an older header keeps working.
 *  - The library installs no signal handlers, atexit hooks or malloc hooks and
 *    needs no global init/shutdown pair.
 */
#ifndef DIST_C_API_H
#define DIST_C_API_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Export macro ----------------------------------------------------------- */

#if defined(_WIN32)
#  if defined(DIST_BUILDING_LIBRARY)
#    define DIST_EXPORT __declspec(dllexport)
#  else
#    define DIST_EXPORT __declspec(dllimport)
#  endif
#elif defined(__GNUC__) && __GNUC__ >= 4
#  define DIST_EXPORT __attribute__((visibility("default")))
#else
#  define DIST_EXPORT
#endif

/* ---- Version ------------------------------------------------------------------
 * DIST_VERSION_HEX is 0xMMmmpp (major, minor, patch), as libuv does, so that
 * `#if DIST_VERSION_HEX >= 0x000200` works at compile time. dist_version() gives
 * the same number for the library actually loaded at run time.
 * The ABI major is the SONAME's number: libdistribute.so.<DIST_ABI_VERSION>. */
#define DIST_VERSION_MAJOR 0
#define DIST_VERSION_MINOR 1
#define DIST_VERSION_PATCH 0
#define DIST_VERSION_HEX \
  ((DIST_VERSION_MAJOR << 16) | (DIST_VERSION_MINOR << 8) | DIST_VERSION_PATCH)
#define DIST_ABI_VERSION 0

/* ---- Status codes ---------------------------------------------------------------
 * Grouped by blast radius, so a caller can decide what to do from the range alone:
 *   -1   .. -99    the call's arguments were wrong: fix the call, nothing else broke
 *   -100 .. -199   a local resource failed (memory, OS call, file): this process
 *   -200 .. -299   a peer or link failed: the communicator/cluster is affected
 *   -300 ..        an internal error: a bug in libdistribute, please report it
 * Codes are never renumbered; new ones are added inside their group. */
typedef int32_t dist_status_t;

#define DIST_OK                      0
#define DIST_ERR_INVALID_ARGUMENT   -1  /* a value, field or input document is wrong */
#define DIST_ERR_UNSUPPORTED        -2  /* valid request, but not built in / not possible here */
#define DIST_ERR_NO_MEMORY        -100  /* an allocation failed */
#define DIST_ERR_SYSTEM           -101  /* an OS call failed (the message names it and errno) */
#define DIST_ERR_PEER_FAILED      -200  /* a peer died, left, or broke the connection */
#define DIST_ERR_TIMEOUT          -201  /* a deadline passed (the message says waiting for what) */
#define DIST_ERR_MISMATCH         -202  /* ranks disagree on a call; the message names both sides */
#define DIST_ERR_AUTH             -203  /* the cluster token was missing or differs */
#define DIST_ERR_UNAVAILABLE      -204  /* an address cannot be used (port taken, transport down) */
#define DIST_ERR_ABORTED          -205  /* dist_context_abort was called here or on a peer */
#define DIST_ERR_INTERNAL         -300  /* a bug in libdistribute */

/* Thread rules: both may be called from any thread at any time. */

/* A static, human-readable name for a status code ("DIST_ERR_INVALID_ARGUMENT");
 * "DIST_ERR_UNKNOWN" for a code this version does not know. Never NULL. */
DIST_EXPORT const char* dist_status_string(dist_status_t status);

/* The message of the last error on the calling thread ("" if none yet). The
 * pointer stays valid until the next libdistribute call on this thread. */
DIST_EXPORT const char* dist_last_error(void);

/* ---- Version and build report ----------------------------------------------- */

/* DIST_VERSION_HEX of the loaded library. */
DIST_EXPORT uint32_t dist_version(void);

/* "0.1.0" of the loaded library; static storage. */
DIST_EXPORT const char* dist_version_string(void);

/* Optional components compiled into this build: a bitwise OR of DIST_FEATURE_*. */
typedef uint32_t dist_features_t;
#define DIST_FEATURE_UCX   (1u << 0)  /* UCX transport between processes */
#define DIST_FEATURE_CUDA  (1u << 1)  /* CUDA device buffers and device queries */
#define DIST_FEATURE_NCCL  (1u << 2)  /* NCCL collectives on GPU buffers */
#define DIST_FEATURE_HWLOC (1u << 3)  /* hwloc topology discovery */

DIST_EXPORT dist_features_t dist_build_features(void);

/* A JSON report of this build: {"version", "abi_version", "features": [...],
 * "compiler", "build_type", "sanitizers", and the versions of the linked
 * components ("ucx", "hwloc", "cuda_runtime", "nccl"; null when not built in)}.
 * NCCL is opened at run time, not linked (an NCCL the process already loaded,
 * such as torch's, is used; DIST_NCCL_LIBRARY names another): in builds with
 * NCCL, "nccl_library" is the file opened and "nccl_unavailable" says why the
 * NCCL path cannot run (null when it can); "nccl" is null when none opened.
 * The string is the caller's (dist_string_free). Any thread. */
DIST_EXPORT dist_status_t dist_build_info(char** json);

/* Frees a string the library returned through a `char**` output. NULL is a no-op. */
DIST_EXPORT void dist_string_free(char* str);

/* ==== Cluster resolution ==========================================================
 *
 * A dist_cluster_t is the resolved view of a cluster, with the semantics of
 * TensorFlow's cluster resolvers: a cluster spec (job name -> task index ->
 * "host:port"), this process's task type and id, the rpc layer, the environment
 * and the number of accelerators.
 *
 * Jobs are given either as lists (indices 0..n-1) or as sparse index->address maps
 * (TF_CONFIG: {"worker": {"1": "h:2222", "3": "h:2223"}}). Task ids are the map's
 * indices; dist_cluster_num_tasks counts the tasks that exist.
 *
 * Thread rules: a dist_cluster_t is immutable once created. Every getter may be
 * called concurrently from any number of threads. dist_cluster_destroy must not run
 * concurrently with any other call on the same handle.
 * ================================================================================ */

typedef struct dist_cluster dist_cluster_t;

/* Which resolver produced (or should produce) a cluster. */
typedef int32_t dist_resolver_kind_t;
#define DIST_RESOLVER_AUTO      0 /* pick from the environment, in this order:
                                     TF_CONFIG set -> TF_CONFIG;
                                     SLURM_PROCID and SLURM_STEP_NUM_TASKS -> SLURM;
                                     OMPI_COMM_WORLD_RANK or PMI_RANK -> MPI;
                                     RANK and WORLD_SIZE -> TORCHRUN;
                                     none of these -> TF_CONFIG with an empty cluster
                                     (a single process, as TensorFlow does) */
#define DIST_RESOLVER_TF_CONFIG 1 /* the TF_CONFIG JSON environment variable */
#define DIST_RESOLVER_SIMPLE    2 /* a cluster spec given as JSON in the options */
#define DIST_RESOLVER_SLURM     3 /* SLURM_* variables of a job step (srun) */
#define DIST_RESOLVER_MPI       4 /* Open MPI (OMPI_COMM_WORLD_*) or PMI (PMI_RANK/SIZE) */
#define DIST_RESOLVER_TORCHRUN  5 /* RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR/PORT */
#define DIST_RESOLVER_UNION     6 /* the union of already resolved clusters */

/* Field-mask bits of dist_cluster_options_t. */
#define DIST_CLUSTER_OPT_RESOLVER       (1ull << 0)
#define DIST_CLUSTER_OPT_TASK_TYPE      (1ull << 1)
#define DIST_CLUSTER_OPT_TASK_ID        (1ull << 2)
#define DIST_CLUSTER_OPT_RPC_LAYER      (1ull << 3)
#define DIST_CLUSTER_OPT_ENVIRONMENT    (1ull << 4)
#define DIST_CLUSTER_OPT_CLUSTER_SPEC   (1ull << 5)
#define DIST_CLUSTER_OPT_MASTER         (1ull << 6)
#define DIST_CLUSTER_OPT_JOBS           (1ull << 7)
#define DIST_CLUSTER_OPT_PORT_BASE      (1ull << 8)
#define DIST_CLUSTER_OPT_TASKS_PER_NODE (1ull << 9)
#define DIST_CLUSTER_OPT_GPUS_PER_NODE  (1ull << 10)
#define DIST_CLUSTER_OPT_GPUS_PER_TASK  (1ull << 11)
#define DIST_CLUSTER_OPT_AUTO_SET_GPU   (1ull << 12)
#define DIST_CLUSTER_OPT_MEMBERS        (1ull << 13)
#define DIST_CLUSTER_OPT_ENV            (1ull << 14)
#define DIST_CLUSTER_OPT_NUM_GPUS       (1ull << 15)

typedef struct dist_cluster_options {
  uint64_t field_mask;

  /* Which resolver to use. Default DIST_RESOLVER_AUTO. */
  dist_resolver_kind_t resolver;

  /* Overrides of what the resolver finds, as TF's resolvers' constructor
   * arguments: task type, task id (>= 0), rpc layer ("grpc", "ucx", ...) and
   * environment ("google", "cloud", ...). Defaults: what the source says. */
  const char* task_type;
  int32_t task_id;
  const char* rpc_layer;
  const char* environment;

  /* SIMPLE: the cluster spec as a JSON object, {"worker": ["h:p", ...], ...};
   * required for SIMPLE, ignored by the others. */
  const char* cluster_spec_json;
  /* SIMPLE: the address master() returns when asked without a task. Default "". */
  const char* master;

  /* SLURM, MPI, TORCHRUN: how the ranks are split into jobs, e.g. {ps:1, worker:3}.
   * Ranks are given to jobs in the order of the job names sorted (so "chief" <
   * "evaluator" < "ps" < "worker"), as TF's Slurm resolver does. The counts must
   * add up to the number of tasks. Default: every rank is a "worker". */
  const char* const* job_names;
  const int32_t* job_counts;
  size_t num_jobs;

  /* SLURM: first port on each node; task k on a node listens at port_base + k
   * (default 8888). MPI, TORCHRUN: see dist_cluster_resolve. */
  int32_t port_base;
  /* SLURM: tasks on every node, overriding SLURM_STEP_TASKS_PER_NODE. */
  int32_t tasks_per_node;
  /* SLURM: GPUs on each node (default, as TF: the entries of CUDA_VISIBLE_DEVICES
   * when set, else the GPUs this build can count here) and GPUs per task
   * (default gpus_per_node / the most tasks on one node). */
  int32_t gpus_per_node;
  int32_t gpus_per_task;
  /* SLURM: when nonzero (the default, as in TF), export CUDA_VISIBLE_DEVICES for
   * this task with setenv(). Never done when DIST_CLUSTER_OPT_ENV is set. */
  int32_t auto_set_gpu;

  /* UNION: the clusters to merge, in priority order (required for UNION). */
  const dist_cluster_t* const* members;
  size_t num_members;

  /* Read these "NAME=value" strings instead of the process environment (a NULL-
   * terminated array). Lets tests and embedders resolve without setenv(). */
  const char* const* env;

  /* Report this many GPUs per task instead of counting devices (SIMPLE: the
   * only source of its count). */
  int32_t num_gpus;
} dist_cluster_options_t;

#ifdef __cplusplus
#  define DIST_CLUSTER_OPTIONS_INIT {}
#else
#  define DIST_CLUSTER_OPTIONS_INIT {0}
#endif

/* Resolves the cluster this process belongs to. options may be NULL (AUTO).
 *
 * TF_CONFIG: {"cluster": {job: [addr, ...] | {"index": addr}}, "task": {"type": T,
 *   "index": I}, "rpc_layer": R, "session_master": M, "environment": E}; every key
 *   is optional, and unknown keys are ignored, as TensorFlow does. As TF, a type
 *   given as an integer is its decimal text and an index given as a numeric
 *   string is that number. An unset or empty TF_CONFIG is an empty cluster.
 * SLURM: SLURM_PROCID, SLURM_STEP_NUM_TASKS, SLURM_STEP_NODELIST (hostlist syntax,
 *   "t02n[13-16,20],gpu-[001-003]") and SLURM_STEP_TASKS_PER_NODE ("2(x3),1"); as
 *   TF, the nodes are sorted by name (each keeps its task count) and the
 *   addresses are host:(port_base + local index) in that order; task type/id
 *   from the jobs split; the task's CUDA_VISIBLE_DEVICES is reported; the rpc
 *   layer is "grpc" unless given. SLURM_STEP_NUM_TASKS is needed without jobs
 *   and must match the nodes' tasks where set. Where SLURMD_NODENAME is set and
 *   the sorted order would put this rank on another node, the call fails.
 * MPI and TORCHRUN: rank and size from the launcher (OMPI_COMM_WORLD_RANK/SIZE/
 *   LOCAL_SIZE or PMI_RANK/PMI_SIZE/MPI_LOCALNRANKS; RANK/WORLD_SIZE/
 *   LOCAL_WORLD_SIZE). Task r listens at master_addr:(port_base + r), where
 *   master_addr is MASTER_ADDR (default 127.0.0.1) and port_base defaults to
 *   MASTER_PORT + 1 where MASTER_PORT is set (the launcher's own store may hold
 *   MASTER_PORT), else 8888. This needs every rank on one host; when the launcher
 *   says the ranks span hosts (or cannot tell), the addresses are not in the
 *   environment and the call fails with DIST_ERR_UNSUPPORTED (use TF_CONFIG or
 *   SLURM there). Ranks are split into jobs as for SLURM.
 *
 * Every malformed input gives DIST_ERR_INVALID_ARGUMENT and a message naming the
 * field and the value. */
DIST_EXPORT dist_status_t dist_cluster_resolve(const dist_cluster_options_t* options,
                                               dist_cluster_t** cluster);

/* Resolves from a TF_CONFIG document given as a string instead of the environment.
 * Also accepts the object dist_cluster_to_json() writes. */
DIST_EXPORT dist_status_t dist_cluster_from_json(const char* json, dist_cluster_t** cluster);

DIST_EXPORT void dist_cluster_destroy(dist_cluster_t* cluster);

/* The resolver that produced this cluster (never AUTO: AUTO reports its pick). */
DIST_EXPORT dist_status_t dist_cluster_resolver(const dist_cluster_t* cluster,
                                                dist_resolver_kind_t* kind);

/* "tf_config", "simple", "slurm", "mpi", "torchrun", "union" (static storage), or
 * NULL for a value that is not a resolver kind. */
DIST_EXPORT const char* dist_resolver_name(dist_resolver_kind_t kind);

/* This task's type ("worker", "chief", "ps", "evaluator", ...), or NULL if unknown. */
DIST_EXPORT dist_status_t dist_cluster_task_type(const dist_cluster_t* cluster,
                                                 const char** task_type);

/* This task's index in its job, or -1 if unknown. */
DIST_EXPORT dist_status_t dist_cluster_task_id(const dist_cluster_t* cluster, int32_t* task_id);

/* The rpc layer and environment, or NULL if unset. */
DIST_EXPORT dist_status_t dist_cluster_rpc_layer(const dist_cluster_t* cluster,
                                                 const char** rpc_layer);
DIST_EXPORT dist_status_t dist_cluster_environment(const dist_cluster_t* cluster,
                                                   const char** environment);

/* Jobs, in sorted name order: their count and the i-th name. */
DIST_EXPORT dist_status_t dist_cluster_num_jobs(const dist_cluster_t* cluster, size_t* num_jobs);
DIST_EXPORT dist_status_t dist_cluster_job_name(const dist_cluster_t* cluster, size_t i,
                                                const char** job_name);

/* Number of tasks in a job. An unknown job is DIST_ERR_INVALID_ARGUMENT. */
DIST_EXPORT dist_status_t dist_cluster_num_tasks(const dist_cluster_t* cluster, const char* job,
                                                 int32_t* num_tasks);

/* The task index of the i-th task of a job, in increasing order (i itself for a
 * job given as a list). */
DIST_EXPORT dist_status_t dist_cluster_task_index(const dist_cluster_t* cluster, const char* job,
                                                  int32_t i, int32_t* task_index);

/* "host:port" of task `task_index` of `job`. */
DIST_EXPORT dist_status_t dist_cluster_task_address(const dist_cluster_t* cluster,
                                                    const char* job, int32_t task_index,
                                                    const char** address);

/* TF's master(task_type, task_id, rpc_layer), with the rule of the resolver that
 * made the cluster (task_type NULL / task_id < 0 / rpc_layer NULL: not given):
 *   TF_CONFIG (and dist_cluster_from_json): TF_CONFIG's "session_master" as is when
 *     set; "" for a cluster with no task or a single task; else the address of the
 *     given task (what is not given comes from this task; neither known:
 *     DIST_ERR_INVALID_ARGUMENT), prefixed with "<layer>://" for the given layer,
 *     else the cluster's ("" given: no layer).
 *   SIMPLE: the given task (type and id both), else the `master` option ("" when
 *     unset); never this task. Layer: the given one, else the cluster's.
 *   SLURM, MPI, TORCHRUN: the given task, else this task ("" when unknown). Layer:
 *     the given one, else the cluster's (SLURM's default layer is "grpc").
 *   UNION: the given task (type and id both) in the merged spec, with the given
 *     layer or the union's own rpc_layer option; else the first member's master().
 * The string is the caller's (dist_string_free). */
DIST_EXPORT dist_status_t dist_cluster_master(const dist_cluster_t* cluster,
                                              const char* task_type, int32_t task_id,
                                              const char* rpc_layer, char** master);

/* Accelerators of `device_type` ("GPU"; NULL means "GPU") available to this task:
 * TF_CONFIG, MPI, TORCHRUN count them (CUDA when built with it, else hwloc); SLURM
 * reports its GPUs per task; SIMPLE reports num_gpus and nothing when unset (as
 * TF's default {}); UNION the first member's. num_gpus overrides all of them.
 * 0 when there are none. */
DIST_EXPORT dist_status_t dist_cluster_num_accelerators(const dist_cluster_t* cluster,
                                                        const char* device_type,
                                                        int32_t* count);

/* The CUDA_VISIBLE_DEVICES value this task should use ("0,1"), or NULL when the
 * resolver does not assign devices. */
DIST_EXPORT dist_status_t dist_cluster_cuda_visible_devices(const dist_cluster_t* cluster,
                                                            const char** devices);

/* The whole resolved view as one JSON object (dist-info's format):
 * {"resolver", "cluster", "task_type", "task_id", "rpc_layer", "environment",
 *  "master", "num_accelerators", "cuda_visible_devices"}; absent facts are null
 * ("master" too where master() fails); TF_CONFIG's "session_master" is added when set.
 * Jobs given densely are lists; sparse ones are {"index": address} maps. */
DIST_EXPORT dist_status_t dist_cluster_to_json(const dist_cluster_t* cluster, char** json);

/* ==== Contexts: joining the cluster =============================================
 *
 * dist_context_create joins the cluster a dist_cluster_t describes. The chief and
 * the workers are its members, ranked chief first, then workers by index. Every
 * member listens at its own cluster address; each connects to the members before
 * it and accepts those after it, in any start order, retrying until the connect
 * deadline. Every connection proves the cluster token (HMAC-SHA256 challenge-
 * response over fresh nonces): from the options, else DIST_CLUSTER_TOKEN, else the
 * file named by DIST_CLUSTER_TOKEN_FILE (private to its owner). Where two
 * members' tokens differ, whichever holds the wrong one, the member that
 * connects fails at once with DIST_ERR_AUTH (it does not wait for its connect
 * deadline), and the member it reached is left as it was: it logs a warning and
 * keeps waiting, and the right member can still join. If none comes by its
 * connect deadline, its DIST_ERR_TIMEOUT names the members that did not connect
 * and each address that tried and failed authentication ("198.18.0.2:41234
 * tried and failed authentication (the cluster token differs)"). Connections
 * from anything else (garbage, early closes) are dropped and change nothing. A
 * cluster with no tasks is a single-process context (rank 0 of 1) that needs no
 * token.
 *
 * The connections stay open: a member that dies is noticed by every survivor as
 * soon as its connections close, and every call on a communicator that contains
 * it fails with DIST_ERR_PEER_FAILED.
 *
 * Data moves over UCX, which picks the transport (shared memory on one host,
 * TCP/RDMA between hosts); UCX_TLS and the other UCX_* variables keep working.
 *
 * Thread rules: dist_context_rank/size/abort may be called from any thread at any
 * time. dist_context_abort makes every pending and later call on every
 * communicator of the context, here and on every peer, fail with
 * DIST_ERR_ABORTED. Destroy the communicators first, then the context; destroy
 * must not race with other calls.
 * ================================================================================ */

typedef struct dist_context dist_context_t;

#define DIST_CONTEXT_OPT_TOKEN              (1ull << 0)
#define DIST_CONTEXT_OPT_TOKEN_FILE         (1ull << 1)
#define DIST_CONTEXT_OPT_CONNECT_TIMEOUT_MS (1ull << 2)
#define DIST_CONTEXT_OPT_TIMEOUT_MS         (1ull << 3)
#define DIST_CONTEXT_OPT_TIMELINE           (1ull << 4)

typedef struct dist_context_options {
  uint64_t field_mask;
  const char* token;           /* the cluster token itself */
  const char* token_file;      /* or a file holding it */
  int64_t connect_timeout_ms;  /* how long to wait for every member; default 120000 */
  int64_t timeout_ms;          /* default deadline of every collective; default 60000 */
  /* Records a timeline: this rank writes "<timeline>.<rank>.json" (see
   * "Timelines" below). Default: DIST_TIMELINE's value when set, else none. */
  const char* timeline;
} dist_context_options_t;

#ifdef __cplusplus
#  define DIST_CONTEXT_OPTIONS_INIT {}
#else
#  define DIST_CONTEXT_OPTIONS_INIT {0}
#endif

/* options may be NULL. Blocks until every member has connected. */
DIST_EXPORT dist_status_t dist_context_create(const dist_cluster_t* cluster,
                                              const dist_context_options_t* options,
                                              dist_context_t** context);
DIST_EXPORT void dist_context_destroy(dist_context_t* context);
DIST_EXPORT dist_status_t dist_context_rank(const dist_context_t* context, int32_t* rank);
DIST_EXPORT dist_status_t dist_context_size(const dist_context_t* context, int32_t* size);
/* reason may be NULL. */
DIST_EXPORT dist_status_t dist_context_abort(dist_context_t* context, const char* reason);

/* ==== Timelines ====
 * With the context option `timeline` (or DIST_TIMELINE=prefix in the environment)
 * each rank writes "<prefix>.<rank>.json": Chrome trace events (a JSON array that
 * Perfetto and chrome://tracing load). While the rank runs, a thread of its own
 * appends the events in a compact binary form to "<prefix>.<rank>.json.spool";
 * the JSON file is written from it, and the spool removed, when the context and
 * everything made from it are destroyed. A rank that dies, or exits without
 * destroying them (the library installs no exit hook), leaves its spool:
 * `dist-info timeline convert` turns it into the JSON file (every whole event),
 * and `dist-info timeline merge` reads it where the JSON file is missing.
 * Events are spans on lanes:
 *   - "comm <id>": every collective (name: all_reduce, broadcast, ...; args comm,
 *     seq, dtype, bytes, path, algorithm, waiting_ns, reducing_ns, moving_ns, and
 *     status when it failed), with spans of its phases inside: "waiting for
 *     peers" (once a wait actually waits) and "reducing" (reductions of 16 KiB
 *     or more); the rest is "moving data".
 *   - "replica <id>": each replica function of dist_strategy_run.
 *   - "apply_gradients": each dist_strategy_apply_gradients; "buckets": each
 *     fused bucket from packing to its consumer (args index, dtype, bytes,
 *     segments, packed).
 *   - "ps client": each parameter-server request from sending to the wait that
 *     saw it done (name: the operation; args server, shard, bytes_sent,
 *     bytes_received; detail: the server's name and any error).
 * Times are the steady clock's, in microseconds: ranks on one host agree;
 * `dist-info timeline merge PREFIX` writes PREFIX.json with every host's clock
 * aligned to the first rank's. A timeline turns on timing (dist_comm_stats).
 * Strategies without a context record to "<DIST_TIMELINE>.pid<PID>.json" (written
 * when the last of them, and the parameter-server clients, are destroyed). Off
 * (the default), nothing is recorded and no clock is read. A spool that cannot be
 * created fails dist_context_create with DIST_ERR_INVALID_ARGUMENT naming the file;
 * one that cannot be written later is logged once and abandoned, and a JSON file
 * that cannot be written at the end is logged, its spool kept. */

/* ==== Flight recorder ====
 * Every communicator keeps its last calls in a ring (DIST_FLIGHT_RECORDER_ENTRIES,
 * default 256; 0 keeps none), always: kind, dtype, count, op, root, how far it got
 * ("in flight", "done", "failed"), its status, path and algorithm, and, when its
 * calls are timed, when it started and how long it took (steady clock, as the
 * timeline's). dist_context_dump gives them, with this rank (rank, task, host_id,
 * pid, both clocks now), each communicator (id, rank, size, members, path,
 * timeout_ms, calls_started, calls_finished, failed, calls) and the peers lost, as
 * JSON in *json (free it with dist_string_free). It may be called from any thread
 * at any time, also while calls hang. With DIST_FLIGHT_RECORDER_SIGNAL=USR1 (or
 * USR2) the library installs a handler for that signal that writes the dump of
 * every context of the process to "<DIST_FLIGHT_RECORDER_DIR, else
 * /tmp>/dist-flight.<rank>.<pid>.json" and logs where; another signal name fails
 * dist_context_create with DIST_ERR_INVALID_ARGUMENT. Nothing kills the process. */
DIST_EXPORT dist_status_t dist_context_dump(dist_context_t* context, char** json);

/* ==== Contexts through the caller's own exchange ====
 * Frameworks that already have a rendezvous (torch's Store, MPI_Allgather, JAX's
 * key-value store) build a context from rank, size and an all-gather they provide.
 * The library calls it (one or more times, in the same order on every rank) to swap
 * what each task needs; authentication stays on (token from the options or the usual
 * places). Bounded by the connect deadline: a request still in progress then is freed
 * and the call fails with DIST_ERR_TIMEOUT.
 *
 * Each task listens on a port the system picks (nothing is reserved in advance) at
 * the address other tasks reach it at: DIST_ADDRESS when set (a host name or
 * address), else the IPv4 address of the interface holding the default route, else
 * that of the first interface that is up and not loopback, else 127.0.0.1. The
 * tasks swap those addresses, their size and a fingerprint of their cluster token
 * (never the token) through the all-gather, then connect and authenticate as dist_context_create
 * does; the context is then the same in every way (rank = oob->rank; its members are
 * "worker:0".."worker:<size-1>"). The exchanged bytes are opaque to the caller, and
 * `bytes` is the same on every rank.
 *
 * Errors: allgather returning nonzero or test returning a negative value ->
 * DIST_ERR_PEER_FAILED, the message saying the caller's exchange failed and the code
 * it returned. Ranks that disagree on size, or an all-gather that misplaces parts ->
 * DIST_ERR_MISMATCH; different (or missing) cluster tokens -> DIST_ERR_AUTH; both
 * name the rank.
 *
 * Thread and progress rules: the callbacks run only on the thread that called
 * dist_context_create_oob, one at a time, and never after it returns; test() is
 * polled (with short sleeps) until it completes, fails or the deadline passes. Once
 * free() returns, or a request completed and the call returned, the library no longer
 * reads `send` nor writes `recv`. Several threads may create contexts at once, also
 * in one process (ranks 0 and 1 on two threads): each call uses only its own oob.
 * The context then follows the rules of dist_context_create's contexts. */
/* Starts an all-gather: every rank gives `bytes` bytes at `send`; when it completes,
 * `recv` holds size * bytes, rank r's at offset r * bytes. Returns 0 and sets
 * *request (NULL when already complete), or nonzero when it could not start. */
typedef int32_t (*dist_oob_allgather_fn_t)(void* user_data, const void* send, void* recv, size_t bytes,
                                           void** request);
/* For a non-NULL request: 0 complete, 1 in progress, negative failed. */
typedef int32_t (*dist_oob_test_fn_t)(void* user_data, void* request);
/* Releases a non-NULL request once it completed, failed or was given up. */
typedef void (*dist_oob_free_fn_t)(void* user_data, void* request);

typedef struct dist_oob {
  uint64_t field_mask;                /* no optional fields yet: set 0 */
  int32_t rank;                       /* this task, 0 <= rank < size */
  int32_t size;                       /* number of tasks (>= 1) */
  dist_oob_allgather_fn_t allgather;
  dist_oob_test_fn_t test;
  dist_oob_free_fn_t free;            /* may be NULL */
  void* user_data;
} dist_oob_t;

/* options may be NULL (the token then comes from DIST_CLUSTER_TOKEN or
 * DIST_CLUSTER_TOKEN_FILE; connect_timeout_ms bounds the exchange and the bootstrap
 * together). Blocks until every rank has connected. */
DIST_EXPORT dist_status_t dist_context_create_oob(const dist_oob_t* oob,
                                                  const dist_context_options_t* options,
                                                  dist_context_t** context);

/* ==== Communicators ===============================================================
 *
 * dist_comm_world gives the communicator of all members (owned by the context:
 * never destroy it). dist_comm_split is collective over its parent: members with
 * the same color form a new communicator, ranked by (key, parent rank); a
 * negative color gives NULL (the member joins none).
 *
 * Thread rules: different communicators may be used concurrently from different
 * threads. Calls on one communicator are ordered by the order they are made; make
 * them from one thread at a time, in the same order on every member.
 * ================================================================================ */

typedef struct dist_comm dist_comm_t;

DIST_EXPORT dist_status_t dist_comm_world(dist_context_t* context, dist_comm_t** comm);
DIST_EXPORT dist_status_t dist_comm_split(dist_comm_t* comm, int32_t color, int32_t key,
                                          dist_comm_t** new_comm);
/* Destroys a communicator from dist_comm_split; NULL and the world are no-ops. */
DIST_EXPORT void dist_comm_destroy(dist_comm_t* comm);
DIST_EXPORT dist_status_t dist_comm_rank(const dist_comm_t* comm, int32_t* rank);
DIST_EXPORT dist_status_t dist_comm_size(const dist_comm_t* comm, int32_t* size);

/* How a communicator's collectives travel. When all its ranks run on one host,
 * they share a memory segment and every collective goes through it; that is
 * turned off by DIST_SHM=0, or by UCX_TLS naming no shared-memory transport (a
 * run restricted to TCP stays on TCP). When they span several hosts and some
 * host runs several of them, the path is hierarchical (unless shared memory is
 * turned off on any rank): the ranks of each host share a segment, and the
 * hosts exchange UCX messages, every local rank carrying its share where all
 * hosts run as many ranks (dist_comm_algorithm names the algorithms,
 * "hier_..."). Otherwise, the ranks exchange UCX messages. All ranks of a communicator decide together, when it
 * is created, also whether large all_gather and all_to_all blocks are copied
 * straight from the peers' buffers (where the system lets the processes read
 * each other's memory; DIST_SHM_SINGLE_COPY=0 on any rank turns it off). */
typedef int32_t dist_comm_path_t;
#define DIST_COMM_PATH_SELF           0 /* one rank: nothing travels */
#define DIST_COMM_PATH_POINT_TO_POINT 1 /* UCX messages between ranks */
#define DIST_COMM_PATH_SHARED_MEMORY  2 /* a segment shared by all ranks on one host */
#define DIST_COMM_PATH_HIERARCHICAL   3 /* shared memory within each host, UCX messages between hosts */
#define DIST_COMM_PATH_NCCL           4 /* calls on CUDA memory: NCCL (dist_comm_device_path) */
#define DIST_COMM_PATH_STAGED         5 /* calls on CUDA memory: through pinned host memory */

DIST_EXPORT dist_status_t dist_comm_path(const dist_comm_t* comm, dist_comm_path_t* path);
/* The path of comm's calls on CUDA memory (DIST_COMM_PATH_NCCL or _STAGED), which
 * its ranks choose together at the first such call (see DIST_MEMORY_CUDA below).
 * DIST_ERR_UNAVAILABLE before that call, and in builds without CUDA. */
DIST_EXPORT dist_status_t dist_comm_device_path(const dist_comm_t* comm, dist_comm_path_t* path);

/* Hosts. Members run on the same host when they share a kernel (hostname and
 * boot id agree). Hosts are numbered in the order of their first rank in the
 * communicator; a rank's local rank is its position among the ranks of its
 * host, in communicator rank order (as MPI's split by shared memory orders
 * them). dist_comm_split_host is collective over comm and gives the
 * communicator of this rank's host (destroy it with dist_comm_destroy). */
DIST_EXPORT dist_status_t dist_comm_local_rank(const dist_comm_t* comm, int32_t* local_rank);
DIST_EXPORT dist_status_t dist_comm_local_size(const dist_comm_t* comm, int32_t* local_size);
DIST_EXPORT dist_status_t dist_comm_num_hosts(const dist_comm_t* comm, int32_t* num_hosts);
DIST_EXPORT dist_status_t dist_comm_split_host(dist_comm_t* comm, dist_comm_t** host_comm);

/* All-reduce algorithm choice. AUTO picks by path, message size and rank count;
 * the environment variable DIST_ALLREDUCE_ALGO (ring, rabenseifner,
 * recursive_doubling, shm, shm_direct, shm_read_write, shm_split, hierarchical,
 * hier_streamed, hier_rails, hier_leaders) overrides AUTO for every communicator; shm_direct,
 * shm_read_write and shm_split force those shared-memory all-reduces where the path is
 * DIST_COMM_PATH_SHARED_MEMORY, hier_streamed, hier_rails and hier_leaders those
 * hierarchical ones where it is DIST_COMM_PATH_HIERARCHICAL (rails only where every
 * host runs as many ranks; streamed only, besides, between two hosts whose ranks
 * may read each other's memory), and leave the choice to size elsewhere. The library's table of algorithms
 * (src/collectives/algorithm_table.cc) lists them all, per collective. RING,
 * RABENSEIFNER and RECURSIVE_DOUBLING are point-to-point algorithms and use UCX
 * messages even on a shared-memory or hierarchical communicator; SHARED_MEMORY
 * needs a communicator whose path is DIST_COMM_PATH_SHARED_MEMORY, and
 * HIERARCHICAL (the hierarchical all-reduces, chosen by size) one whose path is
 * DIST_COMM_PATH_HIERARCHICAL (else DIST_ERR_UNSUPPORTED). Every rank of a
 * communicator must choose the same. */
typedef int32_t dist_allreduce_algorithm_t;
#define DIST_ALLREDUCE_AUTO               0
#define DIST_ALLREDUCE_RING               1
#define DIST_ALLREDUCE_RABENSEIFNER       2
#define DIST_ALLREDUCE_RECURSIVE_DOUBLING 3
#define DIST_ALLREDUCE_SHARED_MEMORY      4
#define DIST_ALLREDUCE_HIERARCHICAL       5

#define DIST_COMM_OPT_TIMEOUT_MS (1ull << 0)
#define DIST_COMM_OPT_ALLREDUCE  (1ull << 1)
#define DIST_COMM_OPT_TIMING     (1ull << 2)
#define DIST_COMM_OPT_STALL_WARNING_MS (1ull << 3)
#define DIST_COMM_OPT_DETERMINISTIC    (1ull << 4)

typedef struct dist_comm_options {
  uint64_t field_mask;
  /* Deadline of each call; default: the context's. On one host's shared
   * segment it counts from the call's first wait for a peer that outlasts a
   * short spin (a call that never waits that long reads no clock). */
  int64_t timeout_ms;
  dist_allreduce_algorithm_t allreduce; /* default DIST_ALLREDUCE_AUTO */
  /* 1: time every call for dist_comm_stats, 0: do not. Default 0, or 1 where
   * DIST_COMM_TIMING=1 is set or a timeline is recorded. */
  int32_t timing;
  /* How long a call waits for its peers before each waiting rank logs (a
   * warning through the library's log) which members have not reached it and
   * where they are: "worker:3 is at all_reduce #1041 on comm 0 while worker:0-2
   * wait at #1042" (the members answer over the context's control connections,
   * across hosts). The call goes on waiting; at its deadline the
   * DIST_ERR_TIMEOUT message ends with the same words, and that failure reaches
   * every member, the late one included. 0: no warning. Default 30000, or
   * DIST_STALL_WARNING_SECONDS * 1000. */
  int64_t stall_warning_ms;
  /* 1: reproducible reductions. A floating-point (f16, bf16, f32, f64) SUM, PROD
   * or MEAN of all_reduce, reduce or reduce_scatter then gives the same bits for
   * a given number of ranks on every path (shared memory, point to point,
   * hierarchical, staged CUDA buffers), algorithm, chunk size, and, in
   * strategies over such a communicator, bucket size and fusion: each element
   * combines the ranks' values in rank order, 0 first. The call runs as an
   * all_to_all of blocks, the combination in order, and an all_gather (a reduce
   * gathers everywhere, then keeps the root's), which is what dist_comm_stats,
   * the timeline and the flight recorder show of it; calls on CUDA memory take the
   * staged path instead of NCCL. Integer dtypes and MIN/MAX are exact in any
   * order and run as usual. The cost, measured against the default, is in
   * bench/README.md. Strategies' own reductions between local CUDA replicas are
   * not covered. 0: the fastest order (the default, or DIST_DETERMINISTIC=1 for
   * 1). A communicator from dist_comm_split takes its parent's timing, stall
   * warning and deterministic settings. */
  int32_t deterministic;
} dist_comm_options_t;

#ifdef __cplusplus
#  define DIST_COMM_OPTIONS_INIT {}
#else
#  define DIST_COMM_OPTIONS_INIT {0}
#endif

/* Applies to calls made after it; not concurrently with calls on the comm. */
DIST_EXPORT dist_status_t dist_comm_configure(dist_comm_t* comm, const dist_comm_options_t* options);

/* ==== Collectives ================================================================
 *
 * Buffers are described by dist_buffer_t. Element types and reductions: */
typedef int32_t dist_dtype_t;
#define DIST_DTYPE_I8   0
#define DIST_DTYPE_U8   1
#define DIST_DTYPE_I32  2
#define DIST_DTYPE_U32  3
#define DIST_DTYPE_I64  4
#define DIST_DTYPE_U64  5
#define DIST_DTYPE_F16  6  /* IEEE binary16; reduced in f32 */
#define DIST_DTYPE_BF16 7  /* bfloat16; reduced in f32 */
#define DIST_DTYPE_F32  8
#define DIST_DTYPE_F64  9

typedef int32_t dist_op_t;
#define DIST_OP_SUM  0  /* integers wrap modulo 2^bits */
#define DIST_OP_PROD 1
#define DIST_OP_MIN  2  /* floats: a NaN operand gives NaN */
#define DIST_OP_MAX  3
#define DIST_OP_MEAN 4  /* SUM divided by the communicator size; integers truncate */

typedef int32_t dist_memory_kind_t;
#define DIST_MEMORY_HOST 0
#define DIST_MEMORY_CUDA 1  /* device (or managed) memory of a CUDA device */

typedef struct dist_buffer {
  void* data;
  uint64_t count;                 /* elements */
  dist_dtype_t dtype;
  dist_memory_kind_t memory_kind; /* DIST_MEMORY_HOST or DIST_MEMORY_CUDA */
  void* stream;                   /* NULL for host memory; a cudaStream_t for CUDA
                                     memory (NULL: the legacy default stream) */
} dist_buffer_t;

/* CUDA memory (builds with CUDA: dist_build_features; else DIST_ERR_UNSUPPORTED,
 * and DIST_ERR_UNAVAILABLE where no device is usable) is taken by the
 * collectives below except dist_all_to_all_v, and not by dist_send/dist_recv.
 * A call's send and recv lie in the same kind of memory on the same stream; the
 * memory kind is part of the call, so ranks that disagree fail with
 * DIST_ERR_MISMATCH. The call is ordered after the work on that stream only:
 * work the caller put elsewhere must be ordered before it by the caller. In
 * particular a non-blocking stream (as the replicas' are) does not wait for the
 * legacy default stream, where cudaMemset returns at once and cudaMemcpy from
 * pageable memory may return before its copy reached the device; synchronise,
 * or use the Async forms on the call's stream. At a communicator's first call
 * on CUDA memory its ranks
 * choose the path of all such calls together:
 *  - NCCL, where every rank has NCCL (2.18 or later, opened at run time) and its
 *    buffers on a GPU no other rank of the communicator uses, unless a rank sets
 *    DIST_NCCL=0. The NCCL communicator is made then, on that call's device,
 *    over the context (its setup fails on every rank, naming each rank's reason,
 *    or succeeds on all); later calls must use the same device. Each call is
 *    enqueued on the stream before it returns. A blocking call returns once its
 *    result is on the device; a request completes then (its callback runs on the
 *    library's watchdog thread). A call not done by the communicator's deadline,
 *    a lost peer or dist_context_abort aborts the NCCL communicator and fails
 *    every pending and later call on every rank. NCCL's arithmetic: f16 and
 *    bf16 are summed in their own precision, MEAN of floats scales each
 *    contribution by 1/n before the sum (integers: sum, then truncating
 *    division, as on the host), MIN and MAX on NaN are NCCL's.
 *  - Staged, everywhere else: the input is copied to pinned host memory on the
 *    stream, the host algorithms run on the copy (results bit for bit those of
 *    host buffers), and the result is copied back on the stream. Blocking: the
 *    call waits for the stream's work before it (within the communicator's
 *    timeout), runs, and returns once the result is on the device. With a
 *    request: all of the call's stream work is enqueued before it returns, so
 *    work enqueued on the stream afterwards sees the result; the stream is held
 *    (a host function) until the communicator has run the call. The request
 *    completes once the result is on the device; its completion callback then
 *    runs on CUDA's host-function thread and must not call CUDA. A call that
 *    fails still copies back (the result is then undefined).
 * The calling thread's current device must be the buffers' device. */

/* Every collective is called by every member of the communicator, in the same
 * order, with matching arguments; ranks that disagree (kind, dtype, count, op,
 * root) all fail with DIST_ERR_MISMATCH naming both sides. (A rank whose part of
 * the call only sends, such as a broadcast root, may complete it and fail at its
 * next call on the communicator instead.) A NULL `send` means in place. With c = the count each rank contributes and n = the communicator size:
 *
 *   dist_all_reduce      send c, recv c (in place: recv holds the input)
 *   dist_reduce          send c, recv c at the root (recv may be NULL elsewhere)
 *   dist_broadcast       buffer c, sent from the root to all
 *   dist_all_gather      send c, recv n*c, rank r's block at r*c (in place: the
 *                        own block is already in recv)
 *   dist_reduce_scatter  send n*c, recv c = block r of the reduction (in place:
 *                        recv holds n*c inputs, the result lands in its first c)
 *   dist_all_to_all      send n*c, recv n*c; block j of rank i's send becomes
 *                        block i of rank j's recv (in place: recv holds the input)
 *   dist_barrier         no buffers
 *
 * `request` NULL: the call blocks until done and returns its status. Non-NULL:
 * the call returns at once with a request; the buffers must stay untouched until
 * the request completes. Calls on a communicator run in call order, blocking or
 * not. Each call fails by the communicator's deadline at the latest. */
typedef struct dist_request dist_request_t;

DIST_EXPORT dist_status_t dist_all_reduce(dist_comm_t* comm, const dist_buffer_t* send,
                                          const dist_buffer_t* recv, dist_op_t op,
                                          dist_request_t** request);
DIST_EXPORT dist_status_t dist_reduce(dist_comm_t* comm, const dist_buffer_t* send,
                                      const dist_buffer_t* recv, dist_op_t op, int32_t root,
                                      dist_request_t** request);
DIST_EXPORT dist_status_t dist_broadcast(dist_comm_t* comm, const dist_buffer_t* buffer,
                                         int32_t root, dist_request_t** request);
DIST_EXPORT dist_status_t dist_all_gather(dist_comm_t* comm, const dist_buffer_t* send,
                                          const dist_buffer_t* recv, dist_request_t** request);
DIST_EXPORT dist_status_t dist_reduce_scatter(dist_comm_t* comm, const dist_buffer_t* send,
                                              const dist_buffer_t* recv, dist_op_t op,
                                              dist_request_t** request);
DIST_EXPORT dist_status_t dist_all_to_all(dist_comm_t* comm, const dist_buffer_t* send,
                                          const dist_buffer_t* recv, dist_request_t** request);
DIST_EXPORT dist_status_t dist_barrier(dist_comm_t* comm, dist_request_t** request);

/* The algorithm a communicator runs for one collective whose contribution per rank
 * is `bytes` bytes (the input of all_reduce/reduce/broadcast/all_gather, each rank's
 * result of reduce_scatter, one block of all_to_all), given its path, rank count and
 * configuration: "shm_direct", "shm_read_write", "shm_split", "shm_split_single_copy",
 * "shm_single_copy", "shm" (the other shared-memory collectives), "ring",
 * "rabenseifner", "recursive_doubling", "reduce_binomial", "broadcast_binomial",
 * "broadcast_scatter_allgather", "allgather_ring", "reduce_scatter_ring",
 * "alltoall_pairwise", "barrier_dissemination", or "self" (one rank): a row's
 * name in the library's table of algorithms. The string is static. For
 * benchmarks and logs.
 * The single-copy ones copy straight between the ranks' own buffers, where the
 * system lets processes read each other's memory and DIST_SHM_SINGLE_COPY is
 * not 0: "shm_read_write" is all_reduce in place from 64 KiB with a core for
 * every rank (each rank reads its slice of the others' inputs and writes the
 * result into their buffers), which this call, naming the algorithm for a call
 * into a separate result, does not report; "shm_split_single_copy" is all_reduce from 256 KiB (each rank writes
 * its reduced slice into the others' results), named for a call into a
 * separate result, where it runs to 16 MiB; in place it runs to 64 MiB (with
 * more ranks than cores: 4 and 16 MiB); "shm_single_copy" is all_gather for
 * blocks from 32 KiB to 16 MiB, all_to_all out of place for blocks from
 * 32 KiB (with more ranks than cores: 128 KiB to 16 MiB) and broadcast from
 * 32 KiB with a core for every rank (the others read most of the root's
 * buffer, the root writes the rest into theirs).
 * Out of place from 256 KiB to 16 MiB with a core for every rank, which of
 * "shm_split_single_copy" and "shm_read_write" is faster depends on the
 * machine's state, so the communicator learns it call by call (rank 0 times
 * its calls and decides for every rank; the other is tried every 32nd call):
 * this call names the first, and the counters (dist_comm_stats) say which ran. */
typedef int32_t dist_collective_t;
#define DIST_COLLECTIVE_ALL_REDUCE     0
#define DIST_COLLECTIVE_REDUCE         1
#define DIST_COLLECTIVE_BROADCAST      2
#define DIST_COLLECTIVE_ALL_GATHER     3
#define DIST_COLLECTIVE_REDUCE_SCATTER 4
#define DIST_COLLECTIVE_ALL_TO_ALL     5
#define DIST_COLLECTIVE_BARRIER        6
#define DIST_COLLECTIVE_ALL_TO_ALL_V   7 /* dist_all_to_all_v; bytes: its largest block */

DIST_EXPORT dist_status_t dist_comm_algorithm(const dist_comm_t* comm, dist_collective_t collective, uint64_t bytes,
                                              const char** name);

/* Counters. Each communicator counts its calls per collective, path and
 * algorithm: the calls past their argument checks (a call refused for its
 * arguments is not counted), those of them that failed (under the algorithm
 * that would have run them, when they failed before it started), the bytes they carried per rank (count times the dtype's size: per
 * block for all_gather and all_to_all, every block sent for all_to_all_v, none
 * for a barrier) and, for the calls timed, their time on this rank from the
 * call to its return (or to its end on the communicator's thread, for a call
 * with a request). Timing is off by default, because reading the clock twice
 * costs a third of an 8-byte all-reduce on one host; DIST_COMM_TIMING=1 turns
 * it on for every communicator, dist_comm_configure's timing for one.
 * Calls on CUDA memory have rows of their own, path DIST_COMM_PATH_NCCL or
 * _STAGED and algorithm "nccl" or "staged"; a staged call also counts on the
 * host path it travels through, and one with a request counts, untimed, when
 * it is submitted. Point-to-point messages (dist_send, dist_recv) are not
 * counted. */
typedef struct dist_comm_stat {
  dist_collective_t collective; /* DIST_COLLECTIVE_* */
  dist_comm_path_t path;        /* DIST_COMM_PATH_* */
  const char* algorithm;        /* static: dist_comm_algorithm's name, or "self", "nccl", "staged" */
  uint64_t calls;
  uint64_t failed;
  uint64_t bytes;
  uint64_t timed_calls;         /* the calls time_ns covers */
  uint64_t time_ns;
  uint64_t reserved[4];         /* zero; room for later counters */
} dist_comm_stat_t;

/* Writes up to `capacity` rows (in the order they first ran; only rows with
 * calls) to stats, and the number of rows there are to *count: call it with
 * capacity 0 (stats may then be NULL) to size the array. May run while calls
 * run on comm, from any thread; a row is then as of some moment in its call. */
DIST_EXPORT dist_status_t dist_comm_stats(const dist_comm_t* comm, dist_comm_stat_t* stats, uint64_t capacity,
                                          uint64_t* count);
/* Sets every counter of comm to zero; not concurrently with calls on comm. */
DIST_EXPORT dist_status_t dist_comm_stats_reset(dist_comm_t* comm);

/* Requests. Thread rules: a request may be tested or waited on from any thread,
 * one thread at a time. */

/* *done = 1 when complete; the return value is then the call's status. */
DIST_EXPORT dist_status_t dist_request_test(dist_request_t* request, int32_t* done);
/* Waits up to timeout_ms (negative: until the call ends, which its deadline
 * bounds). DIST_ERR_TIMEOUT here means only that this wait ran out; the request
 * stays valid. Otherwise returns the call's status. */
DIST_EXPORT dist_status_t dist_request_wait(dist_request_t* request, int64_t timeout_ms);
/* Releases the handle; a call still running finishes in the background (its
 * buffers must stay valid until it does). NULL is a no-op. */
DIST_EXPORT void dist_request_free(dist_request_t* request);

/* ==== Uneven all-to-all ====
 * A collective, ordered with the others: rank i sends send_counts[j] elements,
 * starting at element send_offsets[j] of send, to rank j, and receives
 * recv_counts[j] elements from rank j into recv starting at element
 * recv_offsets[j]. The four arrays have one entry per communicator rank;
 * NULL offsets mean the blocks are packed in rank order (offset j = sum of the
 * counts before j). send_counts[j] on rank i must equal recv_counts[i] on rank j,
 * else the ranks concerned fail with DIST_ERR_MISMATCH naming both sides. send
 * and recv have the same dtype, hold every block they name, and do not overlap
 * (no in-place form: send must not be NULL). Zero counts are allowed. */
DIST_EXPORT dist_status_t dist_all_to_all_v(dist_comm_t* comm, const dist_buffer_t* send,
                                            const uint64_t* send_counts, const uint64_t* send_offsets,
                                            const dist_buffer_t* recv, const uint64_t* recv_counts,
                                            const uint64_t* recv_offsets, dist_request_t** request);

/* ==== Point to point ====
 * Messages between two ranks of a communicator, apart from its collectives: a
 * send or receive neither waits for nor holds up the communicator's collectives
 * (and collectives do not wait for them). A receive matches the oldest unmatched
 * send from `peer` to this rank with the same tag; messages with one (peer, tag)
 * arrive in the order sent. Tags are 0 .. DIST_TAG_MAX. DIST_ANY_SOURCE as the
 * receive's peer matches a send from any rank (dist_request_source tells which).
 * A matched pair must agree on dtype and count: otherwise the receive fails
 * with DIST_ERR_MISMATCH naming both sides (the send completes). A send to or a
 * receive from oneself is DIST_ERR_INVALID_ARGUMENT. Each call fails by the
 * communicator's deadline at the latest (DIST_ERR_TIMEOUT: no peer matched it),
 * with DIST_ERR_PEER_FAILED when the peer is gone, and when the communicator
 * has failed or been aborted (DIST_ERR_ABORTED after dist_context_abort, as
 * every call then). `request` NULL blocks until done (a send: until
 * its buffer may be reused). A communicator whose id is 32768 or more, or that
 * holds context ranks from 65536 on, cannot carry them (DIST_ERR_UNSUPPORTED):
 * the UCX tag holds communicator, sender and tag. */
#define DIST_ANY_SOURCE (-1)
#define DIST_TAG_MAX 0x7FFFFFFF
DIST_EXPORT dist_status_t dist_send(dist_comm_t* comm, const dist_buffer_t* buffer, int32_t peer,
                                    int32_t tag, dist_request_t** request);
DIST_EXPORT dist_status_t dist_recv(dist_comm_t* comm, const dist_buffer_t* buffer, int32_t peer,
                                    int32_t tag, dist_request_t** request);
/* The communicator rank a completed receive came from. DIST_ERR_INVALID_ARGUMENT
 * for a request that is not a receive or has not completed successfully. */
DIST_EXPORT dist_status_t dist_request_source(dist_request_t* request, int32_t* source);

/* ==== Completion callbacks ====
 * Instead of a thread that waits: `callback` runs exactly once when the
 * request's call completes, with its status and message ("" on success; valid
 * only during the callback), on the thread that completed it (a library
 * thread), or at once on this thread when it has already completed. It must
 * return quickly and must not block on the same communicator (no blocking
 * collective, no dist_request_wait on a request of it). At most one callback per
 * request: a second is DIST_ERR_INVALID_ARGUMENT. The request may be freed
 * before the callback ran; the callback still runs. Works for every request
 * (collectives, all_to_all_v, send, recv). */
typedef void (*dist_request_callback_t)(void* user_data, dist_status_t status, const char* message);
DIST_EXPORT dist_status_t dist_request_on_complete(dist_request_t* request,
                                                   dist_request_callback_t callback, void* user_data);

/* ==== Strategies ==================================================================
 *
 * tf.distribute's programming model. A strategy owns the local replicas of a
 * model (one thread each while it runs), the communicator that keeps workers in
 * sync, and the variables created through it. Kinds:
 *
 *   ONE_DEVICE             one replica on this process; no communication.
 *   MIRRORED               one replica per local device, variables mirrored on
 *                          each: the logical CPU devices of num_cpu_devices, or
 *                          when it is unset one replica per GPU this process can
 *                          use (devices "GPU:i"; replica i's thread is the one
 *                          to drive GPU i: the library makes GPU i its current
 *                          device and gives it a stream, dist_replica_device
 *                          and dist_replica_stream) and one CPU device without
 *                          GPUs. CPU replicas take host memory; GPU replicas
 *                          take CUDA memory on their own device (or host
 *                          memory) in dist_replica_all_reduce and
 *                          dist_strategy_reduce, combined by the strategy's
 *                          cross-device ops (dist_cross_device_ops_t).
 *   MULTI_WORKER_MIRRORED  MIRRORED on every member of the context (chief and
 *                          workers), kept in sync by all-reduce over a private
 *                          communicator split from the world (collective
 *                          creation); every worker must have the same number of
 *                          local replicas. A NULL context is one worker alone.
 *   CENTRAL_STORAGE        one process; ON_WRITE variables are held once on the
 *                          host (on the GPU when there is exactly one GPU
 *                          replica, as TF places them), computation is
 *                          replicated on the local devices and updates are
 *                          aggregated before they are applied.
 *   PARAMETER_SERVER       tf.distribute's ParameterServerStrategy: variables live
 *                          on the tasks of the cluster's "ps" job (standard
 *                          servers: dist-server or dist_server_start), every
 *                          read and update is a request to them. Workers run
 *                          the same program independently, asynchronously to
 *                          each other: no cross-worker collective,
 *                          num_replicas_in_sync = local replicas (as for
 *                          MIRRORED: num_cpu_devices, else one per GPU, else 1).
 *                          The cluster is the context's, else options.cluster;
 *                          the token is options.token / token_file, else
 *                          DIST_CLUSTER_TOKEN, else DIST_CLUSTER_TOKEN_FILE.
 *                          This worker is the cluster's task (chief first, then
 *                          the workers: worker_index and num_workers). Servers
 *                          are connected when first used; a server that is down
 *                          or dies fails the calls that need it with
 *                          DIST_ERR_UNAVAILABLE or DIST_ERR_PEER_FAILED naming
 *                          it ("parameter server ps:1 (host:port) ..."), and
 *                          the next call reconnects once it is back at the same
 *                          address (re-creating this worker's variables there;
 *                          a server restarted with its checkpoint_dir restores
 *                          them from its latest checkpoint).
 *
 * Replicas are numbered in the sync group worker-major: replica id =
 * worker rank * local replicas + local index. "Cross-replica context" is the
 * thread that created the strategy (outside dist_strategy_run) and the body of a
 * merge call; "replica context" is the body of a replica function, named by its
 * dist_replica_context_t.
 *
 * Collective calls: in MULTI_WORKER_MIRRORED the calls that say "collective"
 * must be made by every worker in the same order with matching arguments (as
 * every worker runs the same training program).
 *
 * Thread rules: a strategy and its variables are used from one cross-replica
 * thread at a time; inside dist_strategy_run, each replica thread uses only its
 * own dist_replica_context_t and the variable calls that take it. Cross-replica
 * calls (reduce, apply_gradients, variable creation, variable calls without a
 * replica context, ...) made inside a replica function outside a merge call
 * fail with DIST_ERR_INVALID_ARGUMENT. A variable keeps its strategy's state
 * alive, so the two handles may be destroyed in either order; the context must
 * outlive both.
 * ================================================================================ */

typedef struct dist_strategy dist_strategy_t;
typedef struct dist_replica_context dist_replica_context_t;

typedef int32_t dist_strategy_kind_t;
#define DIST_STRATEGY_ONE_DEVICE            0
#define DIST_STRATEGY_MIRRORED              1
#define DIST_STRATEGY_MULTI_WORKER_MIRRORED 2
#define DIST_STRATEGY_CENTRAL_STORAGE       3
#define DIST_STRATEGY_PARAMETER_SERVER      4

/* Cross-worker communication (TF's CommunicationImplementation) of
 * MULTI_WORKER_MIRRORED. On GPU replicas, values on the devices are first
 * combined on each worker by the cross-device ops, then:
 *   AUTO  the communicator's own choice for CUDA memory (NCCL between workers
 *         on distinct GPUs, else staged through host memory), by size on host
 *         memory;
 *   RING  host ring all-reduce for every size (device values staged through
 *         pinned host memory);
 *   NCCL  one NCCL communicator over every replica of every worker (each
 *         replica thread one NCCL rank on its GPU, the cross-device ops
 *         unused): needs a build with NCCL, NCCL at run time and GPU replicas
 *         on distinct GPUs (else DIST_ERR_UNSUPPORTED at creation, or
 *         DIST_ERR_UNAVAILABLE, on every rank, at the first all-reduce). */
typedef int32_t dist_communication_t;
#define DIST_COMMUNICATION_AUTO 0
#define DIST_COMMUNICATION_RING 1
#define DIST_COMMUNICATION_NCCL 2

/* How GPU replicas of one worker combine their values (TF's CrossDeviceOps),
 * for MIRRORED and the local step of MULTI_WORKER_MIRRORED:
 *   AUTO                     TF's rule: NCCL_ALL_REDUCE when every replica is
 *                            a GPU and NCCL is available, else
 *                            REDUCTION_TO_ONE_DEVICE;
 *   NCCL_ALL_REDUCE          one NCCL communicator over the local GPUs;
 *   HIERARCHICAL_COPY        the replicas split into two halves; each half is
 *                            summed on its first GPU by peer copies, the two
 *                            sums are exchanged, and each half gets the total
 *                            back by copies (TF's HierarchicalCopyAllReduce);
 *   REDUCTION_TO_ONE_DEVICE  every value copied to reduce_to_device, summed
 *                            there in replica order, and copied back.
 * Results on GPUs follow the host's arithmetic (its element-wise kernels and
 * their f16/bf16 rounding, dist_op_t), in replica order, except that
 * HIERARCHICAL_COPY combines the two halves' sums last (another order than
 * the host's for more than two replicas) and NCCL's arithmetic is NCCL's (see
 * CUDA memory above). MEAN is always a sum divided once at the end.
 * CPU replicas always reduce in host memory: only AUTO and
 * REDUCTION_TO_ONE_DEVICE to a CPU device apply to them. */
typedef int32_t dist_cross_device_ops_t;
#define DIST_CROSS_DEVICE_OPS_AUTO                    0
#define DIST_CROSS_DEVICE_OPS_NCCL_ALL_REDUCE         1
#define DIST_CROSS_DEVICE_OPS_HIERARCHICAL_COPY       2
#define DIST_CROSS_DEVICE_OPS_REDUCTION_TO_ONE_DEVICE 3

#define DIST_STRATEGY_OPT_KIND            (1ull << 0)
#define DIST_STRATEGY_OPT_NUM_CPU_DEVICES (1ull << 1)
#define DIST_STRATEGY_OPT_COMMUNICATION   (1ull << 2)
#define DIST_STRATEGY_OPT_BYTES_PER_PACK  (1ull << 3)
#define DIST_STRATEGY_OPT_TIMEOUT_SECONDS (1ull << 4)
#define DIST_STRATEGY_OPT_BIND_THREADS    (1ull << 5)
#define DIST_STRATEGY_OPT_CLUSTER         (1ull << 6)
#define DIST_STRATEGY_OPT_TOKEN           (1ull << 7)
#define DIST_STRATEGY_OPT_TOKEN_FILE      (1ull << 8)
#define DIST_STRATEGY_OPT_PLACEMENT       (1ull << 9)
#define DIST_STRATEGY_OPT_CROSS_DEVICE_OPS (1ull << 10)
#define DIST_STRATEGY_OPT_REDUCE_TO_DEVICE (1ull << 11)
#define DIST_STRATEGY_OPT_NUM_PACKS        (1ull << 12)

/* PARAMETER_SERVER: which server each new variable (each shard of a partitioned
 * one) goes to, in creation order. */
typedef int32_t dist_placement_t;
#define DIST_PLACEMENT_ROUND_ROBIN  0 /* servers 0, 1, 2, ... in turn (TF's default) */
#define DIST_PLACEMENT_GREEDY_BYTES 1 /* the server holding the fewest bytes so far,
                                         the lowest index on ties (TF's
                                         GreedyLoadBalancingStrategy by bytes) */

typedef struct dist_strategy_options {
  uint64_t field_mask;
  dist_strategy_kind_t kind;           /* default DIST_STRATEGY_ONE_DEVICE */
  /* Logical CPU devices = local replicas of MIRRORED, MULTI_WORKER_MIRRORED,
   * CENTRAL_STORAGE and PARAMETER_SERVER (1..64). Default: one per GPU this process can use, else 1.
   * ONE_DEVICE accepts only 1. */
  int32_t num_cpu_devices;
  dist_communication_t communication;  /* default DIST_COMMUNICATION_AUTO */
  /* Gradient fusion bucket size of dist_strategy_apply_gradients and
   * dist_strategy_batch_all_reduce: small tensors are packed together, large
   * ones split. 0 (the default) picks 8 MiB. */
  uint64_t bytes_per_pack;
  /* Deadline of each cross-worker collective, and on GPU replicas of each
   * device all-reduce and reduce; default: the context's (60 without one).
   * PARAMETER_SERVER: of each call's requests to the servers (a synchronous
   * read's wait included); default 60. */
  double timeout_seconds;
  /* Nonzero: each replica thread is bound to its own core, hwloc spreading the
   * local replicas over the cores this process may use. Default 0 (the OS
   * schedules them; better on a machine shared with other jobs). Needs hwloc
   * (DIST_ERR_UNSUPPORTED without it). */
  int32_t bind_threads;
  /* PARAMETER_SERVER: the cluster whose "ps" job holds the variables, when
   * there is no context (borrowed; it must outlive the strategy). With a
   * context, the context's cluster is used and this must be unset. */
  const dist_cluster_t* cluster;
  /* PARAMETER_SERVER: the cluster token the servers expect, or a file holding
   * it; default DIST_CLUSTER_TOKEN, then DIST_CLUSTER_TOKEN_FILE. */
  const char* token;
  const char* token_file;
  /* PARAMETER_SERVER: default DIST_PLACEMENT_ROUND_ROBIN. */
  dist_placement_t placement;
  /* MIRRORED and MULTI_WORKER_MIRRORED (others refuse it): default AUTO. */
  dist_cross_device_ops_t cross_device_ops;
  /* REDUCTION_TO_ONE_DEVICE: "CPU:0" (pinned host memory) or "GPU:i" (local
   * replica i's GPU); default the first replica's device, as TF. Copied. */
  const char* reduce_to_device;
  /* NCCL_ALL_REDUCE and HIERARCHICAL_COPY (as given or as AUTO chose them;
   * others refuse it): dist_strategy_apply_gradients packs each dtype's
   * gradients into this many packs of about equal size (TF's num_packs)
   * instead of buckets of bytes_per_pack. 1..64; default: bytes_per_pack. */
  int32_t num_packs;
} dist_strategy_options_t;

#ifdef __cplusplus
#  define DIST_STRATEGY_OPTIONS_INIT {}
#else
#  define DIST_STRATEGY_OPTIONS_INIT {0}
#endif

/* Creates a strategy. context may be NULL for every kind (a single worker);
 * MULTI_WORKER_MIRRORED with a context is collective over its world.
 * PARAMETER_SERVER needs a cluster with a "ps" job (context or options.cluster)
 * and a cluster token; it is not collective and contacts no server yet. The
 * options cluster, token, token_file and placement are refused by other kinds. */
DIST_EXPORT dist_status_t dist_strategy_create(dist_context_t* context,
                                               const dist_strategy_options_t* options,
                                               dist_strategy_t** strategy);
DIST_EXPORT void dist_strategy_destroy(dist_strategy_t* strategy);

DIST_EXPORT dist_status_t dist_strategy_kind(const dist_strategy_t* strategy,
                                             dist_strategy_kind_t* kind);
/* Replicas in the sync group (all workers) and on this worker. */
DIST_EXPORT dist_status_t dist_strategy_num_replicas_in_sync(const dist_strategy_t* strategy,
                                                             int32_t* count);
DIST_EXPORT dist_status_t dist_strategy_num_local_replicas(const dist_strategy_t* strategy,
                                                           int32_t* count);
/* The i-th local device, "/job:worker/replica:0/task:1/device:CPU:0" (borrowed). */
DIST_EXPORT dist_status_t dist_strategy_device(const dist_strategy_t* strategy, int32_t i,
                                               const char** device);
/* The cross-device ops in effect (AUTO resolved by TF's rule). */
DIST_EXPORT dist_status_t dist_strategy_cross_device_ops(const dist_strategy_t* strategy,
                                                         dist_cross_device_ops_t* ops);
/* The cluster of the strategy's context, or PARAMETER_SERVER's options.cluster
 * (borrowed); NULL without either. */
DIST_EXPORT dist_status_t dist_strategy_cluster(const dist_strategy_t* strategy,
                                                const dist_cluster_t** cluster);
/* This worker's task type ("worker", "chief"; NULL alone) and id (-1 alone). */
DIST_EXPORT dist_status_t dist_strategy_task_type(const dist_strategy_t* strategy,
                                                  const char** task_type);
DIST_EXPORT dist_status_t dist_strategy_task_id(const dist_strategy_t* strategy, int32_t* task_id);
/* This worker's index among the workers (the context rank; 0 alone) and their
 * count. PARAMETER_SERVER: the same (without a context: this task's place
 * among the chief and workers of options.cluster), though its workers do not
 * sync. */
DIST_EXPORT dist_status_t dist_strategy_worker_index(const dist_strategy_t* strategy,
                                                     int32_t* index, int32_t* num_workers);

/* ---- Running replicas ---------------------------------------------------------- */

typedef dist_status_t (*dist_replica_fn_t)(dist_replica_context_t* replica, void* user_data);

/* Calls fn(replica, user_data) once per local replica, each on its own thread
 * (a single local replica runs on the calling thread), and returns when all have
 * returned. A replica fails by returning an error status;
 * the call then fails with the first failing replica's status and message
 * ("replica 1: ..."), and replicas waiting for it in a replica all-reduce or merge
 * call are released with DIST_ERR_ABORTED. (Other workers of a
 * MULTI_WORKER_MIRRORED strategy learn of it when their collective with this
 * worker times out.) Not re-entrant: fn must not call dist_strategy_run. */
DIST_EXPORT dist_status_t dist_strategy_run(dist_strategy_t* strategy, dist_replica_fn_t fn,
                                            void* user_data);

/* Inside fn: the replica's id in the sync group, the group's size, its local index.
 * A dist_replica_context_t is valid only during the fn call it was given to. */
DIST_EXPORT dist_status_t dist_replica_id(const dist_replica_context_t* replica, int32_t* id);
DIST_EXPORT dist_status_t dist_replica_num_replicas_in_sync(const dist_replica_context_t* replica,
                                                            int32_t* count);
DIST_EXPORT dist_status_t dist_replica_local_index(const dist_replica_context_t* replica,
                                                   int32_t* index);
DIST_EXPORT dist_status_t dist_replica_strategy(const dist_replica_context_t* replica,
                                                dist_strategy_t** strategy);
/* The CUDA device (ordinal under CUDA_VISIBLE_DEVICES) this replica drives, -1
 * for a CPU replica; it is the replica thread's current device while fn runs. */
DIST_EXPORT dist_status_t dist_replica_device(const dist_replica_context_t* replica, int32_t* device);
/* The replica's CUDA stream (a cudaStream_t, non-blocking, owned by the
 * strategy and the same in every run), NULL for a CPU replica. Device buffers
 * whose dist_buffer_t names no stream (NULL) are taken as ordered on the
 * legacy default stream, as elsewhere. */
DIST_EXPORT dist_status_t dist_replica_stream(const dist_replica_context_t* replica, void** stream);

/* All-reduces `buffer` in place across every replica in sync: every local
 * replica calls it with the same dtype, count and op (a mismatch fails all of
 * them), the local values are combined, then across workers; each replica gets
 * the same result. MEAN divides by num_replicas_in_sync (integers truncate).
 * On GPU replicas the buffer may be CUDA memory on the replica's own device
 * (every local replica passing the same memory kind), ordered on
 * buffer->stream: the work is enqueued there and the call returns once the
 * result is on the device, or fails by the strategy's timeout (the buffer's
 * contents are then undefined, and work the call enqueued may still run on
 * the replicas' streams). */
DIST_EXPORT dist_status_t dist_replica_all_reduce(dist_replica_context_t* replica, dist_op_t op,
                                                  const dist_buffer_t* buffer);

/* A function run once in cross-replica context: values[i] is what local replica
 * i passed to dist_replica_merge_call, user_data what local replica 0 passed. */
typedef dist_status_t (*dist_merge_fn_t)(dist_strategy_t* strategy, void* const* values,
                                       int32_t num_values, void* user_data);

/* Every local replica calls it; fn runs once (on one of their threads) when all
 * have arrived, and each replica's call returns fn's status. */
DIST_EXPORT dist_status_t dist_replica_merge_call(dist_replica_context_t* replica, dist_merge_fn_t fn,
                                                  void* value, void* user_data);

/* Records this replica's result of the current run (copied): what
 * dist_strategy_local_results returns afterwards. */
DIST_EXPORT dist_status_t dist_replica_set_result(dist_replica_context_t* replica,
                                                  const dist_buffer_t* value);

/* The results the local replicas set in the last dist_strategy_run, in local
 * replica order (*count = local replicas; a replica that set none has count 0
 * and data NULL). Borrowed until the next run or destroy. */
DIST_EXPORT dist_status_t dist_strategy_local_results(const dist_strategy_t* strategy,
                                                      const dist_buffer_t** results,
                                                      int32_t* count);

/* ---- Reducing per-replica values (collective) ---------------------------------- */

#define DIST_AXIS_NONE (-1)

/* TF's strategy.reduce(op, value, axis), in cross-replica context. op is
 * DIST_OP_SUM or DIST_OP_MEAN; values[i] is local replica i's value
 * (num_values = local replicas).
 *   axis DIST_AXIS_NONE: every value has result->count elements; the result is
 *     their element-wise sum (or mean over num_replicas_in_sync) over all replicas.
 *   axis 0: values[i] holds rows_i rows of result->count elements (a batch; rows
 *     may differ, e.g. a partial last batch, and may be 0); the result sums the
 *     rows of every replica, and MEAN divides by the true number of rows in the
 *     whole group (it fails when that is 0).
 * Integers truncate a MEAN. On GPU replicas, the values may be CUDA memory
 * (all of one memory kind; each ordered on its stream) and the result CUDA
 * memory or host memory:
 * the values are combined in host memory in replica order (the same bits as
 * host values) and the call returns once the result is in place. */
DIST_EXPORT dist_status_t dist_strategy_reduce(dist_strategy_t* strategy, dist_op_t op,
                                               const dist_buffer_t* values, int32_t num_values,
                                               int32_t axis, const dist_buffer_t* result);

/* ---- Input ---------------------------------------------------------------------
 * TF's InputContext: how many input pipelines read data (one per worker), which
 * one this is, and how a global batch divides among replicas. Immutable: any
 * thread. */

typedef struct dist_input_context dist_input_context_t;

DIST_EXPORT dist_status_t dist_input_context_create(int32_t num_input_pipelines,
                                                    int32_t input_pipeline_id,
                                                    int32_t num_replicas_in_sync,
                                                    dist_input_context_t** input);
/* The strategy's: one pipeline per worker, this worker's index. */
DIST_EXPORT dist_status_t dist_strategy_input_context(const dist_strategy_t* strategy,
                                                      dist_input_context_t** input);
DIST_EXPORT void dist_input_context_destroy(dist_input_context_t* input);
DIST_EXPORT dist_status_t dist_input_context_num_input_pipelines(const dist_input_context_t* input,
                                                                 int32_t* count);
DIST_EXPORT dist_status_t dist_input_context_input_pipeline_id(const dist_input_context_t* input,
                                                               int32_t* id);
DIST_EXPORT dist_status_t dist_input_context_num_replicas_in_sync(const dist_input_context_t* input,
                                                                  int32_t* count);
/* global_batch_size / num_replicas_in_sync; DIST_ERR_INVALID_ARGUMENT when it
 * does not divide. */
DIST_EXPORT dist_status_t dist_input_context_per_replica_batch_size(
    const dist_input_context_t* input, int64_t global_batch_size, int64_t* per_replica);
/* The files this pipeline reads: file i belongs to pipeline i % num_input_pipelines
 * (TF's FILE auto-sharding). indices receives up to `capacity` file indices in
 * increasing order and *count how many this pipeline gets. Fewer files than
 * pipelines is DIST_ERR_INVALID_ARGUMENT naming the pipelines that would get
 * none (shard by data instead). */
DIST_EXPORT dist_status_t dist_input_context_shard_files(const dist_input_context_t* input,
                                                         int64_t num_files, int64_t* indices,
                                                         int64_t capacity, int64_t* count);
/* This pipeline's contiguous part of the index range [0, total): the first
 * total % pipelines parts are one longer. *count is 0 when total < pipelines and
 * this pipeline gets nothing (the call still succeeds; check it). */
DIST_EXPORT dist_status_t dist_input_context_shard_range(const dist_input_context_t* input,
                                                         int64_t total, int64_t* begin,
                                                         int64_t* count);

/* Splits this worker's batch of `rows` rows (batch->count = rows * row elements)
 * across the local replicas without copying: per_replica[i] (num_local_replicas
 * entries) points into batch. Each replica gets ceil(rows / replicas) rows, the
 * last ones fewer (or none) for a partial batch, as TF rebatches. */
DIST_EXPORT dist_status_t dist_strategy_split_batch(const dist_strategy_t* strategy,
                                                    const dist_buffer_t* batch, uint64_t rows,
                                                    dist_buffer_t* per_replica,
                                                    int32_t num_per_replica);

/* ==== Distributed variables =====================================================
 *
 * tf.Variable under a strategy, with tf.VariableSynchronization and
 * tf.VariableAggregation:
 *
 *   synchronization AUTO = ON_WRITE.
 *     ON_WRITE (MirroredVariable): one copy per local replica (CENTRAL_STORAGE:
 *       one copy, on the host, or on the GPU when there is one GPU replica) that
 *       always hold the same value. In replica context
 *       every local replica calls assign*; the values are aggregated across the
 *       sync group by the aggregation, then applied to every copy:
 *         SUM                 the sum of all replicas' values
 *         MEAN                their mean (integers truncate)
 *         ONLY_FIRST_REPLICA  replica 0's value
 *         NONE                an error when more than one replica is in sync
 *       In cross-replica context assign* applies its value to every copy.
 *     ON_READ (SyncOnReadVariable, e.g. metrics): one copy per local replica. In
 *       replica context assign* and read touch only that replica's copy. In
 *       cross-replica context read aggregates all replicas' copies (a collective;
 *       SUM, MEAN or ONLY_FIRST_REPLICA; NONE is an error), assign stores value /
 *       num_replicas_in_sync for SUM (value otherwise) in every copy, and
 *       assign_add/assign_sub are an error for SUM.
 *     NONE: refused, as tf.distribute refuses it, unless the strategy is
 *       ONE_DEVICE (then it is a plain variable).
 *
 * Creation is collective: the chief's (worker 0's) initial value is broadcast so
 * every worker starts identical. Replica-context assign* is collective for
 * ON_WRITE variables (every local replica, every worker).
 *
 * Under PARAMETER_SERVER a variable (AUTO/ON_WRITE; ON_READ is refused, and
 * so is an aggregation other than NONE) lives on the ps tasks, split into
 * shards by rows (its first dimension) when a partitioner is set, the shards
 * placed by the strategy's placement policy, or with options.colocate_with.
 * Every worker that creates the same variables in the same order places them
 * alike (dist_variable_shard tells where); creation is not collective: the
 * first creation of a name on the servers sets its initial value, optimizer
 * and synchronous settings, later ones (other workers, or retries) find it
 * there and leave it. Names are therefore the variables' identities: a
 * strategy refuses a second live variable of the same name (one destroyed may
 * be created again, with the same shape, partitioning and colocation, and
 * finds its values on the servers; other ones are refused).
 * Each read pulls every shard into the caller's buffer (all shards in flight
 * together); each assign* is applied on the servers as it is made, in replica
 * context as in cross-replica context (no aggregation across replicas: N
 * assign_add calls add N values). Updates from several workers are applied
 * atomically per shard, in arrival order. There are no local copies
 * (dist_variable_num_copies is 0). dist_variable_apply_gradient and the row
 * calls below are for these variables only; the options optimizer, the
 * partitioners, colocate_with and the synchronous settings are refused by the
 * other kinds.
 *
 * Synchronous training (options.sync_gradients, TF's SyncReplicasOptimizer):
 * each shard sums the gradients of a round, at most one per worker, until
 * replicas_to_aggregate have arrived, then applies their mean with the
 * optimizer once. A gradient computed from a value more than max_staleness
 * updates old is dropped (a late or backup worker's). After this worker's
 * gradient joined a round, its next dist_variable_read waits until that round
 * has been applied (up to the strategy's timeout, then DIST_ERR_TIMEOUT), so
 * workers step together. With several local replicas, combine their gradients
 * first (dist_replica_all_reduce) and push once per step: a second gradient of
 * one worker in one round is dropped. Sparse gradients (apply_rows) are
 * asynchronous only.
 * ================================================================================ */

typedef struct dist_variable dist_variable_t;

typedef int32_t dist_synchronization_t;
#define DIST_SYNC_AUTO     0
#define DIST_SYNC_ON_WRITE 1
#define DIST_SYNC_ON_READ  2
#define DIST_SYNC_NONE     3

typedef int32_t dist_aggregation_t;
#define DIST_AGGREGATION_NONE               0
#define DIST_AGGREGATION_SUM                1
#define DIST_AGGREGATION_MEAN               2
#define DIST_AGGREGATION_ONLY_FIRST_REPLICA 3

#define DIST_VARIABLE_OPT_NAME            (1ull << 0)
#define DIST_VARIABLE_OPT_DTYPE           (1ull << 1)
#define DIST_VARIABLE_OPT_SHAPE           (1ull << 2)
#define DIST_VARIABLE_OPT_INITIAL_VALUE   (1ull << 3)
#define DIST_VARIABLE_OPT_SYNCHRONIZATION (1ull << 4)
#define DIST_VARIABLE_OPT_AGGREGATION     (1ull << 5)
#define DIST_VARIABLE_OPT_OPTIMIZER       (1ull << 6)
#define DIST_VARIABLE_OPT_NUM_SHARDS      (1ull << 7)
#define DIST_VARIABLE_OPT_MAX_SHARD_BYTES (1ull << 8)
#define DIST_VARIABLE_OPT_MIN_SHARD_BYTES (1ull << 9)
#define DIST_VARIABLE_OPT_MAX_SHARDS      (1ull << 10)
#define DIST_VARIABLE_OPT_COLOCATE_WITH   (1ull << 11)
#define DIST_VARIABLE_OPT_SYNC_GRADIENTS  (1ull << 12)
#define DIST_VARIABLE_OPT_REPLICAS_TO_AGGREGATE (1ull << 13)
#define DIST_VARIABLE_OPT_MAX_STALENESS   (1ull << 14)

#define DIST_MAX_RANK 8

typedef struct dist_variable_options {
  uint64_t field_mask;
  const char* name;                       /* default "Variable" */
  dist_dtype_t dtype;                     /* default DIST_DTYPE_F32 */
  const int64_t* shape;                   /* default a scalar; dims >= 0 */
  int32_t rank;                           /* 0..DIST_MAX_RANK */
  const void* initial_value;              /* all elements, row-major; default zeros */
  dist_synchronization_t synchronization; /* default DIST_SYNC_AUTO */
  dist_aggregation_t aggregation;         /* default DIST_AGGREGATION_NONE */
  /* PARAMETER_SERVER only. The servers' optimizer of dist_variable_apply_gradient
   * and dist_variable_apply_rows for this variable, with its own
   * hyperparameters (any kind; f32/f64 variables). Read during the call.
   * Unset: gradients are refused. */
  const struct dist_optimizer_options* optimizer;
  /* PARAMETER_SERVER only: the partitioner, which splits the rows (first
   * dimension) into contiguous shards whose sizes differ by at most one row,
   * never more shards than rows. At most one of num_shards, max_shard_bytes and
   * min_shard_bytes; default one shard.
   *   num_shards (>= 1): that many shards (TF's FixedShardsPartitioner);
   *   max_shard_bytes (> 0, at least one row): as few shards as keep each at
   *     most that size, but at most max_shards when it is set (TF's
   *     MaxSizePartitioner);
   *   min_shard_bytes (> 0): the variable's bytes / min_shard_bytes shards
   *     (rounded down), at most max_shards (default 1), at least one (TF's
   *     MinSizePartitioner; a shard can fall short by part of a row). */
  int32_t num_shards;
  uint64_t max_shard_bytes;
  uint64_t min_shard_bytes;
  int32_t max_shards; /* >= 1; with max_shard_bytes or min_shard_bytes only */
  /* PARAMETER_SERVER only: a variable of the same strategy created before;
   * shard i goes to the server of its shard (i mod its shard count). */
  const dist_variable_t* colocate_with;
  /* PARAMETER_SERVER only: nonzero makes apply_gradient synchronous (see
   * above). replicas_to_aggregate (1 .. num_workers of
   * dist_strategy_worker_index, its default) and max_staleness (>= 0, default
   * 0) need it. */
  int32_t sync_gradients;
  int32_t replicas_to_aggregate;
  int32_t max_staleness;
} dist_variable_options_t;

#ifdef __cplusplus
#  define DIST_VARIABLE_OPTIONS_INIT {}
#else
#  define DIST_VARIABLE_OPTIONS_INIT {0}
#endif

/* Collective (see above). The variable keeps its strategy alive. */
DIST_EXPORT dist_status_t dist_variable_create(dist_strategy_t* strategy,
                                               const dist_variable_options_t* options,
                                               dist_variable_t** variable);
DIST_EXPORT void dist_variable_destroy(dist_variable_t* variable);

/* name borrowed; synchronization as resolved (never AUTO). */
DIST_EXPORT dist_status_t dist_variable_name(const dist_variable_t* variable, const char** name);
DIST_EXPORT dist_status_t dist_variable_dtype(const dist_variable_t* variable, dist_dtype_t* dtype);
DIST_EXPORT dist_status_t dist_variable_shape(const dist_variable_t* variable, const int64_t** shape,
                                              int32_t* rank);
DIST_EXPORT dist_status_t dist_variable_count(const dist_variable_t* variable, uint64_t* count);
DIST_EXPORT dist_status_t dist_variable_synchronization(const dist_variable_t* variable,
                                                        dist_synchronization_t* synchronization);
DIST_EXPORT dist_status_t dist_variable_aggregation(const dist_variable_t* variable,
                                                    dist_aggregation_t* aggregation);

/* replica NULL: cross-replica context; otherwise the calling replica's context.
 * Buffers have the variable's dtype and element count.
 * On GPU replicas (dist_replica_device >= 0) each local copy of a variable lives
 * on its replica's GPU (CENTRAL_STORAGE's ON_WRITE variables stay on the host
 * unless there is one GPU replica),
 * and out/value may be CUDA memory (ordered on its stream) as well as host
 * memory; each call returns once its copies are done. Assignments and on-read
 * aggregation pass through host memory with the host's arithmetic (the bits of
 * CPU replicas). A variable held in host memory refuses CUDA memory
 * (DIST_ERR_INVALID_ARGUMENT). */
DIST_EXPORT dist_status_t dist_variable_read(dist_variable_t* variable,
                                             dist_replica_context_t* replica,
                                             const dist_buffer_t* out);
DIST_EXPORT dist_status_t dist_variable_assign(dist_variable_t* variable,
                                               dist_replica_context_t* replica,
                                               const dist_buffer_t* value);
DIST_EXPORT dist_status_t dist_variable_assign_add(dist_variable_t* variable,
                                                   dist_replica_context_t* replica,
                                                   const dist_buffer_t* value);
DIST_EXPORT dist_status_t dist_variable_assign_sub(dist_variable_t* variable,
                                                   dist_replica_context_t* replica,
                                                   const dist_buffer_t* value);
/* ---- Variables on parameter servers (PARAMETER_SERVER only) -------------------
 * replica as for dist_variable_read. Other strategies' variables fail with
 * DIST_ERR_INVALID_ARGUMENT. */

/* Sends `gradient` (the variable's dtype and count) to the servers, where each
 * shard applies it with the variable's optimizer (options.optimizer),
 * asynchronously to other workers, or into the current round when the
 * variable is synchronous. A variable without an optimizer, or of another
 * strategy kind, is DIST_ERR_INVALID_ARGUMENT. */
DIST_EXPORT dist_status_t dist_variable_apply_gradient(dist_variable_t* variable,
                                                       dist_replica_context_t* replica,
                                                       const dist_buffer_t* gradient);
/* Sparse pull of an embedding table: rows[i] (in [0, shape[0])) of the
 * variable into out, count rows of row elements (the product of shape[1..]),
 * in the order given; duplicates are allowed; count 0 does nothing (rows may
 * then be NULL). Only the shards holding them are asked. A scalar is one row.
 * Buffers have the variable's dtype and count * row elements elements; a row
 * out of range is DIST_ERR_INVALID_ARGUMENT before anything is sent. */
DIST_EXPORT dist_status_t dist_variable_read_rows(dist_variable_t* variable,
                                                  dist_replica_context_t* replica,
                                                  const int64_t* rows, uint64_t count,
                                                  const dist_buffer_t* out);
/* Sparse push: adds values' row i to row rows[i] on the servers (scatter-add;
 * a row listed twice gets both). */
DIST_EXPORT dist_status_t dist_variable_add_rows(dist_variable_t* variable,
                                                 dist_replica_context_t* replica,
                                                 const int64_t* rows, uint64_t count,
                                                 const dist_buffer_t* values);
/* Sparse gradient: the optimizer updates rows[i] with gradients' row i
 * (gradients of a row listed twice are summed first: one step per row) and
 * touches no other row (nor its slots). Asynchronous variables only. */
DIST_EXPORT dist_status_t dist_variable_apply_rows(dist_variable_t* variable,
                                                   dist_replica_context_t* replica,
                                                   const int64_t* rows, uint64_t count,
                                                   const dist_buffer_t* gradients);
/* How many shards hold the variable (0 when it is not on parameter servers),
 * and which server (index in the "ps" job) and rows [first_row, first_row +
 * rows) shard i holds. Local queries: no server is asked. */
DIST_EXPORT dist_status_t dist_variable_num_shards(const dist_variable_t* variable, int32_t* count);
DIST_EXPORT dist_status_t dist_variable_shard(const dist_variable_t* variable, int32_t i,
                                              int32_t* server, uint64_t* first_row, uint64_t* rows);

/* Local copy i of the variable as it is stored (a test of the mirroring);
 * *count copies: local replicas, or 1 for CENTRAL_STORAGE ON_WRITE, 0 under
 * PARAMETER_SERVER. out: as for dist_variable_read. */
DIST_EXPORT dist_status_t dist_variable_num_copies(const dist_variable_t* variable, int32_t* count);
DIST_EXPORT dist_status_t dist_variable_read_copy(const dist_variable_t* variable, int32_t i,
                                                  const dist_buffer_t* out);

/* ---- Gradients and optimizers ----------------------------------------------------
 * An optimizer holds the slots (momentum, Adagrad accumulators, Adam moments) of
 * the variables it updates and its step count. It applies the same arithmetic,
 * in the same order, on every worker, so mirrored copies stay bit-identical.
 * On workers that share a host each worker holds current slots only for the
 * elements it updates (see dist_strategy_apply_gradients); a call that lists
 * other variables, or another order, first makes every worker's slots whole
 * again (collective, inside the call). f32 and f64 variables.
 * Thread rules: used by one thread at a time. */

typedef struct dist_optimizer dist_optimizer_t;

typedef int32_t dist_optimizer_kind_t;
#define DIST_OPTIMIZER_SGD      0 /* var -= lr * g */
#define DIST_OPTIMIZER_MOMENTUM 1 /* v = momentum * v - lr * g; var += v (nesterov:
                                     var += momentum * v - lr * g), as Keras SGD */
#define DIST_OPTIMIZER_ADAM     2 /* Keras Adam: m, v moments, bias-corrected lr */
#define DIST_OPTIMIZER_ADAGRAD  3 /* Keras Adagrad: acc += g * g (acc starts at
                                     initial_accumulator_value);
                                     var -= lr * g / (sqrt(acc) + epsilon) */

#define DIST_OPTIMIZER_OPT_KIND          (1ull << 0)
#define DIST_OPTIMIZER_OPT_LEARNING_RATE (1ull << 1)
#define DIST_OPTIMIZER_OPT_MOMENTUM      (1ull << 2)
#define DIST_OPTIMIZER_OPT_NESTEROV      (1ull << 3)
#define DIST_OPTIMIZER_OPT_BETA_1        (1ull << 4)
#define DIST_OPTIMIZER_OPT_BETA_2        (1ull << 5)
#define DIST_OPTIMIZER_OPT_EPSILON       (1ull << 6)
#define DIST_OPTIMIZER_OPT_INITIAL_ACCUMULATOR_VALUE (1ull << 7)

typedef struct dist_optimizer_options {
  uint64_t field_mask;
  dist_optimizer_kind_t kind; /* default DIST_OPTIMIZER_SGD */
  double learning_rate;       /* default 0.01 (Adam: 0.001); > 0 */
  double momentum;            /* MOMENTUM; default 0.9; in [0, 1) */
  int32_t nesterov;           /* MOMENTUM; default 0 */
  double beta_1;              /* ADAM; default 0.9; in [0, 1) */
  double beta_2;              /* ADAM; default 0.999; in [0, 1) */
  double epsilon;             /* ADAM, ADAGRAD; default 1e-7; > 0 */
  double initial_accumulator_value; /* ADAGRAD; default 0.1; >= 0 */
} dist_optimizer_options_t;

#ifdef __cplusplus
#  define DIST_OPTIMIZER_OPTIONS_INIT {}
#else
#  define DIST_OPTIMIZER_OPTIONS_INIT {0}
#endif

DIST_EXPORT dist_status_t dist_optimizer_create(const dist_optimizer_options_t* options,
                                                dist_optimizer_t** optimizer);
DIST_EXPORT void dist_optimizer_destroy(dist_optimizer_t* optimizer);
/* apply_gradients calls made so far (Keras' optimizer.iterations). */
DIST_EXPORT dist_status_t dist_optimizer_iterations(const dist_optimizer_t* optimizer,
                                                    int64_t* iterations);

/* Fused all-reduce of many tensors, in cross-replica context (collective).
 * buffers[r * n + i] is local replica r's tensor i (n tensors per replica, the
 * same counts and dtypes on every replica). Tensors are packed into buckets of
 * bytes_per_pack per dtype (small ones together, large ones split); the next
 * bucket is packed (and the local replicas combined) while the previous one is
 * all-reduced across workers. On workers that share a host there are no
 * buckets: the local replicas' tensors are summed into replica 0's, and each
 * dtype's tensors are all-reduced in one call, read where they lie. The
 * tensors must not overlap in memory. Afterwards every
 * replica's tensor i holds the sum (or mean over num_replicas_in_sync) over all
 * replicas. op: SUM or MEAN. On GPU replicas the tensors may all be CUDA
 * memory (each on its replica's GPU): each is all-reduced as by
 * dist_replica_all_reduce, in turn, without fusion. */
DIST_EXPORT dist_status_t dist_strategy_batch_all_reduce(dist_strategy_t* strategy, dist_op_t op,
                                                         const dist_buffer_t* buffers, size_t n);

/* Cross-replica (collective): grads[r * n + i] is local replica r's gradient of
 * vars[i] (distinct ON_WRITE variables of this strategy, f32/f64, gradients of
 * the same dtype and count that do not overlap in memory). The gradients are
 * mean-all-reduced over the sync group in fused buckets as dist_strategy_batch_all_reduce does, then the optimizer
 * updates every copy of every variable. On workers that share a host, the
 * optimizer updates each part of a variable as soon as that part of its
 * gradient is reduced, in the same pass: each part is updated by one worker,
 * which keeps that part's slots, and the new weights are shared with the
 * others (the same bits everywhere). The gradient buffers are scratch: what
 * they hold afterwards is unspecified (they may hold partial or complete sums
 * over the replicas).
 * On GPU replicas (variables on the GPUs) the gradients may be CUDA memory on
 * their replica's GPU (ordered on their streams) or host memory, and are left
 * unchanged: each dtype's gradients are packed into buckets of bytes_per_pack
 * on every GPU, each bucket is all-reduced by the strategy's cross-device ops
 * and communication, and every copy is stepped on its own GPU by the
 * optimizer's CUDA kernels, which follow the host's arithmetic bit for bit.
 * The call returns once every copy is updated; one that fails may have
 * stepped some buckets already (as on the host, where a failed call leaves
 * the variables partly updated). Variables held on the host
 * (CENTRAL_STORAGE over several GPUs) take gradients in CUDA memory too: they
 * are copied to host memory first. */
DIST_EXPORT dist_status_t dist_strategy_apply_gradients(dist_strategy_t* strategy,
                                                        dist_variable_t* const* vars,
                                                        const dist_buffer_t* grads, size_t n,
                                                        dist_optimizer_t* optimizer);
/* ==== Parameter servers ==========================================================
 *
 * A parameter server holds shards of variables and applies the workers' updates
 * to them (tf.distribute's ParameterServerStrategy: variables live on the "ps"
 * tasks, the workers pull them, compute, and push gradients that each server
 * applies with its own optimizer, asynchronously by default). dist_server_start
 * runs the standard server inside the calling process; `dist-server` is the
 * same server as a program.
 *
 * The server listens at its cluster address and serves any number of workers,
 * each on its own connection and thread. Every connection proves the cluster
 * token (the same HMAC handshake as contexts); every request is checked
 * (sizes, ids, row indices) and applied only once received in full, so a worker
 * that dies mid-update changes nothing. Requests from one worker are applied
 * in order; updates from different workers to one shard are serialised, so
 * concurrent integer assign_adds sum exactly.
 *
 * Thread rules: dist_server_stop may be called from any thread at any time
 * (also while another thread is in dist_server_join). dist_server_join and
 * dist_server_address may be called from any thread. dist_server_destroy stops
 * and joins; it must not race with other calls on the same handle.
 * ================================================================================ */

typedef struct dist_server dist_server_t;

/* Receives the server's log lines (what it holds, restores, saves, refuses).
 * Called from the server's threads, possibly concurrently. */
typedef void (*dist_log_fn_t)(const char* message, void* user_data);

#define DIST_SERVER_OPT_ADDRESS        (1ull << 0)
#define DIST_SERVER_OPT_TOKEN          (1ull << 1)
#define DIST_SERVER_OPT_TOKEN_FILE     (1ull << 2)
#define DIST_SERVER_OPT_CHECKPOINT_DIR (1ull << 3)
#define DIST_SERVER_OPT_IO_TIMEOUT_MS  (1ull << 4)
#define DIST_SERVER_OPT_LOG            (1ull << 5)

typedef struct dist_server_options {
  uint64_t field_mask;
  /* "host:port" to listen at; port 0 picks a free port (see dist_server_address).
   * Default: this task's address in the cluster. */
  const char* address;
  /* The cluster token, or a file holding it; default DIST_CLUSTER_TOKEN, then
   * the file named by DIST_CLUSTER_TOKEN_FILE. A server needs one. */
  const char* token;
  const char* token_file;
  /* A checkpoint root (see dist_checkpoint_save): at start the server restores
   * from its LATEST checkpoint, so a restarted server gets its shards back as the
   * workers re-create them. No LATEST is a fresh start; a corrupt or truncated
   * checkpoint makes the start fail. Default: none. */
  const char* checkpoint_dir;
  /* How long a started request may take to arrive in full, or a reply to be
   * taken; default 60000. */
  int64_t io_timeout_ms;
  /* Log sink and its user data; default: no logging. */
  dist_log_fn_t log;
  void* log_user_data;
} dist_server_options_t;

#ifdef __cplusplus
#  define DIST_SERVER_OPTIONS_INIT {}
#else
#  define DIST_SERVER_OPTIONS_INIT {0}
#endif

/* Starts serving in background threads and returns at once. cluster may be
 * NULL when options give the address. DIST_ERR_UNAVAILABLE when the address
 * cannot be bound; DIST_ERR_INVALID_ARGUMENT for a bad option or checkpoint. */
DIST_EXPORT dist_status_t dist_server_start(const dist_cluster_t* cluster,
                                            const dist_server_options_t* options,
                                            dist_server_t** server);
/* The address actually listened at ("127.0.0.1:2222"); borrowed from the server. */
DIST_EXPORT dist_status_t dist_server_address(const dist_server_t* server, const char** address);
/* What the server holds, as JSON: {"address", "stopping", "requests",
 * "variables": [{"id", "name", "dtype", "shape", "row_offset", "rows", "bytes",
 * "optimizer", "version"}, ...]}. The string is the caller's (dist_string_free). */
DIST_EXPORT dist_status_t dist_server_describe(const dist_server_t* server, char** json);
/* Waits until the server has stopped (dist_server_stop, or a stop request from a
 * client) and its threads have ended. timeout_ms < 0 waits without bound;
 * DIST_ERR_TIMEOUT when it is still serving at the timeout. */
DIST_EXPORT dist_status_t dist_server_join(dist_server_t* server, int64_t timeout_ms);
/* Asks the server to stop: it stops accepting, ends every connection within
 * about 100 ms and fails waiting synchronous reads with DIST_ERR_ABORTED. */
DIST_EXPORT dist_status_t dist_server_stop(dist_server_t* server);
/* Stops, joins and frees. NULL is a no-op. */
DIST_EXPORT void dist_server_destroy(dist_server_t* server);

/* ==== Checkpoints of parameter servers ============================================
 *
 * A checkpoint is saved by every parameter server at once, each writing its own
 * shard file (never one giant file), under a root directory that every server
 * and the caller can reach:
 *
 *   <root>/ckpt-<step>/shard-<i>-of-<n>.ckpt   one per server: each shard's slice
 *                                              description, values, optimizer
 *                                              slots and counters
 *   <root>/ckpt-<step>/manifest.json           every shard file's size and SHA-256
 *   <root>/LATEST                              names the newest complete checkpoint
 *
 * Every file is written atomically (temporary name, fsync, rename, fsync of the
 * directory), shard files first, then the manifest, then LATEST: a crash at any
 * point leaves LATEST naming a complete checkpoint. A restore checks every
 * file's size and SHA-256 against the manifest before a single value changes,
 * and refuses a corrupt, truncated or mismatching checkpoint with
 * DIST_ERR_INVALID_ARGUMENT (DIST_ERR_SYSTEM when a file is missing or cannot
 * be read, DIST_ERR_MISMATCH for a variable saved with another dtype or shape)
 * naming the file. Checkpoints restore onto any number
 * of servers and any partitioning: each shard takes its rows from whichever
 * saved slices hold them.
 *
 * Both calls connect to every task of the cluster's "ps" job with the cluster
 * token (options, else DIST_CLUSTER_TOKEN / DIST_CLUSTER_TOKEN_FILE); a server
 * that is down fails the call with DIST_ERR_UNAVAILABLE naming it.
 * Thread rules: any thread; concurrent saves into one root must use different
 * steps.
 * ================================================================================ */

#define DIST_CHECKPOINT_OPT_TOKEN      (1ull << 0)
#define DIST_CHECKPOINT_OPT_TOKEN_FILE (1ull << 1)
#define DIST_CHECKPOINT_OPT_TIMEOUT_MS (1ull << 2)

typedef struct dist_checkpoint_options {
  uint64_t field_mask;
  const char* token;
  const char* token_file;
  int64_t timeout_ms; /* for every server to finish; default 600000 */
} dist_checkpoint_options_t;

#ifdef __cplusplus
#  define DIST_CHECKPOINT_OPTIONS_INIT {}
#else
#  define DIST_CHECKPOINT_OPTIONS_INIT {0}
#endif

/* Saves every server's shards as checkpoint `step` (>= 0) under `root`;
 * *path receives "<root>/ckpt-<step>" (dist_string_free). options may be NULL. */
DIST_EXPORT dist_status_t dist_checkpoint_save(const dist_cluster_t* cluster, const char* root,
                                               int64_t step,
                                               const dist_checkpoint_options_t* options,
                                               char** path);
/* Restores every server from `directory`: a root (its LATEST is used) or one
 * "ckpt-<step>" directory. Shards the servers hold are overwritten; shards
 * created on them later are filled from the checkpoint too. *path receives the
 * checkpoint directory used (dist_string_free). options may be NULL. */
DIST_EXPORT dist_status_t dist_checkpoint_restore(const dist_cluster_t* cluster,
                                                  const char* directory,
                                                  const dist_checkpoint_options_t* options,
                                                  char** path);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DIST_C_API_H */
