//! FQ-CoDel (RFC 8290): packets are hashed by flow into `flows` queues, each with its own
//! CoDel control law; a deficit round robin with a quantum per turn serves the queues, new
//! flows (a queue that was empty) before old ones, so a sparse flow's packets wait for at most
//! one round. When the total passes `packets`, packets are dropped from the head of the queue
//! holding the most bytes (the fattest flow), up to half its bytes and at most `drop_batch`
//! packets at a time (Linux's `fq_codel_drop`).
//!
//! The 5-tuple is (source node, destination node, flow number): the flow number stands for the
//! ports and the protocol. The hash is perturbed by a value drawn from the discipline's own
//! stream at its first packet, as Linux draws `perturbation` at setup.

use super::codel::{check_times, CodelQueue, CodelVars, Params, TimedFifo};
use super::{ConfigError, KindConfig, Qdisc, QdiscCtx, Queued, Verdict};
use crate::{DropReason, Ecn, Packet};
use quicksim_engine::units::{Bytes, Dur};
use quicksim_engine::SimDuration;
use serde::Deserialize;
use std::collections::VecDeque;

/// Linux's `fq_codel` defaults: 1024 queues, a 10240-packet limit, a quantum of one Ethernet
/// MTU frame (1514 B), batches of up to 64 drops.
pub const DEFAULT_FLOWS: u32 = 1024;
pub const DEFAULT_PACKETS: u64 = 10_240;
pub const DEFAULT_QUANTUM: u64 = 1514;
pub const DEFAULT_DROP_BATCH: u32 = 64;

/// `queue = { kind = "fq_codel", flows = 1024, quantum = "1514B", packets = 10240,
/// target = "5ms", interval = "100ms", mtu = "1500B", ecn = true, drop_batch = 64,
/// ce_threshold = "1ms", ce_threshold_ect1 = true }` (the last two off unless given).
#[derive(Clone, Debug, Deserialize, schemars::JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Number of flow queues the hash spreads flows over.
    #[serde(default = "default_flows")]
    pub flows: u32,
    /// Bytes a queue may send per round (deficit round robin).
    #[serde(default = "default_quantum")]
    pub quantum: Bytes,
    /// Total capacity in packets over all queues.
    #[serde(default = "default_packets")]
    pub packets: u64,
    #[serde(default = "default_target")]
    pub target: Dur,
    #[serde(default = "default_interval")]
    pub interval: Dur,
    /// CoDel's MAXPACKET (compared with the whole discipline's backlog, as Linux does).
    #[serde(default = "default_mtu")]
    pub mtu: Bytes,
    /// Mark ECN-capable packets CE instead of dropping them; on by default (RFC 8290 section
    /// 5.2 and Linux).
    #[serde(default = "default_ecn")]
    pub ecn: bool,
    /// Most packets dropped from the fattest flow per overflow.
    #[serde(default = "default_drop_batch")]
    pub drop_batch: u32,
    /// Mark CE on every ECT packet leaving with a sojourn time above this, besides CoDel's
    /// own decisions (Linux `ce_threshold`; off when left out).
    #[serde(default)]
    pub ce_threshold: Option<Dur>,
    /// Apply `ce_threshold` to ECT(1) packets only, the L4S identifier (Linux
    /// `ce_threshold_ect1`: the selector on the ECN field's low bit).
    #[serde(default)]
    pub ce_threshold_ect1: bool,
}

fn default_flows() -> u32 {
    DEFAULT_FLOWS
}
fn default_quantum() -> Bytes {
    Bytes(DEFAULT_QUANTUM)
}
fn default_packets() -> u64 {
    DEFAULT_PACKETS
}
fn default_target() -> Dur {
    Dur(super::codel::TARGET)
}
fn default_interval() -> Dur {
    Dur(super::codel::INTERVAL)
}
fn default_mtu() -> Bytes {
    Bytes(super::codel::DEFAULT_MTU)
}
fn default_ecn() -> bool {
    true
}
fn default_drop_batch() -> u32 {
    DEFAULT_DROP_BATCH
}

