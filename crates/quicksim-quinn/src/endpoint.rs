//! One end of a quinn flow: a quinn-proto `Endpoint` with its single `Connection`, driven through
//! quicksim's [`Endpoint`] trait in simulated time. quinn's `Instant` is a fixed base instant
//! plus the simulated time (nanoseconds); its datagrams are [`QuinnPacket`]s crossing the
//! simulated links; its next timeout is the flow's timer event. With the `qlog` feature, a traced
//! end (a qlog asked for) has quinn-proto's own qlog writer attached, its time base simulated
//! time zero.

use crate::config::QuinnShared;
use crate::tls::{self, with_rng};
use bytes::{Bytes, BytesMut};
use quicksim_engine::{Rng, SimDuration, SimTime};
use quicksim_transport::{AppEvent, Endpoint, Role, TransportCounters, TransportMetrics, WirePacket};
use quinn_proto::{
    ConnectionError, ConnectionHandle, DatagramEvent, Dir, Event, Side, StreamEvent, StreamId, WriteError,
};
use std::collections::VecDeque;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
#[cfg(feature = "qlog")]
use std::sync::Mutex;
use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant};

/// A QUIC datagram (the UDP payload) as quinn-proto wrote it.
#[derive(Clone, Debug)]
pub struct QuinnPacket(pub Box<[u8]>);

impl WirePacket for QuinnPacket {
    fn size_bytes(&self) -> u64 {
        self.0.len() as u64
    }
}

/// The instant simulated time zero stands for. Only differences of instants reach quinn's
/// logic, so which instant it is does not change results.
static BASE: LazyLock<Instant> = LazyLock::new(Instant::now);

fn instant(t: SimTime) -> Instant {
    *BASE + Duration::from_nanos(t.0 / 1000)
}

fn sim_time(i: Instant) -> SimTime {
    SimTime(i.saturating_duration_since(*BASE).as_nanos() as u64 * 1000)
}

fn sim_dur(d: Duration) -> SimDuration {
    SimDuration(d.as_nanos() as u64 * 1000)
}

/// The addresses quinn is told (labels only: the simulator routes by node, nothing is sent on a
/// real network).
const CLIENT_ADDR: SocketAddr = SocketAddr::new(IpAddr::V4(Ipv4Addr::new(127, 0, 0, 1)), 50_000);
const SERVER_ADDR: SocketAddr = SocketAddr::new(IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2)), 4433);

/// A zero-filled source for the application's bytes (the simulator moves sizes, not contents).
static ZEROS: [u8; 16_384] = [0; 16_384];

/// FNV-1a over the datagrams sent before the handshake completes: shows that the handshake's
/// bytes (keys, randoms, connection IDs) follow the seed.
fn fnv(mut h: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x100_0000_01b3);
    }
    h
}

/// Where quinn-proto's qlog streamer writes one end's JSON-SEQ records (handed on by
/// `poll_qlog`). quinn requires `Send + Sync`; a run is single-threaded, so the lock is never
/// contended.
#[cfg(feature = "qlog")]
#[derive(Clone, Default)]
struct QlogBuf(Arc<Mutex<Vec<u8>>>);

#[cfg(feature = "qlog")]
impl QlogBuf {
    fn take(&self) -> Vec<u8> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner))
    }
}

#[cfg(feature = "qlog")]
impl std::io::Write for QlogBuf {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Everything of an end except the TLS generator (borrowed separately around quinn calls).
struct Inner {
    role: Role,
    ep: quinn_proto::Endpoint,
    conn: Option<(ConnectionHandle, quinn_proto::Connection)>,
    /// Datagrams the endpoint itself answered with (before a connection exists).
    out: VecDeque<QuinnPacket>,
    events: VecDeque<AppEvent>,
    buf: Vec<u8>,
    /// Streams this end opened (client bidirectional streams 0, 4, 8, ...).
    opened: u64,
    /// The last write was refused: no send space until quinn says the stream is writable.
    blocked: bool,
    established: bool,
    closed: bool,
    timeout: Option<SimTime>,
    handshake_digest: u64,
    send_window: u64,
}

/// One end of a quinn flow.
pub struct QuinnEndpoint {
    inner: Inner,
    /// The source of rustls's random bytes for this end.
    tls_rng: Rng,
    shared: Arc<QuinnShared>,
    /// quinn-proto's own qlog of this end (traced ends only).
    #[cfg(feature = "qlog")]
    qlog: Option<QlogBuf>,
}

impl QuinnEndpoint {
    /// The client (which opens the connection at `now`) or the server of a flow.
    pub fn new(role: Role, shared: Arc<QuinnShared>, now: SimTime) -> Result<QuinnEndpoint, String> {
        Self::make(role, shared, now, false)
    }

