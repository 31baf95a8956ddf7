#!/usr/bin/env bash
# Installs every build, test and benchmark dependency of rtrace on Debian 12.
# Idempotent: when everything is already installed it prints nothing and
# touches nothing.
set -euo pipefail

packages=(
  build-essential cmake pkg-config clang libclang-rt-14-dev
  libcmocka-dev libexpat1-dev libdw-dev libelf-dev zlib1g-dev libzstd-dev libunwind-dev
  binutils elfutils
  time
  valgrind
  strace
  libxml2-utils libtest-valgrind-perl python3 chromium
  heaptrack heaptrack-gui massif-visualizer kcachegrind xvfb xauth x11-apps x11-utils dbus-daemon
)

# SARIF validation (tests/cli/sarif.sh) runs Microsoft's validator, an npm
# package: npm itself from Debian when the machine has none.
command -v npm > /dev/null || packages+=(npm)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
if [ "$(id -u)" -ne 0 ]; then
  sudo=sudo
else
  sudo=
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq >/dev/null
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Microsoft's SARIF validator (npm @microsoft/sarif-multitool, a
# self-contained .NET program for linux-x64 in an optional dependency),
# pinned, installed globally once: `sarif-multitool` on the PATH.
sarif_multitool=5.7.0
if [ "$(npm ls -g --depth=0 --parseable @microsoft/sarif-multitool 2>/dev/null | wc -l)" -eq 0 ] ||
   ! npm ls -g --depth=0 @microsoft/sarif-multitool 2>/dev/null | grep -q "@$sarif_multitool"; then
  echo "setup: installing @microsoft/sarif-multitool@$sarif_multitool (npm)"
  $sudo npm install -g --no-audit --no-fund --loglevel=error "@microsoft/sarif-multitool@$sarif_multitool" >/dev/null
fi
