# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2154 # the sourcing script sets the globals it uses
#
# Shared helpers of the guest test scripts (damon_perf_stress.sh and its
# subtests, consumers-guest.sh).  Sourced, never run.  They report nothing:
# they return a status and leave the reason in a variable, and the caller says
# what failed in its own output format.
#
#   sysfs      try_write, rd (both retry on EBUSY), write_attrs, perf_preps
#              (a DAMON context's perf events)
#   CPUs       expand_cpulist, online_cpus, nr_possible_cpus
#   kdamonds   running_kdamond, kthread_alive, kdamond_stop
#   workload   workload_start (guest/workload.c), frames (its PFNs)
#   tracing    find_tracefs, trace_instance, trace_event, trace_overrun
#   kernel log kmsg_mark, kmsg_damon
#
# Uses: tmpdir, a directory of the caller for scratch files (and the lists
# pids and instances of what the caller has to stop or remove); tracefs for
# trace_instance.

cpu_sysfs=/sys/devices/system/cpu
write_err=""

# kv_into NAME: reads "key value" lines from stdin into the associative
# array NAME (declare -A), emptied first
kv_into()
{
	local -n kv_arr=$1
	local k v

	kv_arr=()
	while read -r k v
	do
		kv_arr[$k]=$v
	done
}

# Writes $2 to $1.  Retries while the file answers EBUSY: the DAMON sysfs
# files take damon_sysfs_lock with mutex_trylock() (mm/damon/sysfs.c:2234),
# which the kdamonds' callbacks also take for a moment in every sampling
# interval (sysfs.c:1992), and hold across intervals while the tried regions
# are updated (sysfs.c:2019).  The error message is left in $write_err.
try_write()
{
	local i

	for ((i = 0; i < 200; i++))
	do
		if { printf '%s\n' "$2" > "$1"; } 2> "$tmpdir/werr"
		then
			write_err=""
			return 0
		fi
		write_err=$(tail -n 1 "$tmpdir/werr")
		write_err=${write_err##*: }
		case "$write_err" in
		*"resource busy"*) sleep 0.05;;
		*) return 1;;
		esac
	done
	return 1
}

