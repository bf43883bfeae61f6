"""What a run writes about the paths of a multipath QUIC connection (docs/multipath.md): the
per-path rows of `flows` and `conn` (summing to the connection's, nothing on a path after its
abandon, no `path` column in single-path runs), and path schedulers written in Python
(`quicksim.schedulers`): minRTT re-written in Python runs bit for bit as the built-in one, and bad
names or returns fail with one line.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import pandas as pd
import pytest

import quicksim
from quicksim import schedulers
from quicksim._core import PathInfo

pytestmark = pytest.mark.core


def two_paths(secs: float = 3.0, **multipath: Any) -> dict[str, Any]:
    """A client with interfaces wifi (10 ms) and lte (25 ms), each on its own 10 Mbit/s access
    link and router, both routers on the server's: one bulk QUIC flow over both."""
    mp = {"paths": [{"src": "client.lte"}], **multipath}
    q = {"packets": 50}
    return {
        "run": {"duration": f"{secs}s", "record_interval": "100ms"},
        "nodes": {
            "client": {"kind": "host", "interfaces": ["wifi", "lte"]},
            "server": {"kind": "host"},
            "r1": {"kind": "router"},
            "r2": {"kind": "router"},
            "rs": {"kind": "router"},
        },
        "links": [
            {"name": "wifi", "a": "client.wifi", "b": "r1", "rate": "10Mbps", "delay": "10ms", "queue": q},
            {"name": "lte", "a": "client.lte", "b": "r2", "rate": "10Mbps", "delay": "25ms", "queue": q},
            {"name": "core1", "a": "r1", "b": "rs", "rate": "1Gbps"},
            {"name": "core2", "a": "r2", "b": "rs", "rate": "1Gbps"},
            {"name": "srv", "a": "rs", "b": "server", "rate": "1Gbps"},
        ],
        "flows": [{"name": "q", "kind": "quic", "src": "client", "dst": "server", "quic": {"multipath": mp}}],
    }


class LowRtt(schedulers.Scheduler):
    """The built-in "minrtt" in Python: the usable non-backup paths (the backup ones when none
    is), lowest smoothed RTT first, ties by id."""

    def order(self, paths: Sequence[PathInfo]) -> list[int]:
        usable = [p for p in paths if p.usable and not p.backup]
        usable = usable or [p for p in paths if p.usable]
        return [p.path_id for p in sorted(usable, key=lambda p: (p.srtt_ps, p.path_id))]


class OutOfRange(schedulers.Scheduler):
    def order(self, paths: Sequence[PathInfo]) -> list[int]:
        return [7]


class Raises(schedulers.Scheduler):
    def order(self, paths: Sequence[PathInfo]) -> list[int]:
        raise RuntimeError("no idea")


def test_per_path_rows_sum_to_the_connection() -> None:
    r = quicksim.run(two_paths())
    f = r.flows
    assert "path" in f.columns and set(f["path"]) == {-1, 0, 1}
    whole = f[f["path"] == -1].reset_index(drop=True)
    for col in ("wire_sent_bytes", "sent_packets", "wire_recv_bytes", "recv_packets"):
        paths = f[f["path"] >= 0].groupby("t_s")[col].sum().reset_index(drop=True)
        assert (paths.to_numpy() == whole[col].to_numpy()).all(), col
        share = f[f["path"] == 1][col].sum() / whole[col].sum()
        assert 0.2 < share < 0.8, (col, share)
    # Per-flow figures read the connection's rows: one row per bin, the goodput counted once.
    tp = r.throughput("q")
    assert len(tp) == len(whole)
    window = whole[(whole["t_s"] >= 1.0) & (whole["t_s"] < 3.0)]
    for layer, col in (("delivered", "delivered_bytes"), ("wire", "wire_sent_bytes")):
        got = r.mean_throughput("q", 1.0, 3.0, layer=layer)  # type: ignore[arg-type]
        assert got == pytest.approx(window[col].sum() * 8 / 2.0), layer
    # conn: each path's own RTT: its minimum is the path's 20 or 50 ms of propagation plus a
    # packet's serialization (1 ms at 10 Mbit/s) and the ACK's way back.
    c = r.conn
    last = c[c["path"] >= 0].groupby("path")["min_rtt_s"].last()
    assert 0.02 < last[0] < 0.025 and 0.05 < last[1] < 0.055, last


