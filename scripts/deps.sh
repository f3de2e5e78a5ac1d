#!/usr/bin/env bash
# Installs the Debian packages tracebench needs, if any is missing.
# --no-install-recommends keeps gcc-arm-none-eabi from pulling in 1.5 GB.
set -euo pipefail
pkgs=(build-essential cmake pkg-config libunicorn-dev libcapstone-dev
      libcriterion-dev libopencsd-bin libopencsd-dev gcc-arm-none-eabi
      binutils-arm-none-eabi clang libclang-rt-14-dev afl++ python3
      openocd gtkwave zip unzip libdw-dev lcov valgrind libxml2-utils)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "deps: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
