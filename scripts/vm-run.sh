#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-run.sh [options] VARIANT -- CMD...
# Boot VARIANT's bzImage in QEMU with the host root shared read-only over 9p,
# run CMD (a bash command line) in the guest, and return its exit status.
# Output: $BUILD/vm/NAME/{console.log,output.log,status,verdict} (NAME from
# --name); verdict says whether the exit status is the guest command's
# ("guest N") or the VM's failure ("vm: why").
#
# Fails (exit 1) when the guest did not reach a clean reboot, when the
# console shows a WARN, BUG, Oops, panic, KASAN, UBSAN, lockdep or kmemleak
# report, or on timeout.  Otherwise exits with CMD's status.
# Options: --name NAME  --cpus N (2)  --mem MB (1024)  --timeout S (600)
#          --append "kernel args"  --maxcpus M (possible CPUs, M - N of them
#          offline and hotpluggable; default N)
# Env: VM_ACCEL=tcg|kvm|auto (tcg); VM_TCG_THREAD=single|multi (single: see
# accel_args); VM_CPU (max).  auto uses KVM only where a quick probe
# boot under KVM finished fast; the result is cached in $CACHE/kvm-probe.
# VM_ICOUNT=1 (tcg only): single-threaded TCG with -icount shift=0, so that
# the guest's clock advances 1 ns per instruction that a vCPU executes: a
# time the guest measures is then an instruction count (make bench's
# deterministic mode).  The vCPUs take turns on one host thread.
# VM_RANDMAPS=1: keep user-space address randomization on.  By default the
# guest boots with norandmaps: TCG finds a block it translated by its guest
# virtual address, so with randomized mappings every exec translates ld.so
# and libc again (qht_lookup_custom and tcg_gen_code were a quarter of
# QEMU's time).  DAMON's 7.3 sysfs.sh on one vCPU: 427 s randomized, 113 s
# with norandmaps (2026-12-02, beside a kernel build).  It changes where
# mmap() places a mapping, not which kernel code runs.
# VM_MACHINE: the value of -machine (q35), e.g. q35,hmat=on for ACPI HMAT.
# VM_QEMU_ARGS: extra QEMU arguments, word-split (no quoting inside), e.g.
# the memory backends and -numa options of a two-node guest (--mem must then
# be the sum of the backends' sizes; bench/eval/ uses both knobs).
. "$(dirname "$0")/lib.sh"

name=run cpus=2 maxcpus="" mem=1024 timeout=600 append=""
while [ $# -gt 0 ]; do
	case "$1" in
	--name) name=$2; shift 2 ;;
	--cpus) cpus=$2; shift 2 ;;
	--maxcpus) maxcpus=$2; shift 2 ;;
	--mem) mem=$2; shift 2 ;;
	--timeout) timeout=$2; shift 2 ;;
	--append) append=$2; shift 2 ;;
	--) shift; break ;;
	-*) die "vm-run: unknown option $1" ;;
	*) variant=$1; shift ;;
	esac
