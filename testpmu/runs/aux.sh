# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2154,SC2034 # the globals of testpmu-guest.sh
#
# testpmu/runs/aux.sh: the aux-* runs of testpmu-guest.sh (run_aux): DAMON
# with an event of the AUX test PMU damon_test_aux
# (testpmu/0002-damon-test-aux-pmu.patch), which writes Arm SPE records into
# the kernel-owned AUX buffer of each of DAMON's per-CPU events; the kdamond
# drains and decodes them.  Each record is accounted for from the PMU's
# counters (debugfs damon_test_aux/stats) to DAMON's (perf_stats) and
# regions.  Sourced by testpmu-guest.sh, never run.

# The config bits of damon_test_aux
dta_pa=$((1 << 0))
dta_cx=$((1 << 1))
dta_branch=$((1 << 3))
dta_pad=$((1 << 4))
dta_trunc=$((1 << 5))
dta_commit_each=$((1 << 7))
dta_burst_shift=16

# sample_period of the events: timer microseconds (an expiry per tick in the
# guest: HZ=250, no high-resolution timers)
aux_period=1000

# Prints why the aux-* runs cannot run, if so
aux_skip_reason()
{
	if [ ! -r "$aux_pmu_dir/type" ]
	then
		echo "no damon_test_aux PMU ($aux_pmu_dir: a kernel without testpmu/0002-damon-test-aux-pmu.patch?)"
	elif [ ! -r "$dta_stats" ] || [ ! -w "$dta_inject" ]
	then
		echo "no $dta_stats or $dta_inject (debugfs not mounted?)"
	fi
}

#
# The AUX test PMU's counters and the trace
#

aux_snap()
{
	cat "$dta_stats" > "$tmpdir/aux.$1" 2> /dev/null || : > "$tmpdir/aux.$1"
}

# aux_deltas A B: fills ad with the deltas of the counters of the cpu=total
# line from the stats snapshot A (aux_snap) to B, ad[cpuN:KEY] with those of
# the line of CPU N, and ad[now:KEY] with the totals in B
declare -A ad=()
aux_deltas()
{
	kv_into ad < <(awk '
		$1 ~ /^cpu=/ {
			p = substr($1, 5)
			p = p == "total" ? "" : "cpu" p ":"
			for (i = 2; i <= NF; i++) {
				split($i, kv, "=")
				if (FILENAME == ARGV[1])
					b[p kv[1]] = kv[2]
				else
					a[p kv[1]] = kv[2]
			}
		}
		END {
			for (k in a) {
				print k, a[k] - b[k]
				if (k !~ /:/)
					print "now:" k, a[k]
			}
		}' "$tmpdir/aux.$1" "$tmpdir/aux.$2")
}

# aux_cpu_stat SNAP CPU KEY: the counter KEY of CPU (or "total") in the
# stats snapshot SNAP, 0 if the line is not there
aux_cpu_stat()
{
	awk -v cpu="cpu=$2" -v key="$3" '
		$1 == cpu {
			for (i = 2; i <= NF; i++) {
				split($i, kv, "=")
				if (kv[1] == key)
					v = kv[2]
			}
		}
		END { print v + 0 }' "$tmpdir/aux.$1"
}

# aux_trace INST: fills at with the damon_perf_sample lines of the trace
# instance INST: at[n] lines, at[ctx0] of them with context=process, at[other]
# the other contexts (context:count, or -), at[cpuN] the lines with cpu=N
# (the CPU whose PMU wrote the record), at[cpus] those CPUs, and at[overrun]
# the events overwritten
declare -A at=()
aux_trace()
{
	kv_into at < <(awk '
		/ damon_perf_sample: / {
			n++
			c = "?"
			if (match($0, / context=[a-z0-9]+/))
				c = substr($0, RSTART + 9, RLENGTH - 9)
			if (c == "process")
				ctx0++
			else
				other[c]++
			if (match($0, / cpu=[0-9]+/))
				cpu[substr($0, RSTART + 5, RLENGTH - 5)]++
		}
		END {
			o = ""
			for (c in other)
				o = o (o == "" ? "" : ",") c ":" other[c]
			print "n", n + 0
			print "ctx0", ctx0 + 0
			print "other", (o == "" ? "-" : o)
			l = ""
			for (c in cpu) {
				print "cpu" c, cpu[c]
				l = l (l == "" ? "" : ",") c
			}
			print "cpus", (l == "" ? "-" : l)
		}' "$1/trace")
	at[overrun]=$(trace_overrun "$1")
}

#
# One phase: set up, run, stop
#

# aux_setup OPS BITS [SAMPLE_US [AGGR_US]]: the workload (started once per
# run: keep mode, pinned to wl_cpu), kdamond 0 with one event of
# damon_test_aux of config BITS (| pa for paddr) | the workload's tgid,
# config1/config2 its
# hot buffer, and its vaddr target (the workload) or paddr target (the 2 MiB
# blocks of its frames, with sample_phys_addr); SAMPLE_US overrides the
# sampling interval of setup_ctx.  Sets aux_cfg and aux_ops.
aux_setup()
{
	local ops=$1 bits=$2 sample=${3:-} aggr=${4:-$aggr_us} c ev

	chk=setup
	thp_stable
	if [ -z "${wl_pid:-}" ] || ! kill -0 "$wl_pid" 2> /dev/null
	then
		start_workload "$wl_cpu" keep
	fi
	aux_ops=$ops
	# paddr: every load and store has a physical address packet
	[ "$ops" = paddr ] && bits=$((bits | dta_pa))
	aux_cfg=$((bits | wl_pid << 32))
	reset_kdamonds 1
	c=$kdamonds_dir/0/contexts/0
	if [ "$ops" = vaddr ]
	then
		setup_ctx 0 "$aux_period" "$aggr" 1 "$wl_pid"
	else
		: > "$tmpdir/hot_pfns"
		take_frames
		setup_ctx 0 "$aux_period" "$aggr" 1
		paddr_regions > "$tmpdir/target"
		paddr_target "$c" "the 2 MiB blocks of the workload's frames"
	fi
	if [ -n "$sample" ]
	then
		write_attrs "$c/monitoring_attrs/intervals" sample_us "$sample" ||
			abort "$write_msg"
	fi
	ev=$preps/0	# setup_ctx's perf_event prep
	write_attrs "$ev" type "$aux_type" config "$aux_cfg" \
		config1 "$wl_hot_start" config2 $((wl_hot_end - wl_hot_start)) \
		precise_ip 0 wakeup_events 0 || abort "$write_msg"
	if [ "$ops" = paddr ]
	then
		write_attrs "$ev" sample_phys_addr 1 || abort "$write_msg"
	fi
	say "event: damon_test_aux (type $aux_type) config $(printf '%#x' "$aux_cfg")" \
		"period $aux_period us, $ops, sampling ${sample:-5000} us," \
		"aggregation $aggr us"
}

# aux_on: the snapshots before, and 'on'
aux_on()
{
	snap before
	aux_snap before
	chk=on
	kdamond_on 0 || exit 1
	hc_t0=$SECONDS
}

# aux_off PREFIX: the kdamond still runs, 'off', the snapshots after, the
# deltas (aux_deltas, check_laws, compute_src_deltas); the checks are named
# PREFIX:CHECK if PREFIX is not empty
aux_off()
{
	local pfx=${1:+$1:} st

	st=$(kdamond_state 0)
	[ "$st" = on ]
	verdict "${pfx}state" $? "the kdamond ran until the stop" \
		"the kdamond is '$st' before the stop"
	chk=${pfx}off
	kdamond_off 0
	say "phase: stopped ($((SECONDS - hc_t0)) s after 'on')"
	snap after
	aux_snap after
	aux_deltas before after
	say "PMU deltas:$(for k in records loads stores branches pad_bytes \
		truncated bytes commits full flag_partial flag_truncated \
		flag_collision skip_mode skip_task skip_tgid skip_unmapped
		do
			printf ' %s=%s' "$k" "${ad[$k]:-?}"
		done)"
	chk=${pfx}laws
	check_laws before after
	compute_src_deltas before after
	say "enqueue by source:$(for k in "${!src_deltas[@]}"
		do
			printf ' %s=%s' "$k" "${src_deltas[$k]}"
		done)"
}

