//! The run loop: one single-threaded world of network, applications and transport endpoints,
//! driven by one event queue.

use crate::build::{Built, FlowSpec, UdpSpec};
use crate::record::{ConnCounters, ConnSample, Recorder};
use crate::schema::{QuicApp, SizeDist, TimeDist};
use quicksim_engine::{EventQueue, Rng, SimDuration, SimTime};
use quicksim_net::{
    ChanId, DropReason, NetEvent, NetObserver, Network, NodeId, Packet, IPV4_HEADER, UDP_HEADER,
};
use quicksim_transport::quic::niche::Opt;
use quicksim_transport::quic::{ConnEvent, Connection, QuicConfig, QuicPacket};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// What an IP packet carries: a UDP datagram of a UDP or ON/OFF source, or a QUIC packet held in
/// the world's [`PacketPool`] at a slot, with its direction (`to_server` = in the flow's forward,
/// data direction).
///
/// One 64-bit word rather than an enum: an enum's tag, flag and slot are written as separate
/// 1-, 1- and 4-byte stores and copied as 8- or 16-byte words when the packet moves on (into
/// the channel, the event queue), and such a load cannot be forwarded from the narrower
/// stores: a stall at every hop.
#[derive(Debug)]
pub struct Payload(u64);

impl Payload {
    const UDP: Payload = Payload(u64::MAX);

    fn quic(to_server: bool, slot: u32) -> Payload {
        Payload((slot as u64) << 1 | to_server as u64)
    }

    /// `(to_server, slot)` of a QUIC packet, None for UDP.
    fn as_quic(&self) -> Option<(bool, u32)> {
        (self.0 != u64::MAX).then_some((self.0 & 1 != 0, (self.0 >> 1) as u32))
    }
}

/// The QUIC packets travelling through the network. Events carry a slot number instead of the
/// packet: a `QuicPacket` keeps its frames inline (no allocation per packet) and is large, and
/// every event is moved several times between the queue, the network and the handlers, so
/// small events cost less than big ones. A slot is freed when its packet is delivered or
/// dropped; its value stays until the slot is reused.
#[derive(Default)]
pub(crate) struct PacketPool {
    slots: Vec<QuicPacket>,
    free: Vec<u32>,
}

impl PacketPool {
    fn put(&mut self, p: QuicPacket) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = p;
                i
            }
            None => {
                self.slots.push(p);
                (self.slots.len() - 1) as u32
            }
        }
    }

    fn release(&mut self, slot: u32) {
        self.free.push(slot);
    }
}

/// The recorder as the network's observer, plus freeing the pool slot of a dropped packet.
struct NetObs<'a> {
    rec: &'a mut Recorder,
    pool: &'a mut PacketPool,
}

impl NetObserver<Payload> for NetObs<'_> {
    #[inline]
    fn queue_changed(&mut self, now: SimTime, chan: ChanId, packets: usize, bytes: u64) {
        self.rec.queue_changed(now, chan, packets, bytes);
    }
    #[inline]
    fn dropped(&mut self, now: SimTime, chan: ChanId, p: &Packet<Payload>, why: DropReason) {
        if let Some((_, slot)) = p.payload.as_quic() {
            self.pool.release(slot);
        }
        self.rec.dropped(now, chan, p, why);
    }
    #[inline]
    fn delivered(&mut self, now: SimTime, chan: ChanId, p: &Packet<Payload>, frame_bytes: u64) {
        self.rec.delivered(now, chan, p, frame_bytes);
    }
    #[inline]
    fn sent(&mut self, now: SimTime, node: NodeId, p: &Packet<Payload>) {
        self.rec.sent(now, node, p);
    }
}

impl Payload {
    /// True for packets in the flow's forward direction (source to destination).
    pub fn forward(&self) -> bool {
        self.as_quic().is_none_or(|(to_server, _)| to_server)
    }
}

#[derive(Debug)]
pub enum Ev {
    Net(NetEvent<Payload>),
    FlowStart(u32),
    FlowStop(u32),
    /// Next datagram of a UDP source; the generation discards sends of an earlier ON period.
    UdpSend(u32, u32),
    OnOffToggle(u32),
    QuicTimer(u32, u8),
    QuicMessage(u32),
}

