"""quicksim's TCP NewReno side by side with ns-3.44's on the ns-3 anchor scenarios
(`tools/ns3`): the linksharing dumbbell (per-phase goodput, Jain's index, drops, mean
of 10 seeds) and the Mathis check (measured / formula at the points of paper-fig4's grid that
ns-3 ran).

quicksim's half runs here (`linksharing-tcp.toml`, `mathis-tcp-ns3.toml`); ns-3's half is read from
the CSVs committed in `reproduce/data/` or, with an ns-3 Python (`--ns3-python` or
$NS3_PYTHON) and the anchor sources (`--ns3-anchors`, $QUICKSIM_NS3_ANCHORS or the checkout's
`tools/ns3`), computed fresh.
"""

from __future__ import annotations

import itertools
import math
import os
import time
from typing import TYPE_CHECKING, Any

from ... import units, validation
from ..common import Context, Report, failed_runs_checks, md_table, save_csv, save_figure
from ..common.ns3data import LINKSHARING_CSV, MATHIS_CSV, VARIANTS, data_path, header, load, run_fresh

if TYPE_CHECKING:
    import pandas as pd

    from ...results import Result

NAME = "tcp-vs-ns3"
TITLE = "TCP NewReno side by side with ns-3.44 (linksharing phases, Mathis ratios)"

#: linksharing seeds, both modes: a run takes under a second, and fewer seeds leave Jain's index
#: of the three-flow phase too noisy for its bound (ns-3's own runs span 0.96-0.99).
SEEDS = 10
#: ns-3's phase edges (linksharing.cc: every start and stop, plus 0 and 50 s).
EDGES = (0.0, 5.0, 10.0, 20.0, 30.0, 40.0, 45.0, 50.0)
FLOWS = ("sender1", "sender2", "sender3")
START = (5.0, 10.0, 20.0)
STOP = (30.0, 40.0, 45.0)
#: The points of paper-fig4's grid ns-3 ran (every RTT of the grid costs ~2.5 min of ns-3 per
#: loss rate and variant; the ratio does not depend on the RTT, see the explanation).
RTTS_MS = (2.0, 20.0, 52.0, 100.0)
LOSS_RATES = (0.001, 0.0002, 0.00005)
QUICK_RTTS_MS = (20.0, 100.0)
QUICK_LOSS_RATES = (0.001,)
MSS = 1252
#: quicksim seeds per random-loss Mathis point (their mean is compared; periodic loss is
#: deterministic, one run). A single run's ratio scatters by ±5-9 % between seeds at 100-200
#: losses (the number of losses itself varies by 1/sqrt(n)). With 5 seeds the means still
#: scattered by ±4 % from one RTT to the next at p = 0.02 % (delayed ACKs: 0.685-0.740 over the
#: four RTTs, the same size as the 5 % bound), once ns-3's side had 5 runs at every RTT; 10
#: seeds halve that variance.
MATHIS_SEEDS = 10
#: ns-3 runs (`--run`) beyond run 1 at the random-loss points: one ns-3 run at 100-400 losses
#: scatters by ±3-10 % (its own batch-mean CI), too much for a 5 % comparison, and an ns-3 point
#: costs 20-110 s. They were run at the RTTs of EXTRA_RUNS_RTTS_MS.
EXTRA_NS3_RUNS = (2, 3, 4, 5)
EXTRA_RUNS_RTTS_MS = (2.0, 20.0)
#: RTTs whose extra runs are ns-3's runs at 20 ms, carried over: ns-3's run k draws the same loss
#: sequence at every RTT and gives the same ratio at 20, 52 and 100 ms, to 10 digits at
#: p <= 0.02 % (run 1 at all three, runs 2 and 3 at 100 ms: the committed CSV has them) and
#: within 0.85 % at p = 0.1 % (a rare timeout, 1-s minimum RTO, costs more RTTs at 20 ms: run 1,
#: random +0.2 %, delack2 +0.8 %); at 2 ms the minimum RTO is 500 RTTs and ratios differ by up
#: to 11 %, so 2 ms has runs of its own. The carried rows keep the ratio and scale the goodputs
#: by 20 ms / RTT; `carried_from_rtt_ms` marks them.
CARRIED_RTTS_MS = (52.0, 100.0)
CARRY_FROM_RTT_MS = 20.0
#: Tolerances: goodput per phase within 5 %, Jain's index at least 0.95, drops within 15 %,
#: Mathis ratio within 5 % of ns-3's.
GOODPUT_TOL = 0.05
JAIN_MIN = 0.95
DROPS_TOL = 0.15
MATHIS_TOL = 0.05
#: Phases with fewer ns-3 drops than this (mean) are reported, not checked: 15 % of 5 drops is
#: less than one packet.
MIN_DROPS_CHECKED = 10.0