impl Default for Config {
    fn default() -> Self {
        Config {
            flows: DEFAULT_FLOWS,
            quantum: default_quantum(),
            packets: DEFAULT_PACKETS,
            target: default_target(),
            interval: default_interval(),
            mtu: default_mtu(),
            ecn: true,
            drop_batch: DEFAULT_DROP_BATCH,
            ce_threshold: None,
            ce_threshold_ect1: false,
        }
    }
}

impl KindConfig for Config {
    const KIND: &'static str = "fq_codel";
    fn validate(&self) -> Result<(), ConfigError> {
        check_times(self.target.0, self.interval.0)?;
        if self.flows == 0 || self.flows > 65_536 {
            return Err(ConfigError::new(
                "flows",
                format!("{}: the number of queues must be 1..65536", self.flows),
            ));
        }
        if self.quantum.0 == 0 || self.quantum.0 > i64::MAX as u64 / 2 {
            return Err(ConfigError::new(
                "quantum",
                format!("\"{}B\": the quantum must be positive", self.quantum.0),
            ));
        }
        if self.packets == 0 {
            return Err(ConfigError::new("packets", "0: a queue must hold at least 1 packet"));
        }
        if self.drop_batch == 0 {
            return Err(ConfigError::new("drop_batch", "0: an overflow must drop at least 1 packet"));
        }
        if self.ce_threshold_ect1 && self.ce_threshold.is_none() {
            return Err(ConfigError::new("ce_threshold_ect1", "true needs a ce_threshold to apply"));
        }
        Ok(())
    }
    fn capacity(&self) -> (Option<u64>, Option<u64>) {
        (Some(self.packets), None)
    }
}

/// Which list a flow queue is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum List {
    None,
    New,
    Old,
}

#[derive(Debug)]
struct Flow<P> {
    fifo: TimedFifo<P>,
    vars: CodelVars,
    deficit: i64,
    list: List,
}

/// One flow's queue seen by CoDel: pops keep the discipline's totals, and the backlog CoDel
/// compares with MAXPACKET is the whole discipline's (Linux passes `sch->qstats.backlog`).
struct FlowView<'a, P> {
    fifo: &'a mut TimedFifo<P>,
    total_bytes: &'a mut u64,
    total_packets: &'a mut usize,
}

impl<P> CodelQueue<P> for FlowView<'_, P> {
    fn pop(&mut self) -> Option<Queued<P>> {
        let e = self.fifo.pop()?;
        *self.total_bytes -= e.pkt.ip_bytes as u64;
        *self.total_packets -= 1;
        Some(e)
    }
    fn backlog_bytes(&self) -> u64 {
        *self.total_bytes
    }
}

/// The FQ-CoDel discipline.
#[derive(Debug)]
pub struct FqCodel<P> {
    flows: Vec<Flow<P>>,
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
    params: Params,
    quantum: i64,
    limit: u64,
    drop_batch: u32,
    ce_threshold: Option<SimDuration>,
    ce_threshold_ect1: bool,
    /// Drawn at the first packet (None before).
    perturbation: Option<u64>,
    bytes: u64,
    packets: usize,
}

impl<P> FqCodel<P> {
    pub fn new(cfg: &Config) -> Self {
        FqCodel {
            flows: (0..cfg.flows)
                .map(|_| Flow {
                    fifo: TimedFifo::default(),
                    vars: CodelVars::default(),
                    deficit: 0,
                    list: List::None,
                })
                .collect(),
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            params: Params { target: cfg.target.0, interval: cfg.interval.0, mtu: cfg.mtu.0, ecn: cfg.ecn },
            quantum: cfg.quantum.0 as i64,
            limit: cfg.packets,
            drop_batch: cfg.drop_batch,
            ce_threshold: cfg.ce_threshold.map(|d| d.0),
            ce_threshold_ect1: cfg.ce_threshold_ect1,
            perturbation: None,
            bytes: 0,
            packets: 0,
        }
    }

