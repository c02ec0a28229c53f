#!/usr/bin/env python3
"""Checks the Julia binding without a Julia toolchain.

Every `ccall((:dist_..., libdistribute), Ret, (ArgTypes...), args...)` in
Distribute.jl/src must name a function that include/c_api.h declares with the
same number of parameters and that the built libdistribute.so exports (nm -D).
A ccall written in any other form is refused, so that none escapes the check.

    bindings/julia/check_ccalls.py [path/to/libdistribute.so]
"""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import c_api_surface  # noqa: E402

SOURCES = os.path.join(HERE, "Distribute.jl", "src")
CCALL = re.compile(r"\bccall\(")
NAMED = re.compile(r"ccall\(\(:(dist_\w+),\s*libdistribute\)\s*,")


def balanced(text, start, open_ch, close_ch):
    """The index just past the bracket that closes the one at `start`."""
    depth = 0
    for i in range(start, len(text)):
        depth += text[i] == open_ch
        depth -= text[i] == close_ch
        if depth == 0:
            return i + 1
    raise ValueError("unbalanced brackets")


def split_top_level(text):
    """Splits on commas outside (), {} and []."""
    parts, depth, current = [], 0, ""
    for ch in text:
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
            continue
        depth += ch in "({["
        depth -= ch in ")}]"
        current += ch
    parts.append(current)
    return [p.strip() for p in parts if p.strip()]


def ccalls(path):
    """[(line, function name, number of argument types)] of one file; raises on an unchecked form."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    found = []
    for match in CCALL.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        named = NAMED.match(text, match.start())
        if not named:
            raise SystemExit(f"{path}:{line}: a ccall not of the form ccall((:dist_name, libdistribute), ...)")
        # After the name: the return type, then the tuple of argument types.
        rest = named.end()
        comma = rest
        depth = 0
        while True:  # skip the return type up to its top-level comma
            ch = text[comma]
            depth += ch in "({["
            depth -= ch in ")}]"
            if ch == "," and depth == 0:
                break
            comma += 1
        open_paren = text.index("(", comma)
        close = balanced(text, open_paren, "(", ")")
        types = split_top_level(text[open_paren + 1:close - 1])
        found.append((line, named.group(1), len(types)))
    return found


def exported_symbols(library):
    out = subprocess.run(["nm", "-D", "--defined-only", library], capture_output=True, text=True, check=True)
    return {line.split()[-1].split("@")[0] for line in out.stdout.splitlines() if line.strip()}


def main():
    build = os.environ.get("DIST_BUILD_DIR") or os.path.join(ROOT, "build")
    library = sys.argv[1] if len(sys.argv) > 1 else os.path.join(build, "src", "libdistribute.so")
    if not os.path.exists(library):
        raise SystemExit(f"{library} is missing: build libdistribute first")
    header = c_api_surface.functions()
    symbols = exported_symbols(library)
    problems, called = [], set()
    for name in sorted(os.listdir(SOURCES)):
        if not name.endswith(".jl"):
            continue
        path = os.path.join(SOURCES, name)
        for line, function, arity in ccalls(path):
            called.add(function)
            where = f"{os.path.relpath(path, ROOT)}:{line}: {function}"
            if function not in header:
                problems.append(f"{where} is not declared in include/c_api.h")
            elif header[function] != arity:
                problems.append(f"{where} passes {arity} argument types; the header declares {header[function]}")
            if function not in symbols:
                problems.append(f"{where} is not exported by {library}")
    for p in problems:
        print(p, file=sys.stderr)
    print(f"julia: {len(called)} C functions called through ccall checked against the header and {library}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
