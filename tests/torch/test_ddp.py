"""DDP on the backend under test gives gloo's weights (issue 19, part 4).

One job per rank count runs every configuration of ddp_job.py (several
buckets with gradient_as_bucket_view, find_unused_parameters with a branch
used every other step, no_sync accumulation) on the backend and on gloo.
"""
import pytest

pytest.importorskip("torch", reason="torch is not installed: tests/torch/run.sh makes an environment with it")

import ddp_job  # noqa: E402
import weights  # noqa: E402


@pytest.mark.parametrize("nprocs", [2, 3])
def test_ddp_matches_gloo(job, backend, nprocs):
    weights.run_and_compare(job, ddp_job, backend, nprocs)
