#!/bin/bash
# The cgroup-v2 VM test: boots Debian's own kernel (downloaded, not installed) in qemu with an
# initramfs holding busybox, the jail binary and its libraries, mounts pure cgroup v2 there and
# runs jail's limit checks (memory, pids, cpu, timeout, cleanup). See tests/vm/README.md.
#
# usage: run-vm-test.sh JAIL_BINARY [CACHE_DIR]
#   CACHE_DIR keeps the downloaded kernel package between runs (default: ./vm-cache).
# environment: VM_TIMEOUT (seconds the VM may run, default 420), VM_CPUS (2), VM_MEMORY (1024, MiB),
#   VM_KEEP=1 keeps the work dir (initramfs, console log) for a look afterwards.
#
# Exit 0 only when the VM ran every check, printed "N passed, 0 failed" and powered off.
# It never skips: a machine that cannot run the VM fails with a message that says why.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
say() { printf 'vm-test: %s\n' "$*"; }
die() { printf 'vm-test: FAILED: %s\n' "$*" >&2; exit 1; }

[ $# -ge 1 ] || die "usage: $0 JAIL_BINARY [CACHE_DIR]"
jail_bin="$(readlink -f "$1")"
cache="${2:-$PWD/vm-cache}"
vm_timeout="${VM_TIMEOUT:-420}"
vm_cpus="${VM_CPUS:-2}"
vm_memory="${VM_MEMORY:-1024}"
[ -x "$jail_bin" ] || die "the jail binary $jail_bin is missing or not executable (build the 'jail' target first)"
[ "$(uname -m)" = x86_64 ] || die "this test boots an amd64 kernel and needs an x86_64 machine, not $(uname -m)"
mkdir -p "$cache"
start_all=$SECONDS

# --- 1. what the host needs -----------------------------------------------------------------------
# Debian packages: qemu-system-x86 (the VM), busybox-static (the VM's userland), cpio (the initramfs).
apt_updated=0
apt_update() {
  if [ "$apt_updated" = 0 ]; then
    say "apt-get update"
    apt-get update -qq || die "apt-get update failed: no access to Debian's package archive?"
    apt_updated=1
  fi
}
need_packages=()
command -v qemu-system-x86_64 >/dev/null || need_packages+=(qemu-system-x86)
if ! dpkg-query -W -f '${Status}' busybox-static 2>/dev/null | grep -q 'install ok installed'; then
  need_packages+=(busybox-static)
fi
command -v cpio >/dev/null || need_packages+=(cpio)
if [ ${#need_packages[@]} -gt 0 ]; then
  [ "$(id -u)" = 0 ] || die "missing ${need_packages[*]}; install them (apt-get install ${need_packages[*]}) or run this test as root"
  command -v apt-get >/dev/null || die "missing ${need_packages[*]} and no apt-get to install them with (this test expects Debian)"
  apt_update
  say "installing ${need_packages[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need_packages[@]}" >/dev/null ||
    die "apt-get install ${need_packages[*]} failed"
fi
# Whether the executable $1 needs no shared library (ldd says so, and fails, for a static one).
is_static() { { ldd "$1" 2>&1 || true; } | grep -qE 'not a dynamic executable|statically linked'; }
busybox=/bin/busybox
[ -x "$busybox" ] || die "$busybox (package busybox-static) is missing"
is_static "$busybox" || die "$busybox is dynamically linked; the VM needs the static one from busybox-static"

# --- 2. Debian's kernel, downloaded and unpacked, never installed -------------------------------------
# linux-image-amd64 is a meta package; the kernel itself is its dependency linux-image-<abi>-amd64.
kernel_package() {
  apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}'
}
pkg="$(kernel_package || true)"
if [ -z "$pkg" ]; then
  apt_update
  pkg="$(kernel_package || true)"
fi
deb=""
if [ -n "$pkg" ]; then
  deb="$(ls -1 "$cache"/"${pkg}"_*.deb 2>/dev/null | tail -1 || true)"
  # apt's own archive keeps what it fetched (and what this test fetched before, below): a fresh
  # build directory does not depend on the package mirror answering that day.
  apt_archive=/var/cache/apt/archives
  if [ -z "$deb" ]; then
    cached="$(ls -1 "$apt_archive"/"${pkg}"_*.deb 2>/dev/null | tail -1 || true)"
    if [ -n "$cached" ]; then
      say "using $(basename "$cached") from $apt_archive"
      cp "$cached" "$cache"/ && deb="$cache/$(basename "$cached")"
    fi
  fi
  if [ -z "$deb" ]; then
    say "downloading $pkg (apt-get download) into $cache"
    # As root, apt's _apt sandbox user may not be able to write the cache: download as root.
    sandbox=()
    [ "$(id -u)" = 0 ] && sandbox=(-o APT::Sandbox::User=root)
    (cd "$cache" && apt-get download -q "${sandbox[@]}" "$pkg" >/dev/null) || {
      apt_update
      (cd "$cache" && apt-get download -q "${sandbox[@]}" "$pkg" >/dev/null)
    } || die "apt-get download $pkg failed"
    deb="$(ls -1 "$cache"/"${pkg}"_*.deb | tail -1)"
    if [ "$(id -u)" = 0 ] && [ -d "$apt_archive" ]; then cp "$deb" "$apt_archive"/ || true; fi
    # Older kernels cached by earlier runs are of no further use.
    for old in "$cache"/linux-image-*.deb; do
      [ "$old" = "$deb" ] || rm -rf "$old" "${old%.deb}"
    done
  fi
else
  # No package lists (offline): a kernel downloaded by an earlier run still does.
  deb="$(ls -1 "$cache"/linux-image-*-amd64_*.deb 2>/dev/null | tail -1 || true)"
  [ -n "$deb" ] || die "cannot tell which kernel linux-image-amd64 depends on (apt-cache depends failed) and none is cached in $cache"
fi
kdir="$cache/$(basename "$deb" .deb)"
if [ ! -d "$kdir/boot" ]; then
  say "unpacking $(basename "$deb") (dpkg-deb -x)"
  rm -rf "$kdir.tmp"
  mkdir -p "$kdir.tmp"
  dpkg-deb -x "$deb" "$kdir.tmp" || die "dpkg-deb -x $deb failed"
  rm -rf "$kdir"
  mv "$kdir.tmp" "$kdir"
fi
vmlinuz="$(ls -1 "$kdir"/boot/vmlinuz-* 2>/dev/null | head -1 || true)"
[ -n "$vmlinuz" ] || die "no boot/vmlinuz-* in $deb"
kconfig="$(ls -1 "$kdir"/boot/config-* | head -1)"
# Everything the VM uses must be built in: no modules are loaded.
for option in CONFIG_CGROUPS CONFIG_MEMCG CONFIG_CGROUP_PIDS CONFIG_CGROUP_SCHED CONFIG_CFS_BANDWIDTH \
              CONFIG_USER_NS CONFIG_PID_NS CONFIG_SECCOMP_FILTER CONFIG_BLK_DEV_INITRD CONFIG_TMPFS \
              CONFIG_DEVTMPFS CONFIG_SERIAL_8250_CONSOLE; do
  grep -qx "$option=y" "$kconfig" || die "$(basename "$vmlinuz") lacks $option=y; the VM cannot run the checks"
done

# --- 3. the initramfs ------------------------------------------------------------------------------
work="$(mktemp -d "${TMPDIR:-/tmp}/jail-vm-test.XXXXXX")"
qemu_pid=""
cleanup() {
  if [ -n "$qemu_pid" ] && kill -0 "$qemu_pid" 2>/dev/null; then kill "$qemu_pid" 2>/dev/null || true; fi
  if [ "${VM_KEEP:-0}" = 1 ]; then say "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
root="$work/root"
# Laid out like Debian (merged /usr), because jail's default root binds the host's /usr, /bin,
# /lib, /lib64 and recreates their symlinks.
mkdir -p "$root"/{usr/bin,usr/sbin,usr/lib/x86_64-linux-gnu,usr/lib64,etc,proc,sys,dev,tmp,root,run}
ln -s usr/bin "$root/bin"
ln -s usr/sbin "$root/sbin"
ln -s usr/lib "$root/lib"
ln -s usr/lib64 "$root/lib64"
cp "$busybox" "$root/usr/bin/busybox"
for applet in $("$busybox" --list); do
  [ -e "$root/usr/bin/$applet" ] || ln -s busybox "$root/usr/bin/$applet"
done

# jail and, for a dynamic build, the closure of its shared libraries (ldd resolves it), each at
# the path ldd names.
strip_or_copy() {  # debug info only slows the boot down
  if command -v strip >/dev/null; then strip --strip-debug -o "$2" "$1"; else cp -L "$1" "$2"; fi
}
strip_or_copy "$jail_bin" "$root/usr/bin/jail"
chmod 0755 "$root/usr/bin/jail"
# The usual build links jail static-pie (runner/CMakeLists.txt), which needs nothing more;
# a sanitizer build is dynamic.
libs=()
if ! is_static "$jail_bin"; then
  ldd_out="$(ldd "$jail_bin")" || die "ldd $jail_bin failed"
  if grep -q 'not found' <<<"$ldd_out"; then die "ldd $jail_bin: $(grep 'not found' <<<"$ldd_out")"; fi
  while read -r path; do
    [ -n "$path" ] && libs+=("$path")
  done < <(awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}' <<<"$ldd_out" | sort -u)
  for lib in "${libs[@]}"; do
    case "$lib" in
      /usr/*) dest="$root$lib" ;;
      /*) dest="$root/usr$lib" ;;  # /lib/... and /lib64/... live under /usr in a merged-/usr layout
    esac
    mkdir -p "$(dirname "$dest")"
    cp -L "$lib" "$dest"
  done
  [ -e "$root/usr/lib64/ld-linux-x86-64.so.2" ] ||
    die "the loader /lib64/ld-linux-x86-64.so.2 is not in ldd's answer for $jail_bin"
fi
if command -v ldconfig >/dev/null; then ldconfig -r "$root" 2>/dev/null || true; fi

cat >"$root/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin
EOF
cat >"$root/etc/group" <<'EOF'
root:x:0:
nogroup:x:65534:
EOF
echo jail-vm >"$root/etc/hostname"
install -m 0755 "$here/init.sh" "$root/init"
install -m 0755 "$here/checks.sh" "$root/usr/bin/jail-vm-checks"
initrd="$work/initrd.gz"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1 >"$initrd") || die "building the initramfs with cpio failed"
say "initramfs: $(du -h "$initrd" | cut -f1) with busybox, jail ($(du -h "$root/usr/bin/jail" | cut -f1)) and ${#libs[@]} libraries"

# --- 4. boot ---------------------------------------------------------------------------------------
# Software emulation by default: it runs everywhere. KVM (VM_ACCEL=kvm) is faster where it
# really works, but a nested /dev/kvm may exist and still hang the guest.
accel="${VM_ACCEL:-tcg}"
log="$work/console.log"
say "booting $(basename "$vmlinuz") from $(basename "$deb"): qemu accel=$accel, $vm_cpus CPUs, ${vm_memory} MiB, at most ${vm_timeout}s"
# boot APPEND_EXTRA: one boot; sets qemu_rc and boot_stalled.
boot() {
  set +e
  # -no-reboot: a panic or reboot ends qemu instead of looping; panic=-1 reboots at once on a
  # panic. cgroup_no_v1=all: pure cgroup v2, as on systemd hosts with the unified hierarchy.
  timeout --kill-after=10 "$vm_timeout" qemu-system-x86_64 \
    -accel "$accel" -smp "$vm_cpus" -m "$vm_memory" -nographic -no-reboot -nic none \
    -kernel "$vmlinuz" -initrd "$initrd" \
    -append "console=ttyS0 edd=off panic=-1 cgroup_no_v1=all rdinit=/init $1" \
    </dev/null >"$log" 2>&1 &
  qemu_pid=$!
  # A VM that does not even reach init within VM_BOOT_TIMEOUT is stopped early.
  local started=$SECONDS
  boot_stalled=0
  while kill -0 "$qemu_pid" 2>/dev/null; do
    if ! grep -aq 'vm: kernel' "$log" && [ $((SECONDS - started)) -ge "$boot_timeout" ]; then
      say "no sign of the VM's init after ${boot_timeout}s: stopping qemu"
      boot_stalled=1
      kill "$qemu_pid" 2>/dev/null || true
      break
    fi
    sleep 1
  done
  wait "$qemu_pid"
  qemu_rc=$?
  qemu_pid=""
  set -e
}
boot_timeout="${VM_BOOT_TIMEOUT:-120}"
boot_start=$SECONDS
boot "loglevel=3"
# Under software emulation the guest kernel has, once in a few runs, stalled before its init
# (the console stayed at "Booting from ROM.."), before any of jail's code runs: that boot is
# shown, and the VM booted once more, with the kernel's messages on to show where a stall is.
if [ "$boot_stalled" = 1 ]; then
  echo "----- the stalled boot's console -----"
  tr -d '\r' <"$log" | sed -e 's/\x1b\[[0-9;?]*[a-zA-Z]//g' -e 's/\x1bc//g' | grep -av '^\s*$' || true
  echo "----- end -----"
  say "booting once more (the stall was before the VM's init)"
  boot_start=$SECONDS
  boot "loglevel=7 printk.time=1"
fi
boot_secs=$((SECONDS - boot_start))

# --- 5. the verdict ----------------------------------------------------------------------------------
tr -d '\r' <"$log" >"$log.txt"
echo "----- VM console -----"
# Firmware noise and terminal escapes are of no use to a reader.
sed -e 's/\x1b\[[0-9;?]*[a-zA-Z]//g' -e 's/\x1bc//g' "$log.txt" | grep -av '^\s*$' || true
echo "----- end of VM console -----"
passes=$(grep -ac '^PASS ' "$log.txt" || true)
fails=$(grep -ac '^FAIL ' "$log.txt" || true)
summary="$(grep -aE '^[0-9]+ passed, [0-9]+ failed$' "$log.txt" | tail -1 || true)"
say "VM ran ${boot_secs}s (whole test $((SECONDS - start_all))s); qemu exit $qemu_rc"
[ "$boot_stalled" = 0 ] || die "the VM did not reach its init within ${boot_timeout}s (accel $accel; see the console above)"
if [ "$qemu_rc" = 124 ] || [ "$qemu_rc" = 137 ]; then
  die "the VM did not finish within ${vm_timeout}s (a check hung?); $passes passed and $fails failed before that"
fi
[ "$qemu_rc" = 0 ] || die "qemu exited with $qemu_rc (see the console above)"
[ -n "$summary" ] || die "the VM powered off without the checks' summary line (init failed? see the console above)"
grep -aq '^checks done' "$log.txt" || die "the checks did not finish"
[ "$fails" = 0 ] || die "$fails check(s) failed under cgroup v2: $(grep -a '^FAIL ' "$log.txt" | cut -d: -f1 | cut -c6- | tr '\n' ' ')"
[ "$passes" -gt 0 ] || die "no check ran"
say "all $passes checks passed under pure cgroup v2"