    /// The queue of a packet: a SplitMix64 finalizer of its 5-tuple and the perturbation,
    /// reduced to `flows` by multiply-shift (Linux's `reciprocal_scale`).
    fn classify(&self, p: &Packet<P>) -> usize {
        let key =
            (p.src.0 as u64) << 40 ^ (p.dst.0 as u64) << 20 ^ p.flow as u64 ^ self.perturbation.unwrap_or(0);
        let mut z = key.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (((z >> 32) * self.flows.len() as u64) >> 32) as usize
    }

    /// Drop from the head of the queue with the most bytes until half its bytes or
    /// `drop_batch` packets are gone (Linux `fq_codel_drop`); returns that queue.
    fn drop_fattest(&mut self, cx: &mut QdiscCtx<'_, P>) -> usize {
        // The first of the largest, so that ties are broken the same way every run.
        let mut fat = 0;
        for (i, f) in self.flows.iter().enumerate() {
            if f.fifo.bytes > self.flows[fat].fifo.bytes {
                fat = i;
            }
        }
        let f = &mut self.flows[fat];
        let threshold = f.fifo.bytes / 2;
        let (mut dropped_bytes, mut n) = (0u64, 0u32);
        while n < self.drop_batch && dropped_bytes < threshold {
            let Some(e) = f.fifo.pop() else { break };
            dropped_bytes += e.pkt.ip_bytes as u64;
            n += 1;
            self.bytes -= e.pkt.ip_bytes as u64;
            self.packets -= 1;
            cx.drop_packet(e.pkt, DropReason::Overflow);
        }
        fat
    }
}

impl<P> Qdisc<P> for FqCodel<P> {
    fn enqueue(&mut self, cx: &mut QdiscCtx<'_, P>, q: Queued<P>) -> Verdict<P> {
        if self.perturbation.is_none() {
            self.perturbation = Some(cx.rng.next_u64());
        }
        let i = self.classify(&q.pkt);
        self.bytes += q.pkt.ip_bytes as u64;
        self.packets += 1;
        let f = &mut self.flows[i];
        f.fifo.push(q);
        if f.list == List::None {
            f.list = List::New;
            f.deficit = self.quantum;
            self.new_flows.push_back(i as u32);
        }
        if self.packets as u64 > self.limit {
            self.drop_fattest(cx);
        }
        Verdict::Queued
    }

