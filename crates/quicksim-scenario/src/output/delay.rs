//! Delay statistics: every delivered packet's one-way delay (from leaving its source host to
//! reaching its destination) and the part of it spent waiting in queues, summarised per flow and
//! per queue without keeping the packets (`run.record.delays`).
//!
//! A packet's times are kept only while it is in the network, in a table indexed by its uid
//! (uids are handed out in creation order, so the packets in flight at one time fall in
//! different slots of a table a little larger than their number). The samples feed DDSketches (the `sketches-ddsketch`
//! crate, Masson et al., VLDB 2019): every quantile is within 1 % (relative) of the exact
//! sample quantile (`alpha` = 0.01; a delay below 1 ns counts as exactly zero), in a few KiB
//! per series whatever the number of packets. The sketch's arithmetic has no randomness, so the
//! same run gives the same numbers bit for bit.
//!
//! What is measured: a flow's one-way delay counts its forward (data) packets only, as
//! Pantheon's does; a queue's delay counts every packet that crossed that link direction (wait
//! from its arrival at the interface until its transmission starts). The columns appended to
//! the built-in tables: per flow and bin (the bin of the delivery) in `flows`, per link
//! direction and bin (the bin the transmission started) in `links`; totals in `summary.json`.

use super::{Column, Table};
use quicksim_engine::{SimDuration, SimTime};
use sketches_ddsketch::{Config, DDSketch};

/// Relative accuracy of every quantile (DDSketch's `alpha`).
pub const RELATIVE_ACCURACY: f64 = 0.01;
/// Bins of one sketch before its lowest ones collapse: 2048 bins at 1 % cover delays from 1 ns
/// to beyond 10^8 s, so no delay a run can have is collapsed.
const MAX_BINS: u32 = 2048;
/// Values below this (s) count as zero delay.
const MIN_VALUE_S: f64 = 1e-9;

/// The flows table's delay columns, in order (after the built-in ones).
pub const FLOW_COLUMNS: [&str; 6] =
    ["owd_mean_s", "owd_p50_s", "owd_p95_s", "owd_p99_s", "queueing_mean_s", "queueing_p95_s"];
/// The links table's delay columns (the queue in front of that link direction).
pub const LINK_COLUMNS: [&str; 3] = ["queueing_mean_s", "queueing_p95_s", "queueing_p99_s"];

fn sketch() -> DDSketch {
    DDSketch::new(Config::new(RELATIVE_ACCURACY, MAX_BINS, MIN_VALUE_S))
}

fn ps_s(ps: u64) -> f64 {
    ps as f64 * 1e-12
}

/// A series of samples: its sketch over the whole run and one for the current bin, and the
/// statistics of the bins already closed. With bins, a sample goes into the bin's sketch only,
/// and a closed bin is merged into the total (a merge per bin instead of a second sketch
/// update, with its logarithm, per sample; merging is exact: the same bins, the same counts).
struct Series {
    total: DDSketch,
    bin: Option<(u32, DDSketch)>,
    /// Closed bins, in time order: (bin index, mean, p50, p95, p99).
    closed: Vec<(u32, [f64; 4])>,
}

impl Series {
    fn new() -> Series {
        Series { total: sketch(), bin: None, closed: Vec::new() }
    }

    #[inline]
    fn add(&mut self, b: u32, v: f64, per_bin: bool) {
        if !per_bin {
            self.total.add(v);
            return;
        }
        match &mut self.bin {
            Some((cur, s)) if *cur == b => s.add(v),
            _ => self.open(b, v),
        }
    }

    #[cold]
    fn open(&mut self, b: u32, v: f64) {
        self.close();
        let mut s = sketch();
        s.add(v);
        self.bin = Some((b, s));
    }

    fn close(&mut self) {
        if let Some((b, s)) = self.bin.take() {
            self.closed.push((b, stats(&s)));
            merge(&mut self.total, &s);
        }
    }

