//! A tiny deterministic two-endpoint network: per direction a fixed one-way delay, an optional
//! serialization rate (unbounded FIFO queue), a drop function and optional extra delay
//! (reordering). Drives two `Connection`s with a mini event loop and checks in-order,
//! exactly-once delivery as it goes.

use std::collections::BTreeMap;

use quicksim_engine::{Rate, SimDuration, SimTime};
use quicksim_transport::quic::Frame;
use quicksim_transport::{ConnEvent, Connection, QuicConfig, QuicPacket, Role};

/// IPv4 + UDP overhead added on the wire.
pub const UDP_IP: u64 = 28;

/// The congestion controller's random stream of endpoint `side` (0 client, 1 server) in these
/// tests: fixed, one per endpoint, as a scenario gives each end its own.
pub fn cc_rng(side: u64) -> quicksim_engine::Rng {
    quicksim_engine::RngStreams::new(1).stream("cc", side)
}

/// Direction 0: client → server; 1: server → client.
pub type DropFn = Box<dyn FnMut(usize, u64, &QuicPacket) -> bool>;
pub type JitterFn = Box<dyn FnMut(usize, u64) -> SimDuration>;
/// Changes a packet on its way (its ECN codepoint: a marking or bleaching path), before the
/// drop function sees it.
pub type RemarkFn = Box<dyn FnMut(usize, u64, &mut QuicPacket)>;

pub struct Link {
    pub delay: SimDuration,
    pub rate: Option<Rate>,
    busy_until: SimTime,
}

pub struct Sim {
    pub now: SimTime,
    pub conns: [Connection; 2],
    pub links: [Link; 2],
    queue: BTreeMap<(SimTime, u64), (usize, QuicPacket)>,
    seq: u64,
    pub drop: DropFn,
    pub jitter: JitterFn,
    pub remark: RemarkFn,
    /// Packets handed to each direction (including dropped ones).
    pub sent: [u64; 2],
    pub dropped: [u64; 2],
    /// Bytes each side's application still wants to write, per stream.
    pub to_write: [BTreeMap<u64, u64>; 2],
    /// Next expected offset per stream, per receiving side.
    pub delivered: [BTreeMap<u64, u64>; 2],
    /// (time, bytes) of each in-order delivery at each side.
    pub deliveries: [Vec<(SimTime, u64)>; 2],
    pub established: [Option<SimTime>; 2],
    pub closed: [Option<Option<String>>; 2],
    /// I-bit or IMMEDIATE_ACK packets delivered to the server, and how many of them got an
    /// ACK at once.
    pub ibit_delivered: u64,
    pub ibit_acked_at_once: u64,
    pub low_events: [u64; 2],
    /// Every packet transmitted: (time, direction, size, ack-eliciting, i_bit).
    pub trace: Vec<(SimTime, usize, u64, bool, bool)>,
    server_acks: Vec<(SimTime, Vec<(u64, u64)>)>,
    /// Write only at the start and after `SendQueueLow` (INET's generators); else write
    /// whenever there is space.
    pub refill_on_event: bool,
    may_write: [bool; 2],
    /// Before every event, replace both connections by their encoded-and-decoded copies
    /// (`Connection::encode`/`decode`), the way a simulator keeps idle connections.
    pub reencode: bool,
    /// The largest encoded size seen for each side.
    pub max_encoded: [usize; 2],
}

impl Sim {
    pub fn new(client: QuicConfig, server: QuicConfig, one_way: SimDuration, rate: Option<Rate>) -> Sim {
        Sim::new_with_drop(client, server, one_way, rate, Box::new(|_, _, _| false))
    }

