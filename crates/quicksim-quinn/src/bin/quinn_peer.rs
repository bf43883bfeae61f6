//! `quinn-peer`: the quinn flows' QUIC stack (`QuinnEndpoint`, the code `kind = "quinn"` runs in
//! virtual time) as a real program over a UDP socket, driven by the wall clock. Run as a
//! `kind = "program"` flow through the emulator (docs/emulation.md), it measures the emulator
//! and the network model against the same stack in virtual time.
//!
//! ```text
//! quinn-peer server --listen ADDR:PORT [--config JSON] [--seed N] [--wait SECONDS]
//! quinn-peer client --connect ADDR:PORT -t SECONDS [--config JSON] [--seed N]
//! ```
//!
//! The server accepts one connection, counts the stream bytes delivered to it and exits when the
//! connection ends (as `iperf3 -s -1`). The client is the model's saturated application: from
//! the connection's start it writes whatever quinn accepts, and `-t` seconds after the start it
//! closes the connection (CONNECTION_CLOSE, unsent data discarded: a flow's `stop` with
//! `stop_mode = "send"`), then waits out the draining period. Each prints one JSON line. Both
//! ends must be given the same `--config` (a scenario's `quinn` table as JSON) and `--seed`:
//! the certificate the client trusts is derived from them.
//!
//! Simulated time is the wall time since the program started. A thread blocks in `recv` and
//! hands datagrams over a channel, so the loop's waits (`recv_timeout`) have the clock's
//! precision (a socket's read timeout counts in jiffies).

use quicksim_engine::{Rng, SimTime};
use quicksim_quinn::{QuinnConfig, QuinnEndpoint, QuinnPacket, QuinnShared};
use quicksim_transport::{AppEvent, Endpoint, Role};
use serde_json::json;
use std::net::{SocketAddr, ToSocketAddrs, UdpSocket};
use std::process::ExitCode;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};

const USAGE: &str =
    "usage: quinn-peer server --listen ADDR:PORT [--config JSON] [--seed N] [--wait SECONDS]\n       \
                     quinn-peer client --connect ADDR:PORT -t SECONDS [--config JSON] [--seed N]";
/// The largest datagram read (quinn's payload is at most the path MTU minus 28 B).
const MAX_DATAGRAM: usize = 65_536;
/// How long the client waits for its handshake to complete.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// The longest the client waits out its draining period after closing (3 PTO, RFC 9000 §10.2).
const DRAIN_LIMIT: Duration = Duration::from_secs(2);
/// The server also ends when the client has been silent this long. quinn-proto 0.11 counts its
/// CONNECTION_CLOSE against the congestion window and ignores ACKs once closed: a client that
/// closes with a full window never sends it, and one that is dropped by a full queue is not
/// repeated; the server would wait for its idle timeout (30 s) instead. A saturated client is
/// never silent this long while the connection lives (its probes back off from ~RTT; 0.75 s is
/// several PTOs at the RTTs measured), and the emulator gives servers 1 s after the client exits.
const CLIENT_SILENCE: Duration = Duration::from_millis(750);

/// What the command line asks for.
#[derive(Debug)]
struct Args {
    role: Role,
    addr: SocketAddr,
    seconds: f64,
    wait_s: f64,
    config: QuinnConfig,
    seed: u64,
}

fn seconds(flag: &str, v: &str) -> Result<f64, String> {
    match v.parse::<f64>() {
        Ok(s) if s.is_finite() && s > 0.0 && s < 1e6 => Ok(s),
        _ => Err(format!("{flag}: {v:?} is not a positive number of seconds")),
    }
}

fn parse(argv: &[String]) -> Result<Args, String> {
    let role = match argv.first().map(String::as_str) {
        Some("server") => Role::Server,
        Some("client") => Role::Client,
        Some(other) => return Err(format!("{other:?} is not a role; choose server or client")),
        None => return Err("no role given; choose server or client".into()),
    };
    let (mut addr, mut secs, mut wait_s, mut config, mut seed) = (None, None, 60.0, None, 1u64);
    let mut it = argv[1..].iter();
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag}: needs a value"));
        match (flag.as_str(), role) {
            ("--listen", Role::Server) | ("--connect", Role::Client) => {
                let v = value()?;
                let a = v
                    .to_socket_addrs()
                    .map_err(|e| format!("{flag}: {v:?} is not ADDR:PORT ({e})"))?
                    .next()
                    .ok_or_else(|| format!("{flag}: {v:?} names no address"))?;
                addr = Some(a);
            }
            ("-t", Role::Client) => secs = Some(seconds("-t", value()?)?),
            ("--wait", Role::Server) => wait_s = seconds("--wait", value()?)?,
            ("--config", _) => {
                let v = value()?;
                let c: QuinnConfig = serde_json::from_str(v).map_err(|e| format!("--config: {v:?}: {e}"))?;
                c.validate().map_err(|e| format!("--config: {e}"))?;
                config = Some(c);
            }
            ("--seed", _) => {
                let v = value()?;
                seed = v.parse().map_err(|_| format!("--seed: {v:?} is not a non-negative integer"))?;
            }
            _ => return Err(format!("{flag:?} is not an option of the {} role", name(role))),
        }
    }
    let need = if role == Role::Server { "--listen" } else { "--connect" };
    let addr = addr.ok_or_else(|| format!("{need} ADDR:PORT is required"))?;
    let seconds = match role {
        Role::Client => secs.ok_or("-t SECONDS is required")?,
        Role::Server => 0.0,
    };
    Ok(Args { role, addr, seconds, wait_s, config: config.unwrap_or_default(), seed })
}