impl Ev {
    fn code(&self) -> u64 {
        match self {
            Ev::Net(NetEvent::TxDone(c)) => 1 + ((c.0 as u64) << 8),
            Ev::Net(NetEvent::Arrive(c, p)) => 2 + ((c.0 as u64) << 8) + (p.uid() << 24),
            Ev::Net(NetEvent::SetRate(c, _)) => 3 + ((c.0 as u64) << 8),
            Ev::Net(NetEvent::SetUp(c, _)) => 4 + ((c.0 as u64) << 8),
            Ev::Net(NetEvent::QdiscTimer(c)) => 11 + ((c.0 as u64) << 8),
            Ev::FlowStart(f) => 5 + ((*f as u64) << 8),
            Ev::FlowStop(f) => 6 + ((*f as u64) << 8),
            Ev::UdpSend(f, g) => 7 + ((*f as u64) << 8) + ((*g as u64) << 32),
            Ev::OnOffToggle(f) => 8 + ((*f as u64) << 8),
            Ev::QuicTimer(f, s) => 9 + ((*f as u64) << 8) + ((*s as u64) << 40),
            Ev::QuicMessage(f) => 10 + ((*f as u64) << 8),
        }
    }
}

pub(crate) struct UdpState {
    pub spec: UdpSpec,
    pub rng: Rng,
    pub on: bool,
    pub gen: u32,
}

/// A QUIC flow's state while it is live. Between bursts of activity it is kept encoded
/// ([`IdleQuic`]); the serde derives serve that encoding, with the connections encoded after it.
#[derive(Serialize, Deserialize)]
pub(crate) struct QuicState {
    pub app: QuicApp,
    #[serde(skip)]
    pub conns: Option<[Connection; 2]>,
    /// The earliest timer event of each endpoint in the queue (`Opt`: 8 B instead of 16).
    pub timers: [Opt<SimTime>; 2],
    pub streams: u32,
    pub next_stream: u32,
    /// Bulk: bytes the application has still to hand over.
    pub bulk_left: u64,
    pub bulk_total: u64,
    pub delivered: u64,
    pub completion: Option<SimTime>,
    #[serde(with = "message_code")]
    pub message: Option<(SizeDist, TimeDist)>,
    pub rng: Rng,
    pub active: bool,
    /// The last congestion-state sample recorded; boxed (8 B instead of 56): only flows whose
    /// state is recorded have one.
    pub last: Option<Box<ConnSample>>,
    pub close_error: Option<String>,
    /// Shared by the flow's two endpoints and by flows with the same settings.
    #[serde(skip, default = "quicksim_transport::quic::placeholder_config")]
    pub cfg: Arc<QuicConfig>,
}

/// A message application's size and interval distributions as plain numbers (kind, a, b) for
/// the encoded state: the scenario types' own serde form is the scenario file's.
mod message_code {
    use crate::schema::{SizeDist, TimeDist};
    use quicksim_engine::SimDuration;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    type Code = Option<((u8, u64, u64), (u8, u64, u64))>;

