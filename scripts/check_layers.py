#!/usr/bin/env python3
"""Checks that every #include in src/ runs down the layer order of DESIGN.md §1
(a layer includes only itself and the layers below it), and that UCX's headers
are included only inside src/transport/. Prints each violation; exit 1 if any.

    scripts/check_layers.py [SRC_DIR]
"""
import os
import re
import sys

# Bottom to top. The C ABI layer may include every layer below it.
LAYERS = ["base", "topology", "cluster", "transport", "gpu", "collectives", "optimizers", "ps", "strategy",
          "variables", "c_api"]
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
# Headers only the transport may include: UCX's own.
TRANSPORT_ONLY = ("ucp/", "ucs/", "uct/")


def main() -> int:
    src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "src")
    src = os.path.normpath(src)
    problems = []
    for root, _, files in os.walk(src):
        for name in sorted(files):
            if not name.endswith((".h", ".cc")):
                continue
            path = os.path.join(root, name)
            layer = os.path.relpath(path, src).split(os.sep)[0]
            if layer not in LAYERS:
                problems.append(f"{path}: directory '{layer}' is not a layer of DESIGN.md §1 ({', '.join(LAYERS)})")
                continue
            with open(path, encoding="utf-8") as f:
                for number, line in enumerate(f, 1):
                    match = INCLUDE.match(line)
                    if not match:
                        continue
                    bracket, header = match.groups()
                    where = f"{os.path.relpath(path, os.path.dirname(src))}:{number}"
                    if header.startswith(TRANSPORT_ONLY) and layer != "transport":
                        problems.append(f"{where}: includes UCX's <{header}> outside src/transport/")
                    if bracket != '"':
                        continue
                    target = header.split("/")[0]
                    if target in LAYERS and LAYERS.index(target) > LAYERS.index(layer):
                        problems.append(f"{where}: {layer}/ includes \"{header}\", a layer above it")
    for problem in problems:
        print(problem)
    print(f"check_layers: {len(problems)} include(s) against the layer order" if problems else
          "check_layers: every include runs down")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
