#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# consumers-guest.sh: runs in the test guest, as root.  Checks that the
# standard tracing tools of the (host's, shared) root filesystem consume the
# damon:damon_perf_* tracepoints while DAMON monitors a workload with the
# software page-faults perf event (type 1, config 2, period 1):
#
#   perf-list    `perf list` shows the four damon:damon_perf_* events
#   perf-script  `perf record -e 'damon:damon_perf_*'`, then `perf script`
#   trace-cmd    `trace-cmd record -e 'damon:damon_perf_*'`, then `report`
#   bpftrace     tracepoint:damon:damon_perf_sample { @r[args->reason] =
#                count(); } must count samples by reason, and the drains
#
# perf script and trace-cmd report must print, for every damon_perf_sample,
# addr= data_src= period= cpu= reason= context= sample_flags= sample_type=,
# and for every damon_perf_drain total= matched= updated= dropped=, with
# plausible values: hexadecimal addr and data_src; flags by name (the
# PERF_SAMPLE_* names joined by |); the reason (valid..inv_phys) and the
# context (process..nmi) by name; cpu below the number of CPUs, period >= 1;
# matched <= total, updated <= matched.  There must be a drain that dequeued
# reports, and for trace-cmd a reason=valid sample with a non-zero address.  perf and BPF cannot
# see the page-faults event's samples (perf's recursion guard, below): for
# them, the samples of the control event must come through instead, and a
# note says that the page-faults samples did not.
#
# Prints "PASS check: ...", "FAIL check: ..." followed by evidence lines, or
# "SKIP check: reason" (a missing tool or kernel feature).  Exit status: 1 if
# any check failed, 4 (the kselftest skip code) if every check skipped, 0
# otherwise.  DAMON is turned off at exit, also on failure or interrupt.
#
# usage: consumers-guest.sh [options] [WORKLOAD]
#   WORKLOAD         the guest/workload.c binary, run as "WORKLOAD S 4 4
#                    refault"; without it (or if it is not executable), a
#                    python3 loop, or else a shell loop, that page-faults
#   --seconds N      how long each tool records while DAMON runs (3)
#   --require LIST   checks (comma or space separated: perf-list,
#                    perf-script, trace-cmd, bpftrace, or perf, all) whose
#                    SKIP counts as a FAIL
#   --save DIR       keep the tools' logs and the heads of their outputs in
#                    DIR (default: /tmp/out/consumers when the result share
#                    /tmp/out of scripts/vm-run.sh is mounted)
#   --no-control     do not add the cpu-clock control event (see below)
#   --funnel PATH    also run PATH (damon_perf_funnel.py) live: "funnel"
# consumers-guest.sh --check-lines FILE [NCPU]
#   offline: run the line checks on saved perf script or trace-cmd report
#   text (no root needed), e.g. on the host after a run
#
# The control event: by default the DAMON context gets a second perf event,
# cpu-clock (type 1, config 0, every 1 ms), whose samples have no data
# address (reason=addr_zero) and whose overflow handler runs in hardirq.
# It does not change what is asserted.  It tells apart "this tool cannot read
# damon_perf_sample at all" from "the samples of the page-faults event do not
# reach this tool": the page-faults event's overflow handler, where
# damon_perf_sample fires, runs inside __perf_sw_event(), which holds perf's
# recursion slot of the task context (current->perf_recursion); the perf
# probe of a tracepoint, which both perf record and BPF programs attached
# through perf_event_open() (bpftrace's tracepoint: probes) go through,
# allocates its buffer with perf_trace_buf_alloc(), which takes the same slot
# and gives up (kernel/trace/trace_event_perf.c).  ftrace consumers such as
# trace-cmd are not affected.  The FAIL lines say so when the data shows it.
#
# Files (beside this one, as scripts/consumers.sh stages them): lib/common.sh
# (the guest helpers shared with damon_perf_stress.sh: sysfs writes, running
# kdamonds, kdamond stop, workload, tracefs), and one file per tool,
# consumers/perf.sh (perf-list, perf-script), consumers/trace-cmd.sh,
# consumers/bpftrace.sh and consumers/funnel.sh, each defining run_TOOL.
set -u
export LC_ALL=C
export HOME=${HOME:-/tmp}

