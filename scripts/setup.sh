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
  libxml2-utils libtest-valgrind-perl python3
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  sudo=sudo
else
  sudo=
fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq >/dev/null
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
