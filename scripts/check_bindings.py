#!/usr/bin/env python3
"""Fails when a binding lacks a public function of include/c_api.h.

A binding "has" a function when its library code calls it (the idiomatic layer,
not just a raw declaration; for Rust the -sys crate must declare it as well).
Deliberate gaps are listed, with reasons, in bindings/coverage_exceptions.txt.
"""
import glob
import os
import re
import sys

import c_api_surface

ROOT = c_api_surface.ROOT
EXCEPTIONS = os.path.join(ROOT, "bindings", "coverage_exceptions.txt")

# binding -> (source globs relative to bindings/, regex whose group 1 is a called C function)
BINDINGS = {
    "python": (["python/distribute/*.py"], r"\blib\.(dist_\w+)\b"),
    "rust-sys": (["rust/distribute-sys/src/*.rs"], r"\bpub fn (dist_\w+)\("),
    "rust": (["rust/distribute/src/*.rs"], r"\bsys::(dist_\w+)\b"),
    "go": (["go/*.go", "go/*.c"], r"(?:\bC\.|^\s*case \w+: return |\s)(dist_\w+)\("),
    "java": (["java/src/main/java/org/libdistribute/*.java"], r"\bLIB(?:\.|::)(dist_\w+)\b"),
    "julia": (["julia/Distribute.jl/src/*.jl"], r"\bccall\(\(:(dist_\w+)\b"),
}


def called(binding):
    patterns, regex = BINDINGS[binding]
    found = set()
    for pattern in patterns:
        paths = [p for p in glob.glob(os.path.join(ROOT, "bindings", pattern)) if not p.endswith("_test.go")]
        if not paths:
            raise SystemExit(f"{binding}: no sources match bindings/{pattern}")
        for path in paths:
            with open(path, encoding="utf-8") as f:
                found |= set(re.findall(regex, f.read(), re.M))
    return {name for name in found if not name.endswith("_t")}  # dist_*_t are types


def exceptions():
    listed = {}
    with open(EXCEPTIONS, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = line.split(None, 2)
            if len(parts) < 3 or parts[0] not in BINDINGS:
                raise SystemExit(f"{EXCEPTIONS}:{number}: expected '<binding> <function> <reason>' "
                                 f"with a binding among {sorted(BINDINGS)}")
            listed[(parts[0], parts[1])] = parts[2]
    return listed


def main():
    public = c_api_surface.functions()
    allowed = exceptions()
    failures = []
    for binding in BINDINGS:
        calls = called(binding)
        unknown = sorted(calls - set(public))
        missing = sorted(f for f in public if f not in calls and (binding, f) not in allowed)
        stale = sorted(f for (b, f) in allowed if b == binding and (f in calls or f not in public))
        for f in unknown:
            failures.append(f"{binding}: calls {f}, which include/c_api.h does not declare")
        for f in missing:
            failures.append(f"{binding}: lacks {f}")
        for f in stale:
            failures.append(f"{binding}: {f} is listed as an exception but is bound (or no longer public)")
        excused = sum(1 for (b, _) in allowed if b == binding)
        print(f"{binding:9} {len(calls & set(public)):3}/{len(public)} functions"
              + (f" ({excused} listed exceptions)" if excused else ""))
    for failure in failures:
        print("MISSING " + failure, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
