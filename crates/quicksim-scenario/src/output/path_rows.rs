//! The per-path rows of the `flows` and `conn` tables (docs/multipath.md). In a run with a
//! multipath flow both tables end with a `path` column: the rows every run has (one series per
//! flow, the whole connection) keep their values with `path` -1, and each path of a multipath
//! connection adds rows of its own (`path` 0, 1, ...). A run without multipath flows has no
//! `PathRows` at all: its tables are as they were, column for column and bit for bit, and it
//! pays one test of an empty `Option` per forward packet.

use std::collections::BTreeMap;

use super::sinks::{ConnCounters, ConnSample};
use super::{Column, Table};

/// The `path` of a row that describes the whole connection (the column holds -1 there).
pub(crate) const CONNECTION: u8 = u8::MAX;

/// One path's counters in one bin of the `flows` table: what crossed the network on it.
#[derive(Clone, Copy, Default, Debug)]
pub(crate) struct PathBin {
    wire_sent_bytes: u64,
    sent_packets: u64,
    wire_recv_bytes: u64,
    recv_packets: u64,
}

/// The per-path series of a run with multipath flows.
#[derive(Default)]
pub(crate) struct PathRows {
    /// The multipath flows, ascending, with their number of paths.
    flows: Vec<(u32, u8)>,
    /// Per (flow, path): the bins its packets touched, (bin index, counters), sparse.
    bins: BTreeMap<(u32, u8), Vec<(u32, PathBin)>>,
    /// The path of each `conn` row, in row order (`CONNECTION` for a connection's row).
    pub conn_path: Vec<u8>,
    /// Per (flow, path): its last sample (a row is written when it changes).
    last: BTreeMap<(u32, u8), ConnSample>,
    /// Per (flow, path), with `run.record.conn_interval`: the latest state not yet written,
    /// with its time.
    pub held: BTreeMap<(u32, u8), (u64, ConnSample, ConnCounters)>,
}

impl PathRows {
    /// The rows of `flows` (flow index, number of paths): the run's multipath flows.
    pub(crate) fn new(mut flows: Vec<(u32, u8)>) -> PathRows {
        flows.sort_unstable();
        PathRows { flows, ..PathRows::default() }
    }

    /// Whether flow `flow` has several paths.
    #[inline]
    pub(crate) fn is_multipath(&self, flow: u32) -> bool {
        self.flows.binary_search_by_key(&flow, |&(f, _)| f).is_ok()
    }

    /// A packet of flow `flow` on `path` in its forward direction left its source (`recv`
    /// false) or reached its destination, in bin `b` of `nbins`.
    pub(crate) fn packet(&mut self, flow: u32, path: u8, ip_bytes: u32, recv: bool, b: u32, nbins: usize) {
        let x = sparse_bin(self.bins.entry((flow, path)).or_default(), b, nbins);
        if recv {
            x.wire_recv_bytes += u64::from(ip_bytes);
            x.recv_packets += 1;
        } else {
            x.wire_sent_bytes += u64::from(ip_bytes);
            x.sent_packets += 1;
        }
    }

    /// Whether `s` differs from the last sample of (flow, path), which it then replaces.
    pub(crate) fn changed(&mut self, flow: u32, path: u8, s: &ConnSample) -> bool {
        let last = self.last.insert((flow, path), *s);
        last.as_ref() != Some(s)
    }

    /// Adds the per-path rows to the `flows` table (after the connections' rows: each path of
    /// each multipath flow, one row per bin of `bin_s` s, zero-filled) and the `path` column
    /// to it and to `conn`. A path row counts what crossed the network on the path; the
    /// application's bytes (`app_sent_bytes`, `delivered_bytes`) belong to the connection and
    /// are 0 there, and the delay statistics are not kept per path (NaN).
    pub(crate) fn add_to(&self, tables: &mut [(String, Table)], flows_on: bool, nbins: usize, bin_s: f64) {
        for (name, table) in tables.iter_mut() {
            match name.as_str() {
                "flows" => self.add_flow_rows(table, flows_on, nbins, bin_s),
                "conn" => {
                    let p = self.conn_path.iter().map(|&p| code(p)).collect();
                    table.push(("path".into(), Column::I64(p)));
                }
                _ => {}
            }
        }
    }

    fn add_flow_rows(&self, table: &mut Table, flows_on: bool, nbins: usize, bin_s: f64) {
        let old = table.first().map_or(0, |(_, c)| c.len());
        let mut path = vec![-1i64; old];
        if flows_on {
            for &(f, n) in &self.flows {
                for p in 0..n {
                    let bins = self.bins.get(&(f, p)).map_or(&[][..], Vec::as_slice);
                    let mut touched = bins.iter().peekable();
                    for b in 0..nbins {
                        let x = touched
                            .next_if(|(tb, _)| *tb as usize == b)
                            .map_or_else(PathBin::default, |t| t.1);
                        for (cname, col) in table.iter_mut() {
                            push_flow_cell(cname, col, b as f64 * bin_s, f, &x);
                        }
                        path.push(i64::from(p));
                    }
                }
            }
        }
        table.push(("path".into(), Column::I64(path)));
    }
}

/// The `path` column's value for a path code.
fn code(p: u8) -> i64 {
    if p == CONNECTION {
        -1
    } else {
        i64::from(p)
    }
}

/// One cell of a per-path row of the `flows` table, by column.
fn push_flow_cell(cname: &str, col: &mut Column, t_s: f64, flow: u32, x: &PathBin) {
    match (cname, col) {
        ("t_s", Column::F64(v)) => v.push(t_s),
        ("flow", Column::Dict { codes, .. }) => codes.push(flow),
        ("wire_sent_bytes", Column::I64(v)) => v.push(x.wire_sent_bytes as i64),
        ("sent_packets", Column::I64(v)) => v.push(x.sent_packets as i64),
        ("wire_recv_bytes", Column::I64(v)) => v.push(x.wire_recv_bytes as i64),
        ("recv_packets", Column::I64(v)) => v.push(x.recv_packets as i64),
        // The application's bytes are the connection's.
        (_, Column::I64(v)) => v.push(0),
        // The delay statistics are not kept per path.
        (_, Column::F64(v)) => v.push(f64::NAN),
        (c, other) => unreachable!("flows.{c} is not a column a path row fills: {other:?}"),
    }
}

/// The counters of bin `b` in a sparse series of (bin index, counters) in time order, appended
/// if `b` is not the last bin touched. The series grows by doubling, but never past the bins
/// left in the run (`nbins` in all): a series touching every bin ends near an exact fit, as a
/// dense vector would, and a mostly idle one holds only its few bins.
#[inline]
pub(crate) fn sparse_bin<T: Default>(v: &mut Vec<(u32, T)>, b: u32, nbins: usize) -> &mut T {
    if v.last().is_none_or(|(lb, _)| *lb != b) {
        debug_assert!(v.last().is_none_or(|(lb, _)| *lb < b), "time runs backwards");
        if v.len() == v.capacity() {
            let left = nbins.saturating_sub(b as usize).max(1);
            v.reserve_exact(v.capacity().max(1).min(left));
        }
        v.push((b, T::default()));
    }
    &mut v.last_mut().expect("touched or just pushed").1
}
