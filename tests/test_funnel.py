#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""
Host-runnable unit tests of damon_perf_funnel.py, on crafted trace text.

    FUNNEL_DIR=build/linux/tools/testing/selftests/damon \
        python3 -m unittest -v tests/test_funnel.py

Never touches the real tracefs: 'record' runs only on fake tracefs
directories made here.
"""

import io
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

# The tool ships with the series, in tools/mm: scripts/check.sh points
# FUNNEL_DIR at tools/mm of the expanded tree.
HERE = os.environ.get('FUNNEL_DIR',
                      os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(HERE, 'damon_perf_funnel.py')
sys.path.insert(0, HERE)

import damon_perf_funnel as funnel  # noqa: E402

# The names by which the kernel prints the reasons and the context, from the
# trace header of the same tree: the { ENUM, "name" } entries of each enum
# (by its prefix), which count up from the first code (0 for the sample
# reasons and contexts, 1 for the miss reasons).
TRACE_HEADER = os.path.join(HERE, '..', '..', '..', '..', 'include', 'trace',
                            'events', 'damon.h')


def kernel_names(prefix, first):
    """{code: name} of the enum PREFIX* of the kernel's trace header"""
    with open(TRACE_HEADER) as f:
        text = f.read()
    names = re.findall(r'\{\s*%s\w+,\s*"(\w+)"\s*\}' % prefix, text)
    return {first + i: name for i, name in enumerate(names)}


if os.path.exists(TRACE_HEADER):
    SAMPLE_NAMES = kernel_names('DAMON_PERF_SAMPLE_', 0)
    CONTEXT_NAMES = kernel_names('DAMON_PERF_CTX_', 0)
    MISS_NAMES = kernel_names('DAMON_REPORT_MISS_', 1)
else:
    SAMPLE_NAMES = CONTEXT_NAMES = MISS_NAMES = None

# The events of one crafted run, as (task, pid, cpu, event, fields):
#
#   14 callbacks: cpu0 5 valid + null + addr_zero, cpu1 3 valid + kernel +
#   inv_phys + xlate_fail + guest; contexts: 7 process, 1 softirq, 1 hardirq,
#   5 NMI
#   2 ring drops (one full ring on cpu0, one nested producer) -> 6 enqueued
#   5 drained -> 1 not drained in the trace
#   2 matched, 3 missed (tgid, no region, boundary) -> 0 discarded
#   1 region update -> 2 reports per region update
S = 'damon_perf_sample'
SAMPLE = ('addr=0x%x data_src=0x0 period=1 cpu=%d reason=%d context=%d '
          'sample_flags=0x108 sample_type=0x800a')
EVENTS = [
    ('perf_fault_work', 301, 0, S, SAMPLE % (0x5623a000, 0, 0, 0)),
    ('perf_fault_work', 301, 0, S, SAMPLE % (0x5623a040, 0, 0, 0)),
    ('perf_fault_work', 301, 0, S, SAMPLE % (0x5623a080, 0, 0, 0)),
    ('perf_fault_work', 301, 0, S, SAMPLE % (0x5623a0c0, 0, 0, 0)),
    ('perf_fault_work', 301, 0, S, SAMPLE % (0x5623a100, 0, 0, 0)),
    ('perf_fault_work', 301, 0, S, SAMPLE % (0, 0, 1, 0)),
    ('perf_fault_work', 301, 0, S, SAMPLE % (0, 0, 2, 0)),
    ('perf_fault_work', 301, 0, 'damon_perf_ring_overflow', 'cpu=0'),
    ('<idle>', 0, 1, S, SAMPLE % (0x7f60a000, 1, 0, 3)),
    ('<idle>', 0, 1, S, SAMPLE % (0x7f60a040, 1, 0, 3)),
    ('<idle>', 0, 1, S, SAMPLE % (0x7f60a080, 1, 0, 3)),
    ('<idle>', 0, 1, S, SAMPLE % (0xffffffff81000000, 1, 3, 2)),
    ('ksoftirqd/1', 22, 1, S, SAMPLE % (0, 1, 4, 1)),
    ('perf_fault_work', 301, 1, S, SAMPLE % (0x7f60b000, 1, 5, 3)),
    ('qemu-system-x86', 520, 1, S, SAMPLE % (0, 1, 6, 3)),
    ('kdamond.0', 400, 1, 'damon_perf_report_missed',
     'addr=0x7f6069f726d0 cpu=0 reason=1'),
    ('kdamond.0', 400, 1, 'damon_perf_report_missed',
     'addr=0x7f60a040 cpu=1 reason=2'),
    ('kdamond.0', 400, 1, 'damon_perf_drain',
     'total=3 matched=1 updated=1 dropped=2'),
    ('kdamond.0', 400, 1, 'damon_perf_report_missed',
     'addr=0x5623a0ff cpu=0 reason=3'),
    ('kdamond.0', 400, 1, 'damon_perf_drain',
     'total=2 matched=1 updated=0 dropped=0'),
]
MALFORMED = 'damon_perf_drain: total=abc matched=1 updated=0 dropped=0'


