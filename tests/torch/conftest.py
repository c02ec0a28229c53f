"""Shared pieces of the torch.distributed suite (issue 19, part 4).

The backend under test is "distribute" (registered by `import distribute.torch`);
DIST_TORCH_BACKEND names another one (for instance "gloo", to check the harness
itself). Every job runs the backend under test and gloo in the same processes,
one after the other, on the same seeds and data, and saves the final weights;
the tests compare them. Jobs are processes started here, bounded in time and
killed by PID when they overrun or fail.
"""
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
JOB_TIMEOUT_S = float(os.environ.get("DIST_TORCH_JOB_TIMEOUT", "240"))


def child_environment():
    env = dict(os.environ)
    env.setdefault("DIST_BUILD_DIR", str(ROOT / "build"))
    paths = [str(ROOT / "bindings" / "python"), str(HERE)]
    if env.get("PYTHONPATH"):
        paths.append(env["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(paths)
    # One intra-op thread per rank: the machine has two cores for every rank.
    env.setdefault("OMP_NUM_THREADS", "1")
    # A rank that dies of a signal prints every thread's Python stack to its log.
    env.setdefault("PYTHONFAULTHANDLER", "1")
    return env


@pytest.fixture(scope="session")
def backend():
    """The backend compared with gloo. "distribute" skips only where this tree
    has no backend; one that is here and does not load fails the tests."""
    name = os.environ.get("DIST_TORCH_BACKEND", "distribute")
    if name == "distribute":
        package = ROOT / "bindings" / "python" / "distribute"
        if not (package / "torch").exists() and not (package / "torch.py").exists():
            pytest.skip("this tree has no torch backend (bindings/python/distribute/torch)")
        probe = subprocess.run([sys.executable, "-c", "import distribute.torch"], env=child_environment(),
                               capture_output=True, text=True, timeout=120)
        assert probe.returncode == 0, f"import distribute.torch failed:\n{probe.stderr}"
    return name


def stop(processes):
    for process in processes:
        if process.poll() is None:
            process.kill()
    for process in processes:
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass


def run_job(script, nprocs, backends, out_dir, timeout=JOB_TIMEOUT_S):
    """Runs tests/torch/SCRIPT on NPROCS ranks; fails with every rank's output
    when one fails or the job outlives TIMEOUT seconds (every rank killed)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    store = out_dir / "store"
    logs, processes = [], []
    try:
        for rank in range(nprocs):
            log = open(out_dir / f"rank{rank}.log", "w+")
            logs.append(log)
            command = [sys.executable, str(HERE / script), "--rank", str(rank), "--world-size", str(nprocs),
                       "--store", str(store), "--out", str(out_dir), "--backends", ",".join(backends)]
            processes.append(subprocess.Popen(command, env=child_environment(), stdout=log,
                                              stderr=subprocess.STDOUT, start_new_session=True))
        deadline = time.monotonic() + timeout
        failed = None
        while failed is None and any(p.poll() is None for p in processes):
            failed = next((r for r, p in enumerate(processes) if p.poll() not in (None, 0)), None)
            if time.monotonic() > deadline:
                failed = "timeout"
            time.sleep(0.1)
        if failed is None:
            failed = next((r for r, p in enumerate(processes) if p.returncode != 0), None)
    finally:
        stop(processes)
    if failed is not None:
        report = []
        for rank, log in enumerate(logs):
            log.seek(0)
            report.append(f"--- rank {rank} (exit {processes[rank].returncode}) ---\n{log.read()[-4000:]}")
        reason = f"timed out after {timeout:.0f} s" if failed == "timeout" else f"rank {failed} failed"
        pytest.fail(f"{script} on {nprocs} ranks: {reason}\n" + "\n".join(report))
    for log in logs:
        log.close()
    return out_dir


@pytest.fixture
def job(tmp_path):
    def run(script, nprocs, backends):
        return run_job(script, nprocs, backends, tmp_path / f"{Path(script).stem}-{nprocs}")
    return run

