"""The library's sources as the builds this one is not would compile them.

A build compiles one combination of its optional parts (CUDA, NCCL); code
under the other combinations' #ifdefs is only seen by builds that have them,
and a CUDA build without NCCL once stopped compiling unnoticed. This check
takes the flags of this build (CUDA and NCCL on) and compiles, syntax only,
every library source that tests DIST_HAVE_NCCL or DIST_HAVE_CUDA the way the
other variants would: without NCCL (with CUDA), and without either. The
sources those variants leave out of the library (src/CMakeLists.txt's
if(DIST_HAVE_CUDA) and if(DIST_HAVE_NCCL) blocks) are left out here too.

  check_feature_variants.py --source-dir SRC --build-dir BUILD --compiler CXX
"""
import argparse
import concurrent.futures
import os
import re
import shlex
import subprocess
import sys


def flags_of(build_dir):
    """CXX_DEFINES, CXX_INCLUDES and CXX_FLAGS of the library's objects."""
    path = os.path.join(build_dir, "src", "CMakeFiles", "distribute_objects.dir", "flags.make")
    values = {}
    with open(path) as f:
        for line in f:
            m = re.match(r"^(CXX_DEFINES|CXX_INCLUDES|CXX_FLAGS) = (.*)$", line.rstrip("\n"))
            if m:
                values[m.group(1)] = shlex.split(m.group(2))
    return values


def optional_sources(cmake_text, feature):
    """The sources listed inside `if(<feature>)` ... `endif()` blocks."""
    sources = set()
    for block in re.findall(r"if\(" + feature + r"\)(.*?)\nendif\(\)", cmake_text, re.S):
        sources.update(re.findall(r"[\w/]+\.(?:cc|cu)", block))
    return sources


def mentions(path, feature):
    with open(path, errors="replace") as f:
        return feature in f.read()


def compile_syntax(compiler, flags, source):
    command = [compiler, "-fsyntax-only", "-x", "c++", source] + flags
    result = subprocess.run(command, capture_output=True, text=True)
    return source, result.returncode, result.stdout + result.stderr


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--source-dir", required=True)
    parser.add_argument("--build-dir", required=True)
    parser.add_argument("--compiler", required=True)
    args = parser.parse_args()

    values = flags_of(args.build_dir)
    defines = values.get("CXX_DEFINES", [])
    if "-DDIST_HAVE_CUDA" not in defines or "-DDIST_HAVE_NCCL" not in defines:
        print("skipped: this build is not the one with CUDA and NCCL; its own compile is the check")
        return 77
    # Optimization and debug info change nothing a syntax check sees.
    flags = [f for f in values.get("CXX_FLAGS", []) if not re.match(r"^-(O\d|g)$", f)]
    includes = values.get("CXX_INCLUDES", [])
    src = os.path.join(args.source_dir, "src")
    with open(os.path.join(src, "CMakeLists.txt")) as f:
        cmake_text = f.read()
    cuda_only = optional_sources(cmake_text, "DIST_HAVE_CUDA")
    nccl_only = optional_sources(cmake_text, "DIST_HAVE_NCCL")
    if not cuda_only or not nccl_only:
        print("src/CMakeLists.txt has no if(DIST_HAVE_CUDA) or if(DIST_HAVE_NCCL) block of sources any more")
        return 1

    library = []
    for root, _, files in os.walk(src):
        for name in files:
            if name.endswith(".cc"):
                library.append(os.path.relpath(os.path.join(root, name), src))
    variants = {
        "CUDA without NCCL": ([d for d in defines if d != "-DDIST_HAVE_NCCL" and not d.startswith("-DDIST_NCCL_")],
                              lambda s: s not in nccl_only and mentions(os.path.join(src, s), "DIST_HAVE_NCCL")),
        "neither CUDA nor NCCL": ([d for d in defines if d not in ("-DDIST_HAVE_NCCL", "-DDIST_HAVE_CUDA")
                                   and not d.startswith("-DDIST_NCCL_")],
                                  lambda s: s not in nccl_only and s not in cuda_only and
                                  (mentions(os.path.join(src, s), "DIST_HAVE_NCCL") or
                                   mentions(os.path.join(src, s), "DIST_HAVE_CUDA"))),
    }
    failed = 0
    workers = max(1, os.cpu_count() or 1)
    for variant, (variant_defines, wanted) in variants.items():
        sources = sorted(s for s in library if wanted(s))
        with concurrent.futures.ThreadPoolExecutor(workers) as pool:
            results = list(pool.map(lambda s: compile_syntax(args.compiler, variant_defines + includes + flags,
                                                             os.path.join(src, s)), sources))
        for source, code, output in results:
            if code != 0:
                failed += 1
                print(f"== {variant}: {os.path.relpath(source, args.source_dir)} does not compile:\n{output}")
        print(f"{variant}: {len(sources)} sources checked, {sum(1 for r in results if r[1] != 0)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
