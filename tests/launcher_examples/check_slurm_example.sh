#!/bin/bash
# examples/slurm/train.sbatch against what the Slurm resolver reads: the script
# parses (and passes shellcheck where installed), runs srun on the program it
# names with a cluster token, and every task of its layout, given the variables
# srun sets, resolves to its own node and port.
#   check_slurm_example.sh SOURCE_DIR DIST_INFO
set -euo pipefail
source_dir=$1
dist_info=$2
script=$source_dir/examples/slurm/train.sbatch
fail() { echo "FAIL: $*" >&2; exit 1; }

bash -n "$script" || fail "bash -n $script"
if command -v shellcheck >/dev/null; then
  shellcheck "$script" || fail "shellcheck $script"
else
  echo "note: shellcheck is not installed; only bash -n checked the script"
fi

# The layout the script asks Slurm for.
nodes=$(sed -n 's/^#SBATCH --nodes=\([0-9]*\)$/\1/p' "$script")
per_node=$(sed -n 's/^#SBATCH --ntasks-per-node=\([0-9]*\)$/\1/p' "$script")
[[ -n $nodes && -n $per_node ]] || fail "no #SBATCH --nodes / --ntasks-per-node lines"
# shellcheck disable=SC2016  # the $ is the script's, matched literally
example=$(sed -n 's|^program=\$build_dir/examples/\([a-z_]*\)$|\1|p' "$script")
[[ -n $example ]] || fail "no program=\$build_dir/examples/NAME line"
grep -qw "$example" "$source_dir/examples/CMakeLists.txt" || fail "examples/CMakeLists.txt builds no $example"

# Run the script with stand-ins for srun and the program: srun must get the
# program, the epochs and a token of 32 random bytes in its environment.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin" "$work/build/examples"
printf '#!/bin/sh\nexit 0\n' >"$work/build/examples/$example"
cat >"$work/bin/srun" <<'STUB'
#!/bin/sh
printf '%s\n' "$*" >"$SRUN_LOG"
printf '%s\n' "$DIST_CLUSTER_TOKEN" >>"$SRUN_LOG"
STUB
chmod +x "$work/bin/srun" "$work/build/examples/$example"
env -u DIST_CLUSTER_TOKEN PATH="$work/bin:$PATH" SRUN_LOG="$work/srun.log" DIST_BUILD_DIR="$work/build" \
  bash "$script" 3 || fail "the script failed with srun stubbed"
[[ $(sed -n 1p "$work/srun.log") == "--kill-on-bad-exit=1 $work/build/examples/$example 3" ]] ||
  fail "srun ran: $(sed -n 1p "$work/srun.log")"
[[ $(sed -n 2p "$work/srun.log") =~ ^[0-9a-f]{64}$ ]] || fail "no 32-byte token reached srun"
# Without the program it says what is missing.
out=$(DIST_BUILD_DIR="$work/none" bash "$script" 2>&1) && fail "ran without a built program"
[[ $out == *"$work/none/examples/$example is missing"* ]] || fail "unhelpful message: $out"

# Every task of the layout, with the variables srun gives it (block distribution).
tasks=$((nodes * per_node))
nodelist="node[01-$(printf '%02d' "$nodes")]"
for ((rank = 0; rank < tasks; rank++)); do
  node=$(printf 'node%02d' $((rank / per_node + 1)))
  port=$((8888 + rank % per_node))
  json=$(env -i PATH="$PATH" ${LD_LIBRARY_PATH:+LD_LIBRARY_PATH=$LD_LIBRARY_PATH} \
    SLURM_PROCID=$rank SLURM_STEP_NUM_TASKS=$tasks SLURM_STEP_NODELIST="$nodelist" \
    SLURM_STEP_TASKS_PER_NODE="$per_node(x$nodes)" SLURMD_NODENAME="$node" \
    "$dist_info" cluster --json --gpus-per-node 0) || fail "rank $rank does not resolve: $json"
  [[ $json == *"\"resolver\": \"slurm\""* && $json == *"\"task_id\": $rank,"* &&
     $json == *"\"master\": \"grpc://$node:$port\""* ]] || fail "rank $rank resolved to $json"
done
echo "ok: $script ($nodes nodes x $per_node tasks)"
