#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The tiering loop's analysis (bench/eval/tier-guest.sh, tierwl.c).

usage: tiering.py [-o RESULTS] RUN_DIR...
       tiering.py --selftest

Each RUN_DIR is the OUTDIR of one tier-guest.sh run (meta, share, summary),
or a directory whose subdirectories are.  Per run:

  share(t)   the hot set's share on the fast node, HOT_ON_FAST / HOT_TOTAL of
             each line of share, t in s since the mark (summary mark_ns: the
             mode was switched on), one point a report interval (1 s)
  t90        when the share first reached 90 %, linearly interpolated
             between the last point below and the first at or above (None:
             never); a run that starts at or above 90 % has t90 0
  t_goal     the same for the goal (meta goal_bp; the same for every mode
             of a comparison, so that none and numab are measured against
             the goal too)
  steady     the window from min(t_goal, T/2) to the end (T: the last
             point): the last half of the run, or more if the goal was
             reached in its first half
  offset     mean of share - goal over the steady window, in percentage
             points, and the standard deviation of the share there
  moves      hot_moves / hot_pages: node changes per tracked hot page (1.0
             is one move up each; more is ping-pong, at the query
             interval's resolution), and the same for the cold set
  cost       kdamond_ns / window_s: kdamond's instructions a second (the
             guest runs with -icount shift=0: 1 ns is one instruction), and
             in % of a CPU; samples handled in interrupts on the workload's
             CPU are not in it (perf mode): the workload's accesses a
             second, relative to mode none, show that part
  cold_fast  the cold set's share on the fast node at the end (cold memory
             that took fast memory)
  layout     hot_pfn_runs of the summary: the runs of consecutive frames
             of the hot set as placed (paddr schemes migrate physical
             ranges: the more runs, the more cold pages go along)

Writes RESULTS/tiering.md (a Markdown table), RESULTS/tiering.json and
RESULTS/tiering.png (the share over time, a line per run, the goal dashed,
and below it the cold set's share on the fast node; needs matplotlib,
python3-matplotlib), and prints the goal lines:

  GOAL damon-perf-offset: |mean offset| of damon-perf <= 2 pp
  GOAL damon-perf-vs-numab: damon-perf's t90 < numab's

