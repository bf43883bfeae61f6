//! Delay statistics: every delivered packet's one-way delay (from leaving its source host to
//! reaching its destination) and the part of it spent waiting in queues, summarised per flow and
//! per queue without keeping the packets (`run.record.delays`, on by default).
//!
//! A packet's times are kept only while it is in the network, in a table indexed by its uid
//! (uids are handed out in creation order, so the packets in flight at one time fall in
//! different slots of a table a little larger than their number). The samples are counted per
//! DDSketch key (the `sketches-ddsketch` crate, Masson et al., VLDB 2019; `hist.rs` finds the
//! crate's key of an integer delay without a logarithm per sample): every quantile is the
//! crate's, within 1 % (relative) of the exact sample quantile (`alpha` = 0.01; a delay of at
//! most 1 ns counts as exactly zero), in 32 bytes per series for a few distinct delays (a
//! quiet flow) and a few hundred bytes past that, whatever the number of packets; the means
//! are exact. There is no randomness, so the same run gives the same numbers
//! bit for bit.
//!
//! What is measured: a flow's one-way delay counts its forward (data) packets only, as
//! Pantheon's does; a queue's delay counts every packet that crossed that link direction (wait
//! from its arrival at the interface until its transmission starts). The columns appended to
//! the built-in tables: per flow and bin (the bin of the delivery) in `flows`, per link
//! direction and bin (the bin the transmission started) in `links`; totals in `summary.json`.

use super::{Column, Table};
use hist::{Hist, Keys};
use quicksim_engine::{SimDuration, SimTime};

mod hist;

/// The flows table's delay columns, in order (after the built-in ones).
pub const FLOW_COLUMNS: [&str; 6] =
    ["owd_mean_s", "owd_p50_s", "owd_p95_s", "owd_p99_s", "queueing_mean_s", "queueing_p95_s"];
/// The links table's delay columns (the queue in front of that link direction).
pub const LINK_COLUMNS: [&str; 3] = ["queueing_mean_s", "queueing_p95_s", "queueing_p99_s"];

/// `N` series sampled together (a flow's one-way and queueing delay; a queue's wait): the
/// current bin's counts and the run's. A sample goes into the bin's counts only; at the first
/// sample of a later bin the bin's statistics are taken and its counts added to the run's (the
/// per-bin work happens once per bin, not per sample).
struct Series<const N: usize> {
    /// Where the current bin ends (ps; 0 before the first sample): its index is `(end - 1) /
    /// bin_ps`, computed at its close rather than stored (104 B instead of 112: a 112 B malloc
    /// chunk per flow instead of 128).
    end: u64,
    cur: [Hist; N],
    total: [Hist; N],
}

impl<const N: usize> Series<N> {
    fn new() -> Box<Series<N>> {
        Box::new(Series {
            end: 0,
            cur: std::array::from_fn(|_| Hist::default()),
            total: std::array::from_fn(|_| Hist::default()),
        })
    }

    /// Adds `ps[i]` (with key `keys[i]`) to series i at `now`; when `now` is in a later bin than
    /// the current one, the current one is closed first and its statistics go to `closed`.
    #[inline]
    fn add(
        &mut self,
        now: u64,
        bin_ps: u64,
        ps: [(Option<i32>, u64); N],
        keys: &mut Keys,
        closed: impl FnOnce(u32, [[f64; 4]; N]),
    ) {
        if now >= self.end {
            self.next_bin(now, bin_ps, keys, closed);
        }
        for (h, (k, v)) in self.cur.iter_mut().zip(ps) {
            h.add(k, v);
        }
    }

    #[cold]
    fn next_bin(&mut self, now: u64, bin_ps: u64, keys: &mut Keys, closed: impl FnOnce(u32, [[f64; 4]; N])) {
        self.close(bin_ps, keys, closed);
        self.end = (now / bin_ps + 1).saturating_mul(bin_ps);
    }

