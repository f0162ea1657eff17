# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2154,SC2034 # the globals of testpmu-guest.sh
#
# testpmu/runs/pmu.sh: the runs of testpmu-guest.sh on one perf event
# (run_pmu: a shape of the test PMU or the page-faults event, vaddr or
# paddr, or the force_large negative control).  Sourced by testpmu-guest.sh,
# never run.

#
# Tracing
#

# The damon_perf_sample lines of the trace instance $1: prints "lines
# context=hardirq-lines other-contexts overrun"
sample_trace()
{
	awk '
		/ damon_perf_sample: / {
			n++
			if ($0 ~ / context=hardirq /)
				hard++
			else if (match($0, / context=[a-z0-9]+/))
				other[substr($0, RSTART + 9, RLENGTH - 9)]++
		}
		END {
			o = ""
			for (c in other)
				o = o (o == "" ? "" : ",") c ":" other[c]
			print n + 0, hard + 0, (o == "" ? "-" : o)
		}' "$1/trace"
}

# insn_in_maps INSTANCE RECORDS UNMAPPED: the check in-maps of the insn
# runs: of the addresses that the PMU decoded (its records, and those with
# no page mapped, skip_unmapped), at least 99% lie in the workload's
# mappings ($tmpdir/maps, read while it ran).  The records' addresses are
# those that damon_perf_sample traced; an unmapped one counts as outside.
insn_in_maps()
{
	local inst=$1 dr=$2 dun=$3 n inside pct

	chk=in-maps
	if [ -z "$inst" ] || [ ! -s "$tmpdir/maps" ]
	then
		skip "no trace instance or no maps of the workload"
		return
	fi
	# mawk has no strtonum: hex() (user addresses, < 2^53, are exact)
	read -r n inside < <(awk '
		function hex(s,   i, v) {
			v = 0
			s = tolower(s)
			for (i = 1; i <= length(s); i++)
				v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
			return v
		}
		FNR == NR {
			split($1, r, "-")
			lo[NR] = hex(r[1]); hi[NR] = hex(r[2])
			nm = NR
			next
		}
		/ damon_perf_sample: / && match($0, /addr=0x[0-9a-f]+/) {
			a = hex(substr($0, RSTART + 7, RLENGTH - 7))
			n++
			for (i = 1; i <= nm; i++)
				if (a >= lo[i] && a < hi[i]) {
					in_++
					break
				}
		}
		END { print n + 0, in_ + 0 }' "$tmpdir/maps" "$inst/trace")
	if [ "$n" -eq 0 ]
	then
		fail "no damon_perf_sample traced ($dr records)"
		return
	fi
	# the traced share, applied to the records, over all decoded
	pct=$(awk -v n="$n" -v i="$inside" -v r="$dr" -v u="$dun" \
		'BEGIN { printf "%.2f", 100 * (i / n) * r / (r + u) }')
	awk -v p="$pct" 'BEGIN { exit !(p >= 99) }'
	verdict in-maps $? \
		"$pct% of the decoded addresses in the workload's mappings ($inside of $n traced, $dr records, $dun unmapped)" \
		"only $pct% of the decoded addresses in the workload's mappings ($inside of $n traced, $dr records, $dun unmapped)"
}

#
# One run
#

# run_pmu SHAPE OPS [FORCE]: one run with the event of SHAPE (ibs, pebs,
# pebs_large, page_faults) and the operations set OPS; FORCE 1 sets
# force_large (the negative control).  Runs in a subshell.
run_pmu()
{
	local shape=$1 ops=$2 force=${3:-0}
	local type=$pmu_type config period precise=0 mode=keep testpmu=true
	local ev inst="" nev nlarge nleft tr_n tr_hard tr_other
	local overrun=0 dr dov du dc pend gen

	chk=setup
	case "$shape" in
	ibs) config=0 period=1008;;
	pebs) config=1 period=1000 precise=1;;
	pebs_large) config=2 period=1000 precise=1;;
	# the ibs shape in insn mode (config bit 6): the interrupted
	# instruction's memory operand, no range
	insn) config=$((1 << 6)) period=1008;;
	page_faults) type=1 config=2 period=1 mode=refault testpmu=false;;
	esac
	if [ "$mode" = keep ]
	then
		thp_stable
	else
		thp_restore
	fi
	start_workload "$wl_cpu" "$mode"
	: > "$tmpdir/hot_pfns"
	[ "$ops" = paddr ] && take_frames
	if $testpmu
	then
		config=$((config | force << 4 | wl_pid << 32))
	fi

	reset_kdamonds 1
	if [ "$ops" = vaddr ]
	then
		setup_ctx 0 "$period" "$aggr_us" 1 "$wl_pid"
	else
		# the frames of a refaulting hot buffer change: all the memory
		setup_ctx 0 "$period" "$aggr_us" 1
		if [ "$mode" = refault ]
		then
			system_ram > "$tmpdir/target" || abort "no System RAM in /proc/iomem"
		else
			paddr_regions > "$tmpdir/target"
		fi
		paddr_target "$kdamonds_dir/0/contexts/0" "$([ "$mode" = refault ] &&
			echo "the biggest System RAM" || echo "the 2 MiB blocks of the workload's frames")"
	fi
	ev=$preps/0	# setup_ctx's perf_event prep
	write_attrs "$ev" type "$type" config "$config" precise_ip "$precise" \
		wakeup_events 0 || abort "$write_msg"
	if $testpmu && [ "$shape" != insn ]
	then
		write_attrs "$ev" config1 "$wl_hot_start" \
			config2 $((wl_hot_end - wl_hot_start)) || abort "$write_msg"
	fi
	if [ "$ops" = paddr ]
	then
		write_attrs "$ev" sample_phys_addr 1 || abort "$write_msg"
	fi
	say "event: type $type config $(printf '%#x' "$config") period $period" \
		"precise_ip $precise, $ops, aggregation ${aggr_us} us"

	if $testpmu && [ -n "$tracefs" ] && inst=$(trace_instance testpmu 2048)
	then
		trace_event "$inst" damon_perf_sample 1 || inst=""
	fi
	snap before
	dtp_snap before

	chk=on
	kdamond_on 0 || exit 1
	hc_t0=$SECONDS
	sleep 2
	cat "$dtp_events" > "$tmpdir/events.running" 2> /dev/null
	cat "/proc/$wl_pid/maps" > "$tmpdir/maps" 2> /dev/null
	sleep $((secs > 2 ? secs - 2 : 0))
	hot_regions=- cold_accessed=-
	[ "$force" = 1 ] || hot_cold "$ops" "$mode"
	[ "$(kdamond_state 0)" = on ] || fail "the kdamond stopped by itself"
	chk=off
	say "phase: stopping ($((SECONDS - hc_t0)) s after 'on')"
	kdamond_off 0
	say "phase: stopped ($((SECONDS - hc_t0)) s after 'on')"
	snap after
	dtp_snap after
	[ -n "$inst" ] && trace_event "$inst" damon_perf_sample 0
	nleft=$(grep -c '^cpu=' "$dtp_events" 2> /dev/null)

	# the PMU
	dtp_deltas
	dr=${pd[records]:-0}
	dov=${pd[to_overflow]:-0}
	du=${pd[to_output]:-0}
	pend=${pd[now:pending]:-0}
	if $testpmu
	then
		say "PMU deltas:$(for k in overflows missed skip_mode skip_task \
			skip_tgid skip_unmapped records to_overflow to_output \
			throttled drain_pmi drain_sched drain_stop adds dels \
			skip_kernel skip_compat skip_fetch skip_decode \
			skip_nomem skip_vsib
			do
				printf ' %s=%s' "$k" "${pd[$k]:-?}"
			done) pending=$pend"
		[ "$dr" -gt 0 ]
		verdict records $? "$dr records" \
			"the PMU made no record"
		chk=pmu-laws
		law "overflows == skip_* + records" "${pd[overflows]:-0}" == \
			$((pd[skip_mode] + pd[skip_task] + pd[skip_tgid] +
			pd[skip_unmapped] + ${pd[skip_kernel]:-0} +
			${pd[skip_compat]:-0} + ${pd[skip_fetch]:-0} +
			${pd[skip_decode]:-0} + ${pd[skip_nomem]:-0} +
			${pd[skip_vsib]:-0} + dr))
	fi

	# DAMON
	chk=laws
	check_laws before after
	dc=${deltas[callback]}

	if [ "$force" = 1 ]
	then
		nlarge=$(grep -c 'large=1' "$tmpdir/events.running")
		[ "$nlarge" -gt 0 ]
		verdict large $? \
			"$nlarge events with large=1 (force_large batches)" \
			"no event with large=1 in $dtp_events although force_large is set"
		[ "$du" -gt 0 ]
		verdict loss $? \
			"Δto_output $du > 0: records lost to perf_event_output()" \
			"Δto_output is 0: the loss is not visible"
		[ "$dc" -eq "$dov" ] && [ "$dov" -lt "$dr" ]
		verdict overflow-calls $? \
			"Δcallback $dc == Δto_overflow $dov < Δrecords $dr" \
			"Δcallback $dc == Δto_overflow $dov < Δrecords $dr does not hold"
		[ "$pend" -eq 0 ]
		verdict handover $? "pending 0 after the stop" \
			"pending $pend after the stop"
	elif $testpmu
	then
		[ "$du" -eq 0 ] && [ "$pend" -eq 0 ]
		verdict handover $? \
			"Δto_output 0, pending 0 after the stop" \
			"Δto_output $du, pending $pend after the stop (records lost or left in a batch)"
		[ "$dr" -eq "$dc" ]
		verdict lost $? \
			"Δrecords $dr == Δcallback $dc (Δto_overflow $dov)" \
			"Δrecords $dr != Δcallback $dc (Δto_overflow $dov): records lost before DAMON's handler"
		# insn is the ibs shape with config bit 6
		nev=$(grep -c "^cpu=[0-9]* shape=${shape/#insn/ibs} " "$tmpdir/events.running")
		nlarge=$(grep -c 'large=1' "$tmpdir/events.running")
		[ "$nev" -eq "$ncpus" ] && [ "$nlarge" -eq 0 ] && [ "$nleft" -eq 0 ]
		verdict events $? \
			"$nev events of shape $shape while running ($ncpus CPUs), none with large=1; none left after the stop" \
			"$nev events of shape $shape while running ($ncpus CPUs), $nlarge with large=1, $nleft left after the stop"
		if [ "$nlarge" -gt 0 ]
		then
			grep 'large=1' "$tmpdir/events.running" | head -n 2 |
				sed 's/^/#   /'
		fi
		chk=hardirq
		if [ -z "$inst" ]
		then
			skip "no tracefs instance for damon_perf_sample"
		else
			read -r tr_n tr_hard tr_other < <(sample_trace "$inst")
			overrun=$(trace_overrun "$inst")
			if [ "$tr_n" -gt 0 ] && [ "$tr_hard" -eq "$tr_n" ] &&
				{ [ "$tr_n" -eq "$dc" ] || [ "$overrun" -gt 0 ]; }
			then
				pass "$tr_n damon_perf_sample, all context=hardirq" \
					"(callback $dc, $overrun overwritten)"
			else
				fail "$tr_n damon_perf_sample, $tr_hard with" \
					"context=hardirq, others (context:count) $tr_other;" \
					"callback $dc, $overrun overwritten"
			fi
		fi
	else
		[ "$dc" -gt 0 ]
		verdict samples $? "$dc callbacks" \
			"no callback: the page-faults event did not fire"
	fi

	# (paddr traces physical addresses: its hotcold check places them)
	[ "$shape" = insn ] && [ "$ops" = vaddr ] &&
		insn_in_maps "$inst" "$dr" "${pd[skip_unmapped]:-0}"

	if [ "$force" != 1 ]
	then
		chk=hotcold
		if $hc_ok
		then
			pass "$hc_desc"
		else
			fail "$hc_desc; callback=$dc$(for k in $reason_rows
				do
					[ "${deltas[$k]}" -eq 0 ] ||
						printf ' %s=%s' "$k" "${deltas[$k]}"
				done) match=${deltas[match]} update=${deltas[update]}"
		fi
	fi

	gen=-
	$testpmu && gen=$dr
	echo "RESULT shape=$shape$([ "$force" = 1 ] && echo +force_large)" \
		"ops=$ops generated=$gen callback=$dc valid=${deltas[valid]}" \
		"matched=${deltas[match]} updated=${deltas[update]}" \
		"inv_phys=${deltas[inv_phys]} xlate_fail=${deltas[xlate_fail]}" \
		"hot_regions=$hot_regions" \
		"cold_accessed=$cold_accessed"
}

