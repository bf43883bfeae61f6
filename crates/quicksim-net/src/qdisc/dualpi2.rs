//! DualPI2, the DualQ Coupled AQM of RFC 9332 with the PI2 base AQM (its Appendix A; De
//! Schepper et al., "PI2: A Linearized AQM for both Classic and Scalable TCP", CoNEXT 2016).
//!
//! Two FIFOs: packets whose ECN field is ECT(1) or CE go to the L4S queue (L), all others
//! (Not-ECT, ECT(0)) to the Classic queue (C) (RFC 9332 section 2.5.1.1). Every `tupdate` a PI
//! controller moves the base probability `p'` by `alpha (curq - target) + beta (curq -
//! prevq)`, `curq` being the queueing time of the packet at the head of C (Appendix A.1,
//! `dualpi2_update`). From it come the coupled L4S probability `p_CL = k p'` and the Classic
//! probability `p_C = p'^2` (section 2.4). At dequeue (as the pseudocode and Linux's default
//! `drop_dequeue`) an L packet is marked with `p_L = max(p'_L, p_CL)`, `p'_L` the native L4S
//! AQM's: a step (or a ramp) on the packet's sojourn time, not applied while the L queue holds
//! at most `th_len` packets; a C packet is marked (ECT(0)) or dropped (Not-ECT) with `p_C`.
//!
//! PI2's input is, as in Linux, the larger of the two head packets' queueing times (the RFC's
//! pseudocode takes C's alone; `pi2_qdelay = "classic"`).
//!
//! Overload (Appendix A.2, figure with saturation): once `p_C >= p_Cmax = min(1/k^2, 1)` (then
//! `p_CL >= 1`), with `drop_on_overload` L packets are dropped with `p_C` and the rest all
//! marked, and C packets are dropped with `p_C` whatever their ECN field, so an unresponsive
//! ECT(1) source cannot take the link by ignoring marks.
//!
//! The scheduler is a time-shifted FIFO (TS-FIFO, one of the schedulers RFC 9332 names): the
//! queue whose head packet arrived first is served, C's head counted as if it had arrived
//! `tshift` later.
//! Linux's `sch_dualpi2` schedules with a weighted round robin instead (`classic_protection`
//! 10 %), which this model does not have.
//!
//! Where Linux's `sch_dualpi2` and the RFC's example differ, the defaults are Linux's (the
//! implementation the L4S team measures with) and the doc comment of the field says so: Linux
//! takes `tupdate = 16 ms`, `alpha = 0.16 Hz`, `beta = 3.2 Hz`, where the RFC's formulas
//! (`Tupdate = min(target, RTT_max/3)`, `alpha = 0.1 Tupdate / RTT_max^2`, `beta = 0.3 /
//! RTT_max`, RTT_max = 100 ms) give 15 ms, 0.15 Hz and 3 Hz; Linux marks L on a step at 1 ms
//! (`step_thresh`) where the RFC's example is a ramp from 800 us over 400 us; the RFC bounds the
//! buffer in bytes (250 ms at the link rate), Linux in packets (10000).
//!
//! The queue reports its total length to the `queues` table and, through
//! [`Qdisc::sub_queues`], each queue's length, the sojourn time of the packet it served last,
//! and its marks and drops (the table's `l_*` and `c_*` columns).

use super::codel::{CodelQueue, TimedFifo};
use super::{ConfigError, KindConfig, Qdisc, QdiscCtx, QueueLen, Queued, SubQueue, SubQueues, Verdict};
use crate::{DropReason, Ecn, Packet};
use quicksim_engine::units::{Bytes, Dur};
use quicksim_engine::{SimDuration, SimTime};
use serde::Deserialize;