# aux_inject_each WHAT...: each WHAT written to damon_test_aux/inject, a
# second apart, and a second more for the drain
aux_inject_each()
{
	local how

	for how in "$@"
	do
		sleep 1
		try_write "$dta_inject" "$how" ||
			abort "writing $how to $dta_inject: $write_err"
	done
	sleep 1
}

#
# Checks on the deltas of a phase (after aux_off)
#

# aux_check_records PREFIX: the PMU wrote records, by its own law
aux_check_records()
{
	local pfx=${1:+$1:} dr=${ad[records]:-0}

	[ "$dr" -gt 0 ]
	verdict "${pfx}records" $? "$dr records" \
		"the PMU wrote no record (skip_mode=${ad[skip_mode]:-?} skip_task=${ad[skip_task]:-?} skip_tgid=${ad[skip_tgid]:-?} skip_unmapped=${ad[skip_unmapped]:-?})"
	chk=${pfx}pmu-laws
	law "records == loads + stores + branches" "$dr" == \
		$((ad[loads] + ad[stores] + ad[branches]))
}

# aux_check_source PREFIX: the reports of the phase are the AUX drain's
aux_check_source()
{
	local pfx=${1:+$1:} aux=${src_deltas[perf_aux]:-}

	if [ -z "$aux" ]
	then
		chk=${pfx}source
		fail "perf_stats has no perf_aux line under Per-source enqueue"
		return
	fi
	[ "${deltas[enqueue]}" -gt 0 ] && [ "$aux" -eq "${deltas[enqueue]}" ]
	verdict "${pfx}source" $? \
		"Δenqueue ${deltas[enqueue]} == Δperf_aux enqueue $aux" \
		"Δenqueue ${deltas[enqueue]}, Δperf_aux enqueue $aux (perf_overflow ${src_deltas[perf_overflow]:-?}): not every report is of the AUX drain, or none was made"
}

# aux_check_exact PREFIX: every record was counted once, by its kind
aux_check_exact()
{
	local pfx=${1:+$1:} dr=${ad[records]:-0} dc=${deltas[callback]}
	local ls=$((ad[loads] + ad[stores]))

	[ "$dr" -eq "$dc" ]
	verdict "${pfx}lost" $? \
		"Δrecords $dr == Δcallback $dc: every record counted once" \
		"Δrecords $dr != Δcallback $dc: records lost or counted twice"
	[ "${deltas[valid]}" -eq "$ls" ] &&
		[ "${deltas[not_ldst]}" -eq "${ad[branches]:-0}" ] &&
		[ "${deltas[malformed]}" -eq 0 ] && [ "${deltas[aux_skip]}" -eq 0 ]
	verdict "${pfx}kinds" $? \
		"Δvalid ${deltas[valid]} == Δloads+Δstores $ls, Δnot_ldst ${deltas[not_ldst]} == Δbranches ${ad[branches]:-0}, no malformed data" \
		"Δvalid ${deltas[valid]} (Δloads+Δstores $ls), Δnot_ldst ${deltas[not_ldst]} (Δbranches ${ad[branches]:-0}), Δmalformed ${deltas[malformed]}, Δaux_skip ${deltas[aux_skip]}"
}