    /// Hands the current bin's statistics to `closed` (if it has samples) and adds its counts
    /// to the run's.
    fn close(&mut self, bin_ps: u64, keys: &mut Keys, closed: impl FnOnce(u32, [[f64; 4]; N])) {
        if self.cur[0].count() == 0 {
            return;
        }
        let mut x = [[f64::NAN; 4]; N];
        for ((x, c), t) in x.iter_mut().zip(self.cur.iter_mut()).zip(self.total.iter_mut()) {
            *x = c.close_into(keys, t);
        }
        closed(((self.end - 1) / bin_ps) as u32, x);
    }

    /// Without bins: the sample goes straight into the run's counts.
    #[inline]
    fn add_total(&mut self, ps: [(Option<i32>, u64); N]) {
        for (h, (k, v)) in self.total.iter_mut().zip(ps) {
            h.add(k, v);
        }
    }
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

/// A closed bin of a flow: (flow, bin, mean/p50/p95/p99 one-way delay, mean/p95 queueing).
type FlowBin = (u32, u32, [f64; 6]);
/// A closed bin of a queue: (channel, bin, mean/p95/p99 wait).
type ChanBin = (u32, u32, [f64; 3]);

/// The delay statistics of a run.
pub(crate) struct DelayStats {
    /// Per flow: recorded (`run.record.delays`).
    flow_sel: Vec<bool>,
    /// Per channel: its queue recorded.
    chan_sel: Vec<bool>,
    /// Some queue is recorded: every packet is followed (else only the recorded flows' data
    /// packets).
    any_chan: bool,
    /// Something is recorded (else every hook returns at once: the hooks test it inlined and
    /// call their bodies only when it is set, so a run without delay statistics pays a flag
    /// per hook, not a call).
    pub on: bool,
    /// Per-bin columns (the `flows` / `links` tables are recorded).
    flows_bins: bool,
    links_bins: bool,
    bin_ps: u64,
    /// The packets in the network, in the slot `uid & (len - 1)` (uids are consecutive, so the
    /// packets in flight at one time rarely share a slot; when they do, the table doubles).
    table: Vec<InFlight>,
    /// The sketch's key of a delay.
    keys: Keys,
    /// Per flow: one-way delay and queueing delay, made on the first sample.
    flows: Vec<Option<Box<Series<2>>>>,
    chans: Vec<Option<Box<Series<1>>>>,
    /// The statistics of the closed bins, in the order they closed.
    flow_bins: Vec<FlowBin>,
    chan_bins: Vec<ChanBin>,
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
            keys: Keys::new(),
            flow_bins: Vec::new(),
            chan_bins: Vec::new(),
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
    #[inline(always)]
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
    #[inline(always)]
    pub(crate) fn sent(&mut self, now: SimTime, uid: u64, flow: u32, forward: bool) {
        if self.follows(forward) {
            self.sent_on(now, uid, flow, forward);
        }
    }

