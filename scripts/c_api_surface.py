"""The public surface of include/c_api.h, read from the header text itself.

Shared by the binding checkers so that every check agrees on what "a public
function" is: a declaration that starts with DIST_EXPORT.
"""
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HEADER = os.path.join(ROOT, "include", "c_api.h")

_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
_EXPORT = re.compile(r"DIST_EXPORT\s+[^;{(]*?\b(dist_\w+)\s*\(")


def _strip_comments(text):
    return _COMMENT.sub(" ", text)


def functions(header=HEADER):
    """{name: number of parameters} of every exported dist_* function."""
    with open(header, encoding="utf-8") as f:
        text = _strip_comments(f.read())
    found = {}
    for match in _EXPORT.finditer(text):
        params = _parameter_list(text, match.end())
        arity = 0 if params in ("", "void") else len(_split_top_level(params))
        found[match.group(1)] = arity
    if not found:
        raise SystemExit(f"{header}: no DIST_EXPORT functions found; has the header format changed?")
    return found


def _parameter_list(text, start):
    """The text between the '(' just before `start` and its matching ')'.
    Balanced so that function-pointer parameters count as one."""
    depth = 1
    for i in range(start, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return " ".join(text[start:i].split())
    raise SystemExit(f"unbalanced parentheses after offset {start} in the header")


def _split_top_level(params):
    parts, depth, current = [], 0, ""
    for ch in params:
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
            continue
        depth += ch == "("
        depth -= ch == ")"
        current += ch
    return parts + [current]