    /// As `new`, with a drop function that already covers the client's first packet.
    pub fn new_with_drop(
        client: QuicConfig,
        server: QuicConfig,
        one_way: SimDuration,
        rate: Option<Rate>,
        drop: DropFn,
    ) -> Sim {
        let now = SimTime::ZERO;
        let c = Connection::new(Role::Client, client, now, crate::harness::cc_rng(0)).expect("client config");
        let s = Connection::new(Role::Server, server, now, crate::harness::cc_rng(1)).expect("server config");
        let link = || Link { delay: one_way, rate, busy_until: SimTime::ZERO };
        let mut sim = Sim {
            now,
            conns: [c, s],
            links: [link(), link()],
            queue: BTreeMap::new(),
            seq: 0,
            drop,
            jitter: Box::new(|_, _| SimDuration::ZERO),
            remark: Box::new(|_, _, _| {}),
            sent: [0; 2],
            dropped: [0; 2],
            to_write: [BTreeMap::new(), BTreeMap::new()],
            delivered: [BTreeMap::new(), BTreeMap::new()],
            deliveries: [Vec::new(), Vec::new()],
            established: [None; 2],
            closed: [None, None],
            ibit_delivered: 0,
            ibit_acked_at_once: 0,
            low_events: [0; 2],
            trace: Vec::new(),
            server_acks: Vec::new(),
            refill_on_event: false,
            may_write: [true; 2],
            reencode: false,
            max_encoded: [0; 2],
        };
        sim.flush();
        sim
    }

    /// The client application wants to send `bytes` on `stream`.
    pub fn write(&mut self, side: usize, stream: u64, bytes: u64) {
        *self.to_write[side].entry(stream).or_default() += bytes;
        self.flush();
    }

    pub fn total_delivered(&self, side: usize) -> u64 {
        self.delivered[side].values().sum()
    }

    fn app_write(&mut self, side: usize) {
        if self.refill_on_event && !self.may_write[side] {
            return;
        }
        let now = self.now;
        let streams: Vec<u64> = self.to_write[side].keys().copied().collect();
        for id in streams {
            let want = self.to_write[side][&id];
            if want == 0 {
                continue;
            }
            let got = self.conns[side].stream_send(now, id, want);
            *self.to_write[side].get_mut(&id).unwrap() -= got;
            if got < want {
                // INET SENDQUEUE_FULL: the generator stops until the DRAIN indication.
                self.may_write[side] = false;
            }
        }
    }

    /// Lets both endpoints send and handles their events until nothing changes.
    fn flush(&mut self) {
        for _ in 0..4 {
            for side in 0..2 {
                self.app_write(side);
                let mut n = 0;
                while let Some(p) = self.conns[side].poll_transmit(self.now) {
                    n += 1;
                    assert!(n < 1_000_000, "endless poll_transmit at {}: {p:?}", self.now);
                    self.transmit(side, p);
                }
                while let Some(ev) = self.conns[side].poll_event() {
                    self.on_event(side, ev);
                }
            }
        }
    }

    fn on_event(&mut self, side: usize, ev: ConnEvent) {
        match ev {
            ConnEvent::Established => {
                assert!(self.established[side].is_none(), "Established twice");
                self.established[side] = Some(self.now);
            }
            ConnEvent::SendQueueLow => {
                self.low_events[side] += 1;
                self.may_write[side] = true;
            }
            ConnEvent::StreamData { stream_id, offset, len } => {
                let next = self.delivered[side].entry(stream_id).or_default();
                assert_eq!(offset, *next, "stream {stream_id}: out-of-order or duplicate delivery");
                assert!(len > 0);
                *next += len;
                self.deliveries[side].push((self.now, len));
            }
            ConnEvent::Closed { error } => {
                assert!(self.closed[side].is_none(), "Closed twice");
                self.closed[side] = Some(error);
            }
        }
    }

    fn transmit(&mut self, side: usize, mut p: QuicPacket) {
        let idx = self.sent[side];
        self.sent[side] += 1;
        let size = p.size_bytes();
        if side == 1 {
            for f in &p.frames {
                match f {
                    Frame::Ack(a) => self.server_acks.push((self.now, a.ranges.to_vec())),
                    Frame::AckEcn(a) => self.server_acks.push((self.now, a.ack.ranges.to_vec())),
                    _ => {}
                }
            }
        }
        self.trace.push((self.now, side, size, p.is_ack_eliciting(), p.i_bit));
        (self.remark)(side, idx, &mut p);
        if (self.drop)(side, idx, &p) {
            self.dropped[side] += 1;
            return;
        }
        let link = &mut self.links[side];
        let mut t = self.now;
        if let Some(rate) = link.rate {
            let start = t.max(link.busy_until);
            link.busy_until = start + rate.tx_time(size + UDP_IP);
            t = link.busy_until;
        }
        t += link.delay + (self.jitter)(side, idx);
        self.seq += 1;
        self.queue.insert((t, self.seq), (1 - side, p));
    }