def named(events):
    """EVENTS with the reasons and the context by name, as the kernel
    prints them; the codes of the kernel's lists stay numbers"""
    def name(table, match):
        code = int(match.group(2))
        return match.group(1) + table.get(code, str(code))
    out = []
    for task, pid, cpu, event, fields in events:
        if event == S:
            fields = re.sub(r'(reason=)(\d+)',
                            lambda m: name(SAMPLE_NAMES, m), fields)
            fields = re.sub(r'(context=)(\d+)',
                            lambda m: name(CONTEXT_NAMES, m), fields)
        elif event == 'damon_perf_report_missed':
            fields = re.sub(r'(reason=)(\d+)',
                            lambda m: name(MISS_NAMES, m), fields)
        out.append((task, pid, cpu, event, fields))
    return out


# The numbers of raw readers and of kernels before the names
RAW_EVENTS = EVENTS
if SAMPLE_NAMES is not None:
    EVENTS = named(RAW_EVENTS)

EXPECTED_STAGES = {'callback': 14, 'valid': 8, 'enqueued': 6, 'drained': 5,
                   'matched': 2, 'region_updates': 1}
EXPECTED_IGNORED = {'null': 1, 'addr_zero': 1, 'kernel': 1, 'inv_phys': 1,
                    'xlate_fail': 1, 'guest': 1, 'not_ldst': 0,
                    'malformed': 0, 'unknown_reason': 0}
EXPECTED_MISSED = {'tgid': 1, 'no_region': 1, 'boundary': 1,
                   'unknown_reason': 0}
EXPECTED_PER_CPU = {
    '0': {'callback': 7, 'valid': 5, 'ignored': 2, 'ring_full': 1,
          'missed': 2},
    '1': {'callback': 7, 'valid': 3, 'ignored': 4, 'ring_full': 0,
          'missed': 1},
}
EXPECTED_CONTEXT = {'process': 7, 'softirq': 1, 'hardirq': 1, 'NMI': 5,
                    'unknown': 0}


def tracefs_text(events=EVENTS, entries=None, extra=()):
    """The events as the tracefs 'trace' file shows them"""
    nr = len(events) if entries is None else entries[0]
    written = len(events) if entries is None else entries[1]
    lines = [
        '# tracer: nop',
        '#',
        '# entries-in-buffer/entries-written: %d/%d   #P:2' % (nr, written),
        '#',
        '#                                _-----=> irqs-off/BH-disabled',
        '#                               / _----=> need-resched',
        '#                              | / _---=> hardirq/softirq',
        '#                              || / _--=> preempt-depth',
        '#                              ||| / _-=> migrate-disable',
        '#                              |||| /     delay',
        '#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION',
        '#              | |         |   |||||     |         |',
    ]
    lines += list(extra)
    for i, (task, pid, cpu, event, fields) in enumerate(events):
        lines.append('%16s-%-7d [%03d] d.h1.  %5d.%06d: %s: %s' %
                     (task, pid, cpu, 53, 100 * i, event, fields))
    return '\n'.join(lines) + '\n'


