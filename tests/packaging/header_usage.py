"""Writes a translation unit that uses every macro, type and function of c_api.h.

It is generated from the header so that a new constant, option struct or function
is covered the day it is added. The unit is valid C99 and C++17; it holds
compile-time checks of the ABI conventions (DESIGN.md section 2) and refers to
every function, so the object's undefined symbols show the names a program links
against."""

import re

from c_api_header import HeaderError

_FIXED_WIDTH = {f"{sign}int{bits}_t" for sign in ("", "u") for bits in (8, 16, 32, 64)}
_FLAG = re.compile(r"\(\s*1[uU]?(?:ll|LL)?\s*<<\s*\d+\s*\)")
_STATUS = re.compile(r"DIST_OK$|DIST_ERR_\w+$")


def _flag_group(name):
    # Field-mask bits belong to their struct (DIST_CLUSTER_OPT_*); other flag
    # sets are named by their first two words (DIST_FEATURE_*).
    if "_OPT_" in name:
        return name[: name.index("_OPT_") + len("_OPT_")]
    return "_".join(name.split("_")[:2]) + "_"


def _convention_problems(header):
    problems = []
    for macro in header.macros.values():
        if not macro.name.startswith("DIST_"):
            problems.append(f"macro {macro.name} lacks the DIST_ prefix")
        if macro.params is not None:
            problems.append(f"{macro.name} is a function-like macro; bindings cannot call "
                            "it (DESIGN.md section 2: no macros a binding must re-implement)")
    for typedef in header.typedefs:
        if not re.fullmatch(r"dist_\w+_t", typedef.name):
            problems.append(f"type {typedef.name} is not named dist_*_t")
        if typedef.kind == "scalar" and typedef.underlying not in _FIXED_WIDTH:
            problems.append(f"{typedef.name} is a `{typedef.underlying}`; scalars that cross "
                            "the ABI must be fixed-width integers (int32_t, uint64_t, ...)")
        if typedef.name.endswith("_options_t"):
            if typedef.kind != "struct" or typedef.first_member != "uint64_t field_mask":
                problems.append(f"{typedef.name} must be a struct beginning with "
                                f"`uint64_t field_mask`")
            init = typedef.name[: -len("_t")].upper() + "_INIT"
            if init not in header.macros:
                problems.append(f"{typedef.name} has no {init} initialiser macro")
    for function in header.functions:
        if not function.name.startswith("dist_"):
            problems.append(f"function {function.name} lacks the dist_ prefix")
        if not function.exported:
            problems.append(f"{function.name} is declared without DIST_EXPORT, so the "
                            "library hides it and programs fail to link")
    return problems


class _Macros:
    """The header's object-like macros, sorted by how the unit uses them."""

    def __init__(self, header, problems):
        self.constants, self.statuses, self.strings, self.inits = [], [], [], []
        self.flags = {}
        struct_names = {t.name for t in header.typedefs if t.kind == "struct"}
        for macro in header.macros.values():
            name, body = macro.name, macro.bodies[-1]
            if name in (header.include_guard, "DIST_EXPORT") or macro.params is not None:
                continue
            if name.endswith("_INIT"):
                # DIST_CLUSTER_OPTIONS_INIT initialises dist_cluster_options_t.
                target = name[: -len("_INIT")].lower() + "_t"
                if target not in struct_names:
                    problems.append(f"{name} has no struct type {target} to initialise")
                self.inits.append((name, target))
            elif body.startswith('"'):
                self.strings.append(name)
            elif not body:
                problems.append(f"{name} is defined empty; the header check does not "
                                "know how to use it")
            else:
                self.constants.append(name)
                if _STATUS.match(name):
                    self.statuses.append(name)
                if "_OPT_" in name or _FLAG.fullmatch(body):
                    self.flags.setdefault(_flag_group(name), []).append(name)


def _switch(function, parameter, labels):
    lines = [f"int {function}({parameter});", f"int {function}({parameter}) {{",
             f"  switch ({parameter.split()[-1]}) {{"]
    lines += [f"    case {label}:" for label in labels]
    lines += ["      return 1;", "    default:", "      return 0;", "  }", "}"]
    return lines


