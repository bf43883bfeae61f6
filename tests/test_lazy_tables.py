"""The core's tables cross into Python without a step per row (issue 21, "end to end"): number
columns are read by numpy in place, name columns arrive dictionary-encoded, and a DataFrame is made
only when a table is asked for. These tests check that the lazy path is taken and that what it
builds is bit for bit what the row-by-row path (plain lists, as a hand-made result holds) builds.
"""

from __future__ import annotations

import gc
from typing import Any

import numpy as np
import pandas as pd
import pytest

import pins
import quicksim
from quicksim import _native
from quicksim.results import Result, _column_bytes

SHORT = ["run.duration=6s", "flows.sender2.start=1s", "flows.sender3.start=2s", "flows.sender1.start=0.5s"]
"""The showcase, shortened: every table but `packets` has rows, `drops` included."""


@pytest.fixture(scope="module")
def raw() -> dict[str, Any]:
    """What `_core.run` returns for the shortened showcase (with the packet trace of sender1)."""
    from quicksim import api

    doc = api.apply_overrides(api.load_scenario("linksharing"), [*SHORT, 'run.record.packets=["sender1"]'])
    core = _native.load_core()
    return dict(core.run(api._to_json(doc), None, None))


def _as_lists(raw: dict[str, Any]) -> dict[str, Any]:
    """The same output with every column a plain list, row by row (the path a hand-made or older
    result takes: `pd.Categorical` over the strings, `np.asarray` over the numbers)."""
    tables: dict[str, Any] = {}
    for name, columns in raw["tables"].items():
        tables[name] = {}
        for column, values in columns.items():
            if hasattr(values, "labels"):
                labels = list(values.labels)
                tables[name][column] = [labels[int(c)] for c in np.asarray(values.codes)]
            elif hasattr(values, "__array_interface__"):
                tables[name][column] = np.asarray(values).tolist()
            else:
                tables[name][column] = list(values)
    return {"meta": raw["meta"], "totals": raw["totals"], "tables": tables}


def test_the_core_hands_over_columns_without_copies(raw: dict[str, Any]) -> None:
    flows = raw["tables"]["flows"]
    t = np.asarray(flows["t_s"])
    # numpy reads the core's memory: the array's base is the core's column, read-only.
    assert t.dtype == np.float64 and t.base is flows["t_s"] and not t.flags.writeable
    assert np.asarray(flows["delivered_bytes"]).dtype == np.int64
    names = flows["flow"]
    assert len(names) == len(t) and list(names.labels)[:3] == ["sender1", "sender2", "sender3"]
    assert np.asarray(names.codes).dtype == np.uint32
    # The column outlives the dict that held it as long as an array uses it.
    copy = t.copy()
    del flows, names
    gc.collect()
    assert np.array_equal(t, copy)


def test_tables_are_built_on_first_access_only() -> None:
    r = quicksim.run("linksharing", sets=SHORT)
    assert r._frames == {}  # nothing converted by the run itself
    assert r.meta["events"] > 0 and r.totals["flows"]["sender1"]["delivered_bytes"] > 0
    flows = r.flows
    assert list(r._frames) == ["flows"] and r.flows is flows  # made once, cached
    assert flows["flow"].dtype == "category" and len(flows) > 0
    assert r.mean_throughput("sender1") > 0
    s = r.summary()  # every table now, for the hash and the row counts
    assert set(r._frames) == set(r._names) and s["tables"]["queues"] == len(r.queues) > 0


def test_lazily_built_tables_equal_the_row_by_row_ones_bit_for_bit(raw: dict[str, Any]) -> None:
    lazy, eager = Result(raw), Result(_as_lists(raw))
    assert lazy.tables.keys() == eager.tables.keys()
    for name, frame in lazy.tables.items():
        other = eager.table(name)
        pd.testing.assert_frame_equal(frame, other, check_exact=True, check_categorical=True)
        assert list(frame.dtypes) == list(other.dtypes), name
        for column in frame.columns:
            a, b = frame[column], other[column]
            if isinstance(a.dtype, pd.CategoricalDtype):
                assert list(a.cat.categories) == list(b.cat.categories), (name, column)
                assert a.cat.categories.dtype == b.cat.categories.dtype, (name, column)
                assert a.cat.codes.dtype == b.cat.codes.dtype, (name, column)
                assert np.array_equal(a.cat.codes.to_numpy(), b.cat.codes.to_numpy()), (name, column)
            elif isinstance(a.dtype, np.dtype):  # NaNs included: the same bits
                assert a.to_numpy().tobytes() == b.to_numpy().tobytes(), (name, column)
            assert _column_bytes(a) == _column_bytes(b), (name, column)
    assert len(lazy.drops) > 0 and len(lazy.packets) > 0 and lazy.conn["ssthresh_bytes"].isna().any()
    assert lazy.hash() == eager.hash()
    assert lazy.summary() == eager.summary()