# --- quicksim's half ------------------------------------------------------------------------


def _active(i: int, t0: float, t1: float) -> bool:
    return START[i] <= t0 and STOP[i] >= t1


def linksharing_phases(result: Result) -> dict[str, float]:
    """Sweep metric: what linksharing.cc measures, per phase p (ns-3's edges): each receiver's
    application goodput and the UDP sink's (Mbit/s, bins [t0, t1)), their TCP sum, Jain's index
    of the flows active over the whole phase, and the bottleneck's drops (data direction)."""
    flows, drops = result.flows, result.drops
    drops = drops[drops.queue.astype(str).str.endswith("router1->router2")]
    out: dict[str, float] = {}
    eps = 1e-9
    for p, (t0, t1) in enumerate(itertools.pairwise(EDGES)):
        w = flows[(flows.t_s >= t0 - eps) & (flows.t_s < t1 - eps)]
        rate = w.groupby("flow", observed=True)["delivered_bytes"].sum() * 8 / (t1 - t0) / 1e6
        recv = [float(rate.get(n, 0.0)) for n in FLOWS]
        act = [r for i, r in enumerate(recv) if _active(i, t0, t1)]
        jain = sum(act) ** 2 / (len(act) * sum(r * r for r in act)) if act and sum(act) > 0 else math.nan
        for i, r in enumerate(recv):
            out[f"p{p}_recv{i + 1}"] = r
        out[f"p{p}_udp"] = float(rate.get("background", 0.0))
        out[f"p{p}_tcp_sum"] = sum(recv)
        out[f"p{p}_jfi"] = jain
        out[f"p{p}_drops"] = float(((drops.t_s >= t0) & (drops.t_s < t1)).sum())
    return out


def _linksharing_table(sw: Any) -> pd.DataFrame:
    """The sweep's runs as linksharing rows (ns-3's table layout, `run` = the derived seed)."""
    import pandas as pd

    rows = []
    for _, r in sw.runs.iterrows():
        if isinstance(r["error"], str):
            continue
        for p, (t0, t1) in enumerate(itertools.pairwise(EDGES)):
            m = f"linksharing_phases.p{p}_"
            rows.append(
                {
                    "run": int(r["seed"]),
                    "t0_s": t0,
                    "t1_s": t1,
                    **{f"recv{i}_mbps": float(r[f"{m}recv{i}"]) for i in (1, 2, 3)},
                    "udp_mbps": float(r[f"{m}udp"]),
                    "tcp_sum_mbps": float(r[f"{m}tcp_sum"]),
                    "jfi_active": float(r[f"{m}jfi"]),
                    "drops": int(r[f"{m}drops"]),
                }
            )
    return pd.DataFrame(rows)


def mathis_point(result: Result) -> dict[str, float]:
    """Sweep metric: mathis.cc's measurement. Goodput = application bytes over
    [1000 RTTs, end] (the run lasts 11 000 RTTs), against MSS/RTT x sqrt(3/(2p)) (b = 1) with
    the nominal RTT and p, MSS = 1252 B."""
    sc = result.scenario
    bn = sc["dumbbell"]["bottleneck"]
    rtt_s = 2 * units.seconds(bn["delay"])
    end = units.seconds(sc["run"]["duration"])
    warm = end / 11.0
    loss = bn["forward"]["loss"]
    p = float(loss["p"]) if loss["kind"] == "bernoulli" else 1.0 / (int(loss["every"]) + 1)
    f = result.flows
    eps = 1e-9
    w = f[(f.flow == "tcp") & (f.t_s >= warm - eps) & (f.t_s < end - eps)]
    goodput = float(w.delivered_bytes.sum()) * 8 / (end - warm) / 1e6
    mathis = MSS * 8 / rtt_s * math.sqrt(3 / (2 * p)) / 1e6
    tcp = result.totals["flows"]["tcp"]["tcp"]
    return {
        "goodput_mbps": goodput,
        "mathis_b1_mbps": mathis,
        "ratio_b1": goodput / mathis,
        "fast_retransmits": float(tcp["fast_retransmits"]),
        "rtos": float(tcp["rtos"]),
    }


