#!/usr/bin/env bash
# run.sh BUILD_DIR [PYTEST ARGS...]
#
# ctest test_torch: pytest over tests/torch in the torch environment of the
# build tree (common.sh), with the Python binding from this checkout and the
# library from BUILD_DIR. Skips (exit 77, saying why) as common.sh says, and
# when pytest collects no tests (its exit code 5).
set -euo pipefail
if [ $# -lt 1 ]; then
  echo "usage: $0 BUILD_DIR [PYTEST ARGS...]" >&2
  exit 2
fi
# shellcheck source=tests/torch/common.sh
source "$(dirname "$0")/common.sh"
torch_suite "$1"
shift
cd "$root/tests/torch"
status=0
"$python" -m pytest -v -p no:cacheprovider --basetemp "$build/torch-pytest" "$@" . || status=$?
[ $status -ne 5 ] || skip "pytest collected no tests in $root/tests/torch"
exit $status
