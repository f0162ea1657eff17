#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# peer-damo-writes.py SELFTESTS_DIR: replays, in the guest, the sysfs writes
# that the peer damo (ravis-opensrc/damo, the user space tool of the base
# RFC's v2, unmodified) makes for the perf_event preps of its PEBS and IBS
# presets, and its switch of a prep from perf_event to set_pgidle and back,
# on the series' kernel: each must stage, turn on and off.  What damo writes
# and reads is said above damo_prep_files.  It reuses the helpers of the
# series' selftest sysfs_perf_preps.py (SELFTESTS_DIR has it and
# _damon_sysfs.py).  Prints 'ok NAME', '# SKIP NAME: why' or 'FAIL NAME: why'
# per case, then PASS or FAIL; exit 0, 1, or 4 if the kernel lacks the preps.
import os
import sys

sys.path.insert(0, sys.argv[1] if len(sys.argv) > 1 else '.')
import _damon_sysfs  # noqa: E402
from sysfs_perf_preps import (Fail, Skip, check_dependencies, ctx_dir,  # noqa: E402
                              expect, expect_content, expect_write,
                              kdamonds_dir, nr_filters_file, on_and_off,
                              prep_dir, preps_dir, probe_dir, read, setup,
                              state_file, write)

# What damo, the user space tool of DAMON, writes for the perf_event preps of
# its PEBS and IBS presets: the attribute files in this order, each written
# as a bare decimal number, only if the preset sets it, and sample_period or
# sample_freq only as freq says.  It reads every file back with int().  The
# software page faults event stands in for the PMUs of the presets (the cpu
# PMU with config 0x20d1, MEM_LOAD_RETIRED.L3_MISS, and ibs_op), which few
# machines have; all the other values are the presets'.
damo_prep_files = ['type', 'config', 'config1', 'config2', 'sample_period',
                   'freq', 'sample_freq', 'sample_phys_addr',
                   'sample_weight_struct', 'precise_ip', 'wakeup_events',
                   'exclude_kernel', 'exclude_hv']
damo_presets = {
        'pebs': dict(type=1, config=2, config1=0, config2=0, freq=1,
                     sample_freq=5003, sample_phys_addr=0,
                     sample_weight_struct=0, precise_ip=2, wakeup_events=1,
                     exclude_kernel=0, exclude_hv=0),
        'ibs': dict(type=1, config=2, config1=0, config2=0, freq=0,
                    sample_period=262144, sample_phys_addr=1,
                    sample_weight_struct=0, precise_ip=0, wakeup_events=1,
                    exclude_kernel=0, exclude_hv=0)}

def damo_write(path, value):
    'Writes value to path as damo does: no newline, any failure is fatal'
    try:
        with open(path, 'w') as f:
            f.write(value)
    except OSError as e:
        raise Fail('damo writing %r to %s: %s' % (value, path, e.strerror))

def damo_write_nr(path, nr):
    'damo writes a count file only if it reads another count'
    if int(read(path)) != nr:
        damo_write(path, '%d' % nr)

def damo_writes(f, preset):
    'Whether damo writes file f of a perf_event prep of preset'
    if f == 'sample_period' and preset.get('freq'):
        return False
    if f == 'sample_freq' and not preset.get('freq'):
        return False
    return f in preset

def damo_stage_probe(action, preset={}, weight=0):
    '''Stages probe 0 of one prep of action, of the files of preset for a
    perf_event prep, as damo does, and reads the files back as damo does'''
    damo_write_nr(os.path.join(preps_dir, 'nr_preps'), 1)
    damo_write(os.path.join(prep_dir, 'prep_action'), action)
    for f in damo_prep_files if action == 'perf_event' else []:
        if not damo_writes(f, preset):
            continue
        # damo fails rather than open another event than it asks for
        expect(os.path.isfile(os.path.join(prep_dir, f)),
               'no %s file, which damo writes' % f)
        damo_write(os.path.join(prep_dir, f), '%d' % preset[f])
    damo_write_nr(nr_filters_file, 0)
    damo_write(os.path.join(probe_dir, 'weight'), '%d' % weight)
    expect_content(os.path.join(prep_dir, 'prep_action'), action)
    for f in damo_prep_files if action == 'perf_event' else []:
        content = read(os.path.join(prep_dir, f))
        try:
            value = int(content)
        except ValueError:
            raise Fail('damo cannot parse %s: %r' % (f, content))
        expect(not damo_writes(f, preset) or value == preset[f],
               '%s: %s, not %d' % (f, content, preset.get(f, 0)))

def test_damo_pebs_preset():
    max_rate = int(read('/proc/sys/kernel/perf_event_max_sample_rate'))
    if max_rate < damo_presets['pebs']['sample_freq']:
        raise Skip('perf_event_max_sample_rate %d is lower than the '
                   'sample_freq of the preset' % max_rate)
    # a vaddr context, and probe weight 1, damo's defaults for the preset
    setup(preps=[])
    damo_stage_probe('perf_event', damo_presets['pebs'], weight=1)
    on_and_off()

def test_damo_ibs_preset():
    # a paddr context of an address range, as damo makes for the preset
    if 'paddr' in read(os.path.join(ctx_dir, 'avail_operations')).split():
        setup(ops='paddr', pid=0, preps=[])
        regions_dir = os.path.join(ctx_dir, 'targets', '0', 'regions')
        expect_write(os.path.join(regions_dir, 'nr_regions'), 1)
        expect_write(os.path.join(regions_dir, '0', 'start'), 1 << 20)
        expect_write(os.path.join(regions_dir, '0', 'end'), 2 << 20)
    else:
        setup(preps=[])
    damo_stage_probe('perf_event', damo_presets['ibs'])
    on_and_off()

def test_damo_prep_switch():
    # damo stages a set_pgidle prep where a perf_event prep was by writing
    # only prep_action: the attributes stay, and must not fail 'on'
    setup(preps=[])
    # of no sample_weight_struct, which older kernels have no file for
    damo_stage_probe('perf_event', dict((f, v) for f, v in
        damo_presets['ibs'].items() if f != 'sample_weight_struct'))
    on_and_off()
    damo_stage_probe('set_pgidle')
    on_and_off()
    expect_content(os.path.join(prep_dir, 'sample_period'),
                   damo_presets['ibs']['sample_period'])
    # and switching back opens the event of the attributes again
    damo_stage_probe('perf_event', {'freq': 0})
    on_and_off()

def main():
    try:
        check_dependencies()
    except (Skip, Fail) as e:
        print('%s: %s' % (type(e).__name__.upper(), e))
        sys.exit(_damon_sysfs.ksft_skip if type(e) is Skip else 1)
    failed = False
    for test in [test_damo_pebs_preset, test_damo_ibs_preset,
                 test_damo_prep_switch]:
        try:
            setup(preps=[])
            test()
            print('ok %s' % test.__name__)
        except Skip as e:
            print('# SKIP %s: %s' % (test.__name__, e))
        except Fail as e:
            print('FAIL %s: %s' % (test.__name__, e))
            failed = True
        finally:
            write(state_file, 'off')
    write(os.path.join(kdamonds_dir, 'nr_kdamonds'), 0)
    print('FAIL' if failed else 'PASS')
    sys.exit(1 if failed else 0)


if __name__ == '__main__':
    main()