# One source command a file, so that shellcheck -x follows them (source-path:
# relative to this file)
consumers_dir=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
unreadable() {
	echo "consumers: cannot read $consumers_dir/$1" >&2
	exit 1
}
# shellcheck source-path=SCRIPTDIR
{
	. "$consumers_dir/lib/common.sh" || unreadable lib/common.sh
	. "$consumers_dir/consumers/perf.sh" || unreadable consumers/perf.sh
	. "$consumers_dir/consumers/trace-cmd.sh" || unreadable consumers/trace-cmd.sh
	. "$consumers_dir/consumers/bpftrace.sh" || unreadable consumers/bpftrace.sh
	. "$consumers_dir/consumers/funnel.sh" || unreadable consumers/funnel.sh
}

EVENTS="damon_perf_sample damon_perf_ring_overflow damon_perf_report_missed damon_perf_drain"

# vm-run.sh fails a run whose console shows a kernel warning; this script's
# output is copied to the console, so tool output that is printed must not
# contain the phrases that it looks for (e.g. perf's "WARNING: ...").
sanitize() {
	sed -E -e 's/WARNING:/warning:/g; s/BUG:/bug:/g; s/Oops/oops/g' \
		-e 's/Kernel panic/kernel-panic/g; s/KASAN/kasan/g' \
		-e 's/UBSAN/ubsan/g; s/KCSAN/kcsan/g; s/kmemleak: /kmemleak - /g' \
		-e 's/possible (recursive|circular) locking/possible \1-locking/g' \
		-e 's/INFO: lockdep/info: lockdep/g; s/rcu: INFO/rcu: info/g' \
		-e 's/suspicious RCU usage/suspicious-RCU-usage/g' \
		-e 's/inconsistent lock state/inconsistent-lock-state/g' \
		-e 's/Attempted to kill init/attempted to kill init/g' \
		-e 's/blocked for more than/blocked-for-more-than/g' \
		-e 's/self-detected stall/self-detected-stall/g'
}

# evidence [N]: the first N (8) lines of stdin, indented, cut, sanitized.
evidence() {
	head -n "${1:-8}" | sed 's/^[[:space:]]*//' | cut -c1-240 | sanitize |
		sed 's/^/    /'
}