each "met" or "missed" with the figures (several runs of a mode: their
mean; a missing mode: "n/a").  Exit 0 unless the input is unusable (1) or a
usage error (2); missed goals do not fail it.
"""

import argparse
import json
import math
import os
import shutil
import sys
import tempfile

OFFSET_PP = 2.0
T90 = 0.90
MODES = ("damon-perf", "damon-abit", "numab", "none")


def read_kv(path):
    """A file of "key value" lines, as a dict of strings."""
    kv = {}
    with open(path) as f:
        for line in f:
            parts = line.split(None, 1)
            if parts:
                kv[parts[0]] = parts[1].strip() if len(parts) > 1 else ""
    return kv


def num(kv, key, default=None):
    """kv[key] as an int or a float, or default."""
    v = kv.get(key)
    if v is None or v in ("", "-"):
        return default
    try:
        return int(v)
    except ValueError:
        try:
            return float(v)
        except ValueError:
            return default


def read_share(path):
    """The share file: a list of (t_ns, hot_fast, hot_total, cold_fast,
    cold_total) tuples, in file order."""
    rows = []
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) != 5:
                continue
            rows.append(tuple(int(x) for x in p))
    return rows


def crossing(ts, ys, level):
    """The first time the series (ts, ys) reaches level, linearly
    interpolated from the point before; None if it never does."""
    for i, (t, y) in enumerate(zip(ts, ys)):
        if y >= level:
            if i == 0 or ys[i - 1] >= level:
                return t
            t0, y0 = ts[i - 1], ys[i - 1]
            return t0 + (t - t0) * (level - y0) / (y - y0)
    return None


def analyse_run(d):
    """The figures of the run in directory d, as a dict."""
    meta = read_kv(os.path.join(d, "meta"))
    summ = read_kv(os.path.join(d, "summary"))
    rows = read_share(os.path.join(d, "share"))
    if not rows:
        raise ValueError("%s: no share lines" % d)
    mode = meta.get("mode", "?")
    goal = num(meta, "goal_bp", 9900) / 10000.0
    mark = num(summ, "mark_ns", -1)
    if mark is None or mark < 0:
        mark = 0
    ts, share, cold = [], [], []
    before = None
    for t_ns, hf, ht, cf, ct in rows:
        t = (t_ns - mark) / 1e9
        s = hf / ht if ht else 0.0
        if t < -1e-9:
            before = s
            continue
        ts.append(t)
        share.append(s)
        cold.append(cf / ct if ct else 0.0)
    if not ts:
        raise ValueError("%s: no share lines after the mark" % d)
    end = ts[-1]
    t90 = crossing(ts, share, T90)
    t_goal = crossing(ts, share, goal)
    start = min(t_goal if t_goal is not None else math.inf, end / 2)
    win = [s for t, s in zip(ts, share) if t >= start - 1e-9]
    offs = [(s - goal) * 100 for s in win]
    mean_off = sum(offs) / len(offs)
    std = math.sqrt(sum((o - mean_off) ** 2 for o in offs) / len(offs))
    hot_pages = num(summ, "hot_pages", 0)
    cold_pages = num(summ, "cold_pages", 0)
    window_ns = num(meta, "window_ns")
    kd_ns = num(meta, "kdamond_ns")
    mark_ns = num(summ, "mark_ns", -1)
    end_ns = num(summ, "end_ns")
    loop_s = None
    if end_ns is not None:
        loop_s = (end_ns - max(mark_ns, 0)) / 1e9
    r = {
        "run": os.path.basename(os.path.normpath(d)),
        "dir": d,
        "mode": mode,
        "period": num(meta, "period", 0),
        "goal": goal,
        "t": ts,
        "share": share,
        "cold_share": cold,
        "share_before_mark": before,
        "share_end": share[-1],
        "cold_fast_end": cold[-1],
        "t90": t90,
        "t_goal": t_goal,
        "steady_from": start,
        "steady_points": len(win),
        "offset_pp": mean_off,
        "std_pp": std,
        "hot_pages": hot_pages,
        "cold_pages": cold_pages,
        "hot_moves_per_page": (num(summ, "hot_moves", 0) / hot_pages
                               if hot_pages else None),
        "cold_moves_per_page": (num(summ, "cold_moves", 0) / cold_pages
                                if cold_pages else None),
        "window_s": window_ns / 1e9 if window_ns else None,
        "kdamond_ns": kd_ns,
        "kdamond_ips": (kd_ns / (window_ns / 1e9)
                        if kd_ns is not None and window_ns else None),
        "kdamond_cpu_pct": (100.0 * kd_ns / window_ns
                            if kd_ns is not None and window_ns else None),
        "accesses_per_s": (num(summ, "accesses", 0) / loop_s
                           if loop_s else None),
        "hot_pfn_runs": num(summ, "hot_pfn_runs"),
        "hot_cold_boundaries": num(summ, "hot_cold_boundaries"),
        "query_ms_mean": (num(summ, "query_ns_total", 0) / 1e6 /
                          max(num(summ, "queries", 1), 1)),
        "vmstat": {k[len("vmstat_"):]: num(meta, k) for k in meta
                   if k.startswith("vmstat_")},
        "damos": {k: num(meta, k) for k in meta
                  if k[:3] in ("s0_", "s1_")},
    }
    return r


def find_runs(paths):
    """The run directories among paths and their subdirectories."""
    runs = []
    for p in paths:
        if os.path.isfile(os.path.join(p, "meta")):
            runs.append(p)
            continue
        sub = sorted(os.path.join(p, e) for e in os.listdir(p)
                     if os.path.isfile(os.path.join(p, e, "meta")))
        if not sub:
            raise ValueError("%s: not a run directory (no meta), and has "
                             "none" % p)
        runs.extend(sub)
    return runs


def mode_mean(runs, mode, key):
    """The mean of key over the runs of mode; None if no run has it, inf
    if any run has it None where None means never (t90)."""
    vals = [r[key] for r in runs if r["mode"] == mode]
    if not vals:
        return None
    if any(v is None for v in vals):
        return math.inf
    return sum(vals) / len(vals)


def goal_lines(runs):
    """The goal lines, and their verdicts as a dict."""
    lines, verdict = [], {}
    off = mode_mean(runs, "damon-perf", "offset_pp")
    if off is None:
        lines.append("GOAL damon-perf-offset: n/a (no damon-perf run)")
        verdict["damon-perf-offset"] = None
    else:
        goal = [r["goal"] for r in runs if r["mode"] == "damon-perf"][0]
        std = mode_mean(runs, "damon-perf", "std_pp")
        ok = abs(off) <= OFFSET_PP
        lines.append("GOAL damon-perf-offset: %s (mean offset %+.2f pp "
                     "from the goal %.2f %%, std %.2f pp; limit %.1f pp)" %
                     ("met" if ok else "missed", off, goal * 100, std,
                      OFFSET_PP))
        verdict["damon-perf-offset"] = ok
    tp = mode_mean(runs, "damon-perf", "t90")
    tn = mode_mean(runs, "numab", "t90")
    if tp is None or tn is None:
        lines.append("GOAL damon-perf-vs-numab: n/a (no %s run)" %
                     " and no ".join(m for m, t in (("damon-perf", tp),
                                                    ("numab", tn))
                                     if t is None))
        verdict["damon-perf-vs-numab"] = None
    else:
        ok = tp < tn
        lines.append("GOAL damon-perf-vs-numab: %s (time to 90 %%: "
                     "damon-perf %s, numab %s)" %
                     ("met" if ok else "missed", fmt_s(tp), fmt_s(tn)))
        verdict["damon-perf-vs-numab"] = ok
    return lines, verdict


def fmt_s(v):
    if v is None or v == math.inf:
        return "never"
    return "%.2f s" % v


def fmt(v, f="%.2f"):
    if v is None:
        return "-"
    if v == math.inf:
        return "never"
    return f % v


def mode_key(r):
    m = r["mode"]
    return (MODES.index(m) if m in MODES else len(MODES), m, r["run"])


def markdown(runs, lines):
    none_aps = mode_mean(runs, "none", "accesses_per_s")
    out = ["# Tiering loop: the hot set's share on the fast node", "",
           "| run | mode | period | goal % | t90 s | t_goal s | steady from s "
           "| offset pp | std pp | end % | cold on fast % | hot moves/page "
           "| cold moves/page | kdamond Minsn/s | kdamond CPU % "
           "| accesses/s rel. none | promoted | demoted | hot PFN runs |",
           "|" + "---|" * 19]
    for r in sorted(runs, key=mode_key):
        vm = r["vmstat"]
        promoted = vm.get("pgpromote_success")
        demoted = sum(vm.get(k) or 0 for k in
                      ("pgdemote_kswapd", "pgdemote_direct",
                       "pgdemote_khugepaged", "pgdemote_proactive"))
        rel = (r["accesses_per_s"] / none_aps
               if r["accesses_per_s"] and none_aps else None)
        out.append("| %s | %s | %s | %.2f | %s | %s | %.1f | %+.2f | %.2f "
                   "| %.2f | %.2f | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                       r["run"], r["mode"], r["period"] or "-",
                       r["goal"] * 100, fmt(r["t90"]), fmt(r["t_goal"]),
                       r["steady_from"], r["offset_pp"], r["std_pp"],
                       r["share_end"] * 100, r["cold_fast_end"] * 100,
                       fmt(r["hot_moves_per_page"], "%.3f"),
                       fmt(r["cold_moves_per_page"], "%.3f"),
                       fmt(r["kdamond_ips"] / 1e6
                           if r["kdamond_ips"] is not None else None),
                       fmt(r["kdamond_cpu_pct"]), fmt(rel, "%.3f"),
                       promoted if promoted is not None else "-",
                       demoted if vm else "-",
                       fmt(r["hot_pfn_runs"], "%d")))
    out += ["", "Shares in % of the hot set's pages (move_pages() at each "
            "report); t in s since the mode was switched on; offset: mean "
            "of share - goal over the steady window (from min(t_goal, "
            "T/2)); kdamond Minsn/s: its CPU time in the guest's "
            "instruction-counting clock; promoted: pgpromote_success "
            "(NUMA balancing's promotions; DAMON's migrations are not "
            "counted there); hot PFN runs: runs of consecutive frames of "
            "the hot set when placed (1: one block; paddr schemes migrate "
            "physical ranges).", ""]
    out += ["- " + l for l in lines]
    return "\n".join(out) + "\n"


def plot(runs, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("tiering: no matplotlib, no %s" % path, file=sys.stderr)
        return False
    fig, (ax, axc) = plt.subplots(2, 1, figsize=(8, 7), sharex=True,
                                  gridspec_kw={"height_ratios": [3, 1.4]})
    per_mode = {}
    for r in runs:
        per_mode[r["mode"]] = per_mode.get(r["mode"], 0) + 1
    for r in sorted(runs, key=mode_key):
        label = r["mode"] if per_mode[r["mode"]] == 1 else \
            "%s (%s)" % (r["mode"], r["run"])
        line, = ax.plot(r["t"], [s * 100 for s in r["share"]], marker=".",
                        label=label)
        axc.plot(r["t"], [s * 100 for s in r["cold_share"]], marker=".",
                 color=line.get_color())
    for g in sorted({r["goal"] for r in runs}):
        ax.axhline(g * 100, linestyle="--", color="grey", linewidth=1,
                   label="goal %.2f %%" % (g * 100))
    ax.axhline(T90 * 100, linestyle=":", color="lightgrey", linewidth=1)
    axc.set_xlabel("s since the mode was switched on")
    axc.set_ylabel("cold set on\nthe fast node, %")
    axc.grid(True, alpha=0.3)
    ax.set_ylabel("hot set on the fast node, %")
    ax.set_ylim(-2, 102)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="lower right", fontsize="small")
    ax.set_title("Tiering loop: hot set placement over time")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def report(run_dirs, results):
    runs = [analyse_run(d) for d in run_dirs]
    lines, verdict = goal_lines(runs)
    os.makedirs(results, exist_ok=True)
    with open(os.path.join(results, "tiering.md"), "w") as f:
        f.write(markdown(runs, lines))

    def clean(v):
        if isinstance(v, float) and math.isinf(v):
            return None
        return v
    doc = {"runs": [{k: clean(v) for k, v in r.items()} for r in runs],
           "goals": verdict, "goal_lines": lines}
    with open(os.path.join(results, "tiering.json"), "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
    plot(runs, os.path.join(results, "tiering.png"))
    for l in lines:
        print(l)
    return runs, verdict


#
# Self-test
#

def write_run(d, mode, goal_bp, shares, hot_pages=1000, cold_pages=3000,
              mark_ns=2_000_000_000, hot_moves=1000, cold_moves=0,
              kdamond_ns=None, window_ns=10_000_000_000, cold_fast=0,
              accesses=None, before=None):
    """A synthetic run: shares[i] is the hot share at i s after the mark."""
    os.makedirs(d)
    with open(os.path.join(d, "meta"), "w") as f:
        f.write("mode %s\nperiod %d\ngoal_bp %d\nwindow_ns %d\n" %
                (mode, 256 if mode == "damon-perf" else 0, goal_bp,
                 window_ns))
        if kdamond_ns is not None:
            f.write("kdamond_ns %d\n" % kdamond_ns)
        f.write("vmstat_pgpromote_success %d\nvmstat_pgdemote_kswapd 0\n"
                % (hot_moves if mode == "numab" else 0))
    with open(os.path.join(d, "share"), "w") as f:
        if before is not None:
            f.write("0 %d %d 0 %d\n" % (round(before * hot_pages), hot_pages,
                                        cold_pages))
        for i, s in enumerate(shares):
            f.write("%d %d %d %d %d\n" % (mark_ns + i * 1_000_000_000,
                                          round(s * hot_pages), hot_pages,
                                          cold_fast, cold_pages))
    end_ns = mark_ns + (len(shares) - 1) * 1_000_000_000
    with open(os.path.join(d, "summary"), "w") as f:
        f.write("hot_pages %d\ncold_pages %d\nhot_moves %d\ncold_moves %d\n"
                "mark_ns %d\nend_ns %d\naccesses %d\nqueries %d\n"
                "query_ns_total %d\n" %
                (hot_pages, cold_pages, hot_moves, cold_moves, mark_ns,
                 end_ns, accesses if accesses is not None else 10 ** 9,
                 len(shares) + 1, 5_000_000 * (len(shares) + 1)))


def close(a, b, eps=1e-6):
    return a is not None and b is not None and abs(a - b) <= eps


def selftest():
    tmp = tempfile.mkdtemp(prefix="tiering-selftest.")
    try:
        root = os.path.join(tmp, "runs")
        # damon-perf: 0, .3, .6, .9, .98 then .985 for 6 more points (T=10)
        perf = [0.0, 0.3, 0.6, 0.9, 0.98] + [0.985] * 6
        write_run(os.path.join(root, "perf"), "damon-perf", 9900, perf,
                  hot_moves=1100, kdamond_ns=500_000_000,
                  window_ns=10_000_000_000, accesses=9 * 10 ** 9,
                  before=0.0)
        # numab: 0, .2, .5, .8, .95, ...: t90 = 3 + (.9-.8)/(.95-.8)
        numab = [0.0, 0.2, 0.5, 0.8, 0.95, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]
        write_run(os.path.join(root, "numab"), "numab", 9900, numab,
                  hot_moves=1000, accesses=8 * 10 ** 9)
        # abit: reaches the goal (0.99) at t=2 exactly: steady from 2
        abit = [0.5, 0.9, 0.99, 1.0, 0.98, 1.0, 0.98, 1.0, 0.98, 1.0, 0.98]
        write_run(os.path.join(root, "abit"), "damon-abit", 9900, abit,
                  hot_moves=2500, kdamond_ns=1_000_000_000,
                  window_ns=10_000_000_000, accesses=9.5 * 10 ** 9)
        # none: never moves
        write_run(os.path.join(root, "none"), "none", 9900, [0.0] * 11,
                  hot_moves=0, accesses=10 * 10 ** 9, cold_fast=300)
        out = os.path.join(tmp, "results")
        runs, verdict = report(find_runs([root]), out)
        by = {r["mode"]: r for r in runs}

        p = by["damon-perf"]
        assert close(p["t90"], 3.0), p["t90"]
        assert p["t_goal"] is None
        assert close(p["steady_from"], 5.0), p["steady_from"]
        # window t = 5..10: six points of .985: offset -0.5 pp, std 0
        assert p["steady_points"] == 6, p["steady_points"]
        assert close(p["offset_pp"], -0.5), p["offset_pp"]
        assert close(p["std_pp"], 0.0), p["std_pp"]
        assert close(p["hot_moves_per_page"], 1.1)
        assert close(p["kdamond_ips"], 5e7)
        assert close(p["kdamond_cpu_pct"], 5.0)
        assert close(p["accesses_per_s"], 9e8)
        assert p["share_before_mark"] == 0.0
        assert close(p["share_end"], 0.985)

        n = by["numab"]
        assert close(n["t90"], 3 + 0.1 / 0.15), n["t90"]
        assert close(n["t_goal"], 4 + 0.04 / 0.05), n["t_goal"]
        # t_goal 4.8 < T/2 5: steady from 4.8, points t = 5..10, all 1.0
        assert close(n["steady_from"], 4.8)
        assert n["steady_points"] == 6
        assert close(n["offset_pp"], 1.0), n["offset_pp"]
        assert n["kdamond_ips"] is None

        a = by["damon-abit"]
        assert close(a["t90"], 1.0) and close(a["t_goal"], 2.0)
        # window t = 2..10: .99 1 .98 1 .98 1 .98 1 .98
        w = [0.99, 1.0, 0.98, 1.0, 0.98, 1.0, 0.98, 1.0, 0.98]
        mo = sum((s - 0.99) * 100 for s in w) / len(w)
        sd = math.sqrt(sum(((s - 0.99) * 100 - mo) ** 2 for s in w) / len(w))
        assert a["steady_points"] == 9
        assert close(a["offset_pp"], mo) and close(a["std_pp"], sd)
        assert close(a["hot_moves_per_page"], 2.5)

        z = by["none"]
        assert z["t90"] is None and z["t_goal"] is None
        assert close(z["offset_pp"], -99.0)
        assert close(z["cold_fast_end"], 0.1)

        assert verdict == {"damon-perf-offset": True,
                           "damon-perf-vs-numab": True}, verdict
        lines, _ = goal_lines(runs)
        assert lines[0].startswith("GOAL damon-perf-offset: met (mean "
                                   "offset -0.50 pp"), lines[0]
        assert lines[1] == ("GOAL damon-perf-vs-numab: met (time to 90 %: "
                            "damon-perf 3.00 s, numab 3.67 s)"), lines[1]
        # missed both: perf 3 pp under, never at 90 %
        write_run(os.path.join(tmp, "slow"), "damon-perf", 9900,
                  [0.0, 0.5, 0.8, 0.85, 0.87, 0.88, 0.89, 0.89, 0.89],
                  kdamond_ns=0)
        slow = analyse_run(os.path.join(tmp, "slow"))
        assert slow["t90"] is None
        lines, v = goal_lines([slow, n])
        assert v == {"damon-perf-offset": False,
                     "damon-perf-vs-numab": False}, v
        assert "damon-perf never" in lines[1], lines[1]
        # no numab run
        lines, v = goal_lines([p])
        assert v["damon-perf-vs-numab"] is None and "n/a" in lines[1]

        md = open(os.path.join(out, "tiering.md")).read()
        assert md.count("\n| ") == 5, md     # header + four runs
        doc = json.load(open(os.path.join(out, "tiering.json")))
        assert len(doc["runs"]) == 4 and doc["goals"] == verdict
        png = os.path.join(out, "tiering.png")
        try:
            import matplotlib  # noqa: F401
            assert os.path.getsize(png) > 1000
        except ImportError:
            pass
        # the relative throughput column: perf 9e8 / none 1e9
        assert "| 0.900 |" in md, md
        print("tiering: selftest passed")
    finally:
        shutil.rmtree(tmp)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-o", "--results", default=".",
                    help="where tiering.md, .json and .png go (.)")
    ap.add_argument("--selftest", action="store_true")
    ap.add_argument("runs", nargs="*")
    a = ap.parse_args()
    if a.selftest:
        selftest()
        return 0
    if not a.runs:
        ap.error("no run directories")
    try:
        report(find_runs(a.runs), a.results)
    except (OSError, ValueError) as e:
        print("tiering: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
