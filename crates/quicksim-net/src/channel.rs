//! One direction of a point-to-point link: DropTail FIFO output queue, serializer, propagation
//! delay and impairments (loss, jitter, rate changes, down/up).

use crate::{ChanId, NetEvent, NetObserver, NodeId, Packet};
use quicksim_engine::{Rate, Rng, SimDuration, SimTime};
use std::collections::VecDeque;

/// Capacity of a DropTail queue. Bytes count IP datagram bytes, as INET does; the frame being
/// transmitted is not in the queue. `None` = unlimited in that dimension.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct QueueLimit {
    pub packets: Option<u64>,
    pub bytes: Option<u64>,
}

/// Packet loss applied after serialization (the frame occupied the link, then vanished).
#[derive(Clone, Debug, PartialEq)]
pub enum LossModel {
    None,
    /// Each frame is lost independently with probability p.
    Bernoulli(f64),
    /// Exactly one frame is lost after every `every` delivered frames (INET's
    /// PeriodicLossChannel: 1/p delivered, then 1 dropped).
    Periodic {
        every: u64,
    },
}

/// Extra delay drawn uniformly from [0, max] per frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Jitter {
    pub max: SimDuration,
    /// false: arrivals keep FIFO order (a frame never overtakes the one before it);
    /// true: frames may be reordered, as netem does.
    pub reorder: bool,
}

/// Static configuration of one link direction.
#[derive(Clone, Debug)]
pub struct ChannelConfig {
    pub rate: Rate,
    pub delay: SimDuration,
    /// Largest IP datagram the link carries.
    pub mtu: u32,
    /// Per-frame link-layer overhead (PPP: 7 B).
    pub overhead: u32,
    pub queue: QueueLimit,
    pub loss: LossModel,
    pub jitter: Option<Jitter>,
}

impl ChannelConfig {
    /// A lossless link with an unlimited queue and PPP overhead.
    pub fn new(rate: Rate, delay: SimDuration, mtu: u32) -> Self {
        ChannelConfig {
            rate,
            delay,
            mtu,
            overhead: crate::PPP_OVERHEAD,
            queue: QueueLimit::default(),
            loss: LossModel::None,
            jitter: None,
        }
    }
}

/// Why a packet was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropReason {
    /// The output queue was full (tail drop).
    Overflow,
    /// The link's loss model dropped it.
    Loss,
    /// The link was down.
    Down,
    /// Larger than the link MTU.
    Mtu,
}

impl DropReason {
    pub fn as_str(self) -> &'static str {
        match self {
            DropReason::Overflow => "overflow",
            DropReason::Loss => "loss",
            DropReason::Down => "down",
            DropReason::Mtu => "mtu",
        }
    }
}

/// Counters kept for every channel regardless of what is recorded.
#[derive(Clone, Copy, Debug, Default)]
pub struct ChannelStats {
    pub enqueued_packets: u64,
    pub sent_packets: u64,
    pub delivered_packets: u64,
    pub delivered_bytes: u64,
    pub delivered_frame_bytes: u64,
    pub dropped_packets: u64,
    pub dropped_bytes: u64,
    pub max_queue_packets: u64,
    pub max_queue_bytes: u64,
    /// Integral of queue length (packets) over time, in packet-picoseconds, for the time mean.
    pub queue_packet_ps: u128,
}

/// Runtime state of one link direction.
pub struct Channel<P> {
    pub id: ChanId,
    pub from: NodeId,
    pub to: NodeId,
    pub cfg: ChannelConfig,
    /// The current rate (`cfg.rate` until a rate change); private so that every change goes
    /// through `set_rate`, which clears `tx_memo`.
    rate: Rate,
    pub up: bool,
    queue: VecDeque<Packet<P>>,
    queued_bytes: u64,
    tx: Option<Packet<P>>,
    last_arrival: SimTime,
    last_queue_change: SimTime,
    periodic_count: u64,
    /// Frames serialized but not yet arrived at the far end.
    propagating: u64,
    /// (frame bytes, serialization time) of the last frame at the current rate: most frames
    /// on a link have the size of the one before (full-size data, same-size ACKs), and this
    /// saves a 64-bit division per packet and hop. (0, 0) is right at every rate.
    tx_memo: (u64, SimDuration),
    rng: Rng,
    pub stats: ChannelStats,
}

impl<P> Channel<P> {
    pub fn new(id: ChanId, from: NodeId, to: NodeId, cfg: ChannelConfig, rng: Rng) -> Self {
        Channel {
            id,
            from,
            to,
            rate: cfg.rate,
            cfg,
            up: true,
            queue: VecDeque::new(),
            queued_bytes: 0,
            tx: None,
            last_arrival: SimTime::ZERO,
            last_queue_change: SimTime::ZERO,
            periodic_count: 0,
            propagating: 0,
            tx_memo: (0, SimDuration::ZERO),
            rng,
            stats: ChannelStats::default(),
        }
    }

    /// The current rate.
    pub fn rate(&self) -> Rate {
        self.rate
    }

    /// Waiting packets (the frame in transmission excluded).
    pub fn queue_len(&self) -> usize {
        self.queue.len()
    }
    pub fn queued_bytes(&self) -> u64 {
        self.queued_bytes
    }
    /// Frames in transmission or waiting.
    pub fn busy(&self) -> bool {
        self.tx.is_some()
    }

    fn account_queue(&mut self, now: SimTime) {
        let dt = now.0 - self.last_queue_change.0;
        self.stats.queue_packet_ps += self.queue.len() as u128 * dt as u128;
        self.last_queue_change = now;
    }

    fn drop_pkt<O: NetObserver<P>>(&mut self, now: SimTime, p: &Packet<P>, why: DropReason, obs: &mut O) {
        self.stats.dropped_packets += 1;
        self.stats.dropped_bytes += p.ip_bytes as u64;
        obs.dropped(now, self.id, p, why);
    }

