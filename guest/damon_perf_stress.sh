#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Stress test of DAMON's perf event based access checks, kselftest style
# (KTAP on stdout, exit 0 pass, 1 fail, 4 all skipped).  Runs as root in a
# guest with several CPUs and the software page-faults event (PERF_TYPE_SOFTWARE
# 1, PERF_COUNT_SW_PAGE_FAULTS 2, sample_period 1).  Subtests:
#
#   hotplug  CPU offline/online cycles (--hotplug N in total, round robin over
#            the hotpluggable CPUs) while a kdamond monitors a refaulting
#            workload: the per-CPU states of perf_stats, the counters of an
#            offline CPU frozen, the conservation laws on the deltas, a clean
#            stop, and no DAMON leak in kmemleak (when built).
#   churn    --churn N cycles of 'on'/'off' with a perf event, every 5th with a
#            'commit' of a changed sample_period while on; a clean stop every
#            cycle; the laws on the deltas; no DAMON leak in kmemleak.
#   flood    damon_core.report_ring_order = 2 (4-entry rings), a refaulting
#            workload per CPU, --flood-secs S: overflow > 0, every drop
#            counted (valid = enqueue + overflow, enqueue = dequeue), the
#            damon_perf_drain trace consistent with the counters, and no
#            drain taking more than 4 reports per ring.
#   two_ctx  two kdamonds with a perf event each, each monitoring its own
#            workload, --two-ctx-secs S: each context sees accesses in its
#            own target's hot buffer only, and drops the other's samples as
#            miss_tgid (counters, and damon_perf_report_missed per kdamond).
#
# The perf_stats format (debugfs, CONFIG_DAMON_PERF_OBSERVE) is for debugging
# and may change; like damon_perf_obs_test.sh, this test is updated with it.
# Without perf_stats, the subtests check what they can and say what they did
# not check.
#
# Options: --hotplug N (100) --churn N (200) --flood-secs S (5)
#          --two-ctx-secs S (5) --only LIST (comma separated subtest names)
#          --workload PATH (guest/workload.c built; default
#          $DP_BUILD/guest/workload, or built from $DP_TOP/guest/workload.c)
#
# Files (beside this one, as scripts/stress.sh stages them): lib/common.sh
# (helpers shared with consumers-guest.sh: sysfs, CPUs, kdamond stop,
# workload, tracing, kernel log), lib/ktap.sh (the KTAP output of a subtest
# and the checks that report), lib/kdamond.sh (kdamonds and workloads of a
# subtest, cleanup), lib/perf_stats.sh (snapshots and conservation laws), and
# one file per subtest, stress/NAME.sh, defining subtest_NAME.

set -u

damon_sysfs=/sys/kernel/mm/damon/admin
kdamonds_dir=$damon_sysfs/kdamonds
debugfs=/sys/kernel/debug
perf_stats=$debugfs/damon/perf_stats
kmemleak=$debugfs/kmemleak
ring_order_param=/sys/module/damon_core/parameters/report_ring_order

all_subtests="hotplug churn flood two_ctx"

# Options
nr_hotplug=100
nr_churn=200
flood_secs=5
two_ctx_secs=5
only=""
workload=""
# The event of the subtests: the page-faults event, or config 0 of --pmu
# (e.g. the test PMU damon_test), sample_period --period if given
ev_pmu=""
ev_type=1
ev_config=2
ev_period=""

# Workload buffer sizes, in MiB
hot_mb=4
cold_mb=16

# State (and in lib/: write_err, nfail, deltas)
tmpdir=""
tracefs=""
have_stats=false