    #[inline(never)]
    fn sent_on(&mut self, now: SimTime, uid: u64, flow: u32, forward: bool) {
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
    #[inline(always)]
    pub(crate) fn tx_started(&mut self, now: SimTime, chan: u32, uid: u64, forward: bool) {
        if self.follows(forward) {
            self.tx_started_on(now, chan, uid, forward);
        }
    }

    #[inline(never)]
    fn tx_started_on(&mut self, now: SimTime, chan: u32, uid: u64, forward: bool) {
        if !self.follows(forward) {
            return;
        }
        let Some(s) = self.slot(uid) else { return };
        let wait = now.0 - s.enter;
        s.queued += wait;
        let c = chan as usize;
        if self.chan_sel[c] {
            let k = self.keys.key(wait);
            let series = self.chans[c].get_or_insert_with(Series::new);
            if self.links_bins {
                let (keys, out) = (&mut self.keys, &mut self.chan_bins);
                series.add(now.0, self.bin_ps, [(k, wait)], keys, |b, [x]| {
                    out.push((chan, b, [x[0], x[2], x[3]]));
                });
            } else {
                series.add_total([(k, wait)]);
            }
        }
    }

    /// Packet `uid` arrived at the far end of a link: it waits at the next interface from now.
    #[inline(always)]
    pub(crate) fn link_delivered(&mut self, now: SimTime, uid: u64, forward: bool) {
        if self.follows(forward) {
            self.link_delivered_on(now, uid, forward);
        }
    }

    #[inline(never)]
    fn link_delivered_on(&mut self, now: SimTime, uid: u64, forward: bool) {
        if !self.follows(forward) {
            return;
        }
        if let Some(s) = self.slot(uid) {
            s.enter = now.0;
        }
    }

    /// Packet `uid` of flow `flow` reached its destination (`forward`: in the flow's data
    /// direction).
    #[inline(always)]
    pub(crate) fn received(&mut self, now: SimTime, uid: u64, flow: u32, forward: bool) {
        if self.follows(forward) {
            self.received_on(now, uid, flow, forward);
        }
    }

    #[inline(never)]
    fn received_on(&mut self, now: SimTime, uid: u64, flow: u32, forward: bool) {
        if !self.follows(forward) {
            return;
        }
        let Some(s) = self.slot(uid) else { return };
        s.uid = 0;
        let (owd, queued) = (now.0 - s.sent, s.queued);
        let f = flow as usize;
        if forward && self.flow_sel[f] {
            let v = [(self.keys.key(owd), owd), (self.keys.key(queued), queued)];
            let series = self.flows[f].get_or_insert_with(Series::new);
            if self.flows_bins {
                let (keys, out) = (&mut self.keys, &mut self.flow_bins);
                series.add(now.0, self.bin_ps, v, keys, |b, [o, q]| {
                    out.push((flow, b, [o[0], o[1], o[2], o[3], q[0], q[2]]));
                });
            } else {
                series.add_total(v);
            }
        }
    }

    /// Packet `uid` was dropped.
    #[inline(always)]
    pub(crate) fn dropped(&mut self, uid: u64, forward: bool) {
        if self.follows(forward) {
            self.dropped_on(uid, forward);
        }
    }

    #[inline(never)]
    fn dropped_on(&mut self, uid: u64, forward: bool) {
        if !self.follows(forward) {
            return;
        }
        if let Some(s) = self.slot(uid) {
            *s = InFlight::default();
        }
    }

    /// Closes every open bin (at the end of the run: later samples would be in the next one).
    fn close_all(&mut self) {
        let (keys, bin_ps) = (&mut self.keys, self.bin_ps);
        for (f, s) in self.flows.iter_mut().enumerate() {
            if let Some(s) = s {
                let out = &mut self.flow_bins;
                s.close(bin_ps, keys, |b, [o, q]| {
                    out.push((f as u32, b, [o[0], o[1], o[2], o[3], q[0], q[2]]));
                });
            }
        }
        for (c, s) in self.chans.iter_mut().enumerate() {
            if let Some(s) = s {
                let out = &mut self.chan_bins;
                s.close(bin_ps, keys, |b, [x]| {
                    out.push((c as u32, b, [x[0], x[2], x[3]]));
                });
            }
        }
    }

    /// The run's counts of a series so far (the open bin included).
    fn whole<const N: usize>(s: &Series<N>, i: usize) -> std::borrow::Cow<'_, Hist> {
        if s.cur[i].count() == 0 {
            return std::borrow::Cow::Borrowed(&s.total[i]);
        }
        let mut t = Hist::default();
        t.merge(&s.total[i]);
        t.merge(&s.cur[i]);
        std::borrow::Cow::Owned(t)
    }

    /// Mean and quantiles of a run's counts, the quantiles from the crate's sketch of them.
    fn totals_of(&self, h: &Hist) -> [f64; 4] {
        let cfg = self.keys.config();
        let mut x = h.stats(cfg);
        let s = h.sketch(cfg);
        for (slot, q) in x[1..].iter_mut().zip([0.5, 0.95, 0.99]) {
            *slot = s.quantile(q).ok().flatten().unwrap_or(f64::NAN);
        }
        x
    }

    /// Mean and quantiles (s) of flow `f`'s one-way delay and queueing delay over the run, as
    /// `summary.json` keys; None if the flow is not recorded.
    pub(crate) fn flow_totals(&self, f: usize) -> Option<serde_json::Value> {
        if !self.flow_sel[f] {
            return None;
        }
        let (o, q) = match &self.flows[f] {
            Some(s) => (self.totals_of(&Self::whole(s, 0)), self.totals_of(&Self::whole(s, 1))),
            None => ([f64::NAN; 4], [f64::NAN; 4]),
        };
        Some(block(&[("owd", o), ("queueing", q)]))
    }

