"""Generate the bundled link traces (mahimahi `mm-link` format) from synthetic patterns.

Each line of a trace is a time in ms at which the link can deliver one 1500-byte opportunity;
the trace repeats with its last time as period. A pattern is a capacity curve (bit/s over the
period); the trace puts an opportunity at the end of every millisecond in which the cumulative
capacity passes another multiple of 1500 B, so the opportunities of any window hold the
capacity of that window to within one opportunity.

    python3 scripts/make_traces.py [OUT_DIR]    # default: python/quicksim/scenarios/traces

The patterns (all deterministic; tests/test_traces.py checks the committed files are what this
script writes):

- constant-12mbps.mm: 12 Mbit/s, one opportunity every millisecond (the file is "1").
- square-20-2mbps.mm: a square wave, 20 Mbit/s for 1.5 s then 2 Mbit/s for 1.5 s (period 3 s).
- cellular-walk.mm: a "cellular-like" rate, a seeded mean-reverting random walk of the log
  rate: every 100 ms, log r <- log r + 0.1 (log 10 Mbit/s - log r) + u, u uniform in
  [-0.35, 0.35], r kept within 1..40 Mbit/s, starting at 10 Mbit/s; 20 s long (Python's
  `random.Random(16)`, its `random()` draws only, the same on every platform and version).
"""

from __future__ import annotations

import math
import random
import sys
from collections.abc import Callable
from pathlib import Path

OPPORTUNITY_BITS = 1500 * 8


def trace(rate_bps: Callable[[int], float], period_ms: int) -> list[int]:
    """Opportunity times of a capacity curve: `rate_bps(ms)` is the rate during millisecond
    `ms` (from ms - 1 to ms), for ms in 1..period_ms. The period's last millisecond always
    holds an opportunity (it is the repeat period), added if the curve did not put one there."""
    times: list[int] = []
    bits = 0.0
    done = 0
    for ms in range(1, period_ms + 1):
        bits += rate_bps(ms) / 1000.0
        # Rounded to a millionth of a bit, so float sums of whole numbers of opportunities do
        # not fall just short of them.
        total = math.floor(round(bits, 6) / OPPORTUNITY_BITS)
        times.extend([ms] * (total - done))
        done = total
    if not times or times[-1] != period_ms:
        times.append(period_ms)
    return times


def constant() -> list[int]:
    return trace(lambda _ms: 12e6, 1)


def square() -> list[int]:
    return trace(lambda ms: 20e6 if ms <= 1500 else 2e6, 3000)


def cellular_walk() -> list[int]:
    rng = random.Random(16)
    rates: list[float] = []
    rate = 10e6
    for _ in range(200):  # 200 steps of 100 ms: 20 s
        rates.append(rate)
        step = 0.1 * math.log(10e6 / rate) + (rng.random() * 2 - 1) * 0.35
        rate = min(40e6, max(1e6, rate * math.exp(step)))
    return trace(lambda ms: rates[(ms - 1) // 100], 20_000)


PATTERNS: dict[str, Callable[[], list[int]]] = {
    "constant-12mbps.mm": constant,
    "square-20-2mbps.mm": square,
    "cellular-walk.mm": cellular_walk,
}


def main(argv: list[str]) -> int:
    default = Path(__file__).parent.parent / "python" / "quicksim" / "scenarios" / "traces"
    out = Path(argv[1]) if len(argv) > 1 else default
    out.mkdir(parents=True, exist_ok=True)
    for name, make in PATTERNS.items():
        times = make()
        (out / name).write_text("".join(f"{t}\n" for t in times))
        print(f"{out / name}: {len(times)} opportunities, period {times[-1]} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
