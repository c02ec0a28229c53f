#!/usr/bin/env python3
"""Every struct of include/c_api.h as the C compiler lays it out, for the binding
tests that declare the structs again by hand (Python ctypes, Java JNA, Julia).

A probe is generated from the header's own struct definitions, compiled with cc
and run; its report is printed, one struct per line:

    <typedef name> <size> <alignment> <field>:<offset>:<size> ...

    bindings/c_layout.py             the report
    bindings/c_layout.py --json      the same as {name: {"size", "align", "fields": [[field, offset, size]]}}
"""
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
HEADER = os.path.join(ROOT, "include", "c_api.h")
_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
_STRUCT = re.compile(r"typedef\s+struct\s+\w+\s*\{(.*?)\}\s*(\w+)\s*;", re.S)


def structs(header=HEADER):
    """[(typedef name, [field names])] in header order."""
    with open(header, encoding="utf-8") as f:
        text = _COMMENT.sub(" ", f.read())
    found = []
    for body, name in _STRUCT.findall(text):
        # An array's name is the word before its brackets ("uint64_t reserved[4]" -> reserved).
        fields = [re.findall(r"\w+", re.sub(r"\[[^\]]*\]", " ", decl))[-1] for decl in body.split(";")
                  if decl.strip()]
        found.append((name, fields))
    if not found:
        raise SystemExit(f"{header}: no struct definitions found; has the header format changed?")
    return found


def probe_source(found):
    lines = ["#include <stddef.h>", "#include <stdio.h>", '#include "c_api.h"', "int main(void) {"]
    for name, fields in found:
        lines.append(f'  printf("{name} %zu %zu", sizeof({name}), _Alignof({name}));')
        for field in fields:
            lines.append(f'  printf(" {field}:%zu:%zu", offsetof({name}, {field}), sizeof((({name}*)0)->{field}));')
        lines.append('  printf("\\n");')
    lines += ["  return 0;", "}", ""]
    return "\n".join(lines)


def layouts():
    """{name: {"size", "align", "fields": [(field, offset, size)]}} measured by the C compiler."""
    with tempfile.TemporaryDirectory() as scratch:
        source, exe = os.path.join(scratch, "probe.c"), os.path.join(scratch, "probe")
        with open(source, "w") as f:
            f.write(probe_source(structs()))
        subprocess.run([os.environ.get("CC", "cc"), "-std=c11", "-I", os.path.dirname(HEADER), source, "-o", exe],
                       check=True)
        report = subprocess.run([exe], check=True, capture_output=True, text=True).stdout
    result = {}
    for line in report.splitlines():
        name, size, align, *fields = line.split()
        result[name] = {"size": int(size), "align": int(align),
                        "fields": [(f, int(o), int(s)) for f, o, s in (x.split(":") for x in fields)]}
    return result


def main():
    found = layouts()
    if "--json" in sys.argv[1:]:
        print(json.dumps(found))
        return
    for name, layout in found.items():
        fields = " ".join(f"{f}:{o}:{s}" for f, o, s in layout["fields"])
        print(f"{name} {layout['size']} {layout['align']} {fields}")


if __name__ == "__main__":
    main()