fn name(role: Role) -> &'static str {
    if role == Role::Server {
        "server"
    } else {
        "client"
    }
}

/// The socket, the endpoint and the clock of one end.
struct Peer {
    ep: QuinnEndpoint,
    sock: UdpSocket,
    /// Where datagrams go (the server learns it from the first datagram).
    peer: Option<SocketAddr>,
    rx: Receiver<std::io::Result<(Vec<u8>, SocketAddr, Instant)>>,
    t0: Instant,
    /// The program's own timing error (µs): how late each timer of quinn's was handled, and how
    /// long each datagram waited between the reader thread's `recv` and the endpoint.
    timer_late_us: Vec<u32>,
    handoff_us: Vec<u32>,
}

fn sim(d: Duration) -> SimTime {
    SimTime(d.as_nanos() as u64 * 1000)
}

impl Peer {
    fn new(
        role: Role,
        sock: UdpSocket,
        peer: Option<SocketAddr>,
        shared: Arc<QuinnShared>,
    ) -> Result<Peer, String> {
        let reader = sock.try_clone().map_err(|e| format!("socket: {e}"))?;
        let (tx, rx) = mpsc::channel();
        // Ends when the main thread drops the receiver (the send fails) or the process exits.
        std::thread::spawn(move || {
            let mut buf = vec![0u8; MAX_DATAGRAM];
            loop {
                let r = reader.recv_from(&mut buf).map(|(n, from)| (buf[..n].to_vec(), from, Instant::now()));
                let stop = r.is_err();
                if tx.send(r).is_err() || stop {
                    return;
                }
            }
        });
        let t0 = Instant::now();
        let ep = QuinnEndpoint::new(role, shared, SimTime::ZERO)?;
        Ok(Peer { ep, sock, peer, rx, t0, timer_late_us: Vec::new(), handoff_us: Vec::new() })
    }

    fn now(&self) -> SimTime {
        sim(self.t0.elapsed())
    }

    fn secs(&self, t: SimTime) -> f64 {
        t.0 as f64 / 1e12
    }

    /// Sends every datagram the endpoint has now.
    fn transmit(&mut self) -> Result<(), String> {
        let now = self.now();
        while let Some(QuinnPacket(p)) = self.ep.poll_transmit(now) {
            let Some(to) = self.peer else { continue };
            match self.sock.send_to(&p, to) {
                Ok(_) => {}
                // A full socket buffer or a refusal (ICMP) of one datagram is a loss to QUIC.
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                    return Err(format!("no server at {to}: connection refused"));
                }
                Err(e) => return Err(format!("send to {to}: {e}")),
            }
        }
        Ok(())
    }

    /// Handles the endpoint's due timer, then waits until `until` (or the endpoint's next
    /// timer, if earlier) for datagrams, handing each to the endpoint and transmitting after
    /// each, as the simulator does. Returns whether a datagram arrived.
    fn step(&mut self, until: Option<Duration>) -> Result<bool, String> {
        let now = self.now();
        if let Some(t) = self.ep.poll_timeout().filter(|t| *t <= now) {
            self.timer_late_us.push(((now.0 - t.0) / 1_000_000).min(u64::from(u32::MAX)) as u32);
            self.ep.handle_timeout(now);
            self.transmit()?;
        }
        let timer = self.ep.poll_timeout().map(|t| Duration::from_nanos(t.0 / 1000));
        let wake = match (timer, until) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => a.or(b).unwrap_or(Duration::from_secs(1)),
        };
        let wait = wake.saturating_sub(self.t0.elapsed());
        let first = match self.rx.recv_timeout(wait) {
            Ok(r) => r,
            Err(RecvTimeoutError::Timeout) => return Ok(false),
            Err(RecvTimeoutError::Disconnected) => return Err("socket reader ended".into()),
        };
        let mut next = Some(first);
        while let Some(r) = next {
            let (bytes, from, at) = r.map_err(|e| match e.kind() {
                std::io::ErrorKind::ConnectionRefused => {
                    format!(
                        "no server at {}: connection refused",
                        self.peer.map_or("?".into(), |p| p.to_string())
                    )
                }
                _ => format!("receive: {e}"),
            })?;
            if self.peer.is_none() {
                self.peer = Some(from);
            }
            if Some(from) == self.peer {
                let now = self.now();
                self.handoff_us.push(at.elapsed().as_micros().min(u128::from(u32::MAX)) as u32);
                self.ep.handle_packet(now, &QuinnPacket(bytes.into_boxed_slice()));
                self.transmit()?;
            }
            next = self.rx.try_recv().ok();
        }
        Ok(true)
    }
}

