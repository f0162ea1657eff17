#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# testpmu-guest.sh: runs in the test guest, as root, on a kernel with the
# harness-only test sampling PMU "damon_test" (testpmu/0001-damon-test-pmu.patch,
# testpmu/README.md).  DAMON monitors a workload (guest/workload.c: a hot
# buffer written continuously, a cold buffer touched once) with one perf
# event per run, and every stage from the PMU's records to DAMON's regions is
# accounted for:
#
#   SHAPE-OPS  SHAPE ibs (config shape 0, sample_period 1008: a multiple of
#              16), pebs (1) or pebs_large (2, precise_ip 1 for both pebs
#              shapes, wakeup_events 0: the attr of issue #14), the range
#              config1/config2 = the hot buffer and the tgid filter (config
#              bits 32-63) = the workload; or page_faults, the software
#              page-faults event (type 1, config 2, period 1, the workload
#              refaulting its hot buffer): the reference path.  OPS vaddr
#              (the workload's pid) or paddr (sample_phys_addr; the target's
#              regions are the 2 MiB blocks of the workload's frames, which
#              transparent huge pages keep in place (thp_stable), or for
#              page_faults, whose hot frames change, the biggest System
#              RAM).  Checks, on deltas read with DAMON off (the counters are
#              exact only quiescent):
#     records    the PMU made records (test PMU shapes)
#     pmu-laws   PMU: Δoverflows == Δ(skip_* + records)
#     handover   Δto_output == 0 and pending == 0 after the stop: every record
#                went to perf_event_overflow(), none to perf_event_output()
#                (lost for a kernel counter) or left in a batch
#     lost       Δrecords == Δcallback: nothing lost before DAMON's handler
#     laws       perf_stats: callback == sum of the reasons, valid == enqueue
#                + overflow, enqueue == dequeue, dequeue == match + misses +
#                discarded, update <= match, and per CPU (lib/perf_stats.sh:
#                the rows a newer perf_stats adds are summed too)
#     events     while DAMON runs, the PMU's events file lists an event per
#                online CPU and none with large=1 (DAMON's attr keeps large
#                PEBS off); none is left after the stop
#     hardirq    every damon_perf_sample traced has context=hardirq, and
#                as many were traced as perf_stats counts callbacks
#     samples    page_faults: callbacks came
#     hotcold    vaddr: a tried region (stat scheme) of the hot buffer has
#                nr_accesses > 0, and the cold buffer's regions have none
#                (sysfs_perf_preps.py's logic).  paddr: the frames of the
#                hot and cold buffers from /proc/PID/pagemap; a region has
#                nr_accesses > 0 and every such region holds a hot frame
#                (page_faults: a region holding a hot frame has
#                nr_accesses > 0; the CPU-wide event also samples other
#                tasks' faults, anywhere in the target)
#   negative   pebs_large with force_large (config bit 4), vaddr: the loss
#              mechanism exists and this test sees it: large=1 in events,
#              Δto_output > 0 and Δcallback == Δto_overflow < Δrecords
#   late-HOW   the lifetime of an event's handler context against a
#              handler that runs late, as a software event's may: an IPI
#              can remove the event from its CPU between perf_sw_event()
#              finding it and calling its overflow handler.  The test PMU's
#              late shape (config 3) samples nothing by itself; the
#              debugfs file damon_test_pmu/late, written on the last CPU,
#              holds that window open (preemption disabled, interrupts on,
#              under rcu_read_lock()) until the event is deleted from the
#              CPU and then until it is destroyed, late_ms each at most,
#              and then calls perf_event_overflow() with an empty sample.
#              Meanwhile, from another CPU (this script and the kdamond are
#              pinned there), HOW = commit: 'commit' of no perf event, which
#              closes the running ones; HOW = off: 'off'.  Checks:
#     late       the late overflow was handed over (Δlate 1)
#     deleted    the event was deleted from the CPU before that (Δlate_del
#                1): the window really held the IPI
#     lifetime   the commit or stop returned only after the late overflow
#                was handed over: the kdamond releases the events itself,
#                so perf may destroy the event inside the window
#                (Δlate_destroy 1 is allowed; the test PMU then holds the
#                window 500 ms more), but DAMON waits for the handlers
#                (synchronize_rcu(), which the window holds back) before
#                it frees the handler's context.  A release that did not
#                wait would return before the handover, and the handler
#                would find its context freed: a use-after-free to KASAN
#                (TESTPMU_VARIANT=debug of scripts/testpmu.sh)
#     callback   DAMON's handler counted it: Δcallback == Δaddr_zero == 1,
#                and the perf_stats laws hold
#     state      commit: the kdamond still runs
#   late-control  the negative control of lifetime: the same window held
#              open on a kernel counter of the late shape that the test
#              PMU opens on the last CPU and, 2 s later, releases with
#              perf_event_release_kernel() from the writing task on
#              another CPU (damon_test_pmu/late_control), as an owner that
#              does not wait for the handlers would: the check must see
#              Δlate_del 1 and Δlate_destroy 1, and the release return
#              before the late overflow was handed over.  (perf record's own events
#              are no such control: unmapping its buffer waits for an RCU
#              grace period, which the window holds back.)
#   nointr     an event of damon_test_nointr, the test PMU's twin that
#              says it cannot interrupt (PERF_PMU_CAP_NO_INTERRUPT): 'on'
#              fails with EOPNOTSUPP, the kdamond stays off, and the kernel
#              log names the PMU (perf_event_open() refuses such sampling
#              events; a kernel counter of it would open and never sample).
#              After the kmsg check, as it warns on purpose
#   aux-format an event of damon_test_trace, the AUX test PMU's twin that
#              writes the same records but does not say that they are Arm
#              SPE's (as Intel PT or CoreSight write their own formats):
#              'on' fails with EOPNOTSUPP, the kdamond stays off, and the
#              kernel log names the PMU.  After the kmsg check
#   aux-OPS    an event of the AUX test PMU damon_test_aux
#              (testpmu/0002-damon-test-aux-pmu.patch: Arm SPE records written
#              into the kernel-owned AUX buffer of each of DAMON's per-CPU
#              events from an hrtimer; the kdamond drains them), config
#              commit_each | burst 8 | the tgid filter = the workload, | cx
#              (a Context packet with the pid) for vaddr, | pa (a physical
#              address packet, and no Context packet) for paddr,
#              config1/config2 = the hot buffer, sample_period
#              1000 us.  OPS vaddr or paddr (sample_phys_addr, the 2 MiB
#              blocks of the workload's frames, as SHAPE-paddr).  Checks,
#              on deltas read with DAMON off:
#     state      the kdamond still ran at the stop (every aux-* run and
#                phase)
#     records    the PMU wrote records
#     pmu-laws   PMU: Δrecords == Δ(loads + stores + branches)
#     lost       Δrecords == Δcallback: every record counted once (padding
#                is no record)
#     kinds      Δvalid == Δ(loads + stores), Δnot_ldst == Δbranches, no
#                malformed record and no aux_skip byte
#     source     Δenqueue > 0 and all of it from the perf_aux source
#                (Per-source enqueue)
#     flags      no AUX transaction flagged (PMU full, flag_*; DAMON aux_trunc,
#                aux_partial, aux_collide all 0)
#     laws       as above (lib/perf_stats.sh: not_ldst and malformed are
#                reasons; the aux_* rows are not)
#     hotcold    as above
#     context    every damon_perf_sample traced has context=process (the kdamond's
#                drain), as many as perf_stats counts callbacks
#     trace-cpu  per CPU, as many records traced with its cpu= as the PMU
#                wrote on it (the CPU whose PMU wrote a record)
#   aux-shapes-OPS  vaddr and paddr (as aux-OPS), two phases.  branch-pad: config branch (every fifth
#              record a branch) | pad (padding before each record): records,
#              pmu-laws, shape (branches and padding written), lost, kinds
#              (Δnot_ldst == Δbranches), source, flags, laws.  trunc: config
#              trunc (each commit ends with half a record, flagged PARTIAL):
#              records, pmu-laws, shape (half records and PARTIAL commits
#              written), lossy (Δmalformed > 0 and Δaux_partial > 0), flags
#              (DAMON counts no more flagged transactions than the PMU
#              made), laws
#   aux-full-OPS  vaddr and paddr, burst 128 and a sampling interval of 2 s: the 64 KiB
#              buffer fills up between two drains, and the PMU stops.
#              Checks: records, pmu-laws, full (PMU Δfull > 0
#              and DAMON Δaux_trunc > 0), resumed (in each of three 3 s
#              windows after the first full buffer, which each hold a drain,
#              the PMU wrote records, and callbacks grew: perf core
#              started the PMU again once the drain made room), lost (a full buffer
#              loses no record it holds), kinds, source, flags (DAMON
#              counts no more flagged transactions than the PMU made), laws
#   aux-inject-OPS  vaddr and paddr; 'partial', then 'collision' written to
#              damon_test_aux/inject while it runs.  Checks: records,
#              pmu-laws, lost, kinds, source, injected (the PMU flagged
#              commits PARTIAL and COLLISION, none TRUNCATED), seen
#              (Δaux_partial >= 1, Δaux_collide >= 1, Δaux_trunc 0), flags,
#              laws
#   aux-padread-vaddr  'pad_read' written to damon_test_aux/inject 5 times
#              while it runs: the PMU pads its buffer so that the drain's
#              next read is padding and the first 3 bytes of a record.
#              Checks: records, pmu-laws, lost (every record counted
#              once), kinds (no malformed data, no byte skipped), source,
#              padded (the PMU padded so at least once), flags, laws
#   aux-hotplug-OPS  vaddr and paddr; the workload's CPU (cpu 1 with 2 CPUs) offline and
#              online 3 times while the event runs, the workload pinned to
#              it again after each online.  Checks: state, records,
#              pmu-laws, lost (the records the CPU committed before going
#              offline are drained when the kdamond releases its event),
#              kinds, source, flags, reopened (after each online the CPU's
#              PMU writes records again: DAMON opened an event there), laws
#   aux-fair-OPS, aux-fair4-OPS  vaddr and paddr; the workload's "spread"
#              mode (a thread pinned on every online CPU), 128 records per
#              expiry on every CPU; aux-fair4 starts the context with
#              report_ring_order 2 (a drain budget of 32 records per
#              sampling interval).  Checks: records, pmu-laws, fair (every
#              CPU's PMU wrote records in each of three 3 s windows: DAMON
#              read every buffer and perf core started every PMU again; beyond 4
#              CPUs, whose workload threads are mostly asleep, every CPU's
#              event ran in each window and wrote records over the three,
#              and aux-fair4 beyond 8 CPUs has windows of 3 s per 16 CPUs;
#              each window lasts, beyond its seconds, until the PMU wrote 3
#              pages of records (not padding) per CPU, what a fair drain
#              frees of each, at most
#              120 s more: measured in the drain's progress, not in guest
#              seconds, which host load stretches), lost, kinds, source,
#              flags, laws
#   aux-reenable-OPS  vaddr and paddr; report_ring_order 2, the kdamond
#              pinned off the workload's CPU, "slow_full" written to
#              damon_test_aux/inject: the PMU holds the workload's CPU for
#              50 ms at its next full buffer, after perf core flagged it
#              TRUNCATED, so that the kdamond reads the flag and makes room
#              while the PMU is still stopping.  Checks: records,
#              pmu-laws, held (the PMU did hold a full buffer), reenabled
#              (records on that CPU in the 3 s after: the PMU was started
#              again), lost, kinds, source, flags, laws
#   aux-user   a measurement, run only when --only names it (best with
#              VM_ICOUNT=1 and TESTPMU_CPUS=1: a thread's nanoseconds are
#              then its instructions): the same event for --secs each
#              drained by the kdamond, by the kdamond with no records, and
#              by testpmu/auxread.c, a user-space reader on DAMON's decoder.
#              Prints the cost per record of each (RESULT-USER).  Checks:
#              the laws of both kdamond phases, measured (records in each)
#   aux-nocontext  an event of damon_test_aux without the cx bit (records
#              without a Context packet, as Arm SPE's without
#              CONFIG_PID_IN_CONTEXTIDR) in a vaddr context: 'on' fails with
#              EOPNOTSUPP, the kdamond stays off, and the kernel log names
#              the PMU.  After the kmsg check (aux-paddr has no Context
#              packets and must run)
#   aux-revoke  damon_test_aux unregistered while the kdamond samples with
#              it (perf_pmu_unregister() revokes its events and clears their
#              PMU pointer, as unloading a PMU driver does).  Checks:
#              unregister, running (the kdamond still runs 2 s later),
#              off, late_free (no free_aux() of the PMU after its
#              unregister returned: perf core freed the PMU's data of the
#              kernel-owned buffers then, as a PMU module may go right
#              after), register (the PMU is back for the runs after).
#              After the kmsg check
#   cover-vaddr  the test PMU covers the even CPUs only (damon_test_pmu/cpus;
#              its event_init refuses the others with -ENOENT, as the PMUs
#              of one core type of a hybrid CPU or of one Arm cluster do),
#              the workload's spread mode, vaddr.  Checks: on (succeeds),
#              events (the PMU's events are on the even CPUs), cpus (per
#              CPU, perf_stats shows the even CPUs RUNNING with callbacks and
#              the odd ones UNCOVERED with none), kmsg-cover (the kernel log
#              lists the odd CPUs as not sampling), kmsg-clean, laws, lost
#   cover-hybrid  one probe with two perf_event preps, as for two core types:
#              the test PMU on the even CPUs, the AUX test PMU on the odd
#              ones.  Checks: on, events, cpus (every CPU RUNNING with
#              callbacks), aux-cpus (AUX records on the odd CPUs only),
#              sources (enqueued from perf_overflow and perf_aux), the
#              kernel log for each PMU, laws
#   fair-vaddr, fair4-vaddr  the test PMU on every online CPU, a thread of
#              the workload's spread mode on each; fair4 starts the context
#              with report_ring_order 2 (4 reports a ring).  Checks: on,
#              fair (every CPU's report ring was dequeued in each of three
#              3 s windows), laws, lost
#   cover-none  the test PMU covers no CPU: 'on' fails with ENOENT, the
#              kdamond stays off, and the kernel log says that no PMU
#              covers any online CPU.  After the kmsg check
#   obs-OPS    damon_perf_obs_test.sh --pmu damon_test --period 1008 (the
#              ibs shape, no range: records at the interrupted task's stack
#              pointer), vaddr and paddr: exits 0
#   obs-aux-OPS  damon_perf_obs_test.sh --pmu damon_test_aux --period 1000
#              --config (cx | commit_each | burst 8, | pa for paddr; no
#              range and no tgid filter: records at the stack pointer of
#              the interrupted user task), vaddr and paddr: exits 0
#   kmsg       no DAMON error in the kernel log during the runs above (before
#              the obs tests, whose failures would log errors)
#
# Expected on a kernel whose paddr handler does not translate virtual-only
# samples (the series before its paddr translation): pebs-paddr,
# pebs_large-paddr and page_faults-paddr FAIL hotcold (every sample counted
# as inv_phys, no region accessed); seen so on 2026-11-30.
#
# The aux-* and obs-aux-* runs SKIP if the kernel has no damon_test_aux PMU.
#
# Output: "PASS RUN/CHECK: detail", "FAIL RUN/CHECK: reason", "SKIP
# RUN/CHECK: reason", "# " comments, and one line per run (per phase for
# aux-shapes-OPS)
#   RESULT shape=S ops=O generated=N callback=N valid=N matched=N updated=N
#          inv_phys=N xlate_fail=N hot_regions=N cold_accessed=N
# (generated: Δrecords of the test PMU, '-' for page_faults); the aux-* runs
# start it with run=RUN and end it with not_ldst=N malformed=N aux_skip=N
# aux_trunc=N aux_partial=N aux_collide=N full=N (full: the PMU's).  Exit
# status: 0 if nothing failed, 1 if a check failed, 4 if everything was
# skipped (e.g. no damon_test PMU).
#
# usage: testpmu-guest.sh [options] WORKLOAD [SELFTESTS_DIR]
#   WORKLOAD        guest/workload.c built (scripts/lib.sh stage_guest)
#   SELFTESTS_DIR   has damon_perf_obs_test.sh (and perf_fault_workload);
#                   without it the obs-* runs SKIP
#   --only LIST     runs to do, comma separated shell patterns, e.g.
#                   'ibs-*,negative' (runs: ibs-vaddr ibs-paddr pebs-vaddr
#                   pebs-paddr pebs_large-vaddr pebs_large-paddr
#                   page_faults-vaddr page_faults-paddr negative late-commit
#                   late-off late-control aux-vaddr aux-paddr
#                   aux-shapes-vaddr aux-shapes-paddr aux-full-vaddr
#                   aux-full-paddr aux-inject-vaddr aux-inject-paddr
#                   aux-padread-vaddr
#                   aux-hotplug-vaddr aux-hotplug-paddr aux-fair-vaddr
#                   aux-fair4-vaddr aux-reenable-vaddr nointr aux-format
#                   aux-nocontext aux-revoke fair-vaddr fair4-vaddr
#                   cover-vaddr cover-hybrid cover-none insn-vaddr
#                   insn-paddr
#                   obs-vaddr
#                   obs-paddr obs-aux-vaddr obs-aux-paddr)
#   --secs S        seconds of monitoring before the regions are read (4)
#   --obs-secs S    --duration of damon_perf_obs_test.sh (5)
#
# Files (beside this one, as scripts/testpmu.sh stages them): lib/common.sh,
# lib/ktap.sh, lib/kdamond.sh and lib/perf_stats.sh of guest/, and runs/
# (hotcold.sh, pmu.sh, late.sh, aux.sh) of testpmu/.
set -u
export LC_ALL=C

