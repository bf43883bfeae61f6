//! Queue disciplines: what an interface's output queue does with the packets it is offered
//! while the link is busy, in the shape of ns-3's `QueueDisc` and Linux qdiscs. A discipline
//! decides at enqueue (accept, drop, or accept with an ECN mark), picks the next packet at
//! dequeue (and may drop on the way, as CoDel does), and may ask for a timer (PIE's periodic
//! update). It draws randomness only from the stream its context hands it.
//!
//! Adding one is one file in this folder plus one line in the `qdiscs!` registry below; the
//! registry generates [`QdiscConfig`] (the settings of every built-in discipline, read from a
//! scenario's `queue = { kind = "...", ... }`) and [`AnyQdisc`] (static dispatch on the hot
//! path, as smoltcp's `AnyController`, plus one `Dyn` variant for disciplines registered at
//! run time).

use crate::{DropReason, Packet};
use quicksim_engine::{Rate, Rng, SimDuration, SimTime};
use serde::de::DeserializeOwned;
use std::fmt;

/// A packet waiting in a queue, with the time it was offered (CoDel's sojourn time is
/// `now - enqueued_at` at dequeue). Kept out of [`Packet`], which travels through the event
/// queue and should stay small.
#[derive(Debug)]
pub struct Queued<P> {
    pub pkt: Packet<P>,
    pub enqueued_at: SimTime,
}

/// What became of an offered packet.
#[must_use]
#[derive(Debug)]
pub enum Verdict<P> {
    /// Accepted (possibly with CE set through [`QdiscCtx::mark`]).
    Queued,
    /// Refused: the channel counts and reports the drop.
    Dropped(Packet<P>, DropReason),
}

/// Where a discipline's drops and marks made outside a [`Verdict`] go (the channel's counters
/// and observer). A dynamic call, only on those rare events.
pub trait QdiscSink<P> {
    fn dropped(&mut self, now: SimTime, p: Packet<P>, why: DropReason);
    fn marked(&mut self, now: SimTime, p: &Packet<P>);
}

/// What a discipline may use while it handles a packet or a timer.
pub struct QdiscCtx<'a, P> {
    pub now: SimTime,
    /// The discipline's own random stream ("queue", channel index): its draws never shift the
    /// link's loss or jitter numbers.
    pub rng: &'a mut Rng,
    sink: &'a mut dyn QdiscSink<P>,
}

impl<'a, P> QdiscCtx<'a, P> {
    pub fn new(now: SimTime, rng: &'a mut Rng, sink: &'a mut dyn QdiscSink<P>) -> Self {
        QdiscCtx { now, rng, sink }
    }
    /// Drop a packet the discipline holds (a head drop, CoDel's drop at dequeue).
    pub fn drop_packet(&mut self, p: Packet<P>, why: DropReason) {
        self.sink.dropped(self.now, p, why);
    }
    /// Set Congestion Experienced instead of dropping, if the packet is ECN-capable (RFC 3168
    /// section 5); returns false for a Not-ECT packet, which the discipline should drop
    /// instead. A packet already CE is left as is and counts as marked again.
    pub fn mark(&mut self, p: &mut Packet<P>) -> bool {
        if !p.ecn().is_ect() {
            return false;
        }
        p.set_ecn(crate::Ecn::Ce);
        self.sink.marked(self.now, p);
        true
    }
}

/// A discipline's length: waiting packets and their IP bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueLen {
    pub packets: usize,
    pub bytes: u64,
}

impl QueueLen {
    #[inline(always)]
    pub fn of<P, Q: Qdisc<P> + ?Sized>(q: &Q) -> Self {
        QueueLen { packets: q.len_packets(), bytes: q.len_bytes() }
    }
}

/// One sub-queue of a discipline that has several (DualPI2's L4S and Classic queues).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SubQueue {
    /// Its waiting packets and their IP bytes.
    pub len: QueueLen,
    /// The queueing time (enqueue to dequeue) of the packet it served last: the sojourn time an
    /// AQM acts on (DualPI2's step); zero until it serves one.
    pub sojourn: SimDuration,
    /// Packets it marked CE so far.
    pub marks: u64,
    /// Packets it dropped so far: the discipline's own drops and those refused for lack of room.
    pub drops: u64,
}