# check_lines FILE NCPU: the field checks on perf script / trace-cmd report
# text.  Prints "stats S V C0 D B M O X" (samples, valid with an address,
# samples in task context, drains, drains with reports, missed, overflows,
# bad lines), a "summary:" line, "e: LINE" examples and "bad: WHY: LINE"
# problems.  Returns 0 if everything asserted holds.  POSIX awk (mawk).
check_lines() {
	awk -v ncpu="$2" -v need="${3:-valid}" '
	function v(key) {	# the value of " key=", or "-" if absent
		if (!match($0, "[ \t]" key "=[^ \t]*"))
			return "-"
		return substr($0, RSTART + length(key) + 2,
			      RLENGTH - length(key) - 2)
	}
	function dec(x) { return x ~ /^[0-9]+$/ }
	function hex(x) { return x ~ /^0x[0-9a-fA-F]+$/ }
	# __print_flags: names joined by "|", and the unnamed rest in hex
	function flags(x) { return x ~ /^(([A-Z_]+|0x[0-9a-fA-F]+)(\|([A-Z_]+|0x[0-9a-fA-F]+))*)?$/ }
	# the code of a name that the kernel prints, or "-"
	function code(x, names) { return (x in names) ? names[x] : "-" }
	function bad(why) {
		nbad++
		if (nbad <= 5)
			print "bad: " why ": " $0
	}
	BEGIN {
		ns = split("addr data_src period cpu reason context sample_flags sample_type", SK, " ")
		nd = split("total matched updated dropped", DK, " ")
		n = split("valid null addr_zero kernel inv_phys xlate_fail guest not_ldst malformed", nm, " ")
		for (i = 1; i <= n; i++)
			RN[nm[i]] = i - 1
		n = split("process softirq hardirq nmi", nm, " ")
		for (i = 1; i <= n; i++)
			CN[nm[i]] = i - 1
		n = split("tgid no_region boundary", nm, " ")
		for (i = 1; i <= n; i++)
			MN[nm[i]] = i
	}
	/damon_perf_sample:/ {
		nsamp++
		miss = ""
		for (i = 1; i <= ns; i++)
			if (v(SK[i]) == "-")
				miss = miss " " SK[i]
		if (miss != "") { bad("missing" miss); next }
		a = v("addr"); r = code(v("reason"), RN); c = code(v("context"), CN)
		cpu = v("cpu"); p = v("period")
		if (!hex(a) || !hex(v("data_src"))) { bad("addr/data_src not hex"); next }
		if (!flags(v("sample_flags")) || !flags(v("sample_type")) ||
		    v("sample_type") == "") { bad("flags not by name"); next }
		if (!dec(r) || r + 0 > 4) { bad("reason not valid..inv_phys by name"); next }
		if (!dec(c)) { bad("context not process..nmi by name"); next }
		if (!dec(cpu) || cpu + 0 >= ncpu) { bad("cpu not below " ncpu); next }
		if (!dec(p) || p + 0 < 1) { bad("period below 1"); next }
		byr[r + 0]++
		byc[c + 0]++
		if (r + 0 == 0 && a !~ /^0x0+$/) {
			nvalid++
			if (nvalid <= 2)
				ex[++nex] = $0
		} else if (r + 0 != 0 && nother++ < 1) {
			ex[++nex] = $0
		}
		next
	}
	/damon_perf_drain:/ {
		ndrain++
		miss = ""
		for (i = 1; i <= nd; i++)
			if (!dec(v(DK[i])))
				miss = miss " " DK[i]
		if (miss != "") { bad("missing or not decimal" miss); next }
		t = v("total") + 0; m = v("matched") + 0; u = v("updated") + 0
		if (m > t) { bad("matched > total"); next }
		if (u > m) { bad("updated > matched"); next }
		if (t > 0) {
			nbusy++
			if (nbusy <= 2)
				ex[++nex] = $0
		}
		next
	}
	/damon_perf_report_missed:/ {
		nmiss++
		if (!hex(v("addr")) || !dec(v("cpu")) || v("cpu") + 0 >= ncpu ||
		    code(v("reason"), MN) == "-")
			bad("report_missed: addr/cpu/reason")
		else if (nmiss == 1)
			ex[++nex] = $0
		next
	}
	/damon_perf_ring_overflow:/ {
		novf++
		if (!dec(v("cpu")) || v("cpu") + 0 >= ncpu)
			bad("ring_overflow: cpu")
		next
	}
	END {
		printf "stats %d %d %d %d %d %d %d %d\n", nsamp, nvalid, byc[0],
			ndrain, nbusy, nmiss, novf, nbad
		rs = ""
		for (i = 0; i <= 4; i++)
			if (byr[i])
				rs = rs " " i ":" byr[i]
		cs = ""
		for (i = 0; i <= 3; i++)
			if (byc[i])
				cs = cs " " i ":" byc[i]
		printf "summary: %d damon_perf_sample (by reason:%s; by context:%s; reason 0 with an address: %d), %d damon_perf_drain (%d with reports), %d damon_perf_report_missed, %d damon_perf_ring_overflow, %d bad\n",
			nsamp, rs == "" ? " -" : rs, cs == "" ? " -" : cs, nvalid,
			ndrain, nbusy, nmiss, novf, nbad
		for (i = 1; i <= nex; i++)
			print "e: " ex[i]
		ok = 1
		if (need != "none" && !nsamp) { print "bad: no damon_perf_sample line"; ok = 0 }
		else if (need == "valid" && !nvalid) { print "bad: no reason=valid damon_perf_sample with a non-zero addr"; ok = 0 }
		if (!ndrain) { print "bad: no damon_perf_drain line"; ok = 0 }
		else if (!nbusy) { print "bad: no damon_perf_drain with total > 0"; ok = 0 }
		if (nbad)
			ok = 0
		exit (ok ? 0 : 1)
	}' "$1"
}

if [ "${1:-}" = --check-lines ]; then
	[ -r "${2:-}" ] || { echo "usage: $0 --check-lines FILE [NCPU]" >&2; exit 2; }
	check_lines "$2" "${3:-$(getconf _NPROCESSORS_CONF)}" "${4:-valid}"
	exit
fi

secs=3 require="" save="" control=1 wl="" funnel=""
[ -d /tmp/out ] && [ -w /tmp/out ] && save=/tmp/out/consumers
while [ $# -gt 0 ]; do
	case "$1" in
	--seconds) secs=$2; shift 2 ;;
	--require) require=$(echo "$2" | tr ',' ' '); shift 2 ;;
	--save) save=$2; shift 2 ;;
	--no-control) control=0; shift ;;
	--funnel) funnel=$2; shift 2 ;;
	-h|--help) sed -n '3,/^set -u/{/^set -u/d;p}' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "consumers: unknown option $1" >&2; exit 2 ;;
	*) wl=$1; shift ;;
	esac
done

