//! The run loop's events and how they are stored in the event queue: network events in per-link
//! FIFO lanes, and the frequent tiny events (a link's end of transmission, a flow's timer, a
//! message generator's next message) as "small" events coded in the queue's key alone. All the
//! encoding tricks live here; the run loop schedules through [`sched_net`] and
//! [`push_flow_event`] and pops with [`small_event`].

use crate::payload::Payload;
use quicksim_engine::{EventQueue, FromLane, SimTime};
use quicksim_net::{ChanId, NetEvent, NetSched, Packet};

/// A run's event. A whole-word tag, as `NetEvent`'s (see there): events are moved between the
/// queue, the run loop and the network in aligned words.
#[derive(Debug)]
#[repr(u64)]
pub enum Ev {
    Net(NetEvent<Payload>),
    FlowStart(u32),
    FlowStop(u32),
    /// A transport flow opens its connection before its start (`FlowSpec::connect`).
    FlowConnect(u32),
    /// Next datagram of a UDP source; the generation discards sends of an earlier ON period.
    UdpSend(u32, u32),
    OnOffToggle(u32),
    /// The timer of a transport flow's endpoint (side 0: client, 1: server).
    FlowTimer(u32, u8),
    /// The next message of a flow's message application.
    AppMessage(u32),
    /// A packet of a flow with an extra delay (`FlowSpec::extra_delay`), put on the network
    /// now: it was sent (and counted as sent) that much earlier.
    Held(Packet<Payload>),
}

impl Ev {
    /// A number that identifies the event in the run's trace hash (`World::run`): kind in the low
    /// byte, then its fields. Fixed per kind, so the hash of a run does not depend on how events
    /// are stored.
    pub(crate) fn code(&self) -> u64 {
        match self {
            Ev::Net(NetEvent::TxDone(c)) => 1 + ((c.0 as u64) << 8),
            Ev::Net(NetEvent::TxEnd(c)) => tx_end_code(*c),
            Ev::Net(NetEvent::Arrive(c, p)) => arrive_code(*c, p.uid()),
            Ev::Net(NetEvent::SetRate(c, _)) => 3 + ((c.0 as u64) << 8),
            Ev::Net(NetEvent::SetUp(c, _)) => 4 + ((c.0 as u64) << 8),
            Ev::Net(NetEvent::QdiscTimer(c)) => 11 + ((c.0 as u64) << 8),
            Ev::FlowStart(f) => 5 + ((*f as u64) << 8),
            Ev::FlowStop(f) => 6 + ((*f as u64) << 8),
            Ev::UdpSend(f, g) => 7 + ((*f as u64) << 8) + ((*g as u64) << 32),
            Ev::OnOffToggle(f) => 8 + ((*f as u64) << 8),
            Ev::FlowTimer(f, s) => 9 + ((*f as u64) << 8) + ((*s as u64) << 40),
            Ev::AppMessage(f) => 10 + ((*f as u64) << 8),
            Ev::FlowConnect(f) => 12 + ((*f as u64) << 8),
            Ev::Held(p) => 13 + (p.uid() << 8),
        }
    }
}

/// The run's event queue: a link direction's lane holds the arriving packets alone (48 B an
/// entry instead of 72 B with the whole event), its channel being the lane's number.
pub(crate) type Queue = EventQueue<Ev, Packet<Payload>>;

/// An arrival that could not keep its lane's order goes to the heap as the whole event.
impl FromLane<Packet<Payload>> for Ev {
    #[inline]
    fn from_lane(lane: u32, p: Packet<Payload>) -> Ev {
        Ev::Net(NetEvent::Arrive(ChanId(lane), p))
    }
}

/// The trace-hash code of an arrival of packet `uid` on channel `c` (`Ev::code`).
#[inline(always)]
pub(crate) fn arrive_code(c: ChanId, uid: u64) -> u64 {
    2 + ((c.0 as u64) << 8) + (uid << 24)
}

/// The trace-hash code of a `NetEvent::TxEnd` of channel `c`.
#[inline(always)]
pub(crate) fn tx_end_code(c: ChanId) -> u64 {
    13 + ((c.0 as u64) << 8)
}

/// Schedule a network event. Arrivals on a link direction come in time order (jitter without
/// reordering is clamped to FIFO), so each channel is a FIFO lane of the event queue and the
/// heap only holds the lanes' heads; the pop order is unchanged (see `EventQueue::push_lane`).
/// Ends of transmission are small events; a `TxEnd` pops before every other event at its time
/// (`EventQueue::push_small_first`; several at one time pop in the order they were scheduled,
/// not by channel number, which would favour low-numbered links). Always inlined: each
/// network call site schedules one kind of event, so only that arm remains, and the event is
/// built where it is stored instead of passing through the stack (reading back an event just
/// written in narrower pieces stalls store-to-load forwarding).
/// `net_sched(q)` is the network's scheduling callback: one type for every call site, so the
/// network's generic paths (`Network::forward`) are compiled once, not once per caller.
#[inline(always)]
pub(crate) fn net_sched(q: &mut Queue) -> QueueSched<'_> {
    QueueSched(q)
}

/// The run loop's `NetSched`: `sched_net` on its queue, inlined into every network call site
/// (a closure here was left a call; see `NetSched`).
pub(crate) struct QueueSched<'a>(&'a mut Queue);

impl NetSched<Payload> for QueueSched<'_> {
    #[inline(always)]
    fn sched(&mut self, t: SimTime, e: NetEvent<Payload>) {
        sched_net(self.0, t, e)
    }
}

