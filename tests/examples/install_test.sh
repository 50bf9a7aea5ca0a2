#!/usr/bin/env bash
# The installed package, used the way a consumer uses it:
#   install_test.sh BUILD_DIR SOURCE_DIR CXX_COMPILER
# installs BUILD_DIR into a fresh prefix; checks the files and that the public headers stand
# alone; builds examples/plugin_host (and plugin_host_cli, when Boost is there) against the
# prefix with find_package(jail) and runs it; builds a program with pkg-config; renders the
# man page. Every temporary directory is removed on the way out.
set -euo pipefail
build_dir=$1
source_dir=$2
cxx=$3

work=$(mktemp -d "${TMPDIR:-/tmp}/jail-test-install.XXXXXXXX")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
step() { echo "=== $*"; }

step "cmake --install into $prefix"
cmake --install "$build_dir" --prefix "$prefix" >"$work/install.log"
pc=$(find "$prefix" -name jail.pc)
config=$(find "$prefix" -name jailConfig.cmake)
lib=$(find "$prefix" -name libjail.a)
for f in "$prefix/bin/jail" "$prefix/include/jail/spec.hpp" "$prefix/include/jail/launch.hpp" \
         "$prefix/share/jail/policies/default.policy" "$prefix/share/man/man1/jail.1" \
         "$pc" "$config" "$lib" "$(dirname "$config")/jailConfigVersion.cmake" \
         "$(dirname "$config")/jailTargets.cmake" "$(dirname "$lib")/libjail_policies.a" \
         "$(dirname "$lib")/libjail_egress_rules.a" "$prefix/libexec/jail/jail-egress"; do
  [[ -n $f && -f $f ]] || { echo "not installed: ${f:-(a file)}"; exit 1; }
done
step "the AppArmor profile for Ubuntu's user-namespace restriction names the installed jail"
profile=$prefix/etc/apparmor.d/jail
grep -q "^profile jail $prefix/bin/jail flags=(unconfined) {" "$profile" ||
  { echo "the AppArmor profile does not name $prefix/bin/jail:"; cat "$profile"; exit 1; }
grep -q "^  userns,$" "$profile" || { echo "the AppArmor profile grants no userns"; exit 1; }
echo "installed: $(cd "$prefix" && find . -type f | sort | tr '\n' ' ')"
echo "installed size: $(du -sk "$prefix" | cut -f1) KiB"

step "a lean install: no debug info in the executable or the archives"
for f in "$prefix/bin/jail" "$lib" "$(dirname "$lib")"/libjail_policies.a "$(dirname "$lib")"/libjail_text.a; do
  if readelf -S -W "$f" 2>/dev/null | grep -qE '\.debug_(info|line)'; then
    echo "installed with debug info: $f"
    exit 1
  fi
done

