#!/usr/bin/env python3
"""Cycles per execution of each instruction of a run: `perf` samples joined with callgrind counts.

Where a machine has no hardware counters (a VM), `perf record -e cpu-clock` still tells where
time goes, and callgrind tells exactly how often each instruction runs; joined, they give each
instruction's cycles per execution, which shows what instruction counts cannot: loads that wait
for a store they cannot be forwarded from, cache misses, a hot path's front-end stalls (round 9
in docs/performance/history/round-09.md found its store-forwarding stalls this way).

    BIN=target/release/examples/run_json
    perf record -e cpu-clock -F 20000 -o perf.data $BIN long.json        # e.g. scale-100x1g 30 s
    valgrind --tool=callgrind --dump-instr=yes --callgrind-out-file=cg.out $BIN short.json
    scripts/perf_join.py $BIN perf.data cg.out --scale 10 --top 30          # short.json x 10 = long

`--scale`: how many times the callgrind run's work the perf run does (the same scenario, longer).
`--hz`, `--ghz`: the sampling rate and the clock, for the cycles per sample. A sample is put on
the instruction before the one perf reports (the one that stalled, as a rule). Needs perf,
objdump and addr2line on the PATH.
"""

from __future__ import annotations

import argparse
import bisect
import collections
import re
import subprocess
import sys


def perf_ips(perf_data: str, binary: str) -> list[int]:
    """Sampled instruction addresses inside `binary`, as addresses of its ELF file."""
    mmaps = subprocess.run(
        ["perf", "script", "-i", perf_data, "--show-mmap-events"], capture_output=True, text=True, check=True
    ).stdout
    name = binary.rsplit("/", 1)[-1]
    line = next(x for x in mmaps.splitlines() if "MMAP" in x and name in x and "r-xp" in x)
    m = re.search(r"\[(0x[0-9a-f]+)\((0x[0-9a-f]+)\) @ (0x[0-9a-f]+)", line)
    if m is None:
        sys.exit(f"perf_join: no executable mapping of {name} in {perf_data}")
    base, size, offset = (int(x, 16) for x in m.groups())
    # File offset -> virtual address of the executable segment.
    headers = subprocess.run(["readelf", "-lW", binary], capture_output=True, text=True).stdout
    seg = next(x.split() for x in headers.splitlines() if "LOAD" in x and "R E" in x)
    delta = int(seg[2], 16) - int(seg[1], 16)
    cmd = ["perf", "script", "-i", perf_data, "-F", "ip"]
    raw = subprocess.run(cmd, capture_output=True, text=True).stdout
    ips = (int(x, 16) for x in raw.split())
    return [ip - base + offset + delta for ip in ips if base <= ip < base + size]


def callgrind_counts(path: str, binary: str) -> collections.Counter[int]:
    """Execution count of each instruction of `binary` (a `--dump-instr=yes` profile)."""
    name = binary.rsplit("/", 1)[-1]
    counts: collections.Counter[int] = collections.Counter()
    ours_id, ours, addr, skip = None, False, 0, False
    with open(path) as f:
        for line in f:
            if line.startswith(("ob=", "cob=")):
                key = line.split("=", 1)[1].split()[0]
                if name in line:
                    ours_id = key
                if line.startswith("ob="):
                    ours = key == ours_id
                continue
            if line.startswith("calls="):
                skip = True  # the next cost line is the call's inclusive cost
                continue
            if not line or line[0] not in "0123456789+-*":
                continue
            parts = line.split()
            p = parts[0]
            if p.startswith("0x"):
                addr = int(p, 16)
            elif p[0] == "+":
                addr += int(p[1:], 0)
            elif p[0] == "-":
                addr -= int(p[1:], 0)
            if skip:
                skip = False
                continue
            if ours and len(parts) > 2:
                counts[addr] += int(parts[2])
    return counts


def disassembly(binary: str) -> dict[int, str]:
    cmd = ["objdump", "-d", "--no-show-raw-insn", binary]
    out = subprocess.run(cmd, capture_output=True, text=True).stdout
    ins = {}
    for line in out.splitlines():
        m = re.match(r"\s+([0-9a-f]+):\s+(.*)", line)
        if m:
            ins[int(m.group(1), 16)] = " ".join(m.group(2).split())[:48]
    return ins


def inline_stack(binary: str, addr: int, depth: int) -> list[str]:
    out = subprocess.run(
        ["addr2line", "-i", "-C", "-f", "-e", binary, hex(addr)], capture_output=True, text=True
    ).stdout.splitlines()
    frames = []
    for fn, loc in zip(out[0::2], out[1::2], strict=False):
        frames.append(f"{loc.rsplit('/', 1)[-1]:30s} {fn.split('(')[0][:80]}")
    return frames[:depth]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("binary")
    ap.add_argument("perf_data")
    ap.add_argument("callgrind_out")
    ap.add_argument("--scale", type=float, default=1.0, help="perf run's work / callgrind run's work")
    ap.add_argument("--hz", type=float, default=20000.0, help="perf's sampling rate (-F)")
    ap.add_argument("--ghz", type=float, default=3.0, help="the CPU clock, for cycles per sample")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--depth", type=int, default=5, help="inlined frames shown per instruction")
    a = ap.parse_args()
    ips = perf_ips(a.perf_data, a.binary)
    if not ips:
        sys.exit("perf_join: no samples inside the binary")
    samples = collections.Counter(ips)
    counts = callgrind_counts(a.callgrind_out, a.binary)
    ins = disassembly(a.binary)
    addrs = sorted(ins)
    per_sample = a.ghz * 1e9 / a.hz
    total = sum(counts.values()) * a.scale / 1e6
    print(f"{len(ips)} samples ({per_sample:.0f} cycles each); {total:.0f} M instructions")
    print("samples  share  cycles/exec  instruction (the one before the sampled address)")
    for addr, n in samples.most_common(a.top):
        i = bisect.bisect_left(addrs, addr)
        prev = addrs[i - 1] if i > 0 else addr
        execs = counts.get(prev, 0) * a.scale
        cpe = f"{n * per_sample / execs:8.1f}" if execs else "       ?"
        print(f"{n:7d} {100 * n / len(ips):5.1f}% {cpe}     {ins.get(prev, '?')}")
        for frame in inline_stack(a.binary, prev, a.depth):
            print(f"{'':27s}{frame}")


if __name__ == "__main__":
    main()
