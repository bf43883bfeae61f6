//! The built-in tables (`flows`, `links`, `queues`, `drops`, `conn`, `streams`, `packets`): the
//! sink every run has. Each series is chosen by the scenario's `run.record` table and capped, so
//! large runs stay light. Columns carry their unit in the name.

use super::path_rows::{sparse_bin, PathRows, CONNECTION};
use super::sinks::{ConnCounters, ConnSample, PacketInfo, RunInfo, Sink, TableCut};
use super::{Column, Table};
use quicksim_engine::{SimDuration, SimTime};
use quicksim_net::{ChanId, DropReason, NodeId};

/// Per-flow counters of one bin.
#[derive(Clone, Copy, Default, Debug)]
pub struct FlowBin {
    pub app_sent_bytes: u64,
    pub wire_sent_bytes: u64,
    pub sent_packets: u64,
    pub wire_recv_bytes: u64,
    pub recv_packets: u64,
    pub delivered_bytes: u64,
}

/// Rows each table that grows with the run's events may hold: its share of the memory budget
/// (`budget::Growth`, set by `build`); `usize::MAX` is no cap. Compared with the table's length
/// per row, which is all a row costs beyond its push.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowCaps {
    pub drops: usize,
    pub queues: usize,
    pub conn: usize,
    pub packets: usize,
}

impl Default for RowCaps {
    fn default() -> Self {
        RowCaps { drops: usize::MAX, queues: usize::MAX, conn: usize::MAX, packets: usize::MAX }
    }
}

#[derive(Default)]
struct Series {
    t_ps: Vec<u64>,
    key: Vec<u32>,
    a: Vec<i64>,
    b: Vec<i64>,
}

pub struct Recorder {
    pub bin: SimDuration,
    pub flows_on: bool,
    /// Per flow, the bins it touched, in time order: (bin index, counters). A mostly idle flow
    /// touches a few of the run's bins, and a dense vector per flow cost 48 B per bin each.
    pub flow_bins: Vec<Vec<(u32, FlowBin)>>,
    /// Per flow, its counters over the run, kept only without the flows table: with it they
    /// are the sums of the flow's bins ([`Recorder::flow_total`]; 48 B per flow fewer, which
    /// every idle flow of a many-flows run paid, and one add per counter fewer).
    flow_totals: Vec<FlowBin>,
    pub flow_dropped: Vec<u64>,
    pub link_sel: Vec<bool>,
    pub link_bins: Vec<Vec<u64>>,
    pub queue_sel: Vec<bool>,
    queue_counts: Vec<u64>,
    queues: Series,
    pub drops_on: bool,
    drops: Series,
    drop_reason: Vec<&'static str>,
    pub conn_sel: Vec<bool>,
    conn_t: Vec<u64>,
    conn_flow: Vec<u32>,
    conn_rows: Vec<ConnSample>,
    conn_counters: Vec<ConnCounters>,
    /// (flow, stream id) of each per-stream series, and its delivered bytes in the bins it
    /// touched: (bin index, bytes), sparse like `flow_bins`.
    stream_keys: Vec<(u32, u64)>,
    stream_bins: Vec<Vec<(u32, u64)>>,
    /// Per flow, its first series in `stream_keys` (`u32::MAX`: none); per series, the flow's
    /// next one. A flow has a few streams; a linear search of all keys cost O(flows) per
    /// delivery with thousands of flows.
    stream_first: Vec<u32>,
    stream_next: Vec<u32>,
    conn_counts: Vec<u64>,
    /// `run.record.conn_interval` in ps (0: every change), and per flow the latest state not
    /// yet written, with its time (only with a grid: 144 B per flow, which every idle flow of
    /// a many-flows run paid when it was allocated for runs without one).
    pub(super) conn_grid: u64,
    conn_held: Vec<Option<(u64, ConnSample, ConnCounters)>>,
    /// The per-path rows of a run with multipath flows (`path_rows`); None without.
    pub(crate) paths: Option<Box<PathRows>>,
    /// The `queues` rows' sub-queue state in a run recording DualPI2 (`record_sub_queues`).
    pub(super) sub_queues: Option<Box<super::sub_queue_rows::SubQueueRows>>,
    pub trace_sel: Vec<bool>,
    /// Some flow's packets are traced / some queue is recorded: tested before the per-flow or
    /// per-channel choice, so that a run recording neither pays one flag per packet and per
    /// queue change, inlined, instead of a call.
    any_trace: bool,
    any_queue: bool,
    trace: Series,
    trace_node: Vec<u32>,
    trace_uid: Vec<u64>,
    max_samples: u64,
    /// Series that hit `max_samples`, in the order they did.
    truncated: Vec<Truncated>,
    /// The growing tables' row caps, and the tables that reached theirs, in the order they did.
    pub caps: RowCaps,
    cuts: Vec<TableCut>,
    /// Bins in the whole run; a flow's or link's bin vector is allocated at this size once,
    /// not grown by doubling (up to 2x the memory with many flows).
    pub(super) nbins: usize,
    /// The bin of the last `bin_at` call, as (start in ps, index).
    bin_cache: (u64, usize),
}

