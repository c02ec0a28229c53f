//! Finds libdistribute and measures the C header's layout for the layout test.
//!
//! The library is looked for, in order, in $DIST_BUILD_DIR (a CMake build tree),
//! in the build/ directory of the checkout this crate sits in, and through
//! `pkg-config distribute` (an installed copy; DIST_PKG_CONFIG=1 skips the build
//! trees and asks pkg-config only). The header comes from the same
//! place. A C probe generated from the header's own #defines and structs is
//! compiled with the system C compiler ($CC or cc) and run; its output becomes
//! OUT_DIR/c_layout.rs, which tests/layout.rs compares with the Rust side.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=DIST_BUILD_DIR");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    println!("cargo:rerun-if-env-changed=DIST_PKG_CONFIG");
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let repo = manifest.join("../../..");
    let (lib_dir, include_dir) = locate(&repo).unwrap_or_else(|why| panic!("{why}"));
    println!("cargo:rustc-link-search=native={}", lib_dir.display());
    println!("cargo:rustc-link-lib=dylib=distribute");
    // Dependents read these as DEP_DISTRIBUTE_LIB_DIR / DEP_DISTRIBUTE_INCLUDE.
    println!("cargo:lib_dir={}", lib_dir.display());
    println!("cargo:include={}", include_dir.display());
    println!("cargo:rustc-link-arg=-Wl,-rpath,{}", lib_dir.display());

    let header = include_dir.join("c_api.h");
    println!("cargo:rerun-if-changed={}", header.display());
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    let text = fs::read_to_string(&header).unwrap_or_else(|e| panic!("{}: {e}", header.display()));
    let probe = out.join("layout_probe.c");
    fs::write(&probe, probe_source(&text)).unwrap();
    let exe = out.join("layout_probe");
    let cc = env::var("CC").unwrap_or_else(|_| "cc".into());
    run(Command::new(&cc).arg("-std=c11").arg("-I").arg(&include_dir).arg(&probe).arg("-o").arg(&exe));
    let generated = run(&mut Command::new(&exe));
    fs::write(out.join("c_layout.rs"), generated).unwrap();
    fs::write(out.join("rust_layout.rs"), rust_side(&text)).unwrap();
}

/// (library directory, include directory).
fn locate(repo: &Path) -> Result<(PathBuf, PathBuf), String> {
    let mut build_dirs = Vec::new();
    if env::var_os("DIST_PKG_CONFIG").map_or(true, |v| v.is_empty()) {
        if let Ok(dir) = env::var("DIST_BUILD_DIR") {
            build_dirs.push(PathBuf::from(dir));
        }
        build_dirs.push(repo.join("build"));
    }
    for build in &build_dirs {
        let lib = build.join("src");
        if lib.join("libdistribute.so").exists() {
            // The build tree's header is the checkout's include/.
            let include = repo.join("include");
            return Ok((lib, include));
        }
    }
    let pkg = |flag: &str| -> Option<PathBuf> {
        let out = Command::new("pkg-config").args([flag, "distribute"]).output().ok()?;
        let text = String::from_utf8(out.stdout).ok()?;
        out.status.success().then(|| PathBuf::from(text.trim()))
    };
    match (pkg("--variable=libdir"), pkg("--variable=includedir")) {
        (Some(lib), Some(include)) => {
            let include = if include.join("c_api.h").exists() { include } else { include.join("distribute") };
            Ok((lib, include))
        }
        _ => Err(format!(
            "libdistribute not found: set DIST_BUILD_DIR to its CMake build tree, build {}, or install it \
             so that `pkg-config distribute` finds it (tried {:?})",
            repo.join("build").display(),
            build_dirs
        )),
    }
}

fn run(command: &mut Command) -> String {
    let out = command.output().unwrap_or_else(|e| panic!("{command:?}: {e}"));
    if !out.status.success() {
        panic!("{command:?} failed:\n{}", String::from_utf8_lossy(&out.stderr));
    }
    String::from_utf8(out.stdout).unwrap()
}

/// Removes /* */ and // comments.
fn strip_comments(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("/*") {
        out.push_str(&rest[..start]);
        rest = &rest[start + 2..];
        let end = rest.find("*/").expect("unterminated comment in the header");
        rest = &rest[end + 2..];
    }
    out.push_str(rest);
    out.lines().map(|l| l.split("//").next().unwrap()).collect::<Vec<_>>().join("\n")
}

/// Names of the #defines that are values (not the include guard, export or *_INIT macros).
fn constant_names(text: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for line in text.lines() {
        let Some(directive) = line.trim_start().strip_prefix('#') else { continue };
        let Some(definition) = directive.trim_start().strip_prefix("define ") else { continue };
        let name = definition.split_whitespace().next().unwrap_or("");
        let keep = name.starts_with("DIST_")
            && !name.ends_with("_INIT")
            && !name.contains('(')
            && !matches!(name, "DIST_EXPORT" | "DIST_C_API_H");
        if keep && !names.iter().any(|n| n == name) {
            names.push(name.to_string());
        }
    }
    names
}

