"""Every #define of the header has the same value in distribute.constants."""
import os
import re

from conftest import REPO
from distribute import constants

DEFINE = re.compile(r"^#define\s+DIST_(\w+)\s+(.+?)\s*(?:/\*.*)?$", re.M)


def header_constants():
    with open(os.path.join(REPO, "include", "c_api.h")) as f:
        text = f.read().replace("\\\n", " ")  # join continued lines
    values = {}
    for name, expression in DEFINE.findall(text):
        python = re.sub(r"(\d+)u?(?:ll)?\b", r"\1", expression).replace("DIST_", "")
        if name in ("EXPORT", "C_API_H") or name.endswith("_INIT"):
            continue
        values[name] = eval(python, {}, dict(values))  # the header's own arithmetic
    return values


def test_every_header_constant_matches():
    values = header_constants()
    assert len(values) > 60
    for name, value in values.items():
        assert getattr(constants, name) == value, name


def test_no_constant_missing_from_the_header():
    ours = {n for n in dir(constants) if n.isupper()}
    assert ours == set(header_constants())
