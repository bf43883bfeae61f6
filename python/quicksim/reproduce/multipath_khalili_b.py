"""Scenario B of draft-khalili-mptcp-performance-issues-06 (section 5, Table 2; OLIA in Table
5): "MPTCP can penalize other MPTCP users". Four ISPs X, Y, Z, T with access capacities CX = 27,
CY = 100, CZ = 100 and CT = 36 Mbit/s; 15 Blue users, multi-homed to X and Y, download from
servers in Z; 15 Red users download from servers in T over Y (path r1) and, upgraded to
multipath, also over X (path r2). The draft measured (Linux MPTCP 3.0.0) that upgrading the Red
users gives them nothing and costs the Blue users 20 % with LIA (the aggregate 13 %), and far
less with OLIA. Built here as the draft's Figure 2 draws the paths; the same text and copy as
`multipath_khalili` (Scenarios A and C).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..validation import Check
from .multipath_khalili import (
    ACCESS,
    FROM_S,
    MIN_WINDOW,
    ONE_WAY_MS,
    PAYLOAD_FRACTION,
    QUIC_MIN_WINDOW,
    QUICK_FROM_S,
    QUICK_RUN_S,
    RUN_S,
    SEEDS,
    flow_doc,
    red_queue,
)
from .multipath_network import Link, UserClass, solve
from .multipath_papers import scenario_doc

__all__ = [
    "PUBLISHED",
    "SOURCE",
    "BCase",
    "cases",
    "checks",
    "explanation",
    "figure",
    "predict",
    "run_cases",
    "scenario",
    "section",
    "side_by_side",
]

SOURCE = "draft-khalili-mptcp-performance-issues-06, section 5 (Scenario B), Tables 2 and 5"

#: The ISPs' access capacities (Mbit/s) and the user counts of Table 2.
CAPACITY_MBPS = {"X": 27.0, "Y": 100.0, "Z": 100.0, "T": 36.0}
N_BLUE = N_RED = 15

#: The draft's numbers, Mbit/s per user. Keys: (Red users multipath?, users, column). Columns:
#: "lia" (Table 2, measured), "olia" (Table 5, measured; its brackets repeat Table 2), "probing"
#: (the optimal algorithm with a probing cost of 1 MSS per RTT), "optimal" (without it).
PUBLISHED: dict[tuple[bool, str, str], float] = {
    (False, "red", "lia"): 1.5,
    (False, "blue", "lia"): 2.5,
    (False, "red", "olia"): 1.8,
    (False, "blue", "olia"): 2.2,
    (False, "red", "probing"): 2.1,
    (False, "blue", "probing"): 2.1,
    (False, "red", "optimal"): 2.1,
    (False, "blue", "optimal"): 2.1,
    (True, "red", "lia"): 1.4,
    (True, "blue", "lia"): 2.0,
    (True, "red", "olia"): 1.7,
    (True, "blue", "olia"): 2.2,
    (True, "red", "probing"): 2.04,
    (True, "blue", "probing"): 2.04,
    (True, "red", "optimal"): 2.1,
    (True, "blue", "optimal"): 2.1,
}
#: The draft's analysis of LIA (text under Table 2): upgrading the Red users takes 21 % from the
#: Blue users and 14 % from the aggregate.
LIA_THEORY_BLUE_LOSS, LIA_THEORY_AGGREGATE_LOSS = 0.21, 0.14

_PACKET_BYTES = 1500


def scenario(
    algo: str,
    red_multipath: bool,
    *,
    duration_s: float = RUN_S,
    seed: int = 1,
    min_window: int = MIN_WINDOW,
) -> dict[str, Any]:
    """Scenario B with the multipath users running `algo` ("lia", "olia", "balia") with windows
    of at least `min_window` segments; the Red users multipath (r1 over Y, r2 over X) if
    `red_multipath`, else single-path QUIC NewReno over Y. Flows `blue_<i>` and `red_<i>`.

    Each ISP is a link of its access capacity with the draft's RED between an `<isp>_in` and an
    `<isp>_out` router; the ISPs are joined by 1 Gbit/s links as the draft's Figure 2 draws
    them: X to Z (b1) and to T (r2), Y to T (r1, b2), T to Z (b2). Routing by hop count then
    takes b1 over X and Z, b2 over Y and T (the draft's b2 crosses T on its way to Z), r1 over
    Y and T, r2 over X and T. Hosts' access links are 100 Mbit/s with 60 ms (RTT about 150 ms
    with the queues, as the draft's "around 150 ms (including queuing delay)").
    """
    if algo not in ("lia", "olia", "balia"):
        raise ValueError(f"algo: {algo!r} is not 'lia', 'olia' or 'balia'")
    if min_window < 1:
        raise ValueError(f"min_window: {min_window} is not a positive number of segments")
    nodes: dict[str, Any] = {}
    links: list[dict[str, Any]] = []
    for isp, mbps in CAPACITY_MBPS.items():
        r_in, r_out = f"{isp.lower()}_in", f"{isp.lower()}_out"
        nodes[r_in] = nodes[r_out] = {"kind": "router"}
        links.append(
            {"name": isp, "a": r_in, "b": r_out, "rate": f"{mbps:g}Mbps", "queue": red_queue(mbps * 1e6)}
        )
    for a, b in (("x_out", "z_in"), ("x_out", "t_in"), ("y_out", "t_in"), ("t_out", "z_out")):
        links.append({"name": f"{a}-{b}", "a": a, "b": b, "rate": "1Gbps"})

    def access(name: str, a: str, router: str) -> None:
        links.append({"name": name, "a": a, "b": router, "rate": ACCESS, "delay": f"{ONE_WAY_MS:g}ms"})

    flows = []
    for i in range(N_BLUE):
        h, s = f"blue_{i}", f"sb_{i}"
        nodes[h] = {"kind": "host", "interfaces": ["x", "y"]}
        nodes[s] = {"kind": "host"}
        access(f"{h}_x", f"{h}.x", "x_in")
        access(f"{h}_y", f"{h}.y", "y_in")
        links.append({"name": s, "a": "z_out", "b": s, "rate": "1Gbps"})
        flows.append(flow_doc(h, f"{h}.x", s, algo, f"{h}.y", min_window))
    for i in range(N_RED):
        h, s = f"red_{i}", f"sr_{i}"
        nodes[s] = {"kind": "host"}
        links.append({"name": s, "a": "t_out", "b": s, "rate": "1Gbps"})
        if red_multipath:
            nodes[h] = {"kind": "host", "interfaces": ["y", "x"]}
            access(f"{h}_y", f"{h}.y", "y_in")
            access(f"{h}_x", f"{h}.x", "x_in")
            flows.append(flow_doc(h, f"{h}.y", s, algo, f"{h}.x", min_window))
        else:
            nodes[h] = {"kind": "host"}
            access(f"{h}_y", h, "y_in")
            flows.append(flow_doc(h, h, s, "single", None, min_window))
    red = "multipath" if red_multipath else "single-path"
    return scenario_doc(
        f"khalili-b-{algo}-red-{red}-w{min_window}",
        f"{SOURCE}: Red users {red}, {algo}, windows of at least {min_window} segments",
        duration_s,
        nodes,
        links,
        flows,
        seed=seed,
        record_interval="1s",
    )


def predict(algo: str, red_multipath: bool, *, w_min_pkts: float = 0.0) -> dict[str, float]:
    """The network fluid model (`multipath_network.solve`, every RTT 150 ms): Mbit/s of one Red
    and one Blue user (link capacity, not goodput)."""
    pps = {isp: mbps * 1e6 / (8 * _PACKET_BYTES) for isp, mbps in CAPACITY_MBPS.items()}
    links = [Link(isp, c) for isp, c in pps.items()]
    rtt = 0.15
    blue = UserClass("blue", N_BLUE, algo, (("X", "Z"), ("Y", "T")), (rtt, rtt))
    if red_multipath:
        red = UserClass("red", N_RED, algo, (("Y", "T"), ("X", "T")), (rtt, rtt))
    else:
        red = UserClass("red", N_RED, "uncoupled", (("Y", "T"),), (rtt,))
    e = solve(links, [blue, red], w_min_pkts=w_min_pkts if algo == "olia" else 0.0)
    to_mbps = 8 * _PACKET_BYTES / 1e6
    return {"red_mbps": e.user_rate("red") * to_mbps, "blue_mbps": e.user_rate("blue") * to_mbps}


@dataclass(frozen=True)
class BCase:
    """One column of Tables 2 and 5: the algorithm, whether the Red users are multipath, the
    multipath users' window floor in segments."""

    algo: str
    red_multipath: bool
    floor: int = MIN_WINDOW


def cases(quick: bool) -> list[BCase]:
    """LIA and OLIA, Red users single-path and multipath; full mode again with QUIC's floor."""
    out = [BCase(a, m) for a in ("lia", "olia") for m in (False, True)]
    if quick:
        return out
    return out + [BCase(a, m, QUIC_MIN_WINDOW) for a in ("lia", "olia") for m in (False, True)]


def run_cases(quick: bool) -> Any:
    """Per case and seed: the Red and Blue users' mean goodput (Mbit/s) from `FROM_S`."""
    import pandas as pd

    from .. import api

    run_s, from_s = (QUICK_RUN_S, QUICK_FROM_S) if quick else (RUN_S, FROM_S)
    rows = []
    for case in cases(quick):
        for seed in SEEDS[:1] if quick else SEEDS:
            sc = scenario(case.algo, case.red_multipath, duration_s=run_s, seed=seed, min_window=case.floor)
            r = api.run(sc)
            f = r.table("flows")
            f = f[f["t_s"] >= from_s]
            if "path" in f.columns:
                f = f[f["path"] == -1]
            g = f.groupby("flow", observed=True)["delivered_bytes"].sum() * 8 / (run_s - from_s) / 1e6
            rows.append(
                {
                    "algo": case.algo,
                    "red_multipath": case.red_multipath,
                    "floor": case.floor,
                    "seed": seed,
                    "red_mbps": float(g[[f"red_{i}" for i in range(N_RED)]].mean()),
                    "blue_mbps": float(g[[f"blue_{i}" for i in range(N_BLUE)]].mean()),
                }
            )
    return pd.DataFrame(rows)


def side_by_side(runs: Any) -> Any:
    """One row per case and user colour: the draft's measurement, ours (mean over seeds and
    range), the gap in percent of the draft's, the fluid model's goodput."""
    import pandas as pd

    rows = []
    for (algo, multi, floor), s in runs.groupby(["algo", "red_multipath", "floor"], sort=False):
        model = predict(algo, bool(multi), w_min_pkts=float(floor))
        for users in ("red", "blue"):
            col = f"{users}_mbps"
            pub = PUBLISHED[(bool(multi), users, algo)]
            ours = float(s[col].mean())
            rows.append(
                {
                    "algo": algo,
                    "red_multipath": bool(multi),
                    "floor": floor,
                    "users": users,
                    "published_mbps": pub,
                    "ours_mbps": ours,
                    "ours_min": float(s[col].min()),
                    "ours_max": float(s[col].max()),
                    "gap_pct": 100 * (ours / pub - 1),
                    "model_mbps": model[col] * PAYLOAD_FRACTION,
                    "probing_mbps": PUBLISHED[(bool(multi), users, "probing")],
                }
            )
    return pd.DataFrame(rows)


def _cell(table: Any, algo: str, multi: bool, users: str, floor: int = MIN_WINDOW) -> float:
    s = table[
        (table["algo"] == algo)
        & (table["red_multipath"] == multi)
        & (table["users"] == users)
        & (table["floor"] == floor)
    ]
    return float(s["ours_mbps"].iloc[0]) if len(s) else float("nan")


def _total(table: Any, algo: str, multi: bool) -> float:
    """All users' throughput together (Mbit/s) in one column of Table 2."""
    return N_RED * _cell(table, algo, multi, "red") + N_BLUE * _cell(table, algo, multi, "blue")


def checks(table: Any) -> list[Check]:
    """The draft's claims for Scenario B, and our model against its analysis of LIA:

    - the fluid model of LIA: upgrading the Red users takes 21 % from the Blue users and 14 %
      from the aggregate (the draft's analysis), within 2 points;
    - LIA: upgrading gives the Red users nothing (at most 5 % more) and costs the aggregate at
      least 5 % (the draft measured 13 %);
    - OLIA: the aggregate falls less than with LIA (the draft: 2.5 % against 15 %).
    """
    out: list[Check] = []
    before, after = predict("lia", False), predict("lia", True)
    blue_loss = 1 - after["blue_mbps"] / before["blue_mbps"]
    agg = 1 - (after["blue_mbps"] + after["red_mbps"]) / (before["blue_mbps"] + before["red_mbps"])
    note = "the draft's analysis (text under its Table 2)"
    out.append(
        Check("Khalili B: fluid model of LIA, Blue users' loss", blue_loss, 0.21, 0.02 / 0.21, "", note=note)
    )
    out.append(
        Check("Khalili B: fluid model of LIA, aggregate's loss", agg, 0.14, 0.02 / 0.14, "", note=note)
    )

    red0, red1 = _cell(table, "lia", False, "red"), _cell(table, "lia", True, "red")
    out.append(
        Check(
            "Khalili B: LIA, upgrading gives the Red users nothing",
            red1 / red0,
            1.05,
            0,
            "",
            kind="max",
            note=f"Red users {red0:.2f} -> {red1:.2f} Mbit/s (draft 1.5 -> 1.4)",
        )
    )
    drops = {a: 1 - _total(table, a, True) / _total(table, a, False) for a in ("lia", "olia")}
    out.append(
        Check(
            "Khalili B: LIA, upgrading the Red users costs the aggregate",
            drops["lia"],
            0.05,
            0,
            "",
            kind="min",
            note=f"aggregate {_total(table, 'lia', False):.1f} -> {_total(table, 'lia', True):.1f} Mbit/s "
            "(draft: -15 % by its Table 2, -13 % in its text)",
        )
    )
    out.append(
        Check(
            "Khalili B: the aggregate falls less with OLIA than with LIA",
            drops["lia"] - drops["olia"],
            0.0,
            0,
            "",
            kind="min",
            note=f"OLIA {-100 * drops['olia']:+.1f} %, LIA {-100 * drops['lia']:+.1f} % "
            "(draft's tables: -2.5 %, -15 %)",
        )
    )
    return out


def section(table: Any) -> str:
    """The side-by-side table of the report."""
    from .common import md_table

    rows = [
        [
            r.algo,
            "multipath" if r.red_multipath else "single-path",
            f"{r.floor}",
            r.users,
            f"{r.published_mbps:.2f}",
            f"{r.ours_mbps:.2f} ({r.ours_min:.2f}-{r.ours_max:.2f})",
            f"{r.gap_pct:.0f}",
            f"{r.model_mbps:.2f}",
            f"{r.probing_mbps:.2f}",
        ]
        for r in table.itertuples()
    ]
    head = [
        "multipath users run",
        "Red users",
        "window floor (segments)",
        "users",
        "draft, measured",
        "quicksim (seeds)",
        "gap %",
        "fluid model",
        "draft's optimum with probing cost",
    ]
    return (
        f"**{SOURCE}: Mbit/s per user, CX = 27, CT = 36, CY = CZ = 100 Mbit/s, "
        f"{N_BLUE} Blue and {N_RED} Red users**\n\n" + md_table(head, rows)
    )


def figure(table: Any) -> Any:
    """Bars per case and user colour: the draft's measurement, ours (the testbed's window
    floor with the seeds' range, and QUIC's where run), the fluid model, the draft's optimum
    with probing cost."""
    import matplotlib.pyplot as plt

    s = table[table["floor"] == MIN_WINDOW].reset_index(drop=True)
    quic = table[table["floor"] == QUIC_MIN_WINDOW].set_index(["algo", "red_multipath", "users"])["ours_mbps"]
    other = [quic.get((r.algo, r.red_multipath, r.users), float("nan")) for r in s.itertuples()]
    fig, ax = plt.subplots(figsize=(9, 4.5))
    x = range(len(s))
    w = 0.17
    ax.bar([i - 2 * w for i in x], s["published_mbps"], w, label="draft-06, measured", color="#999999")
    err = [s["ours_mbps"] - s["ours_min"], s["ours_max"] - s["ours_mbps"]]
    ax.bar(
        [i - w for i in x],
        s["ours_mbps"],
        w,
        yerr=err,
        capsize=2,
        label=f"quicksim, windows ≥ {MIN_WINDOW} segment",
        color="#1f77b4",
    )
    ax.bar(list(x), other, w, label="quicksim, QUIC's 2-segment floor", color="#aec7e8")
    ax.bar([i + w for i in x], s["model_mbps"], w, label="fluid model (goodput)", color="#ff7f0e")
    ax.bar(
        [i + 2 * w for i in x],
        s["probing_mbps"],
        w,
        label="draft: optimum with probing cost",
        color="#2ca02c",
    )
    ax.set_xticks(list(x))
    ax.set_xticklabels(
        [f"{r.algo}\nRed {'multipath' if r.red_multipath else 'single'}\n{r.users}" for r in s.itertuples()],
        fontsize=8,
    )
    ax.set_ylabel("throughput per user (Mbit/s)")
    ax.set_title("Scenario B: upgrading the Red users to multipath")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    return fig


def explanation(table: Any) -> str:
    """The report's text on Scenario B: the setup, the model, and the gaps."""

    def gap_list(floor: int) -> str:
        t = table[(table["floor"] == floor) & (table["gap_pct"].abs() > 10)]
        return ", ".join(
            f"{r.algo}, Red {'multipath' if r.red_multipath else 'single-path'}, {r.users} "
            f"{r.ours_mbps:.2f} against {r.published_mbps:.2f} ({r.gap_pct:+.0f} %)"
            for r in t.itertuples()
        )

    drop = {a: 100 * (1 - _total(table, a, True) / _total(table, a, False)) for a in ("lia", "olia")}
    red0, red1 = _cell(table, "lia", False, "red"), _cell(table, "lia", True, "red")
    blue_loss = 100 * (1 - _cell(table, "lia", True, "blue") / _cell(table, "lia", False, "blue"))
    return f"""
**Scenario B** ({SOURCE}): four ISPs, X (27 Mbit/s), Y (100), Z (100) and T (36); 15 Blue users
multi-homed to X and Y download from servers in Z (path b1 over X and Z, b2 over Y and T, as
the draft's Figure 2 draws it), 15 Red users from servers in T over Y (r1) and, upgraded, also
over X (r2). RTTs "around 150 ms (including queuing delay)", the draft's RED at each ISP. Built
with each ISP a link of its capacity between two routers, joined as the figure draws them
(X-Z, X-T, Y-T, T-Z at 1 Gbit/s); routing by hop count gives each path the ISPs the figure
gives it (checked on the links' byte counts: X and T full, Y carrying r1 and b2). Users'
access links 100 Mbit/s, 60 ms; the same seeds, start times, goodput window and window floor
({MIN_WINDOW} segment, rows with 2: QUIC's) as Scenarios A and C; the single-path Red users are
QUIC NewReno. The cut-set bound is 27 + 36 = 63 Mbit/s, 2.1 per user.

Our fluid model gives the draft's analysis of LIA (the checks): upgrading the Red users takes
22 % from the Blue users (the draft: 21 %) and 14 % from the aggregate (14 %); OLIA without a
floor gives every user 2.1, the draft's optimum, and with the 1-segment floor 2.06 after the
upgrade (the draft's optimum with probing cost: 2.04). Measured, with the 1-segment floor:
with LIA the Red users gain nothing by upgrading ({red0:.2f} -> {red1:.2f} Mbit/s; the draft
1.5 -> 1.4), the Blue users lose {blue_loss:.0f} % (the draft 20 %), the aggregate {drop["lia"]:.1f} % (the
draft's tables 15 %, its text 13 %); with OLIA the aggregate falls {drop["olia"]:.1f} % (the draft's
Table 5: 2.5 %). Gaps above 10 %: {gap_list(MIN_WINDOW) or "none"}; with QUIC's floor:
{gap_list(2) or "none"}. The Red users keep about 0.1 Mbit/s more
than in the testbed before and after the upgrade: our LIA users put less on the congested ISP T
than the testbed's, as in Scenarios A and C (above). The window floor hardly matters here: a
user's share, 2.1 Mbit/s at 150 ms, is about 26 packets per RTT, so a path held at 1 or 2
packets per RTT is a few percent of it.
"""
