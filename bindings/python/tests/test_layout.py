"""Every struct of the header against its ctypes declaration: size, alignment and
each field's offset and size as the C compiler lays them out (bindings/c_layout.py)."""
import ctypes
import os
import shutil
import sys

import pytest

from conftest import REPO
from distribute import _native

sys.path.insert(0, os.path.join(REPO, "bindings"))
import c_layout  # noqa: E402


def ctypes_name(c_name):
    """dist_strategy_options_t -> StrategyOptions."""
    return "".join(part.capitalize() for part in c_name[len("dist_"):-len("_t")].split("_"))


@pytest.mark.skipif(shutil.which(os.environ.get("CC", "cc")) is None, reason="no C compiler to measure the header")
def test_every_struct_matches_the_header():
    layouts = c_layout.layouts()
    assert len(layouts) >= 9 and "dist_server_options_t" in layouts
    for c_name, layout in layouts.items():
        declared = getattr(_native, ctypes_name(c_name), None)
        assert declared is not None, f"{c_name} has no ctypes declaration {ctypes_name(c_name)}"
        assert (ctypes.sizeof(declared), ctypes.alignment(declared)) == (layout["size"], layout["align"]), c_name
        assert [f[0] for f in declared._fields_] == [f for f, _, _ in layout["fields"]], c_name
        for field, offset, size in layout["fields"]:
            member = getattr(declared, field)
            assert (member.offset, member.size) == (offset, size), f"{c_name}.{field}"


@pytest.mark.skipif(ctypes.sizeof(ctypes.c_void_p) != 8, reason="the pinned offsets are those of an LP64 ABI")
def test_strategy_options_end_with_num_packs_and_tail_padding():
    # num_packs (int32) follows reduce_to_device at 88; 4 bytes of tail padding make 96.
    assert _native.StrategyOptions._fields_[-1] == ("num_packs", ctypes.c_int32)
    assert _native.StrategyOptions.reduce_to_device.offset == 80
    assert (_native.StrategyOptions.num_packs.offset, _native.StrategyOptions.num_packs.size) == (88, 4)
    assert ctypes.sizeof(_native.StrategyOptions) == 96


@pytest.mark.skipif(ctypes.sizeof(ctypes.c_void_p) != 8, reason="the pinned offsets are those of an LP64 ABI")
def test_context_options_end_with_the_timeline():
    # The appended timeline pointer sits at 40, after timeout_ms (32): 48 bytes in all.
    assert _native.ContextOptions._fields_[-1] == ("timeline", ctypes.c_char_p)
    assert (_native.ContextOptions.timeline.offset, _native.ContextOptions.timeline.size) == (40, 8)
    assert ctypes.sizeof(_native.ContextOptions) == 48
    if shutil.which(os.environ.get("CC", "cc")) is not None:
        layout = c_layout.layouts()["dist_context_options_t"]
        assert (layout["size"], layout["fields"][-1]) == (48, ("timeline", 40, 8)), "the header's layout"


@pytest.mark.skipif(ctypes.sizeof(ctypes.c_void_p) != 8, reason="the pinned offsets are those of an LP64 ABI")
def test_comm_options_end_with_stall_warning_and_deterministic():
    # timing (int32 at 20) ends at 24, where the int64 stall_warning_ms fits without
    # padding; deterministic (int32 at 32) takes 4 bytes of tail padding: 40 in all.
    fields = _native.CommOptions._fields_
    assert fields[-2:] == [("stall_warning_ms", ctypes.c_int64), ("deterministic", ctypes.c_int32)]
    assert (_native.CommOptions.timing.offset, _native.CommOptions.timing.size) == (20, 4)
    assert (_native.CommOptions.stall_warning_ms.offset, _native.CommOptions.stall_warning_ms.size) == (24, 8)
    assert (_native.CommOptions.deterministic.offset, _native.CommOptions.deterministic.size) == (32, 4)
    assert ctypes.sizeof(_native.CommOptions) == 40
    if shutil.which(os.environ.get("CC", "cc")) is not None:
        layout = c_layout.layouts()["dist_comm_options_t"]
        assert layout["size"] == 40, "the header's layout"
        assert layout["fields"][-2:] == [("stall_warning_ms", 24, 8), ("deterministic", 32, 4)], "the header's layout"
