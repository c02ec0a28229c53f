"""Parameter servers and their checkpoints: an in-process server's lifecycle, bad
options mapped to DistError with the C status, and a save/restore round trip."""
import json
import os

import pytest

import distribute
from distribute import constants as C

TOKEN = "python-binding-test-token"


def cluster_of(server):
    return distribute.Cluster.from_json(json.dumps({"cluster": {"ps": [server.address], "worker": ["127.0.0.1:1"]},
                                                    "task": {"type": "worker", "index": 0}}))


def test_server_lifecycle():
    lines = []
    server = distribute.Server(address="127.0.0.1:0", token=TOKEN, log=lines.append)
    host, port = server.address.rsplit(":", 1)
    assert host == "127.0.0.1" and int(port) > 0
    described = server.describe()
    assert described["address"] == server.address
    assert described["variables"] == []
    assert any("serving at" in line for line in lines)
    with pytest.raises(distribute.DistTimeoutError) as timed_out:
        server.join(30)
    assert timed_out.value.status == C.ERR_TIMEOUT
    server.stop()
    server.join(5000)
    server.join(0)  # joining again is fine
    server.close()
    server.close()
    assert server.closed
    with pytest.raises(distribute.InvalidArgumentError) as closed:
        server.address
    assert "server is NULL" in closed.value.message


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # ctypes reports it
def test_log_sink_that_raises_is_dropped():
    def sink(_line):
        raise RuntimeError("sink")
    with distribute.Server(address="127.0.0.1:0", token=TOKEN, log=sink) as server:
        assert server.address.startswith("127.0.0.1:")


def test_server_bad_options(monkeypatch):
    monkeypatch.delenv("DIST_CLUSTER_TOKEN", raising=False)
    monkeypatch.delenv("DIST_CLUSTER_TOKEN_FILE", raising=False)
    with pytest.raises(distribute.InvalidArgumentError) as no_token:
        distribute.Server(address="127.0.0.1:0")
    assert "needs the cluster token" in no_token.value.message
    with pytest.raises(distribute.InvalidArgumentError) as bad_timeout:
        distribute.Server(address="127.0.0.1:0", token=TOKEN, io_timeout_ms=0)
    assert "io_timeout_ms 0" in bad_timeout.value.message
    with pytest.raises(distribute.InvalidArgumentError) as no_port:
        distribute.Server(address="127.0.0.1", token=TOKEN)
    assert no_port.value.status == C.ERR_INVALID_ARGUMENT and "127.0.0.1" in no_port.value.message
    with pytest.raises(distribute.InvalidArgumentError) as no_address:
        distribute.Server(token=TOKEN)
    assert "no address" in no_address.value.message
    with distribute.Server(address="127.0.0.1:0", token=TOKEN) as server:
        with pytest.raises(distribute.DistError) as taken:
            distribute.Server(address=server.address, token=TOKEN)
        assert taken.value.status == C.ERR_UNAVAILABLE and server.address in taken.value.message


def test_checkpoint_save_and_restore(tmp_path):
    root = str(tmp_path)
    with distribute.Server(address="127.0.0.1:0", token=TOKEN) as server, cluster_of(server) as cluster:
        path = distribute.checkpoint_save(cluster, root, 3, token=TOKEN, timeout_ms=20000)
        assert path == os.path.join(root, "ckpt-3")
        assert os.path.isfile(os.path.join(path, "shard-00000-of-00001.ckpt"))
        assert os.path.isfile(os.path.join(path, "manifest.json"))
        assert os.path.isfile(os.path.join(root, "LATEST"))
        assert distribute.checkpoint_restore(cluster, root, token=TOKEN, timeout_ms=20000) == path
        with pytest.raises(distribute.DistError) as wrong_token:
            distribute.checkpoint_save(cluster, root, 4, token="wrong-token", timeout_ms=20000)
        assert wrong_token.value.status == C.ERR_AUTH and "ps:0" in wrong_token.value.message
        with pytest.raises(distribute.InvalidArgumentError) as bad_step:
            distribute.checkpoint_save(cluster, root, -1, token=TOKEN)
        assert "step -1" in bad_step.value.message

        # A corrupt shard file is refused, naming it, by a restore and by a server
        # told to restore from it.
        shard = os.path.join(path, "shard-00000-of-00001.ckpt")
        with open(shard, "r+b") as f:
            f.seek(3)
            byte = f.read(1)
            f.seek(3)
            f.write(bytes([byte[0] ^ 0xFF]))
        with pytest.raises(distribute.InvalidArgumentError) as corrupt:
            distribute.checkpoint_restore(cluster, root, token=TOKEN, timeout_ms=20000)
        assert "is corrupt" in corrupt.value.message and "shard-00000-of-00001.ckpt" in corrupt.value.message
        with pytest.raises(distribute.InvalidArgumentError) as refused:
            distribute.Server(address="127.0.0.1:0", token=TOKEN, checkpoint_dir=root)
        assert "is corrupt" in refused.value.message
