"""The sweeps of `cubic-dumbbell` (seed 001) and the checks on their results: which points each
experiment runs (QUIC, TCP as the variant, the base-RTT sensitivity, the initial-window and
file-size mechanisms) and the theory every check compares with."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ...validation import Check
from . import study as cd

if TYPE_CHECKING:
    import pandas as pd

    from ..common import Context

RATE, DELAY = "dumbbell.bottleneck.rate", "dumbbell.bottleneck.delay"
#: Bin of the 1 Gbit/s time series' received rate (s).
TS_BIN_S = 0.04


def _rate_points(rates: Sequence[float], rtt: float = cd.BASE_RTT_MS) -> list[dict[str, Any]]:
    return [cd._points_sets(r, rtt) for r in rates]


def _frame(
    runs: pd.DataFrame,
    columns: dict[str, Callable[[Any], Any]],
    case: str,
    experiment: str,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(per-run rows, per-point summary) with readable parameter columns instead of set paths."""
    runs = runs.copy()
    for name, fn in columns.items():
        runs[name] = runs.apply(fn, axis=1)
    runs.insert(0, "case", case)
    runs.insert(0, "experiment", experiment)
    by = ["experiment", "case", *columns]
    summary = cd.wide(cd.summarize(runs, by), by)
    keep = ["experiment", "case", *columns, "rep", *[m for m in cd.METRICS if m in runs.columns], "error"]
    return runs[keep], summary


def _value(v: Any) -> Any:
    """A table or list parameter as the sweep stores it (canonical JSON) back as Python."""
    import json

    return json.loads(v) if isinstance(v, str) else v


def _mbps(row: Any) -> float:
    return float(str(row[RATE]).removesuffix("Mbps"))


def _rtt_ms(row: Any) -> float:
    return 2 * float(str(row[DELAY]).removesuffix("ms"))


def run_all(ctx: Context) -> tuple[dict[str, pd.DataFrame], list[Check]]:
    """Every sweep; the tables the report shows and the checks."""
    import pandas as pd

    quick = ctx.quick
    caps = cd.QUICK_CAPACITIES if quick else cd.CAPACITIES
    checks: list[Check] = []
    all_runs: list[pd.DataFrame] = []
    tables: dict[str, list[pd.DataFrame]] = {"capacity": [], "loss": [], "rtt": [], "background": []}

    def add(table: str, result: tuple[pd.DataFrame, list[Check]], frame: tuple[Any, ...]) -> None:
        runs, failed = result
        checks.extend(failed)
        per_run, summary = _frame(runs, *frame)
        all_runs.append(per_run)
        tables[table].append(summary)

    cap_cols = {"rate_mbps": _mbps, "rtt_ms": _rtt_ms}
    # 1. capacity: QUIC (the seed's sender), TCP, QUIC with IW 10, QUIC at other base RTTs.
    for transport in ("quic", "tcp"):
        add(
            "capacity",
            cd.study(ctx, "capacity", _rate_points(caps), transport=transport),
            (cap_cols, transport, "capacity"),
        )
    add(
        "capacity",
        cd.study(ctx, "capacity-iw10", _rate_points(caps), sets=[f"quic.initial_window={cd.IW_RFC}"]),
        (cap_cols, "quic-iw10", "capacity"),
    )
    sens_rates = cd.QUICK_SENSITIVITY_RATES if quick else caps
    for rtt in cd.SENSITIVITY_RTTS:
        add(
            "capacity",
            cd.study(ctx, f"capacity-rtt{rtt:g}", _rate_points(sens_rates, rtt)),
            (cap_cols, f"quic-rtt{rtt:g}", "capacity"),
        )
    buf_rates = (cd.MECH_RATE_MBPS,) if quick else caps
    for bdps in cd.SENSITIVITY_BUFFERS:
        add(
            "capacity",
            cd.study(ctx, f"capacity-buf{bdps:g}", [cd._points_sets(r, bdps=bdps) for r in buf_rates]),
            (cap_cols, f"quic-buf{bdps:g}", "capacity"),
        )
    # The file-size mechanism at 1 Gbit/s: a file LONG_FILE_FACTOR times as long.
    long_bytes = cd.FILE_BYTES * cd.LONG_FILE_FACTOR
    long_sets = {
        **cd._points_sets(cd.MECH_RATE_MBPS),
        "run.duration": f"{cd.duration_s(cd.MECH_RATE_MBPS) * cd.LONG_FILE_FACTOR:g}s",
    }
    add(
        "capacity",
        cd.study(
            ctx,
            "capacity-longfile",
            [long_sets],
            sets=[f"flows.flow1.bytes={long_bytes}B", f"flows.flow2.bytes={long_bytes}B"],
        ),
        (cap_cols, "quic-longfile", "capacity"),
    )
    # 2. random loss on the bottleneck's data direction.
    losses = cd.QUICK_LOSSES if quick else cd.LOSSES
    loss_points = [
        {
            **cd._points_sets(cd.BASE_RATE_MBPS, loss=p),
            "dumbbell.bottleneck.forward.loss": {"kind": "bernoulli", "p": p},
        }
        for p in losses
    ]
    loss_cols = {"loss": lambda row: float(_value(row["dumbbell.bottleneck.forward.loss"])["p"])}
    for transport in ("quic", "tcp"):
        add("loss", cd.study(ctx, "loss", loss_points, transport=transport), (loss_cols, transport, "loss"))
    # 3. client 2's extra one-way delay (its access link).
    delays = cd.QUICK_EXTRA_DELAYS if quick else cd.EXTRA_DELAYS
    rtt_points = [
        {
            "dumbbell.access_delays": ["0s", f"{d:g}ms"],
            "run.duration": f"{cd.duration_s(cd.BASE_RATE_MBPS, rtt_ms=cd.BASE_RTT_MS + 2 * d):g}s",
        }
        for d in delays
    ]
    rtt_cols = {
        "extra_delay_ms": lambda row: float(str(_value(row["dumbbell.access_delays"])[1]).removesuffix("ms"))
    }
    for transport in ("quic", "tcp"):
        add("rtt", cd.study(ctx, "rtt", rtt_points, transport=transport), (rtt_cols, transport, "rtt"))
    # 4. ON/OFF UDP background (pair 3); the reference without it is experiment 1 at 100 Mbit/s.
    offs = cd.QUICK_OFF_MEANS if quick else cd.OFF_MEANS
    bg_points = [{"flows.udp.off.mean": f"{off:g}s"} for off in offs]
    bg_cols = {"off_mean_s": lambda row: float(str(row["flows.udp.off.mean"]).removesuffix("s"))}
    for transport in ("quic", "tcp"):
        add(
            "background",
            cd.study(ctx, "background", bg_points, transport=transport, background=True),
            (bg_cols, transport, "background"),
        )

    data = {name: pd.concat(frames, ignore_index=True) for name, frames in tables.items()}
    data["capacity"].insert(
        4,
        "buffer_bdp",
        [
            float(c.removeprefix("quic-buf")) if c.startswith("quic-buf") else cd.BUFFER_BDP
            for c in data["capacity"].case
        ],
    )
    data["capacity"]["util_bound"] = [
        cd.utilization_bound(
            r.rate_mbps,
            r.rtt_ms,
            cd.IW_RFC if r.case == "quic-iw10" else 1,
            cd.FILE_BYTES * (cd.LONG_FILE_FACTOR if r.case == "quic-longfile" else 1),
            "tcp" if r.case == "tcp" else "quic",
        )
        for r in data["capacity"].itertuples()
    ]
    data["loss"]["util_theory"] = [
        cd.loss_utilization(r.loss, cd.BASE_RATE_MBPS, cd.BASE_RTT_MS, r.case)
        for r in data["loss"].itertuples()
    ]
    data["runs"] = pd.concat(all_runs, ignore_index=True)
    data["timeseries_1g"] = timeseries()
    checks.extend(_checks(data))
    return data, checks


