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

# Intel MPI and oneCCL, the peers Intel tunes for CPUs: PyPI's wheels, pinned,
# downloaded once into $WORK/intel-wheels and unpacked into the prefix
# $WORK/intel (never needed by the library's build or tests), then
# impi_bench and oneccl_bench built against it. Sets INTEL. Debian's
# libfabric1 serves both.
INTEL_WHEELS=(impi-rt==2021.19.0 impi-devel==2021.19.0 oneccl==2022.2.0 oneccl-cpu==2022.2.0 oneccl-devel==2022.2.0)
install_intel() {
  INTEL=$WORK/intel
  dist_install_packages libfabric1 unzip python3-pip
  if [ ! -x "$INTEL/bin/mpiexec.hydra" ] || [ ! -e "$INTEL/include/oneapi/ccl.hpp" ]; then
    echo "== installing Intel MPI and oneCCL from PyPI into $INTEL"
    local wheels=$WORK/intel-wheels unpacked=$WORK/intel-unpacked wheel
    mkdir -p "$wheels"
    python3 -m pip download --quiet --no-deps --only-binary=:all: --platform manylinux_2_28_x86_64 \
      -d "$wheels" "${INTEL_WHEELS[@]}"
    rm -rf "$INTEL" "$unpacked"
    mkdir -p "$INTEL"
    # Their files are the wheels' data (*.data/data/{bin,lib,include,...}).
    # oneccl before oneccl-cpu: the CPU-only libccl.so.1 replaces the full
    # one's and needs its libccl.so.2.
    for wheel in impi_rt impi_devel oneccl- oneccl_cpu oneccl_devel; do
      mkdir -p "$unpacked/$wheel"
      unzip -qo "$wheels/$wheel"*.whl '*.data/data/*' -d "$unpacked/$wheel"
      cp -a "$unpacked/$wheel"/*.data/data/. "$INTEL/"
    done
    rm -rf "$unpacked"
  fi
  make -s -C "$ROOT/bench/peers" intel BUILD="$WORK/peers" INTEL="$INTEL"
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

# The CSV ($RAW -> $1): the best median of each row repeated over rounds, per
# machine mode (the ninth column, empty where no probe ran).
merge_rows() {
  mkdir -p "$(dirname "$1")"
  {
    echo "impl,variant,nprocs,bytes,iters,median_us,algbw_GBps,busbw_GBps,mode"
    grep -E '^[a-z_]+,' "$RAW" | grep -v '^impl,' | awk -F, -v OFS=, 'NF == 8 { $9 = "" } { print }' |
      sort -t, -k9,9 -k1,1 -k2,2 -k3,3n -k4,4n -k6,6g |
      awk -F, '{ key = $1 FS $2 FS $3 FS $4 FS $9; if (key != last) print; last = key }'
  } >"$1"
}

# ---- the machine's speed mode ------------------------------------------------------
# This machine switches between a fast and a slow mode within seconds to
# minutes. What tells them apart is the round trip of a cache line between
# two cores (bench/modes/cross_core --round-trip): 95-150 ns in the fast mode,
# 410-500 in the slow one (bench/README.md, "What the slow mode is"); an
# 8-byte all-reduce, the probe before, moves too little to separate them.
# With MODE_PROBE=1 each launch runs between two probes, and the rows it wrote
# are labelled fast, slow, or mixed when the probes differ.
MODE_PROBE=${MODE_PROBE:-0}
MODE_SLOW_FROM_NS=280
MODE_PROBE_PROGRAM=$SCRATCH/cross_core
# Compiles the probe once, after install_missing (cc); a failure is said
# then, and the rows are labelled unknown.
build_mode_probe() {
  if ! cc -O2 -Wall -Wextra -Werror -std=c11 -pthread "$ROOT/bench/modes/cross_core.c" -o "$MODE_PROBE_PROGRAM"; then
    echo "bench: the mode probe bench/modes/cross_core.c did not compile (above); rows are labelled 'unknown'" >&2
    MODE_PROBE_PROGRAM=""
  fi
}
probe_mode() {
  local ns
  if [ -z "$MODE_PROBE_PROGRAM" ]; then echo unknown; return; fi
  ns=$(timeout -k 5 30 "$MODE_PROBE_PROGRAM" --round-trip 2>/dev/null) || ns=""
  if [ -z "$ns" ]; then echo unknown; return; fi
  awk -v ns="$ns" -v limit="$MODE_SLOW_FROM_NS" 'BEGIN { print (ns + 0 < limit + 0) ? "fast" : "slow" }'
}
mode_begin() {
  [ "$MODE_PROBE" = 1 ] || return 0
  MODE_BEFORE=$(probe_mode)
  MODE_FROM=$(wc -l <"$RAW")
}
mode_end() {
  [ "$MODE_PROBE" = 1 ] || return 0
  local after mode
  after=$(probe_mode)
  mode=$MODE_BEFORE
  [ "$after" = "$MODE_BEFORE" ] || mode=mixed
  awk -F, -v OFS=, -v from="$MODE_FROM" -v mode="$mode" 'NR > from && NF == 8 { $9 = mode } { print }' "$RAW" \
    >"$RAW.labelled" && mv "$RAW.labelled" "$RAW"
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
