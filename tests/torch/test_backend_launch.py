"""Starting the "distribute" backend as users do: under real torchrun, with a
backend per device ("cpu:distribute,cuda:..."), again after destroy, and
`import distribute` alone not importing torch."""
import os
import signal
import subprocess
import sys

import pytest

pytest.importorskip("torch", reason="torch is not installed: the distribute backend's tests need it")

from backend_launch import HERE, assert_checks, environment, run_ranks  # noqa: E402


def test_under_torchrun_standalone(tmp_path):
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
               os.path.join(HERE, "backend_torchrun_script.py")]
    process = subprocess.Popen(command, env=environment(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, start_new_session=True)
    try:
        output, _ = process.communicate(timeout=180)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)  # torchrun and the ranks it started
        output, _ = process.communicate()
        pytest.fail(f"torchrun did not finish in 180 s:\n{output}")
    assert process.returncode == 0, output
    for rank in range(2):
        assert f"distribute torchrun rank {rank} of 2: OK" in output, output


def test_backend_per_device_and_again_after_destroy(tmp_path):
    reports = run_ranks(tmp_path, "backend_strings", 2)
    assert_checks(reports, ["cpu:distribute,cuda:*", "again after destroy", "destroy closes every context"])


CUDA_CHECKS = ["CPU tensors to distribute", "CUDA tensors to NCCL", "all_reduce torch.float32 on the host",
               "all_reduce torch.float32 on the GPU", "broadcast on the GPU", "all_gather on the host"]


def test_cuda_tensors_to_nccl_beside_distribute(tmp_path):
    """Runs where torch sees a GPU (scripts/test_gpu runs it there): one rank
    per GPU, at most 2."""
    import torch
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device: \"cpu:distribute,cuda:nccl\" needs a GPU per rank for NCCL")
    reports = run_ranks(tmp_path, "cuda_to_nccl", min(2, torch.cuda.device_count()), timeout=300)
    assert_checks(reports, CUDA_CHECKS)


def test_import_distribute_does_not_import_torch():
    code = "import sys, distribute; assert 'torch' not in sys.modules, 'torch was imported'; print('ok')"
    result = subprocess.run([sys.executable, "-c", code], env=environment(), capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0 and "ok" in result.stdout, result.stderr