def test_single_path_tables_have_no_path_column() -> None:
    sc = two_paths(1.0)
    sc["flows"][0]["quic"] = {}
    r = quicksim.run(sc)
    assert "path" not in r.flows.columns and "path" not in r.conn.columns


def test_a_path_carries_nothing_after_its_abandon() -> None:
    sc = two_paths(6.0)
    sc["links"][0]["down"] = [{"from": "2s", "to": "6s"}]
    r = quicksim.run(sc)
    abandoned = r.totals["flows"]["q"]["quic"]["paths"][0]["abandoned_s"]
    assert 2.0 < abandoned < 3.0
    f = r.flows
    p0, p1 = f[f["path"] == 0], f[f["path"] == 1]
    assert p0[p0["t_s"] < 2.0]["sent_packets"].sum() > 500
    assert p0[p0["t_s"] >= abandoned]["sent_packets"].sum() == 0
    assert p1[p1["t_s"] >= abandoned]["sent_packets"].sum() > 1000


def _same(a: quicksim.Result, b: quicksim.Result) -> None:
    assert a.meta["trace_hash"] == b.meta["trace_hash"]
    assert a.meta["events"] == b.meta["events"]
    for table in ("flows", "conn", "links"):
        pd.testing.assert_frame_equal(getattr(a, table), getattr(b, table))
    assert a.totals == b.totals


def test_minrtt_in_python_is_the_built_in_bit_for_bit() -> None:
    a = quicksim.run(two_paths())
    b = quicksim.run(two_paths(scheduler="py:test_multipath_outputs:LowRtt"), allow_python=True)
    _same(a, b)
    # Not vacuous: both paths carried data, so the order mattered.
    paths = a.totals["flows"]["q"]["quic"]["paths"]
    assert min(p["stream_bytes_sent"] for p in paths) > 500_000
    schedulers.register("lowrtt", LowRtt)
    try:
        _same(a, quicksim.run(two_paths(scheduler="lowrtt")))
    finally:
        schedulers.unregister("lowrtt")


def test_bad_scheduler_names_and_returns_fail_with_one_line() -> None:
    field = re.escape("flows[0].quic.multipath.scheduler")
    mod = "py:test_multipath_outputs"
    bad = quicksim.ScenarioError
    with pytest.raises(bad, match=rf"^{field}: \"fastest\" is not a path scheduler; use one of") as info:
        quicksim.run(two_paths(scheduler="fastest"))
    assert "\n" not in str(info.value)
    with pytest.raises(bad, match=rf"^{field}: '{mod}:LowRtt' is Python code"):
        quicksim.run(two_paths(scheduler=f"{mod}:LowRtt"))
    with pytest.raises(bad, match=rf"^{field}: .*has no Nope"):
        quicksim.run(two_paths(scheduler=f"{mod}:Nope"), allow_python=True)
    with pytest.raises(bad, match=rf"^{field}: .*is not a subclass of quicksim.schedulers"):
        quicksim.run(two_paths(scheduler=f"{mod}:two_paths"), allow_python=True)
    failed = quicksim.ControllerError
    with pytest.raises(failed, match=r"order: returned 7 among the path ids, which are 0 to 1"):
        quicksim.run(two_paths(scheduler=f"{mod}:OutOfRange"), allow_python=True)
    with pytest.raises(failed, match=r"Raises.*order: RuntimeError: no idea") as err:
        quicksim.run(two_paths(scheduler=f"{mod}:Raises"), allow_python=True)
    assert isinstance(err.value.__cause__, RuntimeError)
    with pytest.raises(ValueError, match="built-in path scheduler"):
        schedulers.register("minrtt", LowRtt)


def test_validation_does_not_import_a_scheduler() -> None:
    # Without allow_python the module is not imported: validation checks everything else.
    out = quicksim.validate(two_paths(scheduler="py:no_such_module_anywhere:X"))
    assert "py:no_such_module_anywhere:X" in str(out)