    /// As [`QuinnEndpoint::new`], with quinn-proto's own qlog written (`Endpoint::poll_qlog`
    /// hands it on): its header first, then quinn's events (`packet_sent`, `packet_received`,
    /// `packet_lost`, `metrics_updated`), times in ms since simulated time zero.
    #[cfg(feature = "qlog")]
    pub fn with_qlog(role: Role, shared: Arc<QuinnShared>, now: SimTime) -> Result<QuinnEndpoint, String> {
        Self::make(role, shared, now, true)
    }

    fn make(role: Role, shared: Arc<QuinnShared>, now: SimTime, qlog: bool) -> Result<QuinnEndpoint, String> {
        let i = if role == Role::Client { 0 } else { 1 };
        let (ecfg, seed, tls_rng) = shared.ends[i].clone();
        #[cfg(not(feature = "qlog"))]
        let (client_cfg, server_cfg) = {
            let _ = qlog;
            (shared.client.clone(), Arc::clone(&shared.server))
        };
        #[cfg(feature = "qlog")]
        let (qlog, client_cfg, server_cfg) = if qlog {
            let buf = QlogBuf::default();
            let mut q = quinn_proto::QlogConfig::default();
            q.writer(Box::new(buf.clone()))
                .title(Some("quinn-proto 0.11.19 in quicksim".into()))
                .description(Some(if role == Role::Client { "client" } else { "server" }.into()))
                .start_time(*BASE);
            let stream =
                q.into_stream().ok_or_else(|| "qlog: quinn-proto's streamer did not start".to_string())?;
            let (c, s) = shared.with_qlog(stream, role == Role::Server)?;
            (Some(buf), c, s)
        } else {
            (None, shared.client.clone(), Arc::clone(&shared.server))
        };
        let server = (role == Role::Server).then_some(server_cfg);
        let ep = quinn_proto::Endpoint::new(ecfg, server, false, Some(seed));
        let mut e = QuinnEndpoint {
            inner: Inner {
                role,
                ep,
                conn: None,
                out: VecDeque::new(),
                events: VecDeque::new(),
                buf: Vec::new(),
                opened: 0,
                blocked: false,
                established: false,
                closed: false,
                timeout: None,
                handshake_digest: 0xcbf2_9ce4_8422_2325,
                // quinn-proto's default: 8 x its 1.25 MB stream window.
                send_window: shared.cfg.send_window.unwrap_or(10_000_000),
            },
            tls_rng,
            shared,
            #[cfg(feature = "qlog")]
            qlog,
        };
        if role == Role::Client {
            let cfg = client_cfg;
            let Inner { ep, conn, .. } = &mut e.inner;
            let c =
                with_rng(&mut e.tls_rng, || ep.connect(instant(now), cfg, SERVER_ADDR, tls::server_name()))
                    .map_err(|err| format!("quinn connect: {err}"))?;
            *conn = Some(c);
            e.run(now, |_, _| {});
        }
        Ok(e)
    }

    /// Runs `f` on the inner state with this end's TLS generator installed, then moves quinn's
    /// events along (endpoint events, application events) and refreshes the timeout.
    fn run<R>(&mut self, now: SimTime, f: impl FnOnce(&mut Inner, Instant) -> R) -> R {
        let inner = &mut self.inner;
        with_rng(&mut self.tls_rng, || {
            let t = instant(now);
            let r = f(inner, t);
            inner.drive();
            r
        })
    }