# aux_check_flags PREFIX clean|any: DAMON counts no more flagged AUX
# transactions than the PMU flagged (reads coalesce them; a begin on a full
# buffer flags TRUNCATED in perf core, which the PMU counts as full); clean:
# none at all
aux_check_flags()
{
	local pfx=${1:+$1:} how=$2 ok=0 desc

	desc="DAMON aux_trunc=${deltas[aux_trunc]} aux_partial=${deltas[aux_partial]}"
	desc+=" aux_collide=${deltas[aux_collide]}; PMU full=${ad[full]:-0}"
	desc+=" flag_truncated=${ad[flag_truncated]:-0}"
	desc+=" flag_partial=${ad[flag_partial]:-0}"
	desc+=" flag_collision=${ad[flag_collision]:-0}"
	if ! { [ "${deltas[aux_trunc]}" -le $((ad[flag_truncated] + ad[full])) ] &&
		[ "${deltas[aux_partial]}" -le "${ad[flag_partial]:-0}" ] &&
		[ "${deltas[aux_collide]}" -le "${ad[flag_collision]:-0}" ]; }
	then
		ok=1
	fi
	if [ "$how" = clean ] && [ "$ok" -eq 0 ]
	then
		[ $((deltas[aux_trunc] + deltas[aux_partial] + deltas[aux_collide] +
			ad[full] + ad[flag_truncated] + ad[flag_partial] +
			ad[flag_collision])) -eq 0 ] || ok=1
		verdict "${pfx}flags" "$ok" "no AUX transaction flagged: $desc" \
			"AUX transactions flagged in a run that loses no data: $desc"
		return
	fi
	verdict "${pfx}flags" "$ok" "DAMON counts no more flags than the PMU set: $desc" \
		"DAMON counts more flagged transactions than the PMU made: $desc"
}

# aux_check_trace INST: every record traced with context=process (the kdamond's
# drain, process context), as many as perf_stats counts callbacks, and with
# cpu= the CPU whose PMU wrote it: per CPU, as many as the PMU wrote there
aux_check_trace()
{
	local inst=$1 dc=${deltas[callback]} cpu bad=""

	chk=context
	if [ -z "$inst" ]
	then
		skip "no tracefs instance for damon_perf_sample"
		return
	fi
	aux_trace "$inst"
	if [ "${at[n]}" -gt 0 ] && [ "${at[ctx0]}" -eq "${at[n]}" ] &&
		{ [ "${at[n]}" -eq "$dc" ] || [ "${at[overrun]}" -gt 0 ]; }
	then
		pass "${at[n]} damon_perf_sample, all context=process" \
			"(callback $dc, ${at[overrun]} overwritten)"
	else
		fail "${at[n]} damon_perf_sample, ${at[ctx0]} with context=process," \
			"others (context:count) ${at[other]}; callback $dc," \
			"${at[overrun]} overwritten"
	fi
	chk=trace-cpu
	if [ "${at[overrun]}" -gt 0 ]
	then
		skip "${at[overrun]} traced events overwritten"
		return
	fi
	for cpu in $(online_cpus)
	do
		[ "${at[cpu$cpu]:-0}" -eq "${ad[cpu$cpu:records]:-0}" ] ||
			bad+=" cpu$cpu:traced=${at[cpu$cpu]:-0},records=${ad[cpu$cpu:records]:-0}"
	done
	[ -z "$bad" ]
	verdict trace-cpu $? \
		"per CPU, as many records traced with its cpu= as its PMU wrote (CPUs traced: ${at[cpus]})" \
		"traced cpu= does not match the CPUs that wrote the records:$bad"
}

# aux_result LABEL: the RESULT line of a phase
aux_result()
{
	echo "RESULT run=$cur shape=$1 ops=$aux_ops generated=${ad[records]:-0}" \
		"callback=${deltas[callback]} valid=${deltas[valid]}" \
		"matched=${deltas[match]} updated=${deltas[update]}" \
		"inv_phys=${deltas[inv_phys]} xlate_fail=${deltas[xlate_fail]}" \
		"hot_regions=$hot_regions cold_accessed=$cold_accessed" \
		"not_ldst=${deltas[not_ldst]} malformed=${deltas[malformed]}" \
		"aux_skip=${deltas[aux_skip]} aux_trunc=${deltas[aux_trunc]}" \
		"aux_partial=${deltas[aux_partial]}" \
		"aux_collide=${deltas[aux_collide]} full=${ad[full]:-0}"
}

#
# The runs
#

# run_aux_ops OPS: loads and stores of the hot buffer, committed at every
# expiry, with a Context packet for vaddr and a physical address packet and
# no Context packet for paddr, which needs none
run_aux_ops()
{
	local ops=$1 bits inst=""

	bits=$((dta_commit_each | 8 << dta_burst_shift))
	[ "$ops" = vaddr ] && bits=$((bits | dta_cx))
	aux_setup "$ops" "$bits"
	if [ -n "$tracefs" ] && inst=$(trace_instance aux 4096)
	then
		trace_event "$inst" damon_perf_sample 1 || inst=""
	fi
	aux_on
	sleep "$secs"
	hot_regions=- cold_accessed=-
	hot_cold "$ops" keep
	aux_off
	[ -n "$inst" ] && trace_event "$inst" damon_perf_sample 0

	aux_check_records
	aux_check_exact
	aux_check_source
	aux_check_flags "" clean
	chk=hotcold
	if $hc_ok
	then
		pass "$hc_desc"
	else
		fail "$hc_desc; callback=${deltas[callback]} valid=${deltas[valid]}" \
			"match=${deltas[match]} update=${deltas[update]}" \
			"miss_tgid=${deltas[miss_tgid]} miss_region=${deltas[miss_region]}"
	fi
	aux_check_trace "$inst"
	aux_result aux
}

