"""The example under dist-run with two ranks: both must report identical, correct weights."""
import os
import subprocess
import sys

import pytest

from conftest import BINDING, build_dir


def test_allreduce_example_on_two_ranks():
    launcher = os.path.join(build_dir(), "tools", "dist-run", "dist-run")
    if not os.path.exists(launcher):
        pytest.fail(f"{launcher} is missing: build the project first")
    env = dict(os.environ, PYTHONPATH=BINDING)
    result = subprocess.run([launcher, "-n", "2", "--timeout", "120", "--", sys.executable,
                             os.path.join(BINDING, "examples", "allreduce.py")],
                            env=env, capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stdout + result.stderr
    for rank in (0, 1):
        assert f"rank {rank} of 2" in result.stdout
    assert result.stdout.count("identical on all ranks, correct") == 2, result.stdout
