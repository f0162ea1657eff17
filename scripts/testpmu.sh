#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# testpmu.sh [all|build|run] ('make testpmu'): the live tests of DAMON's
# hardware-PMU paths on the harness-only test sampling PMU "damon_test"
# (testpmu/0001-damon-test-pmu.patch, testpmu/README.md): IBS-, PEBS- and
# large-PEBS-shaped samples through the real perf core, in vaddr and paddr,
# each accounted for from the PMU's records to DAMON's regions, the
# software page-faults event as the reference, a large-PEBS negative
# control, late overflow handlers against a commit and a stop (the lifetime
# of the handler's context), DAMON's drain of AUX buffers on the AUX test
# PMU "damon_test_aux" (testpmu/0002-damon-test-aux-pmu.patch: Arm SPE
# records), and damon_perf_obs_test.sh on both PMUs.  The checks and their output are described in the header of the guest script,
# testpmu/testpmu-guest.sh.
#
#   build  the kernel: variant "on" in its own tree build/testpmu/linux
#          (DAMON_PERF_BUILD=build/testpmu for the harness scripts), a clone
#          of build/linux reset to its "series" branch with the patch
#          applied by git apply; build/linux is never touched.  The patch
#          builds the driver with CONFIG_DEBUG_FS, so the test kernel has the
#          config of "on" (and its build hits ccache).  A new clone starts
#          from build/linux's built .out-on when that was built from the
#          same commit (its
#          files get an old timestamp, as lib.sh's hist_tree does): only
#          what the patch touches is rebuilt.  Then checks that the driver
#          is in the kernel (damon_test_pmu.o, dtp_init in System.map).
#   run    stage the guest script (lib.sh stage_guest) and
#          damon_perf_obs_test.sh with perf_fault_workload, boot (2 vCPUs,
#          2 GiB, kunit.enable=0) and run testpmu-guest.sh; print its output
#          and a table of its RESULT lines
#   all    both (default)
#
# Exit: the guest script's (0 passed, 1 a check failed, 4 all skipped), or 1
# when the build or the boot failed.  Output: build/testpmu/vm/testpmu/
# {output.log,console.log}, the obs tests' logs testpmu-obs-*.log beside.
# Env: TESTPMU_BUILD=0: no build, only the check of the kernel (iterate on
# the guest script without building); TESTPMU_ARGS: options for testpmu-guest.sh (e.g. "--only
# 'ibs-*,negative' --secs 6"); TESTPMU_GUEST: another guest script;
# TESTPMU_VM_TIMEOUT (900) in s; TESTPMU_CPUS (2): the guest's vCPUs;
# TESTPMU_NAME (testpmu): the guest's name, so its output directory
# build/testpmu/vm/NAME; TESTPMU_VARIANT: the config variant (on;
# "debug" for KASAN and the other checkers, as in make stress); VM_ACCEL as
# for vm-run.sh.
top=$(cd "$(dirname "$0")/.." && pwd)
main_build=${DAMON_PERF_BUILD:-$top/build}
export DAMON_PERF_BUILD=$main_build/testpmu
# shellcheck source=lib.sh source-path=SCRIPTDIR
. "$top/scripts/lib.sh"

