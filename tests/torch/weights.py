"""Comparing the weights the jobs saved (tests/torch/job.py's save)."""
import torch

import job

# Three ranks: the backends may add the three gradients in different orders
# (each rank of a ring starts its chunk elsewhere), so a sum may differ in its
# last bits: |a+b+c| rounded twice is off by at most 2 ulp of |a|+|b|+|c|. With
# gradients below 1, lr 0.1 and a few steps on weights of about 0.1, the weights
# move apart by a few 1e-8 (measured: at most 1.5e-8, one ulp, distribute vs
# gloo, DDP and FSDP2); 1e-6 leaves room and still catches a lost or doubled
# contribution (~1e-3 here).
THREE_RANKS = dict(rtol=1e-5, atol=1e-6)
# The reference trains without communication, dividing each loss instead of
# each gradient and summing in autograd's order: more roundings, looser bound.
REFERENCE = dict(rtol=1e-4, atol=1e-5)


def assert_identical(a, b, what):
    assert a.keys() == b.keys(), f"{what}: different parameters"
    for name in a:
        assert a[name].dtype == b[name].dtype and a[name].shape == b[name].shape, f"{what}: {name}"
        if not torch.equal(a[name], b[name]):
            diff = (a[name] - b[name]).abs().max().item()
            raise AssertionError(f"{what}: {name} differs (max |diff| {diff:.3g}), expected bitwise equal")


def assert_close(a, b, what, tolerance):
    assert a.keys() == b.keys(), f"{what}: different parameters"
    for name in a:
        torch.testing.assert_close(a[name], b[name], **tolerance, msg=lambda m: f"{what}: {name}: {m}")


def compare(out_dir, backend, config, nprocs, replicated=True):
    """The backend's final weights against gloo's (bitwise on 2 ranks), against
    the reference, and (replicated models) the same on every rank."""
    ours = [job.load(out_dir, f"{backend}-{config}", r) for r in range(nprocs)]
    gloo = [job.load(out_dir, f"gloo-{config}", r) for r in range(nprocs)]
    reference = job.load(out_dir, f"reference-{config}", 0)
    for rank in range(nprocs):
        what = f"{config}, {nprocs} ranks, rank {rank}: {backend} vs gloo"
        if nprocs == 2:
            assert_identical(ours[rank], gloo[rank], what)
        else:
            assert_close(ours[rank], gloo[rank], what, THREE_RANKS)
        if replicated:
            assert_identical(ours[rank], ours[0], f"{config}: {backend}, rank {rank} vs rank 0")
        assert_close(ours[rank], reference, f"{config}: {backend} vs the reference", REFERENCE)
    # The steps moved the weights: a run that trained nothing cannot pass.
    initial = job.load(out_dir, f"initial-{config}", 0)
    assert any(not torch.equal(initial[k], ours[0][k]) for k in initial), f"{config}: the weights never changed"


def run_and_compare(job_fixture, job_module, backend, nprocs):
    """Runs JOB_MODULE's job on the backend and gloo; compares every configuration."""
    out = job_fixture(f"{job_module.__name__}.py", nprocs, [backend, "gloo"])
    for config in job_module.CONFIGS:
        compare(out, backend, config, nprocs)
