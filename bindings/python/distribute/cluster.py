"""Cluster resolution: dist_cluster_t as Cluster."""
import ctypes

from . import constants as C
from ._native import ClusterOptions, encode, lib, take_string, text
from .errors import check
from .handle import HandleOwner

RESOLVERS = {"auto": C.RESOLVER_AUTO, "tf_config": C.RESOLVER_TF_CONFIG, "simple": C.RESOLVER_SIMPLE,
             "slurm": C.RESOLVER_SLURM, "mpi": C.RESOLVER_MPI, "torchrun": C.RESOLVER_TORCHRUN,
             "union": C.RESOLVER_UNION}


def _strings(values, terminated):
    array = (ctypes.c_char_p * (len(values) + int(terminated)))(*[encode(v) for v in values])
    return array


class _OptionsBuilder:
    """Fills dist_cluster_options_t from keyword arguments, setting each field's mask bit.
    Keeps every ctypes object it makes alive until the call is done."""

    _SCALARS = {
        "task_type": (C.CLUSTER_OPT_TASK_TYPE, encode),
        "task_id": (C.CLUSTER_OPT_TASK_ID, int),
        "rpc_layer": (C.CLUSTER_OPT_RPC_LAYER, encode),
        "environment": (C.CLUSTER_OPT_ENVIRONMENT, encode),
        "cluster_spec_json": (C.CLUSTER_OPT_CLUSTER_SPEC, encode),
        "master": (C.CLUSTER_OPT_MASTER, encode),
        "port_base": (C.CLUSTER_OPT_PORT_BASE, int),
        "tasks_per_node": (C.CLUSTER_OPT_TASKS_PER_NODE, int),
        "gpus_per_node": (C.CLUSTER_OPT_GPUS_PER_NODE, int),
        "gpus_per_task": (C.CLUSTER_OPT_GPUS_PER_TASK, int),
        "auto_set_gpu": (C.CLUSTER_OPT_AUTO_SET_GPU, int),
        "num_gpus": (C.CLUSTER_OPT_NUM_GPUS, int),
    }

    def __init__(self):
        self.options = ClusterOptions()
        self.keep = []

    def build(self, resolver, jobs, members, env, fields):
        o = self.options
        if resolver is not None:
            o.field_mask |= C.CLUSTER_OPT_RESOLVER
            o.resolver = RESOLVERS[resolver] if isinstance(resolver, str) else int(resolver)
        for name, value in fields.items():
            if name not in self._SCALARS:
                raise TypeError(f"unknown cluster option '{name}'")
            if value is None:
                continue
            bit, convert = self._SCALARS[name]
            o.field_mask |= bit
            setattr(o, name, convert(value))
        if jobs is not None:
            names = _strings(list(jobs), terminated=False)
            counts = (ctypes.c_int32 * len(jobs))(*jobs.values())
            self.keep += [names, counts]
            o.field_mask |= C.CLUSTER_OPT_JOBS
            o.job_names, o.job_counts, o.num_jobs = names, counts, len(jobs)
        if members is not None:
            handles = (ctypes.c_void_p * len(members))(*[m._live_handle() for m in members])
            self.keep += [handles]
            o.field_mask |= C.CLUSTER_OPT_MEMBERS
            o.members, o.num_members = handles, len(members)
        if env is not None:
            pairs = env.items() if isinstance(env, dict) else [tuple(e.split("=", 1)) for e in env]
            array = _strings([f"{k}={v}" for k, v in pairs], terminated=True)
            self.keep += [array]
            o.field_mask |= C.CLUSTER_OPT_ENV
            o.env = array
        return o


