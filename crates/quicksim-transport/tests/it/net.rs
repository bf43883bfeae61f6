//! `harness.rs` generalised over [`Endpoint`]: two endpoints back to back, per direction a
//! fixed one-way delay, an optional serialization rate (unbounded FIFO), a drop function, extra
//! delay (reordering) and duplication. Checks in-order, exactly-once delivery of stream 0 as it
//! goes. Used by the TCP tests; works for any transport.

use std::collections::BTreeMap;

use quicksim_engine::{Rate, SimDuration, SimTime};
use quicksim_transport::{AppEvent, EcnCodepoint, Endpoint, WirePacket};

/// IPv4 header (RFC 791) added below every packet on the wire.
pub const IPV4: u64 = 20;

pub type DropFn<P> = Box<dyn FnMut(usize, u64, &P) -> bool>;
pub type JitterFn = Box<dyn FnMut(usize, u64) -> SimDuration>;
pub type DupFn = Box<dyn FnMut(usize, u64) -> bool>;
/// (direction, index, packet) → set CE on it if it is ECN-capable (a marking queue).
pub type MarkFn<P> = Box<dyn FnMut(usize, u64, &P) -> bool>;
pub type EndpointFn<E> = Box<dyn FnMut(&mut E)>;

pub struct Link {
    pub delay: SimDuration,
    pub rate: Option<Rate>,
    busy_until: SimTime,
}

pub struct Net<E: Endpoint> {
    pub now: SimTime,
    pub eps: [E; 2],
    pub links: [Link; 2],
    queue: BTreeMap<(SimTime, u64), (usize, E::Packet)>,
    seq: u64,
    /// (direction, index in that direction, packet) → drop it. Direction 0: client → server.
    pub drop: DropFn<E::Packet>,
    pub jitter: JitterFn,
    pub dup: DupFn,
    pub mark_ce: MarkFn<E::Packet>,
    /// Packets handed to each direction (dropped ones included).
    pub sent: [u64; 2],
    pub dropped: [u64; 2],
    /// Bytes each side's application still wants to write.
    pub to_write: [u64; 2],
    /// Bytes delivered in order to each side's application.
    pub delivered: [u64; 2],
    /// (time, bytes) of each delivery at each side.
    pub deliveries: [Vec<(SimTime, u64)>; 2],
    pub established: [Option<SimTime>; 2],
    pub closed: [Option<Option<String>>; 2],
    /// Every packet transmitted: (time, direction, packet), dropped ones included.
    pub trace: Vec<(SimTime, usize, E::Packet)>,
    /// Close each side once its application has written everything (a bulk sender).
    pub close_when_done: [bool; 2],
    /// Called on each endpoint after every event (the encoding tests replace the endpoint by
    /// its decoded encoding here).
    pub after_event: Option<EndpointFn<E>>,
    /// Poll with `poll_transmit_into`, each time over a copy of this packet (as the run loop
    /// writes over its pool's freed slots, whatever they held), instead of `poll_transmit`.
    pub spent: Option<E::Packet>,
}

