"""`Result` from a hand-made core output: tables, throughput, summary, save/load, hash."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from quicksim.results import SCHEMA, Result, binned_rate, winavg


def test_tables_are_typed_dataframes(result: Result) -> None:
    flows = result.flows
    assert list(flows.columns) == list(SCHEMA["flows"])
    assert isinstance(flows["flow"].dtype, pd.CategoricalDtype)
    assert flows["delivered_bytes"].dtype == np.int64
    assert flows["t_s"].dtype == np.float64
    assert len(result.queues) == 5 and len(result.drops) == 3 and len(result.conn) == 5


def test_empty_and_missing_tables_have_schema_columns(raw_result: dict[str, Any]) -> None:
    del raw_result["tables"]["conn"]
    r = Result(raw_result)
    assert r.packets.empty and list(r.packets.columns) == list(SCHEMA["packets"])
    assert r.conn.empty and list(r.conn.columns) == list(SCHEMA["conn"])


def test_extra_columns_and_tables_are_kept(raw_result: dict[str, Any]) -> None:
    raw_result["tables"]["flows"]["note"] = ["x"] * 10
    raw_result["tables"]["custom"] = {"t_s": [0.0, 1.0], "v": [1, 2]}
    r = Result(raw_result)
    assert list(r.flows.columns)[-1] == "note"
    assert r.table("custom")["v"].tolist() == [1, 2]
    with pytest.raises(KeyError, match="no table 'nope'"):
        r.table("nope")


def test_ragged_table_is_rejected(raw_result: dict[str, Any]) -> None:
    raw_result["tables"]["queues"]["bytes"].pop()
    with pytest.raises(ValueError, match="different lengths"):
        Result(raw_result).queues  # noqa: B018 - the property does the work


def test_flow_names_follow_the_scenario(result: Result) -> None:
    assert result.flow_names == ["sender1", "bg"]


# --- throughput -------------------------------------------------------------------------------


def test_throughput_per_bin_fills_idle_bins_with_zero(result: Result) -> None:
    tp = result.throughput("sender1")
    assert tp["t_s"].tolist() == [0.0, 0.5, 1.0, 1.5, 2.0, 2.5]
    assert tp["mbps"].tolist() == pytest.approx([0, 1, 2, 2, 1, 0])
    assert set(tp["flow"].astype(str)) == {"sender1"}


def test_throughput_layers(result: Result) -> None:
    wire = result.throughput("sender1", layer="wire")
    assert wire["mbps"].tolist() == pytest.approx([0, 1.12, 2.08, 2.08, 1.04, 0])
    app = result.throughput("bg", layer="app")
    assert app["mbps"].tolist() == pytest.approx([0.1] * 6)
    with pytest.raises(ValueError, match="layer must be"):
        result.throughput(layer="ip")  # type: ignore[arg-type]


def test_throughput_all_flows_in_scenario_order(result: Result) -> None:
    tp = result.throughput()
    assert list(tp["flow"].cat.categories) == ["sender1", "bg"]
    assert len(tp) == 12


def test_throughput_rebinned(result: Result) -> None:
    tp = result.throughput("sender1", interval=1.0)
    assert tp["t_s"].tolist() == [0.0, 1.0, 2.0]
    assert tp["mbps"].tolist() == pytest.approx([0.5, 2.0, 0.5])
    with pytest.raises(ValueError, match="not a multiple"):
        result.throughput(interval=0.75)


def test_throughput_last_partial_bin_uses_its_true_width(raw_result: dict[str, Any]) -> None:
    raw_result["meta"]["sim_end_s"] = 2.75  # stopped early inside the 2.5 s bin
    tp = Result(raw_result).throughput("bg")
    assert tp["mbps"].tolist() == pytest.approx([0.1] * 5 + [0.2])


def test_throughput_unknown_flow(result: Result) -> None:
    with pytest.raises(KeyError, match="unknown flow"):
        result.throughput("nope")


def test_mean_throughput(result: Result) -> None:
    assert result.mean_throughput("sender1") == pytest.approx(1.5e6)  # active window 0.5..2.5
    assert result.mean_throughput("sender1", 0.75, 1.25) == pytest.approx(1.5e6)
    assert result.mean_throughput("sender1", 1.0, 2.0) == pytest.approx(2e6)
    assert result.mean_throughput("bg", 0.0, 3.0, layer="wire") == pytest.approx(0.104e6)
    with pytest.raises(ValueError, match="empty window"):
        result.mean_throughput("bg", 2.0, 1.0)


def test_winavg_is_a_batched_mean() -> None:
    df = pd.DataFrame({"t_s": np.arange(5) * 0.5, "flow": ["a"] * 5, "mbps": [1.0, 3.0, 5.0, 7.0, 9.0]})
    out = winavg(df, 2)
    assert out["t_s"].tolist() == [0.0, 1.0, 2.0]
    assert out["mbps"].tolist() == [2.0, 6.0, 9.0]


def test_binned_rate_counts_and_weights(result: Result) -> None:
    counts = binned_rate(result.drops, "queue", 0.5, 3.0)
    assert counts["rate"].tolist() == [0, 4, 0, 2, 0, 0]  # 2 drops in [0.5, 1.0), 1 in [1.5, 2.0)
    bits = binned_rate(result.drops, "queue", 0.5, 3.0, weight="bytes")
    assert bits["rate"].tolist() == [0, 5000, 0, 1200, 0, 0]


# --- summary ----------------------------------------------------------------------------------


def test_summary(result: Result) -> None:
    s = result.summary()
    json.dumps(s, allow_nan=False)  # strict JSON
    assert s["scenario"] == "handmade" and s["seed"] == 7 and s["scenario_hash"] == "ab12cd34"
    assert s["version"]["core"] == "0.1.0" and s["version"]["quicksim"]
    f = s["flows"]["sender1"]
    assert f["active_s"] == pytest.approx(2.0)
    assert f["mean_delivered_bps"] == pytest.approx(1.5e6)
    assert f["quic"]["packets_lost"] == 2
    assert s["flows"]["bg"]["active_s"] == pytest.approx(3.0)
    assert s["queues"]["bottleneck:router1->router2"]["drop_fraction"] == pytest.approx(3 / 390)
    assert s["tables"]["packets"] == 0 and s["tables"]["flows"] == 10
    assert s["tables_sha256"] == result.hash()


def test_summary_falls_back_to_totals_without_time_series(raw_result: dict[str, Any]) -> None:
    for column in raw_result["tables"]["flows"].values():
        column.clear()
    s = Result(raw_result).summary()
    assert s["flows"]["sender1"]["mean_delivered_bps"] == pytest.approx(375000 * 8 / 2.0)


# --- hash -------------------------------------------------------------------------------------


def test_hash_is_stable_and_sensitive(raw_result: dict[str, Any]) -> None:
    a = Result(copy.deepcopy(raw_result)).hash()
    assert a == Result(copy.deepcopy(raw_result)).hash()
    raw_result["meta"]["wall_s"] = 99.0  # meta is not part of the hash
    assert Result(copy.deepcopy(raw_result)).hash() == a
    raw_result["tables"]["conn"]["cwnd_bytes"][3] += 1
    assert Result(raw_result).hash() != a


def test_hash_ignores_column_order(raw_result: dict[str, Any]) -> None:
    a = Result(copy.deepcopy(raw_result)).hash()
    flows = raw_result["tables"]["flows"]
    raw_result["tables"]["flows"] = dict(reversed(list(flows.items())))
    assert Result(raw_result).hash() == a


def test_hash_sees_a_moved_row(raw_result: dict[str, Any]) -> None:
    a = Result(copy.deepcopy(raw_result)).hash()
    drops = raw_result["tables"]["drops"]
    drops["flow"][0], drops["flow"][2] = drops["flow"][2], drops["flow"][0]
    assert Result(raw_result).hash() != a


# --- save / load ------------------------------------------------------------------------------


def test_save_load_round_trip(result: Result, tmp_path: Path) -> None:
    out = result.save(tmp_path / "run")
    names = sorted(p.name for p in out.iterdir())
    assert names == sorted([f"{t}.parquet" for t in SCHEMA] + ["scenario.json", "summary.json"])
    back = Result.load(out)
    assert back.hash() == result.hash()
    assert back.meta == result.meta
    assert back.totals == json.loads(json.dumps(result.totals))
    assert back.scenario == result.scenario
    assert back.name == "handmade"
    for name, frame in result.tables.items():
        pd.testing.assert_frame_equal(back.table(name), frame, check_categorical=False)
        assert list(back.table(name).columns) == list(frame.columns)
    assert back.summary() == result.summary()
    assert back.throughput().equals(result.throughput())


def test_save_overwrites_and_leaves_no_temporary_files(result: Result, tmp_path: Path) -> None:
    result.save(tmp_path)
    result.save(tmp_path)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_interrupted_save_never_leaves_half_files(
    result: Result, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result.save(tmp_path)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    calls = {"n": 0}
    import pyarrow.parquet as pq

    real = pq.write_table

    def failing(table: Any, path: Any, *args: Any, **kwargs: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 3:
            Path(path).write_bytes(b"half a file")  # the writer dies midway
            raise KeyboardInterrupt
        return real(table, path, *args, **kwargs)

    monkeypatch.setattr(pq, "write_table", failing)
    with pytest.raises(KeyboardInterrupt):
        result.save(tmp_path)
    after = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    assert "summary.json" not in after  # marks the directory as incomplete
    assert not [n for n in after if n.startswith(".")]
    for name, data in after.items():  # every file left is a whole file from one of the saves
        assert data == before[name]
    with pytest.raises(FileNotFoundError, match=r"no summary\.json"):
        Result.load(tmp_path)


def test_load_reports_missing_directory(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        Result.load(tmp_path / "nothing")
