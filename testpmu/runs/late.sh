# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2154,SC2034 # the globals of testpmu-guest.sh
#
# testpmu/runs/late.sh: the late-* runs of testpmu-guest.sh (run_late,
# run_late_control): an overflow handler held open across a commit, a stop,
# and the negative control.  Sourced by testpmu-guest.sh, never run.

# late_prepare FILE...: sets late_cpu (the last online CPU) and other_cpu (the
# first), and pins this script, and what it forks, to other_cpu, which the
# writer spinning on late_cpu does not block.  Returns 1 after a skip unless
# there are 2 CPUs, taskset and the writable FILEs.
late_prepare()
{
	local f

	chk=setup
	late_cpu=$(online_cpus | tail -n 1)
	other_cpu=$(online_cpus | head -n 1)
	if [ "$ncpus" -lt 2 ] || ! command -v taskset > /dev/null
	then
		skip "needs 2 CPUs and taskset ($ncpus CPUs)"
		return 1
	fi
	for f in "$@"
	do
		[ -w "$f" ] || { skip "no $f (an older test PMU)"; return 1; }
	done
	taskset -pc "$other_cpu" "$BASHPID" > /dev/null ||
		abort "cannot pin the script to cpu $other_cpu"
}

# late_deltas: the test PMU's deltas (dtp_deltas), and dl, dd and dD: Δlate,
# Δlate_del and Δlate_destroy
late_deltas()
{
	dtp_deltas
	dl=${pd[late]:-0}
	dd=${pd[late_del]:-0}
	dD=${pd[late_destroy]:-0}
}

# dtp_total KEY SNAP: the total of the test PMU's counter KEY in the stats
# snapshot SNAP (dtp_snap SNAP)
dtp_total()
{
	awk -v key="$1" '$1 == "cpu=total" {
		for (i = 2; i <= NF; i++) {
			split($i, kv, "=")
			if (kv[1] == key)
				print kv[2]
		}
	}' "$tmpdir/dtp.$2"
}

# run_late HOW: an overflow handed over late while 'commit' (HOW commit) or
# 'off' (HOW off) closes the event (see the header).  Runs in a subshell.
run_late()
{
	local how=$1 ev late_cpu other_cpu late_pid late_rc=0 t0 st
	local dl dd dD dc dz dr

	late_prepare "$dtp_late" || return
	start_workload "$other_cpu" keep
	reset_kdamonds 1
	setup_ctx 0 1000 100000 0 "$wl_pid"
	ev=$preps	# setup_ctx's probe 0 preps
	write_attrs "$ev/0" type "$pmu_type" config 3 precise_ip 0 \
		wakeup_events 0 || abort "$write_msg"
	snap before
	dtp_snap before

	chk=on
	kdamond_on 0 || exit 1
	taskset -pc "$other_cpu" "$kd_pid" > /dev/null ||
		abort "cannot pin the kdamond $kd_pid to cpu $other_cpu"
	sleep 1
	t0=$SECONDS
	taskset -c "$late_cpu" sh -c "echo $late_ms > $dtp_late" \
		2> "$tmpdir/late.err" &
	late_pid=$!
	# the writer is spinning on late_cpu by then
	sleep 1
	chk=$how
	case "$how" in
	commit)
		# no perf_event prep left: the commit closes the event
		write_attrs "$ev" nr_preps 0 || abort "$write_msg"
		try_write "$kdamonds_dir/0/state" commit ||
			fail "writing 'commit' failed: $write_err"
		;;
	off)
		kdamond_off 0
		;;
	esac
	# the late overflows handed over by the time the commit or stop returned
	dtp_snap returned
	dr=$(($(dtp_total late returned) - $(dtp_total late before)))
	wait "$late_pid" || late_rc=$?
	say "the late writer returned $late_rc after $((SECONDS - t0)) s" \
		"$(head -c 200 "$tmpdir/late.err")"
	st=$(kdamond_state 0)
	[ "$how" = off ] || kdamond_off 0
	snap after
	dtp_snap after

	late_deltas
	say "PMU deltas: late=$dl late_del=$dd late_destroy=$dD" \
		"adds=${pd[adds]:-?} dels=${pd[dels]:-?}"
	chk=late
	[ "$late_rc" -eq 0 ] && [ "$dl" -eq 1 ]
	verdict late $? "one overflow handed over late" \
		"Δlate $dl, the writer returned $late_rc"
	[ "$dd" -eq 1 ]
	verdict deleted $? \
		"the event was deleted from cpu $late_cpu (an IPI) inside the window" \
		"Δlate_del $dd: the $how did not delete the event within $late_ms ms"
	# The kdamond releases the events itself, so perf may destroy the event
	# inside the window (Δlate_destroy 1), but DAMON must wait for the
	# handlers (synchronize_rcu()) before it frees the handler's context:
	# the late overflow, which the test PMU hands over DTP_LATE_HOLD_MS
	# after the destruction, is in before the commit or stop returns.
	[ "$dr" -eq 1 ]
	verdict lifetime $? \
		"the $how returned after the late handler (Δlate $dr then; Δlate_destroy $dD)" \
		"Δlate $dr when the $how returned (Δlate_destroy $dD): DAMON freed the context of a handler that could still run"
	chk=laws
	check_laws before after
	dc=${deltas[callback]}
	dz=${deltas[addr_zero]}
	[ "$dc" -eq "$dl" ] && [ "$dz" -eq "$dl" ]
	verdict callback $? "Δcallback $dc == Δaddr_zero $dz == Δlate $dl" \
		"Δcallback $dc, Δaddr_zero $dz, Δlate $dl"
	if [ "$how" = commit ]
	then
		[ "$st" = on ]
		verdict state $? "the kdamond runs after the commit" \
			"the kdamond is '$st' after the commit"
	fi
	echo "RESULT shape=late ops=$how generated=$dl callback=$dc" \
		"valid=${deltas[valid]} matched=${deltas[match]}" \
		"updated=${deltas[update]} inv_phys=${deltas[inv_phys]}" \
		"xlate_fail=${deltas[xlate_fail]} hot_regions=- cold_accessed=-"
}

