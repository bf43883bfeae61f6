"""The conformance suite's scenarios, what each measures, and its pass criterion with the source of
the threshold. Every case is one simulation over QUIC on a dumbbell (10 Mbit/s, 20 ms one-way:
RTT 40 ms, BDP 50 kB = 40 packets of 1252 B at MTU 1280) unless it says otherwise; `measure`
runs one case in a worker process and returns small JSON-ready numbers and series.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["CASES", "Case", "Criterion", "jobs_for", "measure"]

RATE_BPS = 10e6
ONE_WAY_S = 0.020
RTT_S = 2 * ONE_WAY_S
BDP_BYTES = int(RATE_BPS * RTT_S / 8)  # 50 000 B
SEGMENT = 1252  # QUIC packet at MTU 1280 (the window's unit)
BIN_S = 0.5
FORWARD = "bottleneck:router1->router2"


@dataclass(frozen=True)
class Criterion:
    """A pass threshold: `measured <op> threshold`, and where the threshold comes from."""

    op: str  # ">=", "<=", "within" (|measured / threshold - 1| <= tol), "between" (threshold..upper)
    threshold: float
    source: str
    tol: float = 0.0
    upper: float = math.inf

    def passes(self, measured: float) -> bool:
        if math.isnan(measured):
            return False
        if self.op == ">=":
            return measured >= self.threshold
        if self.op == "<=":
            return measured <= self.threshold
        if self.op == "between":
            return self.threshold <= measured <= self.upper
        return abs(measured / self.threshold - 1) <= self.tol

    def text(self) -> str:
        if self.op == "within":
            return f"within {self.tol:.0%} of {self.threshold:.4g}"
        if self.op == "between":
            return f"{self.threshold:.4g} to {self.upper:.4g}"
        return f"{self.op} {self.threshold:.4g}"


def window_criterion(family: str, rtt: float, p: float) -> Criterion:
    """The window-vs-loss criterion of a cell for a controller of `family` ("reno", "cubic",
    "band": any other controller)."""
    from ..reproduce.cubic_rfc9438 import TABLE, fluid_reno

    reno, table = fluid_reno(p), float(TABLE[rtt][p])
    if family == "reno":
        return Criterion("within", reno, WINDOW_SOURCE["reno"], tol=WINDOW_TOL)
    if family == "cubic":
        return Criterion("within", table, WINDOW_SOURCE["cubic"], tol=WINDOW_TOL)
    return Criterion(
        "between", reno * (1 - WINDOW_TOL), WINDOW_SOURCE["band"], upper=table * (1 + WINDOW_TOL)
    )


@dataclass(frozen=True)
class Case:
    """One line of the report card."""

    key: str
    title: str
    what: str  # the measured quantity and its unit


CASES: dict[str, Case] = {
    c.key: c
    for c in (
        Case("self_fairness_2", "self-fairness, 2 flows", "Jain's index"),
        Case("self_fairness_4", "self-fairness, 4 flows", "Jain's index"),
        Case("rtt_fairness_2", "RTT fairness 1:2 (40/80 ms)", "throughput ratio short/long"),
        Case("rtt_fairness_4", "RTT fairness 1:4 (40/160 ms)", "throughput ratio short/long"),
        Case("convergence", "convergence of a new flow to its fair share", "seconds"),
        Case("shallow_buffer", "shallow buffer (0.25 BDP), 1 flow", "utilization"),
        Case(
            "shallow_buffer_delay", "shallow buffer (0.25 BDP): queueing delay", "mean queueing delay, RTTs"
        ),
        Case("deep_buffer", "deep buffer (4 BDP), 1 flow", "utilization"),
        Case("deep_buffer_delay", "deep buffer (4 BDP): queueing delay", "mean queueing delay, RTTs"),
        Case("random_loss", "1 % random loss, 1 flow", "goodput / Reno's Mathis rate"),
        Case("friendliness", "friendliness to a CUBIC competitor", "its share of the two flows' goodput"),
    )
}


# --- criteria ----------------------------------------------------------------------------------

JAIN_MIN = 0.95
RTT_TOL = 1.10
CONVERGENCE_MAX_S = 30.0
SHALLOW_UTIL_MIN = 0.85
DEEP_UTIL_MIN = 0.95
RANDOM_LOSS_MIN = 0.70
FRIENDLY_SHARE_MAX = 2 / 3

CRITERIA: dict[str, Criterion] = {
    "self_fairness_2": Criterion(
        ">=",
        JAIN_MIN,
        "ours: RFC 5166 §2.2 names Jain's index without a bound; 0.95 allows a 1.6:1 split of two flows",
    ),
    "self_fairness_4": Criterion(">=", JAIN_MIN, "as for 2 flows"),
    "rtt_fairness_2": Criterion(
        "<=",
        2 * RTT_TOL,
        "RFC 9438 §3.3 (principle 3): throughput shared linearly with the RTT ratio, 2 (+10 % noise)",
    ),
    "rtt_fairness_4": Criterion("<=", 4 * RTT_TOL, "RFC 9438 §3.3: linear in the RTT ratio, 4 (+10 % noise)"),
    "convergence": Criterion(
        "<=",
        CONVERGENCE_MAX_S,
        "ours (RFC 5166 §2.3 names the metric, no bound): 750 RTTs; AIMD halves the gap per loss epoch",
    ),
    "shallow_buffer": Criterion(
        ">=",
        SHALLOW_UTIL_MIN,
        "AIMD(1, 1/2) fluid model of one flow with B = 0.25 BDP: 88.8 % (Appenzeller et al. SIGCOMM'04 §2)",
    ),
    "deep_buffer": Criterion(
        ">=", DEEP_UTIL_MIN, "B >= BDP keeps one AIMD flow's link busy: 100 % (Appenzeller et al. §2), -5 %"
    ),
    "random_loss": Criterion(
        ">=",
        RANDOM_LOSS_MIN,
        "Mathis et al. 1997: C from 1.22 (periodic loss) down to 0.87 (random, delayed ACKs) = 0.71 x",
    ),
    "friendliness": Criterion(
        "<=",
        FRIENDLY_SHARE_MAX,
        "RFC 5033 §3.1: not significantly more aggressive than the standard; ours: at most 2x CUBIC's rate",
    ),
}
"""Pass criteria; the queueing delays and the window-vs-loss reference are set below."""

WINDOW_TOL = 0.10
WINDOW_SOURCE = {
    "reno": "RFC 9438 §5.1 Reno column 1.2/sqrt(p) (RFC 3649), 10 % as `reproduce cubic-rfc9438`",
    "cubic": "RFC 9438 §5.1 Tables 1-2 (C = 0.4, beta = 0.7), 10 % as `reproduce cubic-rfc9438`",
    "band": "between Reno's 1.2/sqrt(p) and RFC 9438's CUBIC table (-10 %/+10 %): a standard loss-based"
    " window",
}


def delay_expectation_rtts(buffer_bdp: float, beta: float) -> float:
    """Mean queue of one AIMD flow (fluid model, linear growth) in RTTs: its window swings between
    beta (1 + B) and (1 + B) BDP; the queue is what exceeds 1 BDP."""
    lo, hi = beta * (1 + buffer_bdp), 1 + buffer_bdp
    if lo >= 1:
        return (lo + hi) / 2 - 1
    frac = (hi - 1) / (hi - lo)  # share of the cycle with a queue
    return frac * (hi - 1) / 2


# --- scenarios ---------------------------------------------------------------------------------


def dumbbell(
    ccs: list[str],
    duration_s: float,
    starts: list[float] | None = None,
    buffer_bdp: float = 1.0,
    extra_delays_ms: list[float] | None = None,
    loss_p: float | None = None,
) -> dict[str, Any]:
    """A saturated QUIC flow per entry of `ccs` (its controller) on the suite's dumbbell."""
    n = len(ccs)
    starts = starts or [0.1 * i for i in range(n)]
    bottleneck: dict[str, Any] = {
        "rate": "10Mbps",
        "delay": f"{ONE_WAY_S * 1e3:g}ms",
        "queue": {"bytes": f"{int(buffer_bdp * BDP_BYTES)}B", "packets": 1_000_000},
    }
    if loss_p is not None:
        bottleneck["forward"] = {"loss": {"kind": "bernoulli", "p": loss_p}}
    doc: dict[str, Any] = {
        "name": "conformance",
        "run": {"duration": f"{duration_s:g}s", "seed": 1, "record_interval": f"{BIN_S:g}s"},
        "dumbbell": {
            "pairs": n,
            "mtu": "1280B",
            "bottleneck": bottleneck,
            "access": {"rate": "1Gbps", "delay": "0s"},
        },
        "quic": {
            "handshake": False,
            "initial_max_data": "4294967295B",
            "initial_max_stream_data": "4294967295B",
        },
        "flows": [
            {
                "name": f"f{i + 1}",
                "kind": "quic",
                "src": f"sender{i + 1}",
                "dst": f"receiver{i + 1}",
                "start": f"{starts[i]:g}s",
                "quic": {"cc": cc},
            }
            for i, cc in enumerate(ccs)
        ],
    }
    if extra_delays_ms:
        doc["dumbbell"]["access_delays"] = [f"{d:g}ms" for d in extra_delays_ms]
    return doc