    pub fn serialize<S: Serializer>(m: &Option<(SizeDist, TimeDist)>, s: S) -> Result<S::Ok, S::Error> {
        let code: Code = m.as_ref().map(|(size, time)| {
            let size = match *size {
                SizeDist::Const(v) => (0, v, 0),
                SizeDist::Uniform(a, b) => (1, a, b),
            };
            let time = match *time {
                TimeDist::Const(v) => (0, v.0, 0),
                TimeDist::Uniform(a, b) => (1, a.0, b.0),
                TimeDist::Exponential(m) => (2, m.0, 0),
            };
            (size, time)
        });
        code.serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<(SizeDist, TimeDist)>, D::Error> {
        let code = Code::deserialize(d)?;
        Ok(code.map(|((sk, sa, sb), (tk, ta, tb))| {
            let size = if sk == 0 { SizeDist::Const(sa) } else { SizeDist::Uniform(sa, sb) };
            let time = match tk {
                0 => TimeDist::Const(SimDuration(ta)),
                1 => TimeDist::Uniform(SimDuration(ta), SimDuration(tb)),
                _ => TimeDist::Exponential(SimDuration(ta)),
            };
            (size, time)
        }))
    }
}

impl QuicState {
    /// Nothing is going on: no connections yet, or neither endpoint has bytes in flight, data
    /// to send or an event for the application. Decides only when a flow is stored encoded (a
    /// question of speed and memory, not of results: encoding loses nothing). A timer event may
    /// still be pending: after a message, the sender's PTO event outlives the ACK that made it
    /// moot and wakes the flow for nothing. Waiting for such events before resting halved the
    /// wake-ups (many-flows' run loop -10 % instructions) but kept ~750 more flows live at the
    /// end of many-flows' start (2 400 instead of 1 600: +80 B per idle flow in the peak);
    /// memory won (docs/performance.md).
    #[inline]
    fn quiet(&self) -> bool {
        self.conns.as_ref().is_none_or(|c| c[0].is_quiet() && c[1].is_quiet())
    }
}

/// A QUIC flow at rest, encoded: its `QuicState` and both connections in a few hundred bytes
/// (`Connection::encode`, postcard varints) instead of ~2 kB of live structures with their
/// heap parts. Many-flows scenarios (thousands of connections that send now and then) are
/// bounded by this: an idle flow costs ~1 kB instead of ~3 kB. A flow is stored like this
/// whenever an event leaves it quiet (`QuicState::quiet`) and decoded by its next event; it
/// then continues exactly as if it had never been encoded (tested bit for bit).
pub(crate) struct IdleQuic {
    cfg: Arc<QuicConfig>,
    /// The `QuicState` (without connections and configuration), a byte saying whether the
    /// connections exist, then the client's and the server's encodings.
    bytes: Box<[u8]>,
}

impl IdleQuic {
    /// Encodes `qs` through `scratch` (reused, so that the only allocation is the exact-size
    /// result: growing a new buffer by doubling left ~1 kB of freed blocks per flow behind).
    fn sleep(qs: &QuicState, scratch: &mut Vec<u8>) -> IdleQuic {
        scratch.clear();
        quicksim_transport::quic::encode_into(qs, scratch);
        match &qs.conns {
            None => scratch.push(0),
            Some([c, s]) => {
                scratch.push(1);
                c.encode(scratch);
                s.encode(scratch);
            }
        }
        IdleQuic { cfg: Arc::clone(&qs.cfg), bytes: Box::from(&scratch[..]) }
    }

    fn wake(&self) -> Box<QuicState> {
        // The bytes were written by `sleep` in this process: a failure is a bug, not an input.
        let bug = |e: String| -> ! { panic!("an idle flow's encoded state does not decode: {e}") };
        let (mut qs, rest): (QuicState, &[u8]) =
            postcard::take_from_bytes(&self.bytes).unwrap_or_else(|e| bug(e.to_string()));
        qs.cfg = Arc::clone(&self.cfg);
        if rest.first() == Some(&1) {
            let (c, rest) = Connection::decode(&rest[1..], Arc::clone(&self.cfg)).unwrap_or_else(|e| bug(e));
            let (s, rest) = Connection::decode(rest, Arc::clone(&self.cfg)).unwrap_or_else(|e| bug(e));
            debug_assert!(rest.is_empty());
            qs.conns = Some([c, s]);
        }
        Box::new(qs)
    }
}

pub(crate) enum FlowApp {
    /// Boxed like `Quic`, so a flow's entry stays small (72 B instead of 208 B).
    Udp(Box<UdpState>),
    Quic(Box<QuicState>),
    /// A quiet QUIC flow, encoded until its next event (`World::wake`).
    QuicIdle(Box<IdleQuic>),
}

impl FlowApp {
    /// A QUIC flow stored encoded.
    pub(crate) fn quic_idle(qs: QuicState, scratch: &mut Vec<u8>) -> FlowApp {
        FlowApp::QuicIdle(Box::new(IdleQuic::sleep(&qs, scratch)))
    }

