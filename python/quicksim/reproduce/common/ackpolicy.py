"""Shared by paper-fig7 and ack-frequency: the paper's ack-ratio setup (scenario `ack-ratio.toml`)
run once per ACK policy with common random numbers, and the tables and plots of the result.

A sweep point is (one-way delay, loss rate) x repetition; its metric runs every policy with the
point's seed, so all policies of one repetition see the same loss draws (OMNeT++'s
`seed-set = ${repetition}` of the paper's ack_strategy.ini does the same). Bernoulli loss draws
one number per forward packet, so the k-th data packet is lost in every policy alike and the
policies differ only in how fast they get through the same packets: the paired differences
have far smaller confidence intervals than the throughputs themselves.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ... import units

if TYPE_CHECKING:
    import pandas as pd

    from ...results import Result
    from ...sweep import SweepResult

SCENARIO = "ack-ratio"
DELAYS_MS = (1, 2, 3, 4, 5)
LOSS_RATES = (0.001, 0.0002, 0.00005)
#: Left out before measuring: slow start overshoots far beyond the equilibrium window on a
#: 100 Gbit/s path and needs several halvings (about 120 RTTs at p = 0.005 %, measured) to settle.
WARMUP_RTTS = 200
#: Measured after the warm-up. The sawtooth cycle lasts W/2 RTTs (W = sqrt(8 / 3p) packets):
#: 26 RTTs at p = 0.1 %, 115 at p = 0.005 %; 800 RTTs cover 7 to 30 cycles per run.
MEASURE_RTTS = 800
QUICK_MEASURE_RTTS = 300
_IP_UDP = 28
_BINS = 10

#: policy key -> (label, --set overrides of ack-ratio.toml)
Variants = Mapping[str, tuple[str, Sequence[str]]]


def point_of(result: Result) -> tuple[float, float]:
    """(one-way delay in ms, loss probability) of a sweep run's scenario."""
    bn = result.scenario["dumbbell"]["bottleneck"]
    delay_ms = round(units.seconds(bn["delay"]) * 1e3, 9)
    return delay_ms, float(bn["forward"]["loss"]["p"])


