//! CoDel, Controlled Delay (RFC 8289): a FIFO that watches each packet's sojourn time at
//! dequeue and, once the minimum sojourn time of an interval has stayed above `target`, drops
//! (or marks CE) packets at intervals shrinking as `interval / sqrt(count)`. The control law
//! state ([`CodelVars`]) is shared with FQ-CoDel, which runs one per flow queue.
//!
//! The dequeue follows the RFC's pseudocode (section 5) in the shape Linux's
//! `include/net/codel_impl.h` gives it, including its ECN path: a packet that can be marked is
//! marked and sent, which ends the drop loop of that dequeue.

use super::{ConfigError, KindConfig, Qdisc, QdiscCtx, Queued, Verdict};
use crate::{DropReason, Packet};
use quicksim_engine::units::{Bytes, Dur};
use quicksim_engine::{SimDuration, SimTime};
use serde::Deserialize;
use std::collections::VecDeque;

/// RFC 8289 section 4.4: TARGET = 5 ms.
pub const TARGET: SimDuration = SimDuration(5_000_000_000);
/// RFC 8289 section 4.3: INTERVAL = 100 ms.
pub const INTERVAL: SimDuration = SimDuration(100_000_000_000);
/// Linux's `codel` limit (packets).
pub const DEFAULT_PACKETS: u64 = 1000;
/// RFC 8289's MAXPACKET: a queue holding no more than this never drops (Linux: the device MTU).
pub const DEFAULT_MTU: u64 = 1500;

/// `queue = { kind = "codel", target = "5ms", interval = "100ms", packets = 1000, mtu = "1500B",
/// ecn = false }`.
#[derive(Clone, Debug, Deserialize, schemars::JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Acceptable standing sojourn time.
    #[serde(default = "default_target")]
    pub target: Dur,
    /// The window over which the sojourn time must stay above `target` before a drop; also the
    /// base of the control law.
    #[serde(default = "default_interval")]
    pub interval: Dur,
    /// Capacity in packets (a packet beyond it is tail-dropped, reason `overflow`).
    #[serde(default = "default_packets")]
    pub packets: u64,
    /// MAXPACKET: no drop while at most this many bytes wait.
    #[serde(default = "default_mtu")]
    pub mtu: Bytes,
    /// Mark ECN-capable packets CE instead of dropping them (RFC 8289 section 5.6).
    #[serde(default)]
    pub ecn: bool,
}

fn default_target() -> Dur {
    Dur(TARGET)
}
fn default_interval() -> Dur {
    Dur(INTERVAL)
}
fn default_packets() -> u64 {
    DEFAULT_PACKETS
}
fn default_mtu() -> Bytes {
    Bytes(DEFAULT_MTU)
}

impl Default for Config {
    fn default() -> Self {
        Config {
            target: default_target(),
            interval: default_interval(),
            packets: DEFAULT_PACKETS,
            mtu: default_mtu(),
            ecn: false,
        }
    }
}

/// The checks CoDel's parameters share with FQ-CoDel.
pub(super) fn check_times(target: SimDuration, interval: SimDuration) -> Result<(), ConfigError> {
    if target.0 == 0 {
        return Err(ConfigError::new("target", "\"0s\": the target sojourn time must be positive"));
    }
    if interval.0 == 0 {
        return Err(ConfigError::new("interval", "\"0s\": the interval must be positive"));
    }
    if target > interval {
        return Err(ConfigError::new(
            "target",
            format!("{} is longer than the interval ({}): CoDel could never drop", target, interval),
        ));
    }
    Ok(())
}

impl KindConfig for Config {
    const KIND: &'static str = "codel";
    fn validate(&self) -> Result<(), ConfigError> {
        check_times(self.target.0, self.interval.0)?;
        if self.packets == 0 {
            return Err(ConfigError::new("packets", "0: a queue must hold at least 1 packet"));
        }
        Ok(())
    }
    fn capacity(&self) -> (Option<u64>, Option<u64>) {
        (Some(self.packets), None)
    }
}

/// CoDel's parameters in the units the control law uses.
#[derive(Clone, Copy, Debug)]
pub(super) struct Params {
    pub target: SimDuration,
    pub interval: SimDuration,
    pub mtu: u64,
    pub ecn: bool,
}

