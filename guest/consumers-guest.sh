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
# plausible values: hexadecimal addr, data_src and flags; reason 0..4,
# context 0..3, cpu below the number of CPUs, period >= 1; matched <= total,
# updated <= matched.  There must be a drain that dequeued reports, and for
# trace-cmd a reason=0 sample with a non-zero address.  perf and BPF cannot
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
# address (reason 2) and whose overflow handler runs in hardirq (context 2).
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
set -u
export LC_ALL=C
export HOME=${HOME:-/tmp}

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
	function bad(why) {
		nbad++
		if (nbad <= 5)
			print "bad: " why ": " $0
	}
	BEGIN {
		ns = split("addr data_src period cpu reason context sample_flags sample_type", SK, " ")
		nd = split("total matched updated dropped", DK, " ")
	}
	/damon_perf_sample:/ {
		nsamp++
		miss = ""
		for (i = 1; i <= ns; i++)
			if (v(SK[i]) == "-")
				miss = miss " " SK[i]
		if (miss != "") { bad("missing" miss); next }
		a = v("addr"); r = v("reason"); c = v("context")
		cpu = v("cpu"); p = v("period")
		if (!hex(a) || !hex(v("data_src")) || !hex(v("sample_flags")) ||
		    !hex(v("sample_type"))) { bad("addr/data_src/flags not hex"); next }
		if (!dec(r) || r + 0 > 4) { bad("reason not in 0..4"); next }
		if (!dec(c) || c + 0 > 3) { bad("context not in 0..3"); next }
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
		    !dec(v("reason")) || v("reason") + 0 < 1 || v("reason") + 0 > 3)
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
		else if (need == "valid" && !nvalid) { print "bad: no reason=0 damon_perf_sample with a non-zero addr"; ok = 0 }
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
[ -z "$save" ] || mkdir -p "$save" || save=""
# (the CONSUMERS_* paths are for testing this script against stubs only)
A=${CONSUMERS_DAMON_SYSFS:-/sys/kernel/mm/damon/admin/kdamonds}
KD="" wl_pid=""