damon_sysfs=/sys/kernel/mm/damon/admin
kdamonds_dir=$damon_sysfs/kdamonds
debugfs=/sys/kernel/debug
perf_stats=$debugfs/damon/perf_stats
kmemleak=$debugfs/kmemleak
ring_order_param=/sys/module/damon_core/parameters/report_ring_order
pmu_dir=/sys/bus/event_source/devices/damon_test
dtp_stats=$debugfs/damon_test_pmu/stats
dtp_events=$debugfs/damon_test_pmu/events
dtp_late=$debugfs/damon_test_pmu/late
aux_pmu_dir=/sys/bus/event_source/devices/damon_test_aux
dta_stats=$debugfs/damon_test_aux/stats
dta_inject=$debugfs/damon_test_aux/inject

all_runs="ibs-vaddr ibs-paddr pebs-vaddr pebs-paddr pebs_large-vaddr"
all_runs+=" pebs_large-paddr page_faults-vaddr page_faults-paddr negative"
all_runs+=" late-commit late-off late-control"
all_runs+=" aux-vaddr aux-paddr aux-shapes-vaddr aux-shapes-paddr"
all_runs+=" aux-full-vaddr aux-full-paddr aux-inject-vaddr aux-inject-paddr"
all_runs+=" aux-padread-vaddr"
all_runs+=" aux-hotplug-vaddr aux-hotplug-paddr aux-fair-vaddr aux-fair4-vaddr"
all_runs+=" aux-reenable-vaddr aux-format aux-nocontext aux-revoke"
all_runs+=" fair-vaddr fair4-vaddr cover-vaddr cover-hybrid cover-none"
all_runs+=" insn-vaddr insn-paddr"
all_runs+=" nointr obs-vaddr obs-paddr obs-aux-vaddr obs-aux-paddr"
# Measurements, run only when --only names them
measure_runs="aux-user"