    /// The whole run's sketch, the open bin included.
    fn whole(&self) -> std::borrow::Cow<'_, DDSketch> {
        match &self.bin {
            None => std::borrow::Cow::Borrowed(&self.total),
            Some((_, s)) => {
                let mut t = self.total.clone();
                merge(&mut t, s);
                std::borrow::Cow::Owned(t)
            }
        }
    }
}

/// Merges `b` into `a` (sketches of the same configuration: it cannot fail).
fn merge(a: &mut DDSketch, b: &DDSketch) {
    a.merge(b).expect("sketches of one configuration merge");
}

/// Mean, p50, p95, p99 of a sketch (NaN when empty).
fn stats(s: &DDSketch) -> [f64; 4] {
    let q = |p: f64| s.quantile(p).ok().flatten().unwrap_or(f64::NAN);
    let mean = match s.count() {
        0 => f64::NAN,
        n => s.sum().unwrap_or(0.0) / n as f64,
    };
    [mean, q(0.5), q(0.95), q(0.99)]
}

/// A packet in the network: its uid (0: the slot is free), when it left its source, when it
/// arrived at the interface it is waiting at (or crossing), and its waits so far, in ps.
#[derive(Clone, Copy, Default)]
struct InFlight {
    uid: u64,
    sent: u64,
    enter: u64,
    queued: u64,
}

/// Slots of the packet table at the start, and at most (32 B each: 32 MiB). Beyond, a packet
/// whose slot is taken by a newer one is forgotten (a packet that never arrives nor is
/// reported dropped must not make the table grow without end).
const FIRST_SLOTS: usize = 1 << 10;
const MAX_SLOTS: usize = 1 << 20;

/// The delay statistics of a run.
pub(crate) struct DelayStats {
    /// Per flow: recorded (`run.record.delays`).
    flow_sel: Vec<bool>,
    /// Per channel: its queue recorded.
    chan_sel: Vec<bool>,
    /// Some queue is recorded: every packet is followed (else only the recorded flows' data
    /// packets).
    any_chan: bool,
    /// Something is recorded (else every hook returns at once).
    pub on: bool,
    /// Per-bin columns (the `flows` / `links` tables are recorded).
    flows_bins: bool,
    links_bins: bool,
    bin_ps: u64,
    /// The packets in the network, in the slot `uid & (len - 1)` (uids are consecutive, so the
    /// packets in flight at one time rarely share a slot; when they do, the table doubles).
    table: Vec<InFlight>,
    /// Per flow: one-way delay and queueing delay, made on the first sample.
    flows: Vec<Option<Box<[Series; 2]>>>,
    chans: Vec<Option<Box<Series>>>,
}

impl DelayStats {
    pub(crate) fn new(
        bin: SimDuration,
        flow_sel: Vec<bool>,
        chan_sel: Vec<bool>,
        flows_bins: bool,
        links_bins: bool,
    ) -> DelayStats {
        let any_chan = chan_sel.iter().any(|&b| b);
        let on = any_chan || flow_sel.iter().any(|&b| b);
        DelayStats {
            flows: (0..flow_sel.len()).map(|_| None).collect(),
            chans: (0..chan_sel.len()).map(|_| None).collect(),
            flow_sel,
            chan_sel,
            any_chan,
            on,
            flows_bins,
            links_bins,
            bin_ps: bin.0.max(1),
            table: if on { vec![InFlight::default(); FIRST_SLOTS] } else { Vec::new() },
        }
    }