def test_the_tables_hash_is_the_one_the_row_by_row_path_gave(raw: dict[str, Any]) -> None:
    # Pinned (tests/pins.json) with the code before the lazy path (81af4b3: array.array columns,
    # strings as lists, pd.Categorical and pd.factorize over the values) on this run: the
    # canonical bytes, and so every saved summary's tables_sha256, are unchanged.
    r = Result(raw)
    pins.check(
        "lazy_tables/linksharing_short", {"trace_hash": r.meta["trace_hash"], "tables_sha256": r.hash()}
    )


def _factorized(s: pd.Series) -> bytes:
    """`_column_bytes` of a string column the slow way (factorizing the values as objects)."""
    return _column_bytes(s.astype(object))


@pytest.mark.parametrize(
    "series",
    [
        pd.Series(pd.Categorical(["b", "a", "b", "c"])),
        pd.Series(pd.Categorical(["b", None, "a"], categories=["z", "b", "a", "unused"])),
        pd.Series(pd.Categorical([], categories=["a"])),
        pd.Series(pd.Categorical(["x"] * 5)),
        pd.Series(pd.Categorical(["é", "e", "E", "ä"])),
    ],
)
def test_the_hash_of_a_categorical_does_not_depend_on_its_categories(series: pd.Series) -> None:
    # From the codes (no step per row) as from the values: the hash of a run's tables equals that
    # of the same tables read back from Parquet, whatever categories those carry.
    assert _column_bytes(series) == _factorized(series)


def test_a_categorical_of_numbers_hashes_as_before() -> None:
    s = pd.Series(pd.Categorical([3, 1, 3]))
    assert _column_bytes(s) == _factorized(s)


def test_a_result_pickles_with_its_unread_tables(raw: dict[str, Any]) -> None:
    import pickle

    r = Result(raw, name="short")
    back = pickle.loads(pickle.dumps(r))
    assert back._frames == {} and back.hash() == r.hash() and back.name == "short"
    pd.testing.assert_frame_equal(back.queues, r.queues, check_exact=True)


@pytest.mark.parametrize(
    ("values", "nullable"),
    [([3, -1, 2**40], "Int64"), ([True, False], "boolean"), ([0.5, -0.0, 1e300], "Float64")],
)
def test_a_numpy_column_hashes_as_its_nullable_twin_without_nulls(values: list[Any], nullable: str) -> None:
    # The numpy path skips looking for nulls (it can hold none); the masked path looks and finds
    # none: the same bytes.
    s = pd.Series(values)
    assert isinstance(s.dtype, np.dtype) and not isinstance(s.astype(nullable).dtype, np.dtype)
    assert _column_bytes(s) == _column_bytes(s.astype(nullable))


def test_columns_outside_the_schema_keep_their_plain_types(raw: dict[str, Any]) -> None:
    # A table the schema does not know (a sink of one's own): strings stay strings, numbers keep
    # the core's type, as in the row-by-row path.
    from quicksim.results import _Strings

    flows = raw["tables"]["flows"]
    labels = list(flows["flow"].labels)
    codes = np.asarray(flows["flow"].codes)
    rows = [labels[c] for c in codes]
    core = {"who": flows["flow"], "t_s": flows["t_s"], "b": flows["delivered_bytes"]}
    plain = {
        "who": rows,
        "t_s": np.asarray(flows["t_s"]).tolist(),
        "b": np.asarray(flows["delivered_bytes"]).tolist(),
    }
    lazy = Result({"tables": {"custom": core}}).table("custom")
    pd.testing.assert_frame_equal(
        lazy, Result({"tables": {"custom": plain}}).table("custom"), check_exact=True
    )
    assert not isinstance(lazy["who"].dtype, pd.CategoricalDtype) and len(lazy) == len(rows) > 0
    # The pickled form of a name column reads the same.
    back = Result({"tables": {"custom": {"who": _Strings(codes, labels)}}}).table("custom")
    assert back["who"].tolist() == rows


def test_conn_stand_ins_become_the_nulls_astype_and_mask_made(raw: dict[str, Any]) -> None:
    # The nulls are made with numpy now; pandas' own route (what the code did before) must agree.
    conn = Result(raw).conn
    core = raw["tables"]["conn"]
    ssthresh = pd.Series(np.asarray(core["ssthresh_bytes"]))
    expected = ssthresh.astype("Int64").mask(ssthresh == -1)
    pd.testing.assert_series_equal(conn["ssthresh_bytes"], expected, check_names=False, check_exact=True)
    for column in ("latest_rtt_s", "min_rtt_s"):
        values = pd.Series(np.asarray(core[column]))
        pd.testing.assert_series_equal(
            conn[column], values.mask(values == 0.0), check_names=False, check_exact=True
        )
    assert conn["ssthresh_bytes"].isna().any() and conn["min_rtt_s"].isna().any()
