//! RED, Random Early Detection (Floyd & Jacobson 1993, "Random Early Detection Gateways for
//! Congestion Avoidance"), in the shape of ns-3's `RedQueueDisc`: at each arrival the average
//! queue `avg` moves by the weight `w_q` towards the current length (decayed over an idle
//! spell as if `m` small packets had gone by); between `min_th` and `max_th` a packet is
//! dropped (or marked CE) with probability `pb / (1 - count * pb)`, `pb` rising linearly from 0
//! to `max_p`; above `max_th` every packet is dropped, or, `gentle` (Floyd 2000), `pb` rises on
//! from `max_p` to 1 at `2 * max_th`. In `bytes` mode the lengths and thresholds count bytes
//! and `pb` is scaled by the packet's size over `mean_packet`.
//!
//! Defaults are ns-3's where the paper leaves them open: `min_th = 5`, `max_th = 15`,
//! `max_p = 1/50`, `w_q = 0.002`, gentle on, 25 packets, a mean packet of 500 B, hard drops
//! above the thresholds even with ECN.

use super::codel::CodelQueue;
use super::codel::TimedFifo;
use super::{ConfigError, KindConfig, Qdisc, QdiscCtx, Queued, Verdict};
use crate::{DropReason, Packet};
use quicksim_engine::units::Bytes;
use quicksim_engine::{Rate, SimTime};
use serde::Deserialize;

/// What RED's lengths and thresholds count.
#[derive(Clone, Copy, Debug, Deserialize, schemars::JsonSchema, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    #[default]
    Packets,
    Bytes,
}

/// `queue = { kind = "red", min_th = 5, max_th = 15, max_p = 0.02, w_q = 0.002, gentle = true,
/// mode = "packets", packets = 25, ecn = false, hard_drop = true, mean_packet = "500B" }`.
#[derive(Clone, Debug, Deserialize, schemars::JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Average length below which nothing is dropped (packets, or bytes in `bytes` mode).
    #[serde(default = "default_min_th")]
    pub min_th: f64,
    /// Average length at which the early drop probability reaches `max_p`.
    #[serde(default = "default_max_th")]
    pub max_th: f64,
    /// Early drop (or mark) probability at `max_th` (RFC 2309's max_p).
    #[serde(default = "default_max_p")]
    pub max_p: f64,
    /// Weight of the current length in the average.
    #[serde(default = "default_w_q")]
    pub w_q: f64,
    /// Gentle RED: between `max_th` and 2·`max_th` the probability rises from `max_p` to 1
    /// instead of jumping to 1.
    #[serde(default = "default_true")]
    pub gentle: bool,
    #[serde(default)]
    pub mode: Mode,
    /// Capacity in packets (tail drop beyond, reason `overflow`).
    #[serde(default = "default_packets")]
    pub packets: u64,
    /// Capacity in bytes (unlimited if left out).
    #[serde(default)]
    pub bytes: Option<Bytes>,
    /// Mark ECN-capable packets CE instead of an early drop.
    #[serde(default)]
    pub ecn: bool,
    /// Drop even ECN-capable packets once the average is past the early-drop region (ns-3's
    /// `UseHardDrop`).
    #[serde(default = "default_true")]
    pub hard_drop: bool,
    /// The packet size of the idle decay and of the byte mode's scaling.
    #[serde(default = "default_mean_packet")]
    pub mean_packet: Bytes,
}

fn default_min_th() -> f64 {
    5.0
}
fn default_max_th() -> f64 {
    15.0
}
fn default_max_p() -> f64 {
    1.0 / 50.0
}
fn default_w_q() -> f64 {
    0.002
}
fn default_true() -> bool {
    true
}
fn default_packets() -> u64 {
    25
}
fn default_mean_packet() -> Bytes {
    Bytes(500)
}

impl Default for Config {
    fn default() -> Self {
        Config {
            min_th: default_min_th(),
            max_th: default_max_th(),
            max_p: default_max_p(),
            w_q: default_w_q(),
            gentle: true,
            mode: Mode::Packets,
            packets: default_packets(),
            bytes: None,
            ecn: false,
            hard_drop: true,
            mean_packet: default_mean_packet(),
        }
    }
}

