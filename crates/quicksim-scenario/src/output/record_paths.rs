//! The built-in tables' hooks for the per-path rows of a run with multipath flows
//! (`path_rows`): the recorder's side, apart from `record.rs` (one file per concern).

use super::path_rows::PathRows;
use super::record::Recorder;
use super::sinks::{ConnCounters, ConnSample};
use super::Table;
use quicksim_engine::SimTime;

impl Recorder {
    /// Records per-path rows for the multipath flows `flows` (flow index, number of paths).
    pub(crate) fn record_paths(&mut self, flows: Vec<(u32, u8)>) {
        if !flows.is_empty() {
            self.paths = Some(Box::new(PathRows::new(flows)));
        }
    }

    /// A forward packet of flow `flow` on `path` (the `flows` table's per-path rows).
    #[cold]
    pub(crate) fn on_path_packet(&mut self, now: SimTime, flow: u32, path: u8, ip_bytes: u32, recv: bool) {
        if !self.flows_on {
            return;
        }
        let b = self.bin_at(now) as u32;
        let nbins = self.nbins;
        if let Some(pr) = &mut self.paths {
            pr.packet(flow, path, ip_bytes, recv, b, nbins);
        }
    }

    /// A sample of one path's state of flow `flow` (the `conn` table's per-path rows): a row
    /// when it changed, as for the connection's own samples.
    pub(crate) fn path_sample(&mut self, t: SimTime, flow: u32, path: u8, s: &ConnSample, c: &ConnCounters) {
        let Some(pr) = &mut self.paths else { return };
        if !self.conn_sel[flow as usize] || !pr.changed(flow, path, s) {
            return;
        }
        if self.conn_grid == 0 {
            self.push_conn(t, flow, path, s, c);
            return;
        }
        // The held state was in force up to (not including) t.
        if let Some(h) = pr.held.insert((flow, path), (t.0, *s, *c)) {
            self.write_held(h, flow, path, t.0, false);
        }
    }

    /// The end of the run with a `conn_interval` grid: each path's last state.
    pub(super) fn flush_path_held(&mut self, end: u64) {
        let Some(pr) = &mut self.paths else { return };
        let held = std::mem::take(&mut pr.held);
        for ((flow, path), h) in held {
            self.write_held(h, flow, path, end, true);
        }
    }

    /// Adds the per-path rows and the `path` column (a run with multipath flows), after the
    /// built-in tables got their delay columns.
    pub(crate) fn add_path_rows(&self, tables: &mut [(String, Table)], nbins: usize) {
        if let Some(pr) = &self.paths {
            pr.add_to(tables, self.flows_on, nbins, self.bin.as_secs_f64());
        }
    }
}
