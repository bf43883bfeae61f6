//! Step marking, the switch setting DCTCP is designed for (Alizadeh et al., "Data Center TCP",
//! SIGCOMM 2010, section 3.1; RFC 8257 section 3.1): an arriving packet is marked CE when the
//! instantaneous queue it joins already holds more than K packets (or bytes); or, with a
//! sojourn-time threshold, a departing packet is marked when it waited more than K (as
//! Linux's `fq_codel ce_threshold` and DualPI2's L4S step do). A Not-ECT packet that would be
//! marked is dropped instead (reason `aqm`), as a RED queue with `min_th = max_th = K` (the
//! usual way to configure the step on a switch) does. Beyond the capacity: tail drop.

use super::codel::{CodelQueue, TimedFifo};
use super::{ConfigError, KindConfig, Qdisc, QdiscCtx, Queued, Verdict};
use crate::{DropReason, Packet};
use quicksim_engine::units::{Bytes, Dur};
use serde::Deserialize;

/// The DCTCP paper's K for 1 Gbit/s (section 3.5: K = 20 packets; 65 at 10 Gbit/s).
pub const DEFAULT_K: u64 = 20;
/// Linux's default device queue (`txqueuelen`): 1000 packets.
pub const DEFAULT_PACKETS: u64 = 1000;

/// `queue = { kind = "step", k = 20, packets = 1000 }`, or `k_bytes = "30kB"`, or
/// `k_sojourn = "1ms"`: at most one of the three thresholds (none: `k = 20`).
#[derive(Clone, Debug, Default, Deserialize, schemars::JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// K in packets: mark an arrival that finds more than this many packets waiting
    /// (default 20, the DCTCP paper's value for 1 Gbit/s, when no threshold is given).
    #[serde(default)]
    pub k: Option<u64>,
    /// K in IP bytes: mark an arrival that finds more than this many bytes waiting.
    #[serde(default)]
    pub k_bytes: Option<Bytes>,
    /// K as a sojourn time: mark a departing packet that waited more than this.
    #[serde(default)]
    pub k_sojourn: Option<Dur>,
    /// Capacity in packets (default 1000).
    #[serde(default)]
    pub packets: Option<u64>,
    /// Capacity in IP bytes (unlimited if left out).
    #[serde(default)]
    pub bytes: Option<Bytes>,
}

/// The threshold in force.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Threshold {
    Packets(u64),
    Bytes(u64),
    Sojourn(quicksim_engine::SimDuration),
}

impl Config {
    fn threshold(&self) -> Threshold {
        match (self.k, self.k_bytes, self.k_sojourn) {
            (_, Some(b), _) => Threshold::Bytes(b.0),
            (_, _, Some(d)) => Threshold::Sojourn(d.0),
            (k, _, _) => Threshold::Packets(k.unwrap_or(DEFAULT_K)),
        }
    }
}

impl KindConfig for Config {
    const KIND: &'static str = "step";
    fn validate(&self) -> Result<(), ConfigError> {
        let given = [self.k.is_some(), self.k_bytes.is_some(), self.k_sojourn.is_some()];
        if given.iter().filter(|&&g| g).count() > 1 {
            return Err(ConfigError::new("k", "give one threshold: k, k_bytes or k_sojourn"));
        }
        if self.packets == Some(0) {
            return Err(ConfigError::new("packets", "0: a queue must hold at least 1 packet"));
        }
        if self.bytes.map(|b| b.0) == Some(0) {
            return Err(ConfigError::new("bytes", "\"0B\": a queue must hold at least one packet"));
        }
        Ok(())
    }
    fn capacity(&self) -> (Option<u64>, Option<u64>) {
        (Some(self.packets.unwrap_or(DEFAULT_PACKETS)), self.bytes.map(|b| b.0))
    }
}

/// The step-marking queue.
#[derive(Debug)]
pub struct Step<P> {
    fifo: TimedFifo<P>,
    threshold: Threshold,
    max_packets: u64,
    max_bytes: u64,
}

impl<P> Step<P> {
    pub fn new(cfg: &Config) -> Self {
        Step {
            fifo: TimedFifo::default(),
            threshold: cfg.threshold(),
            max_packets: cfg.packets.unwrap_or(DEFAULT_PACKETS),
            max_bytes: cfg.bytes.map_or(u64::MAX, |b| b.0),
        }
    }
}