usage()
{
	cat << EOF
Usage: $0 [--hotplug N] [--churn N] [--flood-secs S] [--two-ctx-secs S]
          [--only LIST] [--workload PATH] [--pmu NAME] [--period N]
Subtests (for --only, comma separated): ${all_subtests// /,}
EOF
}

# The library and the subtests, one source command each, so that
# "shellcheck -x" follows them (source-path: relative to this file)
stress_dir=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
unreadable()
{
	echo "$0: cannot read $stress_dir/$1" >&2
	exit 1
}
# shellcheck source-path=SCRIPTDIR
{
	. "$stress_dir/lib/common.sh" || unreadable lib/common.sh
	. "$stress_dir/lib/ktap.sh" || unreadable lib/ktap.sh
	. "$stress_dir/lib/kdamond.sh" || unreadable lib/kdamond.sh
	. "$stress_dir/lib/perf_stats.sh" || unreadable lib/perf_stats.sh
	. "$stress_dir/stress/hotplug.sh" || unreadable stress/hotplug.sh
	. "$stress_dir/stress/churn.sh" || unreadable stress/churn.sh
	. "$stress_dir/stress/flood.sh" || unreadable stress/flood.sh
	. "$stress_dir/stress/two_ctx.sh" || unreadable stress/two_ctx.sh
}

#
# Main
#

parse_options()
{
	local t

	while [ $# -gt 0 ]
	do
		case "$1" in
		-h|--help)
			usage
			exit 0;;
		--hotplug|--churn|--flood-secs|--two-ctx-secs|--only|--workload|--pmu|--period)
			if [ $# -lt 2 ]
			then
				echo "$0: $1 needs a value" >&2
				exit 1
			fi;;
		*)
			echo "$0: unknown option '$1'" >&2
			usage >&2
			exit 1;;
		esac
		case "$1" in
		--hotplug) nr_hotplug=$2;;
		--churn) nr_churn=$2;;
		--flood-secs) flood_secs=$2;;
		--two-ctx-secs) two_ctx_secs=$2;;
		--only) only=${2//-/_};;
		--workload) workload=$2;;
		--pmu) ev_pmu=$2;;
		--period) ev_period=$2;;
		esac
		shift 2
	done
	if [ -n "$ev_pmu" ]
	then
		# the event of the subtests: config 0 of the PMU named so
		if ! read -r ev_type 2> /dev/null \
			< "/sys/bus/event_source/devices/$ev_pmu/type"
		then
			echo "$0: no PMU '$ev_pmu' in /sys/bus/event_source/devices" >&2
			exit 1
		fi
		ev_config=0
	fi
	for t in "$nr_hotplug" "$nr_churn" "$flood_secs" "$two_ctx_secs" \
		${ev_period:+"$ev_period"}
	do
		if ! [[ "$t" =~ ^[0-9]+$ ]]
		then
			echo "$0: '$t' is not a number" >&2
			exit 1
		fi
	done
	for t in ${only//,/ }
	do
		if [[ " $all_subtests " != *" $t "* ]]
		then
			echo "$0: unknown subtest '$t' (${all_subtests// /,})" >&2
			exit 1
		fi
	done
}

# Finds or builds the workload
find_workload()
{
	local src

	[ -n "$workload" ] && return
	workload=${DP_BUILD:+$DP_BUILD/guest/workload}
	[ -n "$workload" ] && [ -x "$workload" ] && return
	workload=$(dirname "$(readlink -f "$0")")/workload
	[ -x "$workload" ] && return
	workload=""
	src=${DP_TOP:-/nonexistent}/guest/workload.c
	if [ -f "$src" ] && command -v gcc > /dev/null &&
		gcc -O2 -o "$tmpdir/workload" "$src" 2> /dev/null
	then
		workload=$tmpdir/workload
	fi
}

# With KCSAN built (kconfig/observe-kcsan.config), report only
# data races in the functions of the perf sampling pipeline, and enable it.
# An empty whitelist would report everything (kernel/kcsan/debugfs.c:108),
# and functions that were inlined have no symbol, so count the accepted ones.
kcsan_setup()
{
	local f n=0

	[ -w "$debugfs/kcsan" ] || return 0
	echo whitelist > "$debugfs/kcsan" || return 0
	for f in damon_report_access damon_report_ring_push \
		damon_report_ring_drain damon_report_ring_count_drops \
		damon_drain_reports damon_report_match damon_apply_reports \
		damon_report_rings_alloc damon_report_rings_release \
		kdamond_check_reported_accesses damon_perf_vaddr_overflow \
		damon_perf_paddr_overflow damon_perf_cpu_online \
		damon_perf_cpu_offline damon_perf_event_set_armed \
		damon_perf_event_setup damon_perf_event_teardown \
		damon_perf_events_replace damon_commit_perf_events \
		damon_perf_set_event_state damon_perf_observe_event_running \
		damon_perf_observe_perf_sample damon_perf_observe_ring_enqueue \
		damon_perf_observe_ring_peak damon_perf_observe_ring_overflow \
		damon_perf_observe_ring_drops damon_perf_stats_snapshot
	do
		echo "!$f" > "$debugfs/kcsan" 2> /dev/null && n=$((n + 1))
	done
	if [ "$n" -gt 0 ] && echo on > "$debugfs/kcsan"
	then
		say "kcsan: on, reporting races in $n DAMON functions only"
	else
		say "kcsan: built, but no DAMON function could be listed: left as is"
	fi
}