/// What CoDel's dequeue needs of the queue it controls: FIFO pops with enqueue times, and the
/// backlog (bytes) it compares with MAXPACKET after a pop.
pub(super) trait CodelQueue<P> {
    fn pop(&mut self) -> Option<Queued<P>>;
    fn backlog_bytes(&self) -> u64;
}

/// The control law's state (RFC 8289 section 5: `first_above_time`, `drop_next`, `count`,
/// `lastcount`, `dropping`).
#[derive(Clone, Debug, Default)]
pub(super) struct CodelVars {
    /// When the sojourn time will have stayed above target for an interval (None: below).
    first_above_time: Option<SimTime>,
    drop_next: SimTime,
    count: u32,
    lastcount: u32,
    dropping: bool,
    /// The sojourn time of the packet last popped (Linux's `ldelay`): FQ-CoDel's
    /// `ce_threshold` compares the departing packet's with its threshold.
    pub(super) ldelay: SimDuration,
}

/// `t + interval / sqrt(count)` (RFC 8289 `control_law`), in whole picoseconds. `sqrt` and the
/// division are correctly rounded IEEE operations: the same on every machine.
fn control_law(t: SimTime, interval: SimDuration, count: u32) -> SimTime {
    let step = interval.0 as f64 / (count.max(1) as f64).sqrt();
    t + SimDuration(step as u64)
}

impl CodelVars {
    #[cfg(test)]
    pub(super) fn is_dropping(&self) -> bool {
        self.dropping
    }

    /// One pop, and whether the sojourn time has been above target for an interval
    /// (RFC 8289 `dodequeue`).
    fn pop<P, Q: CodelQueue<P>>(
        &mut self,
        now: SimTime,
        q: &mut Q,
        prm: &Params,
    ) -> (Option<Packet<P>>, bool) {
        let Some(e) = q.pop() else {
            self.first_above_time = None;
            return (None, false);
        };
        let sojourn = now - e.enqueued_at;
        self.ldelay = sojourn;
        let mut ok_to_drop = false;
        if sojourn < prm.target || q.backlog_bytes() <= prm.mtu {
            self.first_above_time = None;
        } else {
            match self.first_above_time {
                None => self.first_above_time = Some(now + prm.interval),
                Some(t) => ok_to_drop = now >= t,
            }
        }
        (Some(e.pkt), ok_to_drop)
    }

    /// RFC 8289 `dequeue`: the next packet to send; drops go through `cx` (reason `aqm`).
    pub(super) fn dequeue<P, Q: CodelQueue<P>>(
        &mut self,
        cx: &mut QdiscCtx<'_, P>,
        q: &mut Q,
        prm: &Params,
    ) -> Option<Packet<P>> {
        let now = cx.now;
        let (mut p, mut drop) = self.pop(now, q, prm);
        let Some(mut pkt) = p.take() else {
            self.dropping = false;
            return None;
        };
        if self.dropping {
            if !drop {
                self.dropping = false;
            }
            while self.dropping && now >= self.drop_next {
                self.count = self.count.saturating_add(1);
                if prm.ecn && cx.mark(&mut pkt) {
                    self.drop_next = control_law(self.drop_next, prm.interval, self.count);
                    return Some(pkt);
                }
                cx.drop_packet(pkt, DropReason::Aqm);
                (p, drop) = self.pop(now, q, prm);
                match p.take() {
                    None => {
                        self.dropping = false;
                        return None;
                    }
                    Some(next) => pkt = next,
                }
                if drop {
                    self.drop_next = control_law(self.drop_next, prm.interval, self.count);
                } else {
                    self.dropping = false;
                }
            }
        } else if drop {
            if !(prm.ecn && cx.mark(&mut pkt)) {
                cx.drop_packet(pkt, DropReason::Aqm);
                (p, _) = self.pop(now, q, prm);
                match p.take() {
                    Some(next) => pkt = next,
                    None => {
                        // Enter the dropping state anyway, as the RFC does; the next packet
                        // to come is judged by it.
                        self.enter_dropping(now, prm);
                        return None;
                    }
                }
            }
            self.enter_dropping(now, prm);
        }
        Some(pkt)
    }

