# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2154 # damon_perf_stress.sh and lib/ set the globals it uses
#
# Subtest two_ctx of damon_perf_stress.sh: two kdamonds with a perf event
# each, each monitoring its own workload for --two-ctx-secs S, must see
# accesses only in their own target.  Sourced by damon_perf_stress.sh, whose
# main() runs subtest_two_ctx in a subshell; uses the helpers of lib/.
#
# The sysfs interface takes one context per kdamond (sysfs.c:1470-1472), so
# two kdamonds, started separately (damon_start(.., false), non-exclusive,
# core.c:2178).  Each context has its own rings (ctx->report_rings,
# core.c:1021-1046) and its own events, which sample every task on each CPU:
# each context's handler reports the other workload's faults too, and its
# drain drops those as miss_tgid since no target has their tgid
# (core.c:1322-1346).  The damon_perf_report_missed events fire in the
# kdamond (common_pid), so they tell which context dropped what.
#
# check_regions DIR HOT_S HOT_E COLD_S COLD_E OHOT_S OHOT_E: the tried
# regions in the scheme DIR show an accessed region in the own hot buffer,
# an unaccessed region in the own cold buffer, and no accessed region in the
# other workload's hot buffer range (outside the own hot buffer).  Sets
# regions_desc and other_seen.
check_regions()
{
	local s e n hot_found=false cold_found=false cold_acc=false
	local other_acc=false

	regions_desc=""
	other_seen=false
	while read -r s e n
	do
		regions_desc+="#   $s-$e: $n"$'\n'
		if [ "$s" -lt "$3" ] && [ "$e" -gt "$2" ] &&
			{ [ "$e" -le "$4" ] || [ "$s" -ge "$5" ]; } &&
			[ "$n" -gt 0 ]
		then
			hot_found=true
		fi
		if [ "$s" -lt "$7" ] && [ "$e" -gt "$6" ] &&
			{ [ "$e" -le "$2" ] || [ "$s" -ge "$3" ]; }
		then
			other_seen=true
			[ "$n" -gt 0 ] && other_acc=true
		fi
		if [ "$s" -lt "$5" ] && [ "$e" -gt "$4" ]
		then
			if [ "$e" -le "$2" ] || [ "$s" -ge "$3" ]
			then
				cold_found=true
				[ "$n" -ne 0 ] && cold_acc=true
			elif [ "$n" -eq 0 ]
			then
				cold_found=true
			fi
		fi
	done < <(tried_regions "$1")
	$hot_found && $cold_found && ! $cold_acc && ! $other_acc
}

subtest_two_ctx()
{
	local k i w inst="" filter="" weak=false pids=() kds=() t
	local hs=() he=() cs=() ce=() ok n other

	need_workload
	for w in 0 1
	do
		start_workload
		pids[w]=$wl_pid
		hs[w]=$wl_hot_start
		he[w]=$wl_hot_end
		cs[w]=$wl_cold_start
		ce[w]=$wl_cold_end
	done
	reset_kdamonds 2
	setup_ctx 0 1 100000 1 "${pids[0]}"
	setup_ctx 1 1 100000 1 "${pids[1]}"
	snap before
	kmsg_mark two_ctx
	kdamond_on 0 || exit 1
	kds[0]=$kd_pid
	kdamond_on 1 || exit 1
	kds[1]=$kd_pid
	[ "${kds[0]}" != "${kds[1]}" ] || abort "both kdamonds have pid ${kds[0]}"
	say "kdamond 0 (pid ${kds[0]}) monitors pid ${pids[0]}, kdamond 1" \
		"(pid ${kds[1]}) monitors pid ${pids[1]}, both running"

	t=$((two_ctx_secs > 2 ? two_ctx_secs - 2 : 0))
	sleep "$t"
	if [ -n "$tracefs" ] &&
		[ -d "$tracefs/events/damon/damon_perf_report_missed" ] &&
		inst=$(trace_instance two_ctx 256)
	then
		# the misses of each kdamond in the other workload's hot buffer
		filter="reason == 1 && ((common_pid == ${kds[0]} && addr >= ${hs[1]} && addr < ${he[1]})"
		filter+=" || (common_pid == ${kds[1]} && addr >= ${hs[0]} && addr < ${he[0]}))"
		if ! echo "$filter" > \
			"$inst/events/damon/damon_perf_report_missed/filter" 2> /dev/null
		then
			say "the event filter was refused; counting all reason 1 misses per kdamond"
			weak=true
		fi
		trace_event "$inst" damon_perf_report_missed 1
	else
		inst=""
	fi
	sleep $((two_ctx_secs - t))
	[ -n "$inst" ] && trace_event "$inst" damon_perf_report_missed 0
	for k in 0 1
	do
		[ "$(kdamond_state "$k")" = on ] ||
			fail "kdamond $k stopped by itself"
	done

	for k in 0 1
	do
		other=$((1 - k))
		ok=false
		for ((i = 0; i < 10; i++))
		do
			if ! try_write "$kdamonds_dir/$k/state" update_schemes_tried_regions
			then
				fail "kdamond $k: update_schemes_tried_regions: $write_err"
				break
			fi
			if check_regions "$kdamonds_dir/$k/contexts/0/schemes/0" \
				"${hs[k]}" "${he[k]}" "${cs[k]}" "${ce[k]}" \
				"${hs[other]}" "${he[other]}"
			then
				ok=true
				break
			fi
			sleep 1
		done
		if $ok
		then
			pass "context $k: accesses in its own hot buffer only" \
				"(other's hot buffer range: $($other_seen &&
				echo "covered by its regions, not accessed" ||
				echo "not in its regions"))"
		else
			say "context $k: hot ${hs[k]}-${he[k]} cold ${cs[k]}-${ce[k]}" \
				"other's hot ${hs[other]}-${he[other]}; regions (start-end: nr_accesses):"
			printf '%s' "$regions_desc"
			fail "context $k: no accessed region in its hot buffer," \
				"or an accessed region in its cold buffer or in the other's hot buffer"
		fi
	done

	ok=true
	kdamond_off 0 || ok=false
	kdamond_off 1 || ok=false
	$ok && pass "both kdamonds stopped cleanly"
	snap after
	if [ -n "$inst" ]
	then
		for k in 0 1
		do
			other=$((1 - k))
			n=$(grep ' damon_perf_report_missed: ' "$inst/trace" |
				grep -c -- "-${kds[k]} .*reason=tgid")
			if [ "$n" -gt 0 ]
			then
				pass "kdamond $k dropped $n samples as miss_tgid" \
					"$($weak && echo "(any address)" ||
					echo "in workload $other's hot buffer") (traced)"
			else
				fail "kdamond $k: no miss_tgid of workload $other's" \
					"samples traced"
			fi
		done
	else
		say "per-context misses: NOT checked (no damon_perf_report_missed or trace instances)"
	fi
	if $have_stats
	then
		check_all_bound after
		check_laws before after
		if [ "${deltas[miss_tgid]}" -gt 0 ]
		then
			pass "miss_tgid > 0 (${deltas[miss_tgid]})"
		else
			fail "no miss_tgid although each context samples the other's workload"
		fi
		[ "${deltas[match]}" -gt 0 ] || fail "no report matched"
	fi
	check_kmsg
	exit $((nfail > 0))
}