impl KindConfig for Config {
    const KIND: &'static str = "red";
    fn validate(&self) -> Result<(), ConfigError> {
        if !self.min_th.is_finite() || self.min_th < 0.0 {
            return Err(ConfigError::new(
                "min_th",
                format!("{}: a threshold must be a number >= 0", self.min_th),
            ));
        }
        if !self.max_th.is_finite() || self.max_th <= self.min_th {
            return Err(ConfigError::new(
                "max_th",
                format!("{}: must be larger than min_th ({})", self.max_th, self.min_th),
            ));
        }
        if !(self.max_p > 0.0 && self.max_p <= 1.0) {
            return Err(ConfigError::new("max_p", format!("{}: not a probability in (0, 1]", self.max_p)));
        }
        if !(self.w_q > 0.0 && self.w_q <= 1.0) {
            return Err(ConfigError::new("w_q", format!("{}: the weight must be in (0, 1]", self.w_q)));
        }
        if self.packets == 0 {
            return Err(ConfigError::new("packets", "0: a queue must hold at least 1 packet"));
        }
        if self.bytes.map(|b| b.0) == Some(0) {
            return Err(ConfigError::new("bytes", "\"0B\": a queue must hold at least one packet"));
        }
        if self.mean_packet.0 == 0 {
            return Err(ConfigError::new("mean_packet", "\"0B\": the mean packet size must be positive"));
        }
        Ok(())
    }
    fn capacity(&self) -> (Option<u64>, Option<u64>) {
        (Some(self.packets), self.bytes.map(|b| b.0))
    }
}

/// The RED queue.
#[derive(Debug)]
pub struct Red<P> {
    fifo: TimedFifo<P>,
    cfg: Config,
    max_bytes: u64,
    avg: f64,
    /// Packets (bytes in byte mode) since the last early drop.
    count: f64,
    /// The average has been at or above `min_th` since the last arrival (ns-3's `m_old`).
    above_min: bool,
    /// Since when the queue has been empty (None: not empty since the last arrival).
    idle_since: Option<SimTime>,
    /// Small packets the link sends per second (the idle decay's `m` per second).
    packets_per_s: f64,
}

impl<P> Red<P> {
    pub fn new(cfg: &Config) -> Self {
        Red {
            fifo: TimedFifo::default(),
            cfg: cfg.clone(),
            max_bytes: cfg.bytes.map_or(u64::MAX, |b| b.0),
            avg: 0.0,
            count: 0.0,
            above_min: false,
            idle_since: Some(SimTime::ZERO),
            packets_per_s: 0.0,
        }
    }

    /// The average queue length (packets, or bytes in byte mode).
    pub fn avg(&self) -> f64 {
        self.avg
    }

    fn len(&self) -> f64 {
        match self.cfg.mode {
            Mode::Packets => self.fifo.q.len() as f64,
            Mode::Bytes => self.fifo.bytes as f64,
        }
    }

    /// The drop probability before the count correction (Floyd & Jacobson's `pb`; gentle RED
    /// above `max_th`).
    fn pb(&self, size: u32) -> f64 {
        let (min, max, max_p) = (self.cfg.min_th, self.cfg.max_th, self.cfg.max_p);
        let mut p = if self.avg >= max {
            max_p + (1.0 - max_p) * (self.avg - max) / max
        } else {
            max_p * (self.avg - min) / (max - min)
        };
        if self.cfg.mode == Mode::Bytes {
            p *= size as f64 / self.cfg.mean_packet.0 as f64;
        }
        p.min(1.0)
    }

    /// Update the average at an arrival (Floyd & Jacobson section 4; the idle decay as
    /// `avg * (1 - w_q)^m`, `m` the whole number of small packets the link could have sent
    /// while idle).
    fn update_avg(&mut self, now: SimTime) {
        let w = self.cfg.w_q;
        let m = match self.idle_since.take() {
            Some(t) => ((now - t).as_secs_f64() * self.packets_per_s) as u64,
            None => 0,
        };
        self.avg = self.avg * pow_u(1.0 - w, m + 1) + w * self.len();
    }
}

/// `x^n` by squaring: only multiplications, so the same bits on every machine (the platform's
/// `powf` is not pinned).
fn pow_u(mut x: f64, mut n: u64) -> f64 {
    let mut r = 1.0;
    while n > 0 {
        if n & 1 == 1 {
            r *= x;
        }
        x *= x;
        n >>= 1;
    }
    r
}

/// What RED decided about an arrival.
enum Early {
    No,
    /// An early (random) drop: may be a mark.
    Unforced,
    /// Past the early-drop region.
    Forced,
}

