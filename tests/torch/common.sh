# shellcheck shell=bash disable=SC2034  # sets variables for the scripts that source it
# Sourced by the torch suite's ctest scripts (run.sh, example.sh, multihost.sh):
# `torch_suite BUILD_DIR` skips (exit 77, saying why) where this tree has no
# backend and DIST_TORCH_BACKEND names none, or where torch cannot be
# installed; else it sets $python (the torch environment's, made or reused by
# scripts/torch_env in BUILD_DIR/torch-venv), $backend, $root and $build, and
# exports the paths the Python binding needs.

skip() {
  echo "SKIPPED: $*"
  exit 77
}

torch_suite() {
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  build=$(cd "$1" && pwd)
  backend=${DIST_TORCH_BACKEND:-distribute}
  if [ "$backend" = distribute ] && [ ! -e "$root/bindings/python/distribute/torch" ] &&
     [ ! -e "$root/bindings/python/distribute/torch.py" ]; then
    skip "this tree has no torch backend (bindings/python/distribute/torch)"
  fi
  python=$("$root/scripts/torch_env" "$build/torch-venv") || exit $?
  export DIST_BUILD_DIR=$build PYTHONPATH="$root/bindings/python${PYTHONPATH:+:$PYTHONPATH}"
  export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} PYTHONDONTWRITEBYTECODE=1
}
