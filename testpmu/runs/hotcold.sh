# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2154,SC2034 # the globals of testpmu-guest.sh
#
# testpmu/runs/hotcold.sh: the frames of the workload's buffers and the
# hot/cold verdicts of the runs of testpmu-guest.sh (vaddr by tried regions,
# paddr by /proc/PID/pagemap).  Sourced by testpmu-guest.sh, never run.

#
# Frames and regions
#

# paddr_target CTX DESC: makes the regions in $tmpdir/target ("start end" a
# line) the one paddr target of the context directory CTX, and says so, with
# DESC for what they are
paddr_target()
{
	local c=$1 i=0 s e

	[ -s "$tmpdir/target" ] ||
		abort "no frame of the workload in /proc/$wl_pid/pagemap"
	write_attrs "$c" operations paddr targets/nr_targets 1 \
		targets/0/regions/nr_regions "$(wc -l < "$tmpdir/target")" ||
		abort "$write_msg"
	while read -r s e
	do
		write_attrs "$c/targets/0/regions/$i" start "$s" end "$e" ||
			abort "$write_msg"
		i=$((i + 1))
	done < "$tmpdir/target"
	say "paddr target: $(awk '{ printf "%s%s-%s", (NR > 1 ? ", " : ""), $1, $2 }' \
		"$tmpdir/target") ($2)"
}