impl<P> Qdisc<P> for Red<P> {
    fn enqueue(&mut self, cx: &mut QdiscCtx<'_, P>, mut q: Queued<P>) -> Verdict<P> {
        self.update_avg(cx.now);
        let size = q.pkt.ip_bytes;
        self.count += match self.cfg.mode {
            Mode::Packets => 1.0,
            Mode::Bytes => size as f64 / self.cfg.mean_packet.0 as f64,
        };
        let (min, max) = (self.cfg.min_th, self.cfg.max_th);
        let top = if self.cfg.gentle { 2.0 * max } else { max };
        let early = if self.avg >= min && self.fifo.q.len() > 1 {
            if self.avg >= top {
                Early::Forced
            } else if !self.above_min {
                // The first arrival above min_th starts the count (ns-3's `m_old`).
                self.above_min = true;
                self.count = 1.0;
                Early::No
            } else {
                let pb = self.pb(size);
                let pa = if self.count * pb < 1.0 { pb / (1.0 - self.count * pb) } else { 1.0 };
                if cx.rng.uniform01() <= pa {
                    self.count = 0.0;
                    Early::Unforced
                } else {
                    Early::No
                }
            }
        } else {
            self.above_min = false;
            Early::No
        };
        match early {
            Early::No => {}
            Early::Unforced if self.cfg.ecn && cx.mark(&mut q.pkt) => {}
            Early::Forced if self.cfg.ecn && !self.cfg.hard_drop && cx.mark(&mut q.pkt) => {}
            Early::Unforced | Early::Forced => return Verdict::Dropped(q.pkt, DropReason::Aqm),
        }
        if self.fifo.q.len() as u64 >= self.cfg.packets
            || self.fifo.bytes.saturating_add(size as u64) > self.max_bytes
        {
            return Verdict::Dropped(q.pkt, DropReason::Overflow);
        }
        self.fifo.push(q);
        Verdict::Queued
    }
    fn dequeue(&mut self, cx: &mut QdiscCtx<'_, P>) -> Option<Packet<P>> {
        let e = self.fifo.pop()?;
        if self.fifo.q.is_empty() {
            self.idle_since = Some(cx.now);
        }
        Some(e.pkt)
    }
    fn len_packets(&self) -> usize {
        self.fifo.q.len()
    }
    fn len_bytes(&self) -> u64 {
        self.fifo.bytes
    }
    fn uses_timers(&self) -> bool {
        false
    }
    fn set_link_rate(&mut self, rate: Rate) {
        self.packets_per_s = rate.bits_per_s as f64 / (8.0 * self.cfg.mean_packet.0 as f64);
    }
}

#[cfg(test)]
mod tests {
    use super::super::codel::tests::{pkt, Log};
    use super::*;
    use crate::Ecn;
    use quicksim_engine::{Rng, SimDuration};

    fn offer(
        q: &mut Red<()>,
        now: SimTime,
        uid: u64,
        ecn: Ecn,
        rng: &mut Rng,
        log: &mut Log,
    ) -> Option<DropReason> {
        let mut cx = QdiscCtx::new(now, rng, log);
        match q.enqueue(&mut cx, Queued { pkt: pkt(uid, 0, 1000, ecn), enqueued_at: now }) {
            Verdict::Queued => None,
            Verdict::Dropped(_, why) => Some(why),
        }
    }

    /// Puts `n` packets in the queue without RED's decisions.
    fn fill(q: &mut Red<()>, n: u64) {
        for k in 0..n {
            q.fifo.push(Queued { pkt: pkt(k, 0, 1000, Ecn::NotEct), enqueued_at: SimTime::ZERO });
        }
    }

    #[test]
    fn the_average_follows_the_ewma_and_decays_over_idle_time() {
        let mut q: Red<()> =
            Red::new(&Config { packets: 1000, min_th: 500.0, max_th: 900.0, ..Config::default() });
        q.set_link_rate(Rate::mbps(4)); // 1000 small (500 B) packets per second
        let (mut rng, mut log) = (Rng::from_seed(1), Log::default());
        // Arrivals at t = 0 (idle since 0, m = 0): avg = w * 0 first, then w * 1, ...
        let t0 = SimTime::ZERO;
        let mut want = 0.0;
        for k in 0..100u64 {
            assert_eq!(offer(&mut q, t0, k, Ecn::NotEct, &mut rng, &mut log), None);
            want = want * (1.0 - 0.002) + 0.002 * k as f64;
            assert!((q.avg() - want).abs() < 1e-12);
        }
        // Drain, then stay idle 100 ms (100 small packets): avg * 0.998^(100 + 1) + w * 0.
        let mut cx = QdiscCtx::new(t0, &mut rng, &mut log);
        while q.dequeue(&mut cx).is_some() {}
        let t1 = t0 + SimDuration::from_millis(100);
        offer(&mut q, t1, 999, Ecn::NotEct, &mut rng, &mut log);
        let decayed = want * pow_u(0.998, 101);
        assert!((decayed - want * 0.998f64.powf(101.0)).abs() < 1e-9);
        assert!((q.avg() - decayed).abs() < 1e-12, "{} vs {decayed}", q.avg());
    }

