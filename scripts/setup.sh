# Sourced by scripts/demo and scripts/test: installs the Debian packages the
# build needs (only those missing), then configures and builds into build/.
# CUDA and NCCL are used when found under /usr/local/cuda, never required.

DIST_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DIST_BUILD=${DIST_BUILD:-$DIST_ROOT/build}

DIST_PACKAGES=(build-essential cmake pkg-config libucx-dev ucx-utils libhwloc-dev hwloc
               libcmocka-dev nlohmann-json3-dev libssl-dev zlib1g-dev python3 binutils
               iproute2 util-linux)  # iproute2, util-linux: the emulated hosts (tests/multihost)
# The demo's training data: scikit-learn's digits, as Debian ships them.
DIST_DEMO_PACKAGES=(python3-sklearn)

dist_install_packages() {
  local missing=()
  for package in "$@"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
      missing+=("$package")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "== installing: ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
}

dist_build() {
  echo "== configuring and building in $DIST_BUILD"
  cmake -S "$DIST_ROOT" -B "$DIST_BUILD" -DCMAKE_BUILD_TYPE="${DIST_BUILD_TYPE:-RelWithDebInfo}" \
    -DDIST_WARNINGS_AS_ERRORS=ON \
    "$@" >"$DIST_BUILD.configure.log" 2>&1 || { cat "$DIST_BUILD.configure.log"; return 1; }
  grep -E "^-- libdistribute:" "$DIST_BUILD.configure.log" || true
  cmake --build "$DIST_BUILD" -j "$(nproc)" 2>&1 | grep -vE "^\[ *[0-9]+%\]|^make|^Consolidate|^Scanning" || true
  [ "${PIPESTATUS[0]}" -eq 0 ]
}

dist_setup() {
  dist_install_packages "${DIST_PACKAGES[@]}" && dist_build "$@"
}
