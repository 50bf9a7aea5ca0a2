#!/bin/sh
# PID 1 of the cgroup-v2 test VM (busybox sh). Built into the initramfs as /init by
# run-vm-test.sh; prints the checks' results on the serial console and powers the VM off.
export PATH=/usr/bin:/usr/sbin
export HOME=/root

if [ "$1" != stage2 ]; then
  # The initramfs is the kernel's rootfs, which pivot_root(2) cannot leave (EINVAL) — and jail
  # pivots into its new root. Like a real system's initramfs, move everything to a tmpfs first.
  mkdir /newroot
  mount -t tmpfs -o mode=0755 root /newroot
  for entry in /*; do
    [ "$entry" = /newroot ] || cp -a "$entry" /newroot/
  done
  # Should this fail, PID 1 ends, the kernel panics (panic=-1) and qemu exits (-no-reboot):
  # the host reports that no summary came.
  exec switch_root /newroot /init stage2
fi

echo  # the firmware's last line has no newline
mount -t proc -o nosuid,nodev,noexec proc /proc
mount -t sysfs -o nosuid,nodev,noexec sysfs /sys
mount -t devtmpfs -o nosuid devtmpfs /dev
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs /tmp
mkdir -p /dev/pts /dev/shm
mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts /dev/pts
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs /dev/shm
hostname jail-vm

# Pure cgroup v2 (cgroup_no_v1=all on the kernel command line), mounted the way systemd mounts it.
if ! mount -t cgroup2 -o nosuid,nodev,noexec,nsdelegate,memory_recursiveprot cgroup2 /sys/fs/cgroup; then
  echo "FAIL boot: cannot mount cgroup2 at /sys/fs/cgroup"
  echo "0 passed, 1 failed"
  poweroff -f
fi
# Like systemd: controllers handed down from the root, and this init in a cgroup of its own
# (init.scope); every jail run gets a fresh delegated scope beside it (see jail-vm-checks).
echo "+memory +pids +cpu" >/sys/fs/cgroup/cgroup.subtree_control
mkdir /sys/fs/cgroup/init.scope
echo $$ >/sys/fs/cgroup/init.scope/cgroup.procs

echo "vm: kernel $(uname -r), $(nproc) CPUs, $(awk '/MemTotal/ {print int($2/1024) " MiB"}' /proc/meminfo)"
echo "vm: $(grep -c cgroup /proc/mounts) cgroup mount(s): $(grep cgroup /proc/mounts | cut -d' ' -f1-3 | tr '\n' ' ')"
echo "vm: cgroup.controllers: $(cat /sys/fs/cgroup/cgroup.controllers); subtree_control: $(cat /sys/fs/cgroup/cgroup.subtree_control)"

/usr/bin/jail-vm-checks
echo "checks done (exit $?)"
sync
poweroff -f