# run_late_control: the window of run_late on a kernel counter that its
# owner releases from another CPU without waiting for the handlers:
# Δlate_destroy must be 1.  Runs in a subshell.
run_late_control()
{
	local late_cpu other_cpu late_pid ctl_pid late_rc=0 ctl_rc=0 dl dd dD dr
	local ctl=$debugfs/damon_test_pmu/late_control

	late_prepare "$dtp_late" "$ctl" || return
	dtp_snap before
	sh -c "echo '$late_cpu 2000' > $ctl" 2> "$tmpdir/ctl.err" &
	ctl_pid=$!
	sleep 0.5
	taskset -c "$late_cpu" sh -c "echo $late_ms > $dtp_late" \
		2> "$tmpdir/late.err" &
	late_pid=$!
	wait "$ctl_pid" || ctl_rc=$?
	# the late overflows handed over by the time the release returned
	dtp_snap returned
	dr=$(($(dtp_total late returned) - $(dtp_total late before)))
	wait "$late_pid" || late_rc=$?
	dtp_snap after
	late_deltas
	say "PMU deltas: late=$dl late_del=$dd late_destroy=$dD" \
		"adds=${pd[adds]:-?} dels=${pd[dels]:-?}; writers returned" \
		"$ctl_rc (control) and $late_rc (late)" \
		"$(cat "$tmpdir/ctl.err" "$tmpdir/late.err" | head -c 200)"
	[ "$ctl_rc" -eq 0 ] && [ "$late_rc" -eq 0 ] && [ "$dl" -eq 1 ] &&
		[ "$dd" -eq 1 ] && [ "$dD" -eq 1 ] && [ "$dr" -eq 0 ]
	verdict lifetime-seen $? \
		"the control counter was deleted and destroyed inside the window, and its release returned before the late handler (Δlate $dr then): the lifetime check sees a release that does not wait" \
		"Δlate $dl, Δlate_del $dd, Δlate_destroy $dD, Δlate $dr when the release returned (want 1, 1, 1, 0): the lifetime check might not see a release that does not wait"
}