    /// Puts the flow's state in live form (decoded if it was resting).
    #[inline]
    pub(crate) fn make_live(&mut self) {
        if let FlowApp::QuicIdle(i) = self {
            *self = FlowApp::Quic(i.wake());
        }
    }
}

pub(crate) struct FlowRt {
    pub spec: FlowSpec,
    pub app: FlowApp,
}

pub struct World {
    pub(crate) q: EventQueue<Ev>,
    pub(crate) net: Network<Payload>,
    pub(crate) flows: Vec<FlowRt>,
    pub(crate) rec: Recorder,
    pool: PacketPool,
    pub(crate) end: SimTime,
    pub(crate) max_events: Option<u64>,
    pub(crate) trace_hash: u64,
    pub(crate) flow_names: Vec<String>,
    /// Store quiet QUIC flows encoded (`rest`); off only to test that it changes nothing.
    pub(crate) rest_quiet_flows: bool,
    /// How often a flow was stored encoded.
    pub(crate) rested: u64,
    /// The encoding buffer of `rest`.
    scratch: Vec<u8>,
}

/// Why a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    Finished,
    EventBudget,
    Cancelled,
}

pub(crate) fn draw_size(d: &SizeDist, rng: &mut Rng) -> u64 {
    match *d {
        SizeDist::Const(v) => v,
        SizeDist::Uniform(a, b) => rng.range_u64(a, b),
    }
}

pub(crate) fn draw_time(d: &TimeDist, rng: &mut Rng) -> SimDuration {
    match *d {
        TimeDist::Const(v) => v,
        TimeDist::Uniform(a, b) => SimDuration(rng.range_u64(a.0, b.0)),
        TimeDist::Exponential(m) => SimDuration::from_secs_f64(rng.exponential(m.as_secs_f64())),
    }
}

const UDP_IP: u64 = (IPV4_HEADER + UDP_HEADER) as u64;

/// Schedule a network event. Arrivals on a link direction come in time order (jitter without
/// reordering is clamped to FIFO), so each channel is a FIFO lane of the event queue and the
/// heap only holds the lanes' heads; the pop order is unchanged (see `EventQueue::push_lane`).
/// Ends of transmission (half the network's events) are small events (`small_code`). Always
/// inlined: each
/// network call site schedules one kind of event, so only that arm remains, and the event is
/// built where it is stored instead of passing through the stack (reading back an event just
/// written in narrower pieces stalls store-to-load forwarding).
#[inline(always)]
fn sched_net(q: &mut EventQueue<Ev>, t: SimTime, e: NetEvent<Payload>) {
    match e {
        NetEvent::Arrive(c, _) => q.push_lane(c.0, t, Ev::Net(e)),
        NetEvent::TxDone(c) if c.0 < SMALL_MAX => q.push_small(t, c.0),
        _ => q.push(t, Ev::Net(e)),
    }
}

/// Small events (`EventQueue::push_small`) live in the heap key alone, with no slab slot: a
/// link's end of transmission, a connection's timer and a message generator's next message.
/// The code holds the kind in bits 28-29 and the channel or flow number below (a timer: flow
/// number << 1 | side). An event whose number does not fit is pushed with a body instead;
/// either way it pops in the same order (same time and insertion sequence). For many mostly
/// idle flows this saves a slab slot (40 B) per pending timer and message.
const SMALL_KIND_SHIFT: u32 = 28;
const SMALL_MAX: u32 = 1 << SMALL_KIND_SHIFT;
const SMALL_TX_DONE: u32 = 0;
const SMALL_QUIC_TIMER: u32 = 1;
const SMALL_QUIC_MESSAGE: u32 = 2;

/// Schedules a flow's timer or message, as a small event when its flow number fits.
#[inline]
fn push_flow_event(q: &mut EventQueue<Ev>, t: SimTime, ev: Ev) {
    match ev {
        Ev::QuicTimer(f, side) if f < SMALL_MAX >> 1 => {
            q.push_small(t, SMALL_QUIC_TIMER << SMALL_KIND_SHIFT | f << 1 | (side & 1) as u32)
        }
        Ev::QuicMessage(f) if f < SMALL_MAX => q.push_small(t, SMALL_QUIC_MESSAGE << SMALL_KIND_SHIFT | f),
        ev => q.push(t, ev),
    }
}

/// The event of a small-event code (`sched_net`, `push_flow_event`).
#[inline]
fn small_event(code: u32) -> Ev {
    let n = code & (SMALL_MAX - 1);
    match code >> SMALL_KIND_SHIFT {
        SMALL_TX_DONE => Ev::Net(NetEvent::TxDone(ChanId(n))),
        SMALL_QUIC_TIMER => Ev::QuicTimer(n >> 1, (n & 1) as u8),
        _ => Ev::QuicMessage(n),
    }
}

