package distribute

import (
	"reflect"
	"strings"
	"testing"
)

const sparse = `{"cluster": {"worker": {"1": "h:2222", "3": "h:2223"}, "chief": ["c:1"]},
	"task": {"type": "worker", "index": 3}, "rpc_layer": "grpc", "environment": "cloud"}`

// must unwraps a (value, error) pair; an error panics, which fails the test.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestTFConfigQueries(t *testing.T) {
	c := must(ResolveCluster(&ClusterOptions{Resolver: Ptr(ResolverTFConfig), Env: []string{"TF_CONFIG=" + sparse}}))
	defer c.Close()
	if r := must(c.Resolver()); r != ResolverTFConfig || r.String() != "tf_config" {
		t.Errorf("resolver %v", r)
	}
	if typ, ok, _ := c.TaskType(); typ != "worker" || !ok {
		t.Errorf("task type %q", typ)
	}
	if id := must(c.TaskID()); id != 3 {
		t.Errorf("task id %d", id)
	}
	if layer, _, _ := c.RPCLayer(); layer != "grpc" {
		t.Errorf("rpc layer %q", layer)
	}
	if env, _, _ := c.Environment(); env != "cloud" {
		t.Errorf("environment %q", env)
	}
	if jobs := must(c.Jobs()); !reflect.DeepEqual(jobs, []string{"chief", "worker"}) {
		t.Errorf("jobs %v", jobs)
	}
	if idx := must(c.TaskIndices("worker")); !reflect.DeepEqual(idx, []int32{1, 3}) {
		t.Errorf("indices %v", idx)
	}
	if a := must(c.TaskAddress("worker", 1)); a != "h:2222" {
		t.Errorf("address %q", a)
	}
	if m := must(c.Master("", -1, "")); m != "grpc://h:2223" {
		t.Errorf("master %q", m)
	}
	if m := must(c.Master("chief", 0, "ucx")); m != "ucx://c:1" {
		t.Errorf("master %q", m)
	}
	if n := must(c.NumAccelerators("")); n < 0 {
		t.Errorf("accelerators %d", n)
	}
	if _, ok, _ := c.CUDAVisibleDevices(); ok {
		t.Error("TF_CONFIG assigns no devices")
	}
	if j := must(c.JSON()); !strings.Contains(j, `"tf_config"`) {
		t.Errorf("json %s", j)
	}
}

func TestSimpleUnionAndJobs(t *testing.T) {
	simple := must(ResolveCluster(&ClusterOptions{
		Resolver: Ptr(ResolverSimple), ClusterSpecJSON: Ptr(`{"worker": ["a:1", "b:2"]}`),
		TaskType: Ptr("worker"), TaskID: Ptr(int32(1)),
	}))
	defer simple.Close()
	if a := must(simple.TaskAddress("worker", 1)); a != "b:2" {
		t.Errorf("address %q", a)
	}
	ps := must(ClusterFromJSON(`{"cluster": {"ps": ["p:1"]}}`))
	defer ps.Close()
	union := must(ResolveCluster(&ClusterOptions{Resolver: Ptr(ResolverUnion), Members: []*Cluster{simple, ps}}))
	defer union.Close()
	if jobs := must(union.Jobs()); !reflect.DeepEqual(jobs, []string{"ps", "worker"}) {
		t.Errorf("jobs %v", jobs)
	}
	mpi := must(ResolveCluster(&ClusterOptions{
		Resolver: Ptr(ResolverMPI),
		Env:      []string{"OMPI_COMM_WORLD_RANK=2", "OMPI_COMM_WORLD_SIZE=4", "OMPI_COMM_WORLD_LOCAL_SIZE=4"},
		Jobs:     []Job{{"ps", 1}, {"worker", 3}},
	}))
	defer mpi.Close()
	if typ, _, _ := mpi.TaskType(); typ != "worker" || must(mpi.TaskID()) != 1 {
		t.Errorf("mpi task %s", typ)
	}
	if ResolverSlurm.String() != "slurm" || Resolver(99).String() != "" {
		t.Error("resolver names")
	}
}
