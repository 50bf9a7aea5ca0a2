#!/usr/bin/env bash
# Installs what jail needs to build and test, from Debian packages only. Safe to run repeatedly.
set -euo pipefail
packages=(
  build-essential cmake pkg-config clang-format clang ccache
  libseccomp-dev libcap-dev libspdlog-dev libfmt-dev libcli11-dev libtomlplusplus-dev
  nlohmann-json3-dev libgtest-dev libgmock-dev nettle-dev zlib1g-dev
  libboost-dev libboost-filesystem-dev groff-base
  python3 iproute2 procps util-linux coreutils git tmux busybox-static runsc crun bc bubblewrap
  curl
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
