"""Starting ranks of tests/torch/backend_worker.py for the backend's pytest files:
each rank a subprocess (PID kept, killed on timeout), joining through a FileStore
in the test's tmp_path; each writes what it checked to a JSON file."""
import json
import os
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
BINDING = os.path.join(REPO, "bindings", "python")
WORKER = os.path.join(HERE, "backend_worker.py")


def environment(extra=None):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (BINDING, env.get("PYTHONPATH")) if p)
    env.setdefault("OMP_NUM_THREADS", "1")  # 2-core machine: torch's pools would fight the ranks
    env.update(extra or {})
    return env


def stop(processes):
    """Kills the ranks still running, by PID, and reaps them."""
    for process in processes:
        if process.poll() is None:
            os.kill(process.pid, signal.SIGKILL)
    for process in processes:
        process.wait()


def run_ranks(tmp_path, scenario, size, timeout=120, env=None, expect_exit=None, store=None, prefix=None):
    """Runs `scenario` of backend_worker.py on `size` ranks; returns each rank's
    JSON report (a dict), asserting every rank exited 0 unless expect_exit
    maps a rank to another exit code. `store`: a tcp:// init method (default: a
    FileStore in tmp_path); prefix(rank): the command that runs a rank's command
    (an emulated host's exec)."""
    expect_exit = expect_exit or {}
    store = store or tmp_path / f"{scenario}-store"
    processes, reports = [], []
    try:
        for rank in range(size):
            report = tmp_path / f"{scenario}-rank{rank}.json"
            reports.append(report)
            log = open(tmp_path / f"{scenario}-rank{rank}.log", "w")
            processes.append(subprocess.Popen(
                (prefix(rank) if prefix else []) +
                [sys.executable, WORKER, scenario, str(rank), str(size), str(store), str(report)],
                env=environment(env), stdout=log, stderr=subprocess.STDOUT))
            log.close()
        deadline = time.monotonic() + timeout
        while any(p.poll() is None for p in processes) and time.monotonic() < deadline:
            time.sleep(0.1)
        hung = [rank for rank, p in enumerate(processes) if p.poll() is None]
    finally:
        stop(processes)
    logs = {rank: (tmp_path / f"{scenario}-rank{rank}.log").read_text() for rank in range(size)}
    assert not hung, f"ranks {hung} of {scenario} still ran after {timeout} s; logs: {logs}"
    for rank, process in enumerate(processes):
        assert process.returncode == expect_exit.get(rank, 0), \
            f"rank {rank} of {scenario} exited {process.returncode}; log:\n{logs[rank]}"
    return [json.loads(report.read_text()) if report.exists() else None for report in reports]


def assert_checks(reports, required=(), ranks=None):
    """No rank reported a failure, and each of `ranks` (default: all) passed every
    check named in `required` (a check's name, or a prefix ending in '*')."""
    for rank, report in enumerate(reports):
        assert report is not None, f"rank {rank} wrote no report"
        assert not report["failed"], f"rank {rank}: " + "\n".join(report["failed"])
    for rank in ranks if ranks is not None else range(len(reports)):
        passed = reports[rank]["passed"]
        for name in required:
            if name.endswith("*"):
                assert any(p.startswith(name[:-1]) for p in passed), f"rank {rank} ran no check {name}"
            else:
                assert name in passed, f"rank {rank} did not pass {name!r}"