# run_aux_shapes OPS: branch records and padding, which are not loads or
# stores and not records; then half records flagged PARTIAL at each commit,
# which make the drain discard data as malformed
run_aux_shapes()
{
	local ops=$1 bits

	hot_regions=- cold_accessed=-
	bits=$((dta_cx | dta_commit_each | 8 << dta_burst_shift))
	aux_setup "$ops" $((bits | dta_branch | dta_pad))
	aux_on
	sleep "$secs"
	aux_off branch-pad
	aux_check_records branch-pad
	[ "${ad[branches]:-0}" -gt 0 ] && [ "${ad[pad_bytes]:-0}" -gt 0 ]
	verdict branch-pad:shape $? \
		"the PMU wrote ${ad[branches]} branch records and ${ad[pad_bytes]} padding bytes" \
		"the PMU wrote ${ad[branches]:-0} branch records and ${ad[pad_bytes]:-0} padding bytes: config branch|pad not in effect"
	aux_check_exact branch-pad
	aux_check_source branch-pad
	aux_check_flags branch-pad clean
	aux_result aux+branch,pad

	aux_setup "$ops" $((bits | dta_trunc))
	aux_on
	sleep "$secs"
	aux_off trunc
	aux_check_records trunc
	[ "${ad[truncated]:-0}" -gt 0 ] && [ "${ad[flag_partial]:-0}" -gt 0 ]
	verdict trunc:shape $? \
		"the PMU wrote ${ad[truncated]} half records, ${ad[flag_partial]} commits flagged PARTIAL" \
		"the PMU wrote ${ad[truncated]:-0} half records, ${ad[flag_partial]:-0} commits flagged PARTIAL: config trunc not in effect"
	[ "${deltas[malformed]}" -gt 0 ] && [ "${deltas[aux_partial]}" -gt 0 ]
	verdict trunc:lossy $? \
		"Δmalformed ${deltas[malformed]} > 0 (Δaux_skip ${deltas[aux_skip]} bytes), Δaux_partial ${deltas[aux_partial]} > 0" \
		"Δmalformed ${deltas[malformed]}, Δaux_partial ${deltas[aux_partial]}: the cut records or the PARTIAL flags were not seen"
	aux_check_flags trunc any
	aux_result aux+trunc
}

# run_aux_full OPS: a burst of 128 records per expiry fills the 64 KiB buffer
# within a 2 s sampling interval: the PMU cannot begin a transaction (full)
# and stops, the kdamond sees TRUNCATED at its next drain, and perf core
# starts the PMU again once the drain made room.  Every 3 s window after the first full buffer
# holds a drain at least 0.9 s before its end, after which the PMU fills the
# buffer again (in about 0.1 s): records must grow in each window.
run_aux_full()
{
	local ops=$1 i prev r f f1 c2 grow="" bad=""

	hot_regions=- cold_accessed=-
	aux_setup "$ops" $((dta_cx | dta_commit_each | 128 << dta_burst_shift)) \
		2000000 2000000
	aux_on
	# the first full buffer, within the first sampling interval
	for ((i = 0; i < 30; i++))
	do
		sleep 0.1
		aux_snap win0
		[ "$(aux_cpu_stat win0 total full)" -gt "$(aux_cpu_stat before total full)" ] &&
			break
	done
	snap win0
	say "phase: the buffer is full ($((SECONDS - hc_t0)) s after 'on')"
	for ((i = 1; i <= 3; i++))
	do
		sleep 3
		aux_snap "win$i"
	done
	snap win3
	sleep 1
	aux_off
	f1=$(aux_cpu_stat win0 total full)
	prev=$(aux_cpu_stat win0 total records)
	for ((i = 1; i <= 3; i++))
	do
		r=$(aux_cpu_stat "win$i" total records)
		f=$(aux_cpu_stat "win$i" total full)
		grow+=" +$((r - prev)) records (full $f)"
		[ "$r" -gt "$prev" ] || bad+=" window $i"
		prev=$r
	done
	compute_deltas win0 win3
	c2=${deltas[callback]}
	# back to the deltas of the whole phase
	compute_deltas before after

	aux_check_records
	[ "${ad[full]:-0}" -gt 0 ] && [ "${deltas[aux_trunc]}" -gt 0 ]
	verdict full $? \
		"the buffer filled up: PMU Δfull ${ad[full]} (Δflag_truncated ${ad[flag_truncated]:-0}), DAMON Δaux_trunc ${deltas[aux_trunc]}" \
		"PMU Δfull ${ad[full]:-0} (Δflag_truncated ${ad[flag_truncated]:-0}), DAMON Δaux_trunc ${deltas[aux_trunc]}: no full buffer, or DAMON did not see it"
	[ "$f1" -gt "$(aux_cpu_stat before total full)" ] && [ -z "$bad" ] &&
		[ "$c2" -gt 0 ]
	verdict resumed $? \
		"after the first full buffer (full $f1), in each 3 s window:$grow; DAMON counted $c2 callbacks meanwhile" \
		"after the first full buffer (full $f1), in each 3 s window:$grow; Δcallback $c2: no record written in$bad, the PMU was not started again"
	aux_check_exact
	aux_check_source
	aux_check_flags "" any
	aux_result aux+burst128
}

# run_aux_inject OPS: PARTIAL, then COLLISION on the next commit of every
# event
run_aux_inject()
{
	local ops=$1

	hot_regions=- cold_accessed=-
	aux_setup "$ops" $((dta_cx | dta_commit_each | 8 << dta_burst_shift))
	aux_on
	aux_inject_each partial collision
	aux_off
	aux_check_records
	aux_check_exact
	aux_check_source
	[ "${ad[flag_partial]:-0}" -ge 1 ] &&
		[ "${ad[flag_collision]:-0}" -ge 1 ] &&
		[ "${ad[flag_truncated]:-0}" -eq 0 ]
	verdict injected $? \
		"the PMU flagged ${ad[flag_partial]} commits PARTIAL, ${ad[flag_collision]} COLLISION" \
		"the PMU flagged ${ad[flag_partial]:-0} commits PARTIAL, ${ad[flag_collision]:-0} COLLISION, ${ad[flag_truncated]:-0} TRUNCATED"
	[ "${deltas[aux_partial]}" -ge 1 ] && [ "${deltas[aux_collide]}" -ge 1 ] &&
		[ "${deltas[aux_trunc]}" -eq 0 ]
	verdict seen $? \
		"DAMON Δaux_partial ${deltas[aux_partial]} >= 1, Δaux_collide ${deltas[aux_collide]} >= 1" \
		"DAMON Δaux_partial ${deltas[aux_partial]}, Δaux_collide ${deltas[aux_collide]}, Δaux_trunc ${deltas[aux_trunc]}"
	aux_check_flags "" any
	aux_result aux+inject
}

