# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2154 # the sourcing script sets the globals it uses
#
# perf_stats (debugfs, CONFIG_DAMON_PERF_OBSERVE) for the subtests of
# damon_perf_stress.sh: snapshots, the fields of a CPU's line, the deltas of
# the counters between two snapshots, and the checks on them: the
# conservation laws, overall and per CPU, and every online CPU BOUND after a
# stop.  Sourced, never run.  The format is for debugging and may change;
# this file is updated with it.
#
# Uses: tmpdir, perf_stats (the debugfs file), have_stats (true when it is
# there), and lib/common.sh and lib/ktap.sh.

declare -A deltas=()

# Copies perf_stats to $tmpdir/stats.$1 (an empty file without perf_stats)
snap()
{
	if $have_stats
	then
		cat "$perf_stats" > "$tmpdir/stats.$1"
	else
		: > "$tmpdir/stats.$1"
	fi
}

# Prints the fields $3... (st, cb, enq, deq, ovf, match, miss, upd) of the
# line of CPU $2 in the snapshot $1, space separated.  A CPU without a line is
# UNINIT with zero counters (observe.c:688-697 prints only the other CPUs).
cpu_get()
{
	local f=$1 c

	c=$(printf 'CPU%02d:' "$2")
	shift 2
	awk -v c="$c" -v keys="$*" '
		$1 == c {
			for (i = 2; i <= NF; i++) {
				split($i, kv, "=")
				v[kv[1]] = kv[2]
			}
			found = 1
		}
		END {
			n = split(keys, k, " ")
			for (i = 1; i <= n; i++) {
				if (!found)
					x = k[i] == "st" ? "UNINIT" : 0
				else
					x = v[k[i]]
				printf "%s%s", x, i < n ? " " : "\n"
			}
		}' "$tmpdir/stats.$f"
}

# per_cpu_series KIND KEY CPUS SNAP...: a line "CPU V1 V2 ..." for each CPU
# of the space-separated list CPUS, Vi its counter KEY in the snapshot SNAPi
# (0, or UNINIT for st, where that has no line of the CPU; KEY a+b+...: the
# sum of the counters a, b, ...).  KIND "stats": snapshots of
# perf_stats (snap), lines "CPU07: key=value ..."; "aux": of the AUX test
# PMU's stats (aux_snap in testpmu), lines "cpu=7 key=value ...".  One awk
# for every CPU and snapshot, where cpu_get is one per CPU and snapshot: on
# a guest of 32 busy vCPUs each awk takes seconds.
per_cpu_series()
{
	local kind=$1 key=$2 cpus=$3 f files=""

	shift 3
	for f in "$@"
	do
		files+=" $tmpdir/$kind.$f"
	done
	# shellcheck disable=SC2086 # the file names have no blank
	awk -v kind="$kind" -v key="$key" -v cpus="$cpus" -v flist="$files" '
		BEGIN {
			n = split(flist, fl, " ")
			for (i = 1; i <= n; i++)
				idx[fl[i]] = i
			m = split(key, kl, "+")
			for (i = 1; i <= m; i++)
				want[kl[i]] = 1
		}
		kind == "stats" && $1 ~ /^CPU[0-9]+:$/ {
			c = substr($1, 4, length($1) - 4) + 0
		}
		kind == "aux" && $1 ~ /^cpu=[0-9]+$/ {
			c = substr($1, 5) + 0
		}
		(kind == "stats" && $1 ~ /^CPU[0-9]+:$/) ||
		(kind == "aux" && $1 ~ /^cpu=[0-9]+$/) {
			for (i = 2; i <= NF; i++) {
				split($i, kv, "=")
				if (!(kv[1] in want))
					continue
				if (m == 1)
					v[c, idx[FILENAME]] = kv[2]
				else
					v[c, idx[FILENAME]] += kv[2]
			}
		}
		END {
			m = split(cpus, cl, " ")
			for (j = 1; j <= m; j++) {
				line = cl[j]
				for (i = 1; i <= n; i++) {
					x = key == "st" ? "UNINIT" : 0
					if ((cl[j], i) in v)
						x = v[cl[j], i]
					line = line " " x
				}
				print line
			}
		}' $files
}

# Prints 'name delta' for the table rows of the snapshots $1 to $2 (the rows
# have a name and a value between box-drawing characters)
stats_deltas()
{
	awk '
		FNR == 1 {
			sign = FILENAME == ARGV[1] ? -1 : 1
			table = 1
		}
		/^Per-CPU/ { table = 0 }
		table {
			line = $0
			gsub(/[^A-Za-z0-9_]+/, " ", line)
			if (split(line, f, " ") == 2 && f[2] ~ /^[0-9]+$/)
				d[f[1]] += sign * f[2]
		}
		END {
			for (k in d)
				print k, d[k]
		}' "$tmpdir/stats.$1" "$tmpdir/stats.$2"
}

# The rows of the table that are not a reason of a sample: the pipeline after
# the overflow handler, and ring_peak (a maximum, not a count).  The handler
# (or the AUX drain, for a record) counts each sample under one reason: every
# other row but the miss_* and aux_* ones is a reason, so that a row that a
# newer kernel adds (a reason, or a miss) keeps the sums of the conservation
# laws whole.  The aux_* rows count bytes (aux_skip) and AUX transactions
# (aux_trunc, aux_partial, aux_collide), not samples.
stats_pipeline_rows=" callback enqueue dequeue overflow ring_peak match discarded update "