    /// The statistics `run.record.delays` asks for (flows by name, or all, or none; the
    /// recorded queues with it), for flows `names`; the error (field, message) names a flow that
    /// is not there.
    pub(crate) fn from_record(
        rc: &crate::schema::RecordCfg,
        names: &[String],
        rec: &super::record::Recorder,
    ) -> Result<DelayStats, (&'static str, String)> {
        if let crate::schema::Select::Names(v) = &rc.delays {
            if let Some(n) = v.iter().find(|n| !names.contains(n)) {
                return Err(("run.record.delays", format!("{n:?} is not a flow")));
            }
        }
        let flows = names.iter().map(|n| rc.delays.includes(n)).collect();
        let on = rc.delays != crate::schema::Select::All(false);
        let chans = rec.queue_sel.iter().map(|&q| q && on).collect();
        Ok(DelayStats::new(rec.bin, flows, chans, rc.flows, rec.link_sel.iter().any(|&l| l)))
    }

    /// Whether a packet of this direction is followed at all.
    #[inline]
    fn follows(&self, forward: bool) -> bool {
        self.on && (forward || self.any_chan)
    }

    #[inline]
    fn slot(&mut self, uid: u64) -> Option<&mut InFlight> {
        let mask = self.table.len() - 1;
        let s = &mut self.table[uid as usize & mask];
        (s.uid == uid).then_some(s)
    }

    /// A host put packet `uid` of flow `flow` on its first link.
    #[inline]
    pub(crate) fn sent(&mut self, now: SimTime, uid: u64, flow: u32, forward: bool) {
        if !self.follows(forward) || !(self.any_chan || self.flow_sel[flow as usize]) {
            return;
        }
        let p = InFlight { uid, sent: now.0, enter: now.0, queued: 0 };
        let mask = self.table.len() - 1;
        let s = &mut self.table[uid as usize & mask];
        if s.uid == 0 {
            *s = p;
        } else {
            self.insert_colliding(p);
        }
    }

    /// The slot of `p` holds another packet: double the table until every packet has its own
    /// slot (up to `MAX_SLOTS`; then the older packet is forgotten).
    #[cold]
    fn insert_colliding(&mut self, p: InFlight) {
        loop {
            let n = self.table.len();
            if n >= MAX_SLOTS {
                self.table[p.uid as usize & (n - 1)] = p;
                return;
            }
            let mut t = vec![InFlight::default(); 2 * n];
            let mask = 2 * n - 1;
            let mut ok = true;
            for q in self.table.iter().copied().filter(|q| q.uid != 0).chain([p]) {
                let s = &mut t[q.uid as usize & mask];
                ok &= s.uid == 0;
                *s = q;
            }
            self.table = t;
            if ok {
                return;
            }
        }
    }

    /// `chan` starts serializing packet `uid`: its wait in that queue ends.
    #[inline]
    pub(crate) fn tx_started(&mut self, now: SimTime, chan: u32, uid: u64, forward: bool) {
        if !self.follows(forward) {
            return;
        }
        let Some(s) = self.slot(uid) else { return };
        let wait = now.0 - s.enter;
        s.queued += wait;
        let c = chan as usize;
        if self.chan_sel[c] {
            let b = (now.0 / self.bin_ps) as u32;
            let per_bin = self.links_bins;
            self.chans[c].get_or_insert_with(|| Box::new(Series::new())).add(b, ps_s(wait), per_bin);
        }
    }

    /// Packet `uid` arrived at the far end of a link: it waits at the next interface from now.
    #[inline]
    pub(crate) fn link_delivered(&mut self, now: SimTime, uid: u64, forward: bool) {
        if !self.follows(forward) {
            return;
        }
        if let Some(s) = self.slot(uid) {
            s.enter = now.0;
        }
    }

    /// Packet `uid` of flow `flow` reached its destination (`forward`: in the flow's data
    /// direction).
    #[inline]
    pub(crate) fn received(&mut self, now: SimTime, uid: u64, flow: u32, forward: bool) {
        if !self.follows(forward) {
            return;
        }
        let Some(s) = self.slot(uid) else { return };
        let p = std::mem::take(s);
        let f = flow as usize;
        if forward && self.flow_sel[f] {
            let b = (now.0 / self.bin_ps) as u32;
            let per_bin = self.flows_bins;
            let s = self.flows[f].get_or_insert_with(|| Box::new([Series::new(), Series::new()]));
            s[0].add(b, ps_s(now.0 - p.sent), per_bin);
            s[1].add(b, ps_s(p.queued), per_bin);
        }
    }

