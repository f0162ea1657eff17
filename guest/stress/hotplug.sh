# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2154 # damon_perf_stress.sh and lib/ set the globals it uses
#
# Subtest hotplug of damon_perf_stress.sh: --hotplug N CPU offline/online
# cycles while a kdamond monitors a refaulting workload.  Sourced by
# damon_perf_stress.sh, whose main() runs subtest_hotplug in a subshell; uses
# the helpers of lib/.
#
# What perf_stats shows for a CPU, per the code (mm/damon/perf/events.c):
# - No perf event is opened or released in a CPU hotplug callback: that can
#   take the CPU hotplug lock, which the hotplug thread holds (static keys of
#   software events with CONFIG_JUMP_LABEL, which every distro kernel has:
#   the offlining never finished before the callbacks only marked the CPU).
#   damon_perf_cpu_online()/_offline() only mark the CPU; the kdamond opens
#   and releases the events in damon_perf_events_update(), once per sampling
#   interval.
# - Offline: perf detaches the events of the CPU (CPUHP_AP_PERF_ONLINE), so
#   the CPU samples nothing from then on; the kdamond releases its event
#   later, and damon_perf_observe_event_destroyed() resets only the
#   per-event state (&damon_perf_event->cpu_state) to UNINIT.  The state of
#   the CPU, which perf_stats shows, is last-writer-wins and is NOT reset by
#   a release (observe.c), so an offlined CPU keeps the state it had:
#   ENABLED, or RUNNING once a sample came.  Nothing writes it while the CPU
#   is offline (the kdamond opens events only on CPUs marked online; samples
#   come only from the CPU itself), and its producer counters (cb, enq) are
#   frozen.  perf_stats keeps printing the CPU (for_each_possible_cpu).
# - Online: the kdamond opens the event at its next sampling interval:
#   CREATED, BOUND and, as the kdamond armed the event, ENABLED; the first
#   sample on the CPU makes it RUNNING.  Until then the CPU shows the state
#   it kept while offline.  ERROR if opening failed (logged; it does not
#   stop the monitoring).  The end of the subtest checks that samples
#   resumed on the re-onlined CPUs.
# - Stop: the events are disabled (BOUND), then closed.
#
subtest_hotplug()
{
	local cpus=() d n i cpu st st2 cb cb2 enq enq2 resumed="" kd
	declare -A on_cb=()

	[ -r "$cpu_sysfs/online" ] || skip_subtest "no $cpu_sysfs/online"
	n=$(online_cpus | wc -l)
	[ "$n" -ge 2 ] || skip_subtest "fewer than 2 online CPUs ($n)"
	for d in "$cpu_sysfs"/cpu[0-9]*
	do
		n=${d##*/cpu}
		# the boot CPU stays; x86 has no cpu0/online since 6.5
		[ "$n" = 0 ] && continue
		[ -w "$d/online" ] || continue
		rd st "$d/online"
		[ "$st" = 1 ] && cpus+=("$n")
	done
	[ ${#cpus[@]} -gt 0 ] ||
		skip_subtest "CPU hotplug not available (no writable cpuN/online)"
	need_workload
	$have_stats || say "per-CPU states and laws: NOT checked (no $perf_stats)"
	say "$nr_hotplug offline/online cycles over CPUs ${cpus[*]}"

	start_workload
	reset_kdamonds 1
	setup_ctx 0 1 100000 0 "$wl_pid"
	snap before
	kmsg_mark hotplug
	kdamond_on 0 || exit 1
	kd=$kd_pid
	sleep 1
	if $have_stats
	then
		snap armed
		for cpu in $(online_cpus)
		do
			st=$(cpu_get armed "$cpu" st)
			case "$st" in
			ENABLED|RUNNING) ;;
			*) abort "CPU$cpu is $st after the start, not ENABLED/RUNNING";;
			esac
		done
		pass "every online CPU ENABLED or RUNNING after the start"
	fi

	for ((i = 0; i < nr_hotplug; i++))
	do
		cpu=${cpus[i % ${#cpus[@]}]}
		if ! try_write "$cpu_sysfs/cpu$cpu/online" 0
		then
			fail "cycle $i: offlining CPU$cpu failed: $write_err"
			break
		fi
		echo "$cpu" >> "$tmpdir/offlined"
		rd st "$cpu_sysfs/cpu$cpu/online"
		if [ "$st" != 0 ]
		then
			fail "cycle $i: CPU$cpu/online reads '$st' after offlining"
			break
		fi
		if $have_stats
		then
			snap off1
			read -r st cb enq < <(cpu_get off1 "$cpu" st cb enq)
			case "$st" in
			ENABLED|RUNNING) ;;
			*)
				fail "cycle $i: offline CPU$cpu shows st=$st; a" \
					"release keeps the state of the CPU" \
					"(ENABLED or RUNNING)"
				break;;
			esac
			sleep 0.1
			snap off2
			read -r st2 cb2 enq2 < <(cpu_get off2 "$cpu" st cb enq)
			if [ "$st2" != "$st" ] || [ "$cb2" != "$cb" ] ||
				[ "$enq2" != "$enq" ]
			then
				fail "cycle $i: offline CPU$cpu changed:" \
					"st $st->$st2 cb $cb->$cb2 enq $enq->$enq2"
				break
			fi
		fi
		if ! try_write "$cpu_sysfs/cpu$cpu/online" 1
		then
			fail "cycle $i: onlining CPU$cpu failed: $write_err"
			break
		fi
		sed -i "/^$cpu\$/d" "$tmpdir/offlined"
		if $have_stats
		then
			snap on1
			read -r st cb < <(cpu_get on1 "$cpu" st cb)
			case "$st" in
			ENABLED|RUNNING) ;;
			*)
				fail "cycle $i: onlined CPU$cpu shows st=$st," \
					"not ENABLED/RUNNING"
				kmsg_damon | tail -n 3 | sed 's/^/#   kernel: /'
				break;;
			esac
			on_cb[$cpu]=$cb
		fi
		st=$(kdamond_state 0)
		if [ "$st" != on ]
		then
			fail "cycle $i: the kdamond is '$st'"
			break
		fi
		if ! kill -0 "$wl_pid" 2> /dev/null
		then
			fail "cycle $i: the workload died"
			break
		fi
		if (((i + 1) % 20 == 0))
		then
			say "$((i + 1))/$nr_hotplug cycles"
		fi
	done
	[ "$i" -eq "$nr_hotplug" ] && pass "$nr_hotplug offline/online cycles" \
		"(per-CPU states as expected after each)"

	sleep 1
	if $have_stats
	then
		snap end
		for cpu in "${!on_cb[@]}"
		do
			cb=$(cpu_get end "$cpu" cb)
			[ "$cb" -gt "${on_cb[$cpu]}" ] && resumed+=" $cpu"
		done
		if [ -n "$resumed" ]
		then
			pass "samples resumed on re-onlined CPUs:$resumed"
		elif [ ${#on_cb[@]} -gt 0 ]
		then
			fail "no re-onlined CPU counted a sample after its last online"
		fi
	fi
	kdamond_off 0 && pass "the kdamond (pid $kd) stopped cleanly"
	snap after
	check_all_bound after
	check_laws before after
	if $have_stats
	then
		[ "${deltas[callback]}" -gt 0 ] || fail "no sample counted"
		[ "${deltas[match]}" -gt 0 ] || fail "no report matched the workload"
	fi
	check_kmsg
	kmemleak_check
	if [ "$kml_status" != "kmemleak checked" ]
	then
		say "checked: the hotplug cycles$($have_stats && echo ", states, laws");" \
			"NOT checked: leaks ($kml_status)"
		set_directive "$kml_status"
	fi
	exit $((nfail > 0))
}