def trace_cmd_text(events=EVENTS, extra=()):
    """The events as 'trace-cmd report' shows them"""
    lines = ['version = 7', 'CPU 2 is empty', 'cpus=4']
    lines += list(extra)
    for i, (task, pid, cpu, event, fields) in enumerate(events):
        lines.append('%16s-%-5d [%03d] %6d.%06d: %s: %s%s' %
                     (task, pid, cpu, 53, 100 * i, event,
                      ' ' * max(20 - len(event), 0), fields))
    return '\n'.join(lines) + '\n'


def perf_script_text(events=EVENTS, extra=()):
    """The events as 'perf script' shows them"""
    lines = list(extra)
    width = max(len('damon:' + ev[3]) for ev in events)
    for i, (task, pid, cpu, event, fields) in enumerate(events):
        lines.append('%16s %6d [%03d] %5d.%06d: %*s: %s' %
                     (task, pid, cpu, 53, 100 * i, width,
                      'damon:' + event, fields))
    return '\n'.join(lines) + '\n'


def compute(text):
    return funnel.compute_funnel(funnel.parse_lines(io.StringIO(text)))


def run_script(args, stdin=None):
    return subprocess.run([sys.executable, SCRIPT] + args, input=stdin,
                          capture_output=True, text=True, timeout=60)