def _series(result: Any, flows: list[str]) -> dict[str, list[float]]:
    """Per-flow goodput per bin, Mbit/s, and the bins' start times."""
    f = result.flows
    out: dict[str, list[float]] = {}
    for name in flows:
        rows = f[f["flow"].astype(str) == name]
        out[name] = (rows["delivered_bytes"].to_numpy(dtype=float) * 8 / BIN_S / 1e6).tolist()
        out[f"{name}_t"] = rows["t_s"].to_numpy(dtype=float).tolist()
    return out


def _run(doc: Mapping[str, Any]) -> Any:
    from .. import api

    return api.run(doc)


def measure(key: str, cc: str, quick: bool, param: Any = None) -> dict[str, Any]:
    """Run one case with the controller `cc`; returns {"value": ..., "series": ..., extras}."""
    from .. import metrics

    long = 60.0 if quick else 200.0
    settle = 20.0 if quick else 50.0
    if key in ("self_fairness_2", "self_fairness_4"):
        n = 2 if key.endswith("2") else 4
        names = [f"f{i + 1}" for i in range(n)]
        r = _run(dumbbell([cc] * n, long, starts=[0.5 * i for i in range(n)]))
        return {"value": float(metrics.jain(r, t0=settle, t1=long)), "series": _series(r, names)}
    if key in ("rtt_fairness_2", "rtt_fairness_4"):
        ratio = 2 if key.endswith("2") else 4
        extra = (ratio - 1) * ONE_WAY_S * 1e3
        r = _run(dumbbell([cc, cc], long, extra_delays_ms=[0, extra]))
        g = metrics.goodput_mbps(r, t0=settle, t1=long)
        assert isinstance(g, dict)
        return {"value": g["f1"] / g["f2"] if g["f2"] > 0 else math.inf, "series": _series(r, ["f1", "f2"])}
    if key == "convergence":
        join, end = (10.0, 60.0) if quick else (20.0, 120.0)
        r = _run(dumbbell([cc, cc], end, starts=[0.0, join]))
        s = _series(r, ["f1", "f2"])
        t, new = s["f2_t"], s["f2"]
        both = [a + b for a, b in zip(s["f1"][-len(new) :], new, strict=False)]
        last = int(10 / BIN_S)
        fair = sum(both[-last:]) / last / 2  # half of both flows' goodput over the last 10 s
        w = int(2 / BIN_S)  # a 2 s moving mean of the new flow's goodput
        value = math.inf
        for i in range(w - 1, len(new)):
            if t[i] + BIN_S - 2 < join:
                continue
            mean = sum(new[i - w + 1 : i + 1]) / w
            if abs(mean / fair - 1) <= 0.10:
                value = t[i] + BIN_S - join
                break
        return {"value": value, "series": s, "fair_mbps": fair, "join_s": join}
    if key in ("shallow_buffer", "deep_buffer"):
        bdp = 0.25 if key == "shallow_buffer" else 4.0
        dur = 30.0 if quick else 60.0
        r = _run(dumbbell([cc], dur, buffer_bdp=bdp))
        util = metrics.utilization(r, link=FORWARD, t0=5, t1=dur)
        delay = metrics.queue_delay_s(r, queue=FORWARD, t0=5, t1=dur)
        q = r.queues
        q = q[q["queue"].astype(str) == FORWARD]
        series = {
            "t": q["t_s"].to_numpy(dtype=float)[::4].tolist(),
            "delay_ms": (q["bytes"].to_numpy(dtype=float)[::4] * 8 / RATE_BPS * 1e3).tolist(),
        }
        return {"value": float(util), "delay_rtts": float(delay) / RTT_S, "series": series}  # type: ignore[arg-type]
    if key == "random_loss":
        r = _run(dumbbell([cc], long, loss_p=0.01))
        g = metrics.goodput_mbps(r, flow="f1", t0=5, t1=long)
        mathis = 1.22 * SEGMENT * 8 / (RTT_S * math.sqrt(0.01)) / 1e6
        return {"value": float(g) / mathis, "goodput_mbps": float(g), "mathis_mbps": mathis}  # type: ignore[arg-type]
    if key == "friendliness":
        # The tested flow starts second, so a share above half is not a first-comer's advantage.
        r = _run(dumbbell([cc, "cubic"], long, starts=[0.5, 0.0]))
        g = metrics.goodput_mbps(r, t0=settle, t1=long)
        assert isinstance(g, dict)
        return {"value": g["f1"] / (g["f1"] + g["f2"]), "series": _series(r, ["f1", "f2"])}
    if key == "window":
        rtt, p, family = param
        from ..reproduce import cubic_rfc9438 as rfc

        m = rfc.measure(rtt, p, "newreno" if family == "reno" else "cubic", "quic", cc=cc)
        return {"value": m["mean"], "epochs": m["epochs"]}
    raise KeyError(key)


def window_cells(quick: bool) -> list[tuple[float, float]]:
    """(RTT, p) of the window-vs-loss cells: RFC 9438 §5.1's, cheap ones in quick mode."""
    if quick:
        return [(0.1, 1e-2), (0.1, 1e-3)]
    return [(rtt, p) for rtt in (0.1, 0.01) for p in (1e-2, 1e-3, 1e-4)]


def jobs_for(quick: bool, family: str) -> list[tuple[str, Any]]:
    """Every simulation of the suite, as (case key, parameter)."""
    jobs: list[tuple[str, Any]] = [(k, None) for k in CASES if not k.endswith("_delay")]
    jobs += [("window", (rtt, p, family)) for rtt, p in window_cells(quick)]
    return jobs