done
[ -n "${variant:-}" ] && [ $# -gt 0 ] || die "usage: vm-run.sh [opts] VARIANT -- CMD..."
kernel=$(objdir "$variant")/arch/x86/boot/bzImage
[ -f "$kernel" ] || die "vm-run: no kernel $kernel (build $variant first)"
command -v qemu-system-x86_64 >/dev/null || die "vm-run: qemu missing (scripts/deps.sh)"

out=$BUILD/vm/$name
rm -rf "$out"
mkdir -p "$out"
printf 'set -o pipefail\ncd /tmp\n%s\n' "$*" >"$out/cmd.sh"

accel=${VM_ACCEL:-tcg}
if [ "$accel" = auto ]; then
	accel=tcg
	probe=$CACHE/kvm-probe
	if [ -w /dev/kvm ] && [ ! -f "$probe" ]; then
		log "vm-run: probing KVM (15 s max)"
		if VM_ACCEL=kvm timeout 40 bash "$0" --name kvm-probe --timeout 15 \
			"$variant" -- true >/dev/null 2>&1; then
			echo kvm >"$probe"
		else
			echo tcg >"$probe"
		fi
	fi
	[ -f "$probe" ] && accel=$(cat "$probe")
fi
case "$accel" in
kvm) accel_args=(-accel kvm -cpu host,-arch-capabilities) ;;
# Single-threaded TCG by default: QEMU 7.2's multi-threaded TCG lets a vCPU
# run stale code after the kernel patched it from another vCPU
# (text_poke_bp() of static keys, CONFIG_JUMP_LABEL): "Oops: int3" in
# do_user_addr_fault() within seconds of 'perf stat -e page-faults -a' in a
# loop beside a faulting process, with no DAMON at all; none in 300 rounds
# single-threaded.  VM_TCG_THREAD=multi brings it back.
tcg) accel_args=(-accel tcg,thread=${VM_TCG_THREAD:-single} -cpu "${VM_CPU:-max}") ;;
*) die "vm-run: VM_ACCEL must be tcg, kvm or auto" ;;
esac
if [ -n "${VM_ICOUNT:-}" ]; then
	[ "$accel" = tcg ] || die "vm-run: VM_ICOUNT needs TCG (VM_ACCEL=tcg)"
	accel_args=(-accel tcg,thread=single -cpu "${VM_CPU:-max}" -icount shift=0)
	accel=tcg-icount
fi

cmdline="console=ttyS0,115200 earlyprintk=serial root=hostroot rootfstype=9p"
cmdline+=" rootflags=trans=virtio,version=9p2000.L,msize=262144,cache=loose ro"
cmdline+=" init=$TOP/guest/init.sh panic=-1 panic_on_warn=1 oops=panic"
cmdline+=" nokaslr DP_TOP=$TOP DP_BUILD=$BUILD DP_VMLINUX=$(objdir "$variant")/vmlinux"
[ "${VM_RANDMAPS:-0}" = 1 ] || cmdline+=" norandmaps"
cmdline+=" $append"

log "vm-run: booting $variant ($accel, $cpus CPUs, ${mem}M) for '$*' [log: $out]"
start=$SECONDS
rc=0
# shellcheck disable=SC2086 # VM_QEMU_ARGS is word-split on purpose
timeout -k 10 "$timeout" qemu-system-x86_64 \
	"${accel_args[@]}" -machine "${VM_MACHINE:-q35}" -smp "$cpus${maxcpus:+,maxcpus=$maxcpus}" -m "$mem" \
	-nographic -no-reboot -nodefaults -serial "file:$out/console.log" \
	-kernel "$kernel" -append "$cmdline" \
	-virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap" \
	-virtfs "local,path=$out,mount_tag=out,security_model=none,multidevs=remap" \
	-device virtio-rng-pci ${VM_QEMU_ARGS:-} </dev/null >"$out/qemu.log" 2>&1 || rc=$?
elapsed=$((SECONDS - start))

fail() {
	echo "vm: $*" >"$out/verdict"
	log "vm-run: FAIL ($name): $*"
	log "vm-run: last console lines ($out/console.log):"
	tail -n 25 "$out/console.log" >&2 || true
	exit 1
}
[ "$rc" -ne 124 ] && [ "$rc" -ne 137 ] ||
	fail "timeout: the guest did not finish within $timeout s"
[ "$rc" -eq 0 ] || fail "qemu exited $rc: $(tail -n 3 "$out/qemu.log")"
bad='WARNING:|BUG:|Oops|Kernel panic|KASAN|UBSAN|kmemleak: [0-9]+ new suspected|'
bad+='possible recursive locking|possible circular locking|INFO: lockdep|'
bad+='suspicious RCU usage|inconsistent lock state|'
bad+="Attempted to kill init|KCSAN: |blocked for more than|rcu: INFO|self-detected stall"
if grep -Eq "$bad" "$out/console.log"; then
	grep -En "$bad" "$out/console.log" | head -n 5 >&2
	fail "the console shows a kernel warning or error"
fi
grep -q 'reboot: Restarting system' "$out/console.log" ||
	fail "the guest did not reach a clean reboot"
[ -f "$out/status" ] || fail "the guest command left no exit status"
status=$(cat "$out/status")
log "vm-run: guest command exited $status after ${elapsed} s"
echo "guest $status" >"$out/verdict"
exit "$status"