# Workload buffers (MiB): at most ~250 records/s per CPU (HZ=250, no
# high-resolution timers in the guest) cover a small hot buffer
hot_mb=2
cold_mb=8
aggr_us=1000000
secs=4
obs_secs=5
late_ms=3000
only=""
workload=""
selftests=""

# State (and in lib/: write_err, deltas, reason_rows, miss_rows, aux_rows,
# src_deltas)
tmpdir=""
tracefs=""
have_stats=false
pmu_type=""
ncpus=""
wl_cpu=""
spread_mode=spread
cur=""
chk=""

testpmu_dir=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
unreadable()
{
	echo "testpmu: cannot read $testpmu_dir/$1" >&2
	exit 1
}
# shellcheck source-path=SCRIPTDIR source-path=SCRIPTDIR/../guest
{
	. "$testpmu_dir/lib/common.sh" || unreadable lib/common.sh
	. "$testpmu_dir/lib/ktap.sh" || unreadable lib/ktap.sh
	. "$testpmu_dir/lib/kdamond.sh" || unreadable lib/kdamond.sh
	. "$testpmu_dir/lib/perf_stats.sh" || unreadable lib/perf_stats.sh
}
# shellcheck source-path=SCRIPTDIR
{
	. "$testpmu_dir/runs/hotcold.sh" || unreadable runs/hotcold.sh
	. "$testpmu_dir/runs/pmu.sh" || unreadable runs/pmu.sh
	. "$testpmu_dir/runs/late.sh" || unreadable runs/late.sh
	. "$testpmu_dir/runs/aux.sh" || unreadable runs/aux.sh
	. "$testpmu_dir/runs/cover.sh" || unreadable runs/cover.sh
}

