"""The library's errors through the "distribute" backend: a rank that never calls
(timeout), ranks that disagree (mismatch, also through a future), an aborted
group and a killed peer all give DistBackendError carrying the library's message,
within the deadline."""
import pytest

pytest.importorskip("torch", reason="torch is not installed: the distribute backend's tests need it")

from backend_launch import assert_checks, run_ranks  # noqa: E402


def test_timeout_mismatch_and_abort(tmp_path):
    reports = run_ranks(tmp_path, "failures", 2)
    assert_checks(reports, ["mismatch", "mismatch through the future", "world still works"])
    assert_checks(reports, ["timeout", "timeout within the deadline", "abort fails the pending call",
                            "wait runs out", "completes after a wait ran out", "destroy fails a pending receive"],
                  ranks=[0])
    values = reports[0]["values"]
    assert "timed out waiting for worker:1" in values["timeout_message"], values
    for report in reports:  # the library's message names both sides
        assert "count=4" in report["values"]["mismatch_message"] and "count=5" in report["values"]["mismatch_message"]


def test_a_killed_peer_fails_the_survivor_within_the_timeout(tmp_path):
    reports = run_ranks(tmp_path, "killed_peer", 2, expect_exit={1: -9})
    assert_checks(reports[:1], ["before the kill", "dead peer", "within the timeout"])
    message = reports[0]["values"]["dead_peer_message"]
    assert "DIST_ERR_PEER_FAILED" in message or "DIST_ERR_TIMEOUT" in message, message