/// The two sub-queues of a dual-queue discipline (RFC 9332 section 2.1): L4S (L) and Classic (C).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SubQueues {
    pub l: SubQueue,
    pub c: SubQueue,
}

/// A queue discipline. Lengths count waiting packets only: the frame being serialized has
/// left the queue (as in INET and Linux).
pub trait Qdisc<P> {
    /// Offer a packet. Called only while the link is busy or the queue is not empty; a packet
    /// that finds both idle goes straight to the wire (Linux's qdisc bypass).
    fn enqueue(&mut self, cx: &mut QdiscCtx<'_, P>, p: Queued<P>) -> Verdict<P>;
    /// The next packet to serialize, or None (empty, or everything was dropped).
    fn dequeue(&mut self, cx: &mut QdiscCtx<'_, P>) -> Option<Packet<P>>;
    /// Waiting packets.
    fn len_packets(&self) -> usize;
    /// Waiting IP bytes.
    fn len_bytes(&self) -> u64;
    fn is_empty(&self) -> bool {
        self.len_packets() == 0
    }
    /// Whether the discipline ever asks for a timer (`next_timer`); asked once, when the channel
    /// gets the discipline, so that one without timers costs no check per packet.
    fn uses_timers(&self) -> bool {
        true
    }
    /// When the discipline wants [`Qdisc::on_timer`] called next, at or after the current
    /// time and, after `on_timer`, later than it (asked after every call; a new answer
    /// supersedes the old one).
    fn next_timer(&self) -> Option<SimTime> {
        None
    }
    /// The time asked by `next_timer` has come.
    fn on_timer(&mut self, _cx: &mut QdiscCtx<'_, P>) {}
    /// The rate of the link the discipline feeds: told when the channel gets the discipline
    /// and at every rate change (RED's idle decay counts the packets the link could have
    /// sent, as ns-3's `LinkBandwidth`).
    fn set_link_rate(&mut self, _rate: Rate) {}
    /// The state of its L and C queues, for a dual-queue discipline (DualPI2); None (the
    /// default) for a single queue. Either always None or never: the channel asks once.
    fn sub_queues(&self) -> Option<SubQueues> {
        None
    }
}

/// A setting of a discipline's configuration that has a bad value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    /// The field within the `queue` table ("" for the table as a whole).
    pub field: &'static str,
    pub message: String,
}

impl ConfigError {
    pub fn new(field: &'static str, message: impl Into<String>) -> Self {
        ConfigError { field, message: message.into() }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.field.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.field, self.message)
        }
    }
}

/// The configuration of a built-in discipline: its `kind` name, its fields (serde, with
/// defaults) and the checks serde cannot express.
pub trait KindConfig: Clone + fmt::Debug + DeserializeOwned + Default + schemars::JsonSchema {
    /// The `kind` a scenario writes.
    const KIND: &'static str;
    fn validate(&self) -> Result<(), ConfigError> {
        Ok(())
    }
    /// The most the queue holds, (packets, bytes), with `None` where it sets no limit: what a
    /// run reports of the queue it built (`meta.network`).
    fn capacity(&self) -> (Option<u64>, Option<u64>);
}

/// Decodes a discipline's configuration from the caller's format (the scenario crate's JSON,
/// with field paths in its errors); the network crate stays format-free.
pub trait ConfigSource {
    type Error;
    fn decode<C: DeserializeOwned>(&self) -> Result<C, Self::Error>;
    fn invalid(&self, e: ConfigError) -> Self::Error;
}