# run_aux_padread OPS: 'pad_read' written to damon_test_aux/inject 5 times, a
# second apart, while the event runs: each time the PMU pads its buffer so
# that the drain's next read holds padding and the first 3 bytes of a
# record, with the rest of the record and more after it.  Every record is
# decoded once, none is malformed and no byte is skipped.
run_aux_padread()
{
	local ops=$1 bits

	hot_regions=- cold_accessed=-
	bits=$((dta_commit_each | 8 << dta_burst_shift))
	[ "$ops" = vaddr ] && bits=$((bits | dta_cx))
	aux_setup "$ops" "$bits"
	aux_on
	aux_inject_each pad_read pad_read pad_read pad_read pad_read
	aux_off
	aux_check_records
	aux_check_exact
	aux_check_source
	[ "${ad[pad_read]:-0}" -ge 1 ]
	verdict padded $? \
		"the PMU padded ${ad[pad_read]} times up to 3 bytes before the end of the drain's next read (${ad[pad_read_miss]:-0} moved by a limit)" \
		"the PMU padded ${ad[pad_read]:-0} times up to a read's end (${ad[pad_read_miss]:-0} moved by a limit): nothing was tested"
	aux_check_flags "" clean
	aux_result aux+padread
}

# run_aux_hotplug OPS: CPU hp_cpu (the workload's, 1 with 2 CPUs) offline and
# online again, 3 times, while the event runs; the workload is pinned back
# to it after each online.  The records that the CPU's PMU committed before
# it went offline are drained when the kdamond releases the CPU's event.
run_aux_hotplug()
{
	local ops=$1 hp_cpu=$wl_cpu online i r0 r1 bad=""

	chk=setup
	online=$cpu_sysfs/cpu$hp_cpu/online
	if [ "$ncpus" -lt 2 ] || [ -z "$hp_cpu" ] || [ "$hp_cpu" = 0 ] ||
		[ ! -w "$online" ]
	then
		skip "needs 2 CPUs, taskset and $online"
		return
	fi
	hot_regions=- cold_accessed=-
	aux_setup "$ops" $((dta_cx | dta_commit_each | 8 << dta_burst_shift))
	aux_on
	sleep 2
	for ((i = 1; i <= 3; i++))
	do
		aux_snap down$i
		echo "$hp_cpu" >> "$tmpdir/offlined"
		try_write "$online" 0 ||
			abort "offlining cpu $hp_cpu: $write_err"
		sleep 1
		try_write "$online" 1 ||
			abort "onlining cpu $hp_cpu: $write_err"
		sed -i "/^$hp_cpu\$/d" "$tmpdir/offlined"
		taskset -pc "$hp_cpu" "$wl_pid" > /dev/null ||
			abort "cannot pin the workload $wl_pid to cpu $hp_cpu again"
		aux_snap up$i
		sleep 2
	done
	aux_snap down4
	say "phase: 3 offline/online cycles of cpu $hp_cpu done ($((SECONDS - hc_t0)) s after 'on')"
	aux_off
	aux_check_records
	aux_check_exact
	aux_check_source
	aux_check_flags "" clean
	# the kdamond opens an event on the CPU at its next sampling interval
	for ((i = 1; i <= 3; i++))
	do
		r0=$(aux_cpu_stat "up$i" "$hp_cpu" records)
		r1=$(aux_cpu_stat "down$((i + 1))" "$hp_cpu" records)
		[ "$r1" -gt "$r0" ] || bad+=" cycle $i: $r0 -> $r1"
	done
	[ -z "$bad" ]
	verdict reopened $? \
		"after each online, the PMU of cpu $hp_cpu wrote records again (DAMON opened an event there)" \
		"no record on cpu $hp_cpu after an online:$bad"
	aux_result aux+hotplug
}

# aux_window NAME MIN: a window of the fair runs, then the snapshot NAME
# (aux_snap).  It lasts MIN seconds and, beyond that, until the PMU has
# written 3 pages of records per online CPU since the last snapshot (LAST),
# padding not counted: with the buffers full, that is what the drain freed,
# and a drain fair to every CPU freed at least a page of each, so that each
# event ran again.  (A PMU pads the room it cannot use when it begins, so
# padding grows with the stops, not with what the drain frees.)  Measured in
# what the drain did, not in seconds, the windows do not depend on how fast
# the guest runs: on 32 vCPUs, with the host's 2 CPUs busy, the drain freed
# 21 pages in 6 s instead of 68.  At most 120 s more: a drain that stalled
# ends the window, and the check of each CPU says so.
aux_window()
{
	local name=$1 min=$2 want b0 b t0=$SECONDS page
	page=$(getconf PAGESIZE)
	want=$((3 * page * $(online_cpus | wc -l)))
	b0=$(($(aux_cpu_stat "$aux_last" total bytes) -
		$(aux_cpu_stat "$aux_last" total pad_bytes)))
	sleep "$min"
	while :
	do
		aux_snap "$name"
		b=$(($(aux_cpu_stat "$name" total bytes) -
			$(aux_cpu_stat "$name" total pad_bytes)))
		[ $((b - b0)) -ge "$want" ] && break
		[ $((SECONDS - t0)) -ge $((min + 120)) ] && break
		sleep 1
	done
	aux_win_len+=" $((SECONDS - t0))"
	aux_last=$name
}