class FunnelNumbers(unittest.TestCase):
    """Every stage and every loss reason, for each input format"""

    def check_funnel(self, result, unparsed=0):
        self.assertEqual(result['stages'], EXPECTED_STAGES)
        losses = result['losses']
        self.assertEqual(losses['ignored'], EXPECTED_IGNORED)
        self.assertEqual(losses['ring_drops'],
                         {'total': 2, 'ring_full_events': 1,
                          'nested_producer': 1})
        self.assertEqual(losses['not_drained_in_trace'], 1)
        self.assertEqual(losses['missed'], EXPECTED_MISSED)
        self.assertEqual(losses['discarded'], 0)
        self.assertEqual(result['reports_per_region_update'], 2.0)
        self.assertEqual(result['drains'], 2)
        self.assertEqual(result['per_cpu'], EXPECTED_PER_CPU)
        self.assertEqual(result['context'], EXPECTED_CONTEXT)
        self.assertEqual(result['events'],
                         {'damon_perf_sample': 14,
                          'damon_perf_ring_overflow': 1,
                          'damon_perf_report_missed': 3,
                          'damon_perf_drain': 2})
        self.assertEqual(result['lines']['damon_perf_events'], 20)
        self.assertEqual(result['lines']['unparsed'], unparsed)
        self.assertEqual(result['trace_loss']['markers'], 0)
        self.assertTrue(any('1 enqueued reports are not in any traced drain'
                            in note for note in result['notes']))

    def test_tracefs(self):
        result = compute(tracefs_text())
        self.check_funnel(result)
        self.assertEqual(result['warnings'], [])
        self.assertEqual(result['lines']['other'], 0)

    def test_trace_cmd_report(self):
        result = compute(trace_cmd_text())
        self.check_funnel(result)
        self.assertEqual(result['warnings'], [])
        # version, 'CPU 2 is empty' and cpus lines
        self.assertEqual(result['lines']['other'], 3)

    def test_perf_script(self):
        result = compute(perf_script_text())
        self.check_funnel(result)
        self.assertEqual(result['warnings'], [])

    @unittest.skipIf(SAMPLE_NAMES is None, 'no kernel trace header')
    def test_names_as_the_kernel_prints_them(self):
        self.assertIn('reason=valid context=process', EVENTS[0][4])
        self.assertIn('context=nmi', EVENTS[8][4])
        self.assertIn('reason=no_region', EVENTS[16][4])
        self.assertEqual(len(SAMPLE_NAMES), len(funnel.SAMPLE_REASONS))

    def test_numeric_codes(self):
        result = compute(tracefs_text(events=RAW_EVENTS))
        self.check_funnel(result)
        self.assertEqual(result['warnings'], [])

    def test_trace_pipe_without_header(self):
        text = ''.join(line + '\n' for line in
                       tracefs_text().splitlines() if line[:1] != '#')
        self.check_funnel(compute(text))

    def test_malformed_lines(self):
        extra = [
            MALFORMED,
            # truncated at the end of a capture
            '  kdamond.0-400   [001] .....  54.000000: damon_perf_drain: '
            'total=7 matc',
            '  kdamond.0-400   [001] .....  54.000001: '
            'damon_perf_report_missed: addr=0x10 cpu=zero reason=1',
            'this is not a trace line',
            '  bash-1 [000] .....  54.000002: sched_switch: prev_comm=bash '
            'prev_pid=1 ==> next_comm=swapper/0 next_pid=0',
        ]
        result = compute(tracefs_text(extra=extra))
        self.check_funnel(result, unparsed=3)
        self.assertEqual(result['lines']['other'], 2)
        self.assertEqual(len(result['warnings']), 1)
        self.assertIn('3 damon_perf_* lines could not be parsed',
                      result['warnings'][0])
        self.assertIn('total=abc', result['warnings'][0])
        text = funnel.format_funnel(result)
        self.assertIn('3 unparsed', text)

    def test_task_name_like_an_event(self):
        events = [('damon_perf_drain:', 9, 0, S, SAMPLE % (0x1000, 0, 0, 0))]
        result = compute(tracefs_text(events=events))
        self.assertEqual(result['stages']['callback'], 1)
        self.assertEqual(result['stages']['valid'], 1)
        self.assertEqual(result['lines']['unparsed'], 0)

    def test_unknown_reasons_are_not_silent(self):
        events = [
            ('t', 1, 0, S, SAMPLE % (0x1000, 0, 9, 7)),
            ('k', 2, 0, 'damon_perf_report_missed',
             'addr=0x1 cpu=0 reason=5'),
            ('k', 2, 0, 'damon_perf_future_event', 'x=1'),
        ]
        result = compute(tracefs_text(events=events))
        self.assertEqual(result['losses']['ignored']['unknown_reason'], 1)
        self.assertEqual(result['losses']['missed']['unknown_reason'], 1)
        self.assertEqual(result['context']['unknown'], 1)
        warnings = ' '.join(result['warnings'])
        self.assertIn('unknown reason', warnings)
        self.assertIn('unknown context', warnings)
        self.assertIn('damon_perf_future_event=1', ' '.join(result['notes']))


class TraceLoss(unittest.TestCase):
    """Losses of the trace buffer are never silent"""

    def check_loss(self, result, lost, unknown):
        loss = result['trace_loss']
        self.assertGreater(loss['markers'], 0)
        self.assertEqual(loss['lost_events'], lost)
        self.assertEqual(loss['lost_unknown'], unknown)
        self.assertTrue(any('trace buffer lost events' in w and
                            'partial' in w for w in result['warnings']))
        self.assertIn('WARNINGS:', funnel.format_funnel(result))

    def test_tracefs_lost_events(self):
        result = compute(tracefs_text(extra=['CPU:1 [LOST 42 EVENTS]',
                                             'CPU:0 [LOST EVENTS]']))
        self.check_loss(result, 42, True)
        self.assertEqual(result['stages'], EXPECTED_STAGES)

    def test_tracefs_overwritten_entries(self):
        result = compute(tracefs_text(entries=(18, 30), extra=[
            '##### CPU 1 buffer started ####']))
        self.check_loss(result, 0, True)
        self.assertEqual(result['trace_loss']['entries_overwritten'], 12)

    def test_trace_cmd_dropped(self):
        result = compute(trace_cmd_text(extra=['CPU:0 [7 EVENTS DROPPED]']))
        self.check_loss(result, 7, False)

    def test_perf_lost(self):
        extra = ['            perf      0 [000]     0.000000: '
                 'PERF_RECORD_LOST lost 3']
        result = compute(perf_script_text(extra=extra))
        self.check_loss(result, 3, False)

    def test_per_cpu_stats(self):
        counts = funnel.TraceCounts()
        counts.add_stats('1', 'entries: 10\noverrun: 5\ncommit overrun: 0\n'
                         'bytes: 100\ndropped events: 0\nread events: 0\n')
        funnel.parse_lines(io.StringIO(tracefs_text()), counts)
        result = funnel.compute_funnel(counts)
        self.assertEqual(result['trace_loss']['stats'], {'cpu1 overrun': 5})
        self.assertIn('cpu1 overrun 5', ' '.join(result['warnings']))