/// RFC 9332 Appendix A.1: coupling factor k = 2, target = 15 ms.
pub const DEFAULT_K: f64 = 2.0;
pub const DEFAULT_TARGET_US: u64 = 15_000;
/// Linux `sch_dualpi2`: tupdate = 16 ms, alpha = 0.16 Hz, beta = 3.2 Hz (RFC formulas: 15 ms,
/// 0.15 Hz, 3 Hz).
pub const DEFAULT_TUPDATE_US: u64 = 16_000;
pub const DEFAULT_ALPHA: f64 = 0.16;
pub const DEFAULT_BETA: f64 = 3.2;
/// Linux `sch_dualpi2` `step_thresh` = 1 ms (the RFC's example ramp: minTh = 800 us, range =
/// 400 us).
pub const DEFAULT_MIN_TH_US: u64 = 1_000;
/// RFC 9332 Appendix A.1: Th_len = 1 packet (Linux `min_qlen_step` = 0).
pub const DEFAULT_TH_LEN: u64 = 1;
/// Linux `sch_dualpi2` limit: 10000 packets.
pub const DEFAULT_PACKETS: u64 = 10_000;
/// The TS-FIFO's time shift; RFC 9332 leaves the scheduler's parameter open. 50 ms is more
/// than three times the Classic target, so C is served ahead of L only when L's head has
/// waited far beyond its sub-millisecond norm (an L queue that does not respond).
pub const DEFAULT_TSHIFT_US: u64 = 50_000;

/// `queue = { kind = "dualpi2", k = 2.0, target = "15ms", tupdate = "16ms", alpha = 0.16,
/// beta = 3.2, min_th = "1ms", range = "0s", th_len = 1, tshift = "50ms", drop_on_overload =
/// true, pi2_qdelay = "max", packets = 10000 }`.
#[derive(Clone, Debug, Deserialize, schemars::JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Coupling factor: p_CL = k p' (RFC 9332 section 2.4; default 2, as the RFC and Linux).
    #[serde(default = "default_k")]
    pub k: f64,
    /// Queueing delay the PI2 controller steers the Classic queue to (RFC and Linux: 15 ms).
    #[serde(default = "default_target")]
    pub target: Dur,
    /// How often p' is recomputed (Linux: 16 ms; the RFC's min(target, RTT_max/3): 15 ms).
    #[serde(default = "default_tupdate")]
    pub tupdate: Dur,
    /// Integral gain, Hz (Linux: 0.16; the RFC's 0.1 Tupdate / RTT_max^2: 0.15).
    #[serde(default = "default_alpha")]
    pub alpha: f64,
    /// Proportional gain, Hz (Linux: 3.2; the RFC's 0.3 / RTT_max: 3).
    #[serde(default = "default_beta")]
    pub beta: f64,
    /// minTh: the native L4S AQM marks an L packet whose sojourn time exceeds this (Linux
    /// `step_thresh`, 1 ms; the RFC's example ramp starts at 800 us).
    #[serde(default = "default_min_th")]
    pub min_th: Dur,
    /// range: 0 is a step at `min_th` (Linux); above 0, a ramp from 0 at `min_th` to 1 at
    /// `min_th + range` (the RFC's example: 400 us).
    #[serde(default = "default_range")]
    pub range: Dur,
    /// Th_len: no native L4S marking while the L queue holds at most this many packets,
    /// counting the one leaving (RFC: 1; Linux `min_qlen_step`: 0).
    #[serde(default = "default_th_len")]
    pub th_len: u64,
    /// TS-FIFO time shift: C's head packet is compared as if it had arrived this much later.
    #[serde(default = "default_tshift")]
    pub tshift: Dur,
    /// On overload (p_C >= p_Cmax) drop L packets with p_C and drop C packets whatever their
    /// ECN field (RFC 9332 Appendix A.2; Linux `drop_on_overload`, its default); false keeps
    /// marking and lets the queue grow to its limit (Linux `overflow`).
    #[serde(default = "default_true")]
    pub drop_on_overload: bool,
    /// The queueing delay PI2 controls: "max", the larger of the two head packets' queueing
    /// times (Linux's `calculate_probability`), so an L queue overloaded by an unresponsive
    /// source raises p' even with no Classic traffic; or "classic", C's head alone (RFC 9332
    /// Appendix A.1's `cq.time()`). The two agree while the L queue stays below the target.
    #[serde(default)]
    pub pi2_qdelay: Pi2Delay,
    /// Capacity in packets, over both queues (Linux `limit`, 10000).
    #[serde(default = "default_packets")]
    pub packets: u64,
    /// Capacity in IP bytes over both queues (the RFC's `limit`; unlimited if left out).
    #[serde(default)]
    pub bytes: Option<Bytes>,
}

