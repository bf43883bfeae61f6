"""What a saved run says about itself (issue 19): Parquet files carry the seed, scenario hash and
versions; the conn table has nulls, not -1/0 stand-ins; the scenario hash is that of the
effective scenario, however its units are spelled."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq

import quicksim
from quicksim._io import PARQUET_KEY


def test_parquet_files_carry_the_runs_provenance(tmp_path: Path) -> None:
    result = quicksim.run("linksharing", seed=5, sets=["run.duration=6s"])
    result.save(tmp_path)
    for path in tmp_path.glob("*.parquet"):
        meta = json.loads(pq.read_schema(path).metadata[PARQUET_KEY])
        assert meta["seed"] == 5 and meta["table"] == path.stem
        assert meta["scenario_hash"] == result.meta["scenario_hash"]
        assert meta["trace_hash"] == result.meta["trace_hash"]
        assert meta["quicksim"] == quicksim.__version__ and meta["core"] == result.meta["version"]


def test_the_conn_table_has_nulls_where_nothing_is_known_yet(tmp_path: Path) -> None:
    result = quicksim.run("linksharing", sets=["run.duration=8s"])
    conn = result.conn
    assert str(conn["ssthresh_bytes"].dtype) == "Int64"
    assert conn["ssthresh_bytes"].isna().any() and (conn["ssthresh_bytes"].dropna() > 0).all()
    for column in ("latest_rtt_s", "min_rtt_s"):
        assert conn[column].isna().any()  # before each flow's first RTT sample
        assert conn[column].min() > 0.02  # the showcase's base RTT is 20 ms and more
    back = quicksim.load(result.save(tmp_path))
    assert str(back.conn["ssthresh_bytes"].dtype) == "Int64"
    assert back.conn["ssthresh_bytes"].isna().sum() == conn["ssthresh_bytes"].isna().sum()
    assert back.hash() == result.hash()


def test_the_scenario_hash_does_not_depend_on_how_units_are_spelled() -> None:
    a = quicksim.run("udp-bottleneck", sets=["run.duration=1s"])
    b = quicksim.run("udp-bottleneck", sets=["run.duration=1000ms"])
    c = quicksim.run("udp-bottleneck", sets=["run.duration=1.5s"])
    assert a.meta["scenario_hash"] == b.meta["scenario_hash"] != c.meta["scenario_hash"]
    assert a.meta["trace_hash"] == b.meta["trace_hash"]
