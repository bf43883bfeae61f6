//! One direction of a point-to-point link: output queue (a queue discipline), serializer (a
//! link model), propagation delay and impairments (loss, jitter, rate changes, down/up).

use crate::loss::{DropCount, DropList, GilbertElliott};
use crate::model::{fixed_rate, AnyLinkModel, LinkModelConfig, Serializer};
use crate::qdisc::{droptail, AnyQdisc, Qdisc, QdiscConfig, QdiscCtx, QdiscSink, QueueLen, Verdict};
use crate::transmitter::Transmitter;
use crate::{ChanId, NetEvent, NetObserver, NetSched, NodeId, Packet};
use quicksim_engine::{Rate, Rng, RngStreams, SimDuration, SimTime, UniformU64};

/// Packet loss applied after serialization (the frame occupied the link, then vanished).
#[derive(Clone, Debug, PartialEq)]
pub enum LossModel {
    None,
    /// Each frame is lost independently with probability p.
    Bernoulli(f64),
    /// Exactly one frame is lost after every `every` delivered frames (INET's
    /// PeriodicLossChannel: 1/p delivered, then 1 dropped). The first loss comes after `first`
    /// delivered frames (`first <= every`; INET: `first = every`): a run can start its drops at
    /// a chosen phase, e.g. to end a slow start near a window it is meant to study.
    Periodic {
        every: u64,
        first: u64,
    },
    /// Bursty loss: the two-state Gilbert-Elliott channel ([`GilbertElliott`]), drawing from the
    /// link's loss stream as Bernoulli does (a link has one loss model, so no other link's or
    /// model's draws move).
    GilbertElliott(GilbertElliott),
}

/// Extra delay drawn uniformly from [0, max] per frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Jitter {
    pub max: SimDuration,
    /// false: arrivals keep FIFO order (a frame never overtakes the one before it);
    /// true: frames may be reordered, as netem does.
    pub reorder: bool,
}

/// Static configuration of one link direction. `repr(C)` with the fields every packet reads
/// first (`mtu`, `overhead`, `hold_limit`; see `Channel`).
#[derive(Clone, Debug)]
#[repr(C)]
pub struct ChannelConfig {
    /// Largest IP datagram the link carries.
    pub mtu: u32,
    /// Per-frame link-layer overhead (PPP: 7 B).
    pub overhead: u32,
    /// Most packets this direction holds in all (waiting, in transmission and propagating);
    /// one offered beyond it is dropped (`Overflow`). netem's `limit`: an emulator that delays
    /// packets keeps the delayed ones in its queue, so the delay line itself is bounded (Linux
    /// netem's default: 1000 packets). None: only the queue discipline limits.
    pub hold_limit: Option<u64>,
    pub rate: Rate,
    pub delay: SimDuration,
    /// The output queue's discipline (a scenario's `queue` table).
    pub qdisc: QdiscConfig,
    pub loss: LossModel,
    pub jitter: Option<Jitter>,
    /// Packets dropped by number ([`DropList`]), after the loss model.
    pub drop_lists: Vec<DropList>,
    /// The link model deciding serialization times; None: [`fixed_rate`] at `rate` (`rate` is
    /// then also what a trace-driven model reports as its nominal rate).
    pub model: Option<LinkModelConfig>,
}