impl<P> Qdisc<P> for Step<P> {
    fn enqueue(&mut self, cx: &mut QdiscCtx<'_, P>, mut q: Queued<P>) -> Verdict<P> {
        let (n, b) = (self.fifo.q.len() as u64, self.fifo.bytes);
        if n >= self.max_packets || b + q.pkt.ip_bytes as u64 > self.max_bytes {
            return Verdict::Dropped(q.pkt, DropReason::Overflow);
        }
        let above = match self.threshold {
            Threshold::Packets(k) => n > k,
            Threshold::Bytes(k) => b > k,
            Threshold::Sojourn(_) => false,
        };
        if above && !cx.mark(&mut q.pkt) {
            return Verdict::Dropped(q.pkt, DropReason::Aqm);
        }
        self.fifo.push(q);
        Verdict::Queued
    }
    fn dequeue(&mut self, cx: &mut QdiscCtx<'_, P>) -> Option<Packet<P>> {
        loop {
            let mut e = self.fifo.pop()?;
            if let Threshold::Sojourn(k) = self.threshold {
                if cx.now - e.enqueued_at > k && !cx.mark(&mut e.pkt) {
                    cx.drop_packet(e.pkt, DropReason::Aqm);
                    continue;
                }
            }
            return Some(e.pkt);
        }
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
}

#[cfg(test)]
mod tests {
    use super::super::codel::tests::{pkt, Log};
    use super::*;
    use crate::Ecn;
    use quicksim_engine::{Rng, SimDuration, SimTime};

    fn offer(q: &mut Step<()>, now: SimTime, uid: u64, ecn: Ecn, log: &mut Log) -> bool {
        let mut rng = Rng::from_seed(1);
        let mut cx = QdiscCtx::new(now, &mut rng, log);
        matches!(q.enqueue(&mut cx, Queued { pkt: pkt(uid, 0, 1500, ecn), enqueued_at: now }), Verdict::Queued)
    }

    #[test]
    fn marks_arrivals_that_find_more_than_k_packets() {
        // K = 3: arrivals 1..4 find 0..3 packets (not more than 3): unmarked; arrivals 5..8
        // find 4..7: marked.
        let mut q = Step::new(&Config { k: Some(3), ..Config::default() });
        let mut log = Log::default();
        for u in 1..=8 {
            assert!(offer(&mut q, SimTime::ZERO, u, Ecn::Ect0, &mut log));
        }
        assert_eq!(log.marks.iter().map(|m| m.1).collect::<Vec<_>>(), vec![5, 6, 7, 8]);
        // A Not-ECT packet above K is dropped; below K it passes.
        assert!(!offer(&mut q, SimTime::ZERO, 9, Ecn::NotEct, &mut log));
        let (mut rng, mut log2) = (Rng::from_seed(1), Log::default());
        let mut cx = QdiscCtx::new(SimTime::ZERO, &mut rng, &mut log2);
        for _ in 0..8 {
            q.dequeue(&mut cx).unwrap();
        }
        assert!(offer(&mut q, SimTime::ZERO, 10, Ecn::NotEct, &mut log));
    }

    #[test]
    fn byte_threshold_and_capacity() {
        // K = 3000 B: the third 1500 B arrival finds 3000 B (not more): unmarked; the fourth
        // finds 4500 B: marked; capacity 5 packets: the sixth is a tail drop.
        let mut q = Step::new(&Config { k_bytes: Some(Bytes(3000)), packets: Some(5), ..Config::default() });
        let mut log = Log::default();
        for u in 1..=5 {
            assert!(offer(&mut q, SimTime::ZERO, u, Ecn::Ect1, &mut log));
        }
        assert_eq!(log.marks.iter().map(|m| m.1).collect::<Vec<_>>(), vec![4, 5]);
        let mut rng = Rng::from_seed(1);
        let mut cx = QdiscCtx::new(SimTime::ZERO, &mut rng, &mut log);
        let v = q.enqueue(&mut cx, Queued { pkt: pkt(6, 0, 1500, Ecn::Ect1), enqueued_at: SimTime::ZERO });
        assert!(matches!(v, Verdict::Dropped(_, DropReason::Overflow)));
    }

    #[test]
    fn sojourn_threshold_marks_at_dequeue() {
        // K = 1 ms: packets in at 0, 1 ms and 2 ms, all dequeued at 2.5 ms: sojourn 2.5, 1.5,
        // 0.5 ms: the first two are marked.
        let cfg = Config { k_sojourn: Some(Dur(SimDuration::from_millis(1))), ..Config::default() };
        let mut q = Step::new(&cfg);
        let mut log = Log::default();
        for u in 0..3 {
            assert!(offer(&mut q, SimTime::from_millis(u), u, Ecn::Ect0, &mut log));
        }
        let mut rng = Rng::from_seed(1);
        let mut cx = QdiscCtx::new(SimTime::ZERO + SimDuration::from_micros(2500), &mut rng, &mut log);
        let ecn: Vec<Ecn> = std::iter::from_fn(|| q.dequeue(&mut cx).map(|p| p.ecn())).collect();
        assert_eq!(ecn, vec![Ecn::Ce, Ecn::Ce, Ecn::Ect0]);
    }

    #[test]
    fn bad_parameters_name_the_field() {
        let two = Config { k: Some(5), k_bytes: Some(Bytes(100)), ..Config::default() };
        assert_eq!(two.validate().unwrap_err().field, "k");
        assert_eq!(Config { packets: Some(0), ..Config::default() }.validate().unwrap_err().field, "packets");
        assert_eq!(
            Config { bytes: Some(Bytes(0)), ..Config::default() }.validate().unwrap_err().field,
            "bytes"
        );
        assert_eq!(Config::default().threshold(), Threshold::Packets(20));
    }
}