class Notes(unittest.TestCase):
    """What the trace can't account for is explained"""

    def test_untraced_last_drain(self):
        # misses of the last drain at kdamond stop are traced, the drain not
        events = [
            ('t', 1, 0, S, SAMPLE % (0x1000, 0, 0, 0)),
            ('t', 1, 0, S, SAMPLE % (0x1000, 0, 0, 0)),
            ('t', 1, 0, 'damon_perf_ring_overflow', 'cpu=0'),
            ('k', 2, 0, 'damon_perf_report_missed',
             'addr=0x1000 cpu=0 reason=2'),
        ]
        result = compute(tracefs_text(events=events))
        self.assertEqual(result['stages']['enqueued'], 2)
        self.assertEqual(result['stages']['drained'], 0)
        self.assertEqual(result['losses']['discarded'], -1)
        self.assertEqual(result['losses']['ring_drops']['nested_producer'],
                         -1)
        self.assertIsNone(result['reports_per_region_update'])
        notes = ' '.join(result['notes'])
        self.assertIn('the last drain at kdamond stop', notes)
        self.assertIn('more damon_perf_ring_overflow events', notes)

    def test_drained_more_than_enqueued(self):
        events = [('k', 2, 0, 'damon_perf_drain',
                   'total=4 matched=4 updated=2 dropped=1')]
        result = compute(tracefs_text(events=events))
        self.assertEqual(result['stages']['enqueued'], -1)
        self.assertEqual(result['losses']['not_drained_in_trace'], -5)
        notes = ' '.join(result['notes'])
        self.assertIn('before the trace started', notes)
        self.assertIn('5 more reports drained than enqueued', notes)

    def test_missing_misses(self):
        events = [('k', 2, 0, 'damon_perf_drain',
                   'total=4 matched=1 updated=1 dropped=0')]
        result = compute(tracefs_text(events=events))
        self.assertEqual(result['losses']['discarded'], 3)
        self.assertIn('neither matched nor missed', ' '.join(result['notes']))

    def test_drain_without_dropped(self):
        events = [('k', 2, 0, 'damon_perf_drain',
                   'total=4 matched=1 updated=1')]
        result = compute(tracefs_text(events=events))
        self.assertEqual(result['stages']['drained'], 4)
        self.assertEqual(result['lines']['unparsed'], 0)
        self.assertIn('no dropped= field', ' '.join(result['warnings']))

    def test_updates_above_matches(self):
        events = [('k', 2, 0, 'damon_perf_drain',
                   'total=1 matched=1 updated=2 dropped=0')]
        result = compute(tracefs_text(events=events))
        self.assertIn('inconsistent', ' '.join(result['warnings']))

    def test_empty(self):
        result = compute('# tracer: nop\n')
        self.assertEqual(result['stages'],
                         dict.fromkeys(EXPECTED_STAGES, 0))
        self.assertIn('no damon_perf_* events', ' '.join(result['warnings']))
        funnel.format_funnel(result)