/// Schedules network event `e` at `t` (the body of `net_sched`'s callback).
#[inline(always)]
pub(crate) fn sched_net(q: &mut Queue, t: SimTime, e: NetEvent<Payload>) {
    match e {
        NetEvent::Arrive(c, p) => q.push_lane(c.0, t, p),
        NetEvent::TxDone(c) if c.0 < SMALL_MAX => q.push_small(t, c.0),
        NetEvent::TxEnd(c) => {
            // 2^28 channels would take over 100 GB: the memory budget refuses such a network.
            assert!(c.0 < SMALL_MAX, "channel {} beyond the small-event range", c.0);
            q.push_small_first(t, SMALL_TX_END << SMALL_KIND_SHIFT | c.0)
        }
        _ => q.push(t, Ev::Net(e)),
    }
}

/// Small events (`EventQueue::push_small`) live in the heap key alone, with no slab slot: a
/// link's end of transmission (both kinds), a flow's timer and a message generator's next message.
/// The code holds the kind in bits 28-29 and the channel or flow number below (a timer: flow
/// number << 1 | side). An event whose number does not fit is pushed with a body instead;
/// either way it pops in the same order (same time and insertion sequence). For many mostly
/// idle flows this saves a slab slot (40 B) per pending timer and message.
const SMALL_KIND_SHIFT: u32 = 28;
const SMALL_MAX: u32 = 1 << SMALL_KIND_SHIFT;
const SMALL_TX_DONE: u32 = 0;
const SMALL_FLOW_TIMER: u32 = 1;
const SMALL_APP_MESSAGE: u32 = 2;
const SMALL_TX_END: u32 = 3;

/// Schedules a flow's timer or message, as a small event when its flow number fits. Timers go
/// to the queue's timer heap (`EventQueue::push_small_timer`): many wait at once, most of them
/// superseded by a later re-arm, and apart they do not deepen the heap the packets' events use.
#[inline]
pub(crate) fn push_flow_event(q: &mut Queue, t: SimTime, ev: Ev) {
    match ev {
        Ev::FlowTimer(f, side) if f < SMALL_MAX >> 1 => {
            q.push_small_timer(t, SMALL_FLOW_TIMER << SMALL_KIND_SHIFT | f << 1 | (side & 1) as u32)
        }
        Ev::AppMessage(f) if f < SMALL_MAX => q.push_small(t, SMALL_APP_MESSAGE << SMALL_KIND_SHIFT | f),
        ev => q.push(t, ev),
    }
}

/// The channel of a small-event code that is an end of transmission (`TxDone` or `TxEnd`), and
/// the event's trace-hash code.
#[inline(always)]
pub(crate) fn small_tx_done(code: u32) -> Option<(ChanId, u64)> {
    let c = ChanId(code & (SMALL_MAX - 1));
    match code >> SMALL_KIND_SHIFT {
        SMALL_TX_DONE => Some((c, 1 + ((c.0 as u64) << 8))),
        SMALL_TX_END => Some((c, tx_end_code(c))),
        _ => None,
    }
}

/// The event of a small-event code (`sched_net`, `push_flow_event`).
#[inline]
pub(crate) fn small_event(code: u32) -> Ev {
    let n = code & (SMALL_MAX - 1);
    match code >> SMALL_KIND_SHIFT {
        SMALL_TX_DONE => Ev::Net(NetEvent::TxDone(ChanId(n))),
        SMALL_FLOW_TIMER => Ev::FlowTimer(n >> 1, (n & 1) as u8),
        SMALL_TX_END => Ev::Net(NetEvent::TxEnd(ChanId(n))),
        _ => Ev::AppMessage(n),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_flow_events_pop_as_pushed_in_order() {
        // Timers and messages as small events (and with a body when the flow number does not
        // fit) pop as the same events, in time-then-insertion order, mixed with other events.
        let big = SMALL_MAX; // too large for a small timer or message: pushed with a body
        let pushed = [
            (5, Ev::FlowTimer(7, 1)),
            (3, Ev::AppMessage(SMALL_MAX - 1)),
            (5, Ev::FlowTimer(big, 0)),
            (3, Ev::FlowStart(2)),
            (5, Ev::AppMessage(big)),
            (5, Ev::FlowTimer((SMALL_MAX >> 1) - 1, 0)),
        ];
        let mut q = EventQueue::new();
        for (t, ev) in pushed {
            match ev {
                Ev::FlowStart(_) => q.push(SimTime(t), ev),
                _ => push_flow_event(&mut q, SimTime(t), ev),
            }
        }
        let mut sched = |t, e| sched_net(&mut q, t, e);
        sched(SimTime(4), NetEvent::TxDone(ChanId(SMALL_MAX - 1)));
        sched(SimTime(5), NetEvent::TxEnd(ChanId(SMALL_MAX - 1)));
        let got: Vec<String> =
            std::iter::from_fn(|| q.pop_with(small_event)).map(|(t, e)| format!("{} {e:?}", t.0)).collect();
        let want = [
            format!("3 AppMessage({})", SMALL_MAX - 1),
            "3 FlowStart(2)".to_string(),
            format!("4 Net(TxDone(ChanId({})))", SMALL_MAX - 1),
            format!("5 Net(TxEnd(ChanId({})))", SMALL_MAX - 1),
            "5 FlowTimer(7, 1)".to_string(),
            format!("5 FlowTimer({big}, 0)"),
            format!("5 AppMessage({big})"),
            format!("5 FlowTimer({}, 0)", (SMALL_MAX >> 1) - 1),
        ];
        assert_eq!(got, want);
    }
}
