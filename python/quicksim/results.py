"""The outcome of one run as tidy pandas tables, with throughput helpers and Parquet files.

A `Result` wraps what `_core.run` returns (`meta`, `tables`, `totals`) plus the normalized
scenario. Tables become DataFrames on first access, with the column types of `SCHEMA`; until
then the core's columns are kept as it handed them over (numbers numpy reads in place, names
dictionary-encoded), so a run costs no pandas work for a table nobody reads.
`save(dir)` writes one Parquet file per table, `scenario.json` and `summary.json`; each file is
written to a temporary name and renamed, and `summary.json` is written last, so a directory with
a `summary.json` always holds a complete result.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from . import _io, _native, _rows
from ._folder import check_one_run
from ._io import atomic_write, atomic_write_text, dumps_readable, file_name, parquet_writer

__all__ = ["SCHEMA", "TABLES", "Layer", "Result", "binned_rate", "winavg"]

FILE_TABLES = frozenset({"qlog"})
"""Tables that hold files (columns `file`, `text`: one file per row), written as those files
instead of Parquet: the qlog files of `run.record.qlog`."""

Layer = Literal["delivered", "wire", "app"]
"""Where bytes are counted: delivered to the receiving app, put on the wire (IP), or handed
down by the sending app."""

# The core's column types as pandas dtypes: its strings are a few names (flows, queues, links)
# repeated on every row, so a categorical stores each once.
_DTYPES = {"f64": "float64", "i64": "int64", "str": "category"}


def _schema() -> dict[str, dict[str, str]]:
    # From the core's own description of what it writes (`output::TABLES` in quicksim-scenario),
    # so the two cannot drift apart.
    core = _native.load_core()
    return {t["table"]: {c["name"]: _DTYPES[c["type"]] for c in t["columns"]} for t in core.table_schema()}


SCHEMA: dict[str, dict[str, str]] = _schema()
"""Column types of the known tables; extra columns from the core are kept with inferred types."""

TABLES = tuple(SCHEMA)
"""The tables every run writes (possibly empty), in the core's order."""

FORMAT_VERSION = 1
_DEFAULT_RECORD_INTERVAL_S = 0.5
_EPS = 1e-9


