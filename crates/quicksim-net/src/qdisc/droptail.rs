//! DropTail: a FIFO that refuses a packet when accepting it would exceed its packet or byte
//! capacity (INET's `DropTailQueue`, ns-3's `FifoQueueDisc`, Linux's `pfifo`/`bfifo`).

use super::{ConfigError, KindConfig, Qdisc, QdiscCtx, Queued, Verdict};
use crate::{DropReason, Packet};
use quicksim_engine::units::Bytes;
use quicksim_engine::Fifo;
use serde::Deserialize;

/// INET's `PppInterface` DropTailQueue `packetCapacity`.
pub const DEFAULT_PACKETS: u64 = 10_000;

/// `queue = { kind = "droptail", packets = 100, bytes = "150kB" }`. Bytes count IP datagram
/// bytes, as INET does. A limit left out is unlimited, unless both are left out: then the
/// queue holds INET's default of 10000 packets.
#[derive(Clone, Debug, Deserialize, schemars::JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Capacity in packets (default 10000, INET's, when `bytes` is not given either).
    #[serde(default)]
    pub packets: Option<u64>,
    /// Capacity in IP datagram bytes (unlimited if left out).
    #[serde(default)]
    pub bytes: Option<Bytes>,
}

impl Default for Config {
    fn default() -> Self {
        Config { packets: Some(DEFAULT_PACKETS), bytes: None }
    }
}

impl Config {
    /// Unlimited in both dimensions (the network crate's tests; a scenario cannot say this).
    pub fn unlimited() -> Self {
        Config { packets: Some(u64::MAX), bytes: None }
    }
    /// The packet and byte capacities in force (`None` = unlimited).
    fn limits(&self) -> (Option<u64>, Option<u64>) {
        match (self.packets, self.bytes) {
            (None, None) => (Some(DEFAULT_PACKETS), None),
            (p, b) => (p, b.map(|b| b.0)),
        }
    }
}

impl KindConfig for Config {
    const KIND: &'static str = "droptail";
    fn validate(&self) -> Result<(), ConfigError> {
        if self.packets == Some(0) {
            return Err(ConfigError::new(
                "packets",
                "0: a queue must hold at least 1 packet (leave it out for the default of 10000)",
            ));
        }
        if self.bytes.map(|b| b.0) == Some(0) {
            return Err(ConfigError::new("bytes", "\"0B\": a queue must hold at least one packet"));
        }
        Ok(())
    }
    fn capacity(&self) -> (Option<u64>, Option<u64>) {
        self.limits()
    }
}

/// The queue. Stores bare packets: DropTail has no use for the enqueue time. A `Fifo`, not a
/// `VecDeque`: its append is inlined in the channel's accept path (`Fifo`'s reason).
#[derive(Debug)]
pub struct DropTail<P> {
    queue: Fifo<Packet<P>>,
    bytes: u64,
    max_packets: u64,
    max_bytes: u64,
}

impl<P> DropTail<P> {
    pub fn new(cfg: &Config) -> Self {
        let (p, b) = cfg.limits();
        DropTail {
            queue: Fifo::new(),
            bytes: 0,
            max_packets: p.unwrap_or(u64::MAX),
            max_bytes: b.unwrap_or(u64::MAX),
        }
    }
    /// Whether a packet of `ip_bytes` fits (the channel's inline accept path: it then calls
    /// `push`, and no `Verdict` carrying the packet is assembled, whose copy through the stack
    /// cost a store-forwarding stall per queued packet).
    #[inline(always)]
    pub fn fits(&self, ip_bytes: u32) -> bool {
        // Saturating: an unlimited byte capacity is u64::MAX.
        (self.queue.len() as u64) < self.max_packets
            && self.bytes.saturating_add(ip_bytes as u64) <= self.max_bytes
    }
    /// Append a packet that `fits`.
    #[inline(always)]
    pub fn push(&mut self, p: Packet<P>) {
        self.bytes += p.ip_bytes as u64;
        self.queue.push_back(p);
    }
    /// The head packet of a queue that is not empty (the channel's inline dequeue path; panics
    /// on an empty queue).
    #[inline(always)]
    pub fn pop_nonempty(&mut self) -> Packet<P> {
        let p = self.queue.pop_front().expect("DropTail::pop_nonempty on an empty queue");
        self.bytes -= p.ip_bytes as u64;
        p
    }
}

