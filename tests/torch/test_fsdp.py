"""FSDP2 (fully_shard) on the backend under test gives gloo's weights (issue 19,
part 4): one job per rank count runs fsdp_job.py's configurations (resharding
after forward or not, uneven shards) on the backend and on gloo.
"""
import pytest

pytest.importorskip("torch", reason="torch is not installed: tests/torch/run.sh makes an environment with it")

import fsdp_job  # noqa: E402
import weights  # noqa: E402


@pytest.mark.parametrize("nprocs", [2, 3])
def test_fsdp_matches_gloo(job, backend, nprocs):
    weights.run_and_compare(job, fsdp_job, backend, nprocs)