# The verdicts of lib/ (law, check_laws, kdamond_on, ...) and of this file
# are lines named by the run ($cur) and the check ($chk).  Runs are
# subshells: the tally is a file.
pass()
{
	echo "PASS $cur/$chk: $*"
	echo p >> "$tmpdir/tally"
}

fail()
{
	echo "FAIL $cur/$chk: $*"
	echo f >> "$tmpdir/tally"
}

skip()
{
	echo "SKIP $cur/$chk: $*"
	echo s >> "$tmpdir/tally"
}

# verdict CHECK STATUS DETAIL [REASON]: PASS CHECK with DETAIL if STATUS
# (of the test before) is 0, else FAIL it with REASON (default: DETAIL)
verdict()
{
	chk=$1
	if [ "$2" -eq 0 ]
	then
		pass "$3"
	else
		fail "${4:-$3}"
	fi
}

usage()
{
	sed -n '3,/^set -u/{/^set -u/d;p}' "$0" | sed 's/^# \{0,1\}//'
}

#
# The test PMU's counters
#

# dtp_deltas: fills pd with the deltas of the counters of the cpu=total line
# from the stats snapshot before to the one after, and pd[now:KEY] with the
# values after (one awk: an exec costs tens of ms in the TCG guest)
declare -A pd=()
dtp_deltas()
{
	kv_into pd < <(awk '
		$1 == "cpu=total" {
			for (i = 2; i <= NF; i++) {
				split($i, kv, "=")
				if (FILENAME == ARGV[1])
					b[kv[1]] = kv[2]
				else
					a[kv[1]] = kv[2]
			}
		}
		END {
			for (k in a) {
				print k, a[k] - b[k]
				print "now:" k, a[k]
			}
		}' "$tmpdir/dtp.before" "$tmpdir/dtp.after")
}

dtp_snap()
{
	cat "$dtp_stats" > "$tmpdir/dtp.$1" 2> /dev/null || : > "$tmpdir/dtp.$1"
}

# run_obs OPS [aux]: damon_perf_obs_test.sh on the test PMU's ibs shape, or
# with aux on the AUX test PMU: records with a Context packet (and a
# physical address packet for paddr), committed at every expiry, 8 per
# expiry, at the stack pointer of whatever user task was interrupted
run_obs()
{
	local ops=$1 name=obs-$1 out rc=0 args cfg

	args=(--pmu damon_test --period 1008)
	if [ "${2:-}" = aux ]
	then
		name=obs-aux-$ops
		cfg=$((dta_cx | dta_commit_each | 8 << dta_burst_shift))
		[ "$ops" = paddr ] && cfg=$((cfg | dta_pa))
		args=(--pmu damon_test_aux --period "$aux_period" --config "$cfg")
	fi
	chk=obs-test
	if [ -z "$selftests" ] || [ ! -f "$selftests/damon_perf_obs_test.sh" ]
	then
		skip "no damon_perf_obs_test.sh (selftests dir '${selftests:-}')"
		return
	fi
	out=$tmpdir/$name.log
	bash "$selftests/damon_perf_obs_test.sh" "${args[@]}" \
		--ops "$ops" --duration "$obs_secs" > "$out" 2>&1 || rc=$?
	[ -d /tmp/out ] && [ -w /tmp/out ] && cp "$out" "/tmp/out/testpmu-$name.log"
	grep -E '^\[FAIL\]|^=== |context=count|Callback breakdown' "$out" |
		sed 's/^ */#   /'
	case "$rc" in
	0) pass "damon_perf_obs_test.sh ${args[*]} --ops $ops:" \
		"$(grep '^=== ' "$out" | tail -n 1 | tr -d '=' | xargs)";;
	4) skip "damon_perf_obs_test.sh skipped: $(grep -m 1 '^\[SKIP\]' "$out")";;
	*) fail "damon_perf_obs_test.sh --ops $ops exited $rc:" \
		"$(grep '^\[FAIL\]' "$out" | head -n 3 | paste -sd';')";;
	esac
}