impl World {
    pub(crate) fn new(b: Built) -> World {
        let mut w = World {
            q: EventQueue::new(),
            net: b.net,
            flows: b.flows,
            rec: b.rec,
            pool: PacketPool::default(),
            end: b.end,
            max_events: b.max_events,
            trace_hash: 0xcbf2_9ce4_8422_2325,
            flow_names: b.flow_names,
            rest_quiet_flows: true,
            rested: 0,
            scratch: Vec::new(),
        };
        w.rec.set_horizon(w.end);
        for (i, f) in w.flows.iter().enumerate() {
            if f.spec.start < w.end {
                w.q.push(f.spec.start, Ev::FlowStart(i as u32));
            }
            if f.spec.stop < w.end {
                w.q.push(f.spec.stop, Ev::FlowStop(i as u32));
            }
        }
        for (t, ev) in b.link_events {
            w.q.push(t, Ev::Net(ev));
        }
        w
    }

    /// Run until the end time (events at exactly the end time are not processed: a run covers
    /// [0, duration)), the event budget, or until `progress` returns false. Never inlined, so
    /// profilers can measure the run loop alone (`valgrind --toggle-collect='*World::run*'`).
    #[inline(never)]
    pub fn run(&mut self, progress: &mut dyn FnMut(f64, u64) -> bool) -> Stop {
        let mut stop = Stop::Finished;
        // Report every 16384 events or every 1/200 of the run's simulated time, whichever
        // comes first, so short runs report too.
        let step_t = (self.end.0 / 200).max(1);
        let mut next_progress = 1u64 << 14;
        let mut next_progress_t = step_t;
        while let Some(t) = self.q.peek_time() {
            if t >= self.end {
                break;
            }
            let (now, ev) = self.q.pop_with(small_event).expect("peeked");
            self.trace_hash =
                (self.trace_hash ^ now.0 ^ ev.code().rotate_left(29)).wrapping_mul(0x100_0000_01b3);
            self.handle(now, ev);
            let n = self.q.events_processed();
            if self.max_events.is_some_and(|m| n >= m) {
                stop = Stop::EventBudget;
                break;
            }
            if n >= next_progress || now.0 >= next_progress_t {
                next_progress = n + (1 << 14);
                next_progress_t = now.0 + step_t;
                if !progress(now.as_secs_f64(), n) {
                    stop = Stop::Cancelled;
                    break;
                }
            }
        }
        let end = if stop == Stop::Finished { self.end } else { self.q.now() };
        self.net.finish(end);
        self.end = end;
        progress(end.as_secs_f64(), self.q.events_processed());
        stop
    }

    fn handle(&mut self, now: SimTime, ev: Ev) {
        match ev {
            Ev::Net(ne) => {
                let q = &mut self.q;
                let obs = &mut NetObs { rec: &mut self.rec, pool: &mut self.pool };
                let got = self.net.handle(now, ne, &mut |t, e| sched_net(q, t, e), obs);
                if let Some(p) = got {
                    self.deliver(now, p);
                }
            }
            Ev::FlowStart(f) => {
                self.wake(f);
                self.flow_start(now, f);
                self.rest(f);
            }
            Ev::FlowStop(f) => {
                self.wake(f);
                self.flow_stop(now, f);
                self.rest(f);
            }
            Ev::UdpSend(f, g) => self.udp_send(now, f, g),
            Ev::OnOffToggle(f) => self.onoff_toggle(now, f),
            Ev::QuicTimer(f, side) => {
                self.wake(f);
                if let FlowApp::Quic(qs) = &mut self.flows[f as usize].app {
                    if qs.timers[side as usize].get() == Some(now) {
                        qs.timers[side as usize] = Opt::NONE;
                    }
                    if let Some(c) = &mut qs.conns {
                        let conn = &mut c[side as usize];
                        if conn.poll_timeout().is_some_and(|t| t <= now) {
                            conn.handle_timeout(now);
                        }
                    }
                }
                self.pump(now, f, side);
                self.rest(f);
            }
            Ev::QuicMessage(f) => {
                self.wake(f);
                self.quic_message(now, f);
                self.rest(f);
            }
        }
    }