class ParseCommand(unittest.TestCase):
    """The 'parse' mode, its output and exit status"""

    def test_text_output(self):
        with tempfile.NamedTemporaryFile('w', suffix='.txt') as f:
            f.write(tracefs_text())
            f.flush()
            proc = run_script(['parse', f.name])
        self.assertEqual(proc.returncode, 0, proc.stderr)
        out = proc.stdout
        for text in ('callback', 'valid', 'enqueued', 'drained', 'matched',
                     'region updates',
                     'null=1 addr_zero=1 kernel=1 inv_phys=1 xlate_fail=1 '
                     'guest=1',
                     'ring full 1', 'nested producer 1 (the rest)',
                     'tgid=1 no_region=1 boundary=1; discarded=0',
                     '2.00 matched reports per region update',
                     'process=7 softirq=1 hardirq=1 NMI=5'):
            self.assertIn(text, out)
        self.assertNotIn('WARNINGS', out)

    def test_stdin_json(self):
        proc = run_script(['parse', '--json', '-'], stdin=trace_cmd_text())
        self.assertEqual(proc.returncode, 0, proc.stderr)
        result = json.loads(proc.stdout)
        self.assertEqual(result['stages'], EXPECTED_STAGES)
        self.assertEqual(result['losses']['missed'], EXPECTED_MISSED)

    def test_json_warnings_on_stderr(self):
        proc = run_script(['parse', '--json', '-'],
                          stdin=tracefs_text(extra=[MALFORMED]))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(json.loads(proc.stdout)['lines']['unparsed'], 1)
        self.assertIn('WARNING:', proc.stderr)

    def test_missing_file(self):
        proc = run_script(['parse', '/nonexistent/trace.txt'])
        self.assertEqual(proc.returncode, 1)
        self.assertIn('cannot read', proc.stderr)

    def test_usage_errors(self):
        for args in ([], ['parse'], ['bogus'], ['record', '--bogus'],
                     ['record', '--duration', '1', '--', 'true'],
                     ['record', '--duration', 'x'],
                     ['record', '--duration', '-1']):
            proc = run_script(args)
            self.assertEqual(proc.returncode, 2, args)


