"""The model against theory (issue: QUIC model validations). Each check states its tolerance in
quicksim/validation.py, next to the measurement it describes; here they must all pass."""

from __future__ import annotations

import pytest

from quicksim import validation as v

pytestmark = pytest.mark.core


def _assert_all(checks: list[v.Check]) -> None:
    assert checks
    failed = [c for c in checks if not c.passed]
    assert not failed, "\n" + v.format_checks(failed)


@pytest.mark.parametrize("mtu", [1280, 1452, 1500, 9000])
def test_link_bandwidth(mtu: int) -> None:
    # 0.5 %: (MTU-28)/(MTU+7) x 100 Mbit/s at the QUIC layer.
    _assert_all(v.link_bandwidth(mtu))


# The lowest loss rate runs longest (3-4 s a point): in the full tier only.
@pytest.mark.parametrize("p", [0.001, 0.0002, pytest.param(0.00005, marks=pytest.mark.slow)])
@pytest.mark.parametrize("rtt_ms", [2, 30, 100])
def test_mathis(rtt_ms: int, p: float) -> None:
    # 5 %: MSS/RTT x sqrt(3/(2p)) over whole loss cycles.
    _assert_all(v.mathis(rtt_ms, p))


@pytest.mark.slow
@pytest.mark.parametrize("rtt_ms", list(range(4, 100, 8)))
def test_mathis_rtt_sweep(rtt_ms: int) -> None:
    for p in (0.001, 0.0002, 0.00005):
        _assert_all(v.mathis(rtt_ms, p))


@pytest.mark.parametrize("credit_kb", [65, 100, 140])
@pytest.mark.parametrize("rtt_ms", [2, 10, 20, 100])
def test_flow_control(credit_kb: int, rtt_ms: int) -> None:
    # 2 %: credit / RTT with congestion control off.
    _assert_all(v.flow_control(credit_kb, rtt_ms))


def test_buffer_sizing() -> None:
    _assert_all(v.buffer_sizing())


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_linksharing(seed: int) -> None:
    _assert_all(v.linksharing(seed))


def test_a_failing_check_is_reported() -> None:
    c = v.Check("x", 1.1, 1.0, 0.05, "Mbit/s")
    assert not c.passed and abs(c.error - 0.1) < 1e-12
    assert v.Check("y", 0.9, 0.95, 0, "", kind="min").passed is False
    assert v.Check("z", float("nan"), 1.0, 0.5, "").passed is False


@pytest.mark.parametrize("mtu", [1280, 1452, 1500, 9000])
def test_tcp_link_bandwidth(mtu: int) -> None:
    # 0.5 %: TCP goodput = 100 Mbit/s x (MTU-52)/(MTU+7) at every MTU of paper-fig3.
    _assert_all(v.tcp_link_bandwidth(mtu))


@pytest.mark.parametrize("ack_every", [1, 2])
@pytest.mark.parametrize("p", [0.001, 0.0002, 0.00005])
@pytest.mark.parametrize("rtt_ms", [2, 30, 100])
def test_tcp_mathis(rtt_ms: int, p: float, ack_every: int) -> None:
    # 5 %: Mathis with C = sqrt(3/2) and fast recovery's round trip, with and without delayed ACKs.
    _assert_all(v.mathis_tcp(rtt_ms, p, ack_every))


@pytest.mark.slow
@pytest.mark.parametrize("rtt_ms", list(range(4, 100, 8)))
def test_tcp_mathis_rtt_sweep(rtt_ms: int) -> None:
    for ack_every in (1, 2):
        for p in (0.001, 0.0002, 0.00005):
            _assert_all(v.mathis_tcp(rtt_ms, p, ack_every))