/// A series cut at `max_samples`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Truncated {
    Conn(u32),
    Queue(u32),
}

/// A name column as codes into `labels` (the run's flow, channel or node names): no `String`
/// per row (the queue series alone has one row per queue change).
fn dict(codes: Vec<u32>, labels: &[String]) -> Column {
    Column::Dict { codes, labels: labels.to_vec() }
}

/// A column of a few distinct static strings (drop reasons), each stored once, labels in the
/// order of first appearance.
fn interned(values: &[&'static str]) -> Column {
    let mut labels: Vec<&'static str> = Vec::new();
    let codes = values
        .iter()
        .map(|v| match labels.iter().position(|l| l == v) {
            Some(i) => i as u32,
            None => {
                labels.push(v);
                (labels.len() - 1) as u32
            }
        })
        .collect();
    Column::Dict { codes, labels: labels.into_iter().map(String::from).collect() }
}

impl Recorder {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        bin: SimDuration,
        nflows: usize,
        flows_on: bool,
        link_sel: Vec<bool>,
        queue_sel: Vec<bool>,
        drops_on: bool,
        conn_sel: Vec<bool>,
        trace_sel: Vec<bool>,
        max_samples: u64,
    ) -> Self {
        let nch = link_sel.len();
        let any_trace = trace_sel.iter().any(|&t| t);
        let any_queue = queue_sel.iter().any(|&q| q);
        Recorder {
            bin,
            flows_on,
            flow_bins: vec![Vec::new(); nflows],
            flow_totals: if flows_on { Vec::new() } else { vec![FlowBin::default(); nflows] },
            flow_dropped: vec![0; nflows],
            link_bins: vec![Vec::new(); nch],
            link_sel,
            queue_counts: vec![0; queue_sel.len()],
            queue_sel,
            queues: Series::default(),
            drops_on,
            drops: Series::default(),
            drop_reason: Vec::new(),
            conn_counts: vec![0; conn_sel.len()],
            conn_grid: 0,
            conn_held: Vec::new(),
            paths: None,
            sub_queues: None,
            conn_sel,
            conn_t: Vec::new(),
            conn_flow: Vec::new(),
            conn_rows: Vec::new(),
            conn_counters: Vec::new(),
            stream_keys: Vec::new(),
            stream_bins: Vec::new(),
            stream_first: vec![u32::MAX; nflows],
            stream_next: Vec::new(),
            trace_sel,
            any_trace,
            any_queue,
            trace: Series::default(),
            trace_node: Vec::new(),
            trace_uid: Vec::new(),
            max_samples,
            truncated: Vec::new(),
            caps: RowCaps::default(),
            cuts: Vec::new(),
            nbins: 0,
            bin_cache: (0, 0),
        }
    }

    /// Record `conn` on a grid of `step` (None: on every change).
    pub fn set_conn_interval(&mut self, step: Option<SimDuration>) {
        self.conn_grid = step.map_or(0, |s| s.0);
        self.conn_held = if self.conn_grid == 0 { Vec::new() } else { vec![None; self.conn_sel.len()] };
    }

    /// Writes flow `fi`'s held state at the first grid point at or after it was taken, if that
    /// point comes before `until` (the state was still in force there).
    fn flush_held(&mut self, fi: usize, until: u64, inclusive: bool) {
        if let Some(h) = self.conn_held[fi] {
            self.write_held(h, fi as u32, CONNECTION, until, inclusive);
        }
    }

    /// Writes a held state of (flow, path) taken at `t` at the first grid point at or after
    /// it, if that point comes before `until`.
    pub(super) fn write_held(
        &mut self,
        held: (u64, ConnSample, ConnCounters),
        flow: u32,
        path: u8,
        until: u64,
        inclusive: bool,
    ) {
        let (t, s, c) = held;
        let g = t.div_ceil(self.conn_grid) * self.conn_grid;
        if g < until || (inclusive && g == until) {
            self.push_conn(SimTime(g), flow, path, &s, &c);
        }
    }

    /// A `conn` row of flow `flow`'s `path` (`CONNECTION`: the whole connection).
    pub(super) fn push_conn(&mut self, t: SimTime, flow: u32, path: u8, s: &ConnSample, c: &ConnCounters) {
        let fi = flow as usize;
        if self.conn_counts[fi] >= self.max_samples {
            self.note_truncated(Truncated::Conn(flow));
            return;
        }
        if self.conn_t.len() >= self.caps.conn {
            self.cut("conn", t);
            return;
        }
        self.conn_counts[fi] += 1;
        self.conn_t.push(t.0);
        self.conn_flow.push(flow);
        self.conn_rows.push(*s);
        self.conn_counters.push(*c);
        if let Some(pr) = &mut self.paths {
            pr.conn_path.push(path);
        }
    }

    /// The run ends at `end`: size bin vectors for it.
    pub fn set_horizon(&mut self, end: SimTime) {
        self.nbins = end.0.div_ceil(self.bin.0.max(1)) as usize;
    }

    /// The bin that holds time `t`. Simulated time only moves forward, so nearly every call
    /// falls into the bin of the call before: that bin is cached, and the 64-bit division
    /// (10-40 cycles, several per packet hop when links and flows are recorded) is done once
    /// per bin instead of once per call. Exact for any `t`: one before the cached bin wraps the
    /// subtraction to a large number and is divided again.
    #[inline]
    pub(super) fn bin_at(&mut self, t: SimTime) -> usize {
        let (start, b) = self.bin_cache;
        if t.0.wrapping_sub(start) < self.bin.0 {
            return b;
        }
        let b = t.0 / self.bin.0;
        self.bin_cache = (b * self.bin.0, b as usize);
        b as usize
    }

    /// Add to a flow's counters at time `t`.
    pub fn flow(&mut self, t: SimTime, flow: u32, f: impl Fn(&mut FlowBin)) {
        let fi = flow as usize;
        if self.flows_on {
            let b = self.bin_at(t) as u32;
            f(sparse_bin(&mut self.flow_bins[fi], b, self.nbins));
        } else {
            f(&mut self.flow_totals[fi]);
        }
    }

    /// Flow `fi`'s counters over the run (the sums of its bins when they are recorded: every
    /// count goes into exactly one bin, so the sums are exact).
    pub fn flow_total(&self, fi: usize) -> FlowBin {
        if !self.flows_on {
            return self.flow_totals[fi];
        }
        let mut t = FlowBin::default();
        for (_, b) in &self.flow_bins[fi] {
            t.app_sent_bytes += b.app_sent_bytes;
            t.wire_sent_bytes += b.wire_sent_bytes;
            t.sent_packets += b.sent_packets;
            t.wire_recv_bytes += b.wire_recv_bytes;
            t.recv_packets += b.recv_packets;
            t.delivered_bytes += b.delivered_bytes;
        }
        t
    }

    /// Bytes delivered in order to the application on one stream of a flow.
    pub fn stream_delivered(&mut self, t: SimTime, flow: u32, stream: u64, bytes: u64) {
        if !self.flows_on {
            return;
        }
        let mut i = self.stream_first[flow as usize];
        let mut last = u32::MAX;
        while i != u32::MAX && self.stream_keys[i as usize].1 != stream {
            last = i;
            i = self.stream_next[i as usize];
        }
        if i == u32::MAX {
            i = self.stream_keys.len() as u32;
            self.stream_keys.push((flow, stream));
            self.stream_bins.push(Vec::new());
            self.stream_next.push(u32::MAX);
            match last {
                u32::MAX => self.stream_first[flow as usize] = i,
                l => self.stream_next[l as usize] = i,
            }
        }
        let b = self.bin_at(t) as u32;
        *sparse_bin(&mut self.stream_bins[i as usize], b, self.nbins) += bytes;
    }

    /// The series cut at `max_samples` (`meta.truncated_series`): `conn:<flow>` or
    /// `queue:<queue>`, named as in the tables, each with the time of its last recorded sample.
    pub fn truncated(&self, flow_names: &[String], chan_names: &[String]) -> Vec<serde_json::Value> {
        let entry = |t: &Truncated| {
            let (table, name, last_ps) = match *t {
                Truncated::Conn(f) => {
                    let last = self.conn_flow.iter().rposition(|&x| x == f).map(|i| self.conn_t[i]);
                    ("conn", flow_names[f as usize].as_str(), last)
                }
                Truncated::Queue(c) => {
                    let last = self.queues.key.iter().rposition(|&x| x == c).map(|i| self.queues.t_ps[i]);
                    ("queue", chan_names[c as usize].as_str(), last)
                }
            };
            serde_json::json!({
                "table": table,
                "name": name,
                "last_t_s": last_ps.map(|ps| ps as f64 * 1e-12),
            })
        };
        self.truncated.iter().map(entry).collect()
    }

    /// One packet event of a traced flow; `uid` identifies the packet network-wide.
    #[inline(always)]
    pub fn trace(&mut self, t: SimTime, flow: u32, node: NodeId, uid: u64, bytes: u32, recv: bool) {
        if self.any_trace {
            self.trace_selected(t, flow, node, uid, bytes, recv);
        }
    }

    #[inline(never)]
    fn trace_selected(&mut self, t: SimTime, flow: u32, node: NodeId, uid: u64, bytes: u32, recv: bool) {
        if self.trace_sel[flow as usize] {
            if self.trace.t_ps.len() >= self.caps.packets {
                self.cut("packets", t);
                return;
            }
            self.trace.t_ps.push(t.0);
            self.trace.key.push(flow);
            self.trace.a.push(bytes as i64);
            self.trace.b.push(recv as i64);
            self.trace_node.push(node.0);
            self.trace_uid.push(uid);
        }
    }

    /// A packet was dropped (the `Sink` hook with the packet's fields, called directly by the run
    /// loop's fan-out).
    #[inline]
    pub(crate) fn on_dropped(
        &mut self,
        now: SimTime,
        chan: ChanId,
        flow: u32,
        ip_bytes: u32,
        why: DropReason,
    ) {
        self.flow_dropped[flow as usize] += 1;
        if self.drops_on {
            if self.drops.t_ps.len() >= self.caps.drops {
                self.cut("drops", now);
                return;
            }
            self.drops.t_ps.push(now.0);
            self.drops.key.push(chan.0);
            self.drops.a.push(ip_bytes as i64);
            self.drops.b.push(flow as i64);
            self.drop_reason.push(why.as_str());
        }
    }

    /// A frame of `frame_bytes` arrived at the far end of `chan`.
    #[inline]
    pub(crate) fn on_link_delivered(&mut self, now: SimTime, chan: ChanId, frame_bytes: u64) {
        let c = chan.0 as usize;
        if self.link_sel[c] {
            let b = self.bin_at(now);
            let v = &mut self.link_bins[c];
            if v.len() <= b {
                if v.capacity() == 0 {
                    v.reserve_exact(self.nbins.max(b + 1));
                }
                v.resize(b + 1, 0);
            }
            v[b] += frame_bytes;
        }
    }

    /// A packet in its flow's forward direction left its source (`recv` false) or reached its
    /// destination (`recv` true) at `node`.
    #[inline]
    pub(crate) fn on_forward_packet(
        &mut self,
        now: SimTime,
        flow: u32,
        node: NodeId,
        uid: u64,
        ip_bytes: u32,
        recv: bool,
    ) {
        let bytes = ip_bytes as u64;
        self.flow(now, flow, |b| {
            if recv {
                b.wire_recv_bytes += bytes;
                b.recv_packets += 1;
            } else {
                b.wire_sent_bytes += bytes;
                b.sent_packets += 1;
            }
        });
        self.trace(now, flow, node, uid, ip_bytes, recv);
    }

    /// `table` reached its row cap at `t`: noted once, with the rows it holds.
    #[cold]
    #[inline(never)]
    fn cut(&mut self, table: &'static str, t: SimTime) {
        if self.cuts.iter().all(|c| c.table != table) {
            let rows = match table {
                "drops" => self.drops.t_ps.len(),
                "queues" => self.queues.t_ps.len(),
                "conn" => self.conn_t.len(),
                _ => self.trace.t_ps.len(),
            };
            self.cuts.push(TableCut { table, t_ps: t.0, rows: rows as u64 });
        }
    }

    /// The tables that stopped growing at their row caps.
    pub fn truncated_tables(&self) -> Vec<TableCut> {
        self.cuts.clone()
    }

    fn note_truncated(&mut self, t: Truncated) {
        if !self.truncated.contains(&t) {
            self.truncated.push(t);
        }
    }

    /// Build the output tables.
    pub fn tables(&self, info: &RunInfo<'_>) -> Vec<(String, Table)> {
        let (end, flow_names, chan_names) = (info.end, info.flow_names, info.chan_names);
        let (chan_rate_bps, node_names) = (info.chan_rate_bps, info.node_names);
        let nbins = (end.0.div_ceil(self.bin.0)) as usize;
        let bin_s = self.bin.as_secs_f64();
        let mut out = Vec::new();

        // flows: one row per flow per bin, zero-filled.
        let mut t = Vec::new();
        let mut fl = Vec::new();
        let mut cols: [Vec<i64>; 6] = Default::default();
        if self.flows_on {
            for (fi, bins) in self.flow_bins.iter().enumerate() {
                let mut touched = bins.iter().peekable();
                for b in 0..nbins {
                    let x = match touched.peek() {
                        Some(&&(tb, x)) if tb as usize == b => {
                            touched.next();
                            x
                        }
                        _ => FlowBin::default(),
                    };
                    t.push(b as f64 * bin_s);
                    fl.push(fi as u32);
                    let vals = [
                        x.app_sent_bytes,
                        x.wire_sent_bytes,
                        x.sent_packets,
                        x.wire_recv_bytes,
                        x.recv_packets,
                        x.delivered_bytes,
                    ];
                    for (c, v) in cols.iter_mut().zip(vals) {
                        c.push(v as i64);
                    }
                }
            }
        }
        let [a, w, sp, wr, rp, d] = cols;
        out.push((
            "flows".into(),
            vec![
                ("t_s".into(), Column::F64(t)),
                ("flow".into(), dict(fl, flow_names)),
                ("app_sent_bytes".into(), Column::I64(a)),
                ("wire_sent_bytes".into(), Column::I64(w)),
                ("sent_packets".into(), Column::I64(sp)),
                ("wire_recv_bytes".into(), Column::I64(wr)),
                ("recv_packets".into(), Column::I64(rp)),
                ("delivered_bytes".into(), Column::I64(d)),
            ],
        ));

        // links: bytes delivered per channel per bin.
        let (mut t, mut l, mut by, mut ut) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for (ci, bins) in self.link_bins.iter().enumerate() {
            if !self.link_sel[ci] {
                continue;
            }
            for b in 0..nbins {
                let x = bins.get(b).copied().unwrap_or(0);
                t.push(b as f64 * bin_s);
                l.push(ci as u32);
                by.push(x as i64);
                ut.push(x as f64 * 8.0 / (chan_rate_bps[ci] as f64 * bin_s));
            }
        }
        out.push((
            "links".into(),
            vec![
                ("t_s".into(), Column::F64(t)),
                ("link".into(), dict(l, chan_names)),
                ("bytes".into(), Column::I64(by)),
                ("utilization".into(), Column::F64(ut)),
            ],
        ));

        let secs = |v: &[u64]| Column::F64(v.iter().map(|&p| p as f64 * 1e-12).collect());
        let names = |v: &[u32], n: &[String]| dict(v.to_vec(), n);

        out.push((
            "queues".into(),
            vec![
                ("t_s".into(), secs(&self.queues.t_ps)),
                ("queue".into(), names(&self.queues.key, chan_names)),
                ("packets".into(), Column::I64(self.queues.a.clone())),
                ("bytes".into(), Column::I64(self.queues.b.clone())),
            ],
        ));
        let drop_flow: Vec<u32> = self.drops.b.iter().map(|&f| f as u32).collect();
        out.push((
            "drops".into(),
            vec![
                ("t_s".into(), secs(&self.drops.t_ps)),
                ("queue".into(), names(&self.drops.key, chan_names)),
                ("flow".into(), names(&drop_flow, flow_names)),
                ("bytes".into(), Column::I64(self.drops.a.clone())),
                ("reason".into(), interned(&self.drop_reason)),
            ],
        ));
        let ss = |f: fn(&ConnSample) -> i64| Column::I64(self.conn_rows.iter().map(f).collect());
        let cc = |f: fn(&ConnCounters) -> u64| {
            Column::I64(self.conn_counters.iter().map(|c| f(c) as i64).collect())
        };
        let sd = |f: fn(&ConnSample) -> SimDuration| {
            Column::F64(self.conn_rows.iter().map(|r| f(r).as_secs_f64()).collect())
        };
        // NaN where the transport does not expose the value (quinn).
        let sdo = |f: fn(&ConnSample) -> Option<SimDuration>| {
            Column::F64(self.conn_rows.iter().map(|r| f(r).map_or(f64::NAN, |d| d.as_secs_f64())).collect())
        };
        out.push((
            "conn".into(),
            vec![
                ("t_s".into(), secs(&self.conn_t)),
                ("flow".into(), names(&self.conn_flow, flow_names)),
                ("cwnd_bytes".into(), ss(|r| r.cwnd.min(i64::MAX as u64) as i64)),
                (
                    "ssthresh_bytes".into(),
                    ss(|r| if r.ssthresh == u64::MAX { -1 } else { r.ssthresh as i64 }),
                ),
                ("inflight_bytes".into(), ss(|r| r.inflight as i64)),
                ("srtt_s".into(), sd(|r| r.srtt)),
                ("latest_rtt_s".into(), sd(|r| r.latest_rtt)),
                ("min_rtt_s".into(), sd(|r| r.min_rtt)),
                ("rttvar_s".into(), sdo(|r| r.rttvar)),
                ("rto_s".into(), sdo(|r| r.rto)),
                ("packets_sent".into(), cc(|c| c.packets_sent)),
                ("packets_acked".into(), cc(|c| c.packets_acked)),
                ("packets_lost".into(), cc(|c| c.packets_lost)),
                ("retransmitted_bytes".into(), cc(|c| c.retransmitted_bytes)),
                ("timeouts".into(), cc(|c| c.timeouts)),
                ("ack_frames_sent".into(), cc(|c| c.ack_frames_sent)),
                ("ce_marks".into(), cc(|c| c.ce_marks)),
                ("ecn_events".into(), cc(|c| c.ecn_events)),
            ],
        ));
        // streams: delivered bytes per (flow, stream) per bin, zero-filled.
        let (mut t, mut fl, mut st, mut by) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut order: Vec<usize> = (0..self.stream_keys.len()).collect();
        order.sort_by_key(|&i| self.stream_keys[i]);
        for i in order {
            let (f, sid) = self.stream_keys[i];
            let mut touched = self.stream_bins[i].iter().peekable();
            for b in 0..nbins {
                t.push(b as f64 * bin_s);
                fl.push(f);
                st.push(sid as i64);
                let v = touched.next_if(|(tb, _)| *tb as usize == b).map_or(0, |&(_, v)| v);
                by.push(v as i64);
            }
        }
        out.push((
            "streams".into(),
            vec![
                ("t_s".into(), Column::F64(t)),
                ("flow".into(), dict(fl, flow_names)),
                ("stream".into(), Column::I64(st)),
                ("delivered_bytes".into(), Column::I64(by)),
            ],
        ));
        out.push((
            "packets".into(),
            vec![
                ("t_ps".into(), Column::I64(self.trace.t_ps.iter().map(|&x| x as i64).collect())),
                ("t_s".into(), secs(&self.trace.t_ps)),
                ("flow".into(), names(&self.trace.key, flow_names)),
                ("node".into(), names(&self.trace_node, node_names)),
                ("uid".into(), Column::I64(self.trace_uid.iter().map(|&u| u as i64).collect())),
                ("bytes".into(), Column::I64(self.trace.a.clone())),
                (
                    "event".into(),
                    Column::Dict {
                        codes: self.trace.b.iter().map(|&r| u32::from(r == 1)).collect(),
                        labels: vec!["send".into(), "recv".into()],
                    },
                ),
            ],
        ));
        // Checked against `output::TABLES` once the delay columns are added (`Sinks::finish`).
        out
    }
}