# run_aux_fair OPS [ORDER]: the AUX test PMU on every online CPU, each with a
# thread of the workload (its "spread" mode) that it samples, 128 records
# per expiry, committed at each: more than the drain can take in an interval
# with 4-entry report rings (ORDER 2, damon_core.report_ring_order while the
# context starts).  Every CPU's buffer must be read in every window
# (aux_window: 3 s or more, with order 2 on more than 8 CPUs 3 s per 16
# CPUs, and 3 pages written per CPU; the first window after 2 s and 1 s more
# per 8 CPUs), whatever the other CPUs write: a CPU whose buffer is never
# read fills it, perf core disables its event, and the PMU writes no record
# there again.
# With order 2 a CPU's share is a few records per interval, and the PMU
# writes again only once a page of its buffer is free: DAMON enables the
# event when its drains freed a page (it wrote 1 to 6 records per 12 s
# window on 8 vCPUs while DAMON enabled it at every drain, about 1,000 since).
run_aux_fair()
{
	local ops=$1 order=${2:-} cpu cpus i r0 r1 bad="" grow orig win=3 rec
	local ran runs
	# every CPU fills its buffer in the first second, and the drain frees
	# a page of each in turn before the PMU writes there again: 32 vCPUs
	# with report rings of 4 entries took more than 3 s for that (each
	# drain takes one record of each CPU)
	local settle=$((2 + ${ncpus:-1} / 8))
	# and with order 2 each drain takes one record of each of 32 CPUs, while
	# the PMU begins again only in a page (64 records) of room, two when the
	# first is cut by a page boundary: on 32 vCPUs a CPU waited up to 4 s
	if [ -n "$order" ] && [ "${ncpus:-1}" -gt 8 ]
	then
		win=$((3 * ncpus / 16))
	fi

	chk=setup
	cpus=$(online_cpus)
	if [ "$(echo "$cpus" | wc -l)" -lt 2 ]
	then
		skip "needs 2 online CPUs"
		return
	fi
	if [ -n "$order" ] && [ ! -w "$ring_order_param" ]
	then
		skip "no report_ring_order knob ($ring_order_param)"
		return
	fi
	hot_regions=- cold_accessed=-
	if [ -n "${wl_pid:-}" ] && kill -0 "$wl_pid" 2> /dev/null
	then
		kill "$wl_pid"
		wait "$wl_pid" 2> /dev/null
	fi
	start_workload "" "$spread_mode"
	aux_setup "$ops" $((dta_cx | dta_commit_each | 128 << dta_burst_shift))
	if [ -n "$order" ]
	then
		rd orig "$ring_order_param"
		echo "$orig" > "$tmpdir/ring_order.orig"
		wr "$ring_order_param" "$order"
	fi
	aux_on
	if [ -n "$order" ]
	then
		wr "$ring_order_param" "$orig"
		rm -f "$tmpdir/ring_order.orig"
	fi
	say "phase: ${order:+report_ring_order $order, }the PMU on cpus $(echo $cpus), windows of $win s or more after $settle s or more"
	aux_snap on
	aux_last=on aux_win_len=""
	aux_window win0 "$settle"
	for ((i = 1; i <= 3; i++))
	do
		aux_window "win$i" "$win"
	done
	say "the settling and the windows took (s):$aux_win_len"
	aux_off
	spread_stop
	# With the workload's threads busy all the time, every expiry of the
	# PMU's timer on every CPU writes records of them, unless the buffer is
	# full and the event stopped.  With threads busy a few percent of the
	# time (spread_mode, beyond 4 vCPUs), most expiries find no thread of
	# the workload and write nothing: then each window needs expiries (the
	# event ran: records or expiries skipped for the task), and each CPU
	# records over the three.
	ran=records
	[ "$spread_mode" = spread ] ||
		ran=records+skip_mode+skip_task+skip_tgid+skip_unmapped
	while read -r -a rec
	do
		cpu=${rec[0]} grow="" runs=""
		for ((i = 1; i <= 3; i++))
		do
			r0=${rec[i]} r1=${rec[i + 1]}
			grow+=" +$((r1 - r0))"
			[ "$ran" = records ] && { [ "$r1" -gt "$r0" ] ||
				bad+=" cpu $cpu window $i (${r0} -> ${r1});"; }
		done
		if [ "$ran" != records ]
		then
			for ((i = 1; i <= 3; i++))
			do
				r0=${rec[i + 5]} r1=${rec[i + 6]}
				runs+=" +$((r1 - r0))"
				[ "$r1" -gt "$r0" ] || bad+=" cpu $cpu window $i (the event did not run);"
			done
			[ "${rec[4]}" -gt "${rec[1]}" ] || bad+=" cpu $cpu (no record in any window);"
			runs=", records and skipped ones:$runs"
		fi
		say "cpu $cpu: records in each window:$grow$runs (full ${rec[5]})"
	done < <(paste -d ' ' \
		<(per_cpu_series aux records "$(echo $cpus)" win0 win1 win2 win3) \
		<(per_cpu_series aux full "$(echo $cpus)" win3 | cut -d ' ' -f 2) \
		<(per_cpu_series aux "$ran" "$(echo $cpus)" win0 win1 win2 win3 | cut -d ' ' -f 2-))
	aux_check_records
	if [ -n "$bad" ]
	then
		# what perf_stats and the PMU said of the CPUs that stopped
		for cpu in $(grep -o 'cpu [0-9]* window' <<< "$bad" | cut -d ' ' -f 2 | sort -un)
		do
			say "cpu $cpu at the end: $(grep "^$(printf 'CPU%02d:' "$cpu")" "$tmpdir/stats.win3")"
			say "cpu $cpu at the end: $(grep "^cpu=$cpu " "$tmpdir/aux.win3")"
		done
	fi
	[ -z "$bad" ]
	verdict fair $? \
		"the PMU ran and wrote on every cpu in every window: DAMON read each buffer" \
		"not in:$bad the buffer was not read, or its PMU not started again"
	aux_check_exact
	aux_check_source
	aux_check_flags "" any
	aux_result "aux+fair${order:+-order$order}"
}

