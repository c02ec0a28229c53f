package distribute

// #include <stdlib.h>
// #include "dist.h"
import "C"

import (
	"runtime"
	"unsafe"
)

// Resolver is which resolver produced, or should produce, a cluster.
type Resolver int32

const (
	ResolverAuto     Resolver = C.DIST_RESOLVER_AUTO
	ResolverTFConfig Resolver = C.DIST_RESOLVER_TF_CONFIG
	ResolverSimple   Resolver = C.DIST_RESOLVER_SIMPLE
	ResolverSlurm    Resolver = C.DIST_RESOLVER_SLURM
	ResolverMPI      Resolver = C.DIST_RESOLVER_MPI
	ResolverTorchrun Resolver = C.DIST_RESOLVER_TORCHRUN
	ResolverUnion    Resolver = C.DIST_RESOLVER_UNION
)

// String is dist_resolver_name ("tf_config", ...), "" for a value that is not a kind.
func (r Resolver) String() string {
	name, _ := borrowed(C.dist_resolver_name(C.dist_resolver_kind_t(r)))
	return name
}

// Job is one entry of ClusterOptions.Jobs.
type Job struct {
	Name  string
	Count int32
}

// ClusterOptions are dist_cluster_options_t. A nil pointer field keeps the
// library's default; the slices are set when non-nil.
type ClusterOptions struct {
	Resolver        *Resolver
	TaskType        *string
	TaskID          *int32
	RPCLayer        *string
	Environment     *string
	ClusterSpecJSON *string // SIMPLE: {"worker": ["h:p", ...]}
	Master          *string
	Jobs            []Job // SLURM, MPI, TORCHRUN: how ranks split into jobs
	PortBase        *int32
	TasksPerNode    *int32
	GPUsPerNode     *int32
	GPUsPerTask     *int32
	AutoSetGPU      *bool
	Members         []*Cluster // UNION: the clusters to merge, in priority order
	Env             []string   // "NAME=value" read instead of the process environment
	NumGPUs         *int32
}

// Ptr is a helper for the optional fields: Ptr(int32(3)), Ptr("worker").
func Ptr[T any](v T) *T { return &v }

// Cluster is the resolved view of a cluster. It is immutable and safe for
// concurrent use; Close (or the garbage collector) releases it.
type Cluster struct {
	handle *C.dist_cluster_t
}

func newCluster(h *C.dist_cluster_t) *Cluster {
	c := &Cluster{handle: h}
	runtime.SetFinalizer(c, (*Cluster).Close)
	return c
}