    fn next_time(&self) -> Option<SimTime> {
        let mut t = self.queue.keys().next().map(|k| k.0);
        for c in &self.conns {
            if let Some(x) = c.poll_timeout() {
                t = Some(t.map_or(x, |y: SimTime| y.min(x)));
            }
        }
        t
    }

    /// Runs until `until` or until nothing is scheduled. Panics on a livelock.
    pub fn run_until(&mut self, until: SimTime) {
        let mut same_time = 0u64;
        loop {
            if self.reencode {
                self.reencode_conns();
            }
            let Some(t) = self.next_time() else { break };
            if t > until {
                break;
            }
            assert!(t >= self.now, "time went back");
            if t == self.now {
                same_time += 1;
                assert!(same_time < 100_000, "livelock at {}", self.now);
            } else {
                same_time = 0;
            }
            self.now = t;
            let first = self.queue.keys().next().copied();
            if let Some(k) = first.filter(|k| k.0 == t) {
                let (to, p) = self.queue.remove(&k).unwrap();
                let asks = p.i_bit || p.frames.iter().any(|f| matches!(f, Frame::ImmediateAck));
                let ibit_pn = (to == 1 && asks).then_some(p.pn);
                self.conns[to].handle_packet(t, &p);
                if let Some(pn) = ibit_pn {
                    self.ibit_delivered += 1;
                    self.flush();
                    // Did the server send an ACK covering pn right now?
                    if self.acked_now(pn) {
                        self.ibit_acked_at_once += 1;
                    }
                    continue;
                }
            } else {
                for c in &mut self.conns {
                    if c.poll_timeout().is_some_and(|x| x <= t) {
                        c.handle_timeout(t);
                    }
                }
            }
            self.flush();
        }
        // Everything due by `until` has been handled.
        if self.now < until {
            self.now = until;
        }
    }

    fn reencode_conns(&mut self) {
        for side in 0..2 {
            let mut buf = Vec::new();
            self.conns[side].encode(&mut buf);
            self.max_encoded[side] = self.max_encoded[side].max(buf.len());
            let cfg = std::sync::Arc::new(self.conns[side].config().clone());
            let (c, rest) = Connection::decode(&buf, cfg).expect("decodes");
            assert!(rest.is_empty(), "trailing bytes");
            self.conns[side] = c;
        }
    }

    /// Whether the server sent an ACK covering `pn` at the current instant.
    fn acked_now(&self, pn: u64) -> bool {
        self.server_acks
            .iter()
            .rev()
            .take_while(|(t, _)| *t == self.now)
            .any(|(_, r)| r.iter().any(|&(s, l)| s <= pn && pn <= l))
    }

    /// Runs until the server has received `bytes` in total, or `limit`. Returns the finish time.
    pub fn run_transfer(&mut self, bytes: u64, limit: SimTime) -> Option<SimTime> {
        let step = SimDuration::from_millis(1);
        while self.now < limit {
            if self.total_delivered(1) >= bytes {
                return self.deliveries[1].last().map(|d| d.0);
            }
            let next = self.now + step;
            self.run_until(next);
        }
        (self.total_delivered(1) >= bytes).then(|| self.deliveries[1].last().unwrap().0)
    }
}

/// Config helper: no handshake (the 2020 model) with the peer's parameters given.
pub fn no_handshake(mut c: QuicConfig, peer: &QuicConfig) -> QuicConfig {
    c.handshake = false;
    c.peer_params = Some(peer.local_params());
    c
}
