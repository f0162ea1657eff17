#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""abit_rates.py: do the Accessed bits see what the access rate predicts?

usage: abit_rates.py RUNDIR... [--warmup S] [--selftest]

For each hotcold run of the Accessed bits (bench/eval/accuracy-guest.sh's
run directories: meta, layout, events, snapshots, wl.out), and each set of
phase 0 (hot, warm, cold), the size-weighted mean nr_accesses of the
regions that lie wholly in the set, over the snapshots of phase 0 after
the warm-up, against the prediction from the workload's own access rate:

  the workload made A accesses (wl.out's "evalwl: done A") in its loop of
  T seconds (events: start..end), a share w of them to a set of n pages,
  uniformly: a page of it is accessed at rate r = A / T * w / n.  DAMON
  checks one page of a region per sampling interval s; the page was
  accessed in it with probability p = 1 - exp(-r s).  An aggregation
  interval of a has a / s checks, so the expected nr_accesses is
  a / s * p.

The sampling interval is accuracy-guest.sh's 5 ms.  A ratio (seen over
predicted) near 1 says that the Accessed bits see the accesses, which
they do only if the TLB entry of a page is flushed when DAMON clears its
bit (testpmu/0007-damon-eval-mkold-flush.patch); without the flush, QEMU's
software TLB hides the accesses that follow and the ratio falls far
below 1.  Exit 1 if no run could be read.
"""

import argparse
import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import accuracy  # noqa: E402  (read_kv, read_layout, read_events, ...)

SAMPLE_S = 0.005


def predicted(rate, weight, npages, aggr_s, sample_s=SAMPLE_S):
    """The expected nr_accesses of a region of a uniformly accessed set."""
    r = rate * weight / npages
    return aggr_s / sample_s * (1 - math.exp(-r * sample_s))


def accesses(path):
    with open(path) as f:
        m = re.search(r'^evalwl: done (\d+)', f.read(), re.M)
    return int(m.group(1)) if m else None


def run_rates(rundir, warmup_s):
    meta = accuracy.read_kv(os.path.join(rundir, 'meta'))
    if meta.get('workload') != 'hotcold' or \
            not meta.get('source', '').startswith('abit'):
        return None
    head, phases, _ = accuracy.read_layout(os.path.join(rundir, 'layout'))
    ev = accuracy.read_events(os.path.join(rundir, 'events'))
    n_acc = accesses(os.path.join(rundir, 'wl.out'))
    if n_acc is None or 'start' not in ev or 'end' not in ev:
        raise accuracy.RunError('%s: no access count or no start/end'
                                % rundir)
    page = int(head.get('page_size', 4096))
    rate = n_acc / ((ev['end'] - ev['start']) / 1e9)
    aggr_s = accuracy.meta_num(meta, 'aggr_us', 100000) / 1e6
    lo = ev['start'] + warmup_s * 1e9
    hi = ev.get('swap', ev['end'])
    snaps = accuracy.read_snapshots(os.path.join(rundir, 'snapshots'))
    rows = []
    for role, s, e, w in phases.get(0, []):
        num = den = 0
        for t, regions in snaps:
            if not lo <= t < hi:
                continue
            for rs, re_, nr, _ in regions:
                if s <= rs and re_ <= e:
                    num += nr * (re_ - rs)
                    den += re_ - rs
        seen = num / den if den else float('nan')
        pred = predicted(rate, w, (e - s) // page, aggr_s)
        rows.append((role, seen, pred))
    return {'dir': rundir, 'rate': rate, 'aggr_s': aggr_s, 'rows': rows,
            'flush': meta.get('mkold_flush', '?')}


def selftest():
    failed = 0

    def check(name, got, want, tol=1e-9):
        nonlocal failed
        if abs(got - want) > tol:
            print('selftest: FAIL %s: got %r, want %r' % (name, got, want))
            failed += 1
    # a page accessed 10,000 times a second is seen in every 5 ms check
    check('saturated', predicted(1e4, 1, 1, 0.1), 20, 1e-6)
    # one access a second per page: p = 1 - e^-0.005
    check('sparse', predicted(4096, 0.5, 2048, 1.0),
          200 * (1 - math.exp(-0.005)))
    check('never', predicted(0, 1, 1, 0.1), 0)
    print('selftest: %s' % ('FAIL' if failed else 'pass'))
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('rundirs', nargs='*')
    ap.add_argument('--warmup', type=float, default=2.0)
    ap.add_argument('--selftest', action='store_true')
    args = ap.parse_args()
    if args.selftest:
        return selftest()
    print('| run | TLB flush | aggr ms | accesses/s | set | '
          'nr_accesses seen | predicted | seen/predicted |')
    print('|---|---|---|---|---|---|---|---|')
    n = 0
    for d in args.rundirs:
        try:
            r = run_rates(d, args.warmup)
        except (OSError, accuracy.RunError) as e:
            print('abit_rates: %s: %s' % (d, e), file=sys.stderr)
            continue
        if r is None:
            continue
        n += 1
        for role, seen, pred in r['rows']:
            print('| %s | %s | %g | %.3g | %s | %.2f | %.2f | %.2f |'
                  % (os.path.basename(d), r['flush'], r['aggr_s'] * 1000,
                     r['rate'],
                     role, seen, pred, seen / pred if pred else math.nan))
    return 0 if n else 1


if __name__ == '__main__':
    sys.exit(main())
