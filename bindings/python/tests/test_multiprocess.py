"""The example under dist-run with two ranks: both must report identical, correct weights."""
import os
import subprocess
import sys

import pytest

from conftest import BINDING, build_dir


def dist_run(program, ranks=2):
    launcher = os.path.join(build_dir(), "tools", "dist-run", "dist-run")
    if not os.path.exists(launcher):
        pytest.fail(f"{launcher} is missing: build the project first")
    env = dict(os.environ, PYTHONPATH=BINDING)
    # dist-run's own --timeout stops the job (and its tasks) first.
    result = subprocess.run([launcher, "-n", str(ranks), "--timeout", "120", "--", sys.executable, program],
                            env=env, capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stdout + result.stderr
    return result


def test_allreduce_example_on_two_ranks():
    result = dist_run(os.path.join(BINDING, "examples", "allreduce.py"))
    for rank in (0, 1):
        assert f"rank {rank} of 2" in result.stdout
    assert result.stdout.count("identical on all ranks, correct") == 2, result.stdout


@pytest.mark.parametrize("ranks", [2, 3])
def test_every_collective_across_processes(ranks):
    result = dist_run(os.path.join(BINDING, "examples", "every_collective.py"), ranks)
    assert result.stdout.count("all collectives correct") == ranks, result.stdout


def test_strategy_example_on_two_ranks():
    """MULTI_WORKER_MIRRORED, two replicas per worker: identical weights on both ranks."""
    result = dist_run(os.path.join(BINDING, "examples", "strategy_training.py"))
    lines = [line for line in result.stdout.splitlines() if "weights sha256" in line]
    assert len(lines) == 2, result.stdout
    assert all("4 replicas in sync" in line and "local copies identical, correct" in line for line in lines), lines
    hashes = {line.split("sha256 ")[1].split(";")[0] for line in lines}
    assert len(hashes) == 1, lines
