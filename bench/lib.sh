# shellcheck shell=bash
# Sourced by bench/compare and bench/hosts/compare: packages, the peer
# programs, process bookkeeping (every launch bounded and killed by PID),
# skipped lines and the merged CSV. Expects ROOT, WORK and LIMIT to be set.

# ---- packages: install only what is missing ------------------------------------
PACKAGES=(build-essential libgloo-dev libopenmpi-dev openmpi-bin python3-matplotlib ucx-utils procps)
# shellcheck source=scripts/setup.sh
source "$ROOT/scripts/setup.sh"
install_missing() { dist_install_packages "${PACKAGES[@]}"; }

build_peers() {
  echo "== building the peer benchmarks in $WORK/peers"
  make -s -C "$ROOT/bench/peers" BUILD="$WORK/peers" -j "$(nproc)"
  # shellcheck disable=SC2034  # used by the scripts that source this one
  PEERS=$WORK/peers
}

# ---- process bookkeeping: every launch is bounded and killed by PID ---------------
SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/bench-run.XXXXXX")
RAW=$SCRATCH/raw.csv
SKIPPED=$SCRATCH/skipped.txt
: >"$RAW"
: >"$SKIPPED"
# Processes started and not yet reaped; only these are ever signalled.
declare -A LIVE=()
started() { LIVE[$1]=1; }
reaped() { unset "LIVE[$1]"; }
# Commands the caller adds to run at exit, after its processes are stopped.
AT_EXIT=()
cleanup() {
  local pid command
  for pid in "${!LIVE[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for command in "${AT_EXIT[@]}"; do eval "$command" || true; done
  rm -rf "$SCRATCH"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

skip() { echo "skipped: $*" | tee -a "$SKIPPED" >&2; }

# Why a launch failed: its time limit, or what it said on stderr: a benchmark
# program's own message, preferring the cause over a peer's "connection reset"
# that follows it; otherwise the launcher's last line.
why() {
  local status=$1 err=$2 line
  case "$status" in
    124|137) echo "did not finish within ${LIMIT} s, killed"; return ;;
  esac
  line=$(grep -E '^(gloo|openmpi|memcpy_bench|ucx_exchange_bench|dist-bench)[: ]' "$err" | grep -v 'reset by peer' | head -n 1 || true)
  [ -n "$line" ] || line=$(grep -E '^(gloo|openmpi|memcpy_bench|ucx_exchange_bench|dist-bench)[: ]' "$err" | head -n 1 || true)
  [ -n "$line" ] || line=$(grep -vE '^\s*$|^-+$|^skipped:' "$err" | tail -n 1 || true)
  echo "exit $status: $(echo "$line" | cut -c1-240)"
}

# Where rank R runs: words put before its command (none: right here). The
# emulated-hosts driver redefines it to start each rank on its host.
rank_prefix() { :; }

# Runs "$@" once per rank (NPROCS of them) with RANK/SIZE/GLOO_STORE_DIR set;
# rank 0's CSV rows go to $RAW. If any rank fails or overruns LIMIT, the others
# are killed.
launch_ranks() {
  local err=$1; shift
  local store
  store=$(mktemp -d "$SCRATCH/store.XXXXXX")
  local pids=() rank prefix
  for ((rank = 0; rank < NPROCS; rank++)); do
    read -r -a prefix <<<"$(rank_prefix "$rank")"
    RANK=$rank SIZE=$NPROCS GLOO_STORE_DIR=$store timeout -k 5 "$LIMIT" "${prefix[@]}" "$@" >>"$RAW" 2>>"$err" &
    pids+=($!)
    started $!
  done
  local rc=0 status finished pid keep
  while [ ${#pids[@]} -gt 0 ]; do
    status=0
    finished=""
    wait -n -p finished "${pids[@]}" || status=$?
    [ -n "$finished" ] || break
    reaped "$finished"
    keep=()
    for pid in "${pids[@]}"; do [ "$pid" = "$finished" ] || keep+=("$pid"); done
    pids=("${keep[@]}")
    if [ "$status" -ne 0 ] && [ "$rc" -eq 0 ]; then
      rc=$status
      for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    fi
  done
  rm -rf "$store"
  return "$rc"
}

# Runs "$@" bounded by LIMIT, registered for cleanup; returns its status.
bounded() {
  local status=0
  timeout -k 5 "$LIMIT" "$@" &
  started $!
  wait $! || status=$?
  reaped $!
  return "$status"
}

# The CSV: the best median of repeated rows ($RAW -> $1).
merge_rows() {
  mkdir -p "$(dirname "$1")"
  {
    echo "impl,variant,nprocs,bytes,iters,median_us,algbw_GBps,busbw_GBps"
    grep -E '^[a-z_]+,' "$RAW" | grep -v '^impl,' | sort -t, -k1,1 -k2,2 -k3,3n -k4,4n -k6,6g |
      awk -F, '{ key = $1 FS $2 FS $3 FS $4; if (key != last) print; last = key }'
  } >"$1"
}

print_skipped() {
  [ -s "$SKIPPED" ] || return 0
  echo
  echo "skipped:"
  sed 's/^skipped: /  /' "$SKIPPED"
}

timed() {
  local t0
  t0=$(date +%s)
  "$@"
  echo "   ($1 ${2:-}: $(($(date +%s) - t0)) s)"
}