# run_aux_reenable OPS: the window between perf core's TRUNCATED flag and the
# end of the PMU's interrupt.  The workload's CPU fills its buffer (4-entry
# report rings: a drain budget of 32 records an interval), and "slow_full"
# written to damon_test_aux/inject holds that CPU in the PMU's interrupt for
# 50 ms at its next full buffer, after the flag: the kdamond, pinned to
# another CPU, reads the flag and makes room while the PMU is still
# stopping.  The PMU must run again.
run_aux_reenable()
{
	local ops=$1 kd_cpu kd_pid orig s0 s1 r0 r1

	chk=setup
	if [ "$ncpus" -lt 2 ] || [ -z "$wl_cpu" ] || [ ! -w "$ring_order_param" ]
	then
		skip "needs 2 CPUs, taskset and $ring_order_param"
		return
	fi
	kd_cpu=$(online_cpus | grep -vx "$wl_cpu" | head -n 1)
	hot_regions=- cold_accessed=-
	aux_setup "$ops" $((dta_cx | dta_commit_each | 128 << dta_burst_shift))
	rd orig "$ring_order_param"
	echo "$orig" > "$tmpdir/ring_order.orig"
	wr "$ring_order_param" 2
	aux_on
	wr "$ring_order_param" "$orig"
	rm -f "$tmpdir/ring_order.orig"
	rd kd_pid "$kdamonds_dir/0/pid"
	taskset -pc "$kd_cpu" "$kd_pid" > /dev/null ||
		abort "cannot pin the kdamond $kd_pid to cpu $kd_cpu"
	say "phase: kdamond $kd_pid on cpu $kd_cpu, the workload on cpu $wl_cpu, report_ring_order 2"
	sleep 1
	aux_snap inject
	try_write "$dta_inject" slow_full ||
		abort "writing slow_full to $dta_inject: $write_err"
	sleep 2
	aux_snap win0
	sleep 3
	aux_snap win1
	aux_off
	s0=$(aux_cpu_stat inject "$wl_cpu" slow_full)
	s1=$(aux_cpu_stat win0 "$wl_cpu" slow_full)
	r0=$(aux_cpu_stat win0 "$wl_cpu" records)
	r1=$(aux_cpu_stat win1 "$wl_cpu" records)
	aux_check_records
	[ "$s1" -gt "$s0" ]
	verdict held $? \
		"the PMU held cpu $wl_cpu at a full buffer ($((s1 - s0)) time)" \
		"no full buffer held (slow_full $s0 -> $s1): the buffer never filled"
	[ "$r1" -gt "$r0" ]
	verdict reenabled $? \
		"after the held full buffer, the PMU wrote $((r1 - r0)) records on cpu $wl_cpu in 3 s" \
		"no record on cpu $wl_cpu in the 3 s after the held full buffer ($r0 -> $r1): the PMU stayed stopped"
	aux_check_exact
	aux_check_source
	aux_check_flags "" any
	aux_result aux+reenable
}

# run_aux_format: an event of damon_test_trace, the AUX test PMU's twin that
# writes the same records but does not say that they are Arm SPE's, as
# Intel PT, CoreSight or hisi_ptt write AUX buffers of their own formats:
# DAMON decodes only SPE records, so 'on' must fail with EOPNOTSUPP and a
# warning that names the PMU, instead of parsing a trace as SPE records.
# After the kmsg check, as it warns on purpose.  Runs in a subshell.
run_aux_format()
{
	local dir=/sys/bus/event_source/devices/damon_test_trace type

	chk=setup
	if [ ! -r "$dir/type" ]
	then
		skip "no damon_test_trace PMU (an older AUX test PMU)"
		return
	fi
	read -r type < "$dir/type"
	reset_kdamonds 1
	setup_ctx 0 1000 100000 0 $$
	write_attrs "$preps/0" type "$type" config "$dta_cx" sample_period 1000 \
		precise_ip 0 wakeup_events 0 || abort "$write_msg"
	check_on_refused damon_test_trace "the damon_test_trace PMU writes an AUX buffer"
}

# run_aux_nocontext: an event of damon_test_aux without the cx bit, whose
# records have no Context packet, as Arm SPE's without
# CONFIG_PID_IN_CONTEXTIDR or for a task that may not see the kernel: a
# vaddr context could match no record to its target, so 'on' must fail
# with EOPNOTSUPP and a warning that names the PMU (aux-paddr runs without
# Context packets).  After the kmsg check, as it warns on purpose.  Runs in
# a subshell.
run_aux_nocontext()
{
	local type

	chk=setup
	read -r type < "$aux_pmu_dir/type" || abort "no $aux_pmu_dir/type"
	reset_kdamonds 1
	setup_ctx 0 1000 100000 0 $$
	write_attrs "$preps/0" type "$type" config "$dta_commit_each" \
		sample_period 1000 precise_ip 0 wakeup_events 0 || abort "$write_msg"
	check_on_refused damon_test_aux "the damon_test_aux PMU writes no Context packets"
}

# run_aux_revoke: damon_test_aux unregistered while the kdamond samples
# with it ("unregister" written to damon_test_aux/inject), as unloading a
# PMU driver module or unbinding the Arm SPE driver does:
# perf_pmu_unregister() revokes the events, which DAMON still holds, and
# clears their PMU pointer.  The kdamond must keep running through its
# drains of the revoked events and stop cleanly.  perf core must have
# freed the PMU's data of the kernel-owned buffers (free_aux()) inside the
# unregister, as a PMU module may be unloaded right after: the PMU counts
# a later free_aux() (late_free, which the "off" would make when DAMON
# detaches and releases the events).  The PMU is registered again (a new
# type) for the runs after.  After the kmsg check.  Runs in a subshell.
run_aux_revoke()
{
	local st late

	chk=setup
	read -r aux_type < "$aux_pmu_dir/type" || abort "no $aux_pmu_dir/type"
	hot_regions=- cold_accessed=-
	aux_setup vaddr $((dta_cx | dta_commit_each | 8 << dta_burst_shift))
	aux_on
	sleep 2
	chk=unregister
	try_write "$dta_inject" unregister ||
		abort "writing unregister to $dta_inject: $write_err"
	[ ! -e "$aux_pmu_dir" ]
	verdict unregister $? "damon_test_aux is unregistered" \
		"$aux_pmu_dir still exists after unregister"
	sleep 2
	st=$(kdamond_state 0)
	[ "$st" = on ]
	verdict running $? \
		"the kdamond runs 2 s (400 sampling intervals) after its PMU went away" \
		"the kdamond is '$st' 2 s after its PMU went away"
	chk=off
	kdamond_off 0
	rd st "$kdamonds_dir/0/state"
	[ "$st" = off ]
	verdict off $? "'off' released the revoked events" "the kdamond is '$st' after 'off'"
	aux_snap revoked
	late=$(aux_cpu_stat revoked total late_free)
	[ "$late" = 0 ]
	verdict late_free $? \
		"no free_aux() of the PMU after its unregister returned: perf core freed its data of the revoked events' buffers then" \
		"$late free_aux() calls after the PMU's unregister returned: into a module PMU's code that may be gone"
	chk=register
	try_write "$dta_inject" register ||
		abort "writing register to $dta_inject: $write_err"
	[ -r "$aux_pmu_dir/type" ]
	verdict register $? "damon_test_aux registered again, type $(cat "$aux_pmu_dir/type" 2> /dev/null)" \
		"no $aux_pmu_dir/type after register"
}

