# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2154,SC2034 # the globals of testpmu-guest.sh
#
# testpmu/runs/cover.sh: the cover-* runs of testpmu-guest.sh: PMUs that
# cover only some CPUs, as the core PMUs of the two core types of a hybrid
# Intel CPU (cpu_core, cpu_atom) and the PMUs (PMUv3, SPE) of each Arm
# cluster, whose event_init refuses the other CPUs with -ENOENT.  The test
# PMUs do the same for the CPUs outside their debugfs 'cpus' list
# (damon_test_pmu/cpus, damon_test_aux/cpus).  And the fair-* runs: the
# test PMU on every CPU, every CPU's reports read.  Sourced by
# testpmu-guest.sh, never run.

dtp_cpus=$debugfs/damon_test_pmu/cpus
dta_cpus=$debugfs/damon_test_aux/cpus

# Prints why the cover-* runs cannot run, if so
cover_skip_reason()
{
	if [ ! -w "$dtp_cpus" ] || [ ! -w "$dta_cpus" ]
	then
		echo "no $dtp_cpus or $dta_cpus (test PMUs without CPU lists)"
	elif [ "$ncpus" -lt 2 ]
	then
		echo "needs 2 online CPUs"
	fi
}

# cover_restore: both test PMUs cover every CPU again
cover_restore()
{
	local possible

	read -r possible < "$cpu_sysfs/possible" || return 0
	[ -w "$dtp_cpus" ] && try_write "$dtp_cpus" "$possible"
	[ -w "$dta_cpus" ] && try_write "$dta_cpus" "$possible"
	return 0
}

# cover_list PARITY: the online CPUs of PARITY (0 even, 1 odd), as a list
# 'a,b,c' (what the kernel's %*pbl prints when no two are adjacent)
cover_list()
{
	online_cpus | awk -v p="$1" '$1 % 2 == p' | paste -sd,
}

# cover_workload: the workload's spread mode, a thread pinned on every online
# CPU, keeping its buffers (thp_stable)
cover_workload()
{
	thp_stable
	if [ -n "${wl_pid:-}" ] && kill -0 "$wl_pid" 2> /dev/null
	then
		kill "$wl_pid"
		wait "$wl_pid" 2> /dev/null
	fi
	start_workload "" "$spread_mode"
}

# spread_stop: stop the workload, once the kdamond is off, so that the
# checks run on idle CPUs: beside a busy thread on each of 32 vCPUs of TCG,
# every command of this script takes seconds
spread_stop()
{
	if [ -n "${wl_pid:-}" ] && kill -0 "$wl_pid" 2> /dev/null
	then
		kill "$wl_pid"
		wait "$wl_pid" 2> /dev/null
	fi
	wl_pid=""
}

# cover_check_cpus WHAT SNAP_A SNAP_B COVERED [states]: per online CPU, the
# perf_stats snapshot SNAP_B (taken while the kdamond ran) shows the CPUs of
# the list COVERED RUNNING and the others UNCOVERED, and DAMON's callbacks
# from SNAP_A to SNAP_B grew on COVERED and only there.  With 'states', the
# callbacks are not checked: those of AUX records count on the CPU of the
# kdamond's drain, not on the CPU whose PMU wrote them.
cover_check_cpus()
{
	local what=$1 a=$2 b=$3 covered=",$4," states=${5:-} cpu st cb0 cb1
	local bad="" rows="" cpus

	cpus=$(online_cpus | paste -sd' ')
	while read -r cpu cb0 cb1 _ st
	do
		rows+=" cpu$cpu:$st:+$((cb1 - cb0))"
		if [[ "$covered" == *",$cpu,"* ]]
		then
			[ "$st" = RUNNING ] &&
				{ [ -n "$states" ] || [ "$cb1" -gt "$cb0" ]; } ||
				bad+=" cpu $cpu (covered) st=$st callbacks +$((cb1 - cb0));"
		else
			[ "$st" = UNCOVERED ] &&
				{ [ -n "$states" ] || [ "$cb1" -eq "$cb0" ]; } ||
				bad+=" cpu $cpu (not covered) st=$st callbacks +$((cb1 - cb0));"
		fi
	done < <(paste -d ' ' <(per_cpu_series stats cb "$cpus" "$a" "$b") \
		<(per_cpu_series stats st "$cpus" "$b"))
	[ -z "$bad" ]
	verdict "$what" $? \
		"the covered cpus $4 RUNNING, the others UNCOVERED$([ -n "$states" ] ||
			echo ", callbacks on the covered only"):$rows" \
		"$bad (per cpu:$rows)"
}