def _mathis_sweep(ctx: Context, variant: str, rtts: tuple[float, ...], rates: tuple[float, ...]) -> Any:
    loss, delack = VARIANTS[variant]
    points = [(r, p) for p in rates for r in rtts]
    key = "dumbbell.bottleneck.forward.loss." + ("p" if loss == "random" else "every")
    params = {
        "dumbbell.bottleneck.delay": [f"{r / 2:g}ms" for r, _ in points],
        "run.duration": [f"{11 * r:g}s" for r, _ in points],  # 11 000 RTTs
        key: [p if loss == "random" else round(1 / p) - 1 for _, p in points],
    }
    table = '{kind = "bernoulli", p = 0.001}' if loss == "random" else '{kind = "periodic", every = 999}'
    return ctx.sweep(
        validation.scenario_path("mathis-tcp-ns3"),
        params=params,
        zip=[list(params)],
        repeat=MATHIS_SEEDS if loss == "random" else 1,
        metrics=[mathis_point],
        sets=[f"dumbbell.bottleneck.forward.loss={table}", f"tcp.ack_every={delack}"],
        suffix=f"mathis-{variant}",
    )


def _mathis_table(variant: str, sw: Any) -> pd.DataFrame:
    import pandas as pd

    loss, delack = VARIANTS[variant]
    rows = []
    for _, r in sw.runs.iterrows():
        if isinstance(r["error"], str):
            continue
        delay = float(str(r["dumbbell.bottleneck.delay"]).removesuffix("ms"))
        key = "dumbbell.bottleneck.forward.loss." + ("p" if loss == "random" else "every")
        p = float(r[key]) if loss == "random" else 1.0 / (int(r[key]) + 1)
        rows.append(
            {
                "variant": variant,
                "loss": loss,
                "delack": delack,
                "rtt_ms": 2 * delay,
                "p": p,
                **{k: float(r[f"mathis_point.{k}"]) for k in ("goodput_mbps", "mathis_b1_mbps", "ratio_b1")},
                "fast_retransmits": float(r["mathis_point.fast_retransmits"]),
                "rtos": float(r["mathis_point.rtos"]),
            }
        )
    frame = pd.DataFrame(rows)
    # The mean over the seeds of each point (counts: per run).
    g = frame.groupby(["variant", "loss", "delack", "rtt_ms", "p"], as_index=False)
    return g.mean().merge(g.size().rename(columns={"size": "seeds"}))


# --- comparison --------------------------------------------------------------------------------


def phase_means(table: pd.DataFrame) -> pd.DataFrame:
    """Mean over runs per phase: goodputs, Jain's index (of the runs where it is defined), drops."""
    cols = ["recv1_mbps", "recv2_mbps", "recv3_mbps", "udp_mbps", "tcp_sum_mbps", "jfi_active", "drops"]
    g = table.groupby(["t0_s", "t1_s"], as_index=False)[cols].mean()
    return g.sort_values("t0_s").reset_index(drop=True)


#: Quick mode (what CI runs) leaves out the goodput check of the first phase (5-10 s, one flow's
#: slow start), for a reason outside quicksim's model: after the slow-start loss burst ns-3 3.44
#: loses a retransmission and waits out its 1 s minimum RTO in 5 of its 10 runs (its PRR counts
#: an extra segment per duplicate ACK on top of SACK, a defect fixed after 3.44, which keeps the
#: queue full during recovery), quicksim in 1 of 20 seeds, so the phase means differ by ~14 %.
#: The full mode checks it and reports the failure with this explanation (docs/reproductions).
QUICK_UNCHECKED_PHASE = (5.0, 10.0)