    /// The same over the packets of every recorded flow together (the counts added: the same
    /// 1 % bound), for a run's total; None if no flow is recorded.
    pub(crate) fn all_flows_totals(&self) -> Option<serde_json::Value> {
        if !self.flow_sel.iter().any(|&b| b) {
            return None;
        }
        let (mut o, mut q) = (Hist::default(), Hist::default());
        for s in self.flows.iter().flatten() {
            o.merge(&Self::whole(s, 0));
            q.merge(&Self::whole(s, 1));
        }
        Some(block(&[("owd", self.totals_of(&o)), ("queueing", self.totals_of(&q))]))
    }

    /// The same for channel `c`'s queue.
    pub(crate) fn chan_totals(&self, c: usize) -> Option<serde_json::Value> {
        if !self.chan_sel[c] {
            return None;
        }
        let q = self.chans[c].as_ref().map_or([f64::NAN; 4], |s| self.totals_of(&Self::whole(s, 0)));
        Some(block(&[("queueing", q)]))
    }

    /// The run's counts of every recorded flow (one-way and queueing delay) and queue, as
    /// `{"flows": {name: {"owd": sketch, "queueing": sketch}}, "queues": {name: {"queueing":
    /// sketch}}}` with a sketch `{"delay_s": [..], "count": [..]}` ([`Hist::buckets`]), so that
    /// any quantile can be read afterwards, not only p50/p95/p99; None if nothing is recorded.
    pub(crate) fn sketches(&self, flow_names: &[String], chan_names: &[String]) -> Option<serde_json::Value> {
        if !self.on {
            return None;
        }
        let cfg = self.keys.config();
        let sketch = |h: Option<&Hist>| {
            let (v, c) = h.map(|h| h.buckets(cfg)).unwrap_or_default();
            serde_json::json!({ "delay_s": v, "count": c })
        };
        let mut flows = serde_json::Map::new();
        for (f, name) in flow_names.iter().enumerate().filter(|&(f, _)| self.flow_sel[f]) {
            let s = self.flows[f].as_deref();
            let (o, q) = (s.map(|s| Self::whole(s, 0)), s.map(|s| Self::whole(s, 1)));
            flows.insert(
                name.clone(),
                serde_json::json!({ "owd": sketch(o.as_deref()), "queueing": sketch(q.as_deref()) }),
            );
        }
        let mut queues = serde_json::Map::new();
        for (c, name) in chan_names.iter().enumerate().filter(|&(c, _)| self.chan_sel[c]) {
            let q = self.chans[c].as_deref().map(|s| Self::whole(s, 0));
            queues.insert(name.clone(), serde_json::json!({ "queueing": sketch(q.as_deref()) }));
        }
        Some(serde_json::json!({ "flows": flows, "queues": queues }))
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
        self.close_all();
        let mut fcols: [Vec<f64>; 6] = Default::default();
        if flows_on {
            for c in fcols.iter_mut() {
                *c = vec![f64::NAN; self.flows.len() * nbins];
            }
            for &(f, b, x) in &self.flow_bins {
                if (b as usize) < nbins {
                    for (c, v) in fcols.iter_mut().zip(x) {
                        c[f as usize * nbins + b as usize] = v;
                    }
                }
            }
        }
        let mut lcols: [Vec<f64>; 3] = Default::default();
        // Row of each selected link direction in the links table.
        let mut row = vec![usize::MAX; link_sel.len()];
        for (r, c) in link_sel.iter().enumerate().filter(|(_, &s)| s).map(|(c, _)| c).enumerate() {
            row[c] = r;
        }
        let nrows = link_sel.iter().filter(|&&s| s).count();
        for c in lcols.iter_mut() {
            *c = vec![f64::NAN; nrows * nbins];
        }
        for &(c, b, x) in &self.chan_bins {
            let r = row[c as usize];
            if r != usize::MAX && (b as usize) < nbins {
                for (col, v) in lcols.iter_mut().zip(x) {
                    col[r * nbins + b as usize] = v;
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

    /// The exported counts give any quantile of a hand-made distribution within the sketch's
    /// 1 %, and the p50/p95/p99 the totals report, exactly.
    #[test]
    fn sketches_give_any_quantile_within_one_percent() {
        let bin = SimDuration::from_millis(100);
        let mut d = DelayStats::new(bin, vec![true], vec![true], true, true);
        let us = |u: u64| SimTime(u * 1_000_000);
        // One-way delays of 1, 2, .. 1000 us: the exact quantile q is the value at rank
        // floor(q (n - 1)), (1 + floor(999 q)) us.
        for uid in 1..=1000u64 {
            d.sent(us(10 * uid), uid, 0, true);
            d.received(us(10 * uid + uid), uid, 0, true);
        }
        d.close_all();
        let names = ["f".to_string()];
        let s = d.sketches(&names, &["q".to_string()]).unwrap();
        let owd = &s["flows"]["f"]["owd"];
        let values: Vec<f64> =
            owd["delay_s"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
        let counts: Vec<u64> = owd["count"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect();
        assert_eq!(counts.iter().sum::<u64>(), 1000);
        assert!(values.windows(2).all(|w| w[0] < w[1]), "increasing");
        let quantile = |q: f64| {
            let rank = (q * 999.0) as u64;
            let mut seen = 0;
            values
                .iter()
                .zip(&counts)
                .find(|&(_, &c)| {
                    seen += c;
                    seen > rank
                })
                .map(|(&v, _)| v)
                .unwrap()
        };
        for q in [0.01f64, 0.1, 0.25, 0.5, 0.9, 0.95, 0.99, 0.999] {
            let exact = (1.0 + (999.0 * q).floor()) * 1e-6;
            let got = quantile(q);
            assert!((got - exact).abs() <= 0.01 * exact, "q{q}: {got} vs {exact}");
        }
        let t = d.flow_totals(0).unwrap();
        for (k, q) in [("owd_p50_s", 0.5), ("owd_p95_s", 0.95), ("owd_p99_s", 0.99)] {
            assert_eq!(t[k].as_f64().unwrap(), quantile(q), "{k}");
        }
        // Nothing queued: every packet in the zero bucket of the queueing delay.
        assert_eq!(s["flows"]["f"]["queueing"], serde_json::json!({"delay_s": [0.0], "count": [1000]}));
        // A recorded queue no packet crossed: an empty sketch.
        assert_eq!(s["queues"]["q"]["queueing"], serde_json::json!({"delay_s": [], "count": []}));
    }

    /// A flow's series is 104 B (a 112 B malloc chunk per flow with delays: its bin index is
    /// computed from the bin's end), and the closed bins still carry their own indices.
    #[test]
    fn series_is_small_and_bins_keep_their_index() {
        assert_eq!(std::mem::size_of::<Series<2>>(), 104);
        let bin = SimDuration::from_millis(100);
        let mut d = DelayStats::new(bin, vec![true], vec![false], true, false);
        let ms = |m: u64| SimTime(m * 1_000_000_000);
        for (uid, (sent, got)) in
            [(1, 2), (250, 260), (270, 299), (300, 301), (12_345, 12_399)].into_iter().enumerate()
        {
            d.sent(ms(sent), uid as u64 + 1, 0, true);
            d.received(ms(got), uid as u64 + 1, 0, true);
        }
        d.close_all();
        let rows: Vec<(u32, u32, f64)> = d.flow_bins.iter().map(|&(f, b, x)| (f, b, x[0])).collect();
        // Bins 0, 2 (two samples: 10 and 29 ms), 3 and 123, each with its mean one-way delay.
        let want = [(0, 0, 0.001), (0, 2, 0.0195), (0, 3, 0.001), (0, 123, 0.054)];
        assert_eq!(rows.len(), want.len());
        for (r, w) in rows.iter().zip(want) {
            assert_eq!((r.0, r.1), (w.0, w.1));
            assert!((r.2 - w.2).abs() < 1e-12, "{r:?} vs {w:?}");
        }
    }
}