impl ChannelConfig {
    /// A lossless link with an unlimited DropTail queue and PPP overhead.
    pub fn new(rate: Rate, delay: SimDuration, mtu: u32) -> Self {
        ChannelConfig {
            rate,
            delay,
            mtu,
            overhead: crate::PPP_OVERHEAD,
            qdisc: QdiscConfig::DropTail(droptail::Config::unlimited()),
            loss: LossModel::None,
            jitter: None,
            hold_limit: None,
            drop_lists: Vec::new(),
            model: None,
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
    /// An active queue management discipline (RED, CoDel, PIE...) chose to drop it.
    Aqm,
    /// A drop list named it ([`DropList`]).
    Listed,
}

impl DropReason {
    pub fn as_str(self) -> &'static str {
        match self {
            DropReason::Overflow => "overflow",
            DropReason::Loss => "loss",
            DropReason::Down => "down",
            DropReason::Mtu => "mtu",
            DropReason::Aqm => "aqm",
            DropReason::Listed => "listed",
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
    /// Packets a queue discipline marked Congestion Experienced instead of dropping.
    pub ecn_marked_packets: u64,
    pub max_queue_packets: u64,
    pub max_queue_bytes: u64,
    /// Integral of queue length (packets) over time, in packet-picoseconds, for the time mean.
    pub queue_packet_ps: u128,
    /// The same integral with every interval at the length the queue had during it (the one
    /// above counts the interval before a dequeue one packet short; see `after_qdisc_op`):
    /// the total time packets waited, whence the mean sojourn time by Little's law.
    pub queue_wait_ps: u128,
    /// Drops by a queue discipline's decision (`DropReason::Aqm`), a subset of `dropped_packets`.
    pub aqm_dropped_packets: u64,
    /// Drops for a full queue or hold limit (`DropReason::Overflow`), a subset of `dropped_packets`.
    pub overflow_dropped_packets: u64,
}

impl ChannelStats {
    /// Count a drop of `bytes` for `why`.
    fn count_drop(&mut self, bytes: u64, why: DropReason) {
        self.dropped_packets += 1;
        self.dropped_bytes += bytes;
        match why {
            DropReason::Aqm => self.aqm_dropped_packets += 1,
            DropReason::Overflow => self.overflow_dropped_packets += 1,
            _ => {}
        }
    }
}

/// The random streams of one link direction, one per purpose, so that a draw for one never
/// shifts another's numbers (adding jitter leaves the loss pattern alone; an AQM's draws leave
/// both alone).
pub struct ChannelRngs {
    /// Loss draws. Keeps the stream the link had when it had only one ("link", index), so
    /// results of links with loss but no jitter are those of before the split.
    pub loss: Rng,
    /// Jitter draws ("jitter", index).
    pub jitter: Rng,
    /// The queue discipline's draws ("queue", index).
    pub queue: Rng,
}

impl ChannelRngs {
    /// The streams of channel `index` derived from the run's master seed.
    pub fn derive(rng: &RngStreams, index: u32) -> Self {
        let i = index as u64;
        ChannelRngs {
            loss: rng.stream("link", i),
            jitter: rng.stream("jitter", i),
            queue: rng.stream("queue", i),
        }
    }
}

/// Runtime state of one link direction.
///
/// `repr(C)`, in this order: what every packet reads or writes first (ids, the queue's length,
/// the transmitter, the frame counters, the link model), then the discipline and the
/// configuration (whose first fields are the per-packet `mtu`, `overhead` and `hold_limit`),
/// then what only impaired links use. A channel is ~880 B; in the order the compiler chose, the
/// fields a packet touches were spread over most of its 14 cache lines, with a few hundred
/// channels per run mostly out of the first-level cache.
#[repr(C)]
pub struct Channel<P> {
    pub id: ChanId,
    pub from: NodeId,
    pub to: NodeId,
    pub up: bool,
    /// The configuration has a loss model or a drop list: decided once when the channel is
    /// made (`cfg` does not change afterwards), so that a frame on a clean link pays one
    /// test instead of the loss model's dispatch and the drop lists' check (`fate`).
    lossy: bool,
    /// The discipline may ask for timers (`Qdisc::uses_timers`; DropTail never does).
    qdisc_timers: bool,
    /// The discipline has sub-queues to report (`Qdisc::sub_queues`: DualPI2).
    qdisc_subqueues: bool,
    /// The Gilbert-Elliott chain is in Bad.
    ge_bad: bool,
    /// Why `tx` is lost, if that was decided when it started.
    tx_lost: Option<DropReason>,
    /// The discipline's length (packets, bytes) after its last operation: what the next
    /// operation compares with, and the emptiness check of every offered packet, without asking
    /// the discipline (a dispatch each) on the per-packet path.
    qlen: QueueLen,
    /// When the link is free, and its one pending end-of-transmission event (see
    /// `transmitter.rs`: a frame's arrival is scheduled when it starts).
    xmit: Transmitter,
    /// Frames started (in transmission or propagating) that have not arrived or been dropped.
    in_flight: u64,
    last_arrival: SimTime,
    pub stats: ChannelStats,
    /// Decides serialization times (the link model, with the time of the last frame size
    /// remembered); private so that every rate change goes through `set_rate`.
    model: Serializer,
    qdisc: AnyQdisc<P>,
    pub cfg: ChannelConfig,
    /// The frame whose fate is settled at its end of serialization (`TxDone`): a lost one (its
    /// drop is reported then, with `tx_lost`), or any frame on a link that may go down.
    tx: Option<Packet<P>>,
    last_queue_change: SimTime,
    /// The time of the `QdiscTimer` event last scheduled (earlier ones are stale).
    qdisc_timer: Option<SimTime>,
    periodic_count: u64,
    /// Progress through `cfg.drop_lists`, one per list.
    drop_counts: Vec<DropCount>,
    rngs: ChannelRngs,
    /// Draws the jitter of each frame, [0, `cfg.jitter.max`] (with its bounds fixed: one
    /// division a frame instead of two).
    jitter_draw: UniformU64,
}

/// The channel's counters and observer as a queue discipline's sink of drops and marks.
struct Sink<'a, O> {
    id: ChanId,
    stats: &'a mut ChannelStats,
    obs: &'a mut O,
}

impl<P, O: NetObserver<P>> QdiscSink<P> for Sink<'_, O> {
    fn dropped(&mut self, now: SimTime, p: Packet<P>, why: crate::DropReason) {
        self.stats.count_drop(p.ip_bytes as u64, why);
        self.obs.dropped(now, self.id, &p, why);
    }
    fn marked(&mut self, now: SimTime, p: &Packet<P>) {
        self.stats.ecn_marked_packets += 1;
        self.obs.ecn_marked(now, self.id, p);
    }
}

impl<P> Channel<P> {
    /// A channel with the queue discipline and link model its configuration names.
    pub fn new(id: ChanId, from: NodeId, to: NodeId, cfg: ChannelConfig, rngs: ChannelRngs) -> Self {
        // Periodic loss drops when the count reaches `every`: start it `first` short of that.
        let periodic_count = match cfg.loss {
            LossModel::Periodic { every, first } => every.saturating_sub(first),
            _ => 0,
        };
        let lossy = cfg.loss != LossModel::None || !cfg.drop_lists.is_empty();
        let cfg_jitter_max = cfg.jitter.map_or(0, |j| j.max.0);
        let model = match &cfg.model {
            Some(m) => AnyLinkModel::new(m),
            None => AnyLinkModel::new(&LinkModelConfig::FixedRate(fixed_rate::Config { rate: cfg.rate })),
        };
        Channel {
            id,
            from,
            to,
            model: Serializer::new(model),
            ge_bad: false,
            drop_counts: vec![DropCount::default(); cfg.drop_lists.len()],
            qdisc: AnyQdisc::new(&cfg.qdisc),
            qlen: QueueLen::default(),
            qdisc_timers: true,
            qdisc_subqueues: false,
            cfg,
            up: true,
            xmit: Transmitter::default(),
            tx: None,
            tx_lost: None,
            last_arrival: SimTime::ZERO,
            last_queue_change: SimTime::ZERO,
            qdisc_timer: None,
            periodic_count,
            lossy,
            in_flight: 0,
            rngs,
            stats: ChannelStats::default(),
            jitter_draw: UniformU64::new(0, cfg_jitter_max),
        }
        .with_qdisc_facts()
    }