# Fills deltas with the deltas of the rows from the snapshot $1 to $2 (the
# known rows are 0 if absent), and reason_rows, miss_rows and aux_rows with
# the names of the reasons, of the miss_* rows and of the aux_* rows (the
# known ones first, then any other in name order)
compute_deltas()
{
	local name val known="valid null addr_zero kernel inv_phys xlate_fail guest"

	known+=" not_ldst malformed"
	deltas=()
	aux_rows="aux_skip aux_trunc aux_partial aux_collide"
	for name in callback $known enqueue dequeue overflow match miss_tgid \
		miss_region miss_bound discarded update $aux_rows
	do
		deltas[$name]=0
	done
	while read -r name val
	do
		deltas[$name]=$val
	done < <(stats_deltas "$1" "$2")
	reason_rows=$known
	miss_rows="miss_tgid miss_region miss_bound"
	for name in $(printf '%s\n' "${!deltas[@]}" | sort)
	do
		[[ "$stats_pipeline_rows $known $miss_rows $aux_rows " == *" $name "* ]] &&
			continue
		case "$name" in
		miss_*) miss_rows+=" $name";;
		aux_*) aux_rows+=" $name";;
		*) reason_rows+=" $name";;
		esac
	done
}

# Fills src_deltas with the deltas of the lines of the "Per-source enqueue"
# section ("name: value") from the snapshot $1 to $2: the reports that each
# producer queued (perf_overflow, page_fault, perf_aux)
declare -A src_deltas=()
# shellcheck disable=SC2034 # src_deltas is for the caller
compute_src_deltas()
{
	kv_into src_deltas < <(awk '
		FNR == 1 {
			sign = FILENAME == ARGV[1] ? -1 : 1
			src = 0
		}
		/^Per-source enqueue:/ { src = 1; next }
		src && NF == 2 && $2 ~ /^[0-9]+$/ {
			sub(/:$/, "", $1)
			d[$1] += sign * $2
		}
		END {
			for (k in d)
				print k, d[k]
		}' "$tmpdir/stats.$1" "$tmpdir/stats.$2")
}

# sum_rows NAME...: the sum of the deltas of the rows NAME...
sum_rows()
{
	local name sum=0

	for name in "$@"
	do
		sum=$((sum + ${deltas[$name]:-0}))
	done
	echo "$sum"
}

# Prints the CPUs of the snapshots $1 (before) and $2 (after) whose deltas
# break the per-CPU laws.  The per-CPU lines show cb, not valid, and miss, not
# discarded, so two of the laws are inequalities there.
cpu_law_violations()
{
	awk '
		FNR == 1 { after = FILENAME != ARGV[1] }
		/^CPU[0-9]+: / {
			cpu = substr($1, 4) + 0
			delete v
			for (i = 2; i <= NF; i++) {
				split($i, kv, "=")
				v[kv[1]] = kv[2]
			}
			if (!after) {
				for (k in v)
					b[cpu, k] = v[k]
				next
			}
			for (k in v)
				d[k] = v[k] - b[cpu, k]
			if (d["cb"] < d["enq"] + d["ovf"])
				printf " CPU%d:cb<enq+ovf", cpu
			if (d["enq"] != d["deq"])
				printf " CPU%d:enq!=deq", cpu
			if (d["deq"] < d["match"] + d["miss"])
				printf " CPU%d:deq<match+miss", cpu
			if (d["upd"] > d["match"])
				printf " CPU%d:upd>match", cpu
		}' "$tmpdir/stats.$1" "$tmpdir/stats.$2"
}

# Checks the conservation laws (perf.h, perf-observability.rst) on the deltas
# from the snapshot $1 to $2, both taken while no context with perf events
# runs: the kdamond drains all rings and counts their drops when it stops
# (core.c:1443-1458, after the events are closed, core.c:1487-1491), so no
# report is left in a ring or uncounted.
check_laws()
{
	local v

	if ! $have_stats
	then
		say "conservation laws: not checked (no $perf_stats)"
		return
	fi
	compute_deltas "$1" "$2"
	say "deltas:$(for v in callback $reason_rows enqueue overflow dequeue \
		match $miss_rows discarded update $aux_rows
		do
			printf ' %s=%s' "$v" "${deltas[$v]}"
		done)"
	# shellcheck disable=SC2086 # lists of row names
	law "callback == ${reason_rows// / + }" "${deltas[callback]}" == \
		"$(sum_rows $reason_rows)"
	law "valid == enqueue + overflow" "${deltas[valid]}" == \
		"$((deltas[enqueue] + deltas[overflow]))"
	law "enqueue == dequeue" "${deltas[enqueue]}" == "${deltas[dequeue]}"
	# shellcheck disable=SC2086 # a list of row names
	law "dequeue == match + ${miss_rows// / + } + discarded" \
		"${deltas[dequeue]}" == "$(sum_rows match $miss_rows discarded)"
	law "update <= match" "${deltas[update]}" "<=" "${deltas[match]}"
	v=$(cpu_law_violations "$1" "$2")
	if [ -z "$v" ]
	then
		pass "per-CPU laws (cb >= enq + ovf, enq == deq, deq >= match + miss, upd <= match)"
	else
		fail "per-CPU laws do not hold:$v"
	fi
}

# After every context stopped, each online CPU shows BOUND: the stop disables
# the events (core.c:700-701, BOUND) and then closes them, and closing
# doesn't reset the state of the CPU (observe.c:191-198).
check_all_bound()
{
	local cpu st bad=""

	$have_stats || return
	for cpu in $(online_cpus)
	do
		st=$(cpu_get "$1" "$cpu" st)
		[ "$st" = BOUND ] || bad+=" CPU$cpu=$st"
	done
	if [ -z "$bad" ]
	then
		pass "after the stop, every online CPU is BOUND"
	else
		fail "after the stop, CPUs not BOUND:$bad"
	fi
}