    /// FNV-1a of the bytes this end sent before its handshake completed.
    pub fn handshake_digest(&self) -> u64 {
        self.inner.handshake_digest
    }

    /// quinn-proto's statistics (None before the server saw the first packet).
    pub fn stats(&self) -> Option<quinn_proto::ConnectionStats> {
        self.inner.conn.as_ref().map(|(_, c)| c.stats())
    }

    /// Whether the connection is closed and its draining period (RFC 9000 §10.2) is over, so
    /// nothing more will be sent or accepted: where a real-time driver may stop.
    pub fn is_drained(&self) -> bool {
        self.inner.conn.as_ref().is_some_and(|(_, c)| c.is_drained())
    }

    pub fn config(&self) -> &crate::QuinnConfig {
        &self.shared.cfg
    }
}

impl Inner {
    fn drive(&mut self) {
        let Some((ch, conn)) = &mut self.conn else { return };
        while let Some(ev) = conn.poll_endpoint_events() {
            if let Some(cev) = self.ep.handle_event(*ch, ev) {
                conn.handle_event(cev);
            }
        }
        while let Some(ev) = conn.poll() {
            match ev {
                Event::Connected => {
                    self.established = true;
                    self.events.push_back(AppEvent::Established);
                }
                Event::ConnectionLost { reason } => {
                    self.closed = true;
                    let error = match reason {
                        ConnectionError::LocallyClosed => None,
                        ConnectionError::ApplicationClosed(c) if c.error_code.into_inner() == 0 => None,
                        e => Some(e.to_string()),
                    };
                    self.events.push_back(AppEvent::Closed { error });
                }
                Event::Stream(StreamEvent::Opened { dir }) => {
                    while let Some(id) = conn.streams().accept(dir) {
                        read(conn, id, &mut self.events);
                    }
                }
                Event::Stream(StreamEvent::Readable { id }) => read(conn, id, &mut self.events),
                Event::Stream(StreamEvent::Writable { .. })
                | Event::Stream(StreamEvent::Available { .. })
                    if self.blocked =>
                {
                    self.blocked = false;
                    self.events.push_back(AppEvent::SendQueueLow);
                }
                _ => {}
            }
        }
        self.timeout = conn.poll_timeout().map(sim_time);
    }
}

/// Hands every byte stream `id` has in order to the application.
fn read(conn: &mut quinn_proto::Connection, id: StreamId, events: &mut VecDeque<AppEvent>) {
    let mut rs = conn.recv_stream(id);
    let Ok(mut chunks) = rs.read(true) else { return };
    // Ends at the end of the data (None), when nothing more is readable (Blocked) or at a
    // reset.
    while let Ok(Some(c)) = chunks.next(usize::MAX) {
        events.push_back(AppEvent::StreamData {
            stream_id: u64::from(VarIntOf(id)),
            offset: c.offset,
            len: c.bytes.len() as u64,
        });
    }
    // The receive window is returned to the peer in the next packet either way.
    let _ = chunks.finalize();
}

/// A stream ID's integer value.
struct VarIntOf(StreamId);

impl From<VarIntOf> for u64 {
    fn from(v: VarIntOf) -> u64 {
        quinn_proto::VarInt::from(v.0).into_inner()
    }
}

impl Endpoint for QuinnEndpoint {
    type Packet = QuinnPacket;
    const ENCAP_BYTES: u64 = 8;

    fn handle_packet(&mut self, now: SimTime, p: &QuinnPacket) {
        let from = if self.inner.role == Role::Client { SERVER_ADDR } else { CLIENT_ADDR };
        self.run(now, |s, t| {
            let data = BytesMut::from(&p.0[..]);
            match s.ep.handle(t, from, None, None, data, &mut s.buf) {
                Some(DatagramEvent::ConnectionEvent(_, ev)) => {
                    if let Some((_, c)) = &mut s.conn {
                        c.handle_event(ev);
                    }
                }
                Some(DatagramEvent::NewConnection(incoming)) => {
                    if s.conn.is_some() {
                        s.ep.ignore(incoming);
                        return;
                    }
                    match s.ep.accept(incoming, t, &mut s.buf, None) {
                        Ok(c) => s.conn = Some(c),
                        Err(e) => {
                            if let Some(tx) = e.response {
                                s.out.push_back(QuinnPacket(s.buf[..tx.size].into()));
                            }
                        }
                    }
                }
                Some(DatagramEvent::Response(tx)) => s.out.push_back(QuinnPacket(s.buf[..tx.size].into())),
                None => {}
            }
        });
    }