/// Whose queueing time PI2 steers (`pi2_qdelay`).
#[derive(Clone, Copy, Debug, Default, Deserialize, schemars::JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Pi2Delay {
    /// The larger of the L and C head packets' queueing times (Linux).
    #[default]
    Max,
    /// The C head packet's (RFC 9332 Appendix A.1).
    Classic,
}

fn default_k() -> f64 {
    DEFAULT_K
}
fn default_target() -> Dur {
    Dur(SimDuration::from_micros(DEFAULT_TARGET_US))
}
fn default_tupdate() -> Dur {
    Dur(SimDuration::from_micros(DEFAULT_TUPDATE_US))
}
fn default_alpha() -> f64 {
    DEFAULT_ALPHA
}
fn default_beta() -> f64 {
    DEFAULT_BETA
}
fn default_min_th() -> Dur {
    Dur(SimDuration::from_micros(DEFAULT_MIN_TH_US))
}
fn default_range() -> Dur {
    Dur(SimDuration::ZERO)
}
fn default_th_len() -> u64 {
    DEFAULT_TH_LEN
}
fn default_tshift() -> Dur {
    Dur(SimDuration::from_micros(DEFAULT_TSHIFT_US))
}
fn default_true() -> bool {
    true
}
fn default_packets() -> u64 {
    DEFAULT_PACKETS
}

impl Default for Config {
    fn default() -> Self {
        Config {
            k: DEFAULT_K,
            target: default_target(),
            tupdate: default_tupdate(),
            alpha: DEFAULT_ALPHA,
            beta: DEFAULT_BETA,
            min_th: default_min_th(),
            range: default_range(),
            th_len: DEFAULT_TH_LEN,
            tshift: default_tshift(),
            drop_on_overload: true,
            pi2_qdelay: Pi2Delay::Max,
            packets: DEFAULT_PACKETS,
            bytes: None,
        }
    }
}

impl KindConfig for Config {
    const KIND: &'static str = "dualpi2";
    fn validate(&self) -> Result<(), ConfigError> {
        if !self.k.is_finite() || self.k <= 0.0 {
            return Err(ConfigError::new("k", format!("{}: the coupling factor must be > 0", self.k)));
        }
        if self.tupdate.0 .0 == 0 {
            return Err(ConfigError::new("tupdate", "\"0s\": the update interval must be positive"));
        }
        for (f, v) in [("alpha", self.alpha), ("beta", self.beta)] {
            if !v.is_finite() || v < 0.0 {
                return Err(ConfigError::new(f, format!("{v}: a gain must be a number >= 0")));
            }
        }
        if self.packets == 0 {
            return Err(ConfigError::new("packets", "0: a queue must hold at least 1 packet"));
        }
        if self.bytes.map(|b| b.0) == Some(0) {
            return Err(ConfigError::new("bytes", "\"0B\": a queue must hold at least one packet"));
        }
        Ok(())
    }
    fn capacity(&self) -> (Option<u64>, Option<u64>) {
        (Some(self.packets), self.bytes.map(|b| b.0))
    }
}

/// Which queue the scheduler picked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Which {
    L,
    C,
}

/// The DualPI2 queue.
#[derive(Debug)]
pub struct DualPi2<P> {
    l: TimedFifo<P>,
    c: TimedFifo<P>,
    cfg: Config,
    max_bytes: u64,
    /// p': the PI2 base probability, in [0, 1].
    p_base: f64,
    /// p_CL = min(k p', 1), p_C = p'^2, p_Cmax = min(1/k^2, 1).
    p_cl: f64,
    p_c: f64,
    p_cmax: f64,
    /// The Classic queueing time at the last update (seconds).
    prevq: f64,
    /// The next update (None until the first packet).
    next_update: Option<SimTime>,
    /// Per queue (L, C): the last served packet's sojourn, marks and drops so far (`len` unused).
    l_stat: SubQueue,
    c_stat: SubQueue,
}