    /// RFC 8289: enter the dropping state, resuming the previous count if the last dropping
    /// state ended less than 16 intervals ago.
    fn enter_dropping(&mut self, now: SimTime, prm: &Params) {
        self.dropping = true;
        let delta = self.count.saturating_sub(self.lastcount);
        self.count =
            if delta > 1 && now.saturating_sub(self.drop_next) < prm.interval * 16 { delta } else { 1 };
        self.drop_next = control_law(now, prm.interval, self.count);
        self.lastcount = self.count;
    }
}

/// A FIFO of packets with their enqueue times and their total bytes.
#[derive(Debug)]
pub(super) struct TimedFifo<P> {
    pub q: VecDeque<Queued<P>>,
    pub bytes: u64,
}

impl<P> Default for TimedFifo<P> {
    fn default() -> Self {
        TimedFifo { q: VecDeque::new(), bytes: 0 }
    }
}

impl<P> TimedFifo<P> {
    pub fn push(&mut self, e: Queued<P>) {
        self.bytes += e.pkt.ip_bytes as u64;
        self.q.push_back(e);
    }
}

impl<P> CodelQueue<P> for TimedFifo<P> {
    fn pop(&mut self) -> Option<Queued<P>> {
        let e = self.q.pop_front()?;
        self.bytes -= e.pkt.ip_bytes as u64;
        Some(e)
    }
    fn backlog_bytes(&self) -> u64 {
        self.bytes
    }
}

/// The CoDel queue.
#[derive(Debug)]
pub struct Codel<P> {
    fifo: TimedFifo<P>,
    vars: CodelVars,
    params: Params,
    limit: u64,
}

impl<P> Codel<P> {
    pub fn new(cfg: &Config) -> Self {
        Codel {
            fifo: TimedFifo::default(),
            vars: CodelVars::default(),
            params: Params { target: cfg.target.0, interval: cfg.interval.0, mtu: cfg.mtu.0, ecn: cfg.ecn },
            limit: cfg.packets,
        }
    }
}