    fn with_qdisc_facts(mut self) -> Self {
        self.qdisc_timers = self.qdisc.uses_timers();
        self.qdisc_subqueues = self.qdisc.sub_queues().is_some();
        self.qdisc.set_link_rate(self.model.rate());
        self
    }

    /// Replace the queue discipline before the run (one registered at run time goes in as
    /// `AnyQdisc::Dyn`). Panics if the channel already holds packets.
    pub fn set_qdisc(&mut self, q: AnyQdisc<P>) {
        assert!(self.held_packets() == 0, "queue discipline replaced on a channel in use");
        self.qdisc_timers = q.uses_timers();
        self.qdisc_subqueues = q.sub_queues().is_some();
        self.qlen = QueueLen::of(&q);
        self.qdisc = q;
        self.qdisc.set_link_rate(self.model.rate());
    }

    /// Replace the link model before the run (a model supplied at run time: `AnyLinkModel::Dyn`).
    pub fn set_link_model(&mut self, m: AnyLinkModel) {
        assert!(self.in_flight == 0, "link model replaced during a transmission");
        self.model = Serializer::new(m);
        self.qdisc.set_link_rate(self.model.rate());
    }

    /// The configuration of the built-in queue discipline in use; None for one supplied at run
    /// time (`set_qdisc` with `AnyQdisc::Dyn`, a plugin), which `cfg.qdisc` does not describe.
    pub fn builtin_qdisc(&self) -> Option<&QdiscConfig> {
        (!matches!(self.qdisc, AnyQdisc::Dyn(_))).then_some(&self.cfg.qdisc)
    }