def _row(frame: pd.DataFrame, **where: Any) -> Any:
    mask = frame["case"] == where.pop("case")
    for k, v in where.items():
        mask &= frame[k] == v
    rows = frame[mask]
    return rows.iloc[0] if len(rows) else None


def _checks(data: dict[str, pd.DataFrame]) -> list[Check]:
    """Every check compares with theory: the finite-file slow-start bound, the direction of the
    two mechanisms, RFC 9438's average window under loss, RTT unfairness, the UDP's share."""
    checks: list[Check] = []
    runs = data["runs"]
    cap = data["capacity"]
    # Utilization of every run at or below the slow-start bound of its point (the bound is the
    # largest utilization two files can reach when slow start doubles the window per RTT).
    for r in cap.itertuples():
        sel = runs[(runs.experiment == "capacity") & (runs.case == r.case) & (runs.rate_mbps == r.rate_mbps)]
        sel = sel[sel.rtt_ms == r.rtt_ms]
        checks.append(
            Check(
                f"{r.case} {r.rate_mbps:g} Mbit/s, RTT {r.rtt_ms:g} ms: utilization <= slow-start bound",
                float(sel["util"].max()),
                float(r.util_bound),
                0,
                "",
                kind="max",
                note=f"largest of {len(sel)} runs; bound = 2 files / (C x makespan bound)",
            )
        )
    # The file-size mechanism at 1 Gbit/s: the slow-start cost (a fixed number of round trips)
    # is spread over 10x the bytes, so the bound rises towards the goodput fraction and the
    # measured utilization with it. (The initial window is not checked this way: IW 10 raises
    # the bound, but the measured effect is set by the slow-start overshoot's losses; see the
    # report.)
    base = _row(cap, case="quic", rate_mbps=cd.MECH_RATE_MBPS)
    other = _row(cap, case="quic-longfile", rate_mbps=cd.MECH_RATE_MBPS)
    if base is not None and other is not None:
        checks.append(
            Check(
                f"1 Gbit/s: a {cd.LONG_FILE_FACTOR}x file's utilization above the 32.3 MB file's",
                float(other.util),
                float(base.util),
                0,
                "",
                kind="min",
                note=f"bounds {float(base.util_bound):.3f} -> {float(other.util_bound):.3f}",
            )
        )
    # Under random loss: RFC 9438's mean window (Mathis' 1.2/sqrt(p) in the Reno-friendly region).
    for r in data["loss"].itertuples():
        if r.loss < cd.MATHIS_MIN_LOSS:
            continue
        checks.append(
            Check(
                f"{r.case} loss {r.loss:.2%}: utilization vs RFC 9438 average window",
                float(r.util),
                float(r.util_theory),
                cd.MATHIS_TOLERANCE,
                "",
                note="2 x W(p) x 1180 B / RTT / C, W = max(1.054 (RTT/p)^0.75, 1.2/sqrt(p))",
            )
        )
    # RTT unfairness: the flow with the longer RTT gets the smaller throughput (window growth per
    # RTT: CUBIC's TCP-friendly region grows ~1/RTT, its cubic curve is RTT-independent).
    for r in data["rtt"].itertuples():
        if r.extra_delay_ms <= 0:
            continue
        checks.append(
            Check(
                f"{r.case} client 2 +{r.extra_delay_ms:g} ms: flow 1 (shorter RTT) not slower",
                float(r.thr1_mbps / r.thr2_mbps),
                1.0,
                0,
                "ratio",
                kind="min",
                note="throughput of flow 1 / flow 2 (means over repetitions)",
            )
        )
    # ON/OFF background: the files and the UDP together cannot deliver more than the link.
    bg = runs[runs.experiment == "background"]
    if len(bg):
        checks.append(
            Check(
                "background: files' + UDP's utilization <= 1",
                float((bg["util"] + bg["udp_util"]).max()),
                1.0,
                0,
                "",
                kind="max",
                note=f"largest of {len(bg)} runs",
            )
        )
    # Physical bounds of every run's utilization and JFI (the seed's figures showed both <= 1).
    ok = runs[runs["error"].isna()]
    checks.append(
        Check("every run: JFI <= 1", float(ok["jfi"].max()), 1.0, 0, "", kind="max", note=f"{len(ok)} runs")
    )
    checks.append(
        Check(
            "every run: utilization <= payload / frame",
            float(
                (
                    ok["util"]
                    / ok["case"].map(lambda c: cd.goodput_fraction("tcp" if c == "tcp" else "quic"))
                ).max()
            ),
            1.0,
            0,
            "",
            kind="max",
            note="utilization / goodput fraction (QUIC 1180/1236, TCP 1180/1227)",
        )
    )
    return checks


