"""Fluid-model predictions for coupled multipath congestion control: given each path's loss
rate and RTT, the equilibrium windows and throughput of uncoupled NewReno, LIA (RFC 6356), OLIA
(Khalili et al., CoNEXT 2012 / ToN 2013) and BALIA (Peng et al., ToN 2016), and the throughput
ratio to a single-path NewReno flow, to print beside the simulator's measurements.

The model is the one all three papers analyse: on path r ACKs arrive at rate w_r/rtt_r, each
ACK adds I_r(w) packets to the window and each loss (probability p_r per packet) removes
D_r(w), so

    dw_r/dt = (w_r / rtt_r) * (I_r(w) - p_r * D_r(w))

and an equilibrium has I_r = p_r * D_r on every path that carries traffic (the 1 - p_r factor
on the increase is dropped, as in RFC 6356 §3's derivation). Single-path NewReno (I = 1/w,
D = w/2) then has w = sqrt(2/p). The rules are those of `crates/quicksim-cc/src/coupled/rules.rs`
in packets:

- LIA: I_r = min(alpha/w_total, 1/w_r), D_r = w_r/2, alpha from RFC 6356 eq. (2);
- OLIA: I_r = (w_r/rtt_r^2)/(sum_p w_p/rtt_p)^2 + alpha_r/w_r, D_r = w_r/2, with the sets M
  (largest windows) and B (largest l_r/rtt_r^2, where the bytes between losses l_r = 1/p_r);
- BALIA: I_r = x_r/(rtt_r*(sum_k x_k)^2) * (1+a_r)/2 * (4+a_r)/5, D_r = w_r/2*min(a_r, 1.5),
  x_k = w_k/rtt_k, a_r = max_k x_k / x_r.

OLIA's equilibrium (Khalili et al., the Pareto-optimality theorem) carries traffic only on the
best paths B; with `w_min_pkts = 0` it is computed on B alone, the other windows being 0. A
positive `w_min_pkts` floors every window (the transport's minimum window is 2 packets, RFC 9002
§7.2), which is how a real OLIA keeps probing the other paths.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = [
    "ALGOS",
    "Equilibrium",
    "PathCond",
    "equilibrium",
    "ratio_to_tcp",
    "side_by_side",
    "tcp_rate_pps",
    "tcp_window",
]

#: The algorithms the model knows, as the registry names them ("uncoupled" = NewReno per path).
ALGOS = ("uncoupled", "lia", "olia", "balia")

#: Relative tolerance for "largest" in OLIA's sets M and B (floating-point ties).
_TIE = 1e-9


@dataclass(frozen=True)
class PathCond:
    """One path's conditions: per-packet loss probability and round-trip time."""

    loss: float
    rtt_s: float


@dataclass(frozen=True)
class Equilibrium:
    """An algorithm's equilibrium windows (packets) and rates (packets per second) per path."""

    algo: str
    windows_pkts: tuple[float, ...]
    rates_pps: tuple[float, ...]

    @property
    def total_pps(self) -> float:
        return sum(self.rates_pps)

    @property
    def shares(self) -> tuple[float, ...]:
        """Each path's share of the connection's throughput."""
        total = self.total_pps
        return tuple(r / total for r in self.rates_pps)


def _check(algo: str, paths: Sequence[PathCond]) -> None:
    if algo not in ALGOS:
        raise ValueError(f"algo: {algo!r} is not one of {', '.join(ALGOS)}")
    if not paths:
        raise ValueError("paths: empty; give at least one path")
    for i, p in enumerate(paths):
        if not 0.0 < p.loss < 1.0:
            raise ValueError(f"paths[{i}].loss: {p.loss} is not in (0, 1)")
        if not p.rtt_s > 0.0:
            raise ValueError(f"paths[{i}].rtt_s: {p.rtt_s} is not positive")


def tcp_window(loss: float) -> float:
    """NewReno's fluid equilibrium window in packets: 1/w = p*w/2, w = sqrt(2/p)."""
    return math.sqrt(2.0 / loss)


def tcp_rate_pps(path: PathCond) -> float:
    """NewReno's fluid equilibrium rate on `path`, packets per second."""
    return tcp_window(path.loss) / path.rtt_s


def _olia_alpha(w: Sequence[float], paths: Sequence[PathCond], r: int) -> float:
    n = len(w)
    w_max = max(w)
    merit = [(1.0 / p.loss) / p.rtt_s**2 for p in paths]  # l_r / rtt_r^2 with l_r = 1/p_r
    best = max(merit)
    in_m = [x >= w_max * (1 - _TIE) for x in w]
    in_b = [m >= best * (1 - _TIE) for m in merit]
    b_not_m = sum(1 for b, m in zip(in_b, in_m, strict=True) if b and not m)
    if b_not_m == 0:
        return 0.0
    if in_b[r] and not in_m[r]:
        return 1.0 / (n * b_not_m)
    if in_m[r]:
        return -1.0 / (n * sum(in_m))
    return 0.0