class Result:
    """One simulation run: DataFrames (`flows`, `queues`, ...), `meta`, `totals`, `scenario`."""

    def __init__(
        self,
        raw: Mapping[str, Any],
        scenario: Mapping[str, Any] | None = None,
        *,
        name: str | None = None,
    ) -> None:
        """Wrap the dict returned by `_core.run`; `scenario` is the normalized scenario."""
        from . import __version__

        tables = raw.get("tables") or {}
        self._raw_tables: dict[str, Mapping[str, Any]] = {n: tables[n] for n in tables}
        self._frames: dict[str, pd.DataFrame] = {}
        self._names = tuple(sorted(set(TABLES) | set(tables)))
        self._meta: dict[str, Any] = dict(raw.get("meta") or {})
        self._totals: dict[str, Any] = dict(raw.get("totals") or {})
        self._scenario: dict[str, Any] = dict(scenario or {})
        self._quicksim_version = __version__
        self._hash: str | None = None
        self._flow_names: list[str] | None = None
        self._flow_index: dict[str, np.ndarray] | None = None
        self._flow_arrays: dict[str, np.ndarray] = {}
        self.name: str = name or "scenario"

    def __getstate__(self) -> dict[str, Any]:
        """For pickle (a Result sent between processes): the core's columns, which numpy reads
        in place but which do not pickle themselves, as numpy arrays."""
        state = dict(self.__dict__)
        state["_raw_tables"] = {
            name: {c: _picklable(v) for c, v in columns.items()} for name, columns in self._raw_tables.items()
        }
        return state

    def __repr__(self) -> str:
        m = self._meta
        return (
            f"<quicksim.Result {self.name!r} seed={m.get('seed')} sim_end_s={m.get('sim_end_s')} "
            f"events={m.get('events')} stopped_early={m.get('stopped_early')}>"
        )

    # --- tables ---------------------------------------------------------------------------

    def table(self, name: str) -> pd.DataFrame:
        """The table `name` as a DataFrame (treat it as read-only; it is cached)."""
        if name not in self._names:
            raise KeyError(f"no table {name!r}; tables: {', '.join(self._names)}")
        if name not in self._frames:
            self._frames[name] = _nulls(name, _frame(name, self._raw_tables.get(name)))
            # The frame holds its own copy (an array still reading the core's keeps it alive).
            self._raw_tables.pop(name, None)
        return self._frames[name]

    @property
    def tables(self) -> dict[str, pd.DataFrame]:
        """All tables by name."""
        return {n: self.table(n) for n in self._names}

    @property
    def flows(self) -> pd.DataFrame:
        """Per flow and bin: t_s (bin start), flow, app_sent_bytes (handed to the transport),
        wire_sent_bytes / sent_packets (IP bytes and packets the source put on the wire),
        wire_recv_bytes / recv_packets (IP bytes and packets reaching the destination host) and
        delivered_bytes (delivered to the receiving application)."""
        return self.table("flows")

    @property
    def queues(self) -> pd.DataFrame:
        """Queue occupancy on change: t_s, queue, packets, bytes."""
        return self.table("queues")

    @property
    def drops(self) -> pd.DataFrame:
        """One row per dropped packet: t_s, queue, flow, bytes, reason."""
        return self.table("drops")

    @property
    def links(self) -> pd.DataFrame:
        """Per link and bin: t_s, link, bytes (frame bytes delivered), utilization (0..1)."""
        return self.table("links")

    @property
    def conn(self) -> pd.DataFrame:
        """The congestion state of every QUIC or TCP sender on change: cwnd, ssthresh (null while
        unset), inflight, RTTs (latest and min null before the first RTT sample; QUIC's srtt
        starts at the initial RTT, TCP's srtt and rttvar are 0 before it), rttvar_s, and rto_s:
        the retransmission timeout with its current backoff, TCP's RTO (RFC 6298) or QUIC's PTO
        period (RFC 9002 §6.2.1: (srtt + max(4 rttvar, 1 ms) + max_ack_delay) * 2**pto_count,
        max_ack_delay 0 before the handshake is confirmed); both NaN for quinn flows, which do not
        expose them. Plus the sender's cumulative packets sent/acked/lost, retransmitted bytes,
        timeouts (retransmission-timer expiries: QUIC PTOs, TCP RTOs of SYN and data) and the
        receiver's ACK frames, CE marks and ECN events at that moment."""
        return self.table("conn")

    @property
    def streams(self) -> pd.DataFrame:
        """Per QUIC stream and bin: t_s, flow, stream, delivered_bytes (in order, to the app)."""
        return self.table("streams")

    @property
    def packets(self) -> pd.DataFrame:
        """Packet trace (empty unless enabled): t_ps, t_s, flow, node, uid, bytes, event."""
        return self.table("packets")

    @property
    def meta(self) -> dict[str, Any]:
        """Seed, duration_s, events, wall_s, sim_end_s, scenario_hash, trace_hash, version,
        stopped_early, peak_rss_run_kib (peak memory at the end of the run loop, before the
        outputs; None off Linux), pgo (the core was optimised with the PGO profile), ..."""
        return self._meta

    @property
    def totals(self) -> dict[str, Any]:
        """End-of-run counters: {"flows": {...}, "queues": {...}, "links": {...}}."""
        return self._totals

    @property
    def scenario(self) -> dict[str, Any]:
        """The normalized scenario that was run (defaults filled in, effective seed)."""
        return self._scenario

    @property
    def network(self) -> dict[str, Any]:
        """The network as the core built it (`meta["network"]`, docs/links.md: `links`, `routes`,
        `flows`, `bottlenecks`); empty for a result saved before the core reported it."""
        return dict(self._meta.get("network") or {})

    # --- time base ------------------------------------------------------------------------

    @property
    def record_interval_s(self) -> float:
        """Width of the bins of `flows` and `links`."""
        if value := self._meta.get("record_interval_s"):
            return float(value)
        t = np.unique(self.flows["t_s"].to_numpy(dtype=float))
        steps = np.diff(t)
        return float(steps[steps > 0].min()) if (steps > 0).any() else _DEFAULT_RECORD_INTERVAL_S

    @property
    def sim_end_s(self) -> float | None:
        """Simulated time at which the run ended (earlier than the duration if stopped early)."""
        for key in ("sim_end_s", "duration_s"):
            if self._meta.get(key) is not None:
                return float(self._meta[key])
        return None

    @property
    def flow_names(self) -> list[str]:
        """Flow names in scenario order (groups as members), then others in the results (computed once)."""
        if self._flow_names is None:
            names: list[str] = []
            for item in self._scenario.get("flows") or []:
                if isinstance(item, Mapping) and isinstance(item.get("name"), str):
                    n = item.get("count")  # a flow group: its members <name>-0 .. <name>-<n-1>
                    names += [f"{item['name']}-{i}" for i in range(n)] if type(n) is int else [item["name"]]
            seen = set(names)
            extra = [n for n in (self._totals.get("flows") or {}) if n not in seen]
            names += extra
            seen.update(extra)
            for table in ("flows", "conn", "drops"):
                found = self.table(table).get("flow")
                if found is not None:
                    new = sorted(_present(found) - seen)
                    names += new
                    seen.update(new)
            self._flow_names = names
        return list(self._flow_names)

    def _flow_rows(self) -> dict[str, np.ndarray]:
        """Row positions of each flow's connection rows in `flows` (they come before any per-path
        rows), ascending, in one pass over the table (cached): O(rows) in all, not per flow."""
        if self._flow_index is None:
            flow = _rows.connection_rows(self.flows)["flow"]
            codes, uniques = pd.factorize(flow.astype(object), use_na_sentinel=True)
            order = np.argsort(codes, kind="stable")
            bounds = np.searchsorted(codes[order], np.arange(len(uniques) + 1))
            self._flow_index = {
                str(u): order[bounds[i] : bounds[i + 1]] for i, u in enumerate(uniques) if u is not None
            }
        return self._flow_index

    def _flow_column(self, column: str) -> np.ndarray:
        """A column of `flows` as floats (cached: per-flow figures index it many times)."""
        if column not in self._flow_arrays:
            self._flow_arrays[column] = self.flows[column].to_numpy(dtype=float)
        return self._flow_arrays[column]

    def active_window(self, flow: str) -> tuple[float, float] | None:
        """(start, end) of a flow's configured activity, clipped to the end of the run."""
        info = (self._totals.get("flows") or {}).get(flow) or {}
        start = info.get("start_s")
        if start is None:
            return None
        end = self.sim_end_s
        stop = info.get("stop_s")
        stop = end if stop is None else (float(stop) if end is None else min(float(stop), end))
        if stop is None or stop <= start:
            return None
        return float(start), float(stop)

    # --- throughput -----------------------------------------------------------------------

    def throughput(
        self,
        flow: str | Iterable[str] | None = None,
        layer: Layer = "delivered",
        interval: float | None = None,
    ) -> pd.DataFrame:
        """Per-flow rate over time: columns t_s (bin start), flow, mbps (Mbit/s).

        Every flow gets a row for every bin from 0 to the end of the run (zero when idle).
        `interval` must be a multiple of the record interval; the last bin is divided by its
        true width when the run ends inside it.
        """
        column = _layer_column(layer)
        df = _select_flows(_rows.connection_rows(self.flows), flow, self.flow_names)
        present = {str(f) for f in pd.unique(df["flow"].dropna())}
        names = [n for n in self.flow_names if n in present]
        ri = self.record_interval_s
        step, factor = _rebin(ri, interval)
        if df.empty:
            return pd.DataFrame(
                {"t_s": pd.Series(dtype=float), "flow": pd.Categorical([]), "mbps": pd.Series(dtype=float)}
            )
        k = np.floor(df["t_s"].to_numpy(dtype=float) / ri + 1e-6).astype(np.int64) // factor
        sums = (
            pd.DataFrame(
                {"flow": df["flow"].astype(str).to_numpy(), "k": k, "b": df[column].to_numpy(dtype=float)}
            )
            .groupby(["flow", "k"], sort=False)["b"]
            .sum()
        )
        end = self.sim_end_s
        nbins = int(k.max()) + 1
        if end is not None:
            nbins = max(nbins, math.ceil(end / step - 1e-6))
        grid = pd.MultiIndex.from_product([names, range(nbins)], names=["flow", "k"])
        sums = sums.reindex(grid, fill_value=0.0)
        t = grid.get_level_values("k").to_numpy() * step
        width = _bin_widths(t, step, end)
        return pd.DataFrame(
            {
                "t_s": t,
                "flow": pd.Categorical(grid.get_level_values("flow"), categories=names),
                "mbps": sums.to_numpy() * 8.0 / width / 1e6,
            }
        )

    def mean_throughput(
        self,
        flow: str,
        t0: float | None = None,
        t1: float | None = None,
        layer: Layer = "delivered",
    ) -> float:
        """Mean rate of `flow` in bits/s over [t0, t1) (default: its active window).

        Bins that straddle t0 or t1 contribute in proportion to their overlap.
        """
        _layer_column(layer)  # checks the name
        if t0 is None or t1 is None:
            window = self.active_window(flow)
            if window is None:
                raise ValueError(f"flow {flow!r} has no active window; pass t0 and t1")
            t0 = window[0] if t0 is None else t0
            t1 = window[1] if t1 is None else t1
        if not t1 > t0:
            raise ValueError(f"empty window: t0={t0} t1={t1}")
        if flow not in self._flow_rows():
            _select_flows(self.flows, flow, self.flow_names)  # raises for an unknown flow
        return self._mean_rates(flow, t0, t1, (layer,))[layer]

    def _mean_rates(self, flow: str, t0: float, t1: float, layers: Iterable[Layer]) -> dict[str, float]:
        """`mean_throughput` of several layers of one flow, sharing the bins' overlap with [t0, t1)."""
        rows = self._flow_rows().get(flow)
        if rows is None or not len(rows):
            return {layer: 0.0 for layer in layers}
        b0 = self._flow_column("t_s")[rows]
        width = _bin_widths(b0, self.record_interval_s, self.sim_end_s)
        overlap = np.clip(np.minimum(t1, b0 + width) - np.maximum(t0, b0), 0.0, None)
        out: dict[str, float] = {}
        for layer in layers:
            nbytes = float((self._flow_column(_layer_column(layer))[rows] * overlap / width).sum())
            out[layer] = nbytes * 8.0 / (t1 - t0)
        return out

    # --- summary and persistence ----------------------------------------------------------

    def summary(self) -> dict[str, Any]:
        """JSON-ready digest: identity (scenario, seed, versions), meta, per-flow/queue/link figures.

        Per flow: the core's totals plus active_s and mean_{delivered,wire,app}_bps over the
        active window. Per queue: totals plus drop_fraction = dropped / (enqueued + dropped).
        `totals` holds the core's counters unchanged and `tables_sha256` is `hash()`.
        """
        summary = {
            "format": FORMAT_VERSION,
            "scenario": self.name,
            "scenario_hash": self._meta.get("scenario_hash"),
            "seed": self._meta.get("seed"),
            "version": {"quicksim": self._quicksim_version, "core": self._meta.get("version")},
            "meta": self._meta,
            "flows": {name: self._flow_summary(name) for name in self.flow_names},
            "queues": {q: _queue_summary(t) for q, t in (self._totals.get("queues") or {}).items()},
            "links": dict(self._totals.get("links") or {}),
            "tables": {n: len(self.table(n)) for n in self._names if n not in FILE_TABLES},
            "tables_sha256": self.hash(),
            "totals": self._totals,
        }
        return dict(_json_safe(summary))

    def _flow_summary(self, flow: str) -> dict[str, Any]:
        out: dict[str, Any] = dict((self._totals.get("flows") or {}).get(flow) or {})
        window = self.active_window(flow)
        out["active_s"] = None if window is None else window[1] - window[0]
        has_rows = len(self._flow_rows().get(flow, ())) > 0
        layers: tuple[Layer, ...] = ("delivered", "wire", "app")
        rates = self._mean_rates(flow, window[0], window[1], layers) if window and has_rows else {}
        for layer in layers:
            key = f"mean_{layer}_bps"
            if window is None:
                out[key] = None
            elif has_rows:
                out[key] = rates[layer]
            else:  # no time series recorded: fall back to the end-of-run byte counters
                nbytes = out.get(_layer_column(layer))
                out[key] = None if nbytes is None else nbytes * 8.0 / (window[1] - window[0])
        return out

    def provenance(self) -> dict[str, Any]:
        """What made this run, as stored in every Parquet file's metadata (`_io.PARQUET_KEY`):
        scenario name and hash, seed, trace hash, quicksim and core versions."""
        return dict(
            _sanitize(
                {
                    "scenario": self.name,
                    "scenario_hash": self._meta.get("scenario_hash"),
                    "seed": self._meta.get("seed"),
                    "trace_hash": self._meta.get("trace_hash"),
                    "quicksim": self._quicksim_version,
                    "core": self._meta.get("version"),
                    "format": FORMAT_VERSION,
                }
            )
        )

    def hash(self) -> str:
        """SHA-256 over every table's contents (not meta: it holds wall-clock times).

        Equal seeds and scenarios must give equal hashes; the value survives save()/load().
        """
        if self._hash is None:
            h = hashlib.sha256()
            for name in self._names:
                df = self.table(name)
                h.update(f"table {name} {len(df)}\n".encode())
                for column in sorted(df.columns):
                    h.update(f"column {column}\n".encode())
                    for part in _column_parts(df[column]):
                        h.update(part)
            self._hash = h.hexdigest()
        return self._hash

    def save(self, directory: str | os.PathLike[str], summary: Mapping[str, Any] | None = None) -> Path:
        """Write <table>.parquet for every table, scenario.json and summary.json into `directory`;
        the `qlog` table's rows become files (`<flow>.client.sqlog`, ...; `FILE_TABLES`), each
        named by `_io.file_name` (a flow named `../x` or `a/b` cannot write outside `directory`).

        `summary` is this result's `summary()` when the caller has it already (it is not
        computed twice)."""
        out = _io.out_dir(directory, "directory")
        summary = self.summary() if summary is None else summary
        with _io.locked_folder(out, "directory"):  # another process saving here is refused
            # Without summary.json the directory reads as incomplete until this save has finished.
            (out / "summary.json").unlink(missing_ok=True)
            provenance = self.provenance()
            written: set[Path] = set()
            for name in self._names:
                if name in FILE_TABLES:
                    frame = self.table(name)
                    for file, text in zip(frame["file"], frame["text"], strict=True):
                        written.add(out / file_name(str(file)))
                        atomic_write_text(out / file_name(str(file)), str(text))
                    continue
                atomic_write(
                    out / f"{name}.parquet", parquet_writer(self.table(name), {**provenance, "table": name})
                )
            for stale in {*out.glob("*.client.sqlog"), *out.glob("*.server.sqlog")} - written:
                stale.unlink()  # an earlier result's qlog files
            atomic_write_text(out / "scenario.json", dumps_readable(self._scenario) + "\n")
            atomic_write_text(out / "summary.json", dumps_readable(summary) + "\n")
        return out

    @classmethod
    def load(cls, directory: str | os.PathLike[str]) -> Result:
        """Read a directory written by `save`; a folder whose tables another run wrote is refused
        (ScenarioError naming the file)."""
        src = Path(directory)
        summary_path = src / "summary.json"
        if not summary_path.is_file():
            raise FileNotFoundError(f"{src}: no summary.json; not a complete quicksim result directory")
        summary = json.loads(summary_path.read_text(encoding="utf-8"))
        scenario_path = src / "scenario.json"
        scenario = json.loads(scenario_path.read_text(encoding="utf-8")) if scenario_path.is_file() else {}
        raw = {"meta": summary.get("meta") or {}, "totals": summary.get("totals") or {}, "tables": {}}
        result = cls(raw, scenario=scenario, name=summary.get("scenario"))
        names = list(summary.get("tables") or TABLES)
        check_one_run(src, raw["meta"], names)  # tables of another run beside this summary: refused
        result._names = tuple(sorted(set(TABLES) | set(names)))
        for name in names:
            # _nulls: results saved before the conn table had nulls hold the core's stand-ins.
            result._frames[name] = _nulls(name, _conform(name, pd.read_parquet(src / f"{name}.parquet")))
        result._flow_names = result._flow_index = None  # derived from the tables just read
        result._flow_arrays = {}
        result._quicksim_version = (summary.get("version") or {}).get("quicksim", result._quicksim_version)
        return result


