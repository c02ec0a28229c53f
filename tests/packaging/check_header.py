"""header_c99 / header_cxx17: the public header compiles, alone and included twice,
as strict C99 or C++17, and a unit that uses all of it compiles and links
against plain C symbol names."""

import argparse
import os
import subprocess
import sys

import c_api_header
import header_usage

FLAGS = {
    # -Wstrict-prototypes: `f()` in a C header declares no prototype at all.
    "c": ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-Wstrict-prototypes",
          "-Wundef"],
    "c++": ["-std=c++17", "-Wall", "-Wextra", "-Werror", "-pedantic", "-Wundef"],
}


def compile_unit(args, source, obj, failures):
    command = [args.compiler, "-x", args.language, *FLAGS[args.language],
               "-I", args.include_dir, "-c", source, "-o", obj]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        failures.append(f"{os.path.basename(source)} does not compile as {args.language}:\n"
                        f"  $ {' '.join(command)}\n{result.stdout}{result.stderr}")
        return False
    return True


def undefined_symbols(nm, obj):
    result = subprocess.run([nm, "--undefined-only", "--format=posix", obj],
                            capture_output=True, text=True, check=True)
    return {line.split()[0] for line in result.stdout.splitlines() if line.strip()}


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--language", choices=sorted(FLAGS), required=True)
    parser.add_argument("--compiler", required=True)
    parser.add_argument("--nm", required=True)
    parser.add_argument("--header", required=True)
    parser.add_argument("--include-dir", required=True,
                        help="the directory that holds distribute/c_api.h, as users see it")
    parser.add_argument("--workdir", required=True)
    parser.add_argument("sources", nargs="+", help="hand-written units to compile")
    args = parser.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    failures = []

    for source in args.sources:
        obj = os.path.join(args.workdir, os.path.basename(source) + ".o")
        compile_unit(args, source, obj, failures)

    try:
        header = c_api_header.Header(args.header)
        text = header_usage.generate(header, "distribute/c_api.h")
    except c_api_header.HeaderError as error:
        details = "\n".join(f"    {line}" for line in str(error).splitlines())
        failures.append(f"{args.header} breaks the ABI conventions:\n{details}")
        header = None
    if header is not None:
        usage = os.path.join(args.workdir, "header_usage.c")
        with open(usage, "w", encoding="utf-8") as f:
            f.write(text)
        obj = usage + ".o"
        if compile_unit(args, usage, obj, failures):
            # A program links against exactly these names; in C++ a missing
            # extern "C" shows up here as mangled (_Z...) symbols.
            # Compiler helpers (memset for a zeroed struct) are not the header's.
            expected = {f.name for f in header.functions}
            found = {s for s in undefined_symbols(args.nm, obj) if "dist_" in s}
            for name in sorted(expected - found):
                mangled = [s for s in found if s.startswith("_Z") and f"{len(name)}{name}" in s]
                if mangled:
                    failures.append(f"{name} has C++ linkage here (programs would need "
                                    f"{mangled[0]}): it is outside extern \"C\"")
                    found -= set(mangled)
                else:
                    failures.append(f"{name} is declared but the using unit does not refer "
                                    "to it by its C name")
            for name in sorted(found - expected):
                failures.append(f"the header makes programs need the symbol {name!r}, which "
                                "is not a declared function")

    if failures:
        print(f"FAIL: {args.header} as {args.language}", file=sys.stderr)
        for failure in failures:
            print(f"- {failure}", file=sys.stderr)
        return 1
    print(f"OK: {args.header} compiles as {args.language} with {' '.join(FLAGS[args.language])}"
          f"; {len(header.functions)} functions, {len(header.macros)} macros, "
          f"{len(header.typedefs)} types used")
    return 0


if __name__ == "__main__":
    sys.exit(main())