// ResolveCluster runs dist_cluster_resolve; options may be nil (AUTO).
func ResolveCluster(o *ClusterOptions) (*Cluster, error) {
	var raw C.dist_cluster_options_t
	var strings cStrings
	var arrays []unsafe.Pointer
	defer func() {
		strings.free()
		for _, a := range arrays {
			C.free(a)
		}
	}()
	if o != nil {
		text := func(v *string, bit C.uint64_t) *C.char {
			if v == nil {
				return nil
			}
			raw.field_mask |= bit
			return strings.add(*v)
		}
		number := func(v *int32, bit C.uint64_t, field *C.int32_t) {
			if v != nil {
				raw.field_mask |= bit
				*field = C.int32_t(*v)
			}
		}
		raw.task_type = text(o.TaskType, C.DIST_CLUSTER_OPT_TASK_TYPE)
		raw.rpc_layer = text(o.RPCLayer, C.DIST_CLUSTER_OPT_RPC_LAYER)
		raw.environment = text(o.Environment, C.DIST_CLUSTER_OPT_ENVIRONMENT)
		raw.cluster_spec_json = text(o.ClusterSpecJSON, C.DIST_CLUSTER_OPT_CLUSTER_SPEC)
		raw.master = text(o.Master, C.DIST_CLUSTER_OPT_MASTER)
		if o.Resolver != nil {
			raw.field_mask |= C.DIST_CLUSTER_OPT_RESOLVER
			raw.resolver = C.dist_resolver_kind_t(*o.Resolver)
		}
		number(o.TaskID, C.DIST_CLUSTER_OPT_TASK_ID, &raw.task_id)
		number(o.PortBase, C.DIST_CLUSTER_OPT_PORT_BASE, &raw.port_base)
		number(o.TasksPerNode, C.DIST_CLUSTER_OPT_TASKS_PER_NODE, &raw.tasks_per_node)
		number(o.GPUsPerNode, C.DIST_CLUSTER_OPT_GPUS_PER_NODE, &raw.gpus_per_node)
		number(o.GPUsPerTask, C.DIST_CLUSTER_OPT_GPUS_PER_TASK, &raw.gpus_per_task)
		number(o.NumGPUs, C.DIST_CLUSTER_OPT_NUM_GPUS, &raw.num_gpus)
		if o.AutoSetGPU != nil {
			raw.field_mask |= C.DIST_CLUSTER_OPT_AUTO_SET_GPU
			if *o.AutoSetGPU {
				raw.auto_set_gpu = 1
			}
		}
		if o.Jobs != nil {
			names := make([]*C.char, len(o.Jobs))
			counts := make([]C.int32_t, len(o.Jobs))
			for i, j := range o.Jobs {
				names[i], counts[i] = strings.add(j.Name), C.int32_t(j.Count)
			}
			n, c := cArray(names), cArray(counts)
			arrays = append(arrays, n, c)
			raw.field_mask |= C.DIST_CLUSTER_OPT_JOBS
			raw.job_names, raw.job_counts = (**C.char)(n), (*C.int32_t)(c)
			raw.num_jobs = C.size_t(len(o.Jobs))
		}
		if o.Members != nil {
			handles := make([]*C.dist_cluster_t, len(o.Members))
			for i, m := range o.Members {
				handles[i] = m.handle
			}
			h := cArray(handles)
			arrays = append(arrays, h)
			raw.field_mask |= C.DIST_CLUSTER_OPT_MEMBERS
			raw.members, raw.num_members = (**C.dist_cluster_t)(h), C.size_t(len(handles))
		}
		if o.Env != nil {
			entries := make([]*C.char, len(o.Env)+1) // NULL-terminated
			for i, e := range o.Env {
				entries[i] = strings.add(e)
			}
			e := cArray(entries)
			arrays = append(arrays, e)
			raw.field_mask |= C.DIST_CLUSTER_OPT_ENV
			raw.env = (**C.char)(e)
		}
	}
	var h *C.dist_cluster_t
	err := call(func() C.dist_status_t { return C.dist_cluster_resolve(&raw, &h) })
	if o != nil {
		runtime.KeepAlive(o.Members)
	}
	if err != nil {
		return nil, err
	}
	return newCluster(h), nil
}

// ClusterFromJSON resolves a TF_CONFIG document given as a string.
func ClusterFromJSON(document string) (*Cluster, error) {
	s := C.CString(document)
	defer C.free(unsafe.Pointer(s))
	var h *C.dist_cluster_t
	if err := call(func() C.dist_status_t { return C.dist_cluster_from_json(s, &h) }); err != nil {
		return nil, err
	}
	return newCluster(h), nil
}

// Close releases the cluster; later calls fail with ErrInvalidArgument. Idempotent.
func (c *Cluster) Close() error {
	if c.handle != nil {
		C.dist_cluster_destroy(c.handle)
		c.handle = nil
		runtime.SetFinalizer(c, nil)
	}
	return nil
}

func (c *Cluster) borrowedString(f func(**C.char) C.dist_status_t) (string, bool, error) {
	var out *C.char
	if err := call(func() C.dist_status_t { return f(&out) }); err != nil {
		return "", false, err
	}
	s, ok := borrowed(out)
	runtime.KeepAlive(c) // the string lives as long as the handle
	return s, ok, nil
}

func (c *Cluster) int32Of(f func(*C.int32_t) C.dist_status_t) (int32, error) {
	var out C.int32_t
	err := call(func() C.dist_status_t { return f(&out) })
	runtime.KeepAlive(c)
	return int32(out), err
}

// Resolver is the resolver that produced this cluster.
func (c *Cluster) Resolver() (Resolver, error) {
	var k C.dist_resolver_kind_t
	err := c.call(func() C.dist_status_t { return C.dist_cluster_resolver(c.handle, &k) })
	return Resolver(k), err
}

// TaskType is this task's type; ok is false when unknown.
func (c *Cluster) TaskType() (string, bool, error) {
	return c.borrowedString(func(o **C.char) C.dist_status_t { return C.dist_cluster_task_type(c.handle, o) })
}

// TaskID is this task's index in its job, or -1 if unknown.
func (c *Cluster) TaskID() (int32, error) {
	return c.int32Of(func(o *C.int32_t) C.dist_status_t { return C.dist_cluster_task_id(c.handle, o) })
}