def timeseries() -> pd.DataFrame:
    """One run each of IW 1 and IW 10 at 1 Gbit/s (flow 2 starting with the first repetition's
    offset): each flow's received rate per 40 ms and its congestion window every 5 ms."""
    import pandas as pd

    from ... import api

    frames = []
    for iw in (1, cd.IW_RFC):
        doc = cd.scenario()
        for path, value in cd._points_sets(cd.MECH_RATE_MBPS).items():
            _put(doc, path, value)
        doc["quic"]["initial_window"] = iw
        doc["flows"][1]["start"] = f"{cd.offsets_ms(1)[0]:g}ms"
        doc["run"]["record"] = {"queues": False, "links": False, "conn": True, "conn_interval": "5ms"}
        r = api.run(doc)
        # Received on the wire (bounded by the link), not delivered in order: after a loss burst
        # the in-order delivery releases the held data at once.
        # 40 ms bins (two RTTs): ack-clocked windows arrive as trains of about one RTT, so
        # 10 ms bins alternate between the two flows.
        f = r.flows[["t_s", "flow", "wire_recv_bytes"]].copy()
        f["t_s"] = (f["t_s"] / TS_BIN_S + 1e-9).astype(int) * TS_BIN_S
        f = f.groupby(["t_s", "flow"], observed=True, as_index=False)["wire_recv_bytes"].sum()
        f["value"] = f.pop("wire_recv_bytes") * 8 / TS_BIN_S / 1e6
        f["series"] = "received_mbps"
        c = r.conn[["t_s", "flow", "cwnd_bytes"]].copy()
        c["value"] = c.pop("cwnd_bytes") / cd.QUIC_PACKET
        c["series"] = "cwnd_packets"
        both = pd.concat([f, c], ignore_index=True)
        both.insert(0, "iw", iw)
        end = max(float(v["start_s"]) + float(v["completion_time_s"]) for v in r.totals["flows"].values())
        frames.append(both[both.t_s <= end + 0.05])
    out = pd.concat(frames, ignore_index=True)
    out["flow"] = out["flow"].astype(str)
    return out


def _put(doc: dict[str, Any], path: str, value: Any) -> None:
    """Set `a.b.c` in a nested dict (the sweep's `--set` paths, for a single run)."""
    *head, last = path.split(".")
    for key in head:
        doc = doc.setdefault(key, {})
    doc[last] = value
