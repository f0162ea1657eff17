# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2154 # consumers-guest.sh sets the globals it uses
# consumers-guest.sh, check bpftrace: a one-liner counts damon_perf_sample by
# reason, and the drains.  Sourced by consumers-guest.sh, which calls
# run_bpftrace while DAMON runs; uses its pass/fail/skip, keep and evidence.
#
# bpftrace builds the struct of a tracepoint's args from its tracefs format
# file, whose fields here are u64/u8/int/unsigned long.  It gets u64 and u8
# from BTF (/sys/kernel/btf/vmlinux, CONFIG_DEBUG_INFO_BTF) if there is any,
# or else from <linux/types.h>: of the running kernel's headers if it finds
# them, or else of /usr/include, whose UAPI header only has __u64, so that
# the one-liner fails with "unknown type name 'u64'".  A minimal types.h of
# our own, first in the include path (-I), fills the gap; with BTF, bpftrace
# defines _LINUX_TYPES_H itself and this header is not used.
run_bpftrace() {
	local ver prog a t0 rc r0 r2 drains others want
	if ! command -v bpftrace >/dev/null; then
		skip bpftrace "not installed (Debian package bpftrace)"
		return
	fi
	if [ ! -e "${CONSUMERS_BPF_SYSCTL:-/proc/sys/kernel/unprivileged_bpf_disabled}" ]; then
		skip bpftrace "the kernel has no bpf() system call (CONFIG_BPF_SYSCALL is not set)"
		return
	fi
	ver=$(bpftrace --version 2>&1 | grep -oE '[0-9]+\.[0-9]+(\.[0-9]+)?' | head -n 1)
	# "args" is a pointer up to 0.18 (args->f); later versions take args.f
	# (0.19.0 not yet for tracepoints, bpftrace issue 2771).
	a='args->'
	case "$ver" in
	0.1[0-9]|0.1[0-9].*|0.[0-9]|0.[0-9].*) ;;
	[0-9]*) a='args.' ;;
	esac
	mkdir -p "$W/bt-include/linux"
	cat >"$W/bt-include/linux/types.h" <<-'EOF'
	#ifndef _LINUX_TYPES_H
	#define _LINUX_TYPES_H
	typedef signed char s8;
	typedef unsigned char u8;
	typedef short s16;
	typedef unsigned short u16;
	typedef int s32;
	typedef unsigned int u32;
	typedef long long s64;
	typedef unsigned long long u64;
	typedef s8 __s8;
	typedef u8 __u8;
	typedef s16 __s16;
	typedef u16 __u16;
	typedef s32 __s32;
	typedef u32 __u32;
	typedef s64 __s64;
	typedef u64 __u64;
	#endif
	EOF
	prog="tracepoint:damon:damon_perf_sample { @r[${a}reason] = count(); }"
	# a control in kdamond context: shows whether tracepoints reach BPF at all
	prog+=" tracepoint:damon:damon_perf_drain { @drains = count(); }"
	prog+=" interval:s:$secs { exit(); }"
	echo "consumers: bpftrace $ver$([ -e /sys/kernel/btf/vmlinux ] && echo ', kernel BTF' || echo ', no kernel BTF'): $prog"
	damon_running
	t0=$SECONDS
	timeout -k 10 "${BPFTRACE_TIMEOUT:-300}" bpftrace -I "$W/bt-include" -e "$prog" \
		>"$W/bpftrace.out" 2>"$W/bpftrace.err"
	rc=$?
	keep "$W/bpftrace.out"
	keep "$W/bpftrace.err"
	r0=$(sed -n 's/^@r\[0\]: \([0-9][0-9]*\)$/\1/p' "$W/bpftrace.out")
	r2=$(sed -n 's/^@r\[2\]: \([0-9][0-9]*\)$/\1/p' "$W/bpftrace.out")
	drains=$(sed -n 's/^@drains: \([0-9][0-9]*\)$/\1/p' "$W/bpftrace.out")
	others=$(grep -E '^@r\[' "$W/bpftrace.out" | grep -vE '^@r\[[0-4]\]: [0-9]+$')
	# The page-faults samples (reason 0) fire inside a software event's
	# overflow handler, where perf's recursion guard drops them for BPF
	# (see the header); the control event's (reason 2, hardirq) and the
	# drains must be counted.
	want=${r2:-0}
	[ "$control" = 1 ] || want=1
	if [ "$rc" -eq 0 ] && [ "$want" -gt 0 ] && [ "${drains:-0}" -gt 0 ] &&
		[ -z "$others" ]; then
		pass bpftrace "damon_perf_sample counted by reason (reason 0: ${r0:-0}, reason 2 of the control event: ${r2:-0}), damon_perf_drain ${drains} times in ${secs} s, reasons all in 0..4 ($((SECONDS - t0)) s with startup)"
		grep -E '^@' "$W/bpftrace.out" | evidence 6
		[ "${r0:-0}" -eq 0 ] &&
			echo "    note: as expected, no reason-0 sample of the page-faults event reached BPF: perf's recursion guard (perf-observability.rst)"
		return
	fi
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		fail bpftrace "timed out after ${BPFTRACE_TIMEOUT:-300} s (set BPFTRACE_TIMEOUT)"
	elif [ -n "$others" ]; then
		fail bpftrace "a reason out of 0..4"
	else
		fail bpftrace "exit $rc, @r[0]=${r0:-none}, @r[2]=${r2:-none} (the control event), @drains=${drains:-none}: want a control sample and a drain"
	fi
	grep -E '^@' "$W/bpftrace.out" | evidence 6
	tail -n 6 "$W/bpftrace.err" | evidence 6
	if [ "${r0:-0}" -eq 0 ] && [ "${drains:-0}" -gt 0 ]; then
		echo "    hint: damon_perf_drain reached the BPF program but no reason-0 damon_perf_sample did: perf's recursion guard drops tracepoints fired inside a software event's overflow handler for BPF programs attached through perf (see the header of this script)"
	fi
	grep -q "unknown type name" "$W/bpftrace.err" &&
		echo "    hint: bpftrace found no definition of a tracepoint field type: kernel BTF (CONFIG_DEBUG_INFO_BTF) or headers needed"
	return 0
}