def linksharing_checks(q: pd.DataFrame, n: pd.DataFrame, quick: bool = False) -> list[validation.Check]:
    """Per phase with a TCP flow: goodput (TCP sum) within 5 %; Jain's index ≥ 0.95 where two
    or more flows share; drops within 15 % where ns-3 drops at least MIN_DROPS_CHECKED. In quick
    mode the slow-start phase's goodput is not checked (`QUICK_UNCHECKED_PHASE`)."""
    from ...validation import Check

    qm, nm = phase_means(q), phase_means(n)
    nq, nn = q.run.nunique(), n.run.nunique()
    how = f"mean of {nq} quicksim seeds vs ns-3's mean of {nn} runs"
    checks = []
    for (_, a), (_, b) in zip(qm.iterrows(), nm.iterrows(), strict=True):
        t0, t1 = a.t0_s, a.t1_s
        active = [i for i in range(3) if _active(i, t0, t1)]
        if not active:
            continue
        label = f"{t0:g}-{t1:g} s"
        if not (quick and (t0, t1) == QUICK_UNCHECKED_PHASE):
            checks.append(
                Check(f"goodput {label}", a.tcp_sum_mbps, b.tcp_sum_mbps, GOODPUT_TOL, "Mbit/s", note=how)
            )
        if len(active) > 1:
            checks.append(
                Check(
                    f"Jain {label}",
                    a.jfi_active,
                    JAIN_MIN,
                    0.0,
                    "",
                    kind="min",
                    note=f"quicksim, mean of {nq} seeds (ns-3: {b.jfi_active:.3f})",
                )
            )
        if b.drops >= MIN_DROPS_CHECKED:
            checks.append(Check(f"drops {label}", a.drops, b.drops, DROPS_TOL, "packets", note=how))
    checks.append(
        Check(
            "drops, whole run",
            float(q.groupby("run").drops.sum().mean()),
            float(n.groupby("run").drops.sum().mean()),
            DROPS_TOL,
            "packets",
            note=how,
        )
    )
    return checks


def mathis_checks(q: pd.DataFrame, n: pd.DataFrame) -> tuple[list[validation.Check], pd.DataFrame]:
    """quicksim's ratio (measured / Mathis b = 1) within 5 % of ns-3's at each point both ran."""
    from ...validation import Check

    cols = ["goodput_mbps", "ratio_b1", "ci95_mbps", "fast_recoveries", "rtos"]
    g = n.groupby(["variant", "rtt_ms", "p"], as_index=False)
    ns3 = g[cols].mean().merge(g.size().rename(columns={"size": "ns3_runs"}))
    both = q.merge(ns3, on=["variant", "rtt_ms", "p"], suffixes=("_quicksim", "_ns3"))
    checks = [
        Check(
            f"Mathis ratio {r.variant} rtt={r.rtt_ms:g}ms p={r.p:g}",
            r.ratio_b1_quicksim,
            r.ratio_b1_ns3,
            MATHIS_TOL,
            "",
            note=f"means of {r.seeds} quicksim seeds and {r.ns3_runs} ns-3 runs; per run "
            f"{r.fast_retransmits:.0f} vs {r.fast_recoveries:.0f} fast retransmits, "
            f"{r.rtos_quicksim:.1f} vs {r.rtos_ns3:.1f} RTOs",
        )
        for r in both.itertuples()
    ]
    return checks, both


def ns3_points(rtts: tuple[float, ...], rates: tuple[float, ...]) -> list[tuple[str, float, float, int]]:
    """The ns-3 mathis runs a mode reads or runs: (variant, rtt_ms, p, run). Run 1 everywhere, and
    EXTRA_NS3_RUNS for the random-loss variants at the RTTs of EXTRA_RUNS_RTTS_MS that the mode
    has, and at 20 ms when a carried RTT needs them."""
    pts = [(v, r, p, 1) for v in VARIANTS for p in rates for r in rtts]
    extra = {r for r in EXTRA_RUNS_RTTS_MS if r in rtts}
    if any(r in rtts for r in CARRIED_RTTS_MS):
        extra.add(CARRY_FROM_RTT_MS)
    pts += [
        (v, r, p, k)
        for r in sorted(extra)
        for v, (loss, _) in VARIANTS.items()
        if loss == "random"
        for p in rates
        for k in EXTRA_NS3_RUNS
    ]
    return list(dict.fromkeys(pts))