    /// Packet `uid` was dropped.
    #[inline]
    pub(crate) fn dropped(&mut self, uid: u64, forward: bool) {
        if !self.follows(forward) {
            return;
        }
        if let Some(s) = self.slot(uid) {
            *s = InFlight::default();
        }
    }

    /// Mean and quantiles (s) of flow `f`'s one-way delay and queueing delay over the run, as
    /// `summary.json` keys; None if the flow is not recorded.
    pub(crate) fn flow_totals(&self, f: usize) -> Option<serde_json::Value> {
        if !self.flow_sel[f] {
            return None;
        }
        let (o, q) = match &self.flows[f] {
            Some(s) => (stats(&s[0].whole()), stats(&s[1].whole())),
            None => ([f64::NAN; 4], [f64::NAN; 4]),
        };
        Some(block(&[("owd", o), ("queueing", q)]))
    }

    /// The same over the packets of every recorded flow together (the sketches merged: the same
    /// 1 % bound), for a run's total; None if no flow is recorded.
    pub(crate) fn all_flows_totals(&self) -> Option<serde_json::Value> {
        if !self.flow_sel.iter().any(|&b| b) {
            return None;
        }
        let (mut o, mut q) = (sketch(), sketch());
        for s in self.flows.iter().flatten() {
            merge(&mut o, &s[0].whole());
            merge(&mut q, &s[1].whole());
        }
        Some(block(&[("owd", stats(&o)), ("queueing", stats(&q))]))
    }

    /// The same for channel `c`'s queue.
    pub(crate) fn chan_totals(&self, c: usize) -> Option<serde_json::Value> {
        if !self.chan_sel[c] {
            return None;
        }
        let q = self.chans[c].as_ref().map_or([f64::NAN; 4], |s| stats(&s.whole()));
        Some(block(&[("queueing", q)]))
    }

    /// Appends the per-bin columns to the `flows` and `links` tables (`FLOW_COLUMNS`,
    /// `LINK_COLUMNS`), row for row as the recorder wrote them: per flow (per selected link)
    /// every bin up to `nbins`; NaN where nothing was measured.
    pub(crate) fn add_columns(
        &mut self,
        tables: &mut [(String, Table)],
        nbins: usize,
        flows_on: bool,
        link_sel: &[bool],
    ) {
        for s in self.flows.iter_mut().flatten() {
            s[0].close();
            s[1].close();
        }
        for s in self.chans.iter_mut().flatten() {
            s.close();
        }
        let nan4 = [f64::NAN; 4];
        // Per bin of a series: its closed stats, NaN elsewhere (and for a flow not recorded).
        let dense = |s: Option<&Series>| -> Vec<[f64; 4]> {
            let mut v = vec![nan4; nbins];
            for &(b, x) in s.map_or(&[][..], |s| &s.closed) {
                if let Some(slot) = v.get_mut(b as usize) {
                    *slot = x;
                }
            }
            v
        };
        let mut fcols: [Vec<f64>; 6] = Default::default();
        if flows_on {
            for f in &self.flows {
                let o = dense(f.as_ref().map(|s| &s[0]));
                let q = dense(f.as_ref().map(|s| &s[1]));
                for (o, q) in o.iter().zip(&q) {
                    for (c, v) in fcols.iter_mut().zip([o[0], o[1], o[2], o[3], q[0], q[2]]) {
                        c.push(v);
                    }
                }
            }
        }
        let mut lcols: [Vec<f64>; 3] = Default::default();
        for (c, s) in self.chans.iter().enumerate() {
            if !link_sel[c] {
                continue;
            }
            for x in dense(s.as_deref()) {
                for (col, v) in lcols.iter_mut().zip([x[0], x[2], x[3]]) {
                    col.push(v);
                }
            }
        }
        for (name, table) in tables.iter_mut() {
            match name.as_str() {
                "flows" => {
                    for (c, v) in FLOW_COLUMNS.iter().zip(std::mem::take(&mut fcols)) {
                        table.push((c.to_string(), Column::F64(v)));
                    }
                }
                "links" => {
                    for (c, v) in LINK_COLUMNS.iter().zip(std::mem::take(&mut lcols)) {
                        table.push((c.to_string(), Column::F64(v)));
                    }
                }
                _ => {}
            }
        }
    }
}