    /// Flow `f`'s state in live form (decoded if it was resting).
    #[inline]
    fn wake(&mut self, f: u32) {
        self.flows[f as usize].app.make_live();
    }

    /// Stores flow `f` encoded if nothing is going on in it (`QuicState::quiet`).
    #[inline]
    fn rest(&mut self, f: u32) {
        let app = &mut self.flows[f as usize].app;
        if let FlowApp::Quic(qs) = app {
            if qs.quiet() && self.rest_quiet_flows {
                *app = FlowApp::QuicIdle(Box::new(IdleQuic::sleep(qs, &mut self.scratch)));
                self.rested += 1;
            }
        }
    }

    fn send_packet(
        &mut self,
        now: SimTime,
        src: NodeId,
        dst: NodeId,
        flow: u32,
        ip_bytes: u64,
        payload: Payload,
    ) {
        let p = self.net.packet(src, dst, flow, ip_bytes as u32, payload);
        let q = &mut self.q;
        let obs = &mut NetObs { rec: &mut self.rec, pool: &mut self.pool };
        self.net.send(now, p, &mut |t, e| sched_net(q, t, e), obs);
    }

    fn deliver(&mut self, now: SimTime, p: Packet<Payload>) {
        let f = p.flow;
        let fwd = p.payload.forward();
        if fwd {
            let bytes = p.ip_bytes as u64;
            self.rec.flow(now, f, |b| {
                b.wire_recv_bytes += bytes;
                b.recv_packets += 1;
            });
            self.rec.trace(now, f, p.dst, p.uid(), p.ip_bytes, true);
        }
        match p.payload.as_quic() {
            None => {
                let payload = p.ip_bytes as u64 - UDP_IP;
                self.rec.flow(now, f, |b| b.delivered_bytes += payload);
            }
            Some((to_server, slot)) => {
                let side = if to_server { 1u8 } else { 0u8 };
                self.wake(f);
                if let FlowApp::Quic(qs) = &mut self.flows[f as usize].app {
                    if let Some(c) = &mut qs.conns {
                        c[side as usize].handle_packet(now, &self.pool.slots[slot as usize]);
                    }
                }
                self.pool.release(slot);
                self.pump(now, f, side);
                self.rest(f);
            }
        }
    }

    fn flow_start(&mut self, now: SimTime, f: u32) {
        let fi = f as usize;
        match &mut self.flows[fi].app {
            FlowApp::Udp(u) => {
                u.on = true;
                // ON/OFF sources start with an ON period.
                if let Some((on, _)) = &u.spec.onoff {
                    let d = draw_time(on, &mut u.rng);
                    self.q.push(now + d, Ev::OnOffToggle(f));
                }
                let g = u.gen;
                self.q.push(now, Ev::UdpSend(f, g));
            }
            FlowApp::QuicIdle(_) => unreachable!("flow {f} woken before its start"),
            FlowApp::Quic(qs) => {
                let client =
                    Connection::new(quicksim_transport::quic::Role::Client, Arc::clone(&qs.cfg), now)
                        .expect("config validated at build time");
                let server =
                    Connection::new(quicksim_transport::quic::Role::Server, Arc::clone(&qs.cfg), now)
                        .expect("config validated at build time");
                qs.conns = Some([client, server]);
                qs.active = true;
                if qs.message.is_some() {
                    push_flow_event(&mut self.q, now, Ev::QuicMessage(f));
                }
                self.refill(now, f);
                self.pump(now, f, 0);
                self.pump(now, f, 1);
            }
        }
    }

    fn flow_stop(&mut self, now: SimTime, f: u32) {
        match &mut self.flows[f as usize].app {
            FlowApp::Udp(u) => {
                u.on = false;
                u.gen += 1;
            }
            FlowApp::QuicIdle(_) => unreachable!("flow {f} woken before its stop"),
            FlowApp::Quic(qs) => {
                qs.active = false;
                // INET's generator closes abruptly at its stop time (CONNECTION_CLOSE, unsent
                // and unacked data discarded).
                if let Some(c) = &mut qs.conns {
                    c[0].close(now);
                }
                self.pump(now, f, 0);
            }
        }
    }

