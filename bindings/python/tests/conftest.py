import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
BINDING = os.path.dirname(HERE)
REPO = os.path.dirname(os.path.dirname(BINDING))
sys.path.insert(0, BINDING)

import distribute  # noqa: E402


def build_dir():
    return os.environ.get("DIST_BUILD_DIR") or os.path.join(REPO, "build")


@pytest.fixture
def context():
    """A single-process context: a cluster with no tasks is rank 0 of 1."""
    with distribute.Cluster.from_json("{}") as cluster, distribute.Context(cluster) as ctx:
        yield ctx