def run_policy(
    delay_ms: float, p: float, seed: int, sets: Sequence[str], measure_rtts: int, extra: Sequence[str] = ()
) -> tuple[Result, dict[str, float]]:
    """One run of ack-ratio.toml at (delay, p) with `sets`; throughput over the measuring
    window and the ACK costs over the whole run."""
    from ... import api
    from ...validation import scenario_path

    rtt_s = 2 * delay_ms / 1e3
    bin_s = rtt_s * measure_rtts / _BINS
    warm_bins = -(-WARMUP_RTTS * rtt_s // bin_s)  # ceil: whole bins
    duration = bin_s * (warm_bins + _BINS)
    r = api.run(
        scenario_path(SCENARIO),
        seed=seed,
        sets=[
            f"dumbbell.bottleneck.delay={delay_ms:g}ms",
            f"dumbbell.bottleneck.forward.loss.p={p!r}",
            f"run.duration={duration * 1e6:.3f}us",
            f"run.record_interval={bin_s * 1e6:.3f}us",
            "run.record.conn=false",
            *sets,
            *extra,
        ],
    )
    f = r.flows
    f = f[(f["flow"].astype(str) == "quic") & (f["t_s"] >= warm_bins * bin_s - 1e-9)]
    quic_bytes = float((f["wire_recv_bytes"] - _IP_UDP * f["recv_packets"]).sum())
    window = _BINS * bin_s
    q = r.totals["flows"]["quic"]["quic"]
    end = float(r.meta.get("sim_end_s") or duration)
    data = max(q["packets_sent"], 1)
    out = {
        "tput_mbps": quic_bytes * 8 / window / 1e6,
        "ack_pkts_per_data": q["ack_only_packets_sent"] / data,
        "ack_frames_per_data": q["ack_frames_sent"] / data,
        # reverse path: IP bytes of everything the receiver sent (ACK-only packets in bulk transfer)
        "rev_kbps": (q["receiver_bytes_sent"] + _IP_UDP * q["receiver_packets_sent"]) * 8 / end / 1e3,
        "rev_bytes_per_data": (q["receiver_bytes_sent"] + _IP_UDP * q["receiver_packets_sent"]) / data,
        "control_frames_per_data": (q["ack_frequency_frames_sent"] + q["immediate_ack_frames_sent"]) / data,
        "loss_events": float(q["congestion_events"]),
    }
    return r, out


def policy_metrics(
    result: Result,
    variants: Variants,
    measure_rtts: int,
    baseline: str,
    same_as: Mapping[str, str] | None = None,
) -> dict[str, float]:
    """Sweep-metric body: every policy at the run's point and seed; `rel.<key>` is the paired
    relative throughput difference to `baseline`. `same_as` maps a policy to one whose run is
    provably identical (e.g. the I-bit with ack ratio 1:1), which is then not run again."""
    delay_ms, p = point_of(result)
    seed = int(result.meta["seed"])
    out: dict[str, float] = {}
    for key, (_, sets) in variants.items():
        if same_as and key in same_as:
            continue
        _, vals = run_policy(delay_ms, p, seed, sets, measure_rtts)
        out.update({f"{key}.{k}": v for k, v in vals.items()})
    for key, twin in (same_as or {}).items():
        out.update(
            {f"{key}.{k.split('.', 1)[1]}": v for k, v in list(out.items()) if k.startswith(f"{twin}.")}
        )
    base = out[f"{baseline}.tput_mbps"]
    for key in variants:
        out[f"rel.{key}"] = out[f"{key}.tput_mbps"] / base - 1.0
    return out


def sweep_grid(
    ctx: Any, metric: Any, repeat: int, delays: Sequence[float], losses: Sequence[float], suffix: str = ""
) -> SweepResult:
    """(delay x p) x repeat, each run's metric running every policy."""
    from ...validation import scenario_path

    result: SweepResult = ctx.sweep(
        scenario_path(SCENARIO),
        params={
            "dumbbell.bottleneck.delay": [f"{d:g}ms" for d in delays],
            "dumbbell.bottleneck.forward.loss.p": list(losses),
        },
        repeat=repeat,
        metrics=[metric],
        sets=["run.duration=1ms"],  # placeholder: the metric runs the real simulations
        suffix=suffix,
    )
    return result


def tidy(sw: SweepResult, metric: str, variants: Variants) -> pd.DataFrame:
    """Per (p, delay, policy): n, mean and 95 % CI of every per-policy value and of `rel`."""
    import pandas as pd

    s = sw.summary.copy()
    prefix = f"{metric}."
    s = s[s["metric"].str.startswith(prefix)]
    s["name"] = s["metric"].str.slice(len(prefix))
    rows: dict[tuple[float, float, str], dict[str, Any]] = {}
    delay_col = "dumbbell.bottleneck.delay"
    p_col = "dumbbell.bottleneck.forward.loss.p"
    for _, r in s.iterrows():
        first, _, rest = r["name"].partition(".")
        key, value = (rest, "rel") if first == "rel" else (first, rest)
        d = float(units.seconds(r[delay_col]) * 1e3)
        row = rows.setdefault(
            (float(r[p_col]), d, key),
            {"p": float(r[p_col]), "delay_ms": d, "policy": key, "label": variants[key][0]},
        )
        row[f"{value}"] = r["mean"]
        # Every per-policy value (throughput, ACKs per data packet, reverse rate, loss events) is
        # a count or a rate, never negative: its interval is clipped at 0 (n = 2 in quick mode
        # gave negative lower bounds). `rel` is a signed difference and keeps its interval.
        row[f"{value}_lo"] = 0.0 if value != "rel" and r["ci_low"] < 0 else r["ci_low"]
        row[f"{value}_hi"] = r["ci_high"]
        row["n"] = int(r["n"])
    return (
        pd.DataFrame(list(rows.values())).sort_values(["p", "delay_ms"], kind="stable").reset_index(drop=True)
    )


def pooled(sw: SweepResult, metric: str, key: str, value: str, p: float) -> tuple[float, float, float, int]:
    """Mean over all delays and repetitions of `<key>.<value>` (or `rel.<key>`) at loss p, with
    a Student t 95 % CI over the runs."""
    import numpy as np

    from ...stats import mean_ci

    col = f"{metric}.rel.{key}" if value == "rel" else f"{metric}.{key}.{value}"
    runs = sw.runs[sw.runs["error"].isna()]
    x = (
        runs.loc[np.isclose(runs["dumbbell.bottleneck.forward.loss.p"].astype(float), p), col]
        .astype(float)
        .to_numpy()
    )
    c = mean_ci(x.tolist())
    return c["mean"], c["ci_low"], c["ci_high"], len(x)