npass=0 nfail=0 nskip=0
pass() { echo "PASS $1: $2"; npass=$((npass + 1)); }
fail() { echo "FAIL $1: $2"; nfail=$((nfail + 1)); }
required() {
	case " $require " in
	*" all "*|*" $1 "*|*" ${1%%-*} "*) return 0 ;;
	esac
	return 1
}
skip() {
	if required "$1"; then
		fail "$1" "required, but skipped: $2"
	else
		echo "SKIP $1: $2"
		nskip=$((nskip + 1))
	fi
}
skip_all() {	# skip_all REASON: nothing can run
	local c
	for c in perf-list perf-script trace-cmd bpftrace; do skip "$c" "$1"; done
	finish
}
finish() {
	echo "consumers: $npass passed, $nfail failed, $nskip skipped"
	[ "$nfail" -gt 0 ] && exit 1
	[ "$npass" -eq 0 ] && exit 4
	exit 0
}
keep() {	# keep FILE [LINES]: copy (the head of) FILE to the save dir
	[ -n "$save" ] && [ -f "$1" ] || return 0
	head -n "${2:-400}" "$1" >"$save/$(basename "$1")" 2>/dev/null || true
}

[ "$(id -u)" -eq 0 ] || { echo "consumers: must run as root" >&2; exit 4; }
W=$(mktemp -d "${TMPDIR:-/tmp}/consumers.XXXXXX") || exit 1
tmpdir=$W	# for lib/common.sh
[ -z "$save" ] || mkdir -p "$save" || save=""
# (the CONSUMERS_* paths are for testing this script against stubs only)
A=${CONSUMERS_DAMON_SYSFS:-/sys/kernel/mm/damon/admin/kdamonds}
KD="" wl_pid=""

cleanup() {
	set +e
	if [ -n "$KD" ] && [ "$(cat "$KD/state" 2>/dev/null)" = on ]; then
		kdamond_stop "$KD" ||
			echo "consumers: kdamond did not stop ($stop_err)"
	fi
	[ -n "$KD" ] && echo 0 >"$A/nr_kdamonds" 2>/dev/null
	if [ -n "$wl_pid" ]; then
		kill "$wl_pid" 2>/dev/null
		wait "$wl_pid" 2>/dev/null
	fi
	rm -rf "$W"
}
trap cleanup EXIT
trap 'echo "consumers: interrupted"; exit 130' INT TERM HUP

ncpu=$(getconf _NPROCESSORS_CONF 2>/dev/null || nproc)
echo "consumers: kernel $(uname -r), $ncpu CPUs, recording ${secs} s per tool"

# --- the environment --------------------------------------------------------
T=$(find_tracefs ${CONSUMERS_TRACEFS:+"$CONSUMERS_TRACEFS"})
if [ -z "$T" ] && mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null; then
	T=/sys/kernel/tracing
fi
[ -n "$T" ] || skip_all "no tracefs (CONFIG_FTRACE/CONFIG_EVENT_TRACING?)"
for e in $EVENTS; do
	[ -d "$T/events/damon/$e" ] ||
		skip_all "no tracepoint damon:$e in $T/events (CONFIG_DAMON_PERF_OBSERVE not set?)"
done
[ -d "$A" ] || skip_all "no DAMON sysfs interface ($A)"
if s=$(running_kdamond "$A"); then
	skip_all "a kdamond is running already ($s)"
fi

# --- the workload -----------------------------------------------------------
if [ -n "$wl" ] && [ -x "$wl" ]; then
	workload_start "$wl" 4 4 || wl_line=""
	wl_desc="$wl refault, ${wl_line%% *}"
else
	[ -n "$wl" ] && echo "consumers: workload $wl is not executable, using a fallback"
	if [ -x /usr/bin/python3 ]; then
		# drop and re-touch 4 MiB of private anonymous memory, forever
		/usr/bin/python3 -c '
