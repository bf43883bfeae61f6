"""The fluid model of CUBIC's and NewReno's window rules (`reproduce.common.cubic_fluid`) against the
closed forms it must reduce to, and the fast-convergence cycle it explains."""

from __future__ import annotations

import math
from itertools import pairwise

import pytest

from quicksim.reproduce.common.cubic_fluid import Rules, simulate
from quicksim.reproduce.cubic_rfc9438 import fluid_cubic

BARE = Rules(reno_friendly=False, fast_convergence=False, recovery_rtts=0.0)


def test_newreno_sawtooth_is_sqrt_three_halves_over_sqrt_p() -> None:
    # AIMD(1, 1/2) under a loss every 1/p packets: W/2 -> W in W/2 RTTs, 3 W^2 / 8 = 1/p packets,
    # mean 3 W / 4 = sqrt(3 / (2 p)) (the RFC's 1.2/sqrt(p) rounds sqrt(1.5) = 1.2247).
    p = 1e-4
    w = math.sqrt(8 / (3 * p))
    mean, peaks = simulate(0.1, p, "newreno", w, warmup=2, epochs=4, rules=BARE)
    assert mean == pytest.approx(math.sqrt(1.5 / p), rel=0.005)
    assert peaks[-1] == pytest.approx(w, rel=0.005)


@pytest.mark.parametrize(("rtt", "p"), [(0.1, 1e-4), (0.1, 1e-5), (0.01, 1e-6)])
def test_the_bare_cubic_curve_gives_rfc9438_avg_w_cubic(rtt: float, p: float) -> None:
    # RFC 9438 §5: losses exactly at W_max = 4 AVG / (3 + beta) keep W_max there, and the mean of
    # the concave curve from beta W_max to W_max is AVG_W_cubic.
    avg = fluid_cubic(rtt, p)
    mean, peaks = simulate(rtt, p, "cubic", 4 * avg / 3.7, warmup=2, epochs=4, rules=BARE)
    assert mean == pytest.approx(avg, rel=0.005)
    assert peaks[-1] == pytest.approx(4 * avg / 3.7, rel=0.005)


def test_fast_convergence_alternates_at_rtt_10ms_p_1e6() -> None:
    # With every rule on, at the crossover of the two regions (AVG_W_cubic 1054 vs 1.2/sqrt(p)
    # 1200) W_est passes cwnd_prior, grows at 1 segment per RTT and sets the peak; the cubic
    # curve, aimed at that peak, is still a few segments short of it when the next loss comes,
    # so fast convergence fires on every second loss.
    mean, peaks = simulate(0.01, 1e-6, "cubic", 1424, warmup=4, epochs=10)
    falls = [b < a - 1 for a, b in pairwise(peaks[4:])]
    assert all(x != y for x, y in pairwise(falls)), peaks
    assert peaks[-1] == pytest.approx(peaks[-3], abs=0.5) and peaks[-2] == pytest.approx(peaks[-4], abs=0.5)
    assert 1.03 < mean / 1200 < 1.07