# cover_check_kmsg PMU UNCOVERED: the kernel log says which CPUs PMU does not
# cover, and has no DAMON warning or error
cover_check_kmsg()
{
	local pmu=$1 list=$2 lines

	lines=$(kmsg_damon)
	chk=kmsg
	grep -qF "the $pmu PMU does not cover cpus $list, which do not sample" <<< "$lines"
	verdict kmsg-cover $? \
		"the kernel log names the cpus: $(grep -m 1 -F "$pmu PMU does not cover" <<< "$lines")" \
		"no line that the $pmu PMU does not cover cpus $list: $(tail -n 2 <<< "$lines")"
	! grep -qiE 'cannot open|warn|bug|error' <<< "$lines"
	verdict kmsg-clean $? "no DAMON warning or error" \
		"DAMON warnings: $(grep -iE 'cannot open|warn|bug|error' <<< "$lines" | head -n 2)"
}

# run_cover_pmu: the test PMU (the ibs shape: records at the stack pointer
# of the interrupted task of the workload's thread group) covers the even
# CPUs only, vaddr of the spread workload.  'on' must succeed, the events be
# opened on the even CPUs, samples come from those only, and perf_stats and
# the kernel log say that the odd CPUs do not sample.
run_cover_pmu()
{
	local even odd cpus_ev

	chk=setup
	even=$(cover_list 0)
	odd=$(cover_list 1)
	cover_workload
	wr "$dtp_cpus" "$even"
	reset_kdamonds 1
	setup_ctx 0 1008 "$aggr_us" 0 "$wl_pid"
	write_attrs "$preps/0" type "$pmu_type" config $((wl_pid << 32)) \
		sample_period 1008 precise_ip 0 wakeup_events 0 ||
		abort "$write_msg"
	say "event: damon_test (type $pmu_type) on cpus $even of $(online_cpus | paste -sd,), vaddr"
	snap before
	dtp_snap before
	kmsg_mark cover
	chk=on
	kdamond_on 0 || exit 1
	pass "'on' succeeded with a PMU that covers cpus $even only"
	sleep 3
	snap running
	cpus_ev=$(sed -n 's/^cpu=\([0-9]*\) .*/\1/p' "$dtp_events" | sort -n | paste -sd,)
	[ "$(kdamond_state 0)" = on ] || fail "the kdamond stopped by itself"
	kdamond_off 0
	snap after
	dtp_snap after
	spread_stop
	[ "$cpus_ev" = "$even" ]
	verdict events $? "the test PMU has events on cpus $cpus_ev" \
		"the test PMU has events on cpus '$cpus_ev', not on $even"
	cover_check_cpus cpus before running "$even"
	cover_check_kmsg damon_test "$odd"
	chk=laws
	check_laws before after
	dtp_deltas
	[ "${pd[records]:-0}" -eq "${deltas[callback]}" ]
	verdict lost $? "Δrecords ${pd[records]:-0} == Δcallback ${deltas[callback]}" \
		"Δrecords ${pd[records]:-0} != Δcallback ${deltas[callback]}"
}