    /// The discipline reports sub-queues (DualPI2's L and C): `NetObserver::sub_queues_changed`
    /// follows each of its `queue_changed`.
    pub fn has_sub_queues(&self) -> bool {
        self.qdisc_subqueues
    }

    /// The current rate.
    pub fn rate(&self) -> Rate {
        self.model.rate()
    }

    /// Waiting packets (the frame in transmission excluded).
    pub fn queue_len(&self) -> usize {
        self.qdisc.len_packets()
    }
    pub fn queued_bytes(&self) -> u64 {
        self.qdisc.len_bytes()
    }
    /// A frame is in transmission at `now`, or one waiting is about to start.
    pub fn busy(&self, now: SimTime) -> bool {
        !self.xmit.free(now)
    }

    /// Before the run: this direction has down periods. Each frame's fate is then decided at
    /// the end of its serialization, when whether the link is up decides it (one more event per
    /// frame; see `transmitter.rs`).
    pub fn may_go_down(&mut self) {
        self.xmit.set_fate_at_end();
    }

    /// Add the time since the last change at `len` packets to the queue-length integral, and
    /// at `during` (the length the queue had since then) to the waiting-time integral.
    fn account_queue(&mut self, now: SimTime, len: usize, during: usize) {
        let dt = now.0 - self.last_queue_change.0;
        self.stats.queue_packet_ps += len as u128 * dt as u128;
        self.stats.queue_wait_ps += during as u128 * dt as u128;
        self.last_queue_change = now;
    }

    fn drop_pkt<O: NetObserver<P>>(&mut self, now: SimTime, p: &Packet<P>, why: DropReason, obs: &mut O) {
        self.stats.count_drop(p.ip_bytes as u64, why);
        obs.dropped(now, self.id, p, why);
    }

    /// After a queue operation that left the discipline at `len`: account and report a changed
    /// length (`qlen` is the length the queue had since its last change), and schedule the
    /// timer the discipline asks for if it is new (only a discipline that `uses_timers`).
    #[inline(always)]
    fn after_qdisc_op<S, O>(&mut self, now: SimTime, len: QueueLen, sched: &mut S, obs: &mut O)
    where
        S: NetSched<P>,
        O: NetObserver<P>,
    {
        let before = self.qlen.packets;
        if len != self.qlen {
            self.qlen = len;
            let (n, b) = (len.packets, len.bytes);
            // Before the queue disciplines, a dequeue was accounted at the length after it
            // (one packet short over the interval): kept until that fix is made on its own.
            self.account_queue(now, if n < before { n } else { before }, before);
            self.stats.max_queue_packets = self.stats.max_queue_packets.max(n as u64);
            self.stats.max_queue_bytes = self.stats.max_queue_bytes.max(b);
            obs.queue_changed(now, self.id, n, b);
            if self.qdisc_subqueues {
                self.report_sub_queues(now, obs);
            }
        }
        if self.qdisc_timers {
            let t = self.qdisc.next_timer();
            if let Some(at) = t.filter(|_| t != self.qdisc_timer) {
                assert!(at >= now, "queue discipline asked for a timer at {at}, before now ({now})");
                self.qdisc_timer = t;
                sched.sched(at, NetEvent::QdiscTimer(self.id));
            }
        }
    }

    /// The sub-queues' state after a change of the total (out of the inlined per-packet path).
    #[inline(never)]
    fn report_sub_queues<O: NetObserver<P>>(&self, now: SimTime, obs: &mut O) {
        if let Some(s) = self.qdisc.sub_queues() {
            obs.sub_queues_changed(now, self.id, &s);
        }
    }

    /// Offer a packet to this interface's output.
    pub fn enqueue<S, O>(&mut self, now: SimTime, p: Packet<P>, sched: &mut S, obs: &mut O)
    where
        S: NetSched<P>,
        O: NetObserver<P>,
    {
        if p.ip_bytes > self.cfg.mtu {
            return self.drop_pkt(now, &p, DropReason::Mtu, obs);
        }
        if !self.up {
            return self.drop_pkt(now, &p, DropReason::Down, obs);
        }
        if self.cfg.hold_limit.is_some_and(|n| self.held_packets() >= n) {
            // Counted as offered (enqueued) and dropped, as a queue discipline's tail drop is.
            self.stats.enqueued_packets += 1;
            return self.drop_pkt(now, &p, DropReason::Overflow, obs);
        }
        self.stats.enqueued_packets += 1;
        if self.qlen.packets == 0 && self.xmit.free(now) {
            self.start_tx(now, p, sched, obs);
            return;
        }
        let len = match self.qdisc.as_droptail() {
            // DropTail's accept, inline (its overflow takes the general path below).
            Some(q) if q.fits(p.ip_bytes) => {
                q.push(p);
                QueueLen::of(q)
            }
            _ => {
                let sink = &mut Sink { id: self.id, stats: &mut self.stats, obs: &mut *obs };
                let (verdict, len) = self.qdisc.enqueue_with(now, &mut self.rngs.queue, sink, p);
                if let Verdict::Dropped(p, why) = verdict {
                    self.drop_pkt(now, &p, why, obs);
                }
                len
            }
        };
        self.after_qdisc_op(now, len, sched, obs);
        if self.qlen.packets > 0 {
            if let Some(at) = self.xmit.wake_for_waiting(now) {
                sched.sched(at, NetEvent::TxEnd(self.id));
            }
        }
    }

