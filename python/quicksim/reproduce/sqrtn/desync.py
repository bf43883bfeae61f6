"""Why NewReno's losses stay synchronized at 2.5 Gbit/s in `buffer-sizing-sqrt-n`: the long-flow
scenario at the sqrt(n) buffer with one thing changed at a time (each flow its own RTT, starts
spread over 20 s, paced senders, RED instead of DropTail), the synchronization index of each,
and the drops grouped into congestion episodes (how many flows one overflow hits).

Not part of the reproduction's run: `python -m quicksim.reproduce.sqrtn.desync OUT.csv
[RATE_BPS N]` writes one row per variant (docs/reproductions/buffer-sizing-sqrt-n/README.md,
"Why NewReno stays synchronized at 2.5 Gbit/s")."""

from __future__ import annotations

import copy
import math
import sys
import time
from collections.abc import Callable
from typing import Any

from . import model as m

#: Drops closer than this (s) belong to one congestion episode: half the smallest RTT, so the
#: reaction to one overflow (an RTT later) starts a new episode.
EPISODE_GAP_S = m.RTT_MIN_S / 2


def episodes(drops: Any, t0: float, t1: float) -> list[tuple[int, int]]:
    """(drops, distinct flows) of each congestion episode in [t0, t1): bottleneck drops grouped
    while consecutive ones are less than EPISODE_GAP_S apart."""
    d = drops[(drops["queue"].astype(str) == m.BOTTLENECK) & (drops["t_s"] >= t0) & (drops["t_s"] < t1)]
    d = d.sort_values("t_s", kind="stable")
    out: list[tuple[int, int]] = []
    last = -math.inf
    count, flows = 0, set[str]()
    for t, f in zip(d["t_s"].to_numpy(dtype=float), d["flow"].astype(str), strict=True):
        if t - last > EPISODE_GAP_S and count:
            out.append((count, len(flows)))
            count, flows = 0, set[str]()
        count += 1
        flows.add(f)
        last = t
    if count:
        out.append((count, len(flows)))
    return out


def _own_rtts(doc: dict[str, Any]) -> None:
    # Each flow its own RTT: a per-flow extra delay uniform over its class's width (4 ms of RTT,
    # 2 ms one way), the class's access delay less 1 ms each way so the class mean stays.
    width = (m.RTT_MAX_S - m.RTT_MIN_S) / m.RTT_CLASSES / 2
    doc["dumbbell"]["access_delays"] = [
        f"{float(d.removesuffix('ms')) - width * 500:.6f}ms" for d in doc["dumbbell"]["access_delays"]
    ]
    for f in doc["flows"]:
        f["extra_delay"] = {"dist": "uniform", "min": "0s", "max": f"{width * 1e3:g}ms"}


def _paced(doc: dict[str, Any]) -> None:
    doc["tcp"]["pacing"] = True


def _red(doc: dict[str, Any]) -> None:
    # RED over the same buffer: early drops from a quarter of it, probability 0.1 at three
    # quarters (gentle above), the average over ~500 packets (w_q 0.002).
    b = doc["dumbbell"]["bottleneck"]["queue"]["packets"]
    doc["dumbbell"]["bottleneck"]["queue"] = {
        "kind": "red",
        "packets": b,
        "min_th": b / 4,
        "max_th": 3 * b / 4,
        "max_p": 0.1,
        "w_q": 0.002,
    }


def _late_starts(doc: dict[str, Any]) -> None:
    for f in doc["flows"]:
        f["start"] = {"dist": "uniform", "min": "0s", "max": "20s"}


#: (variant, change to the scenario, seconds added to the warm-up).
VARIANTS: tuple[tuple[str, Callable[[dict[str, Any]], None] | None, float], ...] = (
    ("as in the reproduction", None, 0.0),
    ("each flow its own RTT", _own_rtts, 0.0),
    ("starts over 20 s", _late_starts, 18.0),
    ("paced senders", _paced, 0.0),
    ("RED, same buffer", _red, 0.0),
)


def run_variant(rate_bps: float, n: int, variant: str, seed: int = 1) -> dict[str, Any]:
    """One variant at the sqrt(n) buffer with the reproduction's windows for (rate, n)."""
    import numpy as np

    from ... import api

    change, extra = next((c, e) for v, c, e in VARIANTS if v == variant)
    warm, meas = m.windows(rate_bps, n, (5.0, 1.0), (5.0, 2.0))
    warm += extra
    buffer = round(m.sqrt_rule(rate_bps, n))
    doc = copy.deepcopy(m.long_flows_doc(n, rate_bps, buffer, warm + meas, seed=seed))
    if change is not None:
        change(doc)
    t = time.perf_counter()
    r = api.run(doc)
    wall = time.perf_counter() - t
    sync, q = m.sync_index(r.drops, n, m.mean_rtt(), warm, warm + meas)
    ep = episodes(r.drops, warm, warm + meas)
    drops = np.array([d for d, _ in ep], dtype=float)
    hit = np.array([f for _, f in ep], dtype=float)
    return {
        "rate_bps": rate_bps,
        "n": n,
        "buffer_pkts": buffer,
        "variant": variant,
        "sync": sync,
        "loss_q": q,
        "utilization": m.utilization(r, rate_bps, warm, warm + meas),
        "episodes": len(ep),
        "episodes_per_s": len(ep) / meas,
        "drops_per_episode_over_n": float(np.median(drops)) / n if len(ep) else math.nan,
        "flows_hit_per_episode_over_n": float(np.median(hit)) / n if len(ep) else math.nan,
        "flows_hit_p90_over_n": float(np.quantile(hit, 0.9)) / n if len(ep) else math.nan,
        "window_pkts": (m.bdp_packets(rate_bps, m.mean_rtt()) + buffer) / n,
        "warmup_s": warm,
        "measure_s": meas,
        "wall_s": wall,
    }


def main(argv: list[str]) -> int:
    """`OUT.csv [RATE_BPS N]`: every variant at (rate, n), default 2.5 Gbit/s and 1 600 flows."""
    import pandas as pd

    if not argv or len(argv) not in (1, 3):
        print("usage: python -m quicksim.reproduce.sqrtn.desync OUT.csv [RATE_BPS N]", file=sys.stderr)
        return 2
    rate, n = (float(argv[1]), int(argv[2])) if len(argv) == 3 else (2.5e9, 1600)
    rows = []
    for variant, _, _ in VARIANTS:
        rows.append(run_variant(rate, n, variant))
        print({k: round(v, 4) if isinstance(v, float) else v for k, v in rows[-1].items()}, flush=True)
    pd.DataFrame(rows).to_csv(argv[0], index=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
