"""The multipath fluid model (quicksim.reproduce.multipath_model) against hand-computed
equilibria of NewReno, LIA (RFC 6356), OLIA and BALIA."""

from __future__ import annotations

import math

import pytest

from quicksim.reproduce.multipath_model import (
    ALGOS,
    PathCond,
    equilibrium,
    ratio_to_tcp,
    side_by_side,
    tcp_window,
)

# p = 0.02: NewReno's fluid window sqrt(2/p) = 10 packets.
P = 0.02


def test_newreno_window_is_sqrt_two_over_p() -> None:
    assert tcp_window(P) == pytest.approx(10.0)
    assert tcp_window(0.08) == pytest.approx(5.0)


@pytest.mark.parametrize("algo", ALGOS)
def test_one_path_is_newreno(algo: str) -> None:
    # RFC 6356 goal 1 with n = 1: every algorithm is NewReno on one path.
    e = equilibrium(algo, [PathCond(P, 0.05)])
    assert e.windows_pkts == pytest.approx((10.0,))
    assert e.total_pps == pytest.approx(200.0)


@pytest.mark.parametrize(("algo", "want"), [("uncoupled", 2.0), ("lia", 1.0), ("olia", 1.0), ("balia", 1.0)])
def test_shared_bottleneck_ratio(algo: str, want: float) -> None:
    # Two paths through one bottleneck (same p, same RTT) against a NewReno flow there:
    # uncoupled takes two NewReno shares (10 packets a path); the coupled ones one share, 5
    # packets a path for the total sqrt(2/p) = 10.
    paths = [PathCond(P, 0.1), PathCond(P, 0.1)]
    assert ratio_to_tcp(algo, paths) == pytest.approx(want, rel=1e-6)
    e = equilibrium(algo, paths)
    assert e.shares == pytest.approx((0.5, 0.5))
    if algo != "uncoupled":
        assert e.windows_pkts == pytest.approx((5.0, 5.0), rel=1e-6)


def test_congested_and_free_path_shares() -> None:
    # Equal RTTs, path 1 loses p = 0.02 (free), path 2 loses 4p = 0.08 (congested).
    paths = [PathCond(P, 0.1), PathCond(4 * P, 0.1)]
    # Uncoupled: each path its own NewReno, sqrt(2/0.02) = 10 and sqrt(2/0.08) = 5 packets.
    assert equilibrium("uncoupled", paths).windows_pkts == pytest.approx((10.0, 5.0))
    assert ratio_to_tcp("uncoupled", paths) == pytest.approx(1.5)
    # LIA: the coupled term binds on both paths, so p_r*w_r = 2*alpha/w_total is the same on
    # both: w proportional to 1/p, 4:1; the total is NewReno's on the best path (10): 8 and 2.
    # (alpha = w_max/w_total = 0.8; alpha/w_total = 0.08 < 1/w_1 = 0.125: the cap is slack.)
    assert equilibrium("lia", paths).windows_pkts == pytest.approx((8.0, 2.0), rel=1e-6)
    # BALIA: path 1 (a = 1) balances w1/W^2 = p*w1/2, so W = sqrt(2/p) = 10 whatever the split;
    # path 2 (a = w1/w2 >= 1.5) balances (1+a)(4+a)/10 / W^2 = 4p*1.5/2, i.e. (1+a)(4+a) = 60,
    # a = (-5 + sqrt(249))/2 = 5.390; w1 = 10*a/(1+a) = 8.435, w2 = 1.565.
    a = (-5 + math.sqrt(249)) / 2
    assert equilibrium("balia", paths).windows_pkts == pytest.approx(
        (10 * a / (1 + a), 10 / (1 + a)), rel=1e-6
    )
    # OLIA (Pareto-optimal): everything on the best path, NewReno's 10 packets there.
    assert equilibrium("olia", paths).windows_pkts == (pytest.approx(10.0), 0.0)
    # With the transport's 2-packet floor the congested path keeps 2 packets and path 1
    # balances w1/(w1+2)^2 = p*w1/2 (alpha = 0: the best path is also the largest window):
    # w1 + 2 = 10, w1 = 8.
    assert equilibrium("olia", paths, w_min_pkts=2.0).windows_pkts == pytest.approx((8.0, 2.0), rel=1e-6)
    for algo in ("lia", "olia", "balia"):
        assert ratio_to_tcp(algo, paths) == pytest.approx(1.0, rel=1e-6)


def test_lia_matches_newreno_on_the_best_path_when_rtts_differ() -> None:
    # Same p, RTTs 20 and 50 ms: LIA's windows are equal (w proportional to 1/p) and the total
    # rate is NewReno's on the 20 ms path: w/0.02 + w/0.05 = 10/0.02, w = 500/70 = 7.1429.
    paths = [PathCond(P, 0.02), PathCond(P, 0.05)]
    w = 500 / 70
    assert equilibrium("lia", paths).windows_pkts == pytest.approx((w, w), rel=1e-6)
    assert ratio_to_tcp("lia", paths) == pytest.approx(1.0, rel=1e-6)
    # Against a NewReno flow on the 50 ms path it is 2.5 times as fast (500 vs 200 pkt/s).
    assert ratio_to_tcp("lia", paths, PathCond(P, 0.05)) == pytest.approx(2.5, rel=1e-6)


def test_side_by_side_rows() -> None:
    paths = [PathCond(P, 0.1), PathCond(P, 0.1)]
    rows = side_by_side({"newreno": 1.9, "lia": 1.1}, paths)
    assert [r["algo"] for r in rows] == ["newreno", "lia"]
    assert rows[0]["predicted"] == pytest.approx(2.0)
    assert rows[0]["gap_pct"] == pytest.approx(-5.0)
    assert rows[1]["gap_pct"] == pytest.approx(10.0, rel=1e-6)


def test_bad_input_names_the_field() -> None:
    with pytest.raises(ValueError, match=r"paths\[1\]\.loss: 1\.5 is not in \(0, 1\)"):
        equilibrium("lia", [PathCond(P, 0.1), PathCond(1.5, 0.1)])
    with pytest.raises(ValueError, match=r"paths\[0\]\.rtt_s: 0\.0 is not positive"):
        equilibrium("lia", [PathCond(P, 0.0)])
    with pytest.raises(ValueError, match=r"algo: 'cubic' is not one of"):
        equilibrium("cubic", [PathCond(P, 0.1)])
    with pytest.raises(ValueError, match="paths: empty"):
        equilibrium("olia", [])


def test_warm_start_reaches_the_same_equilibrium() -> None:
    # The congested-and-free case (hand-solved above: LIA 8 and 2 packets) started from far
    # away windows, and from a zero window (taken as TCP's, as log space cannot move a zero).
    paths = [PathCond(P, 0.1), PathCond(4 * P, 0.1)]
    for w0 in ((1.0, 30.0), (0.0, 3.0)):
        assert equilibrium("lia", paths, w0_pkts=w0).windows_pkts == pytest.approx((8.0, 2.0), rel=1e-6)
    with pytest.raises(ValueError, match=r"w0_pkts: 1 windows for 2 paths"):
        equilibrium("lia", paths, w0_pkts=(1.0,))