    /// Always inlined, as the code it replaced was: as a call it cost 2 % more instructions on
    /// the linksharing showcase (callgrind).
    #[inline(always)]
    fn start_tx<S, O>(&mut self, now: SimTime, p: Packet<P>, sched: &mut S, obs: &mut O)
    where
        S: NetSched<P>,
        O: NetObserver<P>,
    {
        obs.tx_started(now, self.id, &p);
        let frame = p.ip_bytes as u64 + self.cfg.overhead as u64;
        let end = now + self.model.tx_time(now, frame);
        self.xmit.start(end);
        self.in_flight += 1;
        // Counted when it starts; `finish` takes back a frame still on the wire at the end.
        self.stats.sent_packets += 1;
        if self.xmit.fate_at_end() {
            self.tx = Some(p);
            sched.sched(self.xmit.wake_at_end(), NetEvent::TxDone(self.id));
            return;
        }
        match self.fate(p.flow) {
            None => {
                self.propagate(end, p, sched);
                if self.qlen.packets > 0 {
                    sched.sched(self.xmit.wake_at_end(), NetEvent::TxEnd(self.id));
                }
            }
            Some(why) => {
                // Lost: its drop is reported when its serialization ends, as it always was.
                self.tx = Some(p);
                self.tx_lost = Some(why);
                sched.sched(self.xmit.wake_at_end(), NetEvent::TxEnd(self.id));
            }
        }
    }

    fn start_next<S, O>(&mut self, now: SimTime, sched: &mut S, obs: &mut O)
    where
        S: NetSched<P>,
        O: NetObserver<P>,
    {
        if !self.up || !self.xmit.free(now) || self.qlen.packets == 0 {
            return;
        }
        if let Some(q) = self.qdisc.as_droptail() {
            // DropTail's dequeue, inline: the queue is not empty (`qlen`), so the packet comes
            // without an `Option` around it.
            let p = q.pop_nonempty();
            let len = QueueLen::of(q);
            self.after_qdisc_op(now, len, sched, obs);
            return self.start_tx(now, p, sched, obs);
        }
        let sink = &mut Sink { id: self.id, stats: &mut self.stats, obs: &mut *obs };
        let (next, len) = self.qdisc.dequeue_with(now, &mut self.rngs.queue, sink);
        self.after_qdisc_op(now, len, sched, obs);
        if let Some(p) = next {
            self.start_tx(now, p, sched, obs);
        }
    }

    /// The queue discipline's timer: stale unless it is the one last scheduled.
    pub fn qdisc_timer<S, O>(&mut self, now: SimTime, sched: &mut S, obs: &mut O)
    where
        S: NetSched<P>,
        O: NetObserver<P>,
    {
        if self.qdisc_timer != Some(now) {
            return;
        }
        self.qdisc_timer = None;
        let mut sink = Sink { id: self.id, stats: &mut self.stats, obs: &mut *obs };
        let mut cx = QdiscCtx::new(now, &mut self.rngs.queue, &mut sink);
        self.qdisc.on_timer(&mut cx);
        self.after_qdisc_op(now, QueueLen::of(&self.qdisc), sched, obs);
        self.start_next(now, sched, obs);
    }

    /// The end of a serialization the transmitter asked to hear about: a frame whose fate is
    /// settled now is dropped or sent on its way, and the next waiting packet starts.
    pub fn tx_done<S, O>(&mut self, now: SimTime, sched: &mut S, obs: &mut O)
    where
        S: NetSched<P>,
        O: NetObserver<P>,
    {
        self.xmit.woken();
        if let Some(p) = self.tx.take() {
            match self.tx_lost.take().or_else(|| self.fate(p.flow)) {
                Some(why) => {
                    self.in_flight -= 1;
                    self.drop_pkt(now, &p, why, obs)
                }
                None => self.propagate(now, p, sched),
            }
        }
        self.start_next(now, sched, obs);
    }

