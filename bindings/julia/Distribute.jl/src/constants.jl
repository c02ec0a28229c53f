# The #defined constants of include/c_api.h (tools/check_ccalls.py does not check
# these; test/runtests.jl compares them with the header).

const DIST_OK = Int32(0)
const DIST_ERR_INVALID_ARGUMENT = Int32(-1)
const DIST_ERR_UNSUPPORTED = Int32(-2)
const DIST_ERR_NO_MEMORY = Int32(-100)
const DIST_ERR_SYSTEM = Int32(-101)
const DIST_ERR_PEER_FAILED = Int32(-200)
const DIST_ERR_TIMEOUT = Int32(-201)
const DIST_ERR_MISMATCH = Int32(-202)
const DIST_ERR_AUTH = Int32(-203)
const DIST_ERR_UNAVAILABLE = Int32(-204)
const DIST_ERR_ABORTED = Int32(-205)
const DIST_ERR_INTERNAL = Int32(-300)

const DIST_FEATURE_UCX = UInt32(1) << 0
const DIST_FEATURE_CUDA = UInt32(1) << 1
const DIST_FEATURE_NCCL = UInt32(1) << 2
const DIST_FEATURE_HWLOC = UInt32(1) << 3

const RESOLVERS = Dict(:auto => Int32(0), :tf_config => Int32(1), :simple => Int32(2), :slurm => Int32(3),
                       :mpi => Int32(4), :torchrun => Int32(5), :union => Int32(6))

const CLUSTER_OPT_RESOLVER = UInt64(1) << 0
const CLUSTER_OPT_TASK_TYPE = UInt64(1) << 1
const CLUSTER_OPT_TASK_ID = UInt64(1) << 2
const CLUSTER_OPT_RPC_LAYER = UInt64(1) << 3
const CLUSTER_OPT_ENVIRONMENT = UInt64(1) << 4
const CLUSTER_OPT_CLUSTER_SPEC = UInt64(1) << 5
const CLUSTER_OPT_MASTER = UInt64(1) << 6
const CLUSTER_OPT_JOBS = UInt64(1) << 7
const CLUSTER_OPT_PORT_BASE = UInt64(1) << 8
const CLUSTER_OPT_TASKS_PER_NODE = UInt64(1) << 9
const CLUSTER_OPT_GPUS_PER_NODE = UInt64(1) << 10
const CLUSTER_OPT_GPUS_PER_TASK = UInt64(1) << 11
const CLUSTER_OPT_AUTO_SET_GPU = UInt64(1) << 12
const CLUSTER_OPT_MEMBERS = UInt64(1) << 13
const CLUSTER_OPT_ENV = UInt64(1) << 14
const CLUSTER_OPT_NUM_GPUS = UInt64(1) << 15

const CONTEXT_OPT_TOKEN = UInt64(1) << 0
const CONTEXT_OPT_TOKEN_FILE = UInt64(1) << 1
const CONTEXT_OPT_CONNECT_TIMEOUT_MS = UInt64(1) << 2
const CONTEXT_OPT_TIMEOUT_MS = UInt64(1) << 3
const CONTEXT_OPT_TIMELINE = UInt64(1) << 4

const ALLREDUCE_ALGORITHMS = Dict(:auto => Int32(0), :ring => Int32(1), :rabenseifner => Int32(2),
                                  :recursive_doubling => Int32(3), :shared_memory => Int32(4),
                                  :hierarchical => Int32(5))
const COMM_PATHS = Dict(Int32(0) => :self, Int32(1) => :point_to_point, Int32(2) => :shared_memory,
                        Int32(3) => :hierarchical, Int32(4) => :nccl, Int32(5) => :staged)
const COLLECTIVES = Dict(:all_reduce => Int32(0), :reduce => Int32(1), :broadcast => Int32(2),
                         :all_gather => Int32(3), :reduce_scatter => Int32(4), :all_to_all => Int32(5),
                         :barrier => Int32(6), :all_to_all_v => Int32(7))
const COMM_OPT_TIMEOUT_MS = UInt64(1) << 0
const COMM_OPT_ALLREDUCE = UInt64(1) << 1
const COMM_OPT_TIMING = UInt64(1) << 2
const COMM_OPT_STALL_WARNING_MS = UInt64(1) << 3
const COMM_OPT_DETERMINISTIC = UInt64(1) << 4

const DIST_MEMORY_HOST = Int32(0)
const DIST_MEMORY_CUDA = Int32(1)

"A reduction (DIST_OP_*)."
struct ReduceOp
    value::Int32
end
const SUM = ReduceOp(0)
const PROD = ReduceOp(1)
const MIN = ReduceOp(2)
const MAX = ReduceOp(3)
"Sum divided by the communicator size; integers truncate."
const MEAN = ReduceOp(4)
