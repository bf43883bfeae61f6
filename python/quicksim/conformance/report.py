"""The conformance card as files: `report.md` (the card, the criteria with their sources, the
plots), `card.json`, and the PNGs: window vs loss rate against Reno's and CUBIC's references,
the per-flow goodput of the fairness, convergence and friendliness runs, and the queueing delay
on the shallow and deep buffers."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import cases

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from . import Card

__all__ = ["write"]


def write(card: Card, out: Path) -> None:
    """Write report.md, card.json and the plots into `out`."""
    from .._io import atomic_write_text
    from ..reproduce.common import md_table, save_figure
    from . import _fmt, card_json

    out.mkdir(parents=True, exist_ok=True)
    save_figure(_window_figure(card), out / "window_vs_loss.png")
    save_figure(_flows_figure(card), out / "fairness.png")
    save_figure(_buffer_figure(card), out / "buffers.png")
    atomic_write_text(out / "card.json", card_json(card))
    rows = [
        [
            "info" if r.passed is None else ("**PASS**" if r.passed else "**FAIL**"),
            r.title,
            r.what,
            _fmt(r.measured),
            r.criterion,
            r.note,
        ]
        for r in card.rows
    ]
    sources = [(r.title, r.source) for r in card.rows]
    mode = "quick (`--quick`)" if card.quick else "full"
    text = f"""# Conformance card: `{card.cc}`

`quicksim conformance {card.cc}{" --quick" if card.quick else ""}` ({mode} mode):
**{card.passed} of {card.total} criteria passed.** Every case is a QUIC simulation over a
dumbbell: 10 Mbit/s bottleneck, 20 ms one way (RTT 40 ms), a DropTail buffer of 1 BDP (50 kB,
40 packets of 1252 B) unless stated, saturated senders; the window-vs-loss cells are RFC 9438
§5.1's (`reproduce cubic-rfc9438`'s runs with this controller). Measurements start after
{"20" if card.quick else "50"} s of {"60" if card.quick else "200"} s (5 s for single flows).

{md_table(["verdict", "case", "quantity", "measured", "criterion", "note"], rows)}

## Where each threshold comes from

{md_table(["case", "source"], [[a, b] for a, b in sources])}

## Plots

![window vs loss](window_vs_loss.png)

Mean congestion window against the loss rate (periodic loss), with Reno's 1.2/sqrt(p) and
RFC 9438's CUBIC table (RTT 100 ms and 10 ms).

![fairness](fairness.png)

Per-flow goodput (2 s moving mean) in the fairness, RTT-fairness, convergence and friendliness runs.

![buffers](buffers.png)

Queueing delay at the bottleneck with one flow, shallow (0.25 BDP) and deep (4 BDP) buffers.
"""
    atomic_write_text(out / "report.md", text)


def _window_figure(card: Card) -> Figure:
    import numpy as np
    from matplotlib.figure import Figure

    from ..reproduce.cubic_rfc9438 import fluid_reno, table_value

    fig = Figure(figsize=(6.4, 4.4), layout="constrained")
    ax = fig.add_subplot()
    ps = np.logspace(-4.2, -1.8, 60)
    ax.plot(ps, [fluid_reno(p) for p in ps], "k--", lw=1, label="Reno 1.2/sqrt(p)")
    for rtt, style in ((0.1, "-"), (0.01, ":")):
        ax.plot(
            ps,
            [table_value(rtt, p) for p in ps],
            "C1" + style,
            lw=1,
            label=f"CUBIC, RFC 9438 (RTT {rtt * 1e3:g} ms)",
        )
    # RTT 100 ms as large open circles, 10 ms as small squares: both stay visible where they meet.
    for rtt, marker, size, face in ((0.1, "o", 11, "none"), (0.01, "s", 5, "C0")):
        pts = [
            (r.measured, float(r.key.split("p=")[1]))
            for r in card.rows
            if r.key.startswith(f"window rtt={rtt:g} ")
        ]
        if pts:
            ax.plot(
                [p for _, p in pts],
                [w for w, _ in pts],
                marker,
                color="C0",
                mfc=face,
                ms=size,
                mew=1.5,
                label=f"{card.cc}, RTT {rtt * 1e3:g} ms",
            )
    ax.set(xscale="log", yscale="log", xlabel="loss rate p", ylabel="mean cwnd (segments)")
    ax.set_title(f"Steady-state window vs loss rate: {card.cc}", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    return fig


_PANELS = (
    ("self_fairness_2", "self-fairness, 2 flows"),
    ("self_fairness_4", "self-fairness, 4 flows"),
    ("rtt_fairness_2", "RTT 40 ms (f1) vs 80 ms (f2)"),
    ("rtt_fairness_4", "RTT 40 ms (f1) vs 160 ms (f2)"),
    ("convergence", "a second flow joins"),
    ("friendliness", "f1 = tested, f2 = CUBIC"),
)


def _smooth(t: list[float], v: list[float], n: int = 4) -> tuple[Any, Any]:
    """A trailing n-bin moving mean, plotted at the end of its window."""
    import numpy as np

    a, ts = np.asarray(v, dtype=float), np.asarray(t, dtype=float)
    if len(a) < n:
        return ts, a
    return ts[n - 1 :] + cases.BIN_S, np.convolve(a, np.ones(n) / n, mode="valid")


def _flows_figure(card: Card) -> Figure:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(10, 6.4), layout="constrained")
    axes = fig.subplots(2, 3, sharey=True)
    for ax, (key, title) in zip(axes.flat, _PANELS, strict=True):
        series = card.results[key]["series"]
        names = sorted(k for k in series if not k.endswith("_t"))
        for i, name in enumerate(names):
            ax.plot(*_smooth(series[f"{name}_t"], series[name]), color=f"C{i}", lw=1, label=name)
        row = next(r for r in card.rows if r.key == key)
        verdict = "PASS" if row.passed else "FAIL"
        ax.set_title(f"{title}\n{row.what} {cases_fmt(row.measured)}: {verdict}", fontsize=9)
        ax.set_xlabel("time (s)")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7, loc="upper right")
    for ax in axes[:, 0]:
        ax.set_ylabel("goodput (Mbit/s)")
    fig.suptitle(f"{card.cc}: per-flow goodput, 10 Mbit/s bottleneck", fontsize=11)
    return fig


def cases_fmt(v: float) -> str:
    return "inf" if math.isinf(v) else f"{v:.3g}"


def _buffer_figure(card: Card) -> Figure:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8, 3.6), layout="constrained")
    axes = fig.subplots(1, 2)
    for ax, key, bdp in zip(axes, ("shallow_buffer", "deep_buffer"), (0.25, 4.0), strict=True):
        res = card.results[key]
        ax.plot(res["series"]["t"], res["series"]["delay_ms"], lw=0.8)
        ax.axhline(bdp * cases.RTT_S * 1e3, color="k", ls="--", lw=0.8, label="buffer full")
        ax.set(xlabel="time (s)", ylabel="queueing delay (ms)")
        ax.set_title(
            f"{bdp:g} BDP: utilization {res['value']:.3f}, mean delay {res['delay_rtts']:.2f} RTT", fontsize=9
        )
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(f"{card.cc}: one flow, 10 Mbit/s, RTT 40 ms", fontsize=11)
    return fig