    /// Offer a packet to this interface's output.
    pub fn enqueue<S, O>(&mut self, now: SimTime, p: Packet<P>, sched: &mut S, obs: &mut O)
    where
        S: FnMut(SimTime, NetEvent<P>),
        O: NetObserver<P>,
    {
        if p.ip_bytes > self.cfg.mtu {
            return self.drop_pkt(now, &p, DropReason::Mtu, obs);
        }
        if !self.up {
            return self.drop_pkt(now, &p, DropReason::Down, obs);
        }
        self.stats.enqueued_packets += 1;
        if self.tx.is_none() && self.queue.is_empty() {
            self.start_tx(now, p, sched);
            return;
        }
        let q = self.cfg.queue;
        let full_pk = q.packets.is_some_and(|c| self.queue.len() as u64 + 1 > c);
        let full_b = q.bytes.is_some_and(|c| self.queued_bytes + p.ip_bytes as u64 > c);
        if full_pk || full_b {
            return self.drop_pkt(now, &p, DropReason::Overflow, obs);
        }
        self.account_queue(now);
        self.queued_bytes += p.ip_bytes as u64;
        self.queue.push_back(p);
        let (n, b) = (self.queue.len() as u64, self.queued_bytes);
        self.stats.max_queue_packets = self.stats.max_queue_packets.max(n);
        self.stats.max_queue_bytes = self.stats.max_queue_bytes.max(b);
        obs.queue_changed(now, self.id, n as usize, b);
    }

    fn start_tx<S: FnMut(SimTime, NetEvent<P>)>(&mut self, now: SimTime, p: Packet<P>, sched: &mut S) {
        let frame = p.ip_bytes as u64 + self.cfg.overhead as u64;
        if self.tx_memo.0 != frame {
            self.tx_memo = (frame, self.rate.tx_time(frame));
        }
        sched(now + self.tx_memo.1, NetEvent::TxDone(self.id));
        self.tx = Some(p);
    }

    fn start_next<S, O>(&mut self, now: SimTime, sched: &mut S, obs: &mut O)
    where
        S: FnMut(SimTime, NetEvent<P>),
        O: NetObserver<P>,
    {
        if !self.up || self.tx.is_some() {
            return;
        }
        if let Some(p) = self.queue.pop_front() {
            self.account_queue(now);
            self.queued_bytes -= p.ip_bytes as u64;
            obs.queue_changed(now, self.id, self.queue.len(), self.queued_bytes);
            self.start_tx(now, p, sched);
        }
    }

    /// The frame in transmission has been serialized: apply loss, schedule its arrival,
    /// start the next one.
    pub fn tx_done<S, O>(&mut self, now: SimTime, sched: &mut S, obs: &mut O)
    where
        S: FnMut(SimTime, NetEvent<P>),
        O: NetObserver<P>,
    {
        assert!(self.tx.is_some(), "TxDone without a frame in transmission");
        self.stats.sent_packets += 1;
        let lost = if !self.up {
            Some(DropReason::Down)
        } else {
            match self.cfg.loss {
                LossModel::None => None,
                LossModel::Bernoulli(pr) => self.rng.bernoulli(pr).then_some(DropReason::Loss),
                LossModel::Periodic { every } => {
                    if self.periodic_count >= every {
                        self.periodic_count = 0;
                        Some(DropReason::Loss)
                    } else {
                        self.periodic_count += 1;
                        None
                    }
                }
            }
        };
        match lost {
            Some(why) => {
                let p = self.tx.take().expect("checked above");
                self.drop_pkt(now, &p, why, obs)
            }
            None => {
                let mut at = now + self.cfg.delay;
                if let Some(j) = self.cfg.jitter {
                    at += SimDuration(self.rng.range_u64(0, j.max.0));
                    if !j.reorder && at < self.last_arrival {
                        at = self.last_arrival;
                    }
                }
                self.last_arrival = at;
                self.propagating += 1;
                // Taken out of `tx` only here, so the packet goes from the channel to the event
                // without a detour through the stack (store-to-load forwarding stalls).
                let p = self.tx.take().expect("checked above");
                sched(at, NetEvent::Arrive(self.id, p));
            }
        }
        self.start_next(now, sched, obs);
    }

    /// Count a frame that reached the far end.
    pub fn arrived<O: NetObserver<P>>(&mut self, now: SimTime, p: &Packet<P>, obs: &mut O) {
        let frame = p.ip_bytes as u64 + self.cfg.overhead as u64;
        self.propagating -= 1;
        self.stats.delivered_packets += 1;
        self.stats.delivered_bytes += p.ip_bytes as u64;
        self.stats.delivered_frame_bytes += frame;
        obs.delivered(now, self.id, p, frame);
    }

    pub fn set_rate(&mut self, rate: Rate) {
        // Applies from the next frame: the frame on the wire keeps the rate it started with.
        self.rate = rate;
        self.tx_memo = (0, SimDuration::ZERO);
    }

    pub fn set_up<S, O>(&mut self, now: SimTime, up: bool, sched: &mut S, obs: &mut O)
    where
        S: FnMut(SimTime, NetEvent<P>),
        O: NetObserver<P>,
    {
        self.up = up;
        if up {
            self.start_next(now, sched, obs);
        }
    }

    /// Close the time integral of the queue length at the end of the run.
    pub fn finish(&mut self, now: SimTime) {
        self.account_queue(now);
    }

    /// Packets held by this channel: waiting, in transmission or propagating.
    pub fn held_packets(&self) -> u64 {
        self.queue.len() as u64 + self.tx.is_some() as u64 + self.propagating
    }
}