def carry_runs(n: pd.DataFrame, rtts: tuple[float, ...]) -> pd.DataFrame:
    """`n` (ns-3's mathis rows) plus, at each RTT of CARRIED_RTTS_MS in `rtts`, the extra runs of
    CARRY_FROM_RTT_MS it has no rows for (ratio kept, goodputs scaled by the RTT ratio)."""
    import pandas as pd

    src = n[(n.rtt_ms == CARRY_FROM_RTT_MS) & n.run.isin(EXTRA_NS3_RUNS)]
    add = []
    for r in (x for x in CARRIED_RTTS_MS if x in rtts):
        have = set(zip(n[n.rtt_ms == r].variant, n[n.rtt_ms == r].p, n[n.rtt_ms == r].run, strict=True))
        c = src[[k not in have for k in zip(src.variant, src.p, src.run, strict=True)]].copy()
        scale = CARRY_FROM_RTT_MS / r
        for col in ("goodput_mbps", "ci95_mbps", "mathis_b1_mbps"):
            c[col] = c[col] * scale
        c["rtt_ms"] = r
        c["carried_from_rtt_ms"] = CARRY_FROM_RTT_MS
        add.append(c)
    return pd.concat([n, *add], ignore_index=True) if add else n


def ns3_tables(ctx: Context, runs: int, points: list[tuple[str, float, float, int]]) -> tuple[Any, Any, str]:
    """ns-3's linksharing and mathis tables: fresh when an ns-3 Python is given, else the
    committed CSVs (the runs and points this mode compares). Also says where they came from."""
    python = ctx.ns3_python or os.environ.get("NS3_PYTHON")
    if python:
        ls, ma = run_fresh(python, ctx.ns3_anchors, range(1, runs + 1), points)
        save_csv(ls, ctx.out / "ns3_linksharing.csv")
        save_csv(ma, ctx.out / "ns3_mathis.csv")
        return ls, ma, f"computed fresh with the ns-3 of `{python}`"
    ls, ma = load(LINKSHARING_CSV), load(MATHIS_CSV)
    ls = ls[ls.run <= runs]
    keep = set(points)
    ma = ma[[pt in keep for pt in zip(ma.variant, ma.rtt_ms, ma.p, ma.run, strict=True)]]
    made = "; ".join(header(data_path(LINKSHARING_CSV))[:3])
    return ls, ma, f"read from the committed `reproduce/data/{LINKSHARING_CSV}` and `{MATHIS_CSV}` ({made})"


