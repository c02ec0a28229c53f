#!/usr/bin/env bash
# example.sh BUILD_DIR
#
# ctest test_torch_example: examples/torch/ddp_digits.py as its docstring runs
# it, torchrun with 2 processes on this host, on the backend under test
# (common.sh), 20 epochs; fails unless the last epoch's test accuracy reaches
# 0.93 (it ends at 0.95-0.98 on gloo here; a model that learned nothing stays
# near 0.1). Skips, saying why, without the digits (python3-sklearn).
set -euo pipefail
if [ $# -ne 1 ]; then
  echo "usage: $0 BUILD_DIR" >&2
  exit 2
fi
# shellcheck source=tests/torch/common.sh
source "$(dirname "$0")/common.sh"
data=${DIST_DIGITS:-/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz}
[ -f "$data" ] || skip "no digits at $data (apt-get install python3-sklearn)"
torch_suite "$1"
cd "$build"
exec timeout -k 10 600 "$python" -m torch.distributed.run --standalone --nproc_per_node 2 \
  "$root/examples/torch/ddp_digits.py" --backend "$backend" --data "$data" --epochs 20 --min-accuracy 0.93