impl Recorder {
    /// Some queue is recorded (else `queue_changed` records nothing).
    #[inline(always)]
    pub(crate) fn records_queues(&self) -> bool {
        self.any_queue
    }
}

impl Sink for Recorder {
    fn queue_changed(&mut self, now: SimTime, chan: ChanId, packets: usize, bytes: u64) {
        let c = chan.0 as usize;
        let wrote = self.queue_sel[c]
            && self.queue_counts[c] < self.max_samples
            && self.queues.t_ps.len() < self.caps.queues;
        self.sub_queue_row(wrote);
        if !self.queue_sel[c] {
            return;
        }
        if self.queue_counts[c] >= self.max_samples {
            self.note_truncated(Truncated::Queue(chan.0));
            return;
        }
        if self.queues.t_ps.len() >= self.caps.queues {
            self.cut("queues", now);
            return;
        }
        self.queue_counts[c] += 1;
        self.queues.t_ps.push(now.0);
        self.queues.key.push(chan.0);
        self.queues.a.push(packets as i64);
        self.queues.b.push(bytes as i64);
    }

    #[inline]
    fn dropped(&mut self, now: SimTime, chan: ChanId, p: &PacketInfo, why: DropReason) {
        self.on_dropped(now, chan, p.flow, p.ip_bytes, why);
    }