impl<P> DualPi2<P> {
    pub fn new(cfg: &Config) -> Self {
        DualPi2 {
            l: TimedFifo::default(),
            c: TimedFifo::default(),
            cfg: cfg.clone(),
            max_bytes: cfg.bytes.map_or(u64::MAX, |b| b.0),
            p_base: 0.0,
            p_cl: 0.0,
            p_c: 0.0,
            p_cmax: (1.0 / (cfg.k * cfg.k)).min(1.0),
            prevq: 0.0,
            next_update: None,
            l_stat: SubQueue::default(),
            c_stat: SubQueue::default(),
        }
    }

    /// The base probability p'.
    pub fn p_base(&self) -> f64 {
        self.p_base
    }
    /// The coupled L4S probability p_CL.
    pub fn p_cl(&self) -> f64 {
        self.p_cl
    }
    /// The Classic probability p_C.
    pub fn p_c(&self) -> f64 {
        self.p_c
    }
    /// The L4S queue's length.
    pub fn l_len(&self) -> QueueLen {
        QueueLen { packets: self.l.q.len(), bytes: self.l.bytes }
    }
    /// The Classic queue's length.
    pub fn c_len(&self) -> QueueLen {
        QueueLen { packets: self.c.q.len(), bytes: self.c.bytes }
    }
    /// Whether the AQM is in overload (RFC 9332 Appendix A.2: p_C >= p_Cmax).
    pub fn overloaded(&self) -> bool {
        self.cfg.drop_on_overload && self.p_c >= self.p_cmax
    }

    /// RFC 9332 classifier: ECN bits `x1` (ECT(1), CE) go to L.
    pub fn classify(e: Ecn) -> Which {
        if (e as u8) & 1 == 1 {
            Which::L
        } else {
            Which::C
        }
    }

    /// The TS-FIFO's choice between two non-empty queues: L unless C's head, shifted by
    /// `tshift`, arrived strictly earlier than L's head.
    fn schedule(&self) -> Option<Which> {
        match (self.l.q.front(), self.c.q.front()) {
            (None, None) => None,
            (Some(_), None) => Some(Which::L),
            (None, Some(_)) => Some(Which::C),
            (Some(l), Some(c)) => {
                if c.enqueued_at + self.cfg.tshift.0 < l.enqueued_at {
                    Some(Which::C)
                } else {
                    Some(Which::L)
                }
            }
        }
    }

    /// The native L4S AQM's probability for a sojourn time (RFC 9332 Appendix A.1 `laqm`):
    /// 0 up to minTh, a ramp to 1 over `range`, or a step at minTh when `range` is 0.
    pub fn laqm(&self, sojourn: SimDuration) -> f64 {
        let (min_th, range) = (self.cfg.min_th.0, self.cfg.range.0);
        if sojourn <= min_th {
            0.0
        } else if sojourn >= min_th + range {
            1.0
        } else {
            (sojourn - min_th).as_secs_f64() / range.as_secs_f64()
        }
    }

    /// RFC 9332 `dualpi2_update` with the Classic queueing time `curq`: p' moves by the PI
    /// terms and stays in [0, 1]; p_CL and p_C follow.
    fn update(&mut self, curq: SimDuration) {
        let (q, target) = (curq.as_secs_f64(), self.cfg.target.0.as_secs_f64());
        let delta = self.cfg.alpha * (q - target) + self.cfg.beta * (q - self.prevq);
        self.set_base(self.p_base + delta);
        self.prevq = q;
    }

    /// p' (bounded to [0, 1]) and the two probabilities derived from it (RFC 9332 section 2.4).
    fn set_base(&mut self, p: f64) {
        self.p_base = p.clamp(0.0, 1.0);
        self.p_cl = (self.cfg.k * self.p_base).min(1.0);
        self.p_c = self.p_base * self.p_base;
    }

    fn stat(&mut self, w: Which) -> &mut SubQueue {
        match w {
            Which::L => &mut self.l_stat,
            Which::C => &mut self.c_stat,
        }
    }

    fn start_timer(&mut self, now: SimTime) {
        if self.next_update.is_none() {
            self.next_update = Some(now + self.cfg.tupdate.0);
        }
    }
}

/// `p > rand()` of the pseudocode, drawing only when the outcome is not already known (so a
/// run without marking draws nothing).
fn roll<P>(cx: &mut QdiscCtx<'_, P>, p: f64) -> bool {
    if p <= 0.0 {
        false
    } else if p >= 1.0 {
        true
    } else {
        cx.rng.uniform01() < p
    }
}