step "the installed jail runs and reads the installed policies"
# Through a file: grep -q stops reading at its match, and under pipefail jail's SIGPIPE on the
# rest of the help would fail the step.
"$prefix/bin/jail" --help >"$work/help.txt"
grep -q -- --status-fd "$work/help.txt"
# baseline.policy is not a policy of its own: the compiler puts it in front of every policy.
for policy in "$prefix"/share/jail/policies/*.policy; do
  [[ $(basename "$policy") == baseline.policy ]] || "$prefix/bin/jail" policy check "$policy"
done

step "public headers: only <jail/...> and system headers, each compiles alone"
if grep -nE '#include "' "$prefix"/include/jail/*.hpp | grep -vE '#include "jail/[a-z_]+\.hpp"'; then
  echo "a public header includes something that is not installed"
  exit 1
fi
for header in "$prefix"/include/jail/*.hpp; do
  echo "#include <jail/$(basename "$header")>" |
    "$cxx" -std=c++20 -fsyntax-only -Wall -Wextra -Werror -I"$prefix/include" -x c++ - ||
    { echo "$header does not compile on its own"; exit 1; }
done
# What launch() throws is declared by launch.hpp's own includes.
printf '%s\n' '#include <jail/launch.hpp>' \
  'int main() { try { (void)jail::launch(jail::Spec{}); } catch (const jail::Error& e) { return e.errno_value(); } }' |
  "$cxx" -std=c++20 -fsyntax-only -Wall -Wextra -Werror -I"$prefix/include" -x c++ - ||
  { echo "catching jail::Error needs more than <jail/launch.hpp>"; exit 1; }

step "find_package(jail): examples/plugin_host against the prefix"
cmake -S "$source_dir/examples/plugin_host" -B "$work/plugin_host" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=Release >"$work/configure.log" ||
  { cat "$work/configure.log"; exit 1; }
cmake --build "$work/plugin_host" -j2
bash "$source_dir/tests/examples/check_host.sh" answers "$work/plugin_host/plugin_host"

if [[ -f /usr/include/boost/process.hpp ]]; then
  step "find_package(jail): examples/plugin_host_cli runs the installed jail (jail::cli)"
  cmake -S "$source_dir/examples/plugin_host_cli" -B "$work/plugin_host_cli" \
    -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=Release \
    >"$work/configure-cli.log" || { cat "$work/configure-cli.log"; exit 1; }
  cmake --build "$work/plugin_host_cli" -j2
  grep -rqF "$prefix/bin/jail" "$work/plugin_host_cli/CMakeFiles" ||
    { echo "plugin_host_cli was not built to run $prefix/bin/jail"; exit 1; }
  bash "$source_dir/tests/examples/check_host.sh" answers "$work/plugin_host_cli/plugin_host_cli"
fi

step "pkg-config --cflags --libs jail"
export PKG_CONFIG_PATH=$(dirname "$pc")
flags=$(pkg-config --cflags --libs jail)
echo "$flags"
[[ $(pkg-config --modversion jail) == "$(grep -m1 -oP 'set\(PACKAGE_VERSION "\K[^"]+' \
      "$(dirname "$config")/jailConfigVersion.cmake")" ]]
mkdir "$work/data"
echo "from the host" >"$work/data/hello"
cat >"$work/consumer.cpp" <<'CPP'
#include <jail/launch.hpp>
#include <cstdio>
#include <string>
int main(int argc, char** argv) {
  if (argc != 2) return 2;
  jail::Spec spec;
  spec.argv = {"/bin/sh", "-c", "cat /data/hello; echo to-stderr >&2"};
  spec.env = jail::default_environment();
  spec.stdio = jail::Stdio::pipe;
  spec.mounts.push_back(jail::Mount::ro_bind(argv[1], "/data"));
  spec.mounts.push_back(jail::Mount::tmpfs("/scratch", 1 << 20));
  try {
    jail::Process probe = jail::launch(spec);
    (void)probe.wait();
  } catch (const jail::Error& error) {
    std::fprintf(stderr, "launch: %s\n", error.what());
    return 1;
  }
  const jail::Result result = jail::run(spec, jail::RunOutput::keep(1 << 20));
  std::printf("%s%s", result.stdout_bytes.c_str(), result.stderr_bytes.c_str());
  const bool ok = result.outcome == jail::Outcome::exited && result.exit_code == 0 &&
                  result.stdout_bytes == "from the host\n" && result.stderr_bytes == "to-stderr\n";
  return ok ? 0 : 1;
}
CPP
# shellcheck disable=SC2086  # the flags are words
"$cxx" -std=c++20 -O2 -o "$work/consumer" "$work/consumer.cpp" $flags
"$work/consumer" "$work/data"
consumer_kib=$(du -k "$work/consumer" | cut -f1)
echo "consumer: ${consumer_kib} KiB"
((consumer_kib < 10 * 1024)) || { echo "the consumer is ${consumer_kib} KiB; at most 10 MiB"; exit 1; }

step "man page renders"
if command -v man >/dev/null; then
  MANWIDTH=100 man -l "$prefix/share/man/man1/jail.1" >"$work/man.txt"
else
  groff -man -Tutf8 -P-cbou "$prefix/share/man/man1/jail.1" >"$work/man.txt"
fi
for section in NAME SYNOPSIS DESCRIPTION OPTIONS "EXIT STATUS" "STATUS JSON" EXAMPLES SECURITY; do
  grep -q "^$section" "$work/man.txt" || { echo "man page: no $section section"; exit 1; }
done
# No warnings from groff: every macro and escape is one it knows.
if groff -man -Tutf8 -ww -z "$prefix/share/man/man1/jail.1" 2>&1 | grep .; then exit 1; fi
echo "all good"