    fn udp_send(&mut self, now: SimTime, f: u32, g: u32) {
        let fi = f as usize;
        let (src, dst, stop) = (self.flows[fi].spec.src, self.flows[fi].spec.dst, self.flows[fi].spec.stop);
        let FlowApp::Udp(u) = &mut self.flows[fi].app else { return };
        if !u.on || u.gen != g || now >= stop {
            return;
        }
        let size = draw_size(&u.spec.size, &mut u.rng);
        let gap = match (&u.spec.rate, &u.spec.interval) {
            (Some(r), _) => r.tx_time(size),
            (None, Some(d)) => draw_time(d, &mut u.rng),
            (None, None) => unreachable!("validated: udp needs rate or interval"),
        };
        self.q.push(now + gap, Ev::UdpSend(f, g));
        self.rec.flow(now, f, |b| b.app_sent_bytes += size);
        self.send_packet(now, src, dst, f, size + UDP_IP, Payload::UDP);
    }

    fn onoff_toggle(&mut self, now: SimTime, f: u32) {
        let fi = f as usize;
        let stop = self.flows[fi].spec.stop;
        let FlowApp::Udp(u) = &mut self.flows[fi].app else { return };
        if now >= stop {
            return;
        }
        let (on, off) = u.spec.onoff.clone().expect("onoff flow");
        u.on = !u.on;
        u.gen += 1;
        let d = draw_time(if u.on { &on } else { &off }, &mut u.rng);
        self.q.push(now + d, Ev::OnOffToggle(f));
        if u.on {
            let g = u.gen;
            self.q.push(now, Ev::UdpSend(f, g));
        }
    }

    fn quic_message(&mut self, now: SimTime, f: u32) {
        let FlowApp::Quic(qs) = &mut self.flows[f as usize].app else { return };
        if !qs.active {
            return;
        }
        let Some((size, interval)) = qs.message.clone() else { return };
        let n = draw_size(&size, &mut qs.rng);
        let gap = draw_time(&interval, &mut qs.rng);
        push_flow_event(&mut self.q, now + gap, Ev::QuicMessage(f));
        if let Some(c) = &mut qs.conns {
            // A message that does not fit the send queue is discarded, as INET's generator.
            if c[0].send_queue_space() >= n {
                let s = qs.next_stream as u64 * 4;
                qs.next_stream = (qs.next_stream + 1) % qs.streams;
                let acc = c[0].stream_send(now, s, n);
                self.rec.flow(now, f, |b| b.app_sent_bytes += acc);
            }
        }
        self.pump(now, f, 0);
    }

    /// Saturated and bulk applications hand the transport as much as its send queue takes.
    fn refill(&mut self, now: SimTime, f: u32) {
        let FlowApp::Quic(qs) = &mut self.flows[f as usize].app else { return };
        if !qs.active || qs.message.is_some() {
            return;
        }
        let Some(c) = &mut qs.conns else { return };
        let conn = &mut c[0];
        let mut total = 0;
        loop {
            let mut space = conn.send_queue_space();
            if qs.app == QuicApp::Bulk {
                space = space.min(qs.bulk_left);
            }
            if space == 0 {
                break;
            }
            // Spread over the streams in chunks, round robin.
            let chunk = if qs.streams > 1 { space.min(16_384) } else { space };
            let s = qs.next_stream as u64 * 4;
            qs.next_stream = (qs.next_stream + 1) % qs.streams;
            let acc = conn.stream_send(now, s, chunk);
            if acc == 0 {
                break;
            }
            total += acc;
            if qs.app == QuicApp::Bulk {
                qs.bulk_left -= acc;
            }
        }
        if total > 0 {
            self.rec.flow(now, f, |b| b.app_sent_bytes += total);
        }
    }