    fn handle_timeout(&mut self, now: SimTime) {
        self.run(now, |s, t| {
            if let Some((_, c)) = &mut s.conn {
                c.handle_timeout(t);
            }
        });
    }

    fn poll_transmit(&mut self, now: SimTime) -> Option<QuinnPacket> {
        self.run(now, |s, t| {
            let p = match s.out.pop_front() {
                Some(p) => Some(p),
                None => {
                    let (_, c) = s.conn.as_mut()?;
                    s.buf.clear();
                    let tx = c.poll_transmit(t, 1, &mut s.buf)?;
                    Some(QuinnPacket(s.buf[..tx.size].into()))
                }
            };
            if let Some(p) = &p {
                if !s.established {
                    s.handshake_digest = fnv(s.handshake_digest, &p.0);
                }
            }
            p
        })
    }

    fn poll_timeout(&self) -> Option<SimTime> {
        self.inner.timeout
    }

    fn poll_event(&mut self) -> Option<AppEvent> {
        self.inner.events.pop_front()
    }

    #[cfg(feature = "qlog")]
    fn poll_qlog(&mut self) -> Option<String> {
        let text = self.qlog.as_ref()?.take();
        // quinn's streamer writes serde_json's output: UTF-8.
        (!text.is_empty()).then(|| String::from_utf8_lossy(&text).into_owned())
    }

    fn app_stream_id(index: u32) -> u64 {
        u64::from(VarIntOf(StreamId::new(Side::Client, Dir::Bi, u64::from(index))))
    }

    fn send_space(&self) -> u64 {
        if self.inner.established && !self.inner.blocked && !self.inner.closed {
            self.inner.send_window
        } else {
            0
        }
    }

    fn write(&mut self, now: SimTime, stream: u64, len: u64) -> u64 {
        self.run(now, |s, _| s.write(stream, len))
    }

    fn write_whole(&mut self, now: SimTime, stream: u64, len: u64) -> u64 {
        self.run(now, |s, _| s.write(stream, len))
    }

    fn close(&mut self, now: SimTime) {
        self.run(now, |s, t| {
            if let Some((_, c)) = &mut s.conn {
                if !c.is_closed() {
                    c.close(t, 0u32.into(), Bytes::new());
                }
            }
        });
    }

    fn metrics(&self) -> TransportMetrics {
        let Some((_, c)) = &self.inner.conn else { return TransportMetrics::default() };
        let st = c.stats();
        TransportMetrics {
            cwnd_bytes: st.path.cwnd,
            // quinn-proto exposes neither ssthresh nor bytes in flight, nor the latest RTT
            // sample, rttvar, the PTO period or count or the send buffer (README: quinn flows).
            ssthresh_bytes: u64::MAX,
            bytes_in_flight: 0,
            latest_rtt: SimDuration::ZERO,
            smoothed_rtt: sim_dur(c.rtt()),
            min_rtt: sim_dur(st.path.min_rtt),
            rttvar: None,
            rto: None,
            in_recovery: false,
            pto_count: 0,
            send_queue_bytes: 0,
        }
    }

    fn counters(&self) -> TransportCounters {
        let Some((_, c)) = &self.inner.conn else { return TransportCounters::default() };
        let st = c.stats();
        TransportCounters {
            packets_sent: st.path.sent_packets,
            // Not exposed by quinn-proto.
            packets_acked: 0,
            packets_lost: st.path.lost_packets,
            // The bytes declared lost, which quinn sends again.
            retransmitted_bytes: st.path.lost_bytes,
            acks_sent: st.frame_tx.acks,
            // quinn's ECN is not driven here (the datagrams carry no codepoint to it yet).
            ..TransportCounters::default()
        }
    }