# write_attrs DIR FILE VALUE [FILE VALUE]...: writes each VALUE to DIR/FILE in
# order with try_write, and stops at the first failure, with write_msg set to
# "writing 'VALUE' to DIR/FILE failed: ERROR"
# shellcheck disable=SC2034 # write_msg is for the caller
write_attrs()
{
	local dir=$1

	shift
	write_msg=""
	while [ $# -ge 2 ]
	do
		if ! try_write "$dir/$1" "$2"
		then
			write_msg="writing '$2' to $dir/$1 failed: $write_err"
			return 1
		fi
		shift 2
	done
}

# perf_preps CTX N: gives the DAMON context directory CTX one probe with N
# perf_event preps, the perf events whose samples are its access reports,
# and sets preps to CTX/monitoring_attrs/probes/0/preps; the caller writes
# each event's attributes (type, config, sample_period, ...) into
# $preps/0, $preps/1, ...  Writing nr_probes makes the probe directories anew,
# empty: a probe with a perf_event prep must have no filters (EINVAL at 'on'),
# and its weight is 0, so the samples make nr_accesses (a weight would mean
# attributes-only monitoring).  A new prep is not a perf event until its
# prep_action says so.  Returns 2 if this kernel's DAMON has no preps (no
# perf events), 1 if a write failed; write_msg says why.
# shellcheck disable=SC2034 # preps is for the caller
perf_preps()
{
	local probes=$1/monitoring_attrs/probes n=$2 i

	preps=$probes/0/preps
	if [ -d "$probes" ]
	then
		write_attrs "$probes" nr_probes 1 || return 1
	fi
	if [ ! -d "$preps" ]
	then
		write_msg="this kernel's DAMON has no perf event preps ($preps)"
		return 2
	fi
	write_attrs "$preps" nr_preps "$n" || return 1
	for ((i = 0; i < n; i++))
	do
		write_attrs "$preps/$i" prep_action perf_event || return 1
	done
}

# Reads the first line of $2 into the variable $1, retrying on EBUSY (the
# state and pid files trylock damon_sysfs_lock too, sysfs.c:1643,2256)
rd()
{
	local __i __v=""

	for ((__i = 0; __i < 200; __i++))
	do
		if IFS= read -r __v < "$2" 2> "$tmpdir/rerr"
		then
			printf -v "$1" '%s' "$__v"
			return 0
		fi
		if ! grep -q 'resource busy' "$tmpdir/rerr"
		then
			break
		fi
		sleep 0.05
	done
	printf -v "$1" '%s' ""
	return 1
}

# Expands a CPU list like '0-3,5' into '0 1 2 3 5'
expand_cpulist()
{
	local range i

	for range in ${1//,/ }
	do
		for ((i = ${range%-*}; i <= ${range#*-}; i++))
		do
			echo "$i"
		done
	done
}

online_cpus()
{
	local list

	rd list "$cpu_sysfs/online"
	expand_cpulist "$list"
}

nr_possible_cpus()
{
	local list

	rd list "$cpu_sysfs/possible"
	expand_cpulist "$list" | wc -l
}

#
# kdamonds
#

# running_kdamond DIR: prints the state file of a kdamond of the DAMON sysfs
# directory DIR (.../admin/kdamonds) that is on, and fails if none is
running_kdamond()
{
	local st on

	for st in "$1"/*/state
	do
		[ -f "$st" ] || continue
		rd on "$st"
		if [ "$on" = on ]
		then
			echo "$st"
			return 0
		fi
	done
	return 1
}

kthread_alive()
{
	local comm

	[ -n "$1" ] && [ "$1" != -1 ] &&
		{ read -r comm < "/proc/$1/comm"; } 2> /dev/null &&
		[[ "$comm" == kdamond* ]]
}

# kdamond_stop DIR: turns the kdamond DIR (.../kdamonds/N) off, and checks
# that it stopped cleanly: 'off' succeeded (damon_stop() returns after the
# thread exited, kthread_stop_put() at core.c:2212), the state is off, the pid
# file says -1 (the kdamond clears ctx->kdamond as it exits, core.c:3253), and
# the thread is gone, within 10 s.  Otherwise fails with the reason in
# stop_err.
kdamond_stop()
{
	local dir=$1 pid st="" p2="" i

	stop_err=""
	rd pid "$dir/pid"
	if ! try_write "$dir/state" off
	then
		stop_err="writing 'off' failed: $write_err"
		return 1
	fi
	for ((i = 0; i < 100; i++))
	do
		rd st "$dir/state"
		rd p2 "$dir/pid"
		if [ "$st" = off ] && [ "$p2" = -1 ] && ! kthread_alive "$pid"
		then
			return 0
		fi
		sleep 0.1
	done
	stop_err="did not stop cleanly in 10 s (state '$st', pid '$p2',"
	stop_err+=" thread $pid$(kthread_alive "$pid" && echo " alive"))"
	return 1
}

#
# Workload
#

# workload_start BIN HOT_MB COLD_MB [CPU [MODE]]: starts the workload BIN
# (guest/workload.c) for an hour, refaulting its hot buffer (MODE refault, the
# default; any other MODE, e.g. "keep", writes it without dropping it: its
# pages keep their frames), pinned to CPU if given (may be empty) and taskset
# exists, and waits up to 20 s for its first line.  Sets
# wl_pid (also added to $tmpdir/pids), wl_out (its output file) and wl_line;
# with the line "hot=A-B cold=C-D" there, sets wl_hot_start, wl_hot_end,
# wl_cold_start and wl_cold_end (decimal) and returns 0.
# shellcheck disable=SC2034 # wl_* are for the caller
workload_start()
{
	local bin=$1 hot=$2 cold=$3 cpu=${4:-} mode=${5:-refault} i

	wl_line=""
	wl_out=$(mktemp "$tmpdir/wl.XXXXXX")
	if [ -n "$cpu" ] && command -v taskset > /dev/null
	then
		taskset -c "$cpu" "$bin" 3600 "$hot" "$cold" "$mode" \
			> "$wl_out" 2>&1 &
	else
		"$bin" 3600 "$hot" "$cold" "$mode" > "$wl_out" 2>&1 &
	fi
	wl_pid=$!
	echo "$wl_pid" >> "$tmpdir/pids"
	for ((i = 0; i < 200; i++))
	do
		read -r wl_line < "$wl_out"
		[[ "$wl_line" == hot=* ]] && break
		kill -0 "$wl_pid" 2> /dev/null || break
		sleep 0.1
	done
	[[ "$wl_line" =~ ^hot=(0x[0-9a-f]+)-(0x[0-9a-f]+)\ cold=(0x[0-9a-f]+)-(0x[0-9a-f]+) ]] ||
		return 1
	wl_hot_start=$((BASH_REMATCH[1]))
	wl_hot_end=$((BASH_REMATCH[2]))
	wl_cold_start=$((BASH_REMATCH[3]))
	wl_cold_end=$((BASH_REMATCH[4]))
}

# frames PID START END: the PFNs of the present pages of [START, END) in the
# address space of PID, from /proc/PID/pagemap (bit 63 present, bits 0-54 the
# PFN, which root sees), one a line.  Hexadecimal, as awk's numbers are
# doubles: a present entry starts with a digit of 8 or more, the PFN is the
# last 14 digits without bit 55.  Uses page_size, the caller's page size.
frames()
{
	dd if="/proc/$1/pagemap" bs=8 skip=$(($2 / page_size)) \
		count=$((($3 - $2) / page_size)) 2> /dev/null |
		od -An -v -tx8 -w8 | awk '
		$1 ~ /^[89a-f]/ {
			v = 0
			for (i = 3; i <= 16; i++) {
				d = index("0123456789abcdef", substr($1, i, 1)) - 1
				v = v * 16 + (i == 3 ? d % 8 : d)
			}
			printf "%.0f\n", v
		}'
}

#
# Tracing
#

# find_tracefs [DIR]...: prints the first of DIR..., /sys/kernel/tracing and
# /sys/kernel/debug/tracing that has tracepoints (an events directory)
find_tracefs()
{
	local t

	for t in "$@" /sys/kernel/tracing /sys/kernel/debug/tracing
	do
		if [ -d "$t/events" ]
		then
			echo "$t"
			return 0
		fi
	done
	return 1
}

# Makes the trace instance $1, with $2 KiB of buffer per CPU, and prints its
# directory
trace_instance()
{
	local inst=$tracefs/instances/damon_perf_stress_$1_$$

	[ -n "$tracefs" ] && [ -d "$tracefs/instances" ] || return 1
	mkdir "$inst" 2> /dev/null || return 1
	echo "$inst" >> "$tmpdir/instances"
	echo "$2" > "$inst/buffer_size_kb" 2> /dev/null
	echo "$inst"
}

# trace_event INST EVENT 0|1: disables or enables damon:EVENT in INST
trace_event()
{
	[ -f "$1/events/damon/$2/enable" ] && echo "$3" > "$1/events/damon/$2/enable"
}

# Number of the events that were overwritten in the buffers of INST $1
trace_overrun()
{
	cat "$1"/per_cpu/cpu*/stats 2> /dev/null |
		awk '$1 == "overrun:" { n += $2 } END { print n + 0 }'
}

#
# Kernel log
#

kmsg_mark()
{
	kmsg_marker="damon_perf_stress: $1 (pid $$, $SECONDS)"
	echo "$kmsg_marker" > /dev/kmsg 2> /dev/null || kmsg_marker=""
}

# The kernel log lines since kmsg_mark that mention DAMON or perf
kmsg_damon()
{
	[ -n "${kmsg_marker:-}" ] || return 0
	dmesg 2> /dev/null | awk -v m="$kmsg_marker" '
		found && tolower($0) ~ /damon|perf event/ &&
			!index($0, "damon_perf_stress:") { print }
		index($0, m) { found = 1 }'
}
