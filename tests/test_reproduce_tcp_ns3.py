"""`quicksim reproduce tcp-vs-ns3`: the committed ns-3 numbers (checked against the anchors'
RESULTS.md), the conversion of the programs' summary.json, the comparison's checks, and the
quick reproduction end to end."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from quicksim import reproduce as rp
from quicksim.reproduce import tcp_vs_ns3 as tv
from quicksim.reproduce.common import ns3data as nd


def test_committed_linksharing_csv_is_ns3s_ten_runs() -> None:
    ls = nd.load(nd.LINKSHARING_CSV)
    assert sorted(ls.run.unique()) == list(range(1, 11))
    assert len(ls) == 10 * 7
    assert list(ls[ls.run == 1].t0_s) == list(tv.EDGES[:-1])
    # Run 1 as the anchors' RESULTS.md tables it (ns-3.44, seed 1 run 1): phase 5-10 s receiver 1
    # 8.594 Mbit/s with 27 drops; 20-30 s Jain 0.9617; 177 drops in all.
    r1 = ls[ls.run == 1].set_index("t0_s")
    assert r1.loc[5.0, "recv1_mbps"] == pytest.approx(8.594, abs=5e-4)
    assert r1.loc[5.0, "drops"] == 27
    assert r1.loc[20.0, "jfi_active"] == pytest.approx(0.9617, abs=5e-5)
    assert r1.drops.sum() == 177
    # No TCP flow active over 0-5 s: Jain's index undefined, not 0.
    assert math.isnan(r1.loc[0.0, "jfi_active"])
    head = nd.header(nd.data_path(nd.LINKSHARING_CSV))
    assert any("ns-3 3.44" in line for line in head)
    assert any("bin/linksharing --run=" in line for line in head)


def test_carried_runs_keep_the_ratio_and_scale_the_goodput() -> None:
    """At 52 and 100 ms ns-3's runs 2-5 are its 20-ms runs carried over (the same loss sequence
    gives the same ratio at every RTT >= 20 ms): the ratio stays, goodputs scale by 20 / RTT."""
    ma = nd.load(nd.MATHIS_CSV)
    pts = set(tv.ns3_points(tv.RTTS_MS, tv.LOSS_RATES))
    n = ma[[pt in pts for pt in zip(ma.variant, ma.rtt_ms, ma.p, ma.run, strict=True)]]
    c = tv.carry_runs(n, tv.RTTS_MS)
    for r in (52.0, 100.0):
        got = c[(c.rtt_ms == r) & (c.variant == "random") & (c.p == 0.001)].set_index("run")
        assert sorted(got.index) == [1, 2, 3, 4, 5]
        src = c[(c.rtt_ms == 20.0) & (c.variant == "random") & (c.p == 0.001)].set_index("run")
        for k in (2, 3, 4, 5):
            assert got.loc[k, "ratio_b1"] == src.loc[k, "ratio_b1"]
            assert got.loc[k, "goodput_mbps"] == pytest.approx(src.loc[k, "goodput_mbps"] * 20 / r)
            assert got.loc[k, "carried_from_rtt_ms"] == 20.0
    # Nothing is carried to 2 ms (its own runs: the 1-s minimum RTO makes its ratios differ).
    assert c[c.rtt_ms == 2.0].get("carried_from_rtt_ms", pd.Series(dtype=float)).isna().all()


def test_committed_mathis_csv_covers_the_compared_grid() -> None:
    ma = nd.load(nd.MATHIS_CSV)
    have = set(zip(ma.variant, ma.rtt_ms, ma.p, strict=True))
    want = {(v, r, p) for v in nd.VARIANTS for r in tv.RTTS_MS for p in tv.LOSS_RATES}
    assert want <= have
    # Runs 2-5 at RTT 2 and 20 ms for the random-loss variants, as the reproduction compares them;
    # runs 2-3 at 100 ms for random, p = 0.005 %, showing that 100 ms repeats 20 ms's ratios.
    extra = ma[(ma.run > 1) & (ma.rtt_ms != 100.0)]
    assert set(zip(extra.variant, extra.rtt_ms, extra.run, strict=True)) == {
        (v, r, k) for v in ("random", "delack2") for r in (2.0, 20.0) for k in (2, 3, 4, 5)
    }
    ratio = ma.set_index(["variant", "rtt_ms", "p", "run"]).ratio_b1
    for k in (2, 3):
        at20 = ratio[("random", 20.0, 5e-05, k)]
        assert ratio[("random", 100.0, 5e-05, k)] == pytest.approx(at20, rel=1e-9)
    # Run 1 at 52 and 100 ms repeats 20 ms's ratio: exactly at p <= 0.02 %; within 1 % at
    # p = 0.1 %, where a timeout (1-s minimum RTO: 50 RTTs at 20 ms, 10 at 100 ms) costs more
    # round trips at 20 ms (measured: random +0.2 %, delack2 +0.8 %).
    for v in nd.VARIANTS:
        for p in tv.LOSS_RATES:
            for r in (52.0, 100.0):
                tol = 0.01 if p == 0.001 else 1e-6
                assert ratio[(v, r, p, 1)] == pytest.approx(ratio[(v, 20.0, p, 1)], rel=tol)
    assert set(tv.ns3_points(tv.RTTS_MS, tv.LOSS_RATES)) <= set(
        zip(ma.variant, ma.rtt_ms, ma.p, ma.run, strict=True)
    )
    # RESULTS.md: mathis20 (random, b = 1, run 1) 1.033; periodic 0.941; delayed ACKs 0.703.
    at = ma[ma.run == 1].set_index(["variant", "rtt_ms", "p"]).ratio_b1
    assert at[("random", 20.0, 0.001)] == pytest.approx(1.033, abs=5e-4)
    assert at[("periodic", 20.0, 0.001)] == pytest.approx(0.941, abs=5e-4)
    assert at[("delack2", 20.0, 0.001)] == pytest.approx(0.703, abs=5e-4)
    # The ratio is goodput over the b = 1 formula with the nominal RTT and p, MSS 1252 B.
    row = ma[(ma.variant == "periodic") & (ma.rtt_ms == 100.0) & (ma.p == 0.0002)].iloc[0]
    assert row.mathis_b1_mbps == pytest.approx(1252 * 8 / 0.1 * math.sqrt(3 / (2 * 0.0002)) / 1e6)
    assert row.ratio_b1 == pytest.approx(row.goodput_mbps / row.mathis_b1_mbps)


def test_loader_names_the_missing_column(tmp_path: Path) -> None:
    p = tmp_path / "bad.csv"
    p.write_text("# made by hand\nrun,t0_s\n1,0\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad.csv: no column 't1_s'"):
        nd.load(nd.LINKSHARING_CSV, p)
    nd.write_csv(
        pd.DataFrame({"variant": ["random"], "rtt_ms": [20], "p": [0.001], "ratio_b1": [1.0]}), p, ["a", "b"]
    )
    assert nd.header(p) == ["a", "b"]
    assert nd.load(nd.MATHIS_CSV, p).ratio_b1.tolist() == [1.0]


def test_summary_json_becomes_rows() -> None:
    summary = {
        "phases": [
            {
                "t0": 0,
                "t1": 5,
                "mbps": [0, 0, 0],
                "udp_mbps": 0.4,
                "tcp_sum_mbps": 0,
                "jfi_active": None,
                "drops": 0,
            },
            {
                "t0": 5,
                "t1": 10,
                "mbps": [8.5, 0, 0],
                "udp_mbps": 0.39,
                "tcp_sum_mbps": 8.5,
                "jfi_active": 1,
                "drops": 27,
            },
        ]
    }
    rows = nd.linksharing_rows(summary, run=4)
    assert [r["run"] for r in rows] == [4, 4]
    assert math.isnan(rows[0]["jfi_active"]) and rows[1]["jfi_active"] == 1.0
    assert (rows[1]["recv1_mbps"], rows[1]["drops"]) == (8.5, 27)
    assert nd.mathis_args("delack2", 20.0, 0.0002) == [
        "--rttMs=20",
        "--p=0.0002",
        "--loss=random",
        "--delAck=2",
        "--run=1",
    ]


def _table(scale_goodput: float = 1.0, scale_drops: float = 1.0) -> pd.DataFrame:
    ns = nd.load(nd.LINKSHARING_CSV)
    t = ns.copy()
    for c in ("recv1_mbps", "recv2_mbps", "recv3_mbps", "tcp_sum_mbps"):
        t[c] = t[c] * scale_goodput
    t["drops"] = (t["drops"] * scale_drops).round().astype(int)
    return t


def test_linksharing_checks_compare_the_means() -> None:
    ns = nd.load(nd.LINKSHARING_CSV)
    same = tv.linksharing_checks(_table(), ns)
    names = [c.name for c in same]
    # Goodput in the five phases with a TCP flow, Jain in the three shared ones, drops where ns-3
    # drops at least 10 per phase (not 40-45 s: ~5), and the whole run's drops.
    assert [n for n in names if n.startswith("goodput")] == [
        "goodput 5-10 s",
        "goodput 10-20 s",
        "goodput 20-30 s",
        "goodput 30-40 s",
        "goodput 40-45 s",
    ]
    assert [n for n in names if n.startswith("Jain")] == ["Jain 10-20 s", "Jain 20-30 s", "Jain 30-40 s"]
    assert "drops 40-45 s" not in names and "drops, whole run" in names
    assert all(c.passed for c in same if not c.name.startswith("Jain"))
    # 6 % more goodput fails the 5 % bound; 20 % more drops the 15 % one.
    assert not any(c.passed for c in tv.linksharing_checks(_table(1.06), ns) if c.name.startswith("goodput"))
    assert all(c.passed for c in tv.linksharing_checks(_table(1.04), ns) if c.name.startswith("goodput"))
    more = tv.linksharing_checks(_table(scale_drops=1.2), ns)
    assert not any(c.passed for c in more if c.name.startswith("drops"))


def test_mathis_checks_pair_the_points() -> None:
    ns = nd.load(nd.MATHIS_CSV)
    q = ns[["variant", "rtt_ms", "p", "goodput_mbps", "ratio_b1"]].copy()
    q["ratio_b1"] *= 1.04
    q = q.groupby(["variant", "rtt_ms", "p"], as_index=False).mean()
    q["fast_retransmits"], q["rtos"], q["seeds"] = 400, 0, 1
    checks, both = tv.mathis_checks(q, ns)
    assert len(checks) == len(q) == len(both)
    # ns-3's several runs of a point are averaged.
    assert (both.ns3_runs > 1).any() and (both.ns3_runs == 1).any()
    assert all(c.passed for c in checks)
    q["ratio_b1"] *= 1.02  # 6 % off
    assert not any(c.passed for c in tv.mathis_checks(q, ns)[0])


@pytest.mark.core
@pytest.mark.slow
def test_quick_reproduction_end_to_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NS3_PYTHON", raising=False)  # the committed numbers, as CI
    report = rp.reproduce("tcp-vs-ns3", tmp_path, quick=True, jobs=2)
    out = tmp_path / "tcp-vs-ns3"
    for filename, _ in report.figures:
        assert (out / filename).stat().st_size > 10_000, filename
    for filename, _ in report.csvs:
        assert (out / filename).is_file(), filename
    names = {c.name for c in report.checks}
    assert "Mathis ratio delack2 rtt=20ms p=0.001" in names and "goodput 20-30 s" in names
    # Every check passes. The slow-start phase's goodput is not checked in quick mode (ns-3's
    # flows wait for a 1-s RTO after a lost fast retransmission in 5 of its 10 runs: an ns-3 3.44
    # PRR defect, explained in the report and at `QUICK_UNCHECKED_PHASE`); the full mode checks it.
    assert "goodput 5-10 s" not in names
    assert report.ok, [c.name for c in report.checks if not c.passed]
    text = (out / "report.md").read_text(encoding="utf-8")
    assert "committed" in text and "per_ack_increase" in text
