#!/usr/bin/env bash
# pip_install.sh SOURCE_DIR WORK_DIR VERSION
#
# The Python package as users get it (issue 19, part 1): `pip wheel SOURCE_DIR`
# builds a wheel through pyproject.toml (scikit-build-core running the project's
# CMake, the library only, Release), the wheel goes into a fresh virtual
# environment, and there, with no PYTHONPATH, LD_LIBRARY_PATH, DIST_LIBRARY or
# DIST_BUILD_DIR and from a directory outside the checkout:
#   - `import distribute` loads the libdistribute.so.<ABI> bundled in the package,
#     and the library, the package's metadata and VERSION (include/c_api.h) agree;
#   - two processes (TF_CONFIG on 127.0.0.1, a cluster token) run
#     bindings/python/examples/allreduce.py, which checks the all-reduced weights
#     against the same steps computed without communication.
# Exits 77 (skipped), saying why, when no virtual environment can be made or the
# package index cannot be reached (the build needs scikit-build-core, the
# environment numpy). WORK_DIR keeps the CMake build between runs (incremental);
# everything else lives in a temporary directory removed on exit. The compiler
# runs under ccache when there is one (CMAKE_<LANG>_COMPILER_LAUNCHER).
set -euo pipefail
if [ $# -ne 3 ]; then
  echo "usage: $0 SOURCE_DIR WORK_DIR VERSION" >&2
  exit 2
fi
src=$(cd "$1" && pwd)
mkdir -p "$2"
work=$(cd "$2" && pwd)
version=$3
python=${DIST_PIP_PYTHON:-python3}

skip() {
  echo "SKIPPED: $*"
  exit 77
}
step() {
  echo "== $* ($((SECONDS - started)) s)"
}
started=$SECONDS

# A virtual environment with its own pip (Debian's python3 needs python3-venv).
if ! "$python" -c "import venv, ensurepip" 2>/dev/null; then
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "== installing python3-venv"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends python3-venv >/dev/null 2>&1 ||
      { DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null 2>&1 &&
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends python3-venv >/dev/null 2>&1; } || true
  fi
  "$python" -c "import venv, ensurepip" 2>/dev/null ||
    skip "$python cannot make a virtual environment (no venv/ensurepip; apt-get install python3-venv)"
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/dist-pip.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# Nothing of the caller's may point at another copy of the package or library.
unset PYTHONPATH LD_LIBRARY_PATH DIST_LIBRARY DIST_BUILD_DIR PIP_REQUIRE_VIRTUALENV
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1

step "virtual environment for the build"
"$python" -m venv "$tmp/build-env" || skip "python3 -m venv failed"
builder=$tmp/build-env/bin/python
"$builder" -m pip download -q --no-deps --timeout 20 --retries 1 -d "$tmp/probe" scikit-build-core >/dev/null 2>&1 ||
  skip "the package index cannot be reached (pip download scikit-build-core failed)"

if command -v ccache >/dev/null 2>&1; then
  export CMAKE_C_COMPILER_LAUNCHER=${CMAKE_C_COMPILER_LAUNCHER:-ccache}
  export CMAKE_CXX_COMPILER_LAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER:-ccache}
  # Paths under the checkout hash the same from any clone of it at this depth.
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$src}
fi
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}

step "pip wheel (build directory $work/build)"
"$builder" -m pip wheel -q --no-deps -w "$tmp/wheels" "--config-settings=build-dir=$work/build" "$src" \
  >"$tmp/wheel.log" 2>&1 || { cat "$tmp/wheel.log"; echo "FAIL: pip wheel"; exit 1; }
wheels=("$tmp"/wheels/*.whl)
[ ${#wheels[@]} -eq 1 ] && [ -f "${wheels[0]}" ] || { ls -l "$tmp/wheels"; echo "FAIL: expected one wheel"; exit 1; }
wheel=${wheels[0]}
echo "   $(basename "$wheel"), $(du -k "$wheel" | cut -f1) KiB"

# What the wheel holds: the package with the library inside it, nothing else.
"$builder" - "$wheel" "$version" <<'PY'
import sys, zipfile
wheel, version = sys.argv[1], sys.argv[2]
name = wheel.rsplit("/", 1)[-1]
assert name.startswith(f"libdistribute-{version}-py3-none-linux_"), f"unexpected wheel name {name}"
names = zipfile.ZipFile(wheel).namelist()
top = sorted({n.split("/")[0] for n in names})
assert top == ["distribute", f"libdistribute-{version}.dist-info"], f"unexpected top-level entries {top}"
libraries = [n for n in names if ".so" in n]
assert libraries == ["distribute/libdistribute.so.0"], f"libraries in the wheel: {libraries}"
for module in ("__init__.py", "_native.py", "comm.py", "constants.py"):
    assert f"distribute/{module}" in names, f"distribute/{module} missing"
print(f"   wheel holds {len(names)} files: distribute/ with libdistribute.so.0, and its metadata")
PY

step "fresh virtual environment: pip install the wheel"
"$python" -m venv "$tmp/user-env"
user=$tmp/user-env/bin/python
"$user" -m pip install -q --timeout 30 "$wheel" >"$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log"; echo "FAIL: pip install of the wheel"; exit 1; }

# Away from the checkout, so that nothing but the installed package can be imported.
cd "$tmp"
step "import distribute"
"$user" - "$version" "$tmp/user-env" <<'PY'
import importlib.metadata, os, sys
import distribute
from distribute import _native
version, env = sys.argv[1], os.path.realpath(sys.argv[2])
package = os.path.dirname(os.path.realpath(distribute.__file__))
assert package.startswith(env + os.sep), f"distribute imported from {package}, not from {env}"
library = os.path.realpath(_native.library_path)
assert library == os.path.join(package, "libdistribute.so.0"), f"library loaded from {library}"
assert distribute.version_string() == version, f"library {distribute.version_string()} != {version}"
assert distribute.__version__ == version, f"__version__ {distribute.__version__} != {version}"
metadata = importlib.metadata.version("libdistribute")
assert metadata == version, f"package metadata {metadata} != {version}"
print(f"   distribute {distribute.__version__} from {package}; features {sorted(distribute.build_features())}")
PY

step "two processes all-reduce (TF_CONFIG on 127.0.0.1)"
read -r port0 port1 < <("$user" -c "
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(('127.0.0.1', 0))
print(*[x.getsockname()[1] for x in s])")
cluster="{\"worker\": [\"127.0.0.1:$port0\", \"127.0.0.1:$port1\"]}"
token=$("$user" -c "import secrets; print(secrets.token_hex(16))")
pids=()
for i in 0 1; do
  TF_CONFIG="{\"cluster\": $cluster, \"task\": {\"type\": \"worker\", \"index\": $i}}" DIST_CLUSTER_TOKEN=$token \
    timeout --kill-after=5 120 "$user" "$src/bindings/python/examples/allreduce.py" >"$tmp/rank$i.log" 2>&1 &
  pids+=($!)
done
failed=0
for i in 0 1; do
  wait "${pids[$i]}" || { echo "rank $i exited with $?"; failed=1; }
  sed 's/^/   /' "$tmp/rank$i.log"
  grep -q "identical on all ranks, correct" "$tmp/rank$i.log" || failed=1
done
[ $failed -eq 0 ] || { echo "FAIL: the two-process all-reduce"; exit 1; }

step "done"
echo "PASS: pip wheel, install into a fresh environment, import and a 2-process all-reduce"
