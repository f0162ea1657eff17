# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2154 # damon_perf_stress.sh and lib/ set the globals it uses
#
# Subtest flood of damon_perf_stress.sh: a refaulting workload per CPU into
# 4-entry report rings for --flood-secs S; every drop must be counted.
# Sourced by damon_perf_stress.sh, whose main() runs subtest_flood in a
# subshell; uses the helpers of lib/.
#
# - Rings of 4 entries: damon_report_rings_alloc() sizes the rings from the
#   knob when the context starts (core.c:1021-1046); rings that exist keep
#   their size (core.c:970-973), so the knob is restored right after 'on'.
# - A push fails when the ring has mask + 1 = 4 reports (core.c:1056), and a
#   drain takes the reports that were in the ring when it started, storing
#   the tail once at the end (core.c:1356-1378): a drain dequeues at most 4
#   reports per ring, so damon_perf_drain's total <= 4 * possible CPUs.
# - Drops: a full ring (core.c:1106, with the damon_perf_ring_overflow
#   tracepoint), a nested report (core.c:1100), both counted in the ring and
#   added to 'overflow' when kdamond drains the ring (core.c:1384-1401,
#   observe.c:415); a context without rings (core.c:1095, counted at once).
#   The last drain at the stop counts the remaining drops (core.c:1454)
#   after the events are closed (core.c:1489), so valid = enqueue + overflow
#   exactly on the deltas.
# - damon_perf_drain's dropped= is the drops counted by the drains in the
#   sampling intervals (core.c:3135-3139); the drain at the stop and the
#   no-ring drops are not traced, and a drain that cannot build its snapshot
#   leaves the drops to the next one (core.c:3131).  Hence
#   0 < sum(dropped) <= overflow delta, not equality.
# - damon_perf_ring_overflow fires once per full-ring drop, so its count (the
#   lines kept in the buffer) is <= the overflow delta.
#
subtest_flood()
{
	local orig cpus cpu p pids=() inst_drain="" inst_ovf="" max_total
	local n_drain=0 sum_dropped=0 n_ovf=0 ovr possible line cb1 cb2 ovf1 ovf2

	[ -e "$ring_order_param" ] ||
		skip_subtest "no report_ring_order knob ($ring_order_param)"
	need_workload
	if ! $have_stats && { [ -z "$tracefs" ] ||
		[ ! -d "$tracefs/events/damon/damon_perf_ring_overflow" ]; }
	then
		skip_subtest "neither $perf_stats nor the damon_perf_ring_overflow tracepoint"
	fi
	rd orig "$ring_order_param"
	echo "$orig" > "$tmpdir/ring_order.orig"
	cpus=$(online_cpus)
	possible=$(nr_possible_cpus)
	command -v taskset > /dev/null ||
		say "no taskset: one workload per CPU, not pinned"
	for cpu in $cpus
	do
		start_workload "$cpu"
		pids+=("$wl_pid")
	done
	reset_kdamonds 1
	setup_ctx 0 1 100000 0 "${pids[@]}"

	wr "$ring_order_param" 2
	rd line "$ring_order_param"
	[ "$line" = 2 ] || abort "report_ring_order reads '$line' after writing 2"
	if inst_drain=$(trace_instance flood_drain 1024) &&
		! trace_event "$inst_drain" damon_perf_drain 1
	then
		inst_drain=""
	fi
	if inst_ovf=$(trace_instance flood_ovf 64) &&
		! trace_event "$inst_ovf" damon_perf_ring_overflow 1
	then
		inst_ovf=""
	fi
	snap before
	kmsg_mark flood
	kdamond_on 0 || exit 1
	wr "$ring_order_param" "$orig"
	rm -f "$tmpdir/ring_order.orig"
	say "flooding for $flood_secs s: ${#pids[@]} workloads, 4-entry rings" \
		"(report_ring_order restored to $orig while running)"
	sleep "$flood_secs"
	[ "$(kdamond_state 0)" = on ] || fail "the kdamond stopped by itself"
	kdamond_off 0 && pass "the kdamond stopped cleanly"
	snap after
	[ -n "$inst_drain" ] && trace_event "$inst_drain" damon_perf_drain 0
	[ -n "$inst_ovf" ] && trace_event "$inst_ovf" damon_perf_ring_overflow 0
	for p in "${pids[@]}"
	do
		kill "$p" 2> /dev/null
	done

	if $have_stats
	then
		check_all_bound after
		check_laws before after
		if [ "${deltas[overflow]}" -gt 0 ]
		then
			pass "overflow > 0 (${deltas[overflow]} of ${deltas[valid]} valid samples dropped)"
		else
			fail "no overflow with 4-entry rings"
		fi
		line=""
		for cpu in $cpus
		do
			read -r cb1 ovf1 < <(cpu_get before "$cpu" cb ovf)
			read -r cb2 ovf2 < <(cpu_get after "$cpu" cb ovf)
			line+=" CPU$cpu:cb=$((cb2 - cb1)),ovf=$((ovf2 - ovf1))"
		done
		say "per-CPU deltas:$line"
	else
		say "conservation laws and overflow counts: NOT checked (no $perf_stats)"
	fi

	if [ -n "$inst_drain" ]
	then
		read -r n_drain sum_dropped max_total < <(grep ' damon_perf_drain: ' \
			"$inst_drain/trace" | awk '
			{
				for (i = 1; i <= NF; i++)
					if (split($i, kv, "=") == 2)
						v[kv[1]] = kv[2]
				n++
				dropped += v["dropped"]
				if (v["total"] + 0 > max)
					max = v["total"] + 0
			}
			END { print n + 0, dropped + 0, max + 0 }')
		ovr=$(trace_overrun "$inst_drain")
		say "damon_perf_drain: $n_drain drains, sum(dropped)=$sum_dropped," \
			"max(total)=$max_total, $ovr overwritten"
		[ "$n_drain" -gt 0 ] || fail "no damon_perf_drain traced"
		if [ "$sum_dropped" -gt 0 ]
		then
			pass "damon_perf_drain: sum(dropped) > 0"
		else
			fail "damon_perf_drain: no drop traced"
		fi
		if $have_stats
		then
			law "damon_perf_drain sum(dropped) <= overflow delta (stop-time and no-ring drops are not traced)" \
				"$sum_dropped" "<=" "${deltas[overflow]}"
		fi
		law "damon_perf_drain max(total) <= 4 entries * $possible possible CPUs" \
			"$max_total" "<=" "$((4 * possible))"
	else
		say "damon_perf_drain: NOT checked (tracepoint or trace instances not available)"
	fi
	if [ -n "$inst_ovf" ]
	then
		n_ovf=$(grep -c ' damon_perf_ring_overflow: ' "$inst_ovf/trace")
		ovr=$(trace_overrun "$inst_ovf")
		say "damon_perf_ring_overflow: $n_ovf lines kept, $ovr overwritten"
		if [ "$n_ovf" -gt 0 ]
		then
			pass "damon_perf_ring_overflow fired"
		else
			fail "damon_perf_ring_overflow never fired"
		fi
		if $have_stats
		then
			law "damon_perf_ring_overflow lines <= overflow delta" \
				"$n_ovf" "<=" "${deltas[overflow]}"
		fi
	else
		say "damon_perf_ring_overflow: NOT checked (trace instances not available)"
	fi
	check_kmsg
	exit $((nfail > 0))
}