/// p50, p99 and maximum of µs samples (nearest rank).
fn quantiles(v: &mut [u32]) -> serde_json::Value {
    if v.is_empty() {
        return json!({ "count": 0 });
    }
    v.sort_unstable();
    let q = |f: f64| v[((f * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1];
    json!({ "count": v.len(), "p50_us": q(0.5), "p99_us": q(0.99), "max_us": v[v.len() - 1] })
}

/// The program's own timing error.
fn timing(p: &mut Peer) -> serde_json::Value {
    json!({ "timer_lateness": quantiles(&mut p.timer_late_us), "receive_handoff": quantiles(&mut p.handoff_us) })
}

/// The quinn statistics both reports carry.
fn stats(ep: &QuinnEndpoint) -> serde_json::Value {
    let Some(s) = ep.stats() else { return json!(null) };
    json!({
        "packets_sent": s.path.sent_packets,
        "packets_lost": s.path.lost_packets,
        "bytes_lost": s.path.lost_bytes,
        "bytes_sent": s.udp_tx.bytes,
        "packets_received": s.udp_rx.datagrams,
        "congestion_events": s.path.congestion_events,
        "cwnd": s.path.cwnd,
        "smoothed_rtt_s": s.path.rtt.as_secs_f64(),
        "min_rtt_s": s.path.min_rtt.as_secs_f64(),
        "udp_payload": s.path.current_mtu,
    })
}

/// The saturated sender: writes what quinn accepts (the model's `App::refill` on stream 0),
/// closes `seconds` after the start, waits out the draining period.
fn client(a: &Args, shared: Arc<QuinnShared>) -> Result<serde_json::Value, String> {
    let sock = UdpSocket::bind(if a.addr.is_ipv4() { "0.0.0.0:0" } else { "[::]:0" })
        .map_err(|e| format!("socket: {e}"))?;
    // Connected: the kernel then reports an ICMP port unreachable as ECONNREFUSED.
    sock.connect(a.addr).map_err(|e| format!("--connect {}: {e}", a.addr))?;
    let mut p = Peer::new(Role::Client, sock, Some(a.addr), shared)?;
    let stream = QuinnEndpoint::app_stream_id(0);
    let stop = Duration::from_secs_f64(a.seconds);
    let (mut written, mut established, mut closed_at) = (0u64, None, None);
    p.transmit()?;
    loop {
        let mut refill = false;
        while let Some(ev) = p.ep.poll_event() {
            match ev {
                AppEvent::Established => {
                    established = Some(p.now());
                    refill = true;
                }
                AppEvent::SendQueueLow => refill = true,
                AppEvent::Closed { error: Some(e) } => return Err(format!("connection closed: {e}")),
                AppEvent::Closed { error: None } | AppEvent::StreamData { .. } => {}
            }
        }
        if refill && closed_at.is_none() {
            let now = p.now();
            loop {
                let space = p.ep.send_space();
                let n = if space == 0 { 0 } else { p.ep.write(now, stream, space) };
                if n == 0 {
                    break;
                }
                written += n;
            }
            p.transmit()?;
        }
        let elapsed = p.t0.elapsed();
        if closed_at.is_none() && elapsed >= stop {
            let now = p.now();
            p.ep.close(now);
            closed_at = Some(now);
            if p.transmit().is_err() {
                break; // the server is gone already
            }
        }
        if established.is_none() && elapsed >= HANDSHAKE_TIMEOUT {
            return Err(format!("no answer from {} within {} s", a.addr, HANDSHAKE_TIMEOUT.as_secs()));
        }
        if let Some(c) = closed_at {
            if p.ep.is_drained() || elapsed >= Duration::from_nanos(c.0 / 1000) + DRAIN_LIMIT {
                break;
            }
        }
        let until = match (closed_at, established) {
            (Some(c), _) => Duration::from_nanos(c.0 / 1000) + DRAIN_LIMIT,
            (None, None) => stop.min(HANDSHAKE_TIMEOUT),
            (None, Some(_)) => stop,
        };
        match p.step(Some(until)) {
            // Once closed, a refusal means the server has ended too (it does not drain).
            Err(_) if closed_at.is_some() => break,
            r => {
                r?;
            }
        }
    }
    let closed = closed_at.unwrap_or(p.now());
    let hs = established.map(|t| p.secs(t));
    Ok(json!({
        "role": "client",
        "peer": a.addr.to_string(),
        "bytes_written": written,
        "duration_s": p.secs(closed),
        "handshake_s": hs,
        "sending_mbps": hs.map(|h| written as f64 * 8.0 / (p.secs(closed) - h).max(1e-9) / 1e6),
        "quinn": stats(&p.ep),
        "timing": timing(&mut p),
    }))
}

/// One connection: counts the stream bytes delivered, ends when the connection does.
fn server(a: &Args, shared: Arc<QuinnShared>) -> Result<serde_json::Value, String> {
    let sock = UdpSocket::bind(a.addr).map_err(|e| format!("--listen {}: {e}", a.addr))?;
    let mut p = Peer::new(Role::Server, sock, None, shared)?;
    let wait = Duration::from_secs_f64(a.wait_s);
    let (mut delivered, mut first_packet, mut first_byte, mut last_byte) = (0u64, None, None, None);
    let mut last_packet = Duration::ZERO;
    let mut ended_by = "close";
    let error = loop {
        let mut end = None;
        while let Some(ev) = p.ep.poll_event() {
            match ev {
                AppEvent::StreamData { len, .. } => {
                    let now = p.now();
                    first_byte.get_or_insert(now);
                    last_byte = Some(now);
                    delivered += len;
                }
                AppEvent::Closed { error } => end = Some(error),
                AppEvent::Established | AppEvent::SendQueueLow => {}
            }
        }
        match end {
            // The client's endpoint answers with a stateless reset once its connection has
            // drained: the connection ended at the client.
            Some(Some(e)) if e == "reset by peer" && first_byte.is_some() => {
                ended_by = "client reset";
                break None;
            }
            Some(e) => break e,
            None => {}
        }
        let elapsed = p.t0.elapsed();
        if p.peer.is_none() && elapsed >= wait {
            return Err(format!("no client within {} s on {}", a.wait_s, a.addr));
        }
        if first_byte.is_some() && elapsed >= last_packet + CLIENT_SILENCE {
            ended_by = "client silent";
            break None;
        }
        let until = if p.peer.is_none() { wait } else { last_packet + CLIENT_SILENCE };
        if p.step(Some(until))? {
            last_packet = p.t0.elapsed();
            first_packet.get_or_insert(p.now());
        }
    };
    let end = p.now();
    let span = match (first_byte, last_byte) {
        (Some(f), Some(l)) => p.secs(l) - p.secs(f),
        _ => 0.0,
    };
    let report = json!({
        "role": "server",
        "peer": p.peer.map(|x| x.to_string()),
        "bytes_delivered": delivered,
        "first_packet_s": first_packet.map(|t| p.secs(t)),
        "first_byte_s": first_byte.map(|t| p.secs(t)),
        "last_byte_s": last_byte.map(|t| p.secs(t)),
        "closed_s": p.secs(end),
        "ended_by": ended_by,
        "delivery_mbps": if span > 0.0 { delivered as f64 * 8.0 / span / 1e6 } else { 0.0 },
        "quinn": stats(&p.ep),
        "timing": timing(&mut p),
        "error": error,
    });
    match error {
        None => Ok(report),
        Some(e) => {
            println!("{report}");
            Err(format!("connection closed: {e}"))
        }
    }
}

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    if matches!(argv.first().map(String::as_str), Some("-h" | "--help")) {
        println!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    let a = match parse(&argv) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("quinn-peer: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let shared = match QuinnShared::new(a.config.clone(), Rng::from_seed(a.seed)) {
        Ok(s) => Arc::new(s),
        Err(e) => {
            eprintln!("quinn-peer: --config: {e}");
            return ExitCode::from(2);
        }
    };
    let r = if a.role == Role::Server { server(&a, shared) } else { client(&a, shared) };
    match r {
        Ok(report) => {
            println!("{report}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("quinn-peer {}: {e}", name(a.role));
            ExitCode::FAILURE
        }
    }
}