class Cluster(HandleOwner):
    """The resolved view of a cluster (TensorFlow's cluster resolvers).

    Immutable: every query may run concurrently from any number of threads; close()
    (or leaving a `with` block, or garbage collection) releases it.
    """

    def __init__(self, handle, owner=None):
        self._handle = handle
        self._owner = owner  # a borrowed cluster keeps what owns it alive and never destroys it

    @classmethod
    def _borrow(cls, handle, owner):
        return cls(handle, owner)

    @classmethod
    def resolve(cls, resolver=None, *, jobs=None, members=None, env=None, **fields):
        """dist_cluster_resolve. `resolver` is a name ("tf_config", "slurm", ...) or a
        RESOLVER_* value; `jobs` a {name: count} dict; `members` a list of Clusters
        (UNION); `env` a {NAME: value} dict or "NAME=value" list read instead of
        os.environ; the other options (task_type, task_id, rpc_layer, environment,
        cluster_spec_json, master, port_base, tasks_per_node, gpus_per_node,
        gpus_per_task, auto_set_gpu, num_gpus) as keywords."""
        builder = _OptionsBuilder()
        options = builder.build(resolver, jobs, members, env, fields)
        handle = ctypes.c_void_p()
        check(lib.dist_cluster_resolve(ctypes.byref(options), ctypes.byref(handle)))
        return cls(handle)

    @classmethod
    def from_json(cls, document):
        """dist_cluster_from_json: a TF_CONFIG document (or to_json()'s output)."""
        handle = ctypes.c_void_p()
        check(lib.dist_cluster_from_json(encode(document), ctypes.byref(handle)))
        return cls(handle)

    def close(self):
        """Destroys the cluster (a borrowed one, such as Strategy.cluster, is only detached)."""
        handle, self._handle = self._handle, None
        if handle is not None and self._owner is None:
            lib.dist_cluster_destroy(handle)
        self._owner = None

    def _live_handle(self):
        # A closed cluster is NULL: the library then reports the error itself.
        return self._handle

    def _borrowed(self, function, *args):
        return text(self._query(function, *args, ctype=ctypes.c_char_p))

    @property
    def resolver(self):
        """The resolver's name ("tf_config", "slurm", ...)."""
        return resolver_name(self._query(lib.dist_cluster_resolver))

    @property
    def task_type(self):
        return self._borrowed(lib.dist_cluster_task_type)

    @property
    def task_id(self):
        return self._query(lib.dist_cluster_task_id)

    @property
    def rpc_layer(self):
        return self._borrowed(lib.dist_cluster_rpc_layer)

    @property
    def environment(self):
        return self._borrowed(lib.dist_cluster_environment)

    @property
    def jobs(self):
        """Job names, sorted."""
        count = self._query(lib.dist_cluster_num_jobs, ctype=ctypes.c_size_t)
        return [self._borrowed(lib.dist_cluster_job_name, i) for i in range(count)]

    def num_tasks(self, job):
        return self._query(lib.dist_cluster_num_tasks, encode(job))

    def task_indices(self, job):
        """The task indices of a job, increasing (sparse jobs skip some)."""
        return [self._query(lib.dist_cluster_task_index, encode(job), i) for i in range(self.num_tasks(job))]

    def task_address(self, job, task_index):
        return self._borrowed(lib.dist_cluster_task_address, encode(job), task_index)

    def cluster_spec(self):
        """{job: {task index: "host:port"}}."""
        return {job: {i: self.task_address(job, i) for i in self.task_indices(job)} for job in self.jobs}

    def master(self, task_type=None, task_id=-1, rpc_layer=None):
        out = ctypes.c_void_p()
        check(lib.dist_cluster_master(self._handle, encode(task_type), task_id, encode(rpc_layer),
                                      ctypes.byref(out)))
        return take_string(out)

    def num_accelerators(self, device_type="GPU"):
        return self._query(lib.dist_cluster_num_accelerators, encode(device_type))

    @property
    def cuda_visible_devices(self):
        return self._borrowed(lib.dist_cluster_cuda_visible_devices)

    def to_json(self):
        out = ctypes.c_void_p()
        check(lib.dist_cluster_to_json(self._handle, ctypes.byref(out)))
        return take_string(out)


def resolver_name(kind):
    """dist_resolver_name: None for a value that is not a resolver kind."""
    return text(lib.dist_resolver_name(kind))