def run(ctx: Context) -> Report:
    """quicksim's half as sweeps, ns-3's half from the CSVs or fresh; checks, plots, report."""
    import pandas as pd

    t = time.perf_counter()
    rtts, rates = (QUICK_RTTS_MS, QUICK_LOSS_RATES) if ctx.quick else (RTTS_MS, LOSS_RATES)
    ls_sw = ctx.sweep(
        validation.scenario_path("linksharing-tcp"),
        params={},
        repeat=SEEDS,
        metrics=[linksharing_phases],
        suffix="linksharing",
    )
    q_ls = _linksharing_table(ls_sw)
    sweeps = {v: _mathis_sweep(ctx, v, rtts, rates) for v in VARIANTS}
    q_ma = pd.concat([_mathis_table(v, sw) for v, sw in sweeps.items()], ignore_index=True)
    points = ns3_points(rtts, rates)
    n_ls, n_ma, source = ns3_tables(ctx, SEEDS, points)
    n_ma = carry_runs(n_ma, rtts)

    checks = failed_runs_checks(ls_sw, "linksharing runs without error")
    for v, sw in sweeps.items():
        checks += failed_runs_checks(sw, f"mathis {v} runs without error")
    checks += linksharing_checks(q_ls, n_ls, quick=ctx.quick)
    m_checks, both = mathis_checks(q_ma, n_ma)
    checks += m_checks
    have = set(zip(n_ma.variant, n_ma.rtt_ms, n_ma.p, n_ma.run, strict=True))
    missing = [pt for pt in points if pt not in have]
    if missing:
        checks.append(
            validation.Check(
                "ns-3 numbers for every Mathis run compared",
                len(points) - len(missing),
                len(points),
                0,
                "points",
                kind="exact",
                note=f"no ns-3 row for (variant, RTT ms, p, run) = {missing[0]}",
            )
        )

    save_csv(q_ls, ctx.out / "quicksim_linksharing.csv")
    save_csv(both, ctx.out / "mathis_side_by_side.csv")
    qm, nm = phase_means(q_ls), phase_means(n_ls)
    save_csv(
        qm.merge(nm, on=["t0_s", "t1_s"], suffixes=("_quicksim", "_ns3")), ctx.out / "phases_side_by_side.csv"
    )
    from .plots import linksharing_figure, mathis_figure

    save_figure(linksharing_figure(q_ls, n_ls), ctx.out / "linksharing_phases.png")
    save_figure(mathis_figure(both), ctx.out / "mathis_ratios.png")
    sections = [
        "## ns-3's numbers\n\n" + f"ns-3's half was {source}.",
        "## Linksharing per phase (means; quicksim / ns-3)\n\n" + _phase_table(qm, nm),
        "## Mathis ratios (goodput / MSS/RTT·sqrt(3/(2p)))\n\n" + _mathis_md(both),
    ]
    from .text import EXPLANATION

    return Report(
        NAME,
        TITLE,
        "ns-3.44's TCP NewReno on its linksharing and Mathis programs (`tools/ns3`: `linksharing.cc`, "
        "`mathis.cc`): per-phase goodput, fairness and drops, and the ratio to Mathis' formula",
        checks,
        figures=[
            (
                "linksharing_phases.png",
                "Per-phase goodput of each receiver and drops per phase: quicksim (mean of the seeds) "
                "beside ns-3 (mean of its runs); bars span min-max",
            ),
            (
                "mathis_ratios.png",
                "Goodput / Mathis (b = 1) per RTT and loss rate, quicksim (filled) and ns-3 (open), "
                "one panel per variant",
            ),
        ],
        csvs=[
            ("phases_side_by_side.csv", "per phase: means over the seeds/runs, quicksim and ns-3"),
            ("quicksim_linksharing.csv", "per quicksim seed and phase: goodputs, Jain, drops"),
            ("mathis_side_by_side.csv", "per variant and (RTT, p): quicksim and ns-3 goodput and ratio"),
        ],
        explanation=EXPLANATION,
        sections=sections,
        quick=ctx.quick,
        wall_s=time.perf_counter() - t,
    )


def _phase_table(qm: pd.DataFrame, nm: pd.DataFrame) -> str:
    def pair(x: float, y: float, fmt: str = ".2f") -> str:
        return "-" if math.isnan(x) and math.isnan(y) else f"{x:{fmt}} / {y:{fmt}}"

    cols = [
        ("recv1_mbps", ".2f"),
        ("recv2_mbps", ".2f"),
        ("recv3_mbps", ".2f"),
        ("udp_mbps", ".3f"),
        ("tcp_sum_mbps", ".2f"),
        ("jfi_active", ".3f"),
        ("drops", ".1f"),
    ]
    rows = [
        [f"{a.t0_s:g}-{a.t1_s:g}", *(pair(a[c], b[c], f) for c, f in cols)]
        for (_, a), (_, b) in zip(qm.iterrows(), nm.iterrows(), strict=True)
    ]
    return md_table(
        ["phase [s]", "recv1", "recv2", "recv3", "UDP", "TCP sum", "Jain (active)", "drops"], rows
    )


def _mathis_md(both: pd.DataFrame) -> str:
    rows = [
        [
            r.variant,
            f"{r.rtt_ms:g}",
            f"{r.p:g}",
            f"{r.goodput_mbps_quicksim:.4g}",
            f"{r.goodput_mbps_ns3:.4g} ± {r.ci95_mbps:.2g}",
            f"{r.ratio_b1_quicksim:.3f}",
            f"{r.ratio_b1_ns3:.3f}",
            f"{r.ratio_b1_quicksim / r.ratio_b1_ns3 - 1:+.1%}",
            f"{r.seeds} / {r.ns3_runs}",
        ]
        for r in both.sort_values(["variant", "p", "rtt_ms"]).itertuples()
    ]
    return md_table(
        [
            "variant",
            "RTT ms",
            "p",
            "quicksim Mbit/s",
            "ns-3 Mbit/s (±95 % CI)",
            "quicksim ratio",
            "ns-3 ratio",
            "difference",
            "runs (quicksim / ns-3)",
        ],
        rows,
    )
