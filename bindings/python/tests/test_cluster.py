import json

import pytest

import distribute

SPARSE = json.dumps({"cluster": {"worker": {"1": "h:2222", "3": "h:2223"}, "chief": ["c:1"]},
                     "task": {"type": "worker", "index": 3}, "rpc_layer": "grpc", "environment": "cloud"})


def test_tf_config_queries():
    with distribute.Cluster.resolve("tf_config", env={"TF_CONFIG": SPARSE}) as cluster:
        assert cluster.resolver == "tf_config"
        assert (cluster.task_type, cluster.task_id) == ("worker", 3)
        assert (cluster.rpc_layer, cluster.environment) == ("grpc", "cloud")
        assert cluster.jobs == ["chief", "worker"]
        assert cluster.num_tasks("worker") == 2
        assert cluster.task_indices("worker") == [1, 3]
        assert cluster.cluster_spec() == {"chief": {0: "c:1"}, "worker": {1: "h:2222", 3: "h:2223"}}
        assert cluster.master() == "grpc://h:2223"
        assert cluster.master("chief", 0, "ucx") == "ucx://c:1"
        assert cluster.num_accelerators() >= 0
        round_trip = json.loads(cluster.to_json())
        assert round_trip["task_id"] == 3 and round_trip["resolver"] == "tf_config"


def test_overrides_and_simple_resolver():
    spec = json.dumps({"worker": ["a:1", "b:2"]})
    with distribute.Cluster.resolve("simple", cluster_spec_json=spec, task_type="worker", task_id=1,
                                    master="m:9") as cluster:
        assert cluster.resolver == "simple"
        assert cluster.task_address("worker", 1) == "b:2"
        assert cluster.task_id == 1


def test_union_of_members():
    with distribute.Cluster.from_json('{"cluster": {"worker": ["a:1"]}}') as first, \
            distribute.Cluster.from_json('{"cluster": {"ps": ["p:1"]}}') as second, \
            distribute.Cluster.resolve("union", members=[first, second]) as union:
        assert union.jobs == ["ps", "worker"]


def test_mpi_jobs_split():
    env = {"OMPI_COMM_WORLD_RANK": "2", "OMPI_COMM_WORLD_SIZE": "4", "OMPI_COMM_WORLD_LOCAL_SIZE": "4"}
    with distribute.Cluster.resolve("mpi", env=env, jobs={"ps": 1, "worker": 3}) as cluster:
        assert cluster.num_tasks("ps") == 1 and cluster.num_tasks("worker") == 3
        assert (cluster.task_type, cluster.task_id) == ("worker", 1)


def test_resolver_names():
    assert distribute.resolver_name(distribute.constants.RESOLVER_SLURM) == "slurm"
    assert distribute.resolver_name(99) is None


def test_unknown_option_is_refused():
    with pytest.raises(TypeError):
        distribute.Cluster.resolve(task_typo="worker")