#
# Main
#

# Transparent huge pages for the workloads that keep their hot buffer:
# always, and without the huge zero page.  The workload's first access to its
# hot buffer is a read, which would map the huge zero page, whose copy on
# write falls back to small pages, which khugepaged collapses into a huge page
# some seconds later: new frames in the middle of a run.  Without it, each
# buffer is made of huge pages from its first fault on, and the paddr runs'
# frames are a few 2 MiB blocks that do not move.  The refaulting workload of
# the page_faults runs gets the settings of the boot (thp_restore), under
# which it faults on every small page of its hot buffer in every round.
thp_dir=/sys/kernel/mm/transparent_hugepage
thp_save()
{
	local f

	: > "$tmpdir/thp"
	for f in enabled use_zero_page
	do
		[ -w "$thp_dir/$f" ] || continue
		echo "$f $(sed -n 's/.*\[\(.*\)\].*/\1/p; /^[0-9]*$/p' "$thp_dir/$f")" \
			>> "$tmpdir/thp"
	done
	[ -s "$tmpdir/thp" ] &&
		say "transparent huge pages: $(paste -sd' ' "$tmpdir/thp")"
}

thp_stable()
{
	[ -s "$tmpdir/thp" ] || return 0
	try_write "$thp_dir/enabled" always
	try_write "$thp_dir/use_zero_page" 0
}