    #[test]
    fn early_drop_rate_matches_floyd_jacobson_between_the_thresholds() {
        // avg held at the middle of [5, 15] by w_q = 1 and a queue of 10: pb = 0.01, and with
        // the count correction (the count includes the arrival itself, as ns-3's) the gap between
        // drops is uniform over 1..1/pb - 1 arrivals: P(gap > n) = (1 - (n + 1) pb) / (1 - pb),
        // so one drop per 50 arrivals on average.
        let cfg = Config { w_q: 1.0, max_p: 0.02, packets: 1000, ..Config::default() };
        let mut q: Red<()> = Red::new(&cfg);
        let (mut rng, mut log) = (Rng::from_seed(5), Log::default());
        for k in 0..10 {
            offer(&mut q, SimTime::ZERO, k, Ecn::NotEct, &mut rng, &mut log);
        }
        let (mut drops, n) = (0, 100_000u64);
        let mut cx = QdiscCtx::new(SimTime::ZERO, &mut rng, &mut log);
        for k in 0..n {
            // Keep the queue at 10 before each arrival: dequeue one after each accepted one.
            match q.enqueue(
                &mut cx,
                Queued { pkt: pkt(100 + k, 0, 1000, Ecn::NotEct), enqueued_at: SimTime::ZERO },
            ) {
                Verdict::Queued => {
                    q.dequeue(&mut cx);
                }
                Verdict::Dropped(_, why) => {
                    assert_eq!(why, DropReason::Aqm);
                    drops += 1;
                }
            }
        }
        let per = n as f64 / drops as f64;
        // ~2000 drops: the mean gap's standard error is ~28.6/sqrt(2000) = 0.64; 3 % is 2.3 se.
        assert!((per - 50.0).abs() / 50.0 < 0.03, "one drop per {per} arrivals");
    }

    #[test]
    fn gentle_region_and_forced_drops_and_ecn_marks() {
        let base = Config { w_q: 1.0, packets: 1000, ..Config::default() };
        let (mut rng, mut log) = (Rng::from_seed(5), Log::default());
        // Not gentle: an average of 20 >= max_th drops every arrival.
        let mut q: Red<()> = Red::new(&Config { gentle: false, ..base.clone() });
        for k in 0..20 {
            offer(&mut q, SimTime::ZERO, k, Ecn::NotEct, &mut rng, &mut log);
        }
        assert_eq!(offer(&mut q, SimTime::ZERO, 50, Ecn::NotEct, &mut rng, &mut log), Some(DropReason::Aqm));
        // Gentle: at 20, pb = 0.02 + 0.98 * 5 / 15; at 30 = 2 * max_th every arrival is dropped.
        let mut q: Red<()> = Red::new(&base);
        fill(&mut q, 20);
        q.avg = 20.0;
        assert!((q.pb(1000) - (0.02 + 0.98 / 3.0)).abs() < 1e-12);
        fill(&mut q, 10);
        assert_eq!(offer(&mut q, SimTime::ZERO, 60, Ecn::Ect0, &mut rng, &mut log), Some(DropReason::Aqm));
        // ECN: early drops of ECT packets become marks; forced ones stay drops (hard_drop).
        let mut q: Red<()> = Red::new(&Config { ecn: true, ..base });
        fill(&mut q, 14);
        let before = log.marks.len();
        for k in 0..2000 {
            assert_eq!(offer(&mut q, SimTime::ZERO, 100 + k, Ecn::Ect0, &mut rng, &mut log), None);
            let mut cx = QdiscCtx::new(SimTime::ZERO, &mut rng, &mut log);
            q.dequeue(&mut cx);
        }
        assert!(log.marks.len() - before > 20, "{} marks", log.marks.len() - before);
    }

    #[test]
    fn byte_mode_counts_bytes() {
        let cfg = Config {
            mode: Mode::Bytes,
            min_th: 3000.0,
            max_th: 9000.0,
            w_q: 1.0,
            packets: 1000,
            ..Config::default()
        };
        let mut q: Red<()> = Red::new(&cfg);
        let (mut rng, mut log) = (Rng::from_seed(5), Log::default());
        for k in 0..4 {
            assert_eq!(offer(&mut q, SimTime::ZERO, k, Ecn::NotEct, &mut rng, &mut log), None);
        }
        assert_eq!(q.avg(), 3000.0);
        // pb at avg 6000 for a 1000 B packet: 0.02 * 0.5 * 1000 / 500.
        q.avg = 6000.0;
        assert!((q.pb(1000) - 0.02).abs() < 1e-12);
    }

    #[test]
    fn bad_parameters_name_the_field() {
        for (cfg, field) in [
            (Config { min_th: -1.0, ..Config::default() }, "min_th"),
            (Config { max_th: 5.0, ..Config::default() }, "max_th"),
            (Config { max_p: 0.0, ..Config::default() }, "max_p"),
            (Config { w_q: 1.5, ..Config::default() }, "w_q"),
            (Config { packets: 0, ..Config::default() }, "packets"),
            (Config { bytes: Some(Bytes(0)), ..Config::default() }, "bytes"),
            (Config { mean_packet: Bytes(0), ..Config::default() }, "mean_packet"),
        ] {
            assert_eq!(cfg.validate().unwrap_err().field, field);
        }
    }
}