    fn is_established(&self) -> bool {
        self.inner.established
    }

    fn is_closed(&self) -> bool {
        self.inner.closed || self.inner.conn.as_ref().is_some_and(|(_, c)| c.is_closed())
    }
}

impl Inner {
    /// Writes `len` zero bytes to the client stream `stream`, opening streams up to it; returns
    /// what quinn accepted (its send window and the peer's flow-control credit bound it).
    fn write(&mut self, stream: u64, len: u64) -> u64 {
        let Some((_, c)) = &mut self.conn else { return 0 };
        let index = stream / 4;
        while self.opened <= index {
            if c.streams().open(Dir::Bi).is_none() {
                return 0;
            }
            self.opened += 1;
        }
        let id = StreamId::new(Side::Client, Dir::Bi, index);
        let mut total = 0;
        while total < len {
            let n = (len - total).min(ZEROS.len() as u64) as usize;
            match c.send_stream(id).write(&ZEROS[..n]) {
                Ok(w) => {
                    total += w as u64;
                    if w < n {
                        break;
                    }
                }
                Err(WriteError::Blocked) => {
                    self.blocked = true;
                    break;
                }
                Err(_) => break,
            }
        }
        total
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::QuinnConfig;

    /// Client and server over an ideal 10 ms path (no losses, no rate limit) until `until`;
    /// returns the bytes delivered to the server's application and the client's digest.
    fn transfer(cfg: QuinnConfig, seed: u64, bytes: u64, until: SimTime) -> (u64, u64, bool) {
        let sh = Arc::new(QuinnShared::new(cfg, Rng::from_seed(seed)).unwrap());
        let mut e = [
            QuinnEndpoint::new(Role::Client, Arc::clone(&sh), SimTime::ZERO).unwrap(),
            QuinnEndpoint::new(Role::Server, sh, SimTime::ZERO).unwrap(),
        ];
        let delay = 10_000_000_000u64;
        let mut wire: VecDeque<(u64, usize, QuinnPacket)> = VecDeque::new();
        let (mut now, mut delivered, mut left) = (0u64, 0u64, bytes);
        while now < until.0 {
            for side in 0..2 {
                while let Some(p) = e[side].poll_transmit(SimTime(now)) {
                    wire.push_back((now + delay, 1 - side, p));
                }
                while let Some(ev) = e[side].poll_event() {
                    match ev {
                        AppEvent::StreamData { len, .. } => delivered += len,
                        AppEvent::Established | AppEvent::SendQueueLow if side == 0 => {
                            left -= e[0].write(SimTime(now), 0, left.min(e[0].send_space()));
                        }
                        _ => {}
                    }
                }
            }
            let timers = e.iter().filter_map(|x| x.poll_timeout()).map(|t| t.0);
            let Some(next) = timers.chain(wire.front().map(|w| w.0)).min() else { break };
            now = next.max(now);
            if wire.front().is_some_and(|w| w.0 == now) {
                let (_, to, p) = wire.pop_front().unwrap();
                e[to].handle_packet(SimTime(now), &p);
            } else {
                for x in &mut e {
                    if x.poll_timeout() == Some(SimTime(now)) {
                        x.handle_timeout(SimTime(now));
                    }
                }
            }
        }
        (delivered, e[0].handshake_digest(), e[0].is_established())
    }

    #[test]
    fn a_transfer_completes_with_and_without_encryption() {
        let end = SimTime(2_000_000_000_000);
        for encryption in [true, false] {
            let cfg = QuinnConfig { encryption, ..QuinnConfig::default() };
            let (got, _, established) = transfer(cfg, 1, 300_000, end);
            assert!(established, "encryption {encryption}");
            assert_eq!(got, 300_000, "encryption {encryption}");
        }
    }

    #[test]
    fn the_handshake_bytes_follow_the_seed() {
        let end = SimTime(200_000_000_000);
        let d = |seed| transfer(QuinnConfig::default(), seed, 1000, end).1;
        assert_eq!(d(3), d(3));
        assert_ne!(d(3), d(4));
    }
}