# --- helpers shared with plotting ---------------------------------------------------------


def winavg(df: pd.DataFrame, n: int = 10, *, value: str = "mbps", by: str = "flow") -> pd.DataFrame:
    """Batched mean of every `n` consecutive samples per group, stamped at the batch's first t_s.

    This is OMNeT++ scave's `winavg(n)`, used by the INET showcase's smoothed sender plot
    (10 bins of 0.5 s = 5 s batches); plot the result with steps-post.
    """
    if n < 1:
        raise ValueError(f"n must be >= 1, not {n}")
    if df.empty:
        return df[["t_s", by, value]].copy()
    d = df.sort_values([by, "t_s"], kind="stable")
    batch = d.groupby(by, observed=True, sort=False).cumcount().to_numpy() // n
    out = (
        d.assign(_batch=batch)
        .groupby([by, "_batch"], observed=True, sort=False)
        .agg(t_s=("t_s", "first"), **{value: (value, "mean")})
        .reset_index()
    )
    return out[["t_s", by, value]]


def binned_rate(
    events: pd.DataFrame,
    by: str,
    interval: float,
    end_s: float | None,
    weight: str | None = None,
) -> pd.DataFrame:
    """Events per second (or `weight` units per second) in bins of `interval`, per `by` group.

    Returns t_s (bin start), `by`, rate; every group gets every bin up to `end_s`.
    """
    if interval <= 0:
        raise ValueError(f"interval must be positive, not {interval}")
    if events.empty:
        return pd.DataFrame(
            {"t_s": pd.Series(dtype=float), by: pd.Categorical([]), "rate": pd.Series(dtype=float)}
        )
    k = np.floor(events["t_s"].to_numpy(dtype=float) / interval + 1e-6).astype(np.int64)
    w = np.ones(len(events)) if weight is None else events[weight].to_numpy(dtype=float)
    groups = [str(g) for g in pd.unique(events[by].astype(str))]
    sums = pd.DataFrame({by: events[by].astype(str).to_numpy(), "k": k, "w": w}).groupby([by, "k"])["w"].sum()
    nbins = int(k.max()) + 1
    if end_s is not None:
        nbins = max(nbins, math.ceil(end_s / interval - 1e-6))
    grid = pd.MultiIndex.from_product([sorted(groups), range(nbins)], names=[by, "k"])
    t = grid.get_level_values("k").to_numpy() * interval
    return pd.DataFrame(
        {
            "t_s": t,
            by: pd.Categorical(grid.get_level_values(by), categories=sorted(groups)),
            "rate": sums.reindex(grid, fill_value=0.0).to_numpy() / _bin_widths(t, interval, end_s),
        }
    )


