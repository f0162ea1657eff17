# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2154 # the sourcing script sets the globals it uses
#
# KTAP side of the subtests of damon_perf_stress.sh: the "# " comment lines,
# the failures a subtest counts or dies of, its skip and the comment of its
# result line, and the checks that report (a law on two numbers, the kernel
# log, kmemleak).  Sourced, never run.  A subtest runs in a subshell: its
# exit status is its result (0 pass, 1 fail, $ksft_skip skip).
#
# Uses: tmpdir, kmemleak (the debugfs file), and lib/common.sh.

ksft_skip=4
nfail=0

say()
{
	echo "# $*"
}

# Within a subtest (a subshell): count a failure, and go on
fail()
{
	say "FAIL: $*"
	nfail=$((nfail + 1))
}

pass()
{
	say "ok: $*"
}

# Within a subtest: fail it now
abort()
{
	fail "$*"
	exit 1
}

# Within a subtest: skip it now
skip_subtest()
{
	say "SKIP: $*"
	echo "$*" > "$tmpdir/directive"
	exit $ksft_skip
}

# Within a subtest: the comment of its result line
set_directive()
{
	echo "$*" > "$tmpdir/directive"
}

# Writes $2 to $1, or fails the subtest
wr()
{
	try_write "$1" "$2" || abort "writing '$2' to $1 failed: $write_err"
}

# law TEXT A OP B: passes if A OP B holds (OP: == or <=), and fails if not
law()
{
	local ok=false

	case "$3" in
	==) [ "$2" -eq "$4" ] && ok=true;;
	\<=) [ "$2" -le "$4" ] && ok=true;;
	esac
	if $ok
	then
		pass "$1 ($2 $3 $4)"
	else
		fail "$1 ($2 $3 $4 does not hold)"
	fi
}

# Fails if the kernel log since kmsg_mark shows that opening an event failed
# (core.c:607) or a DAMON warning
check_kmsg()
{
	local lines l

	lines=$(kmsg_damon)
	if [ -z "$lines" ]
	then
		pass "no DAMON message in the kernel log"
		return
	fi
	while read -r l
	do
		say "  kernel: $l"
	done <<< "$lines"
	if grep -qiE 'cannot open|warn|bug|error' <<< "$lines"
	then
		fail "the kernel log shows DAMON errors"
	fi
}

#
# kmemleak
#

# Scans for leaks, and fails if a report that no former call showed mentions
# DAMON.  Sets kml_status to what was checked.
# shellcheck disable=SC2034 # kml_status is for the caller
kmemleak_check()
{
	local counts total newd old other

	if [ ! -e "$kmemleak" ]
	then
		kml_status="kmemleak not built"
		say "leaks: NOT checked ($kmemleak not found: CONFIG_DEBUG_KMEMLEAK is not set)"
		return
	fi
	# An object is reported only if it is older than 5 s at the scan
	# (MSECS_MIN_AGE, mm/kmemleak.c:110, :348-353), and unchanged since the
	# previous scan: the first scan of a new object records its checksum
	# and greys it (mm/kmemleak.c:1816-1838).  Hence two scans.
	say "leaks: waiting 6 s, then two kmemleak scans"
	sleep 6
	if ! try_write "$kmemleak" scan
	then
		kml_status="kmemleak disabled"
		say "leaks: NOT checked (kmemleak scan: $write_err)"
		return
	fi
	sleep 1
	try_write "$kmemleak" scan
	cat "$kmemleak" > "$tmpdir/kmemleak.out"
	: > "$tmpdir/kmemleak.damon"
	: > "$tmpdir/kmemleak.others"
	touch "$tmpdir/kmemleak.seen"
	counts=$(awk -v seen="$tmpdir/kmemleak.seen" \
		-v out="$tmpdir/kmemleak.damon" \
		-v others="$tmpdir/kmemleak.others" '
		BEGIN {
			while ((getline l < seen) > 0)
				s[l] = 1
			close(seen)
		}
		function flush() {
			if (hdr == "")
				return
			total++
			if (tolower(body) ~ /damon/) {
				if (hdr in s)
					old++
				else {
					newd++
					printf "%s", body > out
				}
			} else {
				other++
				print hdr > others
			}
			print hdr >> seen
		}
		/^unreferenced object/ {
			flush()
			hdr = $0
			body = ""
		}
		hdr != "" { body = body $0 "\n" }
		END {
			flush()
			print total + 0, newd + 0, old + 0, other + 0
		}' "$tmpdir/kmemleak.out")
	read -r total newd old other <<< "$counts"
	say "leaks: kmemleak lists $total objects: $newd new of DAMON," \
		"$old of DAMON already reported, $other others"
	if [ "$other" -gt 0 ]
	then
		say "leaks: not DAMON's (not failed here; vm-run.sh fails on" \
			"any 'new suspected' console line):"
		head -n 5 "$tmpdir/kmemleak.others" | sed 's/^/#   /'
	fi
	if [ "$newd" -gt 0 ]
	then
		sed 's/^/#   /' "$tmpdir/kmemleak.damon"
		fail "kmemleak reports $newd DAMON leaks"
	else
		pass "kmemleak: no new leak mentions DAMON"
	fi
	kml_status="kmemleak checked"
}
