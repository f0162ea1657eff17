#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# PID 1 of the test guest.  The root is the host's, read-only over 9p; this
# sets up the writable bits, runs /tmp/out/cmd.sh (written by
# scripts/vm-run.sh into the shared result dir), stores its exit status and
# reboots cleanly (QEMU runs with -no-reboot, so it exits).
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/tmp TERM=dumb LANG=C.UTF-8 PYTHONDONTWRITEBYTECODE=1

finish() {
	sync
	umount /tmp/out 2>/dev/null
	echo "damon-perf-guest: rebooting"
	/bin/busybox reboot -f
	# not reached unless reboot failed
	echo b >/proc/sysrq-trigger
}
trap finish EXIT

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm
# What udev would create: the kselftest runner writes to /dev/stdout and
# bash's process substitution needs /dev/fd.
ln -sf /proc/self/fd /dev/fd
ln -sf /proc/self/fd/0 /dev/stdin
ln -sf /proc/self/fd/1 /dev/stdout
ln -sf /proc/self/fd/2 /dev/stderr
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
# The harness's own directories (DP_TOP, DP_BUILD: kernel command line
# parameters, so environment variables here) may live under a directory that
# gets a tmpfs below, e.g. a clone in /tmp: keep them visible by moving a bind
# mount of each over the new tmpfs.
mount_tmpfs() {	# mount_tmpfs DIR [mount options]
	local d=$1 p n=0 kept=()
	shift
	for p in "${DP_TOP:-}" "${DP_BUILD:-}"; do
		case "$p/" in
		"$d"/*)
			mkdir -p "/dev/.keep$n"
			mount --bind "$p" "/dev/.keep$n" && kept+=("$n:$p")
			n=$((n + 1))
			;;
		esac
	done
	mount -t tmpfs "$@" tmpfs "$d" || return
	for p in "${kept[@]}"; do
		mkdir -p "${p#*:}"
		mount --move "/dev/.keep${p%%:*}" "${p#*:}"
	done
}
mount_tmpfs /tmp -o mode=1777
mount_tmpfs /run
for d in /var/tmp /var/log /root; do
	mount_tmpfs "$d" 2>/dev/null
done
# drgn (DAMON's drgn-based kselftests) reads the running kernel through
# /proc/kcore, and its debug info from vmlinux in a standard place, e.g.
# /boot/vmlinux-RELEASE.  On a kernel with /proc/kcore, a tmpfs over /boot
# (the guest's only) holds that name, a link to the booted kernel's vmlinux
# (DP_VMLINUX, from vm-run.sh).
if [ -e /proc/kcore ] && [ -f "${DP_VMLINUX:-}" ] && mount_tmpfs /boot; then
	ln -s "$DP_VMLINUX" "/boot/vmlinux-$(uname -r)"
fi
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
mkdir -p /tmp/out
if ! mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 out /tmp/out; then
	echo "damon-perf-guest: cannot mount the result share" >&2
	exit 1
fi
hostname damon-perf-guest 2>/dev/null
echo "damon-perf-guest: running $(cat /tmp/out/cmd.sh | tail -n 1)"
cd /tmp || exit 1
# The command's output goes to the result dir and, for liveness, the console.
bash /tmp/out/cmd.sh 2>&1 | tee /tmp/out/output.log
rc=${PIPESTATUS[0]}
echo "$rc" >/tmp/out/status
echo "damon-perf-guest: command exited $rc"
