"""The multipath reproduction's published scenarios (quicksim.reproduce.multipath_khalili:
draft-khalili-mptcp-performance-issues-06, Scenarios A and C; multipath_khalili_b: Scenario B)
and its congested-and-free-path
check (quicksim.reproduce.multipath_congested): the fluid model against the draft's own
analysis and against hand-solved equilibria, the scenarios' shape, and the checks' verdicts on
hand-made numbers."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from quicksim.reproduce import multipath_congested as congested
from quicksim.reproduce import multipath_khalili as khalili
from quicksim.reproduce import multipath_khalili_b as khalili_b


@pytest.mark.parametrize(
    ("which", "n1", "kind", "col"),
    [
        ("A", 10, "type2", "type2_mbps"),
        ("A", 30, "type2", "type2_mbps"),
        ("C", 10, "multipath", "type1_mbps"),
        ("C", 10, "single", "type2_mbps"),
        ("C", 30, "multipath", "type1_mbps"),
        ("C", 30, "single", "type2_mbps"),
    ],
)
def test_fluid_model_of_lia_gives_the_drafts_analysis(which: str, n1: int, kind: str, col: str) -> None:
    # The draft quotes its fluid analysis of LIA to two digits (text under Tables 1 and 3).
    got = khalili.predict(which, n1, "lia")[col]
    assert got == pytest.approx(khalili.PUBLISHED[(which, n1, kind, "lia_theory")], abs=0.006)


def test_scenario_a_type1_rate_is_the_server_share_whatever_the_algorithm() -> None:
    # Both of a type1 user's paths cross the server link (N1·C1): the model gives it C1 = 1.
    for algo in ("single", "uncoupled", "lia", "olia", "balia"):
        assert khalili.predict("A", 10, algo)["type1_mbps"] == pytest.approx(1.0, rel=1e-5)


def test_scenario_a_uncoupled_by_hand() -> None:
    # Uncoupled: with loss p_s on the server link and p_a on the AP, a type2 flow gets
    # sqrt(2/p_a)/rtt and a type1 user sqrt(2/p_s)/rtt on its own path plus
    # sqrt(2/(p_a + p_s - p_a p_s))/rtt through the AP. Both links are full at equilibrium: the
    # server carries 10 type1 users (1 Mbit/s each), the AP 10 type2 flows and the 10 type1
    # AP paths (1 Mbit/s per pair). And the fluid answer, p_s = p_a = 0.0376 (2/w² with
    # w = 7.29 packets), gives type2 0.583 Mbit/s.
    m = khalili.predict("A", 10, "uncoupled")
    assert m["type1_mbps"] == pytest.approx(1.0, rel=1e-5)
    on_ap = m["type1_on_shared"] * m["type1_mbps"]
    assert m["type2_mbps"] + on_ap == pytest.approx(1.0, rel=1e-5)
    assert m["type2_mbps"] == pytest.approx(0.583, abs=0.001)
    assert m["loss_own"] == pytest.approx(m["loss_shared"], rel=1e-4)


def test_red_queue_scales_with_the_capacity() -> None:
    q = khalili.red_queue(30e6)
    assert (q["min_th"], q["max_th"], q["max_p"], q["gentle"], q["packets"]) == (75.0, 150.0, 0.1, True, 600)


def test_khalili_scenarios_have_the_drafts_shape() -> None:
    a = khalili.scenario("A", 10, "lia")
    links = {x["name"]: x for x in a["links"]}
    assert links["server"]["rate"] == "10000000bps" and links["ap"]["rate"] == "10000000bps"
    t1 = next(f for f in a["flows"] if f["name"] == "t1_0")
    # Path 0 on the private link into the server router, path 1 through the shared AP.
    assert t1["src"] == "t1_0.own" and t1["quic"]["multipath"]["paths"] == [{"src": "t1_0.shared"}]
    assert links["t1_0_own"]["b"] == "r_srv" and links["t1_0_shared"]["b"] == "r_ap"
    assert links["ap_srv"]["a"] == "r_apo" and links["ap_srv"]["b"] == "r_srv"
    assert len(a["flows"]) == 20
    # The multipath users' windows go down to 1 segment (the draft's floor); the single-path
    # users keep QUIC's NewReno; `min_window = 2` is QUIC's own floor, the registry default.
    assert t1["quic"]["cc"] == {"algo": "lia", "min_window_segments": 1}
    t2 = next(f for f in a["flows"] if f["name"] == "t2_0")
    assert t2["quic"]["cc"] == {"algo": "newreno", "exact_increase": False}
    quic_floor = khalili.scenario("A", 10, "olia", min_window=khalili.QUIC_MIN_WINDOW)
    assert next(f for f in quic_floor["flows"] if f["name"] == "t1_0")["quic"]["cc"] == "olia"
    with pytest.raises(ValueError, match="min_window: 0"):
        khalili.scenario("A", 10, "lia", min_window=0)
    single = khalili.scenario("A", 30, "single")
    assert "multipath" not in single["flows"][0]["quic"] and len(single["flows"]) == 40
    c = khalili.scenario("C", 30, "olia")
    assert {x["name"]: x["rate"] for x in c["links"]}["ap1"] == "30000000bps"
    with pytest.raises(ValueError, match="which: 'B'"):
        khalili.scenario("B", 10, "lia")
    with pytest.raises(ValueError, match="n1: 0"):
        khalili.scenario("A", 0, "lia")


def _table(rows: list[tuple[str, int, str, float, float]]) -> pd.DataFrame:
    runs = pd.DataFrame(
        [
            {
                "scenario": w,
                "n1": n,
                "algo": a,
                "seed": 1,
                "type1_mbps": t1,
                "type2_mbps": t2,
                "type1_on_shared": math.nan if a == "single" else 0.1,
                "type1_on_shared_alive": math.nan if a == "single" else 0.1,
                "shared_pps": math.nan if a == "single" else 10.0,
                "shared_srtt_s": math.nan if a == "single" else 0.15,
                "floor": khalili.MIN_WINDOW,
                "dead_paths": 0,
            }
            for w, n, a, t1, t2 in rows
        ]
    )
    return khalili.side_by_side(runs)


def test_khalili_checks_follow_the_drafts_claims() -> None:
    good = _table(
        [
            ("A", 10, "single", 0.95, 0.95),
            ("A", 10, "lia", 0.94, 0.75),
            ("A", 10, "olia", 0.93, 0.86),
            ("C", 10, "lia", 1.2, 0.75),
            ("C", 10, "olia", 1.05, 0.85),
        ]
    )
    verdicts = {c.name: c.passed for c in khalili.checks(good)}
    assert all(verdicts.values()), verdicts
    # The draft's numbers sit beside ours with the gap in percent of the draft's.
    row = good[(good["scenario"] == "A") & (good["algo"] == "lia") & (good["users"] == "type2")].iloc[0]
    assert row["published_mbps"] == 0.70 and row["gap_pct"] == pytest.approx(100 * (0.75 / 0.70 - 1))
    bad = _table(
        [
            ("A", 10, "single", 0.95, 0.95),
            ("A", 10, "lia", 0.80, 0.75),  # type1 lost by upgrading; OLIA no better for type2
            ("A", 10, "olia", 0.93, 0.76),
            ("C", 10, "lia", 0.8, 0.79),  # multipath users not ahead; OLIA no better
            ("C", 10, "olia", 1.05, 0.80),
        ]
    )
    verdicts = {c.name: c.passed for c in khalili.checks(bad)}
    assert not verdicts["Khalili A, N1=10: type1 users gain nothing by upgrading (lia)"]
    assert verdicts["Khalili A, N1=10: type1 users gain nothing by upgrading (olia)"]
    assert not verdicts["Khalili A, N1=10: type2 users keep more with OLIA than with LIA"]
    assert not verdicts["Khalili C, N1=10: LIA's multipath users over single-path users"]
    assert not verdicts["Khalili C, N1=10: single-path users keep more with OLIA than with LIA"]


def test_congested_free_model_by_hand() -> None:
    # Uncoupled: one NewReno of four on the congested link (2.5 Mbit/s) and the whole free
    # link (10): share 2.5 / 12.5 = 0.2. OLIA (no floor): everything on the free path.
    u = congested.predict("uncoupled")
    assert u["share_congested"] == pytest.approx(0.2, rel=1e-5)
    assert u["tcp_mbps"] == pytest.approx(2.5, rel=1e-5)
    assert congested.predict("olia")["share_congested"] == pytest.approx(0.0, abs=1e-9)
    # The coupled ones in between, LIA and BALIA well below uncoupled.
    for algo in ("lia", "balia"):
        assert 0.02 < congested.predict(algo)["share_congested"] < 0.1


def test_congested_free_checks() -> None:
    def runs(shares: dict[str, float]) -> pd.DataFrame:
        return pd.DataFrame(
            [
                {
                    "algo": a,
                    "seed": 1,
                    "share_congested": s,
                    "free_mbps": 9.9,
                    "congested_mbps": 1.0,
                    "tcp_goodput_mbps": 2.5,
                    "dead_paths": 0,
                    "model_share_congested": congested.predict(a, w_min_pkts=1.0 if a == "olia" else 0.0)[
                        "share_congested"
                    ],
                    "model_congested_mbps": 0.0,
                    "model_free_mbps": 10.0,
                }
                for a, s in shares.items()
            ]
        )

    ok = {c.name: c.passed for c in congested.checks(runs({"uncoupled": 0.21, "lia": 0.09, "olia": 0.04}))}
    assert all(ok.values()), ok
    bad = {c.name: c.passed for c in congested.checks(runs({"uncoupled": 0.21, "lia": 0.2, "olia": 0.04}))}
    assert not bad["congested + free path, lia: share on the congested path (high)"]
    assert not bad["congested + free path, lia: share below 0.6x uncoupled"]
    assert bad["congested + free path, olia: share below 0.6x uncoupled"]
    with pytest.raises(ValueError, match="algo: 'cubic'"):
        congested.scenario("cubic")


@pytest.mark.core
def test_an_abandoned_path_does_not_stop_the_clock() -> None:
    """Scenario C, N1 = 30, LIA, seed 2 stopped at t = 3.976 s and ran forever: a path abandoned
    with an ACK still owed kept waking its connection at that instant. The run is stopped (not
    hung) if it makes no progress for 60 s of wall time."""
    import time

    from quicksim import api
    from quicksim.reproduce.multipath_khalili import scenario

    started = time.monotonic()
    result = api.run(
        scenario("C", 30, "lia", seed=2, duration_s=6.0),
        progress=lambda sim_s, events: time.monotonic() - started < 60,
    )
    assert result.meta["sim_end_s"] == pytest.approx(6.0)


def test_published_shared_rate_by_hand() -> None:
    # Table 4, Scenario A, N1 = 30, OLIA: the 10 type2 users keep 0.75 of the 0.98 Mbit/s they
    # get alone; the 30 type1 users sent the other 10·0.23 = 2.3 Mbit/s through the AP: 0.0767
    # Mbit/s each, in 1448 B of payload per packet, 6.62 packets a second.
    assert khalili.published_shared_pps("A", 30, "olia") == pytest.approx(10 * 0.23 / 30 * 1e6 / (8 * 1448))
    assert khalili.published_shared_pps("A", 30, "olia") == pytest.approx(6.62, abs=0.01)
    # Table 3, Scenario C, N1 = 10, LIA: (0.98 - 0.68)·10/10 = 0.3 Mbit/s: 25.9 packets a second.
    assert khalili.published_shared_pps("C", 10, "lia") == pytest.approx(25.9, abs=0.05)


def test_scenario_b_has_the_drafts_shape() -> None:
    sc = khalili_b.scenario("olia", True)
    links = {x["name"]: x for x in sc["links"]}
    assert {k: links[k]["rate"] for k in "XYZT"} == {
        "X": "27Mbps",
        "Y": "100Mbps",
        "Z": "100Mbps",
        "T": "36Mbps",
    }
    assert links["T"]["queue"]["min_th"] == pytest.approx(25 * 3.6)
    flows = {f["name"]: f for f in sc["flows"]}
    assert len(flows) == 30
    # Blue: b1 over X (path 0), b2 over Y; Red: r1 over Y (path 0), r2 over X.
    assert flows["blue_0"]["src"] == "blue_0.x" and flows["blue_0"]["quic"]["multipath"]["paths"] == [
        {"src": "blue_0.y"}
    ]
    assert flows["red_0"]["src"] == "red_0.y" and flows["red_0"]["quic"]["multipath"]["paths"] == [
        {"src": "red_0.x"}
    ]
    assert flows["red_0"]["quic"]["cc"] == {"algo": "olia", "min_window_segments": 1}
    single = {f["name"]: f for f in khalili_b.scenario("lia", False, min_window=2)["flows"]}
    assert "multipath" not in single["red_0"]["quic"] and single["red_0"]["quic"]["cc"]["algo"] == "newreno"
    assert single["blue_0"]["quic"]["cc"] == "lia"
    with pytest.raises(ValueError, match="algo: 'newreno'"):
        khalili_b.scenario("newreno", True)


def test_scenario_b_model_gives_the_drafts_analysis() -> None:
    # The draft (text under Table 2): upgrading the Red users costs the Blue users 21 % and the
    # aggregate 14 % with LIA; the optimum (OLIA without a floor) gives everyone 63/30 = 2.1.
    before, after = khalili_b.predict("lia", False), khalili_b.predict("lia", True)
    assert 1 - after["blue_mbps"] / before["blue_mbps"] == pytest.approx(0.21, abs=0.02)
    total = [b["blue_mbps"] + b["red_mbps"] for b in (before, after)]
    assert 1 - total[1] / total[0] == pytest.approx(0.14, abs=0.02)
    for multi in (False, True):
        m = khalili_b.predict("olia", multi)
        assert (m["red_mbps"], m["blue_mbps"]) == (pytest.approx(2.1, rel=1e-4), pytest.approx(2.1, rel=1e-4))


def test_scenario_b_checks() -> None:
    def runs(red: dict[tuple[str, bool], float], blue: dict[tuple[str, bool], float]) -> pd.DataFrame:
        rows = [
            {
                "algo": a,
                "red_multipath": m,
                "floor": 1,
                "seed": 1,
                "red_mbps": red[(a, m)],
                "blue_mbps": blue[(a, m)],
            }
            for (a, m) in red
        ]
        return khalili_b.side_by_side(pd.DataFrame(rows))

    keys = [(a, m) for a in ("lia", "olia") for m in (False, True)]
    good = runs(
        dict(zip(keys, (1.5, 1.4, 1.8, 1.7), strict=True)), dict(zip(keys, (2.5, 2.0, 2.2, 2.2), strict=True))
    )
    verdicts = {c.name: c.passed for c in khalili_b.checks(good)}
    assert all(verdicts.values()), verdicts
    # Red users gaining by the upgrade, the aggregate not falling with LIA, OLIA worse than LIA.
    bad = runs(
        dict(zip(keys, (1.5, 1.8, 1.8, 1.2), strict=True)), dict(zip(keys, (2.5, 2.4, 2.2, 2.2), strict=True))
    )
    verdicts = {c.name: c.passed for c in khalili_b.checks(bad)}
    assert not verdicts["Khalili B: LIA, upgrading gives the Red users nothing"]
    assert not verdicts["Khalili B: LIA, upgrading the Red users costs the aggregate"]
    assert not verdicts["Khalili B: the aggregate falls less with OLIA than with LIA"]
    assert verdicts["Khalili B: fluid model of LIA, Blue users' loss"]
