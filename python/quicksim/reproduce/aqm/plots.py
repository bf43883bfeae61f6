"""The `aqm` reproduction's figure: one column per queue discipline, goodput of each flow with the
link's rate on top, the bottleneck's queueing delay (log scale, 50 ms means; clipped
below at 0.1 ms) below; goodput bursts of a flow releasing data held back by a loss are cut at 1.6
times the top rate."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from matplotlib.figure import Figure

COLOURS = {"quic": "tab:blue", "tcp": "tab:orange"}
TARGETS_MS = {"codel": 5.0, "fq_codel": 5.0, "pie": 15.0}


def binned(delay: Any, duration_s: float, step_s: float = 0.05) -> tuple[Any, Any]:
    """The step function `delay` (t_s, delay_s) averaged over bins of `step_s`: sampled every
    millisecond, then the samples of each bin averaged; (bin centres, means)."""
    import numpy as np

    grid = np.arange(0.0, duration_s, 0.001)
    t, v = delay.t_s.to_numpy(), delay.delay_s.to_numpy()
    idx = np.searchsorted(t, grid, side="right") - 1
    sampled = np.where(idx >= 0, v[np.clip(idx, 0, None)], 0.0)
    per = round(step_s / 0.001)
    n = len(sampled) // per
    means = sampled[: n * per].reshape(n, per).mean(axis=1)
    return (np.arange(n) + 0.5) * step_s, means


def figure(case: Any, measured: Sequence[Any], rate_at: Callable[[Any, Any], Any]) -> Figure:
    """`measured`: one `aqm.Measured` per discipline, in column order."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    n = len(measured)
    fig, axes = plt.subplots(2, n, figsize=(3.2 * n, 5.6), sharex=True, sharey="row", squeeze=False)
    t = np.linspace(0, case.duration_s, 1000)
    for j, m in enumerate(measured):
        top, bottom = axes[0][j], axes[1][j]
        top.plot(t, rate_at(case, t) / 1e6, color="0.6", lw=1, ls="--", label="link rate")
        for flow, g in m.goodput.groupby("flow", observed=True):
            top.plot(g.t_s, g.mbps, color=COLOURS.get(str(flow), "k"), lw=1, label=str(flow).upper())
        top.set_title(m.discipline)
        top.set_ylim(0, (1.1 if case.trace else 1.6) * case.top_bps() / 1e6)
        bt, bd = binned(m.delay, case.duration_s)
        bottom.plot(bt, np.maximum(bd * 1e3, 0.1), color="tab:red", lw=0.9)
        if m.discipline in TARGETS_MS:
            bottom.axhline(TARGETS_MS[m.discipline], color="k", lw=0.8, ls=":", label="target")
            bottom.legend(loc="upper right", fontsize=7)
        bottom.set_yscale("log")
        bottom.set_xlabel("time (s)")
        top.grid(alpha=0.3)
        bottom.grid(alpha=0.3, which="both")
    axes[0][0].set_ylabel("goodput (Mbit/s)")
    axes[1][0].set_ylabel("queueing delay (ms)")
    axes[0][0].legend(loc="upper right", fontsize=7)
    fig.suptitle(f"{case.name}: {case.title()}")
    fig.tight_layout()
    return fig