# Prints why nothing can run, if so
global_skip_reason()
{
	local st comm

	if [ "$EUID" -ne 0 ]
	then
		echo "run as root"
		return
	fi
	if [ ! -d "$kdamonds_dir" ]
	then
		echo "no DAMON sysfs interface ($damon_sysfs)"
		return
	fi
	if st=$(running_kdamond "$kdamonds_dir")
	then
		echo "a kdamond is running ($st)"
		return
	fi
	comm=$(grep -l '^kdamond' /proc/[0-9]*/comm 2> /dev/null | head -n 1)
	if [ -n "$comm" ]
	then
		echo "a kdamond is running (${comm%/comm})"
		return
	fi
}

global_cleanup()
{
	cleanup_state
	rm -rf "$tmpdir"
}

main()
{
	local selected=() t n=0 rc start dir npass=0 nskip=0 nfails=0 reason

	parse_options "$@"
	for t in $all_subtests
	do
		if [ -z "$only" ] || [[ ",$only," == *",$t,"* ]]
		then
			selected+=("$t")
		fi
	done
	echo "TAP version 13"
	echo "1..${#selected[@]}"
	if ! tmpdir=$(mktemp -d /tmp/damon_perf_stress.XXXXXX)
	then
		for t in "${selected[@]}"
		do
			n=$((n + 1))
			echo "ok $n $t # SKIP cannot make a temporary directory"
		done
		exit $ksft_skip
	fi
	touch "$tmpdir/pids" "$tmpdir/offlined" "$tmpdir/instances"
	trap global_cleanup EXIT
	grep -q " $debugfs debugfs " /proc/mounts ||
		mount -t debugfs none "$debugfs" 2> /dev/null
	# shellcheck disable=SC2119 # no DIR: the standard places only
	tracefs=$(find_tracefs)
	[ -r "$perf_stats" ] && have_stats=true
	find_workload
	say "kernel $(uname -r), CPUs online $(rd t "$cpu_sysfs/online"; echo "$t")," \
		"possible $(nr_possible_cpus); perf_stats: $($have_stats &&
		echo yes || echo "no (CONFIG_DAMON_PERF_OBSERVE off?)");" \
		"tracefs: ${tracefs:-none}; kmemleak: $([ -e "$kmemleak" ] &&
		echo yes || echo no); workload: ${workload:-none}"
	say "options: --hotplug $nr_hotplug --churn $nr_churn" \
		"--flood-secs $flood_secs --two-ctx-secs $two_ctx_secs"

	reason=$(global_skip_reason)
	[ -z "$reason" ] && kcsan_setup
	for t in "${selected[@]}"
	do
		n=$((n + 1))
		if [ -n "$reason" ]
		then
			echo "ok $n $t # SKIP $reason"
			nskip=$((nskip + 1))
			continue
		fi
		say "$t: start"
		start=$SECONDS
		: > "$tmpdir/directive"
		(
			trap cleanup_state EXIT
			"subtest_$t"
		)
		rc=$?
		cleanup_state
		dir=$(tr -d '#\n' < "$tmpdir/directive")
		say "$t: $((SECONDS - start)) s"
		case "$rc" in
		0)
			echo "ok $n $t${dir:+ # $dir}"
			npass=$((npass + 1));;
		"$ksft_skip")
			echo "ok $n $t # SKIP ${dir:-skipped}"
			nskip=$((nskip + 1));;
		*)
			echo "not ok $n $t${dir:+ # $dir}"
			nfails=$((nfails + 1));;
		esac
	done
	say "$npass passed, $nfails failed, $nskip skipped"
	[ "$nfails" -gt 0 ] && exit 1
	[ "$npass" -eq 0 ] && [ "$nskip" -gt 0 ] && exit $ksft_skip
	exit 0
}

# Sourcing the file (for tests of the helpers) runs nothing
if [ "${BASH_SOURCE[0]}" = "$0" ]
then
	main "$@"
fi