# shellcheck disable=SC2317 # the EXIT trap calls it
thp_restore()
{
	local f v

	[ -s "$tmpdir/thp" ] || return 0
	while read -r f v
	do
		try_write "$thp_dir/$f" "$v"
	done < "$tmpdir/thp"
}

selected()
{
	local p

	[ -z "$only" ] && return 0
	for p in ${only//,/ }
	do
		# shellcheck disable=SC2053 # a pattern
		[[ "$1" == $p ]] && return 0
	done
	return 1
}

# Prints why nothing can run, if so
global_skip_reason()
{
	local st

	if [ "$EUID" -ne 0 ]
	then
		echo "run as root"
	elif [ ! -r "$pmu_dir/type" ]
	then
		echo "no damon_test PMU ($pmu_dir: not a kernel of scripts/testpmu.sh?)"
	elif [ ! -r "$dtp_stats" ] || [ ! -r "$dtp_events" ]
	then
		echo "no $dtp_stats or $dtp_events (debugfs not mounted?)"
	elif [ ! -d "$kdamonds_dir" ]
	then
		echo "no DAMON sysfs interface ($damon_sysfs)"
	elif [ ! -r "$perf_stats" ]
	then
		echo "no $perf_stats (CONFIG_DAMON_PERF_OBSERVE not set?)"
	elif [ -z "$workload" ] || [ ! -x "$workload" ]
	then
		echo "no workload binary ('$workload')"
	elif st=$(running_kdamond "$kdamonds_dir")
	then
		echo "a kdamond is running ($st)"
	fi
}

finish()
{
	local np nf ns

	np=$(grep -c p "$tmpdir/tally")
	nf=$(grep -c f "$tmpdir/tally")
	ns=$(grep -c s "$tmpdir/tally")
	echo "testpmu: $np passed, $nf failed, $ns skipped"
	[ "$nf" -gt 0 ] && exit 1
	[ "$np" -eq 0 ] && exit 4
	exit 0
}

main()
{
	local run reason aux_reason t0=$SECONDS

	while [ $# -gt 0 ]
	do
		case "$1" in
		-h|--help) usage; exit 0;;
		--only) only=$2; shift 2;;
		--secs) secs=$2; shift 2;;
		--obs-secs) obs_secs=$2; shift 2;;
		-*) echo "testpmu: unknown option $1" >&2; exit 2;;
		*)
			if [ -z "$workload" ]
			then
				workload=$1
			else
				selftests=$1
			fi
			shift;;
		esac
	done
	tmpdir=$(mktemp -d /tmp/testpmu.XXXXXX) || exit 1
	: > "$tmpdir/tally"
	trap 'cleanup_state; thp_restore; rm -rf "$tmpdir"' EXIT
	trap 'echo "testpmu: interrupted"; exit 130' INT TERM HUP
	page_size=$(getconf PAGESIZE)

	reason=$(global_skip_reason)
	if [ -n "$reason" ]
	then
		for run in $all_runs
		do
			selected "$run" || continue
			cur=$run chk=all
			skip "$reason"
		done
		finish
	fi
	have_stats=true
	read -r pmu_type < "$pmu_dir/type"
	# shellcheck disable=SC2119 # no extra directory
	tracefs=$(find_tracefs) || tracefs=""
	ncpus=$(online_cpus | wc -l)
	# the spread workload's threads are busy all the time on up to 4
	# vCPUs, and beyond that 100 / ncpus percent of the time (3% on 32):
	# about one vCPU's worth in all, so that the kdamond and this script
	# still run.  Single-threaded TCG runs one vCPU at a time, 100 ms
	# each: with 32 busy ones, each command of this script and each
	# cross-CPU call of the guest waited seconds
	spread_mode=spread
	[ "$ncpus" -gt 4 ] && spread_mode=spread:$((100 / ncpus))
	wl_cpu=$(online_cpus | tail -n 1)
	command -v taskset > /dev/null || wl_cpu=""
	echo "testpmu: kernel $(uname -r), $ncpus CPUs," \
		"damon_test PMU type $pmu_type, workload $workload" \
		"(hot $hot_mb MiB, cold $cold_mb MiB${wl_cpu:+, cpu $wl_cpu})"

	aux_reason=$(aux_skip_reason)
	[ -z "$aux_reason" ] && say "damon_test_aux PMU type $(cat "$aux_pmu_dir/type")"

	thp_save
	kmsg_mark testpmu
	for run in $all_runs $measure_runs
	do
		# the obs tests and nointr come after the kmsg check
		[[ "$run" == obs-* || "$run" == nointr || "$run" == aux-format ||
			"$run" == aux-nocontext || "$run" == aux-revoke ||
			"$run" == cover-none ]] &&
			continue
		selected "$run" || continue
		[[ " $measure_runs " == *" $run "* && -z "$only" ]] && continue
		cur=$run
		echo "# --- $run ($((SECONDS - t0)) s)"
		case "$run" in
		negative) (run_pmu pebs_large vaddr 1);;
		late-control) (run_late_control);;
		late-*) (run_late "${run#late-}");;
		cover-*) (run_cover "${run#cover-}"); cover_restore;;
		fair-vaddr) (run_fair);;
		fair4-vaddr) (run_fair 2);;
		aux-*)
			if [ -n "$aux_reason" ]
			then
				chk=all
				skip "$aux_reason"
			else
				(run_aux "${run#aux-}")
			fi;;
		*) (run_pmu "${run%-*}" "${run##*-}");;
		esac
		cleanup_state
	done
	cur=all chk=kmsg
	check_kmsg
	for run in nointr aux-format aux-nocontext aux-revoke cover-none \
		obs-vaddr obs-paddr obs-aux-vaddr obs-aux-paddr
	do
		selected "$run" || continue
		cur=$run
		echo "# --- $run ($((SECONDS - t0)) s)"
		case "$run" in
		nointr) (run_nointr);;
		aux-format) (run_aux_format);;
		aux-nocontext|aux-revoke)
			if [ -n "$aux_reason" ]
			then
				chk=all
				skip "$aux_reason"
			else
				(run_aux_"${run#aux-}")
			fi;;
		cover-none) (run_cover none); cover_restore;;
		obs-aux-*)
			if [ -n "$aux_reason" ]
			then
				chk=all
				skip "$aux_reason"
			else
				run_obs "${run#obs-aux-}" aux
			fi;;
		*) run_obs "${run#obs-}";;
		esac
		cleanup_state
	done
	echo "testpmu: $((SECONDS - t0)) s"
	finish
}

main "$@"