what=${1:-all}
case "$what" in
all|build|run) ;;
*) die "usage: testpmu.sh [all|build|run]" ;;
esac
main_src=$main_build/linux
patch=$TOP/testpmu/0001-damon-test-pmu.patch
[ -f "$patch" ] || die "testpmu: missing $patch"
# the AUX test PMU (damon_test_aux, Arm SPE records), applied after the first
aux_patch=$TOP/testpmu/0002-damon-test-aux-pmu.patch
[ -f "$aux_patch" ] || die "testpmu: missing $aux_patch"
# DAMON decodes the AUX buffers of the PMUs that it knows write Arm SPE
# records: damon_test_aux joins them (its twin damon_test_trace does not)
fmt_patch=$TOP/testpmu/0003-damon-test-aux-pmu-spe-format.patch
[ -f "$fmt_patch" ] || die "testpmu: missing $fmt_patch"
# the insn mode of damon_test: the sampled address is the interrupted user
# instruction's memory operand (drivers/perf/damon_test_insn.h)
insn_patch=$TOP/testpmu/0004-damon-test-pmu-insn.patch
[ -f "$insn_patch" ] || die "testpmu: missing $insn_patch"
# "pad_read" of damon_test_aux/inject: padding up to just before the end of
# DAMON's next read of an AUX buffer
pad_patch=$TOP/testpmu/0005-damon-test-aux-pmu-pad-read.patch
[ -f "$pad_patch" ] || die "testpmu: missing $pad_patch"
late_patch=$TOP/testpmu/0006-damon-test-aux-pmu-late-free.patch
[ -f "$late_patch" ] || die "testpmu: missing $late_patch"
# eval kernels only (CONFIG_DAMON_TEST_MKOLD_FLUSH): a fair Accessed-bit
# baseline under QEMU's software TLB
flush_patch=$TOP/testpmu/0007-damon-eval-mkold-flush.patch
[ -f "$flush_patch" ] || die "testpmu: missing $flush_patch"
variant=${TESTPMU_VARIANT:-on}
O=$(objdir "$variant")
t0=$SECONDS

# tree_state: a hash of the tree's changes against HEAD, untracked files
# included
tree_state() {
	{
		git -C "$SRC" diff HEAD
		git -C "$SRC" ls-files -z --others --exclude-standard |
			(cd "$SRC" && xargs -0 -r sha1sum)
	} | sha1sum | cut -d' ' -f1
}

# patches_sum: a hash of the patches that the tree gets
patches_sum() { cat "$patch" "$aux_patch" "$fmt_patch" "$insn_patch" "$pad_patch" "$late_patch" "$flush_patch" | sha1sum | cut -d' ' -f1; }

# tree_ready REV: the tree is REV with the patches applied and nothing else:
# the stamp that the last apply left names REV, these patches and the
# tree's state then, and the tree is still in that state.  (A reverse
# check of each patch cannot tell: 0004 changes lines that 0002's hunks
# have as context.)
tree_ready() {
	[ "$(git -C "$SRC" rev-parse -q --verify HEAD 2>/dev/null)" = "$1" ] &&
		[ "$(cat "$SRC/.git/testpmu-stamp" 2>/dev/null)" = "$1 $(patches_sum) $(tree_state)" ]
}