# kdamond_ns PID: the nanoseconds that task PID ran (schedstat), guest
# instructions under VM_ICOUNT=1
kdamond_ns()
{
	local ns

	read -r ns _ < "/proc/$1/schedstat" || ns=0
	echo "$ns"
}

# run_aux_user: a measurement for "why not drain the AUX buffers in user
# space?", not a gate (only with --only aux-user; VM_ICOUNT=1 makes the
# nanoseconds instructions).  The same event (vaddr, records every tick in
# bursts of 16 on the workload's CPU, committed at the watermark as SPE
# does) for $secs s each: drained by the kdamond; by the kdamond with
# records of another task, which the PMU skips (the kdamond's cost without
# records); and by testpmu/auxread.c, a user-space reader that does what
# the kdamond does as user space must (poll for the watermark's wakeups,
# PERF_RECORD_AUX for TRUNCATED, an ioctl to enable the event again,
# DAMON's own decoder, one write() of the addresses per wakeup).  Prints
# the cost per record of each; checks only that each phase saw records.
run_aux_user()
{
	local auxread=$selftests/auxread kd_pid ns0 ns1 k_ns idle_ns
	local k_rec u_rec line cfg burst=$((16 << dta_burst_shift))
	local -A au=()

	chk=setup
	if [ ! -x "$auxread" ]
	then
		skip "no $auxread (scripts/testpmu.sh builds it)"
		return
	fi
	hot_regions=- cold_accessed=-
	aux_setup vaddr $((dta_cx | burst))
	aux_on
	rd kd_pid "$kdamonds_dir/0/pid"
	sleep 1
	aux_snap k0
	ns0=$(kdamond_ns "$kd_pid")
	sleep "$secs"
	ns1=$(kdamond_ns "$kd_pid")
	aux_snap k1
	aux_off kdamond
	k_ns=$((ns1 - ns0))
	k_rec=$(($(aux_cpu_stat k1 total records) - $(aux_cpu_stat k0 total records)))

	# the records of init only: the PMU writes none of the workload's
	cfg=$(((dta_cx | burst) | 1 << 32))
	aux_setup vaddr $((dta_cx | burst))
	write_attrs "$preps/0" config "$cfg" || abort "$write_msg"
	aux_on
	rd kd_pid "$kdamonds_dir/0/pid"
	sleep 1
	aux_snap i0
	ns0=$(kdamond_ns "$kd_pid")
	sleep "$secs"
	ns1=$(kdamond_ns "$kd_pid")
	aux_snap i1
	aux_off idle
	idle_ns=$((ns1 - ns0))

	chk=user
	aux_snap u0
	line=$("$auxread" "$aux_type" "$aux_cfg" "$wl_hot_start" \
		$((wl_hot_end - wl_hot_start)) "$aux_period" "$secs") ||
		abort "auxread failed: $line"
	aux_snap u1
	say "$line"
	kv_into au < <(echo "${line#auxread }" | tr ' ' '\n' | tr '=' ' ')
	u_rec=${au[records]:-0}
	say "PMU records: kdamond phase $k_rec, idle phase" \
		"$(($(aux_cpu_stat i1 total records) - $(aux_cpu_stat i0 total records))), user phase" \
		"$(($(aux_cpu_stat u1 total records) - $(aux_cpu_stat u0 total records)))"
	[ "$k_rec" -gt 0 ] && [ "$u_rec" -gt 0 ]
	verdict measured $? \
		"kdamond: $k_ns ns for $k_rec records, $idle_ns ns with none: $(((k_ns - idle_ns) / k_rec)) ns a record over its idle cost, $((k_ns / k_rec)) in all; user space: ${au[cpu_ns]} ns for $u_rec records, $((${au[cpu_ns]} / u_rec)) ns a record, ${au[wakeups]} wakeups, ${au[polls]} polls, ${au[writes]} writes, ${au[enables]} enables, ${au[copied]} bytes copied" \
		"no records to measure: kdamond phase $k_rec, user phase $u_rec"
	echo "RESULT-USER kdamond_ns=$k_ns kdamond_idle_ns=$idle_ns kdamond_records=$k_rec ${line#auxread }"
}

# run_aux NAME: the run aux-NAME (aux-OPS, or aux-SHAPE-OPS: OPS vaddr or
# paddr).  Runs in a subshell.
run_aux()
{
	read -r aux_type < "$aux_pmu_dir/type" || abort "no $aux_pmu_dir/type"
	case "$1" in
	vaddr|paddr) run_aux_ops "$1";;
	shapes-vaddr|shapes-paddr) run_aux_shapes "${1#*-}";;
	full-vaddr|full-paddr) run_aux_full "${1#*-}";;
	inject-vaddr|inject-paddr) run_aux_inject "${1#*-}";;
	padread-vaddr|padread-paddr) run_aux_padread "${1#*-}";;
	hotplug-vaddr|hotplug-paddr) run_aux_hotplug "${1#*-}";;
	fair-vaddr|fair-paddr) run_aux_fair "${1#*-}";;
	fair4-vaddr|fair4-paddr) run_aux_fair "${1#*-}" 2;;
	reenable-vaddr|reenable-paddr) run_aux_reenable "${1#*-}";;
	user) run_aux_user;;
	*) abort "no run aux-$1";;
	esac
}