def generate(header, include_name):
    """Returns the C source, or raises HeaderError naming every broken convention."""
    problems = _convention_problems(header)
    macros = _Macros(header, problems)
    if problems:
        raise HeaderError("\n".join(problems))

    guard = header.include_guard
    out = [
        f"/* Generated from {include_name} by header_usage.py. */",
        f"#include <{include_name}>",
        f"#include <{include_name}>",
        "#include <stddef.h>",
        "#include <stdint.h>",
        "",
        f"#ifndef {guard}",
        f'#error "the include guard {guard} is not defined"',
        "#endif",
        "",
        "/* A negative array size stops the compiler with the condition's name. */",
        "#define PKGCHECK(name, condition) typedef char pkgcheck_##name[(condition) ? 1 : -1]",
        "",
        "/* The version macros work in #if, as the header promises. */",
        "#if DIST_VERSION_HEX != ((DIST_VERSION_MAJOR << 16) | (DIST_VERSION_MINOR << 8) | "
        "DIST_VERSION_PATCH)",
        '#error "DIST_VERSION_HEX is not 0xMMmmpp of DIST_VERSION_MAJOR/MINOR/PATCH"',
        "#endif",
        "#if DIST_VERSION_MINOR > 255 || DIST_VERSION_PATCH > 255 || DIST_ABI_VERSION < 0",
        '#error "a version component is out of range"',
        "#endif",
        "",
        "/* Every constant is an integer constant expression: a file-scope array bound",
        "   must be one. */",
    ]
    out += [f"typedef char pkgcheck_constant_{n}[1 + 0 * ({n})];" for n in macros.constants]
    out += [f"PKGCHECK({n}_is_a_string, sizeof({n}) > 1);" for n in macros.strings]

    out += ["", "/* Status codes: DIST_OK is 0, errors are negative and fit dist_status_t. */"]
    for name in macros.statuses:
        relation = "== 0" if name == "DIST_OK" else "< 0"
        out.append(f"PKGCHECK({name}_sign, ({name}) {relation});")
        out.append(f"PKGCHECK({name}_fits, ({name}) >= INT32_MIN && ({name}) <= INT32_MAX);")

    out += ["", "/* Flags are single bits. */"]
    for names in macros.flags.values():
        out += [f"PKGCHECK({n}_is_one_bit, ({n}) != 0 && (({n}) & (({n}) - 1)) == 0);"
                for n in names]

    options = [(n, t) for n, t in macros.inits if t.endswith("_options_t")]
    out += ["", "/* Option structs: the field mask comes first and is 64 bits wide. */"]
    for _, target in options:
        out.append(f"PKGCHECK({target}_mask_first, offsetof({target}, field_mask) == 0);")
        out.append(f"PKGCHECK({target}_mask_width, sizeof((({target}*)0)->field_mask) == 8);")

    out += ["", "/* Duplicate case labels do not compile: codes and bits are distinct. */"]
    out += _switch("pkgcheck_distinct_status", "dist_status_t status", macros.statuses)
    for index, (group, names) in enumerate(sorted(macros.flags.items())):
        out.append(f"/* {group}* */")
        out += _switch(f"pkgcheck_distinct_flags_{index}", "unsigned long long flag", names)

    out += ["", "/* Every type is usable; option structs take their *_INIT macro. */",
            "void pkgcheck_use_types(void);", "void pkgcheck_use_types(void) {"]
    for index, typedef in enumerate(header.typedefs):
        out += [f"  {typedef.name}* pointer_{index} = NULL;", f"  (void)pointer_{index};"]
        if typedef.kind == "scalar":
            out += [f"  {typedef.name} scalar_{index} = 0;", f"  (void)scalar_{index};"]
    for index, (name, target) in enumerate(macros.inits):
        out += [f"  {target} init_{index} = {name};", f"  (void)init_{index};"]
    for index, name in enumerate(macros.strings):
        out += [f"  const char* string_{index} = {name};", f"  (void)string_{index};"]
    out.append("}")

    out += ["", "#ifdef __cplusplus",
            "/* In C++ the *_OPTIONS_INIT macros are constant expressions that set no",
            "   field. */"]
    for index, (name, target) in enumerate(options):
        out.append(f"constexpr {target} pkgcheck_constexpr_init_{index} = {name};")
        out.append(f"static_assert(pkgcheck_constexpr_init_{index}.field_mask == 0, "
                   f'"{name} sets a field");')
    out.append("#endif")

    out += ["", "/* Every function, referenced so that the object names the symbols a program",
            "   links against. */",
            "typedef void (*pkgcheck_any_function)(void);",
            "extern const pkgcheck_any_function pkgcheck_functions[];",
            "const pkgcheck_any_function pkgcheck_functions[] = {"]
    out += [f"    (pkgcheck_any_function){f.name}," for f in header.functions]
    out.append("};")
    return "\n".join(out) + "\n"
