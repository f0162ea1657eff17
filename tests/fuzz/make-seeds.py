#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""make-seeds.py DIR: writes the seed corpus of spe-fuzz.c into DIR.

Each seed is two control bytes (the drain's budget, 0 for none; the number
of commits and the buffer offset, see spe-fuzz.c) and then AUX data in the
Arm SPE record format: the layouts of perf's raw dumps of SPE data, of the
harness's AUX test PMU, of make bench's records, branches, padding runs,
Alignment packets, records cut by a commit or by a read, and malformed
headers.  tests/fuzz/corpus holds their output; run it again after a
change here.
"""
import os
import struct
import sys

READ_SZ = 8 * 2048  # DAMON_PERF_AUX_READ_SZ


def pkt(hdr, value, size):
    return bytes([hdr]) + value.to_bytes(size, 'little')


def addr(idx, a):
    return pkt(0xb0 | idx, a, 8)


def perf_raw(va, pa, store=False):
    """The order of perf report -D's SPE dumps: OP VA PA LAT EV PC LAT TS"""
    return (pkt(0x49, 1 if store else 0, 1) + addr(2, va) +
            addr(3, pa | 1 << 63) + pkt(0x99, 7, 2) +
            pkt(0x52, 0x16, 2) + addr(0, 0x400000 | 1 << 63) +
            pkt(0x98, 31, 2) + pkt(0x71, 0x1234567890, 8))


def testpmu(va, pa, tid, store=False, ts=False):
    """damon_test_aux's: PC OP VA PA CX EV, End or Timestamp"""
    r = (addr(0, 0x401000 | 1 << 63) + pkt(0x49, 1 if store else 0, 1) +
         addr(2, va) + addr(3, pa | 1 << 63) + pkt(0x64, tid, 4) +
         pkt(0x52, 0x16, 2))
    return r + (pkt(0x71, 42, 8) if ts else b'\x01')


def bench(va, pa, tid, store=False):
    """make bench's: PC EV LAT LAT OP VA LAT PA DS CX TS"""
    return (addr(0, 0xffff800012345678) + pkt(0x52, 0x16, 2) +
            pkt(0x99, 3, 2) + pkt(0x98, 12, 2) +
            pkt(0x49, 1 if store else 0, 1) + addr(2, va) +
            pkt(0x9a, 1, 2) + addr(3, pa | 1 << 63) + pkt(0x53, 0, 2) +
            pkt(0x64, tid, 4) + pkt(0x71, 99, 8))


def branch():
    return (addr(0, 0x402000 | 1 << 63) + pkt(0x4a, 1, 1) +
            addr(1, 0x401000 | 1 << 63) + pkt(0x42, 0x42, 1) + b'\x01')


def ext_addr(idx, a):
    """an Address packet with an extended header"""
    return bytes([0x20 | (idx >> 3), 0xb0 | (idx & 7)]) + a.to_bytes(8, 'little')


def align(n):
    """an Alignment packet to 2 << n bytes, n in 0..3"""
    return bytes([0x20 | n, 0x00])


def seeds():
    va, pa, tid = 0x7f0000001000, 0x80001000, 1234
    recs = [testpmu(va + i * 64, pa + i * 64, tid, i % 3 == 0, i % 2 == 0)
            for i in range(40)]
    yield 'perf-raw', 0, 1, b''.join(perf_raw(va + i * 8, pa + i * 8, i & 1)
                                     for i in range(64))
    yield 'testpmu', 0, 1, b''.join(recs)
    yield 'testpmu-budget', 3, 2, b''.join(recs)
    yield 'bench', 0, 1, b''.join(bench(va + i, pa + i, tid, i & 1)
                                  for i in range(64))
    yield 'branches', 0, 1, b''.join(branch() + recs[i] for i in range(16))
    yield 'padding', 0, 1, b''.join(b'\0' * (i % 8) + recs[i]
                                    for i in range(40))
    yield 'extended', 0, 1, (ext_addr(2, va) + pkt(0x49, 0, 1) + b'\x01') * 8
    # the Arm SPE driver pads the free space: a pad run that ends 3 bytes
    # before a read boundary, then a record that the read cuts
    yield 'pad-to-read', 0, 1, b'\0' * (READ_SZ - 3) + b''.join(recs[:4])
    yield 'pad-to-read-commits', 1, 3, b'\0' * (READ_SZ - 3) + recs[0] * 8
    # Alignment packets between records, to 2..16 bytes
    body = b''
    for i in range(32):
        body += recs[i]
        body += align(i % 4)
        n = 2 << (i % 4)
        body += b'\0' * ((-len(body)) % n)
    yield 'alignment', 0, 1, body
    # records cut at the end of the committed data
    yield 'cut-end', 0, 1, b''.join(recs[:5]) + recs[5][:7]
    yield 'cut-commits', 0, 4, b''.join(recs[:20])
    # malformed headers within full reads and at the end
    full = b''.join(recs) * 12
    bad = full[:5000] + b'\x02' + full[5000:READ_SZ * 2]
    yield 'malformed-full-read', 0, 1, bad
    yield 'malformed-budget', 2, 2, bad
    yield 'malformed-end', 0, 1, b''.join(recs[:3]) + b'\xff\x00\x01'
    yield 'too-long', 0, 1, pkt(0x42, 2, 1) * 1100 + b'\x01'


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, budget, commits, body in seeds():
        with open(os.path.join(out, name), 'wb') as f:
            f.write(struct.pack('BB', budget, commits - 1) + body)


if __name__ == '__main__':
    main()