/// (struct typedef name, field names) of every `typedef struct x { ... } x_t;`.
fn structs(text: &str) -> Vec<(String, Vec<String>)> {
    let text = strip_comments(text);
    let mut found = Vec::new();
    let mut rest = text.as_str();
    while let Some(start) = rest.find("typedef struct") {
        rest = &rest[start..];
        let (Some(open), Some(semi)) = (rest.find('{'), rest.find(';')) else { break };
        if semi < open {
            rest = &rest[semi + 1..]; // an opaque handle: typedef struct x x_t;
            continue;
        }
        let close = rest.find('}').unwrap();
        let body = &rest[open + 1..close];
        let after = &rest[close + 1..];
        let name = after[..after.find(';').unwrap()].trim().to_string();
        // An array's name is the word before its brackets ("uint64_t reserved[4]" -> reserved).
        let fields = body
            .split(';')
            .map(|decl| decl.split('[').next().unwrap())
            .filter_map(|decl| decl.split(|c: char| !(c.is_alphanumeric() || c == '_')).rfind(|w| !w.is_empty()))
            .map(str::to_string)
            .collect();
        found.push((name, fields));
        rest = after;
    }
    found
}

fn probe_source(text: &str) -> String {
    let mut c = String::from("#include <stddef.h>\n#include <stdio.h>\n#include \"c_api.h\"\nint main(void) {\n");
    c += "  printf(\"/// Generated by build.rs from the C compiler's view of c_api.h.\\n\");\n";
    c += "  printf(\"pub const C_CONSTANTS: &[(&str, i128)] = &[\\n\");\n";
    for name in constant_names(text) {
        c += &format!("  printf(\"    (\\\"{name}\\\", %lld),\\n\", (long long)({name}));\n");
    }
    c += "  printf(\"];\\n\");\n";
    c += "  printf(\"/// (struct, size, align, [(field, offset, size)])\\n\");\n";
    c += "  printf(\"pub const C_STRUCTS: &[StructLayout] = &[\\n\");\n";
    for (name, fields) in structs(text) {
        c += &format!("  printf(\"    (\\\"{name}\\\", %zu, %zu, &[\\n\", sizeof({name}), _Alignof({name}));\n");
        for field in fields {
            c += &format!(
                "  printf(\"        (\\\"{field}\\\", %zu, %zu),\\n\", offsetof({name}, {field}), sizeof((({name}*)0)->{field}));\n"
            );
        }
        c += "  printf(\"    ]),\\n\");\n";
    }
    c += "  printf(\"];\\n\");\n  return 0;\n}\n";
    c
}

/// The same table as the probe's, measured on the Rust declarations: a constant
/// or field missing on the Rust side is a compile error of the layout test.
fn rust_side(text: &str) -> String {
    let mut r = String::from("pub const RUST_CONSTANTS: &[(&str, i128)] = &[\n");
    for name in constant_names(text) {
        r += &format!("    (\"{name}\", distribute_sys::{name} as i128),\n");
    }
    r += "];\npub fn rust_structs() -> Vec<MeasuredStruct> {\n    vec![\n";
    for (name, fields) in structs(text) {
        r += &format!("        (\"{name}\", std::mem::size_of::<distribute_sys::{name}>(), std::mem::align_of::<distribute_sys::{name}>(), vec![\n");
        for field in fields {
            r += &format!(
                "            (\"{field}\", std::mem::offset_of!(distribute_sys::{name}, {field}), field_size(|s: &distribute_sys::{name}| &s.{field})),\n"
            );
        }
        r += "        ]),\n";
    }
    r += "    ]\n}\n";
    r += "/// Each exported function coerced to a function pointer with the header's number of\n";
    r += "/// parameters: a missing declaration or a wrong arity is a compile error.\n";
    r += "pub fn rust_functions() -> Vec<(&'static str, usize)> {\n    vec![\n";
    for (name, arity) in functions(text) {
        let params = vec!["_"; arity].join(", ");
        r += &format!("        {{ let _f: unsafe extern \"C\" fn({params}) -> _ = distribute_sys::{name}; (\"{name}\", {arity}) }},\n");
    }
    r += "    ]\n}\n";
    r
}

/// (name, number of parameters) of every DIST_EXPORT function.
fn functions(text: &str) -> Vec<(String, usize)> {
    let text = strip_comments(text);
    let mut found = Vec::new();
    for declaration in text.split("DIST_EXPORT").skip(1) {
        let Some(open) = declaration.find('(') else { continue };
        let Some(close) = declaration.find(')') else { continue };
        let head = &declaration[..open];
        let name = head.split(|c: char| !(c.is_alphanumeric() || c == '_')).rfind(|w| !w.is_empty());
        let Some(name) = name.filter(|n| n.starts_with("dist_")) else { continue };
        let params = declaration[open + 1..close].trim();
        let arity = if params.is_empty() || params == "void" { 0 } else { params.split(',').count() };
        found.push((name.to_string(), arity));
    }
    found
}
