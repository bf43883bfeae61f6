"""DCTCP beside ns-3.44's TcpDctcp (tools/ns3/dctcp.cc, numbers committed in
python/quicksim/reproduce/data/ns3_dctcp.csv): the same dumbbell (scenarios/dctcp-ns3.toml),
two flows through a step marker at K = 20 packets. Per-flow goodput, the queue's time mean and
its standard deviation (the oscillation's amplitude) agree within 5 %. The amplitude matches
since DCTCP's cut is spread over a round by PRR in TCP's CWR state, as Linux and ns-3 do it
(with the cut at once the standard deviation was 12 % narrower)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import quicksim

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "scenarios" / "dctcp-ns3.toml"
NS3 = ROOT / "python" / "quicksim" / "reproduce" / "data" / "ns3_dctcp.csv"
T0, T1, DT = 5.0, 20.0, 1e-4


def queue_samples(q: pd.DataFrame) -> np.ndarray:
    """The bottleneck queue's length every 0.1 ms over [T0, T1), as ns-3 samples it."""
    q = q[q["queue"].str.startswith("bottleneck:router1")]
    ts = np.arange(T0, T1, DT)
    idx = np.searchsorted(q["t_s"].to_numpy(), ts, side="right") - 1
    n = q["packets"].to_numpy()[np.clip(idx, 0, None)]
    return np.where(idx >= 0, n, 0)


def test_queue_samples_of_a_step_function_by_hand() -> None:
    name = "bottleneck:router1->router2"
    q = pd.DataFrame({"t_s": [0.0, 6.0, 10.0], "queue": [name] * 3, "packets": [3, 7, 1]})
    n = queue_samples(q)
    # [5, 6) at 3, [6, 10) at 7, [10, 20) at 1: 10 000, 40 000 and 100 000 samples.
    assert len(n) == 150_000
    assert n.mean() == pytest.approx((3 * 1e4 + 7 * 4e4 + 1 * 1e5) / 1.5e5, rel=1e-4)


def test_dctcp_matches_ns3_tcpdctcp_two_flows() -> None:
    ns3 = pd.read_csv(NS3, comment="#")
    ref = ns3[ns3["flows"] == 2].iloc[0]
    res = quicksim.run(SCENARIO)
    f = res.table("flows")
    w = f[(f["t_s"] >= T0) & (f["t_s"] < T1)]
    ours = (w.groupby("flow")["delivered_bytes"].sum() * 8 / (T1 - T0)).sort_index().to_numpy()
    theirs = np.array([float(g) for g in str(ref["goodput_bps"]).split(";")])
    n = queue_samples(res.table("queues"))
    amp = np.percentile(n, 95, method="lower") - np.percentile(n, 5, method="lower")
    print(
        f"goodput {ours} vs ns-3 {theirs}; queue mean {n.mean():.3f} vs {ref['queue_mean']:.3f}, "
        f"std {n.std():.3f} vs {ref['queue_std']:.3f}, p95-p5 {amp} vs {ref['queue_p95'] - ref['queue_p5']}"
    )
    # Flows in name order on both sides (d1, d2 / sink 0, 1): the same start, the same path.
    assert ours == pytest.approx(theirs, rel=0.05)
    assert n.mean() == pytest.approx(ref["queue_mean"], rel=0.05)
    assert n.std() == pytest.approx(ref["queue_std"], rel=0.05)
    # The queue stays near K and never empties at steady state, on both sides.
    assert ref["queue_min"] > 0 and n.min() > 0
