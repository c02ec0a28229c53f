#!/usr/bin/env bash
# multihost.sh BUILD_DIR
#
# ctest test_torch_multihost (label multihost): torchrun across 2 emulated hosts
# (tests/multihost/emulated-hosts), one process on each, `torchrun --nnodes 2
# --node_rank I --master_addr 198.18.0.1` on host I, running
# multihost_allreduce.py on the backend under test (common.sh): the backend
# joins through torchrun's rendezvous across hosts and every rank checks its
# all_reduce results. Bounded (every torchrun under timeout; the hosts' processes
# are killed and the hosts removed on exit). Skips, saying why, when hosts
# cannot be made here (not root) or as common.sh says.
set -euo pipefail
if [ $# -ne 1 ]; then
  echo "usage: $0 BUILD_DIR" >&2
  exit 2
fi
# shellcheck source=tests/torch/common.sh
source "$(dirname "$0")/common.sh"
hosts_tool=$(cd "$(dirname "$0")/../multihost" && pwd)/emulated-hosts
reason=$("$hosts_tool" check) || skip "$reason"
torch_suite "$1"

run=$("$hosts_tool" up 2 --owner $$)
logs=$(mktemp -d "${TMPDIR:-/tmp}/dist-torch-hosts.XXXXXX")
trap '"$hosts_tool" down "$run"; rm -rf "$logs"' EXIT
port=$((20000 + RANDOM % 20000))
pids=()
for host in 0 1; do
  # GLOO_SOCKET_IFNAME: gloo (as a comparison backend) would look up the host's name.
  "$hosts_tool" exec "$run" "$host" -- env GLOO_SOCKET_IFNAME=eth0 \
    timeout -k 10 240 "$python" -m torch.distributed.run --nnodes 2 --node_rank "$host" --nproc_per_node 1 \
    --master_addr 198.18.0.1 --master_port "$port" "$root/tests/torch/multihost_allreduce.py" \
    --backend "$backend" >"$logs/host$host.log" 2>&1 &
  pids+=($!)
done
status=0
for host in 0 1; do
  wait "${pids[$host]}" || { echo "host $host: torchrun exited with status $?"; status=1; }
done
for host in 0 1; do
  echo "--- host $host ($("$hosts_tool" hostname "$run" "$host"), $("$hosts_tool" address "$run" "$host"))"
  cat "$logs/host$host.log"
  grep -q "^rank $host of 2 on $run-h$host: .* as expected" "$logs/host$host.log" ||
    { echo "FAIL: host $host's rank did not report its all_reduce results"; status=1; }
done
exit $status