impl<P> Qdisc<P> for DualPi2<P> {
    fn enqueue(&mut self, cx: &mut QdiscCtx<'_, P>, q: Queued<P>) -> Verdict<P> {
        self.start_timer(cx.now);
        let (n, b) = (self.l.q.len() + self.c.q.len(), self.l.bytes + self.c.bytes);
        let which = Self::classify(q.pkt.ecn());
        if n as u64 >= self.cfg.packets || b + q.pkt.ip_bytes as u64 > self.max_bytes {
            self.stat(which).drops += 1;
            return Verdict::Dropped(q.pkt, DropReason::Overflow);
        }
        match which {
            Which::L => self.l.push(q),
            Which::C => self.c.push(q),
        }
        Verdict::Queued
    }

    /// RFC 9332 `dualpi2_dequeue` with the overload handling of Appendix A.2.
    fn dequeue(&mut self, cx: &mut QdiscCtx<'_, P>) -> Option<Packet<P>> {
        self.start_timer(cx.now);
        let overload = self.overloaded();
        loop {
            match self.schedule()? {
                Which::L => {
                    let len_before = self.l.q.len() as u64;
                    let mut e = self.l.pop()?;
                    let sojourn = cx.now - e.enqueued_at;
                    if overload {
                        // Saturation: revert to Classic drop, mark all that remain.
                        if roll(cx, self.p_c) {
                            self.l_stat.drops += 1;
                            cx.drop_packet(e.pkt, DropReason::Aqm);
                            continue;
                        }
                        self.l_stat.marks += u64::from(cx.mark(&mut e.pkt));
                        self.l_stat.sojourn = sojourn;
                        return Some(e.pkt);
                    }
                    let p_native = if len_before > self.cfg.th_len { self.laqm(sojourn) } else { 0.0 };
                    if roll(cx, p_native.max(self.p_cl)) {
                        if !cx.mark(&mut e.pkt) {
                            // Only a Not-ECT packet put in L by hand gets here; it is dropped.
                            self.l_stat.drops += 1;
                            cx.drop_packet(e.pkt, DropReason::Aqm);
                            continue;
                        }
                        self.l_stat.marks += 1;
                    }
                    self.l_stat.sojourn = sojourn;
                    return Some(e.pkt);
                }
                Which::C => {
                    let mut e = self.c.pop()?;
                    if roll(cx, self.p_c) {
                        if overload || !cx.mark(&mut e.pkt) {
                            self.c_stat.drops += 1;
                            cx.drop_packet(e.pkt, DropReason::Aqm);
                            continue;
                        }
                        self.c_stat.marks += 1;
                    }
                    self.c_stat.sojourn = cx.now - e.enqueued_at;
                    return Some(e.pkt);
                }
            }
        }
    }
    fn len_packets(&self) -> usize {
        self.l.q.len() + self.c.q.len()
    }
    fn len_bytes(&self) -> u64 {
        self.l.bytes + self.c.bytes
    }
    fn next_timer(&self) -> Option<SimTime> {
        self.next_update
    }
    fn sub_queues(&self) -> Option<SubQueues> {
        Some(SubQueues {
            l: SubQueue { len: self.l_len(), ..self.l_stat },
            c: SubQueue { len: self.c_len(), ..self.c_stat },
        })
    }
    fn on_timer(&mut self, cx: &mut QdiscCtx<'_, P>) {
        // "use queuing time of first-in Classic packet" (0 when C is empty); Linux: the larger
        // of both heads'.
        let head = |f: &TimedFifo<P>| f.q.front().map_or(SimDuration::ZERO, |e| cx.now - e.enqueued_at);
        let curq = match self.cfg.pi2_qdelay {
            Pi2Delay::Classic => head(&self.c),
            Pi2Delay::Max => head(&self.c).max(head(&self.l)),
        };
        self.update(curq);
        self.next_update = Some(cx.now + self.cfg.tupdate.0);
    }
}

#[cfg(test)]
#[path = "dualpi2_tests.rs"]
mod tests;
