"""The network fluid model (quicksim.reproduce.multipath_network) and the paper-situation
scenarios (quicksim.reproduce.multipath_papers) against hand-solved equilibria.

The papers' own theoretical values (Khalili et al.'s "optimum" and "optimum with probing
cost" curves, Wischik et al.'s figures) could not be read (docs/multipath-coupled.md, "The
published scenarios"); so every expected value here is solved by hand from the model's
definitions, in the comments, and none is a paper's. The tolerances are the solver's: it stops
when every full link is within `tol` = 1e-6 of its capacity, and rates follow loads one to
one, so rel=1e-5 leaves a margin of ten.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from quicksim.reproduce.multipath_network import Link, UserClass, solve
from quicksim.reproduce.multipath_papers import (
    SharedSetup,
    UpgradeSetup,
    shared_prediction,
    shared_scenario,
    upgrade_prediction,
    upgrade_scenario,
    upgrade_uncoupled_stand_in,
)

RTT = 0.1
REL = 1e-5


def p1(algo: str, c1: float, c2: float, n1: int = 10, n2: int = 10, **kw: float):
    """Type-1 TCP users on link X (n1*c1 pkt/s); type-2 users on their own link Y (n2*c2) and,
    running `algo` over two paths, on X as well."""
    links = [Link("X", n1 * c1), Link("Y", n2 * c2)]
    classes = [
        UserClass("type1", n1, "uncoupled", (("X",),), (RTT,)),
        UserClass("type2", n2, algo, (("Y",), ("X",)), (RTT, RTT)),
    ]
    return solve(links, classes, **kw)


def test_one_tcp_per_link_fills_it_at_mathis_loss() -> None:
    # Before any upgrade: 10 TCP users alone on a 1000 pkt/s link get 100 pkt/s each, a
    # window of 10 packets at RTT 0.1 s, so p = 2/10^2 = 0.02.
    e = solve([Link("X", 1000.0)], [UserClass("t", 10, "uncoupled", (("X",),), (RTT,))])
    assert e.user_rate("t") == pytest.approx(100.0, rel=REL)
    assert e.losses["X"] == pytest.approx(0.02, rel=2 * REL)


@pytest.mark.parametrize(
    ("algo", "mp_share"), [("uncoupled", 2 / 3), ("lia", 1 / 2), ("olia", 1 / 2), ("balia", 1 / 2)]
)
def test_shared_bottleneck_shares(algo: str, mp_share: float) -> None:
    # One TCP user and one two-path user, both paths through one 300 pkt/s link: a coupled
    # user takes one TCP share (150 each), an uncoupled one two (200 vs 100). RFC 6356 goals
    # 1-2 at N = M = 1.
    links = [Link("b", 300.0)]
    classes = [
        UserClass("tcp", 1, "uncoupled", (("b",),), (RTT,)),
        UserClass("mp", 1, algo, (("b",), ("b",)), (RTT, RTT)),
    ]
    e = solve(links, classes)
    assert e.user_rate("mp") == pytest.approx(300 * mp_share, rel=REL)
    assert e.user_rate("tcp") == pytest.approx(300 * (1 - mp_share), rel=REL)


def test_upgrade_uncoupled_takes_a_tcp_share_on_the_shared_link() -> None:
    # Uncoupled, a type-2 user's path on X is one more TCP there: X's 1000 pkt/s split over 20
    # equal TCPs, 50 each; Y unchanged (200 per type-2 user).
    e = p1("uncoupled", 100.0, 200.0)
    assert e.user_rate("type1") == pytest.approx(50.0, rel=REL)
    assert e.rates_pps["type2"] == pytest.approx((200.0, 50.0), rel=REL)


def test_upgrade_olia_harms_nobody_when_the_own_link_is_better() -> None:
    # c2 > c1: at the users' TCP rates Y is the less lossy path (p_Y = 2/20^2 = 0.005 <
    # p_X = 0.02), so OLIA (Pareto-optimal) keeps everything on Y: nothing changes.
    e = p1("olia", 100.0, 200.0)
    assert e.user_rate("type1") == pytest.approx(100.0, rel=REL)
    assert e.rates_pps["type2"][0] == pytest.approx(200.0, rel=REL)
    assert e.rates_pps["type2"][1] < 1e-6


def test_upgrade_olia_pools_when_the_shared_link_is_better() -> None:
    # c1 > c2 (200 and 100): OLIA moves type-2 traffic to X until both paths lose alike; at
    # equal RTTs every user then gets the mean (10*200 + 10*100)/20 = 150 pkt/s, type 2 with
    # 100 on Y and 50 on X, and p = 2/15^2 on both links.
    e = p1("olia", 200.0, 100.0)
    assert e.user_rate("type1") == pytest.approx(150.0, rel=REL)
    assert e.rates_pps["type2"] == pytest.approx((100.0, 50.0), rel=REL)
    assert e.losses["X"] == pytest.approx(2 / 15**2, rel=1e-4)
    assert e.losses["Y"] == pytest.approx(2 / 15**2, rel=1e-4)


@pytest.mark.parametrize(("c1", "n1", "n2"), [(100.0, 10, 10), (400.0, 5, 5), (800.0, 10, 2)])
def test_upgrade_olia_boundary_and_wide_ties(c1: float, n1: int, n2: int) -> None:
    # c2 = 100. At c1 = c2 the tie sits on the boundary: both paths lose alike at everyone's
    # TCP rate, and type 2 sends nothing on X (the solver's split must leave X geometrically,
    # not as 1/n). Wider ratios: every user gets the mean (n1*c1 + n2*100)/(n1 + n2) as long
    # as that leaves type 2 at most its own link's 100 on Y, which it fills.
    e = p1("olia", c1, 100.0, n1, n2)
    mean = (n1 * c1 + n2 * 100.0) / (n1 + n2)
    assert e.user_rate("type1") == pytest.approx(mean, rel=REL)
    assert e.user_rate("type2") == pytest.approx(mean, rel=REL)
    assert e.rates_pps["type2"][0] == pytest.approx(100.0, rel=REL)


def test_upgrade_olia_with_a_probing_floor() -> None:
    # Every path keeps one packet per RTT (w_min = 1, 10 pkt/s at 0.1 s): type 2 sends 10 on
    # X, so type 1 gets (1000 - 10*10)/10 = 90; OLIA's total is TCP's on the best path, Y
    # full at 200 plus the 10 probing X: 210 (p_Y = 2/21^2).
    e = p1("olia", 100.0, 200.0, w_min_pkts=1.0)
    assert e.user_rate("type1") == pytest.approx(90.0, rel=REL)
    assert e.rates_pps["type2"] == pytest.approx((200.0, 10.0), rel=REL)
    assert e.losses["Y"] == pytest.approx(2 / 21**2, rel=1e-4)


def _lia_p1_hand(u: float, v: float) -> tuple[float, float]:
    """LIA in p1 with n1 = n2, equal RTTs, windows u = c1*RTT and v = c2*RTT (v > u), solved
    from the model's equations: LIA's coupled term binds on both paths, so p_r*w_r is the
    same on both (w proportional to 1/p) and the total is TCP's on the better path Y,
    s = sqrt(2/p_Y). With t = sqrt(2/p_X) the type-1 window: w_Y = s*p_X/(p_X+p_Y) =
    s^3/(s^2+t^2) must be v (Y full), so t^2 = s^3/v - s^2; and X full needs
    t + s*t^2/(s^2+t^2) = u, i.e. t + v*t^2/s^2 = u, i.e. t + (s - v) = u. The left side
    grows with s: bisection on s in (v, v + u). Returns (t, s): type-1 window, type-2 total."""
    lo, hi = v, v + u
    for _ in range(200):
        s = (lo + hi) / 2
        t = math.sqrt(s**3 / v - s**2)
        if t + (s - v) > u:
            hi = s
        else:
            lo = s
    s = (lo + hi) / 2
    return math.sqrt(s**3 / v - s**2), s


def test_upgrade_lia_reduces_type1_as_the_hand_solution_says() -> None:
    # c1 = 100, c2 = 200 pkt/s at 0.1 s: u = 10, v = 20 packets.
    t, s = _lia_p1_hand(10.0, 20.0)
    e = p1("lia", 100.0, 200.0)
    assert e.user_rate("type1") == pytest.approx(t / RTT, rel=REL)
    assert e.user_rate("type2") == pytest.approx(s / RTT, rel=REL)
    assert e.rates_pps["type2"][0] == pytest.approx(200.0, rel=REL)
    # Khalili et al.'s P1 in the model: type 1 loses what type 2's path on X takes.
    assert t / 10.0 == pytest.approx(0.7654, abs=1e-4)


def test_normalized_throughputs_do_not_depend_on_the_scale() -> None:
    # Every equation of the model is homogeneous in the windows (TCP's sqrt(2/p), LIA's and
    # BALIA's balances, OLIA's best path): without a window floor, scaling c1 and c2 (or the
    # RTT) together leaves c-normalized throughputs unchanged.
    for algo in ("lia", "balia", "olia"):
        a = upgrade_prediction(UpgradeSetup(c1_bps=2e6, c2_bps=4e6), algo)
        b = upgrade_prediction(UpgradeSetup(c1_bps=20e6, c2_bps=40e6, rtt_s=0.03), algo)
        assert a["norm_type1"] == pytest.approx(b["norm_type1"], rel=1e-4)
        assert a["norm_type2"] == pytest.approx(b["norm_type2"], rel=1e-4)


def test_upgrade_prediction_before_and_after() -> None:
    s = UpgradeSetup()  # c1 = 2, c2 = 4 Mbit/s
    before = upgrade_prediction(s, "lia", upgraded=False)
    assert before["norm_type1"] == pytest.approx(1.0, rel=REL)
    assert before["norm_type2"] == pytest.approx(1.0, rel=REL)
    lia = upgrade_prediction(s, "lia")
    t, sv = _lia_p1_hand(10.0, 20.0)  # c2/c1 = 2 as in the hand solution; the scale cancels
    assert lia["norm_type1"] == pytest.approx(t / 10.0, rel=REL)
    assert lia["norm_type2"] == pytest.approx(sv / 20.0, rel=REL)
    olia = upgrade_prediction(s, "olia")
    assert olia["norm_type1"] == pytest.approx(1.0, rel=REL)
    assert olia["type2_on_ap1"] < 1e-6


def test_shared_prediction_ratio() -> None:
    for algo, want in (("uncoupled", 2.0), ("lia", 1.0), ("olia", 1.0), ("balia", 1.0)):
        assert shared_prediction(SharedSetup(), algo)["ratio"] == pytest.approx(want, rel=REL)


def test_upgrade_scenario_shape() -> None:
    s = UpgradeSetup(n1=2, n2=3)
    sc = upgrade_scenario(s, "olia")
    flows = {f["name"]: f for f in sc["flows"]}
    assert sorted(flows) == ["t1_0", "t1_1", "t2_0", "t2_1", "t2_2"]
    assert flows["t2_1"]["src"] == "t2_1.own"
    assert flows["t2_1"]["quic"] == {"cc": "olia", "multipath": {"paths": [{"src": "t2_1.shared"}]}}
    assert flows["t1_0"]["quic"]["cc"] == {"algo": "newreno", "exact_increase": False}
    assert sc["nodes"]["t2_0"]["interfaces"] == ["own", "shared"]
    links = {link["name"]: link for link in sc["links"]}
    # Uplinks: n*c, queue one BDP in 1280 B packets (4 Mbit/s * 0.1 s / 10240 bit = 39.06).
    assert links["ap1"]["rate"] == "4000000bps"
    assert links["ap2"]["rate"] == "12000000bps"
    assert links["ap1"]["queue"] == {"packets": 39}
    # Every path: access + uplink, a quarter of the RTT each, each way: 4 * 25 ms = 0.1 s.
    assert links["t2_0_ap1"]["delay"] == links["ap1"]["delay"] == "25ms"
    assert sc["flows"][0]["quic"]["cc"] == {"algo": "newreno", "exact_increase": False}
    assert sc["flows"][0]["start"] == {"dist": "uniform", "min": "0s", "max": "100ms"}
    assert "start" not in upgrade_scenario(UpgradeSetup(start_spread_s=0.0), "lia")["flows"][0]
    with pytest.raises(ValueError, match=r"algo: 'reno' is not one of"):
        upgrade_scenario(s, "reno")
    with pytest.raises(ValueError, match=r"c1_bps: 0.0 is not positive"):
        upgrade_scenario(UpgradeSetup(c1_bps=0.0), "lia")


def test_shared_scenario_shape() -> None:
    sc = shared_scenario(SharedSetup(n_tcp=1, n_mp=2), "lia")
    flows = {f["name"]: f for f in sc["flows"]}
    assert flows["mp_1"]["src"] == "mp_1.wifi"
    assert flows["mp_1"]["quic"]["multipath"] == {"paths": [{"src": "mp_1.lte"}]}
    assert [link["name"] for link in sc["links"]].count("bottleneck") == 1


def test_network_input_errors_name_the_field() -> None:
    tcp = UserClass("t", 1, "uncoupled", (("X",),), (RTT,))
    with pytest.raises(ValueError, match=r"classes\[0\]\.paths\[0\]: 'X' is not a link"):
        solve([Link("Y", 1.0)], [tcp])
    with pytest.raises(ValueError, match=r"links\[1\]\.name: 'X' is listed twice"):
        solve([Link("X", 1.0), Link("X", 2.0)], [tcp])
    with pytest.raises(ValueError, match=r"classes\[0\]\.algo: 'cubic' is not one of"):
        solve([Link("X", 1.0)], [UserClass("t", 1, "cubic", (("X",),), (RTT,))])
    with pytest.raises(ValueError, match=r"classes\[0\]: 2 paths and 1 RTTs"):
        solve([Link("X", 1.0)], [UserClass("t", 1, "lia", (("X",), ("X",)), (RTT,))])


def test_single_path_variant_runs_on_main_and_fills_both_links() -> None:
    # Not upgraded, the scenario needs no multipath syntax: run it. Each type's TCP users fill
    # their uplink (the model's c1 and c2 each); measured from 10 s (after slow start) to 30 s
    # the goodput sums stay above 90 % of n*c: QUIC and UDP/IP headers take about 4 % of a
    # 1280 B packet and a one-BDP drop-tail queue keeps the link busy through NewReno's halving.
    quicksim = pytest.importorskip("quicksim")
    s = UpgradeSetup(n1=2, n2=2, duration_s=30.0)
    r = quicksim.run(upgrade_scenario(s, "lia", upgraded=False))
    t1 = sum(r.mean_throughput(f"t1_{i}", 10.0, 30.0) for i in range(2))
    t2 = sum(r.mean_throughput(f"t2_{i}", 10.0, 30.0) for i in range(2))
    assert 0.90 * 2 * s.c1_bps < t1 <= 2 * s.c1_bps
    assert 0.90 * 2 * s.c2_bps < t2 <= 2 * s.c2_bps


def test_uncoupled_upgrade_measured_beside_the_model() -> None:
    # The P1 comparison's uncoupled column, measured on main: an uncoupled two-path user is two
    # independent NewReno connections (upgrade_uncoupled_stand_in). Normalized by the same
    # scenario and seed before the upgrade (every user alone on its access point's share: c1 or
    # c2 of goodput, headers included), the model says type 1 keeps 0.5 and type 2 gets 1.25
    # (n1 = n2, c2 = 2*c1). Flows start at uniform times in the first RTT, so seeds differ.
    # When this was written, seeds 1-5 at c1/c2 = 1/4, 1/2, 1 and 2 gave means within 4.6 % of
    # the model and single seeds within 11 % (c1 = c2 the widest: four equal-RTT NewReno flows
    # through one drop-tail queue share it unevenly over 50 s); here at 1/2 seeds 1-3 gave
    # 0.506-0.518 and 1.241-1.247. The band on the mean of three seeds is 5 %.
    quicksim = pytest.importorskip("quicksim")
    s = UpgradeSetup(n1=2, n2=2, duration_s=60.0)

    def per_user(r: Any, flows: list[str]) -> float:
        return sum(r.mean_throughput(f, 10.0, 60.0) for f in flows) / 2

    t1 = [f"t1_{i}" for i in range(2)]
    t2 = [f"t2_{i}" for i in range(2)]
    norm1, norm2 = [], []
    for seed in (1, 2, 3):
        before = quicksim.run(upgrade_scenario(s, "uncoupled", upgraded=False), seed=seed)
        after = quicksim.run(upgrade_uncoupled_stand_in(s), seed=seed)
        norm1.append(per_user(after, t1) / per_user(before, t1))
        norm2.append(per_user(after, t2 + [f"t2_{i}_ap1" for i in range(2)]) / per_user(before, t2))
    want = upgrade_prediction(s, "uncoupled")
    assert sum(norm1) / 3 == pytest.approx(want["norm_type1"], rel=0.05)
    assert sum(norm2) / 3 == pytest.approx(want["norm_type2"], rel=0.05)