# run_nointr: an event of a PMU that cannot interrupt (the test PMU's twin
# damon_test_nointr, PERF_PMU_CAP_NO_INTERRUPT) makes no sample:
# perf_event_open() refuses it, and DAMON's 'on' must fail the same way,
# with EOPNOTSUPP and a warning that names the PMU, instead of running with
# an event that samples nothing.  After the kmsg check, as it warns on
# purpose.  Runs in a subshell.
run_nointr()
{
	local dir=/sys/bus/event_source/devices/damon_test_nointr type ev

	chk=setup
	if [ ! -r "$dir/type" ]
	then
		skip "no damon_test_nointr PMU (an older test PMU)"
		return
	fi
	read -r type < "$dir/type"
	reset_kdamonds 1
	setup_ctx 0 1000 100000 0 $$
	ev=$preps	# setup_ctx's probe 0 preps
	# ibs shape: its period must be a multiple of 16
	write_attrs "$ev/0" type "$type" config 0 sample_period 1008 \
		precise_ip 0 wakeup_events 0 || abort "$write_msg"
	check_on_refused damon_test_nointr "damon_test_nointr PMU cannot interrupt"
}

# check_on_refused PMU PATTERN [ERROR]: with kdamond 0 set up with an event
# of PMU, 'on' fails with ERROR (the text of strerror(), EOPNOTSUPP's by
# default), the kdamond stays off, and the kernel log has a line matching
# PATTERN (grep -E) that names the PMU
check_on_refused()
{
	local pmu=$1 pattern=$2 err=${3:-not supported} st

	kmsg_mark "$pmu"
	chk=refused
	if try_write "$kdamonds_dir/0/state" on
	then
		fail "'on' with an event of $pmu succeeded"
		kdamond_off 0
		return
	fi
	[[ "$write_err" == *"$err"* ]]
	verdict refused $? "'on' failed: $write_err" \
		"'on' failed with '$write_err', not '$err'"
	rd st "$kdamonds_dir/0/state"
	[ "$st" = off ]
	verdict state $? "the kdamond is off" "the kdamond is '$st'"
	kmsg_damon | grep -qE "$pattern"
	verdict warning $? "the kernel log names the PMU: $(kmsg_damon | grep -m1 -E "$pattern")" \
		"no warning naming $pmu: $(kmsg_damon | tail -n 2)"
}