cleanup() {
	set +e
	if [ -n "$KD" ] && [ "$(cat "$KD/state" 2>/dev/null)" = on ]; then
		echo off >"$KD/state"
		for _ in $(seq 50); do
			[ "$(cat "$KD/state")" = off ] && break
			sleep 0.2
		done
		[ "$(cat "$KD/state")" = off ] || echo "consumers: kdamond did not stop"
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
T=""
for t in ${CONSUMERS_TRACEFS:-} /sys/kernel/tracing /sys/kernel/debug/tracing; do
	[ -d "$t/events" ] && { T=$t; break; }
done
if [ -z "$T" ] && mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null; then
	T=/sys/kernel/tracing
fi
[ -n "$T" ] || skip_all "no tracefs (CONFIG_FTRACE/CONFIG_EVENT_TRACING?)"
for e in $EVENTS; do
	[ -d "$T/events/damon/$e" ] ||
		skip_all "no tracepoint damon:$e in $T/events (CONFIG_DAMON_PERF_OBSERVE not set?)"
done
[ -d "$A" ] || skip_all "no DAMON sysfs interface ($A)"
if [ "$(cat "$A/nr_kdamonds")" -gt 0 ] 2>/dev/null; then
	for s in "$A"/*/state; do
		[ "$(cat "$s")" = on ] && skip_all "a kdamond is running already ($s)"
	done
fi

# --- the workload -----------------------------------------------------------
if [ -n "$wl" ] && [ -x "$wl" ]; then
	"$wl" 3600 4 4 refault >"$W/workload.out" 2>&1 &
	wl_pid=$!
	for _ in $(seq 100); do
		grep -q '^hot=' "$W/workload.out" && break
		sleep 0.1
	done
	wl_desc="$wl refault, $(grep -m1 '^hot=' "$W/workload.out" | cut -d' ' -f1)"
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
setup_damon() {
	echo 1 >"$A/nr_kdamonds" || return
	KD=$A/0
	local C=$KD/contexts P
	echo 1 >"$C/nr_contexts" &&
		echo vaddr >"$C/0/operations" &&
		echo 1 >"$C/0/targets/nr_targets" &&
		echo "$wl_pid" >"$C/0/targets/0/pid_target" || return
	P=$C/0/monitoring_attrs/sample/perf_events
	if [ ! -d "$P" ]; then
		echo 0 >"$A/nr_kdamonds"
		KD=""
		skip_all "this kernel's DAMON has no perf_events sysfs directory"
	fi
	echo $((1 + control)) >"$P/nr_perf_events" &&
		echo 1 >"$P/0/type" &&		# PERF_TYPE_SOFTWARE
		echo 2 >"$P/0/config" &&	# PERF_COUNT_SW_PAGE_FAULTS
		echo 1 >"$P/0/sample_period" || return
	if [ "$control" = 1 ]; then
		echo 1 >"$P/1/type" &&
			echo 0 >"$P/1/config" &&	# PERF_COUNT_SW_CPU_CLOCK
			echo 1000000 >"$P/1/sample_period" || return	# ns
	fi
	echo on >"$KD/state"
}
if ! setup_damon 2>"$W/damon.err"; then
	fail setup "DAMON did not start: $(tr '\n' ' ' <"$W/damon.err")"
	dmesg 2>/dev/null | grep -i damon | tail -n 5 | evidence
	finish
fi
echo "consumers: kdamond $(cat "$KD/pid") monitors pid $wl_pid, events: page-faults (1/2, period 1)$([ "$control" = 1 ] && echo ", control cpu-clock (1/0, 1 ms)")"

damon_running() {
	[ "$(cat "$KD/state" 2>/dev/null)" = on ] && return 0
	echo "consumers: note: the kdamond is not running any more"
	return 1
}

# judge_lines CHECK TEXT ERRLOG [NEED]: PASS or FAIL CHECK on check_lines of
# TEXT.  NEED: "valid" (default), a reason-0 damon_perf_sample with an
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
			echo "    note: as expected for perf-based consumers, no damon_perf_sample of the page-faults event (context=0) came through: perf's recursion guard drops tracepoints fired inside a software event's overflow handler (perf-observability.rst); the cpu-clock control event's samples (hardirq) did"
		return
	fi
	fail "$name" "$(grep '^summary: ' <<<"$res" | cut -d' ' -f2-)"
	grep '^bad: ' <<<"$res" | evidence 6
	grep '^e: ' <<<"$res" | cut -d' ' -f2- | evidence 4
	if [ "${nctx0:-0}" -eq 0 ] && [ $((${nsamp:-0} + ${ndrain:-0})) -gt 0 ]; then
		echo "    hint: no damon_perf_sample of the page-faults event (context=0) came through, while other damon events did: perf's recursion guard drops tracepoints fired inside a software event's overflow handler for perf and BPF-on-perf consumers (see the header of this script)"
	fi
	[ -s "$txt" ] || echo "    (no output; last lines of the tool's log follow)"
	[ -s "$err" ] && tail -n 4 "$err" | evidence 4
}

# --- perf ---------------------------------------------------------------------
# Debian's /usr/bin/perf may be the wrapper of linux-base: a script that
# execs perf_<major.minor of the running kernel>, which fails for our 6.12
# guest kernel ("linux-perf-6.12 is not installed") as only perf_6.1 or so
# is installed.  Debian 12's single linux-perf package (6.1) instead installs
# the real binary as /usr/bin/perf and diverts the wrapper to
# /usr/bin/perf.wrapper; older releases have /usr/bin/perf_X.Y.  So take the
# first candidate that runs "perf version": $PERF, perf, then the newest
# perf_X.Y.  A perf older than the kernel is fine here: perf_event_attr
# carries its size, and the tracepoint formats are read from tracefs.
find_perf() {
	local c p
	: >"$W/perf-tried"
	for c in ${PERF:-} perf $(ls -d /usr/bin/perf_[0-9]* 2>/dev/null | sort -rV); do
		p=$(command -v "$c") || continue
		if timeout 60 "$p" version >/dev/null 2>"$W/perf-version.err"; then
			echo "$p"
			return 0
		fi
		echo "$p ($(head -n 1 "$W/perf-version.err"))" >>"$W/perf-tried"
	done
	return 1
}

run_perf() {
	local perf t0 missing="" e rc why
	if ! perf=$(find_perf); then
		why="not installed (Debian package linux-perf)"
		[ -s "$W/perf-tried" ] &&
			why="no perf runs \"perf version\": $(paste -sd';' "$W/perf-tried" | sanitize)"
		skip perf-list "$why"
		skip perf-script "$why"
		return
	fi
	echo "consumers: perf: $perf ($("$perf" version 2>&1 | head -n 1))"

	t0=$SECONDS
	timeout -k 5 180 "$perf" --no-pager list tracepoint >"$W/perf-list.txt" 2>"$W/perf-list.err"
	rc=$?
	keep "$W/perf-list.err"
	for e in $EVENTS; do
		grep -qE "(^|[[:space:]])damon:$e([[:space:]]|$)" "$W/perf-list.txt" ||
			missing+=" $e"
	done
	if [ -z "$missing" ]; then
		pass perf-list "all four damon:damon_perf_* events listed ($((SECONDS - t0)) s)"
		grep -E 'damon:damon_perf_' "$W/perf-list.txt" | evidence 4
	else
		fail perf-list "not listed:$missing (perf list exited $rc)"
		grep -E 'damon:' "$W/perf-list.txt" | evidence 6
		tail -n 4 "$W/perf-list.err" | evidence 4
	fi

	damon_running
	t0=$SECONDS
	# -a: the samples come from every CPU; -N -B: no build-id cache or
	# build-id collection (they read every DSO over 9p, slowly under TCG);
	# -o: the root is read-only, /tmp is tmpfs.
	(cd "$W" && timeout -k 10 $((secs + 180)) "$perf" record -a -N -B -m 1024 \
		-e 'damon:damon_perf_*' -o "$W/perf.data" -- sleep "$secs") \
		>"$W/perf-record.log" 2>&1
	rc=$?
	keep "$W/perf-record.log"
	if [ "$rc" -ne 0 ] || [ ! -s "$W/perf.data" ]; then
		fail perf-script "perf record -e 'damon:damon_perf_*' exited $rc"
		tail -n 6 "$W/perf-record.log" | evidence 6
		return
	fi
	timeout -k 10 600 "$perf" --no-pager script -i "$W/perf.data" \
		>"$W/perf-script.txt" 2>"$W/perf-script.err"
	rc=$?
	keep "$W/perf-script.txt" 2000
	keep "$W/perf-script.err"
	echo "consumers: perf record + script: $((SECONDS - t0)) s, $(wc -l <"$W/perf-script.txt") lines, perf.data $(du -k "$W/perf.data" | cut -f1) KiB, script exited $rc"
	# perf's recursion guard hides the page-faults samples (see the header):
	# what must come through are the control event's samples and the drains
	judge_lines perf-script "$W/perf-script.txt" "$W/perf-record.log" \
		"$([ "$control" = 1 ] && echo sample || echo none)"
	rm -f "$W/perf.data" "$W/perf-script.txt"
}

# --- trace-cmd --------------------------------------------------------------
run_trace_cmd() {
	local t0 rc
	if ! command -v trace-cmd >/dev/null; then
		skip trace-cmd "not installed (Debian package trace-cmd)"
		return
	fi
	echo "consumers: trace-cmd: $(trace-cmd --version 2>&1 | grep -m1 version)"
	damon_running
	t0=$SECONDS
	# with a command, trace-cmd records (all tasks) while the command runs
	(cd "$W" && timeout -k 10 $((secs + 180)) trace-cmd record -b 4096 \
		-o "$W/trace.dat" -e 'damon:damon_perf_*' sleep "$secs") \
		>"$W/trace-cmd-record.log" 2>&1
	rc=$?
	keep "$W/trace-cmd-record.log"
	if [ "$rc" -ne 0 ] || [ ! -s "$W/trace.dat" ]; then
		fail trace-cmd "trace-cmd record -e 'damon:damon_perf_*' exited $rc"
		tail -n 6 "$W/trace-cmd-record.log" | evidence 6
		return
	fi
	timeout -k 10 600 trace-cmd report -i "$W/trace.dat" \
		>"$W/trace-cmd-report.txt" 2>"$W/trace-cmd-report.err"
	rc=$?
	keep "$W/trace-cmd-report.txt" 2000
	keep "$W/trace-cmd-report.err"
	echo "consumers: trace-cmd record + report: $((SECONDS - t0)) s, $(wc -l <"$W/trace-cmd-report.txt") lines, report exited $rc"
	judge_lines trace-cmd "$W/trace-cmd-report.txt" "$W/trace-cmd-report.err"
	rm -f "$W/trace.dat" "$W"/trace.dat.* "$W/trace-cmd-report.txt"
}

# --- bpftrace ---------------------------------------------------------------
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

# --- damon_perf_funnel.py ----------------------------------------------------
# The series' pipeline summary (tools/testing/selftests/damon), live through
# tracefs: every stage must have counted something, in funnel order.
run_funnel() {
	local py=/usr/bin/python3 out rc
	if [ -z "$funnel" ] || [ ! -f "$funnel" ]; then
		skip funnel "damon_perf_funnel.py not given or not found (${funnel:-none})"
		return
	fi
	[ -x "$py" ] || { skip funnel "no $py"; return; }
	damon_running
	# Reports in flight at either end of the trace sit in the context's
	# rings: at most report_ring_order entries on each possible CPU.
	local order cpus
	order=$(cat /sys/module/damon_core/parameters/report_ring_order 2>/dev/null)
	cpus=$(awk -F, '{ for (i = 1; i <= NF; i++) { n = split($i, r, "-");
		c += n == 2 ? r[2] - r[1] + 1 : 1 } } END { print c }' \
		/sys/devices/system/cpu/possible 2>/dev/null)
	if ! [[ "$order" =~ ^[0-9]+$ && "$cpus" =~ ^[0-9]+$ ]]; then
		fail funnel "cannot read the ring bound: report_ring_order '$order', possible CPUs '$cpus'"
		return
	fi
	# a buffer for all events of the run: a lost event fails the check
	out=$("$py" "$funnel" record --duration "$secs" --buffer-size-kb 32768 \
		--json 2>"$W/funnel.err")
	rc=$?
	printf '%s\n' "$out" >"$W/funnel.json"
	keep "$W/funnel.json"
	keep "$W/funnel.err"
	if [ "$rc" -ne 0 ]; then
		fail funnel "exit $rc"
		tail -n 4 "$W/funnel.err" | evidence 4
		return
	fi
	if res=$(RING_BOUND=$((cpus << order)) "$py" -c '
import json, os, sys
d = json.load(sys.stdin)
bound = int(os.environ["RING_BOUND"])
s, loss = d["stages"], d["trace_loss"]
order = ["callback", "valid", "enqueued", "drained", "matched"]
c = [s[k] for k in order]
print(" -> ".join("%s %d" % (k, s[k]) for k in order + ["region_updates"]))
if loss["lost_events"] or loss["lost_unknown"] or loss["entries_overwritten"]:
    print("the trace lost events: %s" % loss)
    sys.exit(1)
# drained and enqueued differ by the reports in flight at the start of the
# trace (in the rings, drained in it) and at its end (in the rings, or in
# the untraced last drain): each side at most what the rings hold, possible
# CPUs times ring entries; the other stages only shrink
if abs(c[2] - c[3]) > bound:
    print("enqueued and drained differ by %d, more than the rings hold (%d)" %
          (abs(c[2] - c[3]), bound))
ok = min(c) > 0 and s["region_updates"] > 0 and \
    c[0] >= c[1] >= c[2] and c[3] >= c[4] and abs(c[2] - c[3]) <= bound
sys.exit(0 if ok else 1)' <<<"$out" 2>&1); then
		pass funnel "$res"
	else
		fail funnel "not a funnel with counts at every stage: $res"
	fi
}

run_perf
run_trace_cmd
run_bpftrace
run_funnel
finish