/// Generates [`QdiscConfig`] and [`AnyQdisc`] from `module::Type` entries; each module has a
/// `Config: KindConfig` and `Type<P>: Qdisc<P>` with `Type::new(&Config)`.
macro_rules! qdiscs {
    ($($m:ident :: $t:ident),* $(,)?) => {
        $(pub mod $m;)*

        /// The settings of a built-in queue discipline.
        #[derive(Clone, Debug)]
        pub enum QdiscConfig {
            $($t($m::Config),)*
        }

        impl QdiscConfig {
            /// The `kind` names of the built-in disciplines.
            pub const KINDS: &'static [&'static str] = &[$(<$m::Config as KindConfig>::KIND),*];

            /// The JSON Schema of each built-in discipline's settings, by `kind`.
            pub fn schemas(gen: &mut schemars::SchemaGenerator) -> Vec<(&'static str, schemars::Schema)> {
                vec![$((<$m::Config as KindConfig>::KIND, <$m::Config as schemars::JsonSchema>::json_schema(gen)),)*]
            }

            /// Decode and check the configuration of `kind`; None for a kind not built in.
            pub fn decode<S: ConfigSource>(kind: &str, src: &S) -> Option<Result<QdiscConfig, S::Error>> {
                $(
                    if kind == <$m::Config as KindConfig>::KIND {
                        return Some(src.decode::<$m::Config>().and_then(|c| {
                            c.validate().map_err(|e| src.invalid(e))?;
                            Ok(QdiscConfig::$t(c))
                        }));
                    }
                )*
                None
            }

            pub fn kind(&self) -> &'static str {
                match self {
                    $(QdiscConfig::$t(_) => <$m::Config as KindConfig>::KIND,)*
                }
            }

            /// [`KindConfig::capacity`] of the configured discipline.
            pub fn capacity(&self) -> (Option<u64>, Option<u64>) {
                match self {
                    $(QdiscConfig::$t(c) => c.capacity(),)*
                }
            }
        }

        /// A channel's queue discipline: a built-in one, dispatched statically, or one
        /// registered at run time behind a box.
        pub enum AnyQdisc<P> {
            $($t($m::$t<P>),)*
            Dyn(Box<dyn Qdisc<P>>),
        }

        impl<P> AnyQdisc<P> {
            pub fn new(cfg: &QdiscConfig) -> Self {
                match cfg {
                    $(QdiscConfig::$t(c) => AnyQdisc::$t($m::$t::new(c)),)*
                }
            }

            // The channel's entry points. DropTail, every link's default, has its accept and its
            // dequeue inline in the channel (`as_droptail`: no `Verdict` or `Option` carries the
            // packet there; LLVM moved those through the stack at odd offsets, a store-forwarding
            // stall per packet). Everything else (DropTail's overflow, every other discipline)
            // goes through one call, `enqueue_with` / `dequeue_with`, so that the per-hop code
            // inlined into the run loop does not carry every discipline's enqueue and dequeue
            // (RED's and PIE's random draws, CoDel's control law, FQ-CoDel's flows): a smaller
            // hot loop for the instruction cache, the same results. Each returns the
            // discipline's length after it (asked through the trait, the two lengths were two
            // more dispatches per packet).

            /// The DropTail this is, if it is one: the channel's inline paths for the default
            /// discipline.
            #[inline(always)]
            pub fn as_droptail(&mut self) -> Option<&mut droptail::DropTail<P>> {
                match self {
                    AnyQdisc::DropTail(q) => Some(q),
                    _ => None,
                }
            }

            /// [`Qdisc::enqueue`] of `p` offered at `now`, with a context made of these parts;
            /// returns the verdict and the discipline's length after it.
            #[inline(never)]
            pub fn enqueue_with(&mut self, now: SimTime, rng: &mut Rng, sink: &mut dyn QdiscSink<P>, p: Packet<P>) -> (Verdict<P>, QueueLen) {
                let cx = &mut QdiscCtx::new(now, rng, sink);
                let pkt = Queued { pkt: p, enqueued_at: now };
                match self {
                    $(AnyQdisc::$t(q) => (q.enqueue(cx, pkt), QueueLen::of(q)),)*
                    AnyQdisc::Dyn(q) => (q.enqueue(cx, pkt), QueueLen::of(&**q)),
                }
            }

            /// [`Qdisc::dequeue`] with a context made of these parts; returns the packet and the
            /// discipline's length after it.
            #[inline(never)]
            pub fn dequeue_with(&mut self, now: SimTime, rng: &mut Rng, sink: &mut dyn QdiscSink<P>) -> (Option<Packet<P>>, QueueLen) {
                let cx = &mut QdiscCtx::new(now, rng, sink);
                match self {
                    $(AnyQdisc::$t(q) => (q.dequeue(cx), QueueLen::of(q)),)*
                    AnyQdisc::Dyn(q) => (q.dequeue(cx), QueueLen::of(&**q)),
                }
            }
        }

        impl<P> Qdisc<P> for AnyQdisc<P> {
            #[inline]
            fn enqueue(&mut self, cx: &mut QdiscCtx<'_, P>, p: Queued<P>) -> Verdict<P> {
                match self {
                    $(AnyQdisc::$t(q) => q.enqueue(cx, p),)*
                    AnyQdisc::Dyn(q) => q.enqueue(cx, p),
                }
            }
            #[inline]
            fn dequeue(&mut self, cx: &mut QdiscCtx<'_, P>) -> Option<Packet<P>> {
                match self {
                    $(AnyQdisc::$t(q) => q.dequeue(cx),)*
                    AnyQdisc::Dyn(q) => q.dequeue(cx),
                }
            }
            #[inline]
            fn len_packets(&self) -> usize {
                match self {
                    $(AnyQdisc::$t(q) => q.len_packets(),)*
                    AnyQdisc::Dyn(q) => q.len_packets(),
                }
            }
            #[inline]
            fn len_bytes(&self) -> u64 {
                match self {
                    $(AnyQdisc::$t(q) => q.len_bytes(),)*
                    AnyQdisc::Dyn(q) => q.len_bytes(),
                }
            }
            #[inline]
            fn is_empty(&self) -> bool {
                match self {
                    $(AnyQdisc::$t(q) => q.is_empty(),)*
                    AnyQdisc::Dyn(q) => q.is_empty(),
                }
            }
            #[inline]
            fn uses_timers(&self) -> bool {
                match self {
                    $(AnyQdisc::$t(q) => q.uses_timers(),)*
                    AnyQdisc::Dyn(q) => q.uses_timers(),
                }
            }
            #[inline]
            fn next_timer(&self) -> Option<SimTime> {
                match self {
                    $(AnyQdisc::$t(q) => q.next_timer(),)*
                    AnyQdisc::Dyn(q) => q.next_timer(),
                }
            }
            fn on_timer(&mut self, cx: &mut QdiscCtx<'_, P>) {
                match self {
                    $(AnyQdisc::$t(q) => q.on_timer(cx),)*
                    AnyQdisc::Dyn(q) => q.on_timer(cx),
                }
            }
            fn set_link_rate(&mut self, rate: Rate) {
                match self {
                    $(AnyQdisc::$t(q) => q.set_link_rate(rate),)*
                    AnyQdisc::Dyn(q) => q.set_link_rate(rate),
                }
            }
            fn sub_queues(&self) -> Option<SubQueues> {
                match self {
                    $(AnyQdisc::$t(q) => q.sub_queues(),)*
                    AnyQdisc::Dyn(q) => q.sub_queues(),
                }
            }
        }
    };
}

// The registry: one line per built-in discipline.
qdiscs! {
    droptail::DropTail,
    red::Red,
    codel::Codel,
    fq_codel::FqCodel,
    pie::Pie,
    dualpi2::DualPi2,
    step::Step,
}

impl Default for QdiscConfig {
    /// DropTail with its defaults (INET's capacity of 10000 packets).
    fn default() -> Self {
        QdiscConfig::DropTail(droptail::Config::default())
    }
}

impl<P> fmt::Debug for AnyQdisc<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "AnyQdisc({} packets, {} B)", self.len_packets(), self.len_bytes())
    }
}
