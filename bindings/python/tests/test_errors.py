import pytest

import distribute
from distribute import constants as C


def test_bad_tf_config_raises_with_the_c_message():
    with pytest.raises(distribute.InvalidArgumentError) as caught:
        distribute.Cluster.resolve("tf_config", env={"TF_CONFIG": '{"cluster": {"worker": 3}}'})
    error = caught.value
    assert error.status == C.ERR_INVALID_ARGUMENT
    assert error.status_name == "DIST_ERR_INVALID_ARGUMENT"
    assert "TF_CONFIG" in error.message
    assert "worker" in error.message
    assert error.message in str(error)
    assert isinstance(error, distribute.DistError) and isinstance(error, ValueError)


def test_malformed_json_names_the_problem():
    with pytest.raises(distribute.DistError) as caught:
        distribute.Cluster.from_json('{"cluster": ')
    assert caught.value.status == C.ERR_INVALID_ARGUMENT
    assert caught.value.message != ""


def test_task_index_out_of_range():
    document = '{"cluster": {"worker": ["a:1", "b:2"]}, "task": {"type": "worker", "index": 3}}'
    with pytest.raises(distribute.InvalidArgumentError) as caught:
        distribute.Cluster.from_json(document)
    assert "3" in caught.value.message


def test_status_strings():
    assert distribute.status_string(C.OK) == "DIST_OK"
    assert distribute.status_string(C.ERR_PEER_FAILED) == "DIST_ERR_PEER_FAILED"
    assert distribute.status_string(12345) == "DIST_ERR_UNKNOWN"


def test_peer_statuses_are_connection_errors():
    error = distribute.errors.error_for(C.ERR_MISMATCH)
    assert isinstance(error, distribute.PeerError) and isinstance(error, ConnectionError)
    assert isinstance(distribute.errors.error_for(C.ERR_TIMEOUT), TimeoutError)


def test_unknown_job_is_an_error_not_a_crash():
    with distribute.Cluster.from_json('{"cluster": {"worker": ["a:1"]}}') as cluster:
        with pytest.raises(distribute.InvalidArgumentError) as caught:
            cluster.num_tasks("ps")
        assert "ps" in caught.value.message


def test_version_and_build():
    assert distribute.version() == C.VERSION_HEX
    assert distribute.version_string() == f"{C.VERSION_MAJOR}.{C.VERSION_MINOR}.{C.VERSION_PATCH}"
    assert "ucx" in distribute.build_features()
    import json
    info = json.loads(distribute.build_info())
    assert info["version"] == distribute.version_string()