func (c *Cluster) RPCLayer() (string, bool, error) {
	return c.borrowedString(func(o **C.char) C.dist_status_t { return C.dist_cluster_rpc_layer(c.handle, o) })
}

func (c *Cluster) Environment() (string, bool, error) {
	return c.borrowedString(func(o **C.char) C.dist_status_t { return C.dist_cluster_environment(c.handle, o) })
}

// CUDAVisibleDevices is the CUDA_VISIBLE_DEVICES this task should use, if assigned.
func (c *Cluster) CUDAVisibleDevices() (string, bool, error) {
	return c.borrowedString(func(o **C.char) C.dist_status_t { return C.dist_cluster_cuda_visible_devices(c.handle, o) })
}

// Jobs are the job names, sorted.
func (c *Cluster) Jobs() ([]string, error) {
	var n C.size_t
	if err := c.call(func() C.dist_status_t { return C.dist_cluster_num_jobs(c.handle, &n) }); err != nil {
		return nil, err
	}
	jobs := make([]string, n)
	for i := range jobs {
		name, _, err := c.borrowedString(func(o **C.char) C.dist_status_t {
			return C.dist_cluster_job_name(c.handle, C.size_t(i), o)
		})
		if err != nil {
			return nil, err
		}
		jobs[i] = name
	}
	return jobs, nil
}

// NumTasks counts the tasks of a job.
func (c *Cluster) NumTasks(job string) (int32, error) {
	j := C.CString(job)
	defer C.free(unsafe.Pointer(j))
	return c.int32Of(func(o *C.int32_t) C.dist_status_t { return C.dist_cluster_num_tasks(c.handle, j, o) })
}

// TaskIndices are a job's task indices, increasing (a sparse job skips some).
func (c *Cluster) TaskIndices(job string) ([]int32, error) {
	n, err := c.NumTasks(job)
	if err != nil {
		return nil, err
	}
	j := C.CString(job)
	defer C.free(unsafe.Pointer(j))
	indices := make([]int32, n)
	for i := range indices {
		if indices[i], err = c.int32Of(func(o *C.int32_t) C.dist_status_t {
			return C.dist_cluster_task_index(c.handle, j, C.int32_t(i), o)
		}); err != nil {
			return nil, err
		}
	}
	return indices, nil
}

// TaskAddress is "host:port" of a task.
func (c *Cluster) TaskAddress(job string, taskIndex int32) (string, error) {
	j := C.CString(job)
	defer C.free(unsafe.Pointer(j))
	s, _, err := c.borrowedString(func(o **C.char) C.dist_status_t {
		return C.dist_cluster_task_address(c.handle, j, C.int32_t(taskIndex), o)
	})
	return s, err
}

// Master is TF's master(task_type, task_id, rpc_layer); "" and -1 ask about this task.
func (c *Cluster) Master(taskType string, taskID int32, rpcLayer string) (string, error) {
	var strings cStrings
	defer strings.free()
	t, r := strings.addOptional(taskType), strings.addOptional(rpcLayer)
	var out *C.char
	if err := c.call(func() C.dist_status_t { return C.dist_cluster_master(c.handle, t, C.int32_t(taskID), r, &out) }); err != nil {
		return "", err
	}
	return takeString(out), nil
}

// NumAccelerators counts devices of a type ("" means "GPU") available to this task.
func (c *Cluster) NumAccelerators(deviceType string) (int32, error) {
	var strings cStrings
	defer strings.free()
	d := strings.addOptional(deviceType)
	return c.int32Of(func(o *C.int32_t) C.dist_status_t { return C.dist_cluster_num_accelerators(c.handle, d, o) })
}

// JSON is the whole resolved view (dist-info's format).
func (c *Cluster) JSON() (string, error) {
	var out *C.char
	if err := c.call(func() C.dist_status_t { return C.dist_cluster_to_json(c.handle, &out) }); err != nil {
		return "", err
	}
	return takeString(out), nil
}

// raw is the C handle; nil for a nil or closed cluster (the library reports it).
func (c *Cluster) raw() *C.dist_cluster_t {
	if c == nil {
		return nil
	}
	return c.handle
}

// call is call() keeping the cluster (and so its handle) alive until it returns.
func (c *Cluster) call(f func() C.dist_status_t) error {
	defer runtime.KeepAlive(c)
	return call(f)
}