    #[inline]
    fn link_delivered(&mut self, now: SimTime, chan: ChanId, _p: &PacketInfo, frame_bytes: u64) {
        self.on_link_delivered(now, chan, frame_bytes);
    }

    #[inline]
    fn packet_sent(&mut self, now: SimTime, node: NodeId, p: &PacketInfo) {
        if p.forward {
            self.on_forward_packet(now, p.flow, node, p.uid, p.ip_bytes, false);
        }
    }

    #[inline]
    fn packet_received(&mut self, now: SimTime, p: &PacketInfo) {
        if p.forward {
            self.on_forward_packet(now, p.flow, p.dst, p.uid, p.ip_bytes, true);
        }
    }

    #[inline]
    fn app_sent(&mut self, now: SimTime, flow: u32, bytes: u64) {
        self.flow(now, flow, |b| b.app_sent_bytes += bytes);
    }

    #[inline]
    fn app_delivered(&mut self, now: SimTime, flow: u32, stream: Option<u64>, bytes: u64) {
        if let Some(s) = stream {
            self.stream_delivered(now, flow, s, bytes);
        }
        self.flow(now, flow, |b| b.delivered_bytes += bytes);
    }

    fn conn_sample(&mut self, t: SimTime, flow: u32, s: &ConnSample, c: &ConnCounters) {
        let fi = flow as usize;
        if !self.conn_sel[fi] {
            return;
        }
        if self.conn_grid == 0 {
            self.push_conn(t, flow, CONNECTION, s, c);
            return;
        }
        // The held state was in force up to (not including) t.
        self.flush_held(fi, t.0, false);
        self.conn_held[fi] = Some((t.0, *s, *c));
    }