build_kernel() {
	local rev new=false

	[ -d "$main_src/.git" ] || die "testpmu: no expanded tree at $main_src: run 'make expand'"
	if [ ! -d "$SRC/.git" ]; then
		log "testpmu: cloning $main_src into $SRC (once)"
		mkdir -p "$BUILD"
		rm -rf "$SRC.tmp"
		git clone -q --no-checkout "$main_src" "$SRC.tmp" || die "testpmu: clone failed"
		mv "$SRC.tmp" "$SRC"
		new=true
	fi
	git -C "$SRC" fetch -q "$main_src" "+refs/heads/series:refs/heads/testpmu-series" ||
		die "testpmu: fetching the series branch of $main_src failed"
	rev=$(git -C "$SRC" rev-parse --verify testpmu-series)
	if tree_ready "$rev"; then
		log "testpmu: $SRC is the series ($(git -C "$SRC" log -1 --format=%h "$rev")) + the test PMU patches already"
	else
		log "testpmu: $SRC = series $(git -C "$SRC" log -1 --format='%h %s' "$rev") + $(basename "$patch") + $(basename "$aux_patch") + $(basename "$fmt_patch") + $(basename "$insn_patch") + $(basename "$pad_patch") + $(basename "$late_patch") + $(basename "$flush_patch")"
		git -C "$SRC" checkout -q -f --detach "$rev" || die "testpmu: checkout failed"
		git -C "$SRC" clean -fdq -- drivers/perf
		if $new; then
			# as lib.sh's hist_tree: old sources, and the objects of
			# build/linux if they were built from this commit
			(cd "$SRC" && git ls-files -z | xargs -0 touch -h -d @946684800)
			[ "$(cat "$main_src/.out-on/.head" 2>/dev/null)" = "$rev" ] &&
				seed_objdir "$main_src/.out-on" "$O"
		fi
		git -C "$SRC" apply "$patch" ||
			die "testpmu: $patch does not apply on the series"
		git -C "$SRC" apply "$aux_patch" ||
			die "testpmu: $aux_patch does not apply on the series and $(basename "$patch")"
		git -C "$SRC" apply "$fmt_patch" ||
			die "testpmu: $fmt_patch does not apply on the series"
		git -C "$SRC" apply "$insn_patch" ||
			die "testpmu: $insn_patch does not apply on the series and 0001-0003"
		git -C "$SRC" apply "$pad_patch" ||
			die "testpmu: $pad_patch does not apply on the series and 0001-0004"
		git -C "$SRC" apply "$late_patch" ||
			die "testpmu: $late_patch does not apply on the series and 0001-0005"
		git -C "$SRC" apply "$flush_patch" ||
			die "testpmu: $flush_patch does not apply on the series and 0001-0006"
		echo "$rev $(patches_sum) $(tree_state)" > "$SRC/.git/testpmu-stamp"
	fi
	log "testpmu: build $variant"
	bash "$TOP/scripts/build.sh" "$variant" || die "testpmu: build failed"
}

if [ "$what" != run ] && [ "${TESTPMU_BUILD:-1}" != 0 ]; then
	build_kernel
fi
[ -f "$O/arch/x86/boot/bzImage" ] || die "testpmu: no kernel $O/arch/x86/boot/bzImage (run testpmu.sh build)"
if [ ! -f "$O/drivers/perf/damon_test_pmu.o" ] || ! grep -q ' dtp_init$' "$O/System.map"; then
	die "testpmu: the kernel in $O has no test PMU (drivers/perf/damon_test_pmu.o, dtp_init): CONFIG_PERF_EVENTS and CONFIG_DEBUG_FS set?"
fi
if [ ! -f "$O/drivers/perf/damon_test_aux_pmu.o" ]; then
	die "testpmu: the kernel in $O has no AUX test PMU (drivers/perf/damon_test_aux_pmu.o)"
fi
log "testpmu: the test PMUs are in the kernel ($O/drivers/perf/damon_test_pmu.o, damon_test_aux_pmu.o)"
[ "$what" != build ] || exit 0

# The guest script, guest/lib/ and the workload, under $BUILD (lib.sh), and
# the obs test with its workload
TESTPMU_GUEST=${TESTPMU_GUEST:-$TOP/testpmu/testpmu-guest.sh}
stage_guest testpmu testpmu-guest.sh TESTPMU_GUEST
cp -r "$(dirname "$TESTPMU_GUEST")/runs" "$stage/runs" ||
	die "testpmu: staging the runs/ of $TESTPMU_GUEST failed"
st=$SRC/tools/testing/selftests/damon
mkdir -p "$stage/selftests"
cp "$st/damon_perf_obs_test.sh" "$stage/selftests/" ||
	die "testpmu: no damon_perf_obs_test.sh in $st"
gcc -O2 -Wall -o "$stage/selftests/perf_fault_workload" "$st/perf_fault_workload.c" ||
	die "testpmu: building perf_fault_workload failed"
# the user-space AUX reader of the run aux-user, on DAMON's decoder
gcc -O2 -Wall -c -I "$TOP/tests/fuzz/shim" -DSPE_C="\"$SRC/mm/damon/perf/spe.c\"" \
	-o "$stage/auxread-spe.o" "$TOP/testpmu/auxread-spe.c" &&
	gcc -O2 -Wall -o "$stage/selftests/auxread" "$TOP/testpmu/auxread.c" \
		"$stage/auxread-spe.o" ||
	die "testpmu: building auxread failed"