# run_cover_hybrid: one probe, two perf_event preps, as for the two core
# types of a hybrid CPU: the test PMU covers the even CPUs, the AUX test PMU
# (records with Context packets) the odd ones.  Every online CPU must sample,
# each through the PMU that covers it, and both sources reach DAMON.
run_cover_hybrid()
{
	local even odd aux_type c cpus_ev

	chk=setup
	even=$(cover_list 0)
	odd=$(cover_list 1)
	read -r aux_type < "$aux_pmu_dir/type" || abort "no $aux_pmu_dir/type"
	cover_workload
	wr "$dtp_cpus" "$even"
	wr "$dta_cpus" "$odd"
	reset_kdamonds 1
	setup_ctx 0 1008 "$aggr_us" 0 "$wl_pid"
	c=$kdamonds_dir/0/contexts/0
	perf_preps "$c" 2 || abort "$write_msg"
	write_attrs "$preps/0" type "$pmu_type" config $((wl_pid << 32)) \
		sample_period 1008 precise_ip 0 wakeup_events 0 exclude_kernel 0 \
		freq 0 sample_phys_addr 0 || abort "$write_msg"
	write_attrs "$preps/1" type "$aux_type" \
		config $((dta_cx | dta_commit_each | 8 << dta_burst_shift | wl_pid << 32)) \
		sample_period "$aux_period" precise_ip 0 wakeup_events 0 \
		exclude_kernel 0 freq 0 sample_phys_addr 0 || abort "$write_msg"
	say "probe 0: damon_test on cpus $even, damon_test_aux on cpus $odd, vaddr"
	snap before
	dtp_snap before
	aux_snap before
	kmsg_mark cover
	chk=on
	kdamond_on 0 || exit 1
	pass "'on' succeeded with two preps whose PMUs cover cpus $even and $odd"
	sleep 3
	snap running
	cpus_ev=$(sed -n 's/^cpu=\([0-9]*\) .*/\1/p' "$dtp_events" | sort -n | paste -sd,)
	[ "$(kdamond_state 0)" = on ] || fail "the kdamond stopped by itself"
	kdamond_off 0
	snap after
	dtp_snap after
	aux_snap after
	spread_stop
	[ "$cpus_ev" = "$even" ]
	verdict events $? "the test PMU has events on cpus $cpus_ev" \
		"the test PMU has events on cpus '$cpus_ev', not on $even"
	cover_check_cpus cpus before running "$(online_cpus | paste -sd,)" states
	dtp_deltas
	[ "${pd[records]:-0}" -gt 0 ]
	verdict pmu-records $? "the test PMU made ${pd[records]:-0} records" \
		"the test PMU made no record"
	aux_deltas before after
	local cpu bad=""
	for cpu in $(online_cpus)
	do
		if [ $((cpu % 2)) -eq 1 ]
		then
			[ "${ad[cpu$cpu:records]:-0}" -gt 0 ] || bad+=" cpu $cpu no AUX record;"
		else
			[ "${ad[cpu$cpu:records]:-0}" -eq 0 ] || bad+=" cpu $cpu ${ad[cpu$cpu:records]} AUX records;"
		fi
	done
	[ -z "$bad" ]
	verdict aux-cpus $? "AUX records on the odd cpus only" "$bad"
	compute_src_deltas before after
	[ "${src_deltas[perf_overflow]:-0}" -gt 0 ] && [ "${src_deltas[perf_aux]:-0}" -gt 0 ]
	verdict sources $? \
		"enqueued from both: perf_overflow +${src_deltas[perf_overflow]:-0}, perf_aux +${src_deltas[perf_aux]:-0}" \
		"perf_overflow +${src_deltas[perf_overflow]:-0}, perf_aux +${src_deltas[perf_aux]:-0}: a source is missing"
	cover_check_kmsg damon_test "$odd"
	cover_check_kmsg damon_test_aux "$even"
	chk=laws
	check_laws before after
}

# run_cover_none: a test PMU that covers no CPU, as an event of a core type
# or cluster whose CPUs are all offline: 'on' must fail with ENOENT, the
# kdamond stay off, and the kernel log say that no PMU covers any online
# CPU.  After the kmsg check, as it warns on purpose.
run_cover_none()
{
	chk=setup
	cover_workload
	wr "$dtp_cpus" ""
	reset_kdamonds 1
	setup_ctx 0 1008 "$aggr_us" 0 "$wl_pid"
	write_attrs "$preps/0" type "$pmu_type" config $((wl_pid << 32)) \
		sample_period 1008 precise_ip 0 wakeup_events 0 ||
		abort "$write_msg"
	check_on_refused damon_test "no PMU of the type covers any online cpu" \
		"No such file or directory"
}

