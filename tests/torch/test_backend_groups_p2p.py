"""The "distribute" backend's new_group (a context per group, through the group's
prefixed Store) and point to point (send/recv by tag, recv from any source,
batch_isend_irecv), on 3 processes."""
import pytest

pytest.importorskip("torch", reason="torch is not installed: the distribute backend's tests need it")

from backend_launch import assert_checks, run_ranks  # noqa: E402


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    """One 3-process job runs both (torch's import is most of a job's time)."""
    return run_ranks(tmp_path_factory.mktemp("groups_p2p"), "groups_and_point_to_point", 3)


def test_new_groups(reports):
    assert_checks(reports, ["group of everyone"])
    assert_checks(reports, ["group rank", "group all_gather", "all_reduce sum torch.float32",
                            "all_reduce premul_sum torch.bfloat16"], ranks=[0, 2])
    assert_checks(reports, ["group send/recv"], ranks=[2])
    assert_checks(reports, ["group of one"], ranks=[1])


def test_send_recv_and_any_source(reports):
    assert_checks(reports, ["batch_isend_irecv ring"])
    assert_checks(reports, ["recv by tag", "recv any source from 1", "recv any source from 2",
                            "recv any source saw every rank"], ranks=[0])