    /// Move everything an endpoint has to say: packets onto the network, events to the
    /// application, and its next wake-up into the event queue.
    fn pump(&mut self, now: SimTime, f: u32, side: u8) {
        let fi = f as usize;
        let (src, dst) = (self.flows[fi].spec.src, self.flows[fi].spec.dst);
        let (from, to) = if side == 0 { (src, dst) } else { (dst, src) };
        // `poll_transmit` returning None leaves the connection at a fixed point for this `now`
        // (calling it again returns None again), and handing out events changes nothing in the
        // connection: only new application data (a refill) can make it send more, so only a
        // refill repeats the loop.
        loop {
            loop {
                let FlowApp::Quic(qs) = &mut self.flows[fi].app else { return };
                let Some(c) = &mut qs.conns else { return };
                let Some(pkt) = c[side as usize].poll_transmit(now) else { break };
                let ip = pkt.size_bytes() + UDP_IP;
                let slot = self.pool.put(pkt);
                self.send_packet(now, from, to, f, ip, Payload::quic(side == 0, slot));
            }
            let mut refill = false;
            loop {
                let FlowApp::Quic(qs) = &mut self.flows[fi].app else { return };
                let Some(c) = &mut qs.conns else { return };
                let Some(ev) = c[side as usize].poll_event() else { break };
                match ev {
                    ConnEvent::Established | ConnEvent::SendQueueLow => refill |= side == 0,
                    ConnEvent::StreamData { stream_id, len, .. } => {
                        qs.delivered += len;
                        self.rec.stream_delivered(now, f, stream_id, len);
                        if qs.app == QuicApp::Bulk && qs.completion.is_none() && qs.delivered >= qs.bulk_total
                        {
                            qs.completion = Some(now);
                        }
                        self.rec.flow(now, f, |b| b.delivered_bytes += len);
                    }
                    ConnEvent::Closed { error } => {
                        if error.is_some() && qs.close_error.is_none() {
                            qs.close_error = error;
                        }
                    }
                }
            }
            if !refill {
                break;
            }
            self.refill(now, f);
        }
        // Timer and congestion-state sampling.
        let FlowApp::Quic(qs) = &mut self.flows[fi].app else { return };
        let Some(c) = &mut qs.conns else { return };
        if let Some(t) = c[side as usize].poll_timeout() {
            let t = t.max(now);
            let s = &mut qs.timers[side as usize];
            if s.get().is_none_or(|cur| t < cur) {
                *s = Opt::some(t);
                push_flow_event(&mut self.q, t, Ev::QuicTimer(f, side));
            }
        }
        // Sampling costs a metrics() call per pump; skip it for flows whose state is not recorded.
        if side == 0 && self.rec.conn_sel[fi] {
            let m = c[0].metrics();
            let sample = ConnSample {
                cwnd: m.cwnd_bytes,
                ssthresh: m.ssthresh_bytes,
                inflight: m.bytes_in_flight,
                srtt: m.smoothed_rtt,
                latest_rtt: m.latest_rtt,
                min_rtt: m.min_rtt,
            };
            if qs.last.as_deref() != Some(&sample) {
                match &mut qs.last {
                    Some(b) => **b = sample,
                    None => qs.last = Some(Box::new(sample)),
                }
                let (s, r) = (c[0].stats(), c[1].stats());
                let counters = ConnCounters {
                    packets_sent: s.packets_sent,
                    packets_acked: s.packets_acked,
                    packets_lost: s.packets_lost,
                    retransmitted_bytes: s.retransmitted_bytes,
                    ack_frames_sent: r.ack_frames_sent,
                };
                let name = &self.flow_names[fi];
                self.rec.conn_sample(now, f, sample, counters, name);
            }
        }
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
            (5, Ev::QuicTimer(7, 1)),
            (3, Ev::QuicMessage(SMALL_MAX - 1)),
            (5, Ev::QuicTimer(big, 0)),
            (3, Ev::FlowStart(2)),
            (5, Ev::QuicMessage(big)),
            (5, Ev::QuicTimer((SMALL_MAX >> 1) - 1, 0)),
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
        let got: Vec<String> =
            std::iter::from_fn(|| q.pop_with(small_event)).map(|(t, e)| format!("{} {e:?}", t.0)).collect();
        let want = [
            format!("3 QuicMessage({})", SMALL_MAX - 1),
            "3 FlowStart(2)".to_string(),
            format!("4 Net(TxDone(ChanId({})))", SMALL_MAX - 1),
            "5 QuicTimer(7, 1)".to_string(),
            format!("5 QuicTimer({big}, 0)"),
            format!("5 QuicMessage({big})"),
            format!("5 QuicTimer({}, 0)", (SMALL_MAX >> 1) - 1),
        ];
        assert_eq!(got, want);
    }
}