name=${TESTPMU_NAME:-testpmu}
out=$BUILD/vm/$name
rc=0
bash "$TOP/scripts/vm-run.sh" --name "$name" --cpus "${TESTPMU_CPUS:-2}" --mem 2048 \
	--timeout "${TESTPMU_VM_TIMEOUT:-900}" --append "kunit.enable=0" "$variant" -- \
	"bash $stage/testpmu-guest.sh ${TESTPMU_ARGS:-} $wl $stage/selftests" || rc=$?
echo
cat "$out/output.log" 2>/dev/null || true
echo
echo "testpmu: per run (generated: the PMU's records; '-': not the test PMU)"
awk '
	/^(PASS|FAIL|SKIP) / {
		run = $2
		sub(/\/.*/, "", run)
		if ($1 == "FAIL") {
			chk = $2
			sub(/^[^\/]*\//, "", chk)
			sub(/:$/, "", chk)
			bad[run] = bad[run] (bad[run] == "" ? "" : ",") chk
		}
	}
	/^RESULT / {
		delete v
		for (i = 2; i <= NF; i++) {
			split($i, kv, "=")
			v[kv[1]] = kv[2]
		}
		run = v["shape"] "-" v["ops"]
		if (v["shape"] ~ /force_large/)
			run = "negative"
		if ("run" in v)
			run = v["run"]
		has[run] = 1
		if ("not_ldst" in v) {
			na++
			aline[na] = sprintf("%-12s %-17s %-5s %9s %8s %6s %8s %9s %5s %7s %7s %5s %7s %4s %5s",
				run, v["shape"], v["ops"], v["generated"], v["callback"], v["valid"],
				v["not_ldst"], v["malformed"], v["aux_trunc"], v["aux_partial"],
				v["aux_collide"], v["full"], v["matched"], v["hot_regions"],
				v["cold_accessed"])
			aname[na] = run
			next
		}
		n++
		line[n] = sprintf("%-22s %-5s %9s %8s %6s %7s %7s %8s %10s %4s %5s", v["shape"],
			v["ops"], v["generated"], v["callback"], v["valid"], v["matched"],
			v["updated"], v["inv_phys"], v["xlate_fail"], v["hot_regions"],
			v["cold_accessed"])
		name[n] = run
	}
	END {
		if (n) {
			printf "%-22s %-5s %9s %8s %6s %7s %7s %8s %10s %4s %5s  %s\n", "shape", "ops",
				"generated", "callback", "valid", "matched", "updated",
				"inv_phys", "xlate_fail", "hot", "cold", "result"
			for (i = 1; i <= n; i++)
				printf "%s  %s\n", line[i], bad[name[i]] == "" ? "pass" : "FAIL " bad[name[i]]
		}
		if (na) {
			printf "%-12s %-17s %-5s %9s %8s %6s %8s %9s %5s %7s %7s %5s %7s %4s %5s  %s\n",
				"aux run", "shape", "ops", "generated", "callback", "valid",
				"not_ldst", "malformed", "trunc", "partial", "collide",
				"full", "matched", "hot", "cold", "result"
			for (i = 1; i <= na; i++)
				printf "%s  %s\n", aline[i], bad[aname[i]] == "" ? "pass" : "FAIL " bad[aname[i]]
		}
		for (r in bad)
			if (!(r in has))
				printf "%-22s FAIL %s\n", r, bad[r]
	}' "$out/output.log" 2>/dev/null || true
log "testpmu: $((SECONDS - t0)) s"
case "$rc" in
0) log "testpmu: passed (output: $out/output.log)" ;;
4) log "testpmu: every check skipped (output: $out/output.log)"; exit 4 ;;
*) die "testpmu: failed (rc $rc): $(grep -E '^FAIL ' "$out/output.log" 2>/dev/null | cut -d: -f1 | cut -d' ' -f2 | paste -sd, -) (output: $out/output.log)" ;;
esac