/// `{"<name>_mean_s": .., "<name>_p50_s": .., "<name>_p95_s": .., "<name>_p99_s": ..}` for each
/// series; NaN (nothing measured) becomes null.
fn block(series: &[(&str, [f64; 4])]) -> serde_json::Value {
    let mut m = serde_json::Map::new();
    for (name, v) in series {
        for (stat, x) in ["mean", "p50", "p95", "p99"].iter().zip(v) {
            let x = if x.is_finite() { serde_json::json!(x) } else { serde_json::Value::Null };
            m.insert(format!("{name}_{stat}_s"), x);
        }
    }
    serde_json::Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sketch's quantiles are within its relative accuracy of the exact ones.
    #[test]
    fn quantiles_within_one_percent() {
        let mut s = sketch();
        let v: Vec<f64> = (1..=10_000).map(|i| i as f64 * 1e-5).collect();
        for x in &v {
            s.add(*x);
        }
        let [mean, p50, p95, p99] = stats(&s);
        assert!((mean - 0.050005).abs() < 1e-9);
        // Exact rank quantiles of 1..=10000 (x 1e-5): index q*(n-1).
        for (got, want) in [(p50, v[4999]), (p95, v[9499]), (p99, v[9899])] {
            assert!((got - want).abs() <= RELATIVE_ACCURACY * want, "{got} vs {want}");
        }
    }

    /// Packets are followed from source to destination through the table: waits add up, drops
    /// and deliveries free their slots, and colliding packets make it grow.
    #[test]
    fn table_follows_packets() {
        let bin = SimDuration::from_millis(100);
        let mut d = DelayStats::new(bin, vec![true], vec![true, false], true, true);
        let ms = |m: u64| SimTime(m * 1_000_000_000);
        d.sent(ms(0), 5, 0, true);
        d.sent(ms(0), 6, 0, true);
        d.sent(ms(1), 8, 0, true); // 7 was never sent by a host (not tracked)
        d.sent(ms(1), 5 + FIRST_SLOTS as u64, 0, true); // 5's slot: the table doubles
        assert_eq!(d.table.len(), 2 * FIRST_SLOTS);
        d.tx_started(ms(0), 0, 5, true); // no wait
        d.tx_started(ms(2), 0, 6, true); // waited 2 ms
        d.dropped(8, true);
        d.dropped(5 + FIRST_SLOTS as u64, true);
        d.link_delivered(ms(3), 5, true);
        d.tx_started(ms(4), 1, 5, true); // waited 1 ms at channel 1 (not a recorded queue)
        d.received(ms(10), 5, 0, true);
        d.received(ms(12), 6, 0, true);
        d.received(ms(12), 7, 0, true); // never sent: ignored
        assert!(d.table.iter().all(|s| s.uid == 0), "every slot freed");
        let t = d.flow_totals(0).unwrap();
        assert!((t["owd_mean_s"].as_f64().unwrap() - 0.011).abs() < 1e-12);
        assert!((t["queueing_mean_s"].as_f64().unwrap() - 0.0015).abs() < 1e-12);
        let c = d.chan_totals(0).unwrap();
        assert!((c["queueing_mean_s"].as_f64().unwrap() - 0.001).abs() < 1e-12);
        assert!(d.chan_totals(1).is_none());
    }
}