impl<P> Qdisc<P> for Codel<P> {
    fn enqueue(&mut self, _cx: &mut QdiscCtx<'_, P>, q: Queued<P>) -> Verdict<P> {
        if self.fifo.q.len() as u64 >= self.limit {
            return Verdict::Dropped(q.pkt, DropReason::Overflow);
        }
        self.fifo.push(q);
        Verdict::Queued
    }
    fn dequeue(&mut self, cx: &mut QdiscCtx<'_, P>) -> Option<Packet<P>> {
        self.vars.dequeue(cx, &mut self.fifo, &self.params)
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
pub(super) mod tests {
    use super::*;
    use crate::qdisc::QdiscSink;
    use crate::{Ecn, NodeId};
    use quicksim_engine::Rng;

    /// Drops and marks reported outside the verdicts, with their times.
    #[derive(Default)]
    pub struct Log {
        pub drops: Vec<(SimTime, u64, DropReason)>,
        pub marks: Vec<(SimTime, u64)>,
    }
    impl QdiscSink<()> for Log {
        fn dropped(&mut self, now: SimTime, p: Packet<()>, why: DropReason) {
            self.drops.push((now, p.uid(), why));
        }
        fn marked(&mut self, now: SimTime, p: &Packet<()>) {
            self.marks.push((now, p.uid()));
        }
    }

    pub fn pkt(uid: u64, flow: u32, bytes: u32, ecn: Ecn) -> Packet<()> {
        let mut p = Packet::new(uid, NodeId(0), NodeId(1), flow, bytes, ());
        p.set_ecn(ecn);
        p
    }

    /// A bottleneck of `tx` per packet fed one 1500 B packet every `gap`: returns the send
    /// times of the packets dequeued, and the log.
    fn run(cfg: &Config, gap: SimDuration, tx: SimDuration, n: u64, ecn: Ecn) -> (Vec<(SimTime, u64)>, Log) {
        let mut q = Codel::new(cfg);
        let (mut rng, mut log) = (Rng::from_seed(1), Log::default());
        let mut sent = Vec::new();
        let (mut next_arrival, mut link_free) = (SimTime::ZERO, SimTime::ZERO);
        let mut uid = 1;
        while uid <= n || !q.is_empty() {
            if uid <= n && next_arrival <= link_free {
                let mut cx = QdiscCtx::new(next_arrival, &mut rng, &mut log);
                let v = q.enqueue(&mut cx, Queued { pkt: pkt(uid, 0, 1500, ecn), enqueued_at: next_arrival });
                assert!(matches!(v, Verdict::Queued));
                uid += 1;
                next_arrival += gap;
            } else {
                let mut cx = QdiscCtx::new(link_free, &mut rng, &mut log);
                if let Some(p) = q.dequeue(&mut cx) {
                    sent.push((link_free, p.uid()));
                    link_free += tx;
                } else {
                    link_free = next_arrival;
                }
            }
        }
        (sent, log)
    }

    #[test]
    fn no_drop_while_the_sojourn_time_stays_below_target() {
        // Arrivals every 1 ms, service 0.9 ms: the queue never builds.
        let (sent, log) = run(
            &Config::default(),
            SimDuration::from_millis(1),
            SimDuration::from_micros(900),
            2000,
            Ecn::NotEct,
        );
        assert_eq!(sent.len(), 2000);
        assert!(log.drops.is_empty());
    }

    #[test]
    fn a_standing_queue_is_dropped_at_the_control_law_s_times() {
        // Overload 2:1 (arrivals every 0.5 ms, service 1 ms): the sojourn time grows by 0.5 ms
        // per packet served, passes 5 ms after ~10 ms; the first drop comes one interval after
        // that (at ~110 ms) and sets count = 1, then drops come at drop_next += 100 ms /
        // sqrt(count) with count = 1, 2, 3, ...
        let (_, log) = run(
            &Config::default(),
            SimDuration::from_micros(500),
            SimDuration::from_millis(1),
            1200,
            Ecn::NotEct,
        );
        assert!(log.drops.iter().all(|d| d.2 == DropReason::Aqm));
        let t: Vec<f64> = log.drops.iter().map(|d| d.0.as_secs_f64()).collect();
        assert!(t.len() >= 4, "{t:?}");
        // The sojourn time of the packet served at time s (s in ms, served back to back from 0)
        // is s - (s / 1 ms) * 0.5 ms = s / 2: above 5 ms from s = 10 ms (to within a packet).
        assert!((t[0] - 0.110).abs() <= 0.0015, "first drop at {}", t[0]);
        // Gaps: 100 ms, 100 / sqrt(2) = 70.7 ms, 100 / sqrt(3) = 57.7 ms, 100 / sqrt(4) = 50 ms,
        // to within a packet time (a drop happens at the first dequeue at or after drop_next).
        for (k, want) in [0.1, 0.070_71, 0.057_74, 0.05].iter().enumerate() {
            assert!((t[k + 1] - t[k] - want).abs() <= 0.0015, "gap {k}: {t:?}");
        }
    }

    #[test]
    fn ecn_capable_packets_are_marked_instead_and_not_ect_ones_still_dropped() {
        let cfg = Config { ecn: true, ..Config::default() };
        let (sent, log) =
            run(&cfg, SimDuration::from_micros(500), SimDuration::from_millis(1), 600, Ecn::Ect0);
        assert!(log.drops.is_empty(), "{:?}", log.drops);
        assert!(log.marks.len() >= 3);
        assert_eq!(sent.len(), 600);
        // The same with the option set but Not-ECT packets: the same decisions, as drops.
        let (_, log2) =
            run(&cfg, SimDuration::from_micros(500), SimDuration::from_millis(1), 600, Ecn::NotEct);
        assert!(log2.marks.is_empty() && !log2.drops.is_empty());
        assert!((log2.drops[0].0.as_secs_f64() - log.marks[0].0.as_secs_f64()).abs() < 1e-9);
    }

    #[test]
    fn bad_parameters_name_the_field() {
        let zero = Config { target: Dur(SimDuration(0)), ..Config::default() };
        assert_eq!(zero.validate().unwrap_err().field, "target");
        let long = Config { target: Dur(SimDuration::from_millis(200)), ..Config::default() };
        assert_eq!(long.validate().unwrap_err().field, "target");
        let iv = Config { interval: Dur(SimDuration(0)), ..Config::default() };
        assert_eq!(iv.validate().unwrap_err().field, "interval");
        assert_eq!(Config { packets: 0, ..Config::default() }.validate().unwrap_err().field, "packets");
        assert!(Config::default().validate().is_ok());
    }
}