impl<P> Qdisc<P> for DropTail<P> {
    #[inline]
    fn enqueue(&mut self, _cx: &mut QdiscCtx<'_, P>, q: Queued<P>) -> Verdict<P> {
        if !self.fits(q.pkt.ip_bytes) {
            return Verdict::Dropped(q.pkt, DropReason::Overflow);
        }
        self.push(q.pkt);
        Verdict::Queued
    }
    #[inline]
    fn dequeue(&mut self, _cx: &mut QdiscCtx<'_, P>) -> Option<Packet<P>> {
        if self.queue.is_empty() {
            return None;
        }
        Some(self.pop_nonempty())
    }
    #[inline]
    fn len_packets(&self) -> usize {
        self.queue.len()
    }
    #[inline]
    fn len_bytes(&self) -> u64 {
        self.bytes
    }
    #[inline]
    fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }
    fn uses_timers(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::QdiscSink;
    use crate::NodeId;
    use quicksim_engine::{Rng, SimTime};

    /// Records what the discipline reports outside its verdicts.
    #[derive(Default)]
    struct Log {
        drops: Vec<(u64, DropReason)>,
        marks: usize,
    }
    impl QdiscSink<()> for Log {
        fn dropped(&mut self, _now: SimTime, p: Packet<()>, why: DropReason) {
            self.drops.push((p.uid(), why));
        }
        fn marked(&mut self, _now: SimTime, _p: &Packet<()>) {
            self.marks += 1;
        }
    }

    /// Offers packets of the given sizes to `q` through the trait; returns the uids refused.
    fn offer(q: &mut dyn Qdisc<()>, sizes: &[u32], first_uid: u64) -> Vec<u64> {
        let (mut rng, mut log) = (Rng::from_seed(1), Log::default());
        let mut cx = QdiscCtx::new(SimTime::ZERO, &mut rng, &mut log);
        let mut refused = Vec::new();
        for (i, &s) in sizes.iter().enumerate() {
            let pkt = Packet::new(first_uid + i as u64, NodeId(0), NodeId(1), 0, s, ());
            match q.enqueue(&mut cx, Queued { pkt, enqueued_at: SimTime::ZERO }) {
                Verdict::Queued => {}
                Verdict::Dropped(p, why) => {
                    assert_eq!(why, DropReason::Overflow);
                    refused.push(p.uid());
                }
            }
        }
        assert!(log.drops.is_empty() && log.marks == 0, "DropTail reports through verdicts only");
        refused
    }

    fn drain(q: &mut dyn Qdisc<()>) -> Vec<u64> {
        let (mut rng, mut log) = (Rng::from_seed(1), Log::default());
        let mut cx = QdiscCtx::new(SimTime::ZERO, &mut rng, &mut log);
        std::iter::from_fn(|| q.dequeue(&mut cx).map(|p| p.uid())).collect()
    }

    #[test]
    fn packet_limit_refuses_the_tail_and_keeps_fifo_order() {
        let mut q = DropTail::new(&Config { packets: Some(3), bytes: None });
        assert_eq!(offer(&mut q, &[100; 5], 1), vec![4, 5]);
        assert_eq!((q.len_packets(), q.len_bytes()), (3, 300));
        assert_eq!(drain(&mut q), vec![1, 2, 3]);
        assert!(q.is_empty() && q.len_bytes() == 0);
    }

    #[test]
    fn byte_limit_counts_ip_bytes_and_a_small_packet_still_fits() {
        // 1000 + 1000 = 2000 <= 2500; a third 1000 B would make 3000 > 2500 and is refused;
        // then 500 B fits exactly (2500).
        let mut q = DropTail::new(&Config { packets: None, bytes: Some(Bytes(2500)) });
        assert_eq!(offer(&mut q, &[1000, 1000, 1000, 500, 1], 1), vec![3, 5]);
        assert_eq!((q.len_packets(), q.len_bytes()), (3, 2500));
        assert_eq!(drain(&mut q), vec![1, 2, 4]);
    }

    #[test]
    fn both_limits_apply_and_defaults_are_inet_s() {
        let mut q = DropTail::new(&Config { packets: Some(2), bytes: Some(Bytes(10_000)) });
        assert_eq!(offer(&mut q, &[100, 100, 100], 1), vec![3]);
        // Neither limit given: INET's 10000 packets, no byte limit.
        let both_out = Config { packets: None, bytes: None };
        assert_eq!(both_out.limits(), (Some(DEFAULT_PACKETS), None));
        assert_eq!(Config::default().limits(), (Some(DEFAULT_PACKETS), None));
        let mut q = DropTail::new(&both_out);
        let sizes = vec![40; DEFAULT_PACKETS as usize + 1];
        assert_eq!(offer(&mut q, &sizes, 1), vec![DEFAULT_PACKETS + 1]);
    }

    #[test]
    fn zero_limits_are_rejected_with_the_field() {
        let e = Config { packets: Some(0), bytes: None }.validate().unwrap_err();
        assert_eq!(e.field, "packets");
        let e = Config { packets: None, bytes: Some(Bytes(0)) }.validate().unwrap_err();
        assert_eq!(e.field, "bytes");
        assert!(Config::default().validate().is_ok());
    }
}