    fn finish(&mut self, info: &RunInfo<'_>) -> Vec<(String, Table)> {
        if self.conn_grid != 0 {
            // Each flow's last state, if a grid point up to the end falls in it (these rows
            // come after the others, so a flow's rows stay in time order).
            for fi in 0..self.conn_held.len() {
                self.flush_held(fi, info.end.0, true);
            }
            self.flush_path_held(info.end.0);
        }
        self.tables(info)
    }
}

#[cfg(test)]
#[path = "record_caps_tests.rs"]
mod caps_tests;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cached_bin_is_the_divided_one_for_any_time_order() {
        // 0.5 s bins; times forward, within a bin, on bin edges, and backwards (which the run
        // never does, but the cache must not be wrong for it).
        let bin = SimDuration::from_millis(500);
        let mut r = Recorder::new(bin, 1, true, vec![], vec![], false, vec![false], vec![false], 10);
        let ms = [0u64, 1, 499, 500, 500, 999, 1000, 7_250, 7_000, 100, 0, 49_999, 50_000, 3];
        for m in ms {
            let t = SimTime::from_millis(m);
            assert_eq!(r.bin_at(t), (t.0 / bin.0) as usize, "t = {m} ms");
        }
        let last_ps = SimTime(499_999_999_999);
        assert_eq!(r.bin_at(last_ps), 0);
        assert_eq!(r.bin_at(SimTime(500_000_000_000)), 1);
    }
}