def _layer_column(layer: str) -> str:
    if layer not in ("delivered", "wire", "app"):
        raise ValueError(f"layer must be 'delivered', 'wire' or 'app', not {layer!r}")
    return {"delivered": "delivered_bytes", "wire": "wire_sent_bytes", "app": "app_sent_bytes"}[layer]


def _select_flows(df: pd.DataFrame, flow: str | Iterable[str] | None, known: list[str]) -> pd.DataFrame:
    if flow is None:
        return df
    wanted = {flow} if isinstance(flow, str) else set(flow)
    unknown = wanted - set(known)
    if unknown:
        raise KeyError(f"unknown flow(s) {', '.join(sorted(unknown))}; flows: {', '.join(known)}")
    return df[df["flow"].astype(str).isin(wanted)]


def _rebin(record_interval: float, interval: float | None) -> tuple[float, int]:
    if interval is None:
        return record_interval, 1
    factor = round(interval / record_interval)
    if factor < 1 or abs(factor * record_interval - interval) > 1e-6 * interval:
        raise ValueError(
            f"interval {interval} s is not a multiple of the record interval {record_interval} s"
        )
    return factor * record_interval, factor


def _bin_widths(t: np.ndarray, step: float, end: float | None) -> np.ndarray:
    width = np.full(len(t), step, dtype=float)
    if end is not None:
        width = np.minimum(width, end - t)
        width[width <= _EPS] = step  # a bin at or past the end (a final sample): keep it finite
    return width