impl<E: Endpoint> Net<E>
where
    E::Packet: Clone,
{
    /// As `new`, but the drop function is in place before the first packet.
    pub fn with_drop(
        client: E,
        server: E,
        one_way: SimDuration,
        rate: Option<Rate>,
        drop: DropFn<E::Packet>,
    ) -> Self {
        let link = || Link { delay: one_way, rate, busy_until: SimTime::ZERO };
        let mut net = Net::new_raw(client, server, link(), link());
        net.drop = drop;
        net.flush();
        net
    }

    fn new_raw(client: E, server: E, a: Link, b: Link) -> Self {
        Net {
            now: SimTime::ZERO,
            eps: [client, server],
            links: [a, b],
            queue: BTreeMap::new(),
            seq: 0,
            drop: Box::new(|_, _, _| false),
            jitter: Box::new(|_, _| SimDuration::ZERO),
            dup: Box::new(|_, _| false),
            mark_ce: Box::new(|_, _, _| false),
            sent: [0; 2],
            dropped: [0; 2],
            to_write: [0; 2],
            delivered: [0; 2],
            deliveries: [Vec::new(), Vec::new()],
            established: [None; 2],
            closed: [None, None],
            trace: Vec::new(),
            close_when_done: [false; 2],
            after_event: None,
            spent: None,
        }
    }

    /// Side `side`'s application wants to send `bytes` more.
    pub fn write(&mut self, side: usize, bytes: u64) {
        self.to_write[side] += bytes;
        self.flush();
    }

    /// Lets both endpoints write, send and report until nothing changes.
    pub fn flush(&mut self) {
        for _ in 0..4 {
            for side in 0..2 {
                if self.to_write[side] > 0 {
                    let got = self.eps[side].write(self.now, 0, self.to_write[side]);
                    self.to_write[side] -= got;
                    if self.to_write[side] == 0 && self.close_when_done[side] {
                        self.close_when_done[side] = false;
                        self.eps[side].close(self.now);
                    }
                }
                let mut n = 0;
                loop {
                    let p = match &self.spent {
                        Some(spent) => {
                            let mut out = spent.clone();
                            if !self.eps[side].poll_transmit_into(self.now, &mut out) {
                                break;
                            }
                            out
                        }
                        None => match self.eps[side].poll_transmit(self.now) {
                            Some(p) => p,
                            None => break,
                        },
                    };
                    n += 1;
                    assert!(n < 1_000_000, "endless poll_transmit at {}", self.now);
                    self.transmit(side, p);
                }
                while let Some(ev) = self.eps[side].poll_event() {
                    self.on_event(side, ev);
                }
            }
        }
    }

    fn on_event(&mut self, side: usize, ev: AppEvent) {
        match ev {
            AppEvent::Established => {
                assert!(self.established[side].is_none(), "Established twice");
                self.established[side] = Some(self.now);
            }
            AppEvent::SendQueueLow => {}
            AppEvent::StreamData { stream_id, offset, len } => {
                assert_eq!(stream_id, 0);
                assert_eq!(offset, self.delivered[side], "out-of-order or duplicate delivery");
                assert!(len > 0);
                self.delivered[side] += len;
                self.deliveries[side].push((self.now, len));
            }
            AppEvent::Closed { error } => {
                assert!(self.closed[side].is_none(), "Closed twice");
                self.closed[side] = Some(error);
            }
        }
    }

    fn transmit(&mut self, side: usize, mut p: E::Packet) {
        let idx = self.sent[side];
        self.sent[side] += 1;
        self.trace.push((self.now, side, p.clone()));
        if p.ecn() != EcnCodepoint::NotEct && (self.mark_ce)(side, idx, &p) {
            p.set_ecn(EcnCodepoint::Ce);
        }
        if (self.drop)(side, idx, &p) {
            self.dropped[side] += 1;
            return;
        }
        let size = p.size_bytes() + E::ENCAP_BYTES + IPV4;
        let copies = if (self.dup)(side, idx) { 2 } else { 1 };
        for _ in 0..copies {
            let link = &mut self.links[side];
            let mut t = self.now;
            if let Some(rate) = link.rate {
                let start = t.max(link.busy_until);
                link.busy_until = start + rate.tx_time(size);
                t = link.busy_until;
            }
            t += link.delay + (self.jitter)(side, idx);
            self.seq += 1;
            self.queue.insert((t, self.seq), (1 - side, p.clone()));
        }
    }

    fn next_time(&self) -> Option<SimTime> {
        let mut t = self.queue.keys().next().map(|k| k.0);
        for e in &self.eps {
            if let Some(x) = e.poll_timeout() {
                t = Some(t.map_or(x, |y: SimTime| y.min(x)));
            }
        }
        t
    }

    /// Runs until `until` or until nothing is scheduled. Panics on a livelock.
    pub fn run_until(&mut self, until: SimTime) {
        let mut same_time = 0u64;
        while let Some(t) = self.next_time() {
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
                self.eps[to].handle_packet(t, &p);
            } else {
                for e in &mut self.eps {
                    if e.poll_timeout().is_some_and(|x| x <= t) {
                        e.handle_timeout(t);
                    }
                }
            }
            self.flush();
            if let Some(f) = &mut self.after_event {
                self.eps.iter_mut().for_each(f);
            }
        }
        if self.now < until {
            self.now = until;
        }
    }

    /// Runs until side 1 has received `bytes`, or `limit`. Returns the time of the last delivery.
    pub fn run_transfer(&mut self, bytes: u64, limit: SimTime) -> Option<SimTime> {
        let step = SimDuration::from_millis(1);
        while self.now < limit && self.delivered[1] < bytes {
            let next = self.now + step;
            self.run_until(next);
        }
        (self.delivered[1] >= bytes).then(|| self.deliveries[1].last().unwrap().0)
    }

    /// The packets sent in direction `dir`, with their send times.
    pub fn sent_by(&self, dir: usize) -> impl Iterator<Item = (SimTime, &E::Packet)> {
        self.trace.iter().filter(move |t| t.1 == dir).map(|t| (t.0, &t.2))
    }
}
