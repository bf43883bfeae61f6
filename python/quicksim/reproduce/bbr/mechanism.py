"""Why `bbr` (draft-ietf-ccwg-bbr) keeps less than 90 % of the link under random loss, shown by
mechanism for `quicksim reproduce bbr`: a loss-rate sweep on two paths (10 Mbit/s and
100 Mbit/s, 40 ms), the runs again with one loss response turned off at a time, and a model of
the response the draft specifies (§5.5.10.3): outside bandwidth probing, at the end of every
round trip that saw a loss, bw_lo = max(bw_latest, 0.7 · bw_lo), where bw_latest is what that
round delivered; only the next probe (every min(BDP in packets, 63) rounds or 2-3 s) resets it.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ... import validation
from ...validation import Check

if TYPE_CHECKING:
    import pandas as pd

#: The two paths: (link Mbit/s, bottleneck queue in packets = 3 BDP).
PATHS = ((10, 100), (100, 1000))
LOSSES = (0.0, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 2e-2)
QUICK_LOSSES = {10: (0.0, 1e-2), 100: (0.0, 1e-3, 1e-2)}
#: Round trip with the serialization of a 1500-byte packet at 10 Mbit/s (the model's round).
RTT_S = 0.041
#: A cc with the lower-bound cut made negligible (beta: bw_lo and inflight_lo lose 0.1 % per
#: lossy round), and one with the 2 % loss threshold out of reach (inflight_hi never cut).
NO_LOWER_BOUNDS = '{algo = "bbr", beta = 0.999}'
NO_LOSS_THRESH = '{algo = "bbr", loss_thresh = 0.5}'
NEITHER = '{algo = "bbr", beta = 0.999, loss_thresh = 0.5}'


def lower_bound_model(
    mbps: float, p: float, rtt_s: float = RTT_S, probe_rounds: int = 3
) -> tuple[float, float]:
    """The fraction of its loss-free utilization `bbr` keeps at Bernoulli loss `p`, and D, the
    total cut per probe cycle. W packets of 1500 B per round; a cycle lasts N = min(W, 63,
    2.5 s / RTT) rounds (§5.3.3.8: Reno rounds, at most 63, or the 2-3 s clock), `probe_rounds`
    of them at the full rate (REFILL, UP, DOWN); in the others a cut comes every L = 1 + 1/(pW)
    rounds (BBRNoteLoss: the first loss after a cut, then one more round) and takes bw_lo to
    what the round delivered: 0.99 (pacing margin) · (1 - p) of it, a cut of d. The rate
    decays as (1 - d)^(rounds / L); its mean over the cruise is (1 - e^-D) / D with
    D = (N - probe_rounds) / L · d."""
    w = mbps * 1e6 * rtt_s / 12_000
    n = min(w, 63.0, 2.5 / rtt_s)
    if p <= 0:
        return 1.0, 0.0
    rounds_per_cut = 1 + 1 / (p * w)
    d = 1 - 0.99 * (1 - p)
    cruise = n - probe_rounds
    big_d = cruise / rounds_per_cut * d
    mean = (1 - math.exp(-big_d)) / big_d
    return (cruise * mean + probe_rounds) / n, big_d


def _util(mbps: int, queue: int, p: float, cc: str, dur: int) -> float:
    from ... import api

    r = api.run(
        validation.scenario_path("bbr-loss"),
        sets=[
            f"tcp.cc={cc}",
            f"run.duration={dur}s",
            f"dumbbell.bottleneck.rate={mbps}Mbps",
            f"dumbbell.bottleneck.queue.packets={queue}",
            f"dumbbell.bottleneck.forward.loss.p={p}",
        ],
    )
    f = r.flows[(r.flows.flow == "tcp") & (r.flows.t_s >= 5.0 - 1e-9)]
    return float(f.delivered_bytes.sum()) * 8 / (dur - 5) / (mbps * 1e6 * 1448 / 1500)


def sweep_part(quick: bool) -> tuple[pd.DataFrame, list[Check]]:
    """`bbr` by loss rate on both paths, beside the model (scaled by the measured loss-free
    utilization), and the runs with each loss response turned off."""
    import pandas as pd

    rows = []
    for mbps, queue in PATHS:
        dur = 60 if mbps == 10 else 40  # quick mode too: fewer points, not shorter runs
        base = 0.0
        for p in QUICK_LOSSES[mbps] if quick else LOSSES:
            u = _util(mbps, queue, p, '"bbr"', dur)
            base = u if p == 0 else base
            frac, big_d = lower_bound_model(mbps, p)
            row = {
                "link_mbps": mbps,
                "loss": p,
                "utilization": u,
                "model": base * frac,
                "cuts_per_cycle_D": big_d,
            }
            if p > 0:
                row["no_lower_bounds"] = _util(mbps, queue, p, NO_LOWER_BOUNDS, dur)
                row["no_loss_thresh"] = _util(mbps, queue, p, NO_LOSS_THRESH, dur)
                row["neither"] = _util(mbps, queue, p, NEITHER, dur)
            rows.append(row)
    frame = pd.DataFrame(rows)
    at = frame.set_index(["link_mbps", "loss"])

    def get(mbps: int, p: float, col: str = "utilization") -> float:
        return float(at.loc[(mbps, p), col])

    free10, free100 = get(10, 0.0), get(100, 0.0)
    checks = [
        Check(
            "bbr: 10 Mbit/s, 1 % loss, vs the lower-bound model",
            get(10, 1e-2),
            get(10, 1e-2, "model"),
            0.10,
            "",
            note="the model leaves out inflight_hi's 2 % cut and the first cut after ProbeBW_DOWN",
        ),
        Check(
            "bbr: 10 Mbit/s, 1 %: both loss responses off, the loss-free utilization back",
            get(10, 1e-2, "neither"),
            free10 - 0.03,
            0.0,
            "",
            kind="min",
            note=f"loss-free {free10:.3f}; only the 2 % threshold off "
            f"{get(10, 1e-2, 'no_loss_thresh'):.3f}, "
            f"only the lower bounds off {get(10, 1e-2, 'no_lower_bounds'):.3f}",
        ),
        Check(
            "bbr: same cuts per cycle, same utilization (100 Mbit/s at 0.1 % vs 10 Mbit/s at 1 %)",
            get(100, 1e-3),
            get(10, 1e-2),
            0.06,
            "",
            note="D = 0.16 on both: a cut every ~4 rounds, 1-2 % each",
        ),
        Check(
            "bbr: 100 Mbit/s, 0.1 %: the lower-bound cut off, the loss-free utilization back",
            get(100, 1e-3, "no_lower_bounds"),
            free100 - 0.02,
            0.0,
            "",
            kind="min",
            note=f"loss-free {free100:.3f}, with the draft's beta 0.7 {get(100, 1e-3):.3f}",
        ),
        Check(
            "bbr: 100 Mbit/s, 0.1 %: the 2 % threshold plays no part (one loss in a 345-packet round)",
            get(100, 1e-3, "no_loss_thresh"),
            get(100, 1e-3),
            0.01,
            "",
        ),
        Check(
            "bbr: a 10x BDP is no better at 1 % loss (100 Mbit/s <= 10 Mbit/s)",
            get(100, 1e-2),
            get(10, 1e-2),
            0.0,
            "",
            kind="max",
            note="every 345-packet round has a loss: a cut every 1.3 rounds",
        ),
    ]
    return frame, checks