    /// Whether the frame of `flow` that ends its serialization is lost, and why: the link is
    /// down (only checked at the end of a frame: `may_go_down`), its loss model or a drop list.
    /// Draws from the loss stream, once per frame in the channel's order.
    #[inline(always)]
    fn fate(&mut self, flow: u32) -> Option<DropReason> {
        if !self.up {
            Some(DropReason::Down)
        } else if self.lossy {
            self.impaired_fate(flow)
        } else {
            None
        }
    }

    /// `fate` on a link with a loss model or drop lists (out of the per-hop inlined path).
    #[inline(never)]
    fn impaired_fate(&mut self, flow: u32) -> Option<DropReason> {
        let lost = match self.cfg.loss {
            LossModel::None => None,
            LossModel::Bernoulli(pr) => self.rngs.loss.bernoulli(pr).then_some(DropReason::Loss),
            LossModel::Periodic { every, .. } => {
                if self.periodic_count >= every {
                    self.periodic_count = 0;
                    Some(DropReason::Loss)
                } else {
                    self.periodic_count += 1;
                    None
                }
            }
            LossModel::GilbertElliott(ge) => {
                ge.lost(&mut self.ge_bad, &mut self.rngs.loss).then_some(DropReason::Loss)
            }
        };
        match lost {
            None if !self.cfg.drop_lists.is_empty() => self.listed(flow),
            l => l,
        }
    }

    /// Schedule the arrival at the far end of a frame whose serialization ends at `end`:
    /// after the propagation delay and the jitter drawn for it.
    #[inline(always)]
    fn propagate<S>(&mut self, end: SimTime, p: Packet<P>, sched: &mut S)
    where
        S: NetSched<P>,
    {
        let mut at = end + self.cfg.delay;
        if let Some(j) = self.cfg.jitter {
            at += SimDuration(self.jitter_draw.sample(&mut self.rngs.jitter));
            if !j.reorder && at < self.last_arrival {
                at = self.last_arrival;
            }
        }
        self.last_arrival = at;
        sched.sched(at, NetEvent::Arrive(self.id, p));
    }

    /// Whether a drop list names the frame of `flow` (each list that counts it advances).
    #[cold]
    fn listed(&mut self, flow: u32) -> Option<DropReason> {
        let mut hit = false;
        for (list, count) in self.cfg.drop_lists.iter().zip(&mut self.drop_counts) {
            if list.flow.is_none_or(|f| f == flow) {
                hit |= count.count(list);
            }
        }
        hit.then_some(DropReason::Listed)
    }

    /// Count a frame that reached the far end.
    pub fn arrived<O: NetObserver<P>>(&mut self, now: SimTime, p: &Packet<P>, obs: &mut O) {
        let frame = p.ip_bytes as u64 + self.cfg.overhead as u64;
        self.in_flight -= 1;
        self.stats.delivered_packets += 1;
        self.stats.delivered_bytes += p.ip_bytes as u64;
        self.stats.delivered_frame_bytes += frame;
        obs.delivered(now, self.id, p, frame);
    }

    pub fn set_rate(&mut self, rate: Rate) {
        self.model.set_rate(rate);
        self.qdisc.set_link_rate(rate);
    }

    pub fn set_up<S, O>(&mut self, now: SimTime, up: bool, sched: &mut S, obs: &mut O)
    where
        S: NetSched<P>,
        O: NetObserver<P>,
    {
        assert!(
            up || self.xmit.fate_at_end(),
            "channel {} goes down but was not told it may (Channel::may_go_down)",
            self.id.0
        );
        self.up = up;
        if up {
            self.start_next(now, sched, obs);
        }
    }

    /// Close the time integral of the queue length at the end of the run, and take back the
    /// count of a frame whose serialization ends at or after it (counted when it started).
    pub fn finish(&mut self, now: SimTime) {
        let n = self.qdisc.len_packets();
        self.account_queue(now, n, n);
        if self.in_flight > 0 && self.xmit.busy_until() >= now {
            self.stats.sent_packets -= 1;
        }
    }

    /// Packets held by this channel: waiting, in transmission or propagating.
    pub fn held_packets(&self) -> u64 {
        self.qdisc.len_packets() as u64 + self.in_flight
    }
}