def _drift(algo: str, w: Sequence[float], paths: Sequence[PathCond], r: int) -> float:
    """I_r - p_r * D_r for path r (per ACK, in packets)."""
    p, rtt = paths[r].loss, paths[r].rtt_s
    if algo == "uncoupled":
        return 1.0 / w[r] - p * w[r] / 2.0
    if algo == "lia":
        total = sum(w)
        alpha = (
            total
            * max(wi / q.rtt_s**2 for wi, q in zip(w, paths, strict=True))
            / sum(wi / q.rtt_s for wi, q in zip(w, paths, strict=True)) ** 2
        )
        return min(alpha / total, 1.0 / w[r]) - p * w[r] / 2.0
    if algo == "olia":
        s = sum(wi / q.rtt_s for wi, q in zip(w, paths, strict=True))
        inc = (w[r] / rtt**2) / s**2 + _olia_alpha(w, paths, r) / w[r]
        return inc - p * w[r] / 2.0
    x = [wi / q.rtt_s for wi, q in zip(w, paths, strict=True)]
    a = max(x) / x[r]
    inc = x[r] / (rtt * sum(x) ** 2) * (1 + a) / 2 * (4 + a) / 5
    return inc - p * w[r] / 2.0 * min(a, 1.5)


def _integrate(
    algo: str,
    paths: Sequence[PathCond],
    w_min: float,
    tol: float,
    max_steps: int,
    w0: Sequence[float] | None = None,
) -> list[float]:
    """Integrates the fluid model in log-window space from `w0` (default TCP's windows) until
    every path's window changes by less than `tol` per RTT (or sits at the floor `w_min` and is
    pushed down)."""
    w = [tcp_window(p.loss) for p in paths]
    if w0 is not None:  # a non-positive start cannot move in log space: TCP's window instead
        w = [max(w_min, x) if x > 0 else t for x, t in zip(w0, w, strict=True)]
    for _ in range(max_steps):
        # d ln w_r / dt = drift_r / rtt_r
        g = [_drift(algo, w, paths, r) / paths[r].rtt_s for r in range(len(w))]
        moving = [r for r in range(len(w)) if not (w[r] <= w_min and g[r] < 0)]
        if all(abs(g[r]) * paths[r].rtt_s < tol for r in moving):
            return w
        # Euler is stable for dt below w*rtt (the relaxation time of 1/w - p*w/2 is w*rtt/2);
        # a tenth of it, and at most a 5 % change of any window per step.
        dt = 0.1 * min(w[r] * paths[r].rtt_s for r in moving)
        dt = min(dt, 0.05 / max(abs(g[r]) for r in moving))
        w = [max(w_min, wr * math.exp(gr * dt)) for wr, gr in zip(w, g, strict=True)]
    raise RuntimeError(f"{algo}: the fluid model did not settle in {max_steps} steps")


def equilibrium(
    algo: str,
    paths: Sequence[PathCond],
    *,
    w_min_pkts: float = 0.0,
    tol: float = 1e-10,
    max_steps: int = 2_000_000,
    w0_pkts: Sequence[float] | None = None,
) -> Equilibrium:
    """The fluid equilibrium of `algo` over `paths` (see the module doc). `w0_pkts` starts the
    integration from other windows than TCP's (a nearby equilibrium, to settle faster); it does
    not change the equilibrium reached where that is unique."""
    _check(algo, paths)
    if w_min_pkts < 0:
        raise ValueError(f"w_min_pkts: {w_min_pkts} is negative")
    if w0_pkts is not None and len(w0_pkts) != len(paths):
        raise ValueError(f"w0_pkts: {len(w0_pkts)} windows for {len(paths)} paths")
    if algo == "uncoupled":
        w = [max(w_min_pkts, tcp_window(p.loss)) for p in paths]
    elif algo == "olia" and w_min_pkts == 0.0:
        merit = [(1.0 / p.loss) / p.rtt_s**2 for p in paths]
        best = [i for i, m in enumerate(merit) if m >= max(merit) * (1 - _TIE)]
        sub = _integrate(algo, [paths[i] for i in best], 0.0, tol, max_steps)
        w = [0.0] * len(paths)
        for i, wi in zip(best, sub, strict=True):
            w[i] = wi
    else:
        w = _integrate(algo, paths, w_min_pkts, tol, max_steps, w0_pkts)
    rates = tuple(wi / p.rtt_s for wi, p in zip(w, paths, strict=True))
    return Equilibrium(algo, tuple(w), rates)


def ratio_to_tcp(
    algo: str, paths: Sequence[PathCond], reference: PathCond | None = None, *, w_min_pkts: float = 0.0
) -> float:
    """Predicted throughput of the multipath connection over a single-path NewReno flow on
    `reference` (default: the path where NewReno is fastest, RFC 6356 goal 1's "best path")."""
    ref = reference if reference is not None else max(paths, key=tcp_rate_pps)
    return equilibrium(algo, paths, w_min_pkts=w_min_pkts).total_pps / tcp_rate_pps(ref)


def side_by_side(
    measured: Mapping[str, float], paths: Sequence[PathCond], reference: PathCond | None = None
) -> list[dict[str, float | str]]:
    """Rows of algo, predicted ratio, measured ratio and the gap in percent of the prediction,
    for the algorithms in `measured` (registry names; "newreno" counts as "uncoupled")."""
    rows: list[dict[str, float | str]] = []
    for name, got in measured.items():
        algo = "uncoupled" if name == "newreno" else name
        want = ratio_to_tcp(algo, paths, reference)
        rows.append(
            {"algo": name, "predicted": want, "measured": got, "gap_pct": 100.0 * (got - want) / want}
        )
    return rows
