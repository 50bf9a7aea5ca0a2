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

# Docker's default seccomp profile, for the Landlock mode's tests under it (issue 44): only the
# profile's JSON from Debian's package, which installed would pull in some 259 Go packages.
docker_profile=/usr/local/share/jail/test/docker-default-seccomp.json
if [[ ! -s "$docker_profile" ]]; then
  download=$(mktemp -d)
  trap 'rm -rf "$download"' EXIT
  # apt drops to _apt for the download, which must be able to write there.
  chmod 0755 "$download"
  chown _apt "$download" 2>/dev/null || true
  if ! (cd "$download" && apt-get download -q golang-github-docker-docker-dev); then
    apt-get update -q
    (cd "$download" && apt-get download -q golang-github-docker-docker-dev)
  fi
  mkdir -p "$(dirname "$docker_profile")"
  dpkg-deb --fsys-tarfile "$download"/golang-github-docker-docker-dev_*.deb |
    tar -xO ./usr/share/gocode/src/github.com/docker/docker/profiles/seccomp/default.json \
      >"$docker_profile.new"
  mv "$docker_profile.new" "$docker_profile"
  chmod 0644 "$docker_profile"
fi