    fn dequeue(&mut self, cx: &mut QdiscCtx<'_, P>) -> Option<Packet<P>> {
        loop {
            let from_new = !self.new_flows.is_empty();
            let i = *(if from_new { self.new_flows.front() } else { self.old_flows.front() })? as usize;
            let f = &mut self.flows[i];
            if f.deficit <= 0 {
                f.deficit += self.quantum;
                f.list = List::Old;
                if from_new {
                    self.new_flows.pop_front();
                } else {
                    self.old_flows.pop_front();
                }
                self.old_flows.push_back(i as u32);
                continue;
            }
            let mut view = FlowView {
                fifo: &mut f.fifo,
                total_bytes: &mut self.bytes,
                total_packets: &mut self.packets,
            };
            match f.vars.dequeue(cx, &mut view, &self.params) {
                Some(mut p) => {
                    f.deficit -= p.ip_bytes as i64;
                    if let Some(th) = self.ce_threshold {
                        // Linux `codel_dequeue`'s end: ECT(0)/ECT(1) above the threshold
                        // (ECT(1) only with the selector) become CE; CE stays as it is.
                        let e = p.ecn();
                        let selected = if self.ce_threshold_ect1 { e == Ecn::Ect1 } else { e.is_ect() && e != Ecn::Ce };
                        if f.vars.ldelay > th && selected {
                            cx.mark(&mut p);
                        }
                    }
                    return Some(p);
                }
                None => {
                    // An empty new queue goes to the old list if there is one (so that a flow
                    // cannot stay "new" by emptying its queue every round); otherwise it
                    // leaves the lists.
                    if from_new {
                        self.new_flows.pop_front();
                    } else {
                        self.old_flows.pop_front();
                    }
                    if from_new && !self.old_flows.is_empty() {
                        f.list = List::Old;
                        self.old_flows.push_back(i as u32);
                    } else {
                        f.list = List::None;
                    }
                }
            }
        }
    }
    fn len_packets(&self) -> usize {
        self.packets
    }
    fn len_bytes(&self) -> u64 {
        self.bytes
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

    fn offer(q: &mut FqCodel<()>, now: SimTime, p: Packet<()>, rng: &mut Rng, log: &mut Log) {
        let mut cx = QdiscCtx::new(now, rng, log);
        assert!(matches!(q.enqueue(&mut cx, Queued { pkt: p, enqueued_at: now }), Verdict::Queued));
    }

    #[test]
    fn round_robin_serves_flows_in_turn_by_quantum() {
        // Two backlogged flows, 1500 B packets, quantum 3000 B: each turn sends two packets.
        let cfg = Config { quantum: Bytes(3000), ..Config::default() };
        let mut q = FqCodel::new(&cfg);
        let (mut rng, mut log) = (Rng::from_seed(7), Log::default());
        for k in 0..6 {
            offer(&mut q, SimTime::ZERO, pkt(100 + k, 1, 1500, Ecn::NotEct), &mut rng, &mut log);
            offer(&mut q, SimTime::ZERO, pkt(200 + k, 2, 1500, Ecn::NotEct), &mut rng, &mut log);
        }
        assert_ne!(q.classify(&pkt(0, 1, 1, Ecn::NotEct)), q.classify(&pkt(0, 2, 1, Ecn::NotEct)));
        let mut cx = QdiscCtx::new(SimTime::ZERO, &mut rng, &mut log);
        let order: Vec<u64> = std::iter::from_fn(|| q.dequeue(&mut cx).map(|p| p.uid() / 100)).collect();
        assert_eq!(order, vec![1, 1, 2, 2, 1, 1, 2, 2, 1, 1, 2, 2]);
        assert_eq!((q.len_packets(), q.len_bytes()), (0, 0));
    }

    #[test]
    fn a_sparse_flow_goes_before_a_backlogged_one() {
        let mut q = FqCodel::new(&Config::default());
        let (mut rng, mut log) = (Rng::from_seed(7), Log::default());
        for k in 0..50 {
            offer(&mut q, SimTime::ZERO, pkt(1000 + k, 1, 1500, Ecn::NotEct), &mut rng, &mut log);
        }
        let mut cx = QdiscCtx::new(SimTime::ZERO, &mut rng, &mut log);
        assert_eq!(q.dequeue(&mut cx).unwrap().uid(), 1000);
        assert_eq!(q.dequeue(&mut cx).unwrap().uid(), 1001); // flow 1 is now old
        offer(&mut q, SimTime::ZERO, pkt(7, 2, 100, Ecn::NotEct), &mut rng, &mut log);
        let mut cx = QdiscCtx::new(SimTime::ZERO, &mut rng, &mut log);
        assert_eq!(q.dequeue(&mut cx).unwrap().uid(), 7, "the new flow's packet goes next");
    }

    #[test]
    fn overflow_drops_from_the_head_of_the_fattest_flow() {
        // Limit 20: flow 1 holds 15 packets of 1000 B, flow 2 five of 100 B; the 21st packet
        // (flow 2) overflows: flow 1 loses its head packets until half its 15000 B are gone
        // (8 packets: 8000 >= 7500).
        let cfg = Config { packets: 20, ..Config::default() };
        let mut q = FqCodel::new(&cfg);
        let (mut rng, mut log) = (Rng::from_seed(7), Log::default());
        for k in 0..15 {
            offer(&mut q, SimTime::ZERO, pkt(100 + k, 1, 1000, Ecn::NotEct), &mut rng, &mut log);
        }
        for k in 0..6 {
            offer(&mut q, SimTime::ZERO, pkt(200 + k, 2, 100, Ecn::NotEct), &mut rng, &mut log);
        }
        let dropped: Vec<u64> = log.drops.iter().map(|d| d.1).collect();
        assert_eq!(dropped, (100..108).collect::<Vec<_>>());
        assert!(log.drops.iter().all(|d| d.2 == DropReason::Overflow));
        assert_eq!((q.len_packets(), q.len_bytes()), (13, 7000 + 600));
    }

    #[test]
    fn each_flow_has_its_own_codel_and_ecn_marks() {
        // One flow overloading 2:1 for a second, with ECN-capable packets: CoDel marks, never
        // drops; a second queue's state is untouched.
        let mut q = FqCodel::new(&Config::default());
        let (mut rng, mut log) = (Rng::from_seed(3), Log::default());
        let tx = SimDuration::from_millis(1);
        let (mut t_arr, mut t_link, mut uid, mut sent) = (SimTime::ZERO, SimTime::ZERO, 1u64, 0);
        while uid <= 2000 {
            if t_arr <= t_link {
                offer(&mut q, t_arr, pkt(uid, 1, 1500, Ecn::Ect0), &mut rng, &mut log);
                uid += 1;
                t_arr += SimDuration::from_micros(500);
            } else {
                let mut cx = QdiscCtx::new(t_link, &mut rng, &mut log);
                if q.dequeue(&mut cx).is_some() {
                    sent += 1;
                }
                t_link += tx;
            }
        }
        assert!(log.drops.is_empty());
        assert!(log.marks.len() >= 5, "{} marks", log.marks.len());
        assert!(sent > 900);
        let other = q.classify(&pkt(0, 9, 1, Ecn::NotEct));
        assert!(q.flows[other].fifo.q.is_empty() && !q.flows[other].vars.is_dropping());
    }

    /// Three packets of `ecn` in at 0, 1 and 2 ms, dequeued at 2.5 ms (sojourn 2.5, 1.5 and
    /// 0.5 ms, below CoDel's 5 ms target: CoDel itself does nothing): their ECN fields after.
    fn ce_threshold_run(cfg: &Config, ecn: Ecn) -> Vec<Ecn> {
        let mut q = FqCodel::new(cfg);
        let (mut rng, mut log) = (Rng::from_seed(7), Log::default());
        for u in 0..3 {
            offer(&mut q, SimTime::from_millis(u), pkt(u, 1, 1500, ecn), &mut rng, &mut log);
        }
        let mut cx = QdiscCtx::new(SimTime::ZERO + SimDuration::from_micros(2500), &mut rng, &mut log);
        std::iter::from_fn(|| q.dequeue(&mut cx).map(|p| p.ecn())).collect()
    }

    #[test]
    fn ce_threshold_marks_departures_above_it() {
        let th = Some(Dur(SimDuration::from_millis(1)));
        let all = Config { ce_threshold: th, ..Config::default() };
        assert_eq!(ce_threshold_run(&all, Ecn::Ect0), vec![Ecn::Ce, Ecn::Ce, Ecn::Ect0]);
        assert_eq!(ce_threshold_run(&all, Ecn::Ect1), vec![Ecn::Ce, Ecn::Ce, Ecn::Ect1]);
        assert_eq!(ce_threshold_run(&all, Ecn::NotEct), vec![Ecn::NotEct; 3], "never dropped for it");
        // The L4S mode: ECT(1) only.
        let l4s = Config { ce_threshold: th, ce_threshold_ect1: true, ..Config::default() };
        assert_eq!(ce_threshold_run(&l4s, Ecn::Ect0), vec![Ecn::Ect0; 3]);
        assert_eq!(ce_threshold_run(&l4s, Ecn::Ect1), vec![Ecn::Ce, Ecn::Ce, Ecn::Ect1]);
        // Off by default.
        assert_eq!(ce_threshold_run(&Config::default(), Ecn::Ect1), vec![Ecn::Ect1; 3]);
    }

    #[test]
    fn bad_parameters_name_the_field() {
        let sel = Config { ce_threshold_ect1: true, ..Config::default() };
        assert_eq!(sel.validate().unwrap_err().field, "ce_threshold_ect1");
        for (cfg, field) in [
            (Config { flows: 0, ..Config::default() }, "flows"),
            (Config { quantum: Bytes(0), ..Config::default() }, "quantum"),
            (Config { packets: 0, ..Config::default() }, "packets"),
            (Config { drop_batch: 0, ..Config::default() }, "drop_batch"),
            (Config { target: Dur(SimDuration(0)), ..Config::default() }, "target"),
        ] {
            assert_eq!(cfg.validate().unwrap_err().field, field);
        }
    }
}