# other_maps: prints "start end" (decimal) of what the workload maps besides
# its two buffers: its mappings in /proc/$wl_pid/maps less the hot and the
# cold buffer (the two can share one VMA, and share it with nothing else)
other_maps()
{
	local r s e

	while read -r r _
	do
		s=$((16#${r%-*}))
		e=$((16#${r#*-}))
		# not [vsyscall], above what a signed 64-bit number holds
		[ "$s" -ge 0 ] && [ "$e" -gt 0 ] && echo "$s $e"
	done < "/proc/$wl_pid/maps" |
		awk -v hs="$wl_hot_start" -v he="$wl_hot_end" \
			-v cs="$wl_cold_start" -v ce="$wl_cold_end" '
		function max(a, b) { return a > b ? a : b }
		function min(a, b) { return a < b ? a : b }
		function put(s, e) { if (s < e) printf "%.0f %.0f\n", s, e }
		BEGIN {
			# the two holes, lower first
			a1 = min(hs, cs); b1 = (hs < cs ? he : ce)
			a2 = max(hs, cs); b2 = (hs < cs ? ce : he)
		}
		{
			put($1, min($2, a1))
			put(max($1, b1), min($2, a2))
			put(max($1, b2), $2)
		}'
}

# Judges $tmpdir/regions of a vaddr target: prints "hot_regions cold_seen
# cold_accessed" (regions of the hot buffer but not of the cold one that have
# accesses; regions that show the cold buffer monitored: of the cold buffer
# only, or of it and more with no access; of the cold buffer only with
# accesses).  A region that also covers another mapping of the workload
# (libc's data, ld.so, the stack: the insn mode samples them all) is the
# hot or the cold buffer's only when it has no access; an access in it may
# be of the other mapping.  Gaps between mappings don't count: nothing in
# them can be accessed.
judge_vaddr()
{
	other_maps > "$tmpdir/other_maps" || return
	awk -v hs="$wl_hot_start" -v he="$wl_hot_end" \
		-v cs="$wl_cold_start" -v ce="$wl_cold_end" '
		FILENAME == ARGV[1] {
			os[++no] = $1; oe[no] = $2
			next
		}
		{
			hot = $1 < he && $2 > hs
			cold = $1 < ce && $2 > cs
			other = 0
			for (i = 1; i <= no && !other; i++)
				other = $1 < oe[i] && $2 > os[i]
			if (hot && !cold && !other && $3 > 0)
				nhot++
			if (cold && !hot && !other) {
				seen++
				if ($3 > 0)
					acc++
			} else if (cold && $3 == 0) {
				seen++
			}
		}
		END { print nhot + 0, seen + 0, acc + 0 }' \
		"$tmpdir/other_maps" "$tmpdir/regions"
}

# Judges $tmpdir/regions of a paddr target against the frames in
# $tmpdir/hot_pfns and $tmpdir/cold_pfns: prints "accessed hot_regions
# stray cold_only cold_accessed" (regions with accesses; of those, regions
# that hold a hot frame, and that do not; regions that hold cold frames and
# no hot one; of those, regions with accesses)
judge_paddr()
{
	awk -v ps="$page_size" '
		FILENAME == ARGV[1] {
			s[NR] = $1; e[NR] = $2; n[NR] = $3; nr = NR
			next
		}
		{
			a = $1 * ps
			lo = 1; hi = nr
			while (lo <= hi) {
				mid = int((lo + hi) / 2)
				if (a < s[mid])
					hi = mid - 1
				else if (a >= e[mid])
					lo = mid + 1
				else
					break
			}
			if (lo > hi)
				next
			if (FILENAME == ARGV[2])
				hot[mid] = 1
			else
				cold[mid] = 1
		}
		END {
			for (i = 1; i <= nr; i++) {
				if (n[i] > 0) {
					acc++
					if (i in hot)
						nhot++
					else
						stray++
				}
				if ((i in cold) && !(i in hot)) {
					conly++
					if (n[i] > 0)
						cacc++
				}
			}
			print acc + 0, nhot + 0, stray + 0, conly + 0, cacc + 0
		}' "$tmpdir/regions" "$tmpdir/hot_pfns" "$tmpdir/cold_pfns"
}

# Adds the frames of the workload's hot buffer to $tmpdir/hot_pfns (a union:
# a refaulting hot buffer changes frames) and takes those of the cold buffer
take_frames()
{
	frames "$wl_pid" "$wl_hot_start" "$wl_hot_end" >> "$tmpdir/hot_pfns"
	sort -un -o "$tmpdir/hot_pfns" "$tmpdir/hot_pfns"
	frames "$wl_pid" "$wl_cold_start" "$wl_cold_end" | sort -un \
		> "$tmpdir/cold_pfns"
}

# hot_cold OPS [MODE]: reads the tried regions of scheme 0 until they show
# the access pattern of the workload (up to 3 times, a second apart), and
# sets hc_ok, hc_desc (the counts), hot_regions and cold_accessed.  MODE
# refault (the page-faults event): in paddr, a region holding a hot frame
# must be accessed, and regions holding none may be: the event samples the
# faults of every task on the CPUs, e.g. copy-on-write faults of the shell,
# on frames anywhere in the target.  The test PMU's records are of the
# workload's pages only: there, no accessed region may hold no hot frame.
hot_cold()
{
	local ops=$1 mode=${2:-keep} i acc stray seen conly

	hc_ok=false
	say "phase: reading the regions ($((SECONDS - hc_t0)) s after 'on')"
	for ((i = 0; i < 3; i++))
	do
		[ "$i" -eq 0 ] || sleep 1
		if ! try_write "$kdamonds_dir/0/state" update_schemes_tried_regions
		then
			hc_desc="update_schemes_tried_regions: $write_err"
			return
		fi
		if [ "$ops" = paddr ]
		then
			take_frames
		fi
		tried_regions "$kdamonds_dir/0/contexts/0/schemes/0" > "$tmpdir/regions"
		if [ "$ops" = vaddr ]
		then
			read -r hot_regions seen cold_accessed < <(judge_vaddr)
			hc_desc="$hot_regions accessed regions of the hot buffer,"
			hc_desc+=" $seen showing the cold one, $cold_accessed of"
			hc_desc+=" the cold one only accessed"
			[ "$hot_regions" -gt 0 ] && [ "$seen" -gt 0 ] &&
				[ "$cold_accessed" -eq 0 ] && hc_ok=true
		else
			read -r acc hot_regions stray conly cold_accessed < <(judge_paddr)
			hc_desc="$acc accessed regions: $hot_regions holding hot"
			hc_desc+=" frames, $stray holding none; $conly regions of"
			hc_desc+=" cold frames only, $cold_accessed of them accessed"
			hc_desc+=" ($(wc -l < "$tmpdir/hot_pfns") hot and"
			hc_desc+=" $(wc -l < "$tmpdir/cold_pfns") cold frames)"
			if [ "$mode" = refault ]
			then
				[ "$hot_regions" -gt 0 ] && hc_ok=true
			else
				[ "$acc" -gt 0 ] && [ "$stray" -eq 0 ] && hc_ok=true
			fi
		fi
		hc_desc+=" of $(wc -l < "$tmpdir/regions") regions (read $((i + 1))"
		hc_desc+=" times, after $((SECONDS - hc_t0)) s of monitoring)"
		$hc_ok && return
	done
	{
		say "hot $wl_hot_start-$wl_hot_end cold $wl_cold_start-$wl_cold_end;" \
			"last tried regions (start-end: nr_accesses):"
		awk '{ printf "#   %s-%s: %s\n", $1, $2, $3 }' "$tmpdir/regions" |
			head -n 40
	}
}

# paddr_regions: prints the initial regions of the paddr target, "start end"
# a line: the 2 MiB blocks that hold the workload's frames, adjacent ones
# merged, so that DAMON's regions hold the hot frames or the cold ones (the
# buffers are transparent huge pages, see main); more than 64 ranges of
# scattered frames, one range from the lowest frame to the highest
paddr_regions()
{
	sort -nu "$tmpdir/hot_pfns" "$tmpdir/cold_pfns" |
		awk -v ps="$page_size" -v b=$((2 << 20)) '
		{
			blk = int($1 * ps / b)
			if (n && blk <= e[n])
				next
			if (n && blk == e[n] + 1) {
				e[n] = blk
				next
			}
			n++
			s[n] = blk
			e[n] = blk
		}
		END {
			if (n > 64) {
				e[1] = e[n]
				n = 1
			}
			for (i = 1; i <= n; i++)
				printf "%.0f %.0f\n", s[i] * b, (e[i] + 1) * b
		}'
}

# system_ram: prints "start end" of the biggest System RAM in /proc/iomem
system_ram()
{
	local r s e best=0 range=""

	while read -r r
	do
		s=$((16#${r%-*}))
		e=$((16#${r#*-} + 1))
		if [ $((e - s)) -gt "$best" ]
		then
			best=$((e - s))
			range="$s $e"
		fi
	done < <(sed -n 's/^\([0-9a-f]*-[0-9a-f]*\) : System RAM$/\1/p' /proc/iomem)
	[ -n "$range" ] && echo "$range"
}