import mmap
n = 4 << 20
m = mmap.mmap(-1, n, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
while True:
    for off in range(0, n, 4096):
        m[off] = 1
    m.madvise(mmap.MADV_DONTNEED)
' &
		wl_pid=$!
		wl_desc="python3 refault loop"
	else
		# each fork write-protects the parent's pages: it re-faults them
		bash -c 'while :; do x=$(:); done' &
		wl_pid=$!
		wl_desc="shell fork loop"
	fi
	sleep 1
fi
kill -0 "$wl_pid" 2>/dev/null || { fail setup "the workload ($wl_desc) did not start"; finish; }
echo "consumers: workload pid $wl_pid ($wl_desc)"

# --- DAMON: vaddr of the workload, sampled by the page-faults perf event ----
# (write_attrs: lib/common.sh; write_msg says what failed)
setup_damon() {
	write_attrs "$A" nr_kdamonds 1 || return
	KD=$A/0
	local C=$KD/contexts rc
	write_attrs "$C" nr_contexts 1 0/operations vaddr \
		0/targets/nr_targets 1 0/targets/0/pid_target "$wl_pid" || return
	# the events are perf_event preps of probe 0 (lib/common.sh), the
	# control one beside the page-faults one: their samples are united
	perf_preps "$C/0" $((1 + control))
	rc=$?
	if [ "$rc" -eq 2 ]; then
		echo 0 >"$A/nr_kdamonds"
		KD=""
		skip_all "$write_msg"
	fi
	[ "$rc" -eq 0 ] || return
	# type 1, config 2: PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS
	write_attrs "$preps" 0/type 1 0/config 2 0/sample_period 1 || return
	if [ "$control" = 1 ]; then
		# config 0: PERF_COUNT_SW_CPU_CLOCK, a period of 1 ms (in ns)
		write_attrs "$preps" 1/type 1 1/config 0 1/sample_period 1000000 ||
			return
	fi
	write_attrs "$KD" state on
}
if ! setup_damon; then
	fail setup "DAMON did not start: $write_msg"
	dmesg 2>/dev/null | grep -i damon | tail -n 5 | evidence
	finish
fi
echo "consumers: kdamond $(cat "$KD/pid") monitors pid $wl_pid, events: page-faults (1/2, period 1)$([ "$control" = 1 ] && echo ", control cpu-clock (1/0, 1 ms)")"

damon_running() {
	[ "$(cat "$KD/state" 2>/dev/null)" = on ] && return 0
	echo "consumers: note: the kdamond is not running any more"
	return 1
}

# recorded CHECK TOOL LOG DATA RC: keeps the head of LOG (the output of
# "TOOL record"), and FAILs CHECK unless the recording exited 0 (RC) and left
# DATA
recorded() {
	keep "$3"
	[ "$5" -eq 0 ] && [ -s "$4" ] && return 0
	fail "$1" "$2 record -e 'damon:damon_perf_*' exited $5"
	tail -n 6 "$3" | evidence 6
	return 1
}

# as_text TXT ERR CMD...: runs CMD (perf script, trace-cmd report: text of a
# recording) for 600 s at most, output to TXT and errors to ERR, and keeps
# their heads; returns CMD's status
as_text() {
	local txt=$1 err=$2 rc
	shift 2
	timeout -k 10 600 "$@" >"$txt" 2>"$err"
	rc=$?
	keep "$txt" 2000
	keep "$err"
	return "$rc"
}

# judge_lines CHECK TEXT ERRLOG [NEED]: PASS or FAIL CHECK on check_lines of
# TEXT.  NEED: "valid" (default), a reason=valid damon_perf_sample with an
# address must be there; "sample", any damon_perf_sample; "none", none.
judge_lines() {
	local name=$1 txt=$2 err=$3 need=${4:-valid} res rc _ nsamp nctx0 ndrain
	res=$(check_lines "$txt" "$ncpu" "$need")
	rc=$?
	read -r _ nsamp _ nctx0 ndrain _ <<<"$(grep '^stats ' <<<"$res")"
	if [ "$rc" -eq 0 ]; then
		pass "$name" "$(grep '^summary: ' <<<"$res" | cut -d' ' -f2-)"
		grep '^e: ' <<<"$res" | cut -d' ' -f2- | evidence 5
		[ "$need" != valid ] && [ "${nctx0:-0}" -eq 0 ] &&
			echo "    note: as expected for perf-based consumers, no damon_perf_sample of the page-faults event (context=process) came through: perf's recursion guard drops tracepoints fired inside a software event's overflow handler (perf-observability.rst); the cpu-clock control event's samples (hardirq) did"
		return
	fi
	fail "$name" "$(grep '^summary: ' <<<"$res" | cut -d' ' -f2-)"
	grep '^bad: ' <<<"$res" | evidence 6
	grep '^e: ' <<<"$res" | cut -d' ' -f2- | evidence 4
	if [ "${nctx0:-0}" -eq 0 ] && [ $((${nsamp:-0} + ${ndrain:-0})) -gt 0 ]; then
		echo "    hint: no damon_perf_sample of the page-faults event (context=process) came through, while other damon events did: perf's recursion guard drops tracepoints fired inside a software event's overflow handler for perf and BPF-on-perf consumers (see the header of this script)"
	fi
	[ -s "$txt" ] || echo "    (no output; last lines of the tool's log follow)"
	[ -s "$err" ] && tail -n 4 "$err" | evidence 4
}

run_perf
run_trace_cmd
run_bpftrace
run_funnel
finish
