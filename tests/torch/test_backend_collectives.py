"""The "distribute" torch.distributed backend: every collective and dtype on 2 and
3 processes, then async_op=True (Work.wait, futures), against references computed with plain torch
ops (backend_references.py). Each process runs a whole scenario of
backend_worker.py, so torch is imported once per rank."""
import pytest

torch = pytest.importorskip("torch", reason="torch is not installed: the distribute backend's tests need it")

from backend_launch import assert_checks, run_ranks  # noqa: E402
from backend_references import DTYPES  # noqa: E402

OPS = ["sum", "avg", "product", "min", "max"]


@pytest.mark.parametrize("size", [2, 3])
def test_every_collective_and_dtype(tmp_path, size):
    reports = run_ranks(tmp_path, "collectives", size)
    required = [f"all_reduce {op} {dtype}" for dtype in DTYPES for op in OPS
                if not (dtype is torch.bool and op == "avg")]
    required += [f"{name} {dtype}" for dtype in DTYPES for name in
                 ("broadcast", "all_gather list", "all_gather_into_tensor", "all_to_all_single even")]
    required += [f"{name} {dtype}" for dtype in DTYPES if dtype is not torch.bool for name in
                 ("reduce_scatter list", "reduce_scatter_tensor max", "reduce")]
    required += ["all_gather_object", "broadcast_object_list", "broadcast non-contiguous", "all_gather non-contiguous outputs", "all_gather_into_tensor non-contiguous output", "all_reduce premul_sum *", "all_reduce bool avg refused", "all_reduce non-contiguous",
                 "all_reduce empty", "all_gather_into_tensor in place", "all_to_all_single uneven *",
                 "all_to_all list", "scatter", "all_reduce_coalesced", "all_gather_into_tensor coalesced",
                 "reduce_scatter_tensor coalesced", "barrier", "int16 refused", "BAND refused", "backend name"]
    assert_checks(reports, required)
    assert_checks(reports, ["gather"], ranks=[size - 1])
    assert {report["values"]["path"] for report in reports} == {"shared_memory"}  # one host
    # async_op=True, in the same processes
    assert_checks(reports, ["wait returns True", "async all_reduce", "future value", "future then",
                            "collective from a future callback", "async all_gather future", "wait with a timeout"])
