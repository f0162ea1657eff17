#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Accuracy of DAMON's access monitoring: does it find the memory that a
workload really uses?

The workload (bench/eval/evalwl.c) writes its ground truth, the probability
that an access hits each byte range, and DAMON's view of the workload comes
as snapshots of its regions.  This script scores each snapshot against the
truth, each run over its snapshots, and each configuration over its runs.

usage: accuracy.py RESULTS [--out DIR] [--goal-regions N] [--warmup S]
       accuracy.py --selftest

Input: RESULTS holds one directory per run (found at any depth: every
directory that has a file named meta, snapshots or layout), with:

  layout, events, zipf_weights   written by evalwl, see the comment at the
                                 top of evalwl.c; layout lines:
                                   start_ns NS
                                   phase P ROLE START END WEIGHT  (hotcold)
                                   zipf NAME START END            (zipf)
                                 events lines: start NS, swap NS, end NS
                                 zipf_weights: one little-endian double per
                                 page of the zipf range, in address order
  snapshots   "T START END NR_ACCESSES AGE" per line, decimal: T is the
              guest's CLOCK_MONOTONIC ns of the snapshot, the same for all
              the regions of one snapshot; the target process's regions,
              [START, END) in bytes, in address order
  meta        "key value" per line: workload hotcold|zipf, source abit|insn,
              period N (0 for abit), run K, kdamond_ns N, sampling_ns N,
              window_ns N, samples N, nr_regions_max N; for the cost
              table also overflows N (the test PMU's), trace 0|1 (1 if
              absent), seconds S (else the layout's), accesses N (else
              wl.out's "evalwl: done N").  The guest runs
              with QEMU's -icount shift=0, so one ns is one instruction:
              kdamond_ns is the kdamond's CPU time in the measured window
              (window_ns long) and sampling_ns the time spent in the PMU
              overflow handlers, both as instructions.  Other keys are
              kept in the JSON; trace_lost N > 0 earns a warning.
              source none (accuracy-guest.sh): the workload without DAMON,
              the baseline of the cost table's throughput.

A run that lacks a file, or whose files don't parse, is skipped with a
warning on stderr.  Runs without snapshots (meta trace 0, or source none)
are left out of the precision tables without one, and are in the cost
table.

Per snapshot (truth of the phase the snapshot's T falls in):
  precision  rank the regions by NR_ACCESSES, descending (ties: larger AGE
             first), and take the top H bytes, H being the size of the true
             hot set; precision = the truly hot bytes among them / H.
             - hotcold's hot set is the "hot" range of the phase; zipf's is
               the smallest set of pages that holds 80% of the access
               probability (heaviest pages first, ties by address).
             - Regions with NR_ACCESSES 0 are never taken: DAMON did not see
               them accessed, so they can't be ranked.  When the regions
               with accesses add up to less than H, the rest of the H bytes
               count as misses (so all-zero snapshots score 0).
             - The last region taken usually has more bytes than are still
               needed: its hot bytes count in proportion to the part of it
               taken, since its rank says nothing about where in it they lie
               (taking it whole would let one big, mostly cold region sink
               a snapshot whose other regions are right).
             - Regions are clipped to the workload's buffers: bytes outside
               them (text, stack, heap, evalwl's own tables) have no known
               truth and are neither hot nor cold, they count for nothing.
  coverage   the access probability that falls in regions with
             NR_ACCESSES > 0 (the truth's weights sum to 1).
  capture@K, precision@K, recall@K (the memory-tiering literature's), for
             K = 0.5, 1 and 2 x H80 bytes.  H80: the bytes of the fewest
             pages that hold 80% of the accesses, densest pages first (the
             weights' per-byte density), of the last set the pages it takes
             (rounded up).  80% counts as reached 2^-24 early: evalwl's
             hotcold weights are multiples of 2^-23, and its hot set holds
             0.79999995, so H80 is the hot set; zipf's H80 is precision's
             hot set, but for a page in the rare case that its 80% falls
             within 2^-24.
             - DAMON's top K bytes: the regions precision takes (NR_ACCESSES
               > 0, in its order: NR_ACCESSES, larger AGE, lower START),
               their known bytes only, until K, the last region in part
               (its bytes assumed uniform).  Fewer than K bytes if those
               regions hold fewer: then DAMON has only those.
             - The oracle's top K bytes: the K known bytes of highest
               density.  Of a tie that only partly fits (a uniform set
               larger than what is left of K), each byte is in by (what
               fits) / (its size), so no order among equal bytes counts:
               with perfect regions, K = 0.5 x H80 in hotcold's uniform hot
               set gives capture 1 but precision and recall 0.5.
             capture@K = the access probability in DAMON's top K bytes / in
             the oracle's; precision@K = the share of DAMON's top K bytes
             in the oracle's (NaN when DAMON has none); recall@K = the
             share of the oracle's top K bytes in DAMON's.  With K bytes on
             both sides precision = recall; they part when DAMON has fewer.

Per run: the medians of precision, coverage, capture@0.5x, @1x, @2x,
precision@1x and recall@1x over the steady-state snapshots: hotcold
[start + warmup, swap) and [swap + recovery, end), zipf [start + warmup,
end).  recovery (hotcold): from the swap to the first snapshot at or after
it whose precision is at least 0.8 x the median precision before the swap;
NaN if none (then there is no post-swap steady state).  regain (hotcold):
from the swap to the first snapshot at or after it whose capture@1x is at
least 0.9; NaN ("never") if none.  Costs: kdamond_ns / window_ns (a
fraction of one CPU) and kdamond_ns / window_s (instructions a second), the
same for sampling_ns.

Per configuration (workload, source, period, nr_regions_max): the median
and min-max over its runs of every per-run figure (NaNs left out, and
counted).

Output, to DIR (default RESULTS): accuracy.md (the table, also printed on
stdout), accuracy.json (everything; per snapshot, each run's "series":
[seconds from the start, phase, precision, coverage, capture@0.5x, @1x,
@2x, precision@1x, recall@1x]; per run h80_bytes, capture_0.5x,
capture_1x, capture_2x, precision_1x, recall_1x, regain_s), accuracy.png
(precision against cost, a panel per workload) and precision-time.png
(precision around the swap, the median run of each hotcold configuration).
The plots need matplotlib (Debian's python3-matplotlib), and are skipped
with a warning without it; the rest needs nothing beyond the standard
library.

The cost table (after the goal lines; "cost" in the JSON), over every run
with a meta, snapshots or not, per workload, seconds, nr_regions_max,
aggregation, source, period and trace: the kdamond's instructions a
second, the test PMU's interrupts a second (its overflows: timer callbacks
whose period ran out, with or without a record; testpmu/README.md section
4) and samples a second (records), medians [min-max]; the workload's
accesses a second (accesses over its loop's time, events' end - start),
and throughput: the configuration's mean accesses/s over the mean of the
source none runs of the same workload and seconds, those of the same
seeds (the layout's seed, else the run number) when every seed of the
configuration has one ("same seeds": each run's seed's mean, averaged over
the configuration's runs), else of all of them ("all seeds");
[min-max] of each run's accesses/s over its baseline (its seed's mean, or
the mean of all).  whole cost = 1 - throughput.  Under icount every
instruction that monitoring costs (the kdamond, every interrupt, DAMON's
handler, the TLB flushes of the Accessed bits) is one the workload does not
run, so this is the whole cost.  n/a without a none run.

--goal-regions N: for each workload and each nr_regions_max >= N that has
an abit configuration, whether the most precise insn configuration of that
nr_regions_max whose cost (kdamond + sampling, instructions/s, medians) is
at most 0.1 x abit's kdamond cost has a median precision at least abit's:
a "goal" line each, ending in "met" or "missed".
"""

import argparse
import array
import bisect
import importlib.util
import json
import math
import os
import statistics
import sys
import tempfile

NAN = float('nan')
HOT_MASS = 0.8          # zipf's hot set: the pages holding 80% of accesses
RECOVERY_FRACTION = 0.8  # recovered: precision >= 0.8 x the pre-swap median
GOAL_COST_FRACTION = 0.1  # the goal's budget: 0.1 x abit's kdamond cost
NS = 1e9
TOPK_FACTORS = (0.5, 1, 2)  # capture@K etc. for K = these x H80
REGAIN_CAPTURE = 0.9    # regained: capture@1x >= 0.9 after the swap
MASS_SLACK = 2.0 ** -24  # H80 reached this early: half evalwl's 2^-23 step
DENSITY_TIE = 1e-9      # densities this close (relative) are a tie


def warn(msg):
    print('accuracy: warning: ' + msg, file=sys.stderr)


class RunError(Exception):
    """A run whose files are missing or malformed: it is skipped."""


# ---------------------------------------------------------------- truth

class Truth:
    """The ground truth of one phase: a piecewise-uniform access density.

    segs: (start, end, weight, hot) with weight the probability that an
    access hits [start, end), spread uniformly over it, and hot whether the
    range belongs to the true hot set.  Ranges must not overlap; gaps between
    them are unknown memory.  span(a, b) answers, for [a, b), the access
    weight, the hot bytes and the known bytes (those in some range) with
    two binary searches, from prefix sums at the range boundaries.
    """

    def __init__(self, segs):
        segs = sorted(s for s in segs if s[1] > s[0])
        if not segs:
            raise RunError('no ranges in the truth')
        self.xs = [segs[0][0]]
        self.dens = []  # (weight/byte, hot 0/1, known 0/1) on [xs[i], xs[i+1])
        for start, end, weight, hot in segs:
            if start < self.xs[-1]:
                raise RunError('overlapping ranges at %d' % start)
            if start > self.xs[-1]:
                self.dens.append((0.0, 0, 0))
                self.xs.append(start)
            self.dens.append((weight / (end - start), 1 if hot else 0, 1))
            self.xs.append(end)
        self.cum = ([0.0], [0], [0])
        for i, d in enumerate(self.dens):
            length = self.xs[i + 1] - self.xs[i]
            for k in range(3):
                self.cum[k].append(self.cum[k][-1] + d[k] * length)
        self.hot_bytes = self.cum[1][-1]
        self.total_weight = self.cum[0][-1]
        self._levels = None
        self._topk = {}

    def _at(self, x):
        """The three prefix sums at address x."""
        xs = self.xs
        if x <= xs[0]:
            return (0.0, 0, 0)
        if x >= xs[-1]:
            return tuple(c[-1] for c in self.cum)
        i = bisect.bisect_right(xs, x) - 1
        d = self.dens[i]
        return tuple(self.cum[k][i] + d[k] * (x - xs[i]) for k in range(3))

    def span(self, a, b):
        lo, hi = self._at(a), self._at(b)
        return hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]

    def levels(self):
        """The known ranges grouped by density, densest first: a list of
        (density, bytes, weight, indexes into dens).  Densities within a
        relative DENSITY_TIE of the level's first are one level (a tie)."""
        if self._levels is None:
            known = sorted((i for i, d in enumerate(self.dens) if d[2]),
                           key=lambda i: (-self.dens[i][0], i))
            levels = []
            for i in known:
                d = self.dens[i][0]
                length = self.xs[i + 1] - self.xs[i]
                if not levels or d < levels[-1][0] * (1 - DENSITY_TIE):
                    levels.append([d, 0, 0.0, []])
                levels[-1][1] += length
                levels[-1][2] += d * length
                levels[-1][3].append(i)
            self._levels = [tuple(lv) for lv in levels]
        return self._levels

    def topk(self, k):
        """The oracle's top k bytes, as a TopK (cached)."""
        if k not in self._topk:
            self._topk[k] = TopK(self, k)
        return self._topk[k]

    def mass_bytes(self, mass, page_size):
        """H80 for mass 0.8: the bytes of the fewest pages that hold mass
        of the access probability, densest pages first; of the level where
        the mass is reached, the pages needed (rounded up).  The mass is
        reached MASS_SLACK early: evalwl's hotcold weights are multiples of
        2^-23, so its "80%" hot set holds 0.79999995."""
        need = (mass - MASS_SLACK) * self.total_weight
        acc, size = 0.0, 0
        for d, nbytes, weight, _ in self.levels():
            if acc >= need:
                break
            if acc + weight >= need and d > 0:
                pages = math.ceil((need - acc) / (d * page_size) - 1e-9)
                return size + min(nbytes, max(pages, 0) * page_size)
            acc += weight
            size += nbytes
        return size


class TopK:
    """The oracle's top k bytes of a Truth: the k known bytes of highest
    density.  A level of equal density that only partly fits is in
    fractionally: each of its bytes is in by (the bytes of it that fit) /
    (its bytes), so that no order among equal bytes is assumed.

    bytes: min(k, the known bytes); weight: the access probability in the
    top k bytes; inside(a, b): how much of [a, b) is in (bytes, fractional
    bytes counted by their fraction)."""

    def __init__(self, truth, k):
        self.truth = truth
        self.k = k
        self.share = [0.0] * len(truth.dens)  # per byte, of each range
        self.bytes, self.weight = 0, 0.0
        for _, nbytes, weight, idx in truth.levels():
            if self.bytes >= k:
                break
            f = min(1.0, (k - self.bytes) / nbytes)
            for i in idx:
                self.share[i] = f
            self.bytes += nbytes * f
            self.weight += weight * f
        self.cum = [0.0]
        for i, f in enumerate(self.share):
            self.cum.append(self.cum[-1]
                            + f * (truth.xs[i + 1] - truth.xs[i]))

    def _at(self, x):
        xs = self.truth.xs
        if x <= xs[0]:
            return 0.0
        if x >= xs[-1]:
            return self.cum[-1]
        i = bisect.bisect_right(xs, x) - 1
        return self.cum[i] + self.share[i] * (x - xs[i])

    def inside(self, a, b):
        return self._at(b) - self._at(a)


def rank_regions(truth, regions):
    """DAMON's ranking of one snapshot: the regions (start, end,
    nr_accesses, age) with NR_ACCESSES > 0 that hold known bytes, hottest
    first: NR_ACCESSES descending, then AGE descending, then START
    ascending (the ranking is then deterministic).  Each as (start, end,
    weight, hot bytes, known bytes) of the truth."""
    ranked = []
    for r in regions:
        if r[2] > 0:
            weight, hot, known = truth.span(r[0], r[1])
            if known > 0:
                ranked.append(((-r[2], -r[3], r[0]),
                               (r[0], r[1], weight, hot, known)))
    ranked.sort(key=lambda x: x[0])
    return [x[1] for x in ranked]


def snapshot_metrics(truth, regions, ranked=None):
    """(precision, coverage) of one snapshot: regions are (start, end,
    nr_accesses, age) tuples (or ranked, rank_regions' answer for them).
    See the module's docstring."""
    if ranked is None:
        ranked = rank_regions(truth, regions)
    coverage = math.fsum(r[2] for r in ranked)
    need = truth.hot_bytes
    found = 0.0
    for _, _, _, hot, known in ranked:
        if need <= 0:
            break
        if known <= need:
            found += hot
            need -= known
        else:
            found += hot * need / known
            need = 0
    precision = found / truth.hot_bytes if truth.hot_bytes > 0 else NAN
    return precision, coverage


def topk_metrics(truth, regions, ks, ranked=None):
    """[(capture, precision, recall), ...] of one snapshot, one for each K
    in ks (bytes): DAMON's top K bytes (rank_regions' order, the known
    bytes of each region, the last one taken in part, its bytes assumed
    uniform) against the oracle's (Truth.topk).  capture: their access
    probability / the oracle's; precision: the share of DAMON's top K bytes
    that is in the oracle's (NaN if DAMON has none); recall: the share of
    the oracle's top K bytes that DAMON's cover.  When DAMON's regions with
    accesses hold fewer than K known bytes, it has only those: precision
    is over them, recall and capture count the rest as missed."""
    if ranked is None:
        ranked = rank_regions(truth, regions)
    out = []
    for k in ks:
        top = truth.topk(k)
        need = k
        weight = inside = taken = 0.0
        for start, end, w, _, known in ranked:
            if need <= 0:
                break
            if known <= need:
                f = 1.0
                need -= known
            else:
                f = need / known
                need = 0
            weight += w * f
            inside += top.inside(start, end) * f
            taken += known * f
        out.append((weight / top.weight if top.weight > 0 else NAN,
                    inside / taken if taken > 0 else NAN,
                    inside / top.bytes if top.bytes > 0 else NAN))
    return out


# ---------------------------------------------------------------- input

def read_kv(path):
    """'key value...' lines into a dict of key -> rest of the line."""
    out = {}
    with open(path) as f:
        for line in f:
            parts = line.split(None, 1)
            if parts:
                out[parts[0]] = parts[1].strip() if len(parts) > 1 else ''
    return out


def read_layout(path):
    """The layout's header keys, hotcold's phases, zipf's range."""
    head, phases, zipf = {}, {}, None
    with open(path) as f:
        for n, line in enumerate(f, 1):
            p = line.split()
            if not p:
                continue
            try:
                if p[0] == 'phase':
                    phases.setdefault(int(p[1]), []).append(
                        (p[2], int(p[3]), int(p[4]), float(p[5])))
                elif p[0] == 'zipf':
                    zipf = (int(p[2]), int(p[3]))
                elif p[0] != 'buffer' and len(p) == 2:
                    head[p[0]] = p[1]
            except (IndexError, ValueError):
                raise RunError('%s:%d: malformed: %r' % (path, n, line))
    return head, phases, zipf


def read_events(path):
    ev = {}
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) == 2:
                ev.setdefault(p[0], int(p[1]))
    return ev


def read_snapshots(path):
    """[(T, [(start, end, nr, age), ...]), ...] sorted by T."""
    snaps = {}
    bad = 0
    with open(path) as f:
        for line in f:
            p = line.split()
            if not p:
                continue
            try:
                t, start, end, nr, age = (int(x) for x in p)
            except ValueError:
                bad += 1
                continue
            if end <= start:
                bad += 1
                continue
            snaps.setdefault(t, []).append((start, end, nr, age))
    if bad:
        warn('%s: %d malformed lines skipped' % (path, bad))
    return sorted(snaps.items())


def zipf_truth(path, start, end, page_size):
    """zipf's Truth: a range per page, the hot ones the fewest pages that
    hold HOT_MASS of the probability."""
    w = array.array('d')
    with open(path, 'rb') as f:
        w.frombytes(f.read())
    if sys.byteorder == 'big':
        w.byteswap()
    npages = (end - start) // page_size
    if len(w) != npages:
        raise RunError('%s: %d weights for %d pages' % (path, len(w), npages))
    total = math.fsum(w)
    if abs(total - 1) > 1e-6:
        warn('%s: weights sum to %g, normalized' % (path, total))
    hot = [False] * npages
    acc = 0.0
    for i in sorted(range(npages), key=lambda i: (-w[i], i)):
        if acc >= HOT_MASS * total * (1 - 1e-12):
            break
        hot[i] = True
        acc += w[i]
    return Truth([(start + i * page_size, start + (i + 1) * page_size,
                   w[i] / total, hot[i]) for i in range(npages)])


def hotcold_truths(phases):
    truths = {}
    for p, ranges in phases.items():
        truths[p] = Truth([(s, e, w, role == 'hot')
                           for role, s, e, w in ranges])
        if abs(truths[p].total_weight - 1) > 1e-6:
            warn('phase %d weights sum to %g' % (p, truths[p].total_weight))
    return truths


def meta_num(meta, key, default=None):
    v = meta.get(key)
    if v is None or v == '':
        if default is None:
            raise RunError('meta has no %s' % key)
        return default
    try:
        return int(v)
    except ValueError:
        try:
            return float(v)
        except ValueError:
            raise RunError('meta %s is not a number: %r' % (key, v))


# ---------------------------------------------------------------- per run

def median(values):
    v = [x for x in values if not math.isnan(x)]
    return statistics.median(v) if v else NAN


def analyze_run(rundir, warmup_ns):
    """One run's figures, or RunError."""
    files = {}
    for name in ('meta', 'layout', 'events', 'snapshots'):
        files[name] = os.path.join(rundir, name)
        if not os.path.isfile(files[name]):
            raise RunError('no %s' % name)
    meta = read_kv(files['meta'])
    workload = meta.get('workload')
    source = meta.get('source')
    if workload not in ('hotcold', 'zipf') or not source:
        raise RunError('meta: workload %r, source %r' % (workload, source))
    head, phases, zrange = read_layout(files['layout'])
    if head.get('mode', workload) != workload:
        raise RunError('meta says %s, layout %s' % (workload, head['mode']))
    page_size = int(head.get('page_size', 4096))
    ev = read_events(files['events'])
    start = ev.get('start', int(head.get('start_ns', -1)))
    if start < 0:
        raise RunError('no start time in events or layout')
    swap = ev.get('swap')

    if workload == 'zipf':
        if zrange is None:
            raise RunError('layout has no zipf line')
        zpath = os.path.join(rundir, 'zipf_weights')
        if not os.path.isfile(zpath):
            raise RunError('no zipf_weights')
        truths = {0: zipf_truth(zpath, zrange[0], zrange[1], page_size)}
        swap = None
    else:
        if 0 not in phases or 1 not in phases:
            raise RunError('layout lacks phase 0 or 1')
        truths = hotcold_truths(phases)
        if swap is None:
            warn('%s: no swap event: all snapshots scored as phase 0'
                 % rundir)

    snaps = read_snapshots(files['snapshots'])
    if not snaps:
        raise RunError('no snapshots')
    end = ev.get('end')
    if end is None:
        warn('%s: no end event: the last snapshot ends the run' % rundir)
        end = snaps[-1][0] + 1

    # H80 of each phase (hotcold's phases have the same set sizes)
    h80 = {ph: tr.mass_bytes(HOT_MASS, page_size)
           for ph, tr in truths.items()}
    series = []  # (T, phase, precision, coverage, capture@0.5x, @1x, @2x,
    #               precision@1x, recall@1x)
    i1 = TOPK_FACTORS.index(1)
    for t, regions in snaps:
        phase = 1 if swap is not None and t >= swap else 0
        truth = truths[phase]
        ranked = rank_regions(truth, regions)
        p, c = snapshot_metrics(truth, regions, ranked)
        tk = topk_metrics(truth, regions,
                          [f * h80[phase] for f in TOPK_FACTORS], ranked)
        series.append((t, phase, p, c) + tuple(x[0] for x in tk)
                      + tk[i1][1:])

    steady_from = start + warmup_ns
    pre = [s for s in series
           if steady_from <= s[0] < (end if swap is None else swap)]
    pre_prec = median(s[2] for s in pre)
    recovery = NAN
    post = []
    if swap is not None:
        if pre_prec > 0:
            target = RECOVERY_FRACTION * pre_prec
            for t, _, p, *_ in series:
                if t >= swap and p >= target:
                    recovery = (t - swap) / NS
                    break
        if not math.isnan(recovery):
            post = [s for s in series
                    if max(steady_from, swap + recovery * NS) <= s[0] < end]
    regain = NAN
    if swap is not None:
        for s in series:
            if s[0] >= swap and s[4 + i1] >= REGAIN_CAPTURE:
                regain = (s[0] - swap) / NS
                break
    steady = pre + post
    if not steady:
        warn('%s: no snapshot in the steady state' % rundir)

    lost = meta_num(meta, 'trace_lost', 0)
    if lost:
        warn('%s: %d trace events lost: snapshots may lack regions'
             % (rundir, lost))
    window = meta_num(meta, 'window_ns')
    kd = meta_num(meta, 'kdamond_ns')
    smp = meta_num(meta, 'sampling_ns', 0)
    per_s = NS / window if window > 0 else NAN
    return {
        'dir': rundir,
        'workload': workload,
        'source': source,
        'period': meta_num(meta, 'period', 0),
        'nr_regions_max': meta_num(meta, 'nr_regions_max', 0),
        'aggr_us': meta_num(meta, 'aggr_us', 0),
        'run': meta.get('run', os.path.basename(rundir)),
        'start_ns': start, 'swap_ns': swap, 'end_ns': end,
        'snapshots': len(series),
        'trace_lost': lost,
        'meta': meta,
        'steady_snapshots': len(steady),
        'precision': median(s[2] for s in steady),
        'coverage': median(s[3] for s in steady),
        'precision_pre_swap': pre_prec,
        'precision_post_swap': median(s[2] for s in post),
        'recovery_s': recovery if workload == 'hotcold' else NAN,
        'h80_bytes': h80[0],
        **{'capture_%gx' % f: median(s[4 + j] for s in steady)
           for j, f in enumerate(TOPK_FACTORS)},
        'precision_1x': median(s[4 + len(TOPK_FACTORS)] for s in steady),
        'recall_1x': median(s[5 + len(TOPK_FACTORS)] for s in steady),
        'regain_s': regain,
        'samples_per_s': meta_num(meta, 'samples', 0) * per_s,
        'kdamond_cpu': kd / window if window > 0 else NAN,
        'kdamond_ips': kd * per_s,
        'sampling_cpu': smp / window if window > 0 else NAN,
        'sampling_ips': smp * per_s,
        'cost_ips': (kd + smp) * per_s,
        'series': [[(s[0] - start) / NS] + list(s[1:]) for s in series],
    }


def find_runs(results):
    dirs = []
    for d, subdirs, files in os.walk(results):
        subdirs.sort()
        if {'meta', 'snapshots', 'layout'} & set(files):
            dirs.append(d)
    return dirs


# ---------------------------------------------------------------- configs

METRICS = ('samples_per_s', 'precision', 'coverage', 'recovery_s',
           'kdamond_cpu', 'kdamond_ips', 'sampling_cpu', 'sampling_ips',
           'cost_ips', 'precision_pre_swap', 'precision_post_swap',
           'capture_0.5x', 'capture_1x', 'capture_2x', 'precision_1x',
           'recall_1x', 'regain_s')


def config_key(run):
    return (run['workload'], run['source'], run['period'],
            run['nr_regions_max'], run['aggr_us'])


def sort_key(key):
    # abit before insn, then by period, within a workload
    return (key[0], not key[1].startswith('abit'), key[1], key[2], key[3], key[4])


def median_stat(v):
    """median, min and max of the values of v that are not NaN, and the
    number of NaNs"""
    ok = [x for x in v if not math.isnan(x)]
    return {'median': statistics.median(ok) if ok else NAN,
            'min': min(ok) if ok else NAN,
            'max': max(ok) if ok else NAN,
            'nan': len(v) - len(ok)}


def aggregate(runs):
    groups = {}
    for r in runs:
        groups.setdefault(config_key(r), []).append(r)
    configs = []
    for key in sorted(groups, key=sort_key):
        rs = groups[key]
        stats = {}
        for m in METRICS:
            stats[m] = median_stat([r[m] for r in rs])
        configs.append({'workload': key[0], 'source': key[1],
                        'period': key[2], 'nr_regions_max': key[3],
                        'aggr_us': key[4],
                        'runs': len(rs), 'stats': stats,
                        'run_dirs': [r['dir'] for r in rs]})
    return configs, groups


def fmt_stat(st, fmt, scale=1.0, nan_word='n/a'):
    """'median [min–max]', and how many runs had no value (NaN)."""
    if math.isnan(st['median']):
        return nan_word
    s = '%s [%s–%s]' % (fmt % (st['median'] * scale),
                        fmt % (st['min'] * scale), fmt % (st['max'] * scale))
    if st['nan']:
        s += ' (%d %s)' % (st['nan'], nan_word)
    return s


def table(configs):
    cols = ['workload', 'source', 'period', 'max regions', 'aggr ms',
            'samples/s',
            'precision', 'coverage', 'capture@1x', 'recovery s',
            'regain 0.9 s', 'kdamond Minsn/s',
            'sampling Minsn/s', 'runs']
    lines = ['| ' + ' | '.join(cols) + ' |',
             '|' + '|'.join('---' for _ in cols) + '|']
    for c in configs:
        st = c['stats']
        hc = c['workload'] == 'hotcold'
        rec = fmt_stat(st['recovery_s'], '%.2f', nan_word='never') \
            if hc else '–'
        regain = fmt_stat(st['regain_s'], '%.2f', nan_word='never') \
            if hc else '–'
        row = [c['workload'], c['source'],
               str(c['period']) if c['period'] else '–',
               str(c['nr_regions_max']),
               '%g' % (c['aggr_us'] / 1000) if c['aggr_us'] else '–',
               fmt_stat(st['samples_per_s'], '%.0f'),
               fmt_stat(st['precision'], '%.3f'),
               fmt_stat(st['coverage'], '%.3f'),
               fmt_stat(st['capture_1x'], '%.3f'),
               rec, regain,
               fmt_stat(st['kdamond_ips'], '%.3g', 1e-6),
               fmt_stat(st['sampling_ips'], '%.3g', 1e-6),
               str(c['runs'])]
        lines.append('| ' + ' | '.join(row) + ' |')
    return lines


def goals(configs, min_regions):
    """The goal lines, and their figures for the JSON."""
    lines, out = [], []

    def med(c, m):
        return c['stats'][m]['median']

    with_abit = {(c['workload'], c['nr_regions_max']) for c in configs
                 if c['source'] == 'abit'}
    for wl, nr in sorted({(c['workload'], c['nr_regions_max'])
                          for c in configs} - with_abit):
        if nr >= min_regions:
            lines.append('goal %s max regions %d: no abit configuration to '
                         'compare with: n/a' % (wl, nr))
    for c in configs:
        if c['source'] != 'abit' or c['nr_regions_max'] < min_regions:
            continue
        wl, nr = c['workload'], c['nr_regions_max']
        a_prec, a_cost = med(c, 'precision'), med(c, 'kdamond_ips')
        budget = GOAL_COST_FRACTION * a_cost
        cands = [d for d in configs
                 if d['source'] == 'insn' and d['workload'] == wl
                 and d['nr_regions_max'] == nr
                 and d['aggr_us'] == c['aggr_us']
                 and med(d, 'cost_ips') <= budget
                 and not math.isnan(med(d, 'precision'))]
        best = max(cands, key=lambda d: (med(d, 'precision'),
                                         -med(d, 'cost_ips')), default=None)
        head = ('goal %s max regions %d%s: abit precision %.3f, kdamond '
                '%.3g Minsn/s; budget %.3g Minsn/s: '
                % (wl, nr, ', aggr %g ms' % (c['aggr_us'] / 1000)
                   if c['aggr_us'] else '',
                   a_prec, a_cost * 1e-6, budget * 1e-6))
        g = {'workload': wl, 'nr_regions_max': nr, 'aggr_us': c['aggr_us'],
             'abit_precision': a_prec,
             'abit_kdamond_ips': a_cost, 'budget_ips': budget}
        if best is None:
            g['met'] = False
            lines.append(head + 'no insn config at the same aggregation '
                         'within it: missed')
        else:
            met = med(best, 'precision') >= a_prec
            g.update(met=met, insn_period=best['period'],
                     insn_precision=med(best, 'precision'),
                     insn_cost_ips=med(best, 'cost_ips'))
            lines.append(head + 'best insn period %d precision %.3f at '
                         '%.3g Minsn/s: %s'
                         % (best['period'], med(best, 'precision'),
                            med(best, 'cost_ips') * 1e-6,
                            'met' if met else 'missed'))
        out.append(g)
    return lines, out


# ---------------------------------------------------------------- cost

def cost_run(rundir):
    """One run's cost figures, from its meta (and layout, events, wl.out),
    with snapshots or without; or RunError."""
    path = os.path.join(rundir, 'meta')
    if not os.path.isfile(path):
        raise RunError('no meta')
    meta = read_kv(path)
    workload, source = meta.get('workload'), meta.get('source')
    if workload not in ('hotcold', 'zipf') or not source:
        raise RunError('meta: workload %r, source %r' % (workload, source))
    head = {}
    if os.path.isfile(os.path.join(rundir, 'layout')):
        head = read_layout(os.path.join(rundir, 'layout'))[0]
    secs = meta.get('seconds') or head.get('seconds')
    if not secs:
        raise RunError('no seconds in meta or layout')
    try:
        secs = float(secs)
    except ValueError:
        raise RunError('seconds is not a number: %r' % secs)
    ev = {}
    if os.path.isfile(os.path.join(rundir, 'events')):
        ev = read_events(os.path.join(rundir, 'events'))
    loop_ns = ev['end'] - ev['start'] if 'start' in ev and 'end' in ev \
        else secs * NS
    acc = meta_num(meta, 'accesses', -1)
    if acc < 0 and os.path.isfile(os.path.join(rundir, 'wl.out')):
        with open(os.path.join(rundir, 'wl.out')) as f:
            for line in f:
                p = line.split()
                if p[:2] == ['evalwl:', 'done'] and len(p) == 3 \
                        and p[2].isdigit():
                    acc = int(p[2])
    window = meta_num(meta, 'window_ns')
    per_s = NS / window if window > 0 else NAN
    overflows = meta_num(meta, 'overflows', 0)
    samples = meta_num(meta, 'samples', 0)
    if source == 'none' and (overflows or samples):
        warn('%s: source none, but the PMU counted %d interrupts, %d '
             'records' % (rundir, overflows, samples))
    return {
        'dir': rundir, 'workload': workload, 'source': source,
        'seconds': secs,
        'nr_regions_max': meta_num(meta, 'nr_regions_max', 0),
        'aggr_us': meta_num(meta, 'aggr_us', 0),
        'period': meta_num(meta, 'period', 0),
        'trace': meta_num(meta, 'trace', 1),
        'seed': str(head.get('seed', meta.get('run', ''))),
        'kdamond_ips': meta_num(meta, 'kdamond_ns') * per_s,
        'interrupts_per_s': overflows * per_s,
        'samples_per_s': samples * per_s,
        'accesses_per_s': acc * NS / loop_ns if acc >= 0 and loop_ns > 0
        else NAN,
    }


COST_MEDIANS = ('kdamond_ips', 'interrupts_per_s', 'samples_per_s')


def cost_key(r):
    return (r['workload'], r['seconds'], r['nr_regions_max'], r['aggr_us'],
            r['source'], r['period'], r['trace'])


def mean_stat(values):
    ok = [x for x in values if not math.isnan(x)]
    return {'mean': statistics.fmean(ok) if ok else NAN,
            'min': min(ok) if ok else NAN, 'max': max(ok) if ok else NAN,
            'nan': len(values) - len(ok)}


def cost_configs(cruns):
    """The cost table's rows: per cost_key, the medians of COST_MEDIANS,
    the mean accesses/s, and the throughput against the none runs."""
    groups = {}
    for r in cruns:
        groups.setdefault(cost_key(r), []).append(r)
    nones = {}
    for r in cruns:
        if r['source'] == 'none' and not math.isnan(r['accesses_per_s']):
            nones.setdefault((r['workload'], r['seconds']), []).append(r)
    rows = []
    for key in sorted(groups, key=lambda k: (k[0], k[1], k[4] != 'none',
                                             k[2], k[3],
                                             not k[4].startswith('abit'),
                                             k[4], k[5], k[6])):
        rs = groups[key]
        stats = {}
        for m in COST_MEDIANS:
            stats[m] = median_stat([r[m] for r in rs])
        stats['accesses_per_s'] = mean_stat([r['accesses_per_s']
                                             for r in rs])
        ok = [r for r in rs if not math.isnan(r['accesses_per_s'])]
        base = nones.get(key[:2], [])
        by_seed = {}
        for n in base:
            by_seed.setdefault(n['seed'], []).append(n['accesses_per_s'])
        by_seed = {k: statistics.fmean(v) for k, v in by_seed.items()}
        same = bool(ok) and all(r['seed'] in by_seed for r in ok)
        thr = {'mean': NAN, 'min': NAN, 'max': NAN}
        baseline = None
        if base and ok:
            if same:
                # each run against its seed's none mean
                dens = [by_seed[r['seed']] for r in ok]
                seeds = {r['seed'] for r in ok}
                used = [n for n in base if n['seed'] in seeds]
            else:
                dens = [statistics.fmean(n['accesses_per_s']
                                         for n in base)] * len(ok)
                used = base
            ratios = [r['accesses_per_s'] / d for r, d in zip(ok, dens)]
            thr = {'mean': statistics.fmean(r['accesses_per_s'] for r in ok)
                   / statistics.fmean(dens),
                   'min': min(ratios), 'max': max(ratios)}
            baseline = {'runs': len(used), 'same_seeds': same,
                        'seeds': sorted({n['seed'] for n in used}),
                        'accesses_per_s': statistics.fmean(
                            n['accesses_per_s'] for n in used),
                        'run_dirs': [n['dir'] for n in used]}
        rows.append({
            'workload': key[0], 'seconds': key[1], 'nr_regions_max': key[2],
            'aggr_us': key[3], 'source': key[4], 'period': key[5],
            'trace': key[6], 'runs': len(rs), 'stats': stats,
            'throughput': thr,
            'whole_cost': {'mean': 1 - thr['mean'], 'min': 1 - thr['max'],
                           'max': 1 - thr['min']},
            'baseline': baseline,
            'per_run': [{'dir': r['dir'], 'seed': r['seed'],
                         'accesses_per_s': r['accesses_per_s']}
                        for r in rs]})
    return rows


COST_CAPTION = (
    'Cost, every run (with snapshots or without: EVAL_TRACE=0, source '
    'none).  Under -icount every instruction that monitoring costs is '
    'taken from the workload, so its throughput measures the whole cost.  '
    'kdamond Minsn/s: the kdamond\'s CPU time (instructions).  '
    'interrupts/s: the test PMU\'s `overflows` (testpmu/README.md section '
    '4: timer callbacks whose period ran out, i.e. emulated interrupts, '
    'with a record or without one; re-arms of periods over 1 s are not '
    'counted).  samples/s: its records.  These three: median [min–max] '
    'over runs.  M accesses/s: evalwl\'s `done N` over its loop\'s time, '
    'mean [min–max].  throughput: the mean accesses/s over that of the '
    '`none` runs (no DAMON) of the same workload and seconds, of the same '
    'seeds where each seed has one, else of all (the baseline column); '
    '[min–max] of each run\'s over its baseline.  whole cost = 1 - '
    'throughput.  n/a: no `none` run.')


def cost_table(rows):
    cols = ['workload', 'seconds', 'max regions', 'aggr ms', 'source',
            'period', 'traced', 'runs', 'kdamond Minsn/s', 'interrupts/s',
            'samples/s', 'M accesses/s', 'throughput', 'whole cost',
            'baseline']
    lines = [COST_CAPTION, '',
             '| ' + ' | '.join(cols) + ' |',
             '|' + '|'.join('---' for _ in cols) + '|']

    def mean_fmt(st, fmt, scale=1.0):
        if math.isnan(st['mean']):
            return 'n/a'
        return '%s [%s–%s]' % (fmt % (st['mean'] * scale),
                               fmt % (st['min'] * scale),
                               fmt % (st['max'] * scale))

    for c in rows:
        st, b = c['stats'], c['baseline']
        row = [c['workload'], '%g' % c['seconds'],
               str(c['nr_regions_max']) if c['nr_regions_max'] else '–',
               '%g' % (c['aggr_us'] / 1000) if c['aggr_us'] else '–',
               c['source'], str(c['period']) if c['period'] else '–',
               'yes' if c['trace'] else 'no', str(c['runs']),
               fmt_stat(st['kdamond_ips'], '%.3g', 1e-6),
               fmt_stat(st['interrupts_per_s'], '%.0f'),
               fmt_stat(st['samples_per_s'], '%.0f'),
               mean_fmt(st['accesses_per_s'], '%.2f', 1e-6),
               mean_fmt(c['throughput'], '%.3f'),
               mean_fmt(c['whole_cost'], '%.3f'),
               ('%d none, %s seeds (%s)' % (
                   b['runs'], 'same' if b['same_seeds'] else 'all',
                   ', '.join(b['seeds']))) if b else 'n/a']
        lines.append('| ' + ' | '.join(row) + ' |')
    return lines


# ---------------------------------------------------------------- plots

def label(c, configs):
    s = c['source'] + ('/%d' % c['period'] if c['period'] else '')
    if len({d['nr_regions_max'] for d in configs}) > 1:
        s += ' r%d' % c['nr_regions_max']
    if len({(d['source'], d['aggr_us']) for d in configs}) > \
            len({d['source'] for d in configs}):
        s += ' a%gms' % (c['aggr_us'] / 1000)
    return s


def plots(configs, groups, outdir):
    try:
        import matplotlib
        matplotlib.use('Agg')
        import matplotlib.pyplot as plt
    except ImportError as e:
        warn('no plots: %s' % e)
        return []
    written = []
    workloads = sorted({c['workload'] for c in configs})
    if not workloads:
        # only runs without snapshots: the cost table, nothing to plot
        return written
    fig, axes = plt.subplots(1, len(workloads), squeeze=False,
                             figsize=(6 * len(workloads), 4.5))
    for ax, wl in zip(axes[0], workloads):
        for c in configs:
            if c['workload'] != wl:
                continue
            x, y = c['stats']['cost_ips'], c['stats']['precision']
            if not (x['median'] > 0) or math.isnan(y['median']):
                continue
            ax.errorbar([x['median']], [y['median']],
                        xerr=[[x['median'] - x['min']],
                              [x['max'] - x['median']]],
                        yerr=[[y['median'] - y['min']],
                              [y['max'] - y['median']]],
                        fmt='o' if c['source'].startswith('abit') else 's',
                        color='tab:red' if c['source'].startswith('abit')
                        else 'tab:blue', capsize=3)
            ax.annotate(label(c, configs), (x['median'], y['median']),
                        textcoords='offset points', xytext=(5, 5),
                        fontsize=8)
        ax.set_xscale('log')
        ax.set_ylim(-0.05, 1.05)
        ax.set_title(wl)
        ax.set_xlabel('kdamond + sampling instructions/s')
        ax.set_ylabel('precision (median, min–max over runs)')
        ax.grid(True, which='both', alpha=0.3)
    fig.tight_layout()
    path = os.path.join(outdir, 'accuracy.png')
    fig.savefig(path, dpi=120)
    plt.close(fig)
    written.append(path)

    hc = [c for c in configs if c['workload'] == 'hotcold']
    if not hc:
        return written
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for c in hc:
        rs = [r for r in groups[config_key_of(c)] if r['swap_ns'] is not None]
        if not rs:
            continue
        # the median run by precision, NaNs last
        rs.sort(key=lambda r: (math.isnan(r['precision']), r['precision']))
        r = rs[(len(rs) - 1) // 2]
        off = (r['swap_ns'] - r['start_ns']) / NS
        ax.plot([s[0] - off for s in r['series']],
                [s[2] for s in r['series']], label=label(c, configs),
                linewidth=1, marker='.', markersize=3)
    ax.axvline(0, color='k', linestyle='--', linewidth=1, label='swap')
    ax.set_xlabel('seconds from the hot/cold swap')
    ax.set_ylabel('precision')
    ax.set_ylim(-0.05, 1.05)
    ax.set_title('hotcold: precision over time (median run of each config)')
    ax.legend(fontsize=8)
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    path = os.path.join(outdir, 'precision-time.png')
    fig.savefig(path, dpi=120)
    plt.close(fig)
    written.append(path)
    return written


def config_key_of(c):
    return (c['workload'], c['source'], c['period'], c['nr_regions_max'],
            c['aggr_us'])


# ---------------------------------------------------------------- main

def jsonable(x):
    """NaN is not JSON: None instead."""
    if isinstance(x, float) and math.isnan(x):
        return None
    if isinstance(x, dict):
        return {k: jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    return x


def run(results, outdir=None, goal_regions=None, warmup=2.0, out=sys.stdout):
    """Analyze RESULTS; returns the JSON document (also written)."""
    outdir = outdir or results
    runs, cruns = [], []
    for d in find_runs(results):
        snapshots = True
        if os.path.isfile(os.path.join(d, 'meta')):
            try:
                cruns.append(cost_run(d))
                snapshots = cruns[-1]['source'] != 'none' \
                    and cruns[-1]['trace'] != 0
            except (RunError, OSError, ValueError) as e:
                warn('no cost of %s: %s' % (d, e))
        if not snapshots:
            continue  # in the cost table only
        try:
            runs.append(analyze_run(d, warmup * NS))
        except (RunError, OSError, ValueError) as e:
            warn('skipping %s: %s' % (d, e))
    if not runs:
        warn('no usable run in %s' % results)
    configs, groups = aggregate(runs)
    lines = table(configs)
    goal_lines, goal_data = ([], [])
    if goal_regions is not None:
        goal_lines, goal_data = goals(configs, goal_regions)
    cost = cost_configs(cruns)
    text = '\n'.join(lines) + '\n'
    if goal_lines:
        text += '\n' + '\n'.join(goal_lines) + '\n'
    text += '\n' + '\n'.join(cost_table(cost)) + '\n'
    out.write(text)
    os.makedirs(outdir, exist_ok=True)
    with open(os.path.join(outdir, 'accuracy.md'), 'w') as f:
        f.write(text)
    doc = {'configs': configs, 'runs': runs, 'goals': goal_data,
           'cost': cost, 'warmup_s': warmup}
    with open(os.path.join(outdir, 'accuracy.json'), 'w') as f:
        json.dump(jsonable(doc), f, indent=1)
        f.write('\n')
    doc['plots'] = plots(configs, groups, outdir)
    return doc


# ---------------------------------------------------------------- self-test

def selftest():
    """Synthetic runs with known answers; prints 'N passed, N failed'."""
    passed = failed = 0

    def check(name, got, want, tol=1e-9):
        nonlocal passed, failed
        ok = (math.isnan(want) and math.isnan(got)) if (
            isinstance(want, float) and math.isnan(want)) else (
            abs(got - want) <= tol if isinstance(want, (int, float))
            and not isinstance(want, bool) else got == want)
        if ok:
            passed += 1
        else:
            failed += 1
            print('selftest: FAIL %s: got %r, want %r' % (name, got, want))

    mib, page = 1 << 20, 4096
    base = 0x7f0000000000
    # evalwl's hotcold layout: warm | cold | hot, 4, 16, 4 MiB
    warm, cold, hot = base, base + 4 * mib, base + 20 * mib
    end_all = hot + 4 * mib
    whot, wwarm = 0.8, 0.19
    wcold = 1 - whot - wwarm
    phases = {0: [('hot', hot, end_all, whot), ('warm', warm, cold, wwarm),
                  ('cold', cold, hot, wcold)],
              1: [('hot', cold, cold + 4 * mib, whot),
                  ('warm', warm, cold, wwarm),
                  ('cold', cold + 4 * mib, end_all, wcold)]}
    truths = hotcold_truths(phases)

    # unit checks of the per-snapshot metrics
    t0 = truths[0]
    check('hot bytes', t0.hot_bytes, 4 * mib)
    check('all zero', snapshot_metrics(t0, [(warm, end_all, 0, 5)])[0], 0.0)
    check('one region', snapshot_metrics(t0, [(warm, end_all, 3, 5)])[0],
          4 / 24)
    # 2 MiB of hot ranked first, then a 12 MiB region holding the other
    # 2 MiB of hot: 2 + 2 MiB x 2/12 hot bytes out of 4 MiB
    check('partial last region', snapshot_metrics(t0, [
        (hot - 10 * mib, hot + 2 * mib, 5, 0),
        (hot + 2 * mib, end_all, 10, 0)])[0], (2 + 2 * 2 / 12) / 4)
    # outside the buffers (a "stack" region): no weight, never taken
    p, c = snapshot_metrics(t0, [(end_all + mib, end_all + 2 * mib, 99, 9),
                                 (hot, end_all, 10, 0)])
    check('clipped precision', p, 1.0)
    check('clipped coverage', c, whot, 1e-12)

    # H80: the hot set alone holds 80%: 4 MiB; with evalwl's real weight,
    # round(0.8 x 2^23) / 2^23 = 0.79999995, still the hot set
    check('H80', t0.mass_bytes(HOT_MASS, page), 4 * mib)
    check('H80 2^-23 weights', Truth([
        (warm, cold, 1593836 / 2**23, False), (cold, hot, 83886 / 2**23,
                                               False),
        (hot, end_all, 6710886 / 2**23, True)]).mass_bytes(HOT_MASS, page),
        4 * mib)
    # hot at 0.7: 0.1 more from warm, whose 1024 pages hold 0.29 / 1024
    # each: 0.1 / (0.29 / 1024) = 353.1, so 354 pages
    check('H80 partial set', Truth([
        (warm, cold, 0.29, False), (cold, hot, 0.01, False),
        (hot, end_all, 0.7, True)]).mass_bytes(HOT_MASS, page),
        4 * mib + 354 * page)

    # capture, precision, recall @ K = 0.5, 1, 2 x H80 = 2, 4, 8 MiB of
    # phase 0 (densities per MiB: hot 0.8/4 = 0.2, warm 0.19/4 = 0.0475,
    # cold 0.01/16 = 0.000625); the oracle's top K holds 0.4 (2 MiB of
    # hot), 0.8 (hot), 0.99 (hot + warm)
    ks = [2 * mib, 4 * mib, 8 * mib]

    def check_topk(name, regions, want, truth=t0, kk=ks):
        got = topk_metrics(truth, regions, kk)
        for k, g, w in zip(kk, got, want):
            for what, gv, wv in zip(('capture', 'precision', 'recall'),
                                    g, w):
                if wv is not None:
                    check('%s %s@%gMiB' % (name, what, k / mib), gv, wv,
                          1e-12)

    # (a) the true order (regions in address order: warm, cold, hot):
    # capture 1 at every K.  At 2 MiB DAMON's top K is 2 MiB of the one
    # 4 MiB hot region, and the oracle's is half the uniform hot set, each
    # byte in by 1/2: precision = recall = 0.5 (the tie rule, (d) below)
    check_topk('perfect', [(warm, cold, 3, 0), (cold, hot, 1, 0),
                           (hot, end_all, 20, 0)],
               [(1.0, 0.5, 0.5), (1.0, 1.0, 1.0), (1.0, 1.0, 1.0)])
    # (b) the cold set first: DAMON's top K is K of cold, 0.01 x K / 16:
    #   2 MiB: 0.00125 / 0.4 = 0.003125; 4 MiB: 0.0025 / 0.8 = 0.003125;
    #   8 MiB: 0.005 / 0.99; none of its bytes in the oracle's top K
    check_topk('cold first', [(warm, cold, 3, 0), (cold, hot, 20, 0),
                              (hot, end_all, 1, 0)],
               [(0.003125, 0.0, 0.0), (0.003125, 0.0, 0.0),
                (0.005 / 0.99, 0.0, 0.0)])
    # 1 MiB of cold, then warm and hot tied at 9, warm first by its age:
    #   2 MiB: 1 cold + 1 warm = 0.000625 + 0.0475 = 0.048125,
    #          / 0.4 = 0.1203125
    #   4 MiB: 1 cold + 3 warm = 0.000625 + 0.1425 = 0.143125,
    #          / 0.8 = 0.17890625
    #   8 MiB: 1 cold + 4 warm + 3 hot = 0.000625 + 0.19 + 0.6 = 0.790625,
    #          / 0.99; 7 of its 8 MiB in the oracle's (hot + warm)
    check_topk('cold, then age', [
        (warm, cold, 9, 5), (cold, cold + mib, 20, 0),
        (cold + mib, hot, 0, 0), (hot, end_all, 9, 1)],
        [(0.1203125, 0.0, 0.0), (0.17890625, 0.0, 0.0),
         (0.790625 / 0.99, 7 / 8, 7 / 8)])
    # (c) accesses seen only in 1 MiB of hot (and the stack, unknown):
    #   2 MiB: capture 0.2 / 0.4; the oracle's top 2 MiB is half the
    #          uniform hot set, so each hot byte is in by 1/2: precision
    #          0.5 MiB / 1 MiB taken = 0.5, recall 0.5 / 2 = 0.25
    #   4 MiB: 0.2 / 0.8; precision 1 / 1; recall 1 / 4
    #   8 MiB: 0.2 / 0.99; precision 1; recall 1 / 8
    short = [(warm, hot, 0, 9), (hot, hot + mib, 20, 0),
             (hot + mib, end_all, 0, 0), (end_all + mib, end_all + 2 * mib,
                                          99, 9)]
    check_topk('short', short, [(0.5, 0.5, 0.25), (0.25, 1.0, 0.25),
                                (0.2 / 0.99, 1.0, 0.125)])
    check_topk('all zero', [(warm, end_all, 0, 5)],
               [(0.0, NAN, 0.0)] * 3)
    # (d) ties: DAMON's top 2 MiB is 2 MiB of the 4 MiB uniform hot set,
    # each byte of which is in the oracle's top 2 MiB by 2/4: capture 1,
    # precision = recall = 2 x 2/4 / 2 = 0.5 = K / 4 MiB, whichever 2 MiB
    for a in (hot, hot + mib, hot + 2 * mib):
        check_topk('tie at %d MiB' % ((a - hot) // mib), [
            (warm, a, 0, 0), (a, a + 2 * mib, 20, 0),
            (a + 2 * mib, end_all, 0, 0)], [(1.0, 0.5, 0.5)], kk=ks[:1])
    # hot 4 MiB at 0.8, warm 12 MiB at 0.2, ranked warm first; K = 2 x
    # H80 = 8 MiB: the oracle's top 8 MiB is hot and 4 of warm's 12 MiB,
    # each warm byte in by 1/3, 0.8 + 0.2/3 = 13/15; DAMON's 8 MiB of warm
    # hold 0.2 x 8/12 = 2/15: capture 2/13, precision = recall = 1/3.
    # The same with warm as two ranges of equal density: one tie level, not
    # the first range's 6 MiB in by 4/6 and the second's out (DAMON's 6 +
    # 2 MiB would then hold 4 MiB of the oracle's: 0.5).
    for name, wsegs in (('tie warm', [(base, base + 12 * mib, 0.2)]),
                        ('tie warm split',
                         [(base, base + 6 * mib, 0.1),
                          (base + 6 * mib, base + 12 * mib, 0.1)])):
        tw = Truth([(s, e, w, False) for s, e, w in wsegs]
                   + [(base + 12 * mib, base + 16 * mib, 0.8, True)])
        check(name + ' H80', tw.mass_bytes(HOT_MASS, page), 4 * mib)
        check_topk(name, [(base, base + 6 * mib, 20, 0),
                          (base + 6 * mib, base + 12 * mib, 15, 0),
                          (base + 12 * mib, base + 16 * mib, 10, 0)],
                   [(2 / 13, 1 / 3, 1 / 3)], truth=tw, kk=[8 * mib])

    tmp = tempfile.mkdtemp(prefix='accuracy-selftest-')
    start = 100 * 10**9
    swap = start + 10_200_000_000
    end = start + 20 * 10**9
    step = 500_000_000

    def write(d, name, text):
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, name), 'w') as f:
            f.write(text)

    def meta(d, workload, source, period, k, kd, smp, samples, extra=()):
        write(d, 'meta', ''.join('%s %s\n' % kv for kv in (
            ('workload', workload), ('source', source), ('period', period),
            ('run', k), ('kdamond_ns', kd), ('sampling_ns', smp),
            ('window_ns', 20 * 10**9), ('samples', samples),
            ('nr_regions_max', 100), ('aggr_us', 1000000)) + tuple(extra)))

    def hotcold_run(d, good, k, kd, smp, regs_at=None, extra=()):
        layout = ['pid 1', 'page_size 4096', 'mode hotcold', 'seconds 20',
                  'start_ns %d' % start]
        for p in (0, 1):
            layout += ['phase %d %s %d %d %.17g' % ((p,) + r)
                       for r in phases[p]]
        write(d, 'layout', '\n'.join(layout) + '\n')
        write(d, 'events', 'start %d\nswap %d\nend %d\n' % (start, swap, end))
        snaps = []
        for t in range(start + step, end, step):
            # "good" follows the swap 1.3 s late (first new snapshot: the
            # one at swap + 1.3 s); "reversed" ranks the cold set hottest
            new = t >= swap + 1_300_000_000
            if regs_at:
                regs = regs_at(t)
            elif good:
                regs = [(warm, cold, 3), (cold, cold + 4 * mib, 20 if new
                                          else 0),
                        (cold + 4 * mib, hot, 0), (hot, end_all, 0 if new
                                                   else 20)]
            elif t >= swap:
                regs = [(warm, cold, 0), (cold, cold + 4 * mib, 0),
                        (cold + 4 * mib, end_all, 20)]
            else:
                regs = [(warm, cold, 0), (cold, hot, 20), (hot, end_all, 0)]
            regs.append((end_all + mib, end_all + 2 * mib, 20))  # stack
            snaps += ['%d %d %d %d 7' % ((t,) + r) for r in regs]
        write(d, 'snapshots', '\n'.join(snaps) + '\n')
        meta(d, 'hotcold', 'insn' if good else 'abit', 1000 if good else 0,
             k, kd, smp, 40000 if good else 0, extra)

    # the cost table's accesses (in 20 s): none (no DAMON) 2.0e9 and
    # 2.2e9 with seeds 1 and 2; insn 1.8e9 and 2.09e9 (accesses in meta),
    # 0.9 and 0.95 of their seeds', mean 0.9725e8/s over 1.05e8/s; abit
    # 1.6e9 and 1.76e9, 0.8 of each (wl.out's done line: runs of before
    # meta's accesses)
    for k in (1, 2):
        hotcold_run(os.path.join(tmp, 'insn-%d' % k), True, k,
                    (4 + 2 * k) * 10**8, 10**8, extra=(
                        ('overflows', 200000 * k), ('trace', 1),
                        ('seconds', 20),
                        ('accesses', (1800000000, 2090000000)[k - 1])))
        hotcold_run(os.path.join(tmp, 'abit-%d' % k), False, k,
                    10**10, 0)
        write(os.path.join(tmp, 'abit-%d' % k), 'wl.out',
              'evalwl: ready 1\nevalwl: done %d\n'
              % (1600000000, 1760000000)[k - 1])

    # zipf: 8 pages, the heaviest two (pages 0 and 2) hold 80%
    zw = [0.5, 0.05, 0.3, 0.05, 0.04, 0.03, 0.02, 0.01]
    d = os.path.join(tmp, 'zipf-1')
    write(d, 'layout', 'pid 1\npage_size 4096\nmode zipf\nseconds 20\n'
          'start_ns %d\n'
          'zipf buf %d %d\n' % (start, base, base + 8 * page))
    write(d, 'events', 'start %d\nend %d\n' % (start, end))
    a = array.array('d', zw)
    if sys.byteorder == 'big':
        a.byteswap()
    with open(os.path.join(d, 'zipf_weights'), 'wb') as f:
        a.tofile(f)
    regs = [(0, 1, 10), (1, 2, 0), (2, 3, 9), (3, 8, 0)]
    write(d, 'snapshots', ''.join(
        '%d %d %d %d 3\n' % (t, base + s * page, base + e * page, nr)
        for t in range(start + step, end, step) for s, e, nr in regs))
    meta(d, 'zipf', 'insn', 1000, 1, 5 * 10**8, 10**8, 40000)

    # a run without its snapshots: skipped with a warning
    meta(os.path.join(tmp, 'broken'), 'hotcold', 'insn', 1000, 3, 1, 1, 1)

    # runs without snapshots (none; EVAL_TRACE=0), in the cost table only:
    # as accuracy-guest.sh writes them, an empty snapshots file
    def bare_run(d, source, period, k, kd, acc, nrmax=100, aggr=1000000,
                 trace=0):
        write(d, 'layout', 'pid 1\npage_size 4096\nmode hotcold\n'
              'seconds 20\nseed %d\nstart_ns %d\n' % (k, start) + ''.join(
                  'phase %d %s %d %d %.17g\n' % ((p,) + r)
                  for p in (0, 1) for r in phases[p]))
        write(d, 'events', 'start %d\nswap %d\nend %d\n'
              % (start, swap, end))
        write(d, 'snapshots', '')
        write(d, 'wl.out', 'evalwl: ready 1\nevalwl: done %d\n' % acc)
        write(d, 'meta', ''.join('%s %s\n' % kv for kv in (
            ('workload', 'hotcold'), ('source', source), ('period', period),
            ('run', k), ('trace', trace), ('kdamond_ns', kd),
            ('sampling_ns', 0), ('window_ns', 20 * 10**9),
            ('samples', 0 if source == 'none' else 8000),
            ('overflows', 0 if source == 'none' else 80000),
            ('nr_regions_max', nrmax), ('aggr_us', aggr), ('seconds', 20),
            ('accesses', acc))))

    for k, acc in ((1, 2000000000), (2, 2200000000)):
        bare_run(os.path.join(tmp, 'none-%d' % k), 'none', 0, k, 0, acc,
                 nrmax=0, aggr=0, trace=1)
    # seeds 1 and 3, 3 without a none run: against all none runs'
    # 1.05e8/s: 0.95e8 and 1.05e8, mean 1e8 / 1.05e8
    for k, acc in ((1, 1900000000), (3, 2100000000)):
        bare_run(os.path.join(tmp, 'notrace-%d' % k), 'insn', 256, k,
                 2 * 10**8, acc)

    with open(os.devnull, 'w') as null:
        doc = run(tmp, goal_regions=100, out=null)
    check('runs found', len(doc['runs']), 5)
    by = {(r['workload'], r['source'], r['run']): r for r in doc['runs']}
    good, rev = by[('hotcold', 'insn', '1')], by[('hotcold', 'abit', '1')]
    check('good precision', good['precision'], 1.0)
    check('good coverage', good['coverage'], whot + wwarm)
    check('good recovery', good['recovery_s'], 1.3, 1e-9)
    check('good pre-swap precision', good['precision_pre_swap'], 1.0)
    # in the old pattern after the swap: the hot region is now cold
    lag = [s for s in good['series'] if 10.2 <= s[0] < 11.5]
    check('lagging snapshots', [s[2] for s in lag], [0.0, 0.0])
    check('lagging coverage', lag[0][3], wwarm + wcold * 4 / 16, 1e-12)
    check('reversed precision', rev['precision'], 0.0)
    check('reversed coverage', rev['coverage'], wcold, 1e-12)
    check('reversed recovery', rev['recovery_s'], NAN)
    for name in ('capture_0.5x', 'capture_1x', 'capture_2x',
                 'precision_1x', 'recall_1x'):
        check('good ' + name, good[name], 1.0)
    check('good H80', good['h80_bytes'], 4 * mib)
    # the lagging snapshots rank the old hot buffer first: in phase 1 it
    # is 4 of the cold set's 16 MiB, 0.01 x 4/16 / 0.8
    check('lagging snapshots, capture', len(lag), 2)
    for s in lag:
        check('lagging capture@1x', s[5], 0.003125, 1e-12)
    check('good regain', good['regain_s'], 1.3, 1e-9)
    # reversed: only before the swap is steady: 4 MiB of cold first
    check('reversed capture@1x', rev['capture_1x'], 0.003125, 1e-12)
    check('reversed regain', rev['regain_s'], NAN)
    z = by[('zipf', 'insn', '1')]
    check('zipf precision', z['precision'], 1.0)
    check('zipf coverage', z['coverage'], 0.8, 1e-12)
    # zipf: H80 = pages 0 and 2 (0.5 + 0.3); 2 x H80 = 4 pages, the
    # oracle's 0.5 + 0.3 + 0.05 + 0.05 = 0.9, DAMON's only 2 pages (0.8)
    check('zipf H80', z['h80_bytes'], 2 * page)
    check('zipf capture@0.5x', z['capture_0.5x'], 1.0, 1e-12)
    check('zipf capture@1x', z['capture_1x'], 1.0, 1e-12)
    check('zipf capture@2x', z['capture_2x'], 0.8 / 0.9, 1e-12)
    check('zipf regain', z['regain_s'], NAN)

    # (e) a run that recovers its precision before its capture (densities
    # per MiB as above): 0.3 s after the swap the old pattern (capture
    # 0.003125); at 0.8 s the new hot set's first 3.25 MiB ranked first,
    # then warm: precision 3.25 / 4 = 0.8125 >= 0.8 x 1 (recovered at
    # 0.8 s), capture@1x (3.25 x 0.2 + 0.75 x 0.0475) / 0.8 = 0.685625 /
    # 0.8 = 0.85703125 < 0.9; at 1.3 s its first 3.5 MiB, then warm:
    # precision 0.875 (< 0.9), capture (0.7 + 0.5 x 0.0475) / 0.8 =
    # 0.72375 / 0.8 = 0.9046875 >= 0.9: regained at 1.3 s; from 1.8 s the
    # whole new hot set
    def gradual(t):
        if t < swap + 800_000_000:
            return [(warm, cold, 3), (cold, hot, 0), (hot, end_all, 20)]
        if t < swap + 1_800_000_000:
            part = cold + 3 * mib + (mib // 4 if t < swap + 1_300_000_000
                                     else mib // 2)
            return [(warm, cold, 3), (cold, part, 20), (part, end_all, 0)]
        return [(warm, cold, 3), (cold, cold + 4 * mib, 20),
                (cold + 4 * mib, end_all, 0)]

    gd = os.path.join(tmp + '-gradual', 'insn-1')
    hotcold_run(gd, True, 1, 10**8, 10**8, gradual)
    gr = analyze_run(gd, 2 * NS)
    check('gradual recovery', gr['recovery_s'], 0.8, 1e-9)
    check('gradual regain', gr['regain_s'], 1.3, 1e-9)
    part = [s for s in gr['series'] if 11.0 <= s[0] < 11.6]
    check('gradual partial snapshots', len(part), 2)
    for s, p, c in zip(part, (0.8125, 0.875), (0.85703125, 0.9046875)):
        check('gradual precision at %.1f s' % s[0], s[2], p, 1e-12)
        check('gradual capture@1x at %.1f s' % s[0], s[5], c, 1e-12)
    check('kdamond ips', good['kdamond_ips'], 6e8 / 20)
    check('sampling cpu', good['sampling_cpu'], 1e8 / 20e9)
    cfg = {config_key_of(c): c for c in doc['configs']}
    ins = cfg[('hotcold', 'insn', 1000, 100, 1000000)]['stats']
    check('config kdamond median', ins['kdamond_ips']['median'], 3.5e7)
    check('config kdamond min', ins['kdamond_ips']['min'], 3e7)
    check('config kdamond max', ins['kdamond_ips']['max'], 4e7)
    check('samples/s', ins['samples_per_s']['median'], 2000.0)
    g = [x for x in doc['goals'] if x['workload'] == 'hotcold']
    check('goal met', g[0]['met'] if g else None, True)
    for name in ('accuracy.md', 'accuracy.json'):
        check(name + ' written', os.path.isfile(os.path.join(tmp, name)),
              True)
    with open(os.path.join(tmp, 'accuracy.md')) as f:
        md = f.read()
    check('table row', '| hotcold | insn | 1000 | 100 | 1000 | '
          '2000 [2000–2000] | '
          '1.000 [1.000–1.000] |' in md, True)
    check('goal line', [line.endswith(': met') for line in md.split('\n')
                        if line.startswith('goal hotcold max regions 100, '
                                           'aggr 1000 ms:')], [True])
    check('table columns', '| precision | coverage | capture@1x | '
          'recovery s | regain 0.9 s |' in md, True)
    check('table new cells', '| 0.990 [0.990–0.990] | 1.000 [1.000–1.000] '
          '| 1.30 [1.30–1.30] | 1.30 [1.30–1.30] |' in md, True)
    check('table regain never', '| 0.003 [0.003–0.003] | never | never |'
          in md, True)

    # the cost table: every run with a meta, snapshots or not; none of the
    # snapshot-less ones in the precision tables (5 runs, as above)
    check('precision configs', sorted(cfg), sorted([
        ('hotcold', 'insn', 1000, 100, 1000000),
        ('hotcold', 'abit', 0, 100, 1000000),
        ('zipf', 'insn', 1000, 100, 1000000)]))
    cost = {(c['workload'], c['source'], c['period'], c['trace']): c
            for c in doc['cost']}
    check('cost rows', sorted(cost), sorted([
        ('hotcold', 'none', 0, 1), ('hotcold', 'abit', 0, 1),
        ('hotcold', 'insn', 1000, 1), ('hotcold', 'insn', 256, 0),
        ('zipf', 'insn', 1000, 1)]))
    ci = cost[('hotcold', 'insn', 1000, 1)]
    check('cost runs', ci['runs'], 2)
    check('cost throughput', ci['throughput']['mean'], 0.9725 / 1.05,
          1e-12)
    check('cost throughput min', ci['throughput']['min'], 0.9, 1e-12)
    check('cost throughput max', ci['throughput']['max'], 0.95, 1e-12)
    check('cost whole', ci['whole_cost']['mean'], 1 - 0.9725 / 1.05, 1e-12)
    check('cost same seeds', (ci['baseline']['same_seeds'],
                              ci['baseline']['seeds']), (True, ['1', '2']))
    check('cost interrupts/s', ci['stats']['interrupts_per_s']['median'],
          15000.0)
    ca = cost[('hotcold', 'abit', 0, 1)]
    check('cost abit throughput (wl.out)', (ca['throughput']['mean'],
                                            ca['throughput']['min'],
                                            ca['throughput']['max']),
          (0.8, 0.8, 0.8))
    cn = cost[('hotcold', 'insn', 256, 0)]
    check('cost snapshot-less runs', cn['runs'], 2)
    check('cost snapshot-less kdamond', cn['stats']['kdamond_ips']['median'],
          1e7)
    check('cost all seeds', (cn['baseline']['same_seeds'],
                             cn['baseline']['runs']), (False, 2))
    check('cost all-seeds throughput', cn['throughput']['mean'], 1 / 1.05,
          1e-12)
    check('cost all-seeds min', cn['throughput']['min'], 0.95 / 1.05, 1e-12)
    c0 = cost[('hotcold', 'none', 0, 1)]
    check('cost none', (c0['runs'], c0['throughput']['mean'],
                        c0['stats']['interrupts_per_s']['max'],
                        c0['stats']['kdamond_ips']['max']), (2, 1.0, 0, 0))
    check('cost no baseline', (math.isnan(cost[('zipf', 'insn', 1000, 1)][
        'throughput']['mean']), cost[('zipf', 'insn', 1000, 1)]['baseline']),
        (True, None))
    check('cost table row', '| hotcold | 20 | 100 | 1000 | insn | 1000 | yes '
          '| 2 | 35 [30–40] | 15000 [10000–20000] | 2000 [2000–2000] | '
          '97.25 [90.00–104.50] | 0.926 [0.900–0.950] | 0.074 [0.050–0.100] '
          '| 2 none, same seeds (1, 2) |' in md, True)
    check('cost table all seeds', '| 0.952 [0.905–1.000] | 0.048 '
          '[0.000–0.095] | 2 none, all seeds (1, 2) |' in md, True)
    check('cost table n/a', '| n/a | n/a | n/a |' in md, True)
    check('cost caption', 'the test PMU\'s `overflows`' in md, True)
    with open(os.path.join(tmp, 'accuracy.json')) as f:
        check('cost in the JSON', len(json.load(f)['cost']), 5)

    if importlib.util.find_spec('matplotlib'):
        for name in ('accuracy.png', 'precision-time.png'):
            check(name + ' written',
                  os.path.isfile(os.path.join(tmp, name))
                  and os.path.getsize(os.path.join(tmp, name)) > 0, True)
    else:
        print('selftest: no matplotlib, plots not checked')

    if failed:
        print('selftest: results kept in %s and %s-gradual' % (tmp, tmp))
    else:
        for top in (tmp, tmp + '-gradual'):
            for root, dirs, files in os.walk(top, topdown=False):
                for f in files:
                    os.unlink(os.path.join(root, f))
                for d in dirs:
                    os.rmdir(os.path.join(root, d))
            os.rmdir(top)
    print('selftest: %d passed, %d failed' % (passed, failed))
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser(
        description='Score DAMON snapshots against evalwl ground truth.')
    ap.add_argument('results', nargs='?', help='the results directory')
    ap.add_argument('--out', help='output directory (default: RESULTS)')
    ap.add_argument('--goal-regions', type=int, metavar='N',
                    help='print the goal lines for nr_regions_max >= N')
    ap.add_argument('--warmup', type=float, default=2.0, metavar='S',
                    help='seconds after the start left out (default 2)')
    ap.add_argument('--selftest', action='store_true',
                    help='run the self-test and exit')
    args = ap.parse_args()
    if args.selftest:
        return selftest()
    if not args.results:
        ap.error('RESULTS is needed')
    if not os.path.isdir(args.results):
        ap.error('%s is not a directory' % args.results)
    run(args.results, args.out, args.goal_regions, args.warmup)
    return 0


if __name__ == '__main__':
    sys.exit(main())