# run_fair [ORDER]: the test PMU (records at the stack pointer of the
# interrupted thread of the workload's group) on every online CPU, a thread
# of the workload's spread mode on each, vaddr.  Every CPU's reports must
# reach DAMON in every window of 3 s (the CPU's report ring was dequeued),
# whatever the other CPUs make, with the default report rings and with
# report_ring_order ORDER while the context starts (order 2: 4 reports a
# ring, the most that a CPU gives DAMON per sampling interval; whether
# they overflow depends on the rate, which the guest's load sets), and the
# laws hold: every report that did not fit is counted.
run_fair()
{
	local order=${1:-} cpus cpu i d0 d1 grow orig bad="" win=3 deq

	chk=setup
	cpus=$(online_cpus)
	if [ "$ncpus" -lt 2 ]
	then
		skip "needs 2 online CPUs"
		return
	fi
	if [ -n "$order" ] && [ ! -w "$ring_order_param" ]
	then
		skip "no report_ring_order knob ($ring_order_param)"
		return
	fi
	cover_workload
	reset_kdamonds 1
	setup_ctx 0 1008 "$aggr_us" 0 "$wl_pid"
	write_attrs "$preps/0" type "$pmu_type" config $((wl_pid << 32)) \
		sample_period 1008 precise_ip 0 wakeup_events 0 ||
		abort "$write_msg"
	say "event: damon_test (type $pmu_type) on cpus $(echo $cpus | tr ' ' ,), vaddr${order:+, report_ring_order $order}"
	snap before
	dtp_snap before
	if [ -n "$order" ]
	then
		rd orig "$ring_order_param"
		echo "$orig" > "$tmpdir/ring_order.orig"
		wr "$ring_order_param" "$order"
	fi
	chk=on
	kdamond_on 0 || exit 1
	if [ -n "$order" ]
	then
		wr "$ring_order_param" "$orig"
		rm -f "$tmpdir/ring_order.orig"
	fi
	sleep 2
	snap win0
	for ((i = 1; i <= 3; i++))
	do
		sleep "$win"
		snap "win$i"
	done
	[ "$(kdamond_state 0)" = on ] || fail "the kdamond stopped by itself"
	kdamond_off 0
	snap after
	dtp_snap after
	spread_stop
	chk=fair
	while read -r -a deq
	do
		cpu=${deq[0]} grow=""
		for ((i = 1; i <= 3; i++))
		do
			d0=${deq[i]} d1=${deq[i + 1]}
			grow+=" +$((d1 - d0))"
			[ "$d1" -gt "$d0" ] || bad+=" cpu $cpu window $i ($d0 -> $d1);"
		done
		say "cpu $cpu: reports dequeued in each $win s window:$grow"
	done < <(per_cpu_series stats deq "$(echo $cpus)" win0 win1 win2 win3)
	[ -z "$bad" ]
	verdict fair $? \
		"DAMON dequeued reports of every cpu in every $win s window" \
		"no report dequeued in:$bad"
	chk=laws
	check_laws before after
	dtp_deltas
	[ "${pd[records]:-0}" -eq "${deltas[callback]}" ]
	verdict lost $? "Δrecords ${pd[records]:-0} == Δcallback ${deltas[callback]}" \
		"Δrecords ${pd[records]:-0} != Δcallback ${deltas[callback]}"
}

# run_cover NAME: the run cover-NAME.  Runs in a subshell.
run_cover()
{
	local reason

	reason=$(cover_skip_reason)
	if [ -n "$reason" ]
	then
		chk=all
		skip "$reason"
		return
	fi
	case "$1" in
	vaddr) run_cover_pmu;;
	hybrid) run_cover_hybrid;;
	none) run_cover_none;;
	*) abort "no run cover-$1";;
	esac
}
