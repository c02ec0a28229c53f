"""The "distribute" backend across hosts: 2 emulated hosts (tests/multihost/
emulated-hosts: network namespaces joined by a bridge, addresses 198.18.0.x),
one rank each, joined through torch's TCPStore on host 0 (tcp://198.18.0.1),
running every collective and dtype over UCX between the hosts. Skipped, saying
why, where emulated hosts cannot be made (they need root)."""
import subprocess

import pytest

pytest.importorskip("torch", reason="torch is not installed: the distribute backend's tests need it")

from backend_launch import REPO, assert_checks, run_ranks  # noqa: E402

HOSTS = f"{REPO}/tests/multihost/emulated-hosts"


@pytest.fixture
def emulated_run():
    check = subprocess.run([HOSTS, "check"], capture_output=True, text=True)
    if check.returncode != 0:
        pytest.skip((check.stdout + check.stderr).strip() or "emulated hosts unavailable")
    run = subprocess.run([HOSTS, "up", "2"], capture_output=True, text=True, check=True).stdout.strip()
    try:
        yield run
    finally:
        subprocess.run([HOSTS, "down", run], capture_output=True)


def test_every_collective_across_two_hosts(tmp_path, emulated_run):
    reports = run_ranks(tmp_path, "collectives", 2, timeout=240, store="tcp://198.18.0.1:29511",
                        prefix=lambda rank: [HOSTS, "exec", emulated_run, str(rank), "--"])
    assert_checks(reports, ["all_reduce sum torch.float32", "all_reduce avg torch.bfloat16",
                            "all_to_all_single uneven torch.float32", "scatter", "future value",
                            "all_gather_into_tensor coalesced"])
    assert [report["values"]["path"] for report in reports] == ["point_to_point"] * 2  # UCX between the hosts