def _queue_summary(totals: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(totals)
    enq, dropped = out.get("enqueued_packets"), out.get("dropped_packets")
    arrived = (enq or 0) + (dropped or 0)
    out["drop_fraction"] = (dropped or 0) / arrived if arrived else None
    return out


def _frame(name: str, columns: Mapping[str, Any] | None) -> pd.DataFrame:
    schema = SCHEMA.get(name, {})
    columns = columns or {}
    lengths = {len(v) for v in columns.values()}
    if len(lengths) > 1:
        raise ValueError(f"table {name!r}: columns have different lengths {sorted(lengths)}")
    order = [c for c in schema if c in columns] + [c for c in columns if c not in schema]
    if not columns:
        order = list(schema)
    return pd.DataFrame({c: _column(columns.get(c, []), schema.get(c)) for c in order})


_NO_VALUE = {"conn": {"ssthresh_bytes": -1, "latest_rtt_s": 0.0, "min_rtt_s": 0.0}}
_NO_VALUE["queues"] = {f"{q}_{c}": -1 for q in "lc" for c in ("packets", "bytes", "marks", "drops")}
"""Per table and column the core's stand-ins for "no value" (ssthresh unset, no RTT sample, DualPI2 columns on
another queue's row); the DataFrames hold nulls there (nullable Int64, NaN), not pulling `min()` and means."""


def _nulls(name: str, df: pd.DataFrame) -> pd.DataFrame:
    for column, sentinel in _NO_VALUE.get(name, {}).items():
        if column not in df.columns:
            continue
        values = df[column].to_numpy()
        if isinstance(sentinel, int) and values.dtype == np.int64:
            # The core's own column: the nullable array built directly (what astype + mask make).
            df[column] = pd.arrays.IntegerArray(values.copy(), values == sentinel)
        elif isinstance(sentinel, int):
            df[column] = df[column].astype("Int64").mask(df[column] == sentinel)
        elif values.dtype == np.float64:
            df[column] = np.where(values == sentinel, np.nan, values)
        else:
            df[column] = df[column].mask(df[column] == sentinel)
    return df


def _conform(name: str, df: pd.DataFrame) -> pd.DataFrame:
    """Restore schema dtypes Parquet does not keep (an empty categorical comes back as object;
    an all-null nullable integer may come back as float)."""
    for column, sentinel in _NO_VALUE.get(name, {}).items():
        if column in df.columns and isinstance(sentinel, int) and str(df[column].dtype) != "Int64":
            df[column] = df[column].astype("Int64")
    for column, dtype in SCHEMA.get(name, {}).items():
        if (
            column in df.columns
            and dtype == "category"
            and not isinstance(df[column].dtype, pd.CategoricalDtype)
        ):
            df[column] = df[column].astype("category")
    return df


def _column(values: Any, dtype: str | None) -> Any:
    if hasattr(values, "codes") and hasattr(values, "labels"):
        labels = list(values.labels)
        if dtype == "category":
            return _categorical(np.asarray(values.codes), labels)
        values = [labels[c] for c in np.asarray(values.codes).tolist()]  # not a name column
    if hasattr(values, "__array_interface__"):
        # The core's number column: numpy reads it in place (the DataFrame then copies it once).
        return np.asarray(values) if dtype is None else np.asarray(values, dtype=dtype)
    if dtype == "category":
        return pd.Categorical([None if v is None else str(v) for v in values])
    if dtype is not None:
        try:
            return np.asarray(values, dtype=dtype)
        except (TypeError, ValueError):  # e.g. None in an integer column: keep what pandas infers
            pass
    return pd.Series(list(values)) if len(values) else pd.Series([], dtype=object)


def _codes_and_categories(column: pd.Series) -> tuple[np.ndarray, pd.Index]:
    """A categorical column's codes (-1: null) and categories, without making a Series."""
    values = column.array
    assert isinstance(values, pd.Categorical)
    return values.codes, values.categories


def _present(column: pd.Series) -> set[str]:
    """The distinct non-null values of a column as strings (of a categorical: from its codes)."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        codes, categories = _codes_and_categories(column)
        used = np.flatnonzero(np.bincount(codes[codes >= 0], minlength=len(categories)))
        return {str(v) for v in categories[used].tolist()}
    return {str(f) for f in pd.unique(column.dropna())}


class _Strings:
    """A dictionary-encoded string column as plain Python and numpy (the core's, pickled)."""

    __slots__ = ("codes", "labels")

    def __init__(self, codes: np.ndarray, labels: list[str]) -> None:
        self.codes, self.labels = codes, labels

    def __len__(self) -> int:
        return len(self.codes)


def _picklable(values: Any) -> Any:
    if hasattr(values, "codes") and hasattr(values, "labels"):
        return _Strings(np.asarray(values.codes), list(values.labels))
    if hasattr(values, "__array_interface__"):
        return np.asarray(values)
    return values


def _categorical(codes: np.ndarray, labels: list[str]) -> pd.Categorical:
    """The dictionary-encoded column `labels[codes]` as the categorical that
    `pd.Categorical(labels[codes])` makes (categories: the labels in use, sorted; equal labels
    merged), without a Python step per row."""
    used = np.flatnonzero(np.bincount(codes, minlength=len(labels)))
    categories = sorted({labels[i] for i in used})
    if not categories:  # an empty column: exactly what the row-by-row path makes of none
        return pd.Categorical([])
    position = {c: k for k, c in enumerate(categories)}
    remap = np.full(len(labels), -1, dtype=np.int64)
    for i in used:
        remap[i] = position[labels[i]]
    return pd.Categorical.from_codes(remap[codes], dtype=_category_dtype(tuple(categories)))


_CATEGORY_DTYPES: dict[tuple[str, ...], pd.CategoricalDtype] = {}
"""Categorical dtypes by their categories: making one checks and converts every category (the
larger part of a small table's cost), and the runs of a sweep share their names."""


def _category_dtype(categories: tuple[str, ...]) -> pd.CategoricalDtype:
    dtype = _CATEGORY_DTYPES.get(categories)
    if dtype is None:
        if len(_CATEGORY_DTYPES) >= 256:  # bounded: a long session of varied scenarios
            _CATEGORY_DTYPES.clear()
        dtype = _CATEGORY_DTYPES[categories] = pd.CategoricalDtype(list(categories))
    return dtype


def _category_codes(s: pd.Series) -> tuple[np.ndarray, list[Any]] | None:
    """What `pd.factorize(s.astype(object), sort=True)` gives for a categorical of strings
    (codes, -1 for a null; the values present, sorted), from its codes and categories without a
    step per row; None for anything else (the caller then factorizes)."""
    if not isinstance(s.dtype, pd.CategoricalDtype):
        return None
    codes, categories = _codes_and_categories(s)
    used = np.flatnonzero(np.bincount(codes[codes >= 0], minlength=len(categories)))
    present = categories[used].tolist()
    if not all(type(v) is str for v in present):
        return None
    order = sorted(range(len(present)), key=present.__getitem__)
    remap = np.full(len(categories) + 1, -1, dtype=np.int64)  # the last entry: a null (-1)
    remap[used[order]] = np.arange(len(order))
    return remap[codes], [present[k] for k in order]


def _column_bytes(s: pd.Series) -> bytes:
    """A canonical byte form of a column, independent of in-memory vs Parquet dtypes."""
    return b"".join(_column_parts(s))


def _column_parts(s: pd.Series) -> list[bytes | memoryview]:
    """`_column_bytes` in pieces whose concatenation it is: the values as contiguous arrays that
    a hash reads in place (SHA-256 over pieces = over their concatenation), no copy joined."""
    kind = s.dtype.kind
    if isinstance(s.dtype, np.dtype) and kind in "biuf":
        # A numpy column holds no nulls (a float's NaN is one of its values): no mask to look for.
        tag, dtype = {"b": (b"b", "u1"), "i": (b"i", "<i8"), "u": (b"i", "<i8"), "f": (b"f", "<f8")}[kind]
        return [tag, _raw(s.to_numpy(), dtype)]
    if isinstance(s.dtype, pd.CategoricalDtype) or kind in "OSUT" or pd.api.types.is_string_dtype(s.dtype):
        fast = _category_codes(s)
        codes, uniques = pd.factorize(s.astype(object), sort=True) if fast is None else fast
        labels = json.dumps([str(u) for u in uniques]).encode()
        return [b"s" + labels + b"\0", _raw(codes, "<i8")]
    mask = s.isna().to_numpy()
    prefix = b"n" + np.packbits(mask).tobytes() if kind != "f" and mask.any() else b""
    if kind == "b":
        return [prefix + b"b", _raw(s.to_numpy(dtype="u1", na_value=0), "u1")]
    if kind in "iu":
        return [prefix + b"i", _raw(s.to_numpy(dtype="<i8", na_value=0), "<i8")]
    if kind == "f":
        return [b"f", _raw(s.to_numpy(dtype="<f8"), "<f8")]
    return [b"o" + json.dumps([str(v) for v in s]).encode()]


def _raw(values: Any, dtype: str) -> memoryview:
    """The bytes of `values` as a contiguous array of `dtype`, in place when it is one already."""
    return np.ascontiguousarray(np.asarray(values, dtype=dtype)).data


_PLAIN = (str, int, bool, type(None))


def _json_safe(value: Any) -> Any:
    """`value` itself when it is strict JSON already (checked by the C encoder: fast), else
    `_sanitize(value)`."""
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return _sanitize(value)
    return value


def _sanitize(value: Any) -> Any:
    """Make a structure strict-JSON safe: NaN/inf become None, numpy scalars become Python ones.

    Plain leaves are copied inline, so the cost is one call per container, not per value."""
    if isinstance(value, Mapping):
        return {str(k): v if _plain(v) else _sanitize(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [v if _plain(v) else _sanitize(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _plain(v: Any) -> bool:
    kind = type(v)
    return kind in _PLAIN or (kind is float and math.isfinite(v))
