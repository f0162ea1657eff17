# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2154 # damon_perf_stress.sh and lib/ set the globals it uses
#
# Subtest churn of damon_perf_stress.sh: --churn N cycles of 'on'/'off' of a
# kdamond with a perf event, some with a 'commit', then a kmemleak scan.
# Sourced by damon_perf_stress.sh, whose main() runs subtest_churn in a
# subshell; uses the helpers of lib/.
#
# 'on' opens the events and allocates the rings (core.c:2137, :1471-1484),
# 'off' closes the events and drains and frees the rings (core.c:3239,
# :1487-1491), and the next 'on' frees the old context (sysfs.c:2130-2132,
# damon_destroy_perf_event(), observe.c:206 frees the per-event states).  A
# 'commit' of a changed sample_period opens new events and closes the old ones
# in the running kdamond (core.c:1503-1560).
#
subtest_churn()
{
	local i period=1 commits=0 kd pid st cycles=0

	need_workload
	start_workload
	reset_kdamonds 1
	setup_ctx 0 "$period" 50000 0 "$wl_pid"
	snap before
	kmsg_mark churn
	for ((i = 0; i < nr_churn; i++))
	do
		kdamond_on 0 || break
		kd=$kd_pid
		if ((i % 5 == 4))
		then
			period=$((period == 1 ? 2 : 1))
			# setup_ctx's perf_event prep
			wr "$preps/0/sample_period" "$period"
			if ! try_write "$kdamonds_dir/0/state" commit
			then
				fail "cycle $i: commit failed: $write_err"
				break
			fi
			rd st "$kdamonds_dir/0/state"
			rd pid "$kdamonds_dir/0/pid"
			if [ "$st" != on ] || [ "$pid" != "$kd" ]
			then
				fail "cycle $i: after the commit, state '$st'" \
					"pid '$pid' (was $kd)"
				break
			fi
			commits=$((commits + 1))
		elif ((i % 7 == 6))
		then
			# let samples flow for a while
			sleep 0.2
		fi
		kdamond_off 0 || break
		cycles=$((cycles + 1))
		if ((cycles % 50 == 0))
		then
			say "$cycles/$nr_churn cycles"
		fi
	done
	if [ "$cycles" -eq "$nr_churn" ]
	then
		pass "$cycles on/off cycles with a clean stop each," \
			"$commits commits of a new sample_period"
	else
		fail "churn stopped after $cycles of $nr_churn cycles"
	fi
	kill -0 "$wl_pid" 2> /dev/null || fail "the workload died"
	snap after
	check_all_bound after
	check_laws before after
	check_kmsg
	kmemleak_check
	if [ "$kml_status" != "kmemleak checked" ]
	then
		say "checked: the churn, clean stops$($have_stats && echo ", laws");" \
			"NOT checked: leaks ($kml_status)"
		set_directive "$kml_status"
	fi
	exit $((nfail > 0))
}