class RecordCommand(unittest.TestCase):
    """The 'record' mode, on fake tracefs directories"""

    def make_tracefs(self, events=funnel.EVENTS, enabled=()):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        root = self.tmp.name
        with open(os.path.join(root, 'trace'), 'w') as f:
            f.write('stale content that record must clear\n')
        with open(os.path.join(root, 'tracing_on'), 'w') as f:
            f.write('0\n')
        for ev in events:
            evdir = os.path.join(root, 'events', 'damon', ev)
            os.makedirs(evdir)
            with open(os.path.join(evdir, 'enable'), 'w') as f:
                f.write('1\n' if ev in enabled else '0\n')
            with open(os.path.join(evdir, 'filter'), 'w') as f:
                f.write('none\n')
        os.makedirs(os.path.join(root, 'events', 'sched'), exist_ok=True)
        return root

    def read(self, *parts):
        with open(os.path.join(self.tmp.name, *parts)) as f:
            return f.read().strip()

    def write(self, text, *parts):
        path = os.path.join(self.tmp.name, *parts)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, 'w') as f:
            f.write(text)
        return path

    def test_record_command(self):
        root = self.make_tracefs(enabled=('damon_perf_drain',))
        crafted = self.write(tracefs_text(), 'crafted.txt')
        # a command that checks that the events are on, then 'traces'
        check = ('set -e; for e in %s; do grep -qx 1 '
                 '%s/events/damon/$e/enable; done; grep -qx 1 %s/tracing_on;'
                 ' test ! -s %s/trace; cat %s > %s/trace' %
                 (' '.join(funnel.EVENTS), root, root, root, crafted, root))
        proc = run_script(['record', '--tracefs', root, '--json', '--',
                           'sh', '-c', check])
        self.assertEqual(proc.returncode, 0, proc.stderr)
        result = json.loads(proc.stdout)
        self.assertEqual(result['stages'], EXPECTED_STAGES)
        self.assertEqual(result['warnings'], [])
        self.assertEqual(result['notes'][0],
                         '1 enqueued reports are not in any traced drain: '
                         'they were still in the rings when the trace '
                         'stopped, or the last drain at kdamond stop took '
                         'them, which is not traced; reports that a context '
                         'not receiving reports dropped are not traced '
                         'either')
        # restored as they were
        for ev in funnel.EVENTS:
            want = '1' if ev == 'damon_perf_drain' else '0'
            self.assertEqual(self.read('events', 'damon', ev, 'enable'),
                             want, ev)
        self.assertEqual(self.read('tracing_on'), '0')

    def test_record_overrun_and_filter(self):
        root = self.make_tracefs()
        self.write('entries: 3\noverrun: 17\ncommit overrun: 0\n'
                   'dropped events: 0\n', 'per_cpu', 'cpu0', 'stats')
        self.write('entries: 3\noverrun: 0\ncommit overrun: 0\n'
                   'dropped events: 2\n', 'per_cpu', 'cpu1', 'stats')
        self.write('reason != 0\n', 'events', 'damon', 'damon_perf_sample',
                   'filter')
        proc = run_script(['record', '--tracefs', root, '--duration', '0'])
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn('WARNINGS:', proc.stdout)
        self.assertIn('cpu0 overrun 17', proc.stdout)
        self.assertIn('cpu1 dropped events 2', proc.stdout)
        self.assertIn('damon_perf_sample has a filter (reason != 0)',
                      proc.stdout)
        self.assertEqual(self.read('trace'), '')

    def test_record_failing_command(self):
        root = self.make_tracefs()
        proc = run_script(['record', '--tracefs', root, '--', 'sh', '-c',
                           'exit 3'])
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn('the command exited with status 3', proc.stdout)

    def test_record_buffer_size(self):
        root = self.make_tracefs()
        self.write('7 (expanded: 1408)\n', 'buffer_size_kb')
        check = 'grep -qx 8192 %s/buffer_size_kb' % root
        proc = run_script(['record', '--tracefs', root, '--buffer-size-kb',
                           '8192', '--', 'sh', '-c', check])
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertNotIn('exited with status', proc.stdout)
        self.assertEqual(self.read('buffer_size_kb'), '7')

    def test_record_without_observe_events(self):
        root = self.make_tracefs(events=('damon_perf_ring_overflow',))
        proc = run_script(['record', '--tracefs', root, '--duration', '0'])
        self.assertEqual(proc.returncode, 1)
        self.assertIn('damon_perf_* tracepoints not found: is '
                      'CONFIG_DAMON_PERF_OBSERVE enabled?', proc.stderr)
        self.assertEqual(self.read('events', 'damon',
                                   'damon_perf_ring_overflow', 'enable'), '0')

    def test_record_without_tracefs(self):
        with tempfile.TemporaryDirectory() as root:
            proc = run_script(['record', '--tracefs', root, '--duration',
                               '0'])
        self.assertEqual(proc.returncode, 1)
        self.assertIn('tracefs not found', proc.stderr)

    def test_record_error_restores(self):
        root = self.make_tracefs(enabled=('damon_perf_sample',))
        # a buffer_size_kb that can't be written, even by root
        os.makedirs(os.path.join(root, 'buffer_size_kb'))
        proc = run_script(['record', '--tracefs', root, '--buffer-size-kb',
                           '4096', '--duration', '0'])
        self.assertEqual(proc.returncode, 1)
        self.assertIn('cannot write', proc.stderr)
        for ev in funnel.EVENTS:
            want = '1' if ev == 'damon_perf_sample' else '0'
            self.assertEqual(self.read('events', 'damon', ev, 'enable'),
                             want, ev)
        self.assertEqual(self.read('tracing_on'), '0')

if __name__ == '__main__':
    unittest.main()
