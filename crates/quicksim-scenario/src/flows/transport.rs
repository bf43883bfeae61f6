//! A flow over a transport (QUIC, TCP, ...): the two endpoints of one connection, the
//! application on the client, and how the run loop drives them. Generic over the transport, so a
//! new one brings only its [`Transport`] implementation (`flows/<name>.rs`) and a line in
//! `flows::transports!`; the code here is monomorphised per transport (no dynamic calls).

use super::{Ctx, FlowSpec, Registered};
use crate::apps::{App, AppKind};
use crate::event::{push_flow_event, Ev};
use crate::output::{ConnCounters, ConnSample, TransportEvent};
use crate::payload::{Contents, Payload};
use crate::schema::StopMode;
use quicksim_engine::compact::Opt;
use quicksim_engine::{Rng, SimTime};
use quicksim_net::Ecn;
use quicksim_transport::{AppEvent, EcnCodepoint, EcnState, WirePacket};
use serde::{Deserialize, Serialize};

/// The addresses of a connection's paths after its first: (source, destination) as written,
/// None standing for the flow's own `src` / `dst`.
pub(crate) type ExtraPaths = Vec<(Option<String>, Option<String>)>;

/// What the run loop needs from a transport beyond [`quicksim_transport::Endpoint`]: how to make a connection's two
/// ends, its totals for `summary.json`, and (opt-in) a compact encoding for resting flows.
pub(crate) trait Transport: Registered {
    /// The flow kind in scenario files and outputs (`kind = "quic"`), also the name of its
    /// settings tables (`[quic]`, a flow's `quic = {..}`).
    const KIND: &'static str;
    /// The transport's name in messages ("QUIC", "TCP").
    const NAME: &'static str;
    /// The settings both ends are made from, shared with other flows of equal settings.
    type Shared: Clone + 'static;
    /// The transport's settings: its tables deserialize into this type, `scenario.json` writes
    /// it back, and the JSON Schema and the scenario reference describe its fields (their doc
    /// comments). Each setting is defined once, there.
    type Settings: Serialize + serde::de::DeserializeOwned + Default + schemars::JsonSchema;
    /// Keys of the tables the transport reads itself rather than through `Settings` (`cc`).
    const EXTRA_KEYS: &'static [super::settings::ExtraKey] = &[];
    /// Settings whose default depends on the path (the MTU): `scenario.json` leaves them out
    /// unless set, so a changed path changes them.
    const PATH_DEPENDENT: &'static [&'static str] = &[];
    /// Whether `scenario.json` writes the `[kind]` table with every default when the scenario
    /// has a flow of the kind.
    const WRITE_DEFAULTS: bool = true;
    /// Whether a flow may spread its data over several streams (`streams`).
    const MULTI_STREAM: bool = true;
    /// Whether the configuration depends only on the settings table and the path MTU, so that
    /// flows with the same own table on paths of the same MTU share the one made for the first
    /// (a transport whose configuration draws from the flow's streams, as quinn's TLS, must not).
    const SHARED_BY_SETTINGS: bool = false;
    /// Whether `Endpoint::close` delivers the data already written before the connection
    /// closes (TCP's FIN follows the data). If not (QUIC closes at once), a flow stopping with
    /// `stop_mode = "write"` waits until everything written is acknowledged, then closes.
    const CLOSE_DELIVERS: bool = false;
    /// The flow's configuration from its merged settings table (errors at `t.at(key)`).
    fn configure(
        t: &super::settings::SettingsTable,
        cx: &mut super::settings::ConfigureCx,
    ) -> Result<Self::Shared, crate::ScenarioError>;
    /// The connection id length a capture writes into this transport's headers (QUIC's
    /// "rfc9000" profile); None: the capture's own default.
    fn capture_dcid_len(_cfg: &Self::Shared) -> Option<u8> {
        None
    }
    /// The client (index 0) and the server (index 1) of a new connection at `now`; `cc_rng`
    /// holds each end's congestion-controller stream (a stack with its own controllers, as
    /// quinn, ignores it).
    fn pair(cfg: &Self::Shared, now: SimTime, cc_rng: [Rng; 2]) -> [Self; 2];
    /// The transport's own block of the flow's totals (`summary.json` `flows.<name>.<KIND>`).
    fn totals(ends: &[Self; 2], close_error: &Option<String>) -> serde_json::Value;
    /// The two ends of a connection whose events a sink traces (a qlog): by default `pair` with
    /// `Endpoint::set_tracing` on both; a stack that must know from the start overrides it.
    fn pair_traced(cfg: &Self::Shared, now: SimTime, cc_rng: [Rng; 2]) -> [Self; 2] {
        let mut ends = Self::pair(cfg, now, cc_rng);
        ends.iter_mut().for_each(Self::set_tracing);
        ends
    }
    /// The TLS secrets log of a connection made from `cfg`, for a packet capture (a stack that
    /// encrypts for real). Default: none.
    fn tls_keylog(_cfg: &Self::Shared) -> Option<std::sync::Arc<quicksim_quinn::TlsKeyLog>> {
        None
    }
    /// The path a packet travels (its index among the flow's paths: 0 is the flow's own `src`
    /// to `dst`, the others `extra_paths`). Default: 0.
    #[inline(always)]
    fn packet_path(_p: &Self::Packet) -> u8 {
        0
    }
    /// The addresses of the connection's further paths (multipath, migration). Default: none.
    fn extra_paths(_cfg: &Self::Shared) -> ExtraPaths {
        Vec::new()
    }
    /// Each path's state of a multipath connection, (path, sample, counters) as the `conn`
    /// table's per-path rows show them (the data sender's state, the receiver's ACK and CE
    /// counts of the same path). Default: none (one path).
    fn path_samples(_ends: &[Self; 2]) -> Vec<(u8, ConnSample, ConnCounters)> {
        Vec::new()
    }
    /// The packet as a capture sees it (`Contents`); the default: only its size is known.
    fn contents(_p: &Self::Packet) -> Contents<'_> {
        Contents::Opaque
    }
    /// Appends the endpoint's whole state to `out` for a resting flow; false if it cannot be
    /// encoded (the flow then stays live). The default: never.
    fn park(&self, _out: &mut Vec<u8>) -> bool {
        false
    }
    /// The endpoint encoded at the start of `bytes` by `park`, and the bytes after it.
    fn unpark<'a>(_bytes: &'a [u8], _cfg: &Self::Shared) -> Result<(Self, &'a [u8]), String> {
        Err(format!("{} endpoints are never parked", Self::KIND))
    }
}

/// A transport flow's state while it is live.
pub(crate) struct TransportFlow<E: Transport> {
    /// The part that is the same for every transport, serialized when the flow rests.
    pub common: FlowCommon,
    /// Client and server; None before the flow starts.
    pub ends: Option<[E; 2]>,
    /// Shared by the flow's two endpoints and by flows with the same settings.
    pub cfg: E::Shared,
}

#[derive(Serialize, Deserialize)]
pub(crate) struct FlowCommon {
    pub app: App,
    /// The earliest timer event of each endpoint in the queue (`Opt`: 8 B instead of 16).
    pub timers: [Opt<SimTime>; 2],
    /// The last congestion-state sample recorded; boxed (8 B instead of 56): only flows whose
    /// state is recorded have one.
    pub last: Option<Box<ConnSample>>,
    pub close_error: Option<String>,
    /// Stopped with `stop_mode = "write"` over a transport whose close does not deliver
    /// (`Transport::CLOSE_DELIVERS`): the client closes once its send queue is empty (every
    /// byte written acknowledged).
    pub draining: bool,
}

impl<E: Transport> TransportFlow<E>
where
    E::Packet: 'static,
{
    pub(crate) fn new(app: App, cfg: E::Shared) -> Self {
        TransportFlow {
            common: FlowCommon {
                app,
                timers: [Opt::NONE, Opt::NONE],
                last: None,
                close_error: None,
                draining: false,
            },
            ends: None,
            cfg,
        }
    }

    /// Nothing is going on: no connection yet, or neither endpoint has bytes in flight, data to
    /// send or an event for the application. Decides only when a flow is stored encoded (a
    /// question of speed and memory, not of results: encoding loses nothing). A timer event may
    /// still be pending: after a message, the sender's PTO event outlives the ACK that made it
    /// moot and wakes the flow for nothing. Waiting for such events before resting halved the
    /// wake-ups (many-flows' run loop -10 % instructions) but kept ~750 more flows live at the
    /// end of many-flows' start (2 400 instead of 1 600: +80 B per idle flow in the peak);
    /// memory won (docs/performance/).
    #[inline]
    pub(crate) fn quiet(&self) -> bool {
        self.ends.as_ref().is_none_or(|c| c[0].is_quiet() && c[1].is_quiet())
    }

    /// The flow's connect time, before its start: a new connection, whose handshake runs while
    /// the application has nothing to send yet (INET's `connectTime`).
    pub(crate) fn connect(&mut self, cx: &mut Ctx, now: SimTime, f: u32, spec: &FlowSpec) {
        self.ends = Some(self.pair(cx, now, f));
        self.pump(cx, now, f, spec, 0);
        self.pump(cx, now, f, spec, 1);
    }

    /// The flow starts: a new connection unless it was opened at an earlier connect time, and
    /// the application starts writing.
    pub(crate) fn start(&mut self, cx: &mut Ctx, now: SimTime, f: u32, spec: &FlowSpec) {
        if self.ends.is_none() {
            self.ends = Some(self.pair(cx, now, f));
        }
        self.common.app.active = true;
        if self.common.app.message.is_some() {
            push_flow_event(&mut cx.q, now, Ev::AppMessage(f));
        }
        self.refill(cx, now, f);
        self.pump(cx, now, f, spec, 0);
        self.pump(cx, now, f, spec, 1);
    }

    /// A new connection's two ends, traced if a sink wants it. Each end's controller gets a
    /// stream of its own, split from the flow's `"cc"` stream (client first): made here, once
    /// per connection, so a flow holds no stream before it.
    fn pair(&self, cx: &Ctx, now: SimTime, f: u32) -> [E; 2] {
        let mut flow_rng = cx.rng.stream("cc", u64::from(f));
        let cc_rng = [flow_rng.split(), flow_rng.split()];
        if cx.out.rec.tracing && cx.out.rec.traces(f) {
            E::pair_traced(&self.cfg, now, cc_rng)
        } else {
            E::pair(&self.cfg, now, cc_rng)
        }
    }

    /// The flow's stop time, by `spec.stop_mode`: "send" stops sending at once
    /// (`Endpoint::abort`: TCP's RST; QUIC's CONNECTION_CLOSE, as INET's generator closes, unsent
    /// and unacknowledged data discarded); "write" stops the application, and the data written
    /// is still delivered (TCP: `close`, its FIN follows the data; QUIC: closes once everything
    /// written is acknowledged, see `pump`).
    pub(crate) fn stop(&mut self, cx: &mut Ctx, now: SimTime, f: u32, spec: &FlowSpec) {
        self.common.app.active = false;
        if let Some(c) = &mut self.ends {
            match spec.stop_mode {
                StopMode::Send => c[0].abort(now),
                StopMode::Write if E::CLOSE_DELIVERS => c[0].close(now),
                StopMode::Write => self.common.draining = true,
            }
        }
        self.pump(cx, now, f, spec, 0);
    }

    /// A packet for endpoint `side` arrived with ECN field `ecn`; it is in slot `slot` of the
    /// transport's pool, which it leaves now.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn on_packet(
        &mut self,
        cx: &mut Ctx,
        now: SimTime,
        f: u32,
        spec: &FlowSpec,
        side: u8,
        slot: u32,
        ecn: Ecn,
    ) {
        let pool = E::pool(&mut cx.out.pools);
        if let Some(c) = &mut self.ends {
            let p = &mut pool.slots[slot as usize];
            p.set_ecn(transport_ecn(ecn));
            if cx.out.rec.tracing {
                cx.out.rec.transport_event(
                    now,
                    f,
                    side,
                    TransportEvent::PacketReceived { bytes: p.size_bytes(), packet: p },
                );
            }
            c[side as usize].handle_packet(now, p);
        }
        pool.release(slot);
        self.pump(cx, now, f, spec, side);
    }

    /// Endpoint `side`'s timer event: stale events (the endpoint's timer moved since) are
    /// tolerated and only pump.
    #[inline]
    pub(crate) fn on_timer(&mut self, cx: &mut Ctx, now: SimTime, f: u32, spec: &FlowSpec, side: u8) {
        if self.common.timers[side as usize].get() == Some(now) {
            self.common.timers[side as usize] = Opt::NONE;
        }
        if let Some(c) = &mut self.ends {
            let conn = &mut c[side as usize];
            if conn.poll_timeout().is_some_and(|t| t <= now) {
                conn.handle_timeout(now);
            }
        }
        self.pump(cx, now, f, spec, side);
    }

    /// The message application's next message.
    pub(crate) fn on_message(&mut self, cx: &mut Ctx, now: SimTime, f: u32, spec: &FlowSpec) {
        let conn = self.ends.as_mut().map(|c| &mut c[0]);
        let Some((gap, written)) = self.common.app.message(now, conn) else { return };
        push_flow_event(&mut cx.q, now + gap, Ev::AppMessage(f));
        if let Some(acc) = written {
            cx.out.rec.app_sent(now, f, acc);
        }
        self.pump(cx, now, f, spec, 0);
    }

    fn refill(&mut self, cx: &mut Ctx, now: SimTime, f: u32) {
        let Some(c) = &mut self.ends else { return };
        let total = self.common.app.refill(now, &mut c[0]);
        if total > 0 {
            cx.out.rec.app_sent(now, f, total);
        }
    }

    /// Move everything endpoint `side` has to say: packets onto the network, events to the
    /// application, and its next wake-up into the event queue; then sample the sender's state
    /// for the `conn` table if it is recorded.
    fn pump(&mut self, cx: &mut Ctx, now: SimTime, f: u32, spec: &FlowSpec, side: u8) {
        let Some(c) = &mut self.ends else { return };
        if self.common.draining && side == 0 && c[0].metrics().send_queue_bytes == 0 {
            // Stopped writing, and everything written is acknowledged: close.
            self.common.draining = false;
            if !c[0].is_closed() {
                c[0].close(now);
            }
        }
        let (from, to) = if side == 0 { (spec.src, spec.dst) } else { (spec.dst, spec.src) };
        // `poll_transmit` returning None leaves the endpoint at a fixed point for this `now`
        // (calling it again returns None again), and handing out events changes nothing in the
        // endpoint: only new application data (a refill) can make it send more, so only a
        // refill repeats the loop.
        if cx.out.rec.tracing {
            // Losses and parameters the last input brought, before the packets they cause.
            while let Some(t) = c[side as usize].poll_trace() {
                cx.out.rec.transport_event(now, f, side, TransportEvent::Trace(&t));
            }
            while let Some(t) = c[side as usize].poll_qlog() {
                cx.out.rec.transport_event(now, f, side, TransportEvent::Qlog(&t));
            }
        }
        loop {
            loop {
                // A transport that writes its packets in place (TCP) writes over a freed pool
                // slot's old one where there is a slot: the packet is not moved twice.
                let ep = &mut c[side as usize];
                let pool = E::pool(&mut cx.out.pools);
                let vacant = if E::TRANSMIT_IN_PLACE { pool.vacant() } else { None };
                let slot = match vacant {
                    Some(s) if ep.poll_transmit_into(now, &mut pool.slots[s as usize]) => s,
                    Some(s) => {
                        pool.release(s);
                        break;
                    }
                    None => match ep.poll_transmit(now) {
                        Some(pkt) => pool.put(pkt),
                        None => break,
                    },
                };
                let pkt = &pool.slots[slot as usize];
                if cx.out.rec.tracing {
                    cx.out.rec.transport_event(
                        now,
                        f,
                        side,
                        TransportEvent::PacketSent { bytes: pkt.size_bytes(), packet: pkt },
                    );
                }
                let ip = pkt.size_bytes() + E::ENCAP_BYTES + IPV4_BYTES;
                let ecn = net_ecn(pkt.ecn());
                let (from, to) = match E::packet_path(pkt) {
                    0 => (from, to),
                    p => cx.path_ends(f, p, side),
                };
                cx.send_packet(now, from, to, f, ip, Payload::transport(E::TAG, side == 0, slot), ecn);
            }
            let mut refill = false;
            while let Some(ev) = c[side as usize].poll_event() {
                if cx.out.rec.tracing {
                    cx.out.rec.transport_event(now, f, side, TransportEvent::App(&ev));
                }
                match ev {
                    AppEvent::Established | AppEvent::SendQueueLow => refill |= side == 0,
                    AppEvent::StreamData { stream_id, len, .. } => {
                        self.common.app.delivered(now, len);
                        cx.out.rec.app_delivered(now, f, Some(stream_id), len);
                    }
                    AppEvent::Closed { error } => {
                        if error.is_some() && self.common.close_error.is_none() {
                            self.common.close_error = error;
                        }
                    }
                }
            }
            if !refill {
                break;
            }
            let total = self.common.app.refill(now, &mut c[0]);
            if total > 0 {
                cx.out.rec.app_sent(now, f, total);
            }
        }
        if let Some(t) = c[side as usize].poll_timeout() {
            let t = t.max(now);
            let s = &mut self.common.timers[side as usize];
            if s.get().is_none_or(|cur| t < cur) {
                *s = Opt::some(t);
                push_flow_event(&mut cx.q, t, Ev::FlowTimer(f, side));
            }
        }
        // Sampling costs a metrics() call per pump; skip it for flows whose state is not recorded.
        if side == 0 && cx.out.rec.conn_selected(f) {
            let m = c[0].metrics();
            let sample = ConnSample {
                cwnd: m.cwnd_bytes,
                ssthresh: m.ssthresh_bytes,
                inflight: m.bytes_in_flight,
                srtt: m.smoothed_rtt,
                latest_rtt: m.latest_rtt,
                min_rtt: m.min_rtt,
                rttvar: m.rttvar,
                rto: m.rto,
            };
            let last = &mut self.common.last;
            if last.as_deref() != Some(&sample) {
                match last {
                    Some(b) => **b = sample,
                    None => *last = Some(Box::new(sample)),
                }
                if cx.out.rec.tracing {
                    cx.out.rec.transport_event(now, f, 0, TransportEvent::MetricsUpdated(&m));
                }
                let (s, r) = (c[0].counters(), c[1].counters());
                let counters = ConnCounters {
                    packets_sent: s.packets_sent,
                    packets_acked: s.packets_acked,
                    packets_lost: s.packets_lost,
                    retransmitted_bytes: s.retransmitted_bytes,
                    timeouts: s.timeouts,
                    ack_frames_sent: r.acks_sent,
                    ce_marks: r.ce_received,
                    ecn_events: s.ecn_congestion_events,
                };
                cx.out.rec.conn_sample(now, f, &sample, &counters);
            }
            if cx.out.rec.tables.paths.is_some() {
                for (p, s, counters) in E::path_samples(c) {
                    cx.out.rec.path_sample(now, f, p, &s, &counters);
                }
            }
        }
    }

    /// The end of the run: the qlog records a stack wrote itself since its last pump
    /// (`Endpoint::poll_qlog`) go to the sinks, so its files end where the run does.
    pub(crate) fn flush_qlog(&mut self, cx: &mut Ctx, now: SimTime, f: u32) {
        let Some(c) = &mut self.ends else { return };
        if !cx.out.rec.tracing {
            return;
        }
        for (side, e) in c.iter_mut().enumerate() {
            while let Some(t) = e.poll_qlog() {
                cx.out.rec.transport_event(now, f, side as u8, TransportEvent::Qlog(&t));
            }
        }
    }

    /// The flow's totals beyond the common ones: completion time and the transport's block.
    pub(crate) fn totals(&self, spec: &FlowSpec, o: &mut serde_json::Value) {
        if let Some(c) = self.common.app.completion {
            o["completion_time_s"] = serde_json::json!((c - spec.start).as_secs_f64());
        }
        if let Some(c) = &self.ends {
            o[E::KIND] = E::totals(c, &self.common.close_error);
            let (s, r) = (c[0].counters(), c[1].counters());
            // Only for flows that use ECN, so that the totals of every other flow stay as they were.
            if s.ecn_state != EcnState::Off || r.ecn_state != EcnState::Off {
                o[E::KIND]["ecn"] = serde_json::json!({
                    "state": s.ecn_state.as_str(),
                    "receiver_state": r.ecn_state.as_str(),
                    "ce_marks": r.ce_received,
                    "ecn_congestion_events": s.ecn_congestion_events,
                    "receiver_ce_marks": s.ce_received,
                });
            }
        }
        if self.common.app.kind == AppKind::Bulk && self.common.app.completion.is_none() {
            o["unfinished"] = serde_json::json!(self.unfinished(spec));
        }
    }

    /// Why a bulk transfer did not deliver all its bytes.
    fn unfinished(&self, spec: &FlowSpec) -> String {
        let app = &self.common.app;
        let got = format!("{} of {} B delivered", app.delivered, app.bulk_total);
        let Some(c) = &self.ends else { return format!("never started ({got})") };
        if let Some(e) = &self.common.close_error {
            return format!("connection closed: {e} ({got})");
        }
        if !c[0].is_established() && !c[0].is_closed() {
            return format!("connection never established: the handshake did not complete ({got})");
        }
        // A stop closes the connection too (at once with `stop_mode = "send"`): say "stopped".
        if app.active && (c[0].is_closed() || c[1].is_closed()) {
            return format!("connection closed before the end ({got})");
        }
        if app.active {
            format!("still sending at the end of the run ({got})")
        } else {
            format!("stopped at {} while still sending ({got})", spec.stop)
        }
    }
}

/// The network's ECN field for the codepoint a transport set (the same two bits).
#[inline]
fn net_ecn(e: EcnCodepoint) -> Ecn {
    match e {
        EcnCodepoint::NotEct => Ecn::NotEct,
        EcnCodepoint::Ect1 => Ecn::Ect1,
        EcnCodepoint::Ect0 => Ecn::Ect0,
        EcnCodepoint::Ce => Ecn::Ce,
    }
}

/// The transport's codepoint for the ECN field a packet arrived with.
#[inline]
fn transport_ecn(e: Ecn) -> EcnCodepoint {
    match e {
        Ecn::NotEct => EcnCodepoint::NotEct,
        Ecn::Ect1 => EcnCodepoint::Ect1,
        Ecn::Ect0 => EcnCodepoint::Ect0,
        Ecn::Ce => EcnCodepoint::Ce,
    }
}

/// IPv4 header bytes in front of every transport packet.
const IPV4_BYTES: u64 = quicksim_net::IPV4_HEADER as u64;

/// A transport flow at rest, encoded: its common state and both endpoints in a few hundred
/// bytes (postcard varints) instead of ~2 kB of live structures with their heap parts.
/// Many-flows scenarios (thousands of connections that send now and then) are bounded by this:
/// an idle flow costs ~1 kB instead of ~3 kB. A flow is stored like this whenever an event
/// leaves it quiet ([`TransportFlow::quiet`]) and its transport can encode it
/// ([`Transport::park`]), and decoded by its next event; it then continues exactly as if it had
/// never been encoded (tested bit for bit).
pub(crate) struct Parked<E: Transport> {
    pub(crate) cfg: E::Shared,
    /// The `FlowCommon`, a byte saying whether the endpoints exist, then the client's and the
    /// server's encodings.
    bytes: Box<[u8]>,
}

impl<E: Transport> Parked<E> {
    /// Encodes `t` through `scratch` (reused, so that the only allocation is the exact-size
    /// result: growing a new buffer by doubling left ~1 kB of freed blocks per flow behind).
    /// None if the transport cannot encode it.
    pub(crate) fn sleep(t: &TransportFlow<E>, scratch: &mut Vec<u8>) -> Option<Parked<E>> {
        scratch.clear();
        quicksim_engine::compact::encode_into(&t.common, scratch);
        match &t.ends {
            None => scratch.push(0),
            Some([c, s]) => {
                scratch.push(1);
                if !(c.park(scratch) && s.park(scratch)) {
                    return None;
                }
            }
        }
        Some(Parked { cfg: t.cfg.clone(), bytes: Box::from(&scratch[..]) })
    }

    pub(crate) fn wake(&self) -> Box<TransportFlow<E>> {
        // The bytes were written by `sleep` in this process: a failure is a bug, not an input.
        let bug = |e: String| -> ! { panic!("a resting flow's encoded state does not decode: {e}") };
        let (common, rest): (FlowCommon, &[u8]) =
            postcard::take_from_bytes(&self.bytes).unwrap_or_else(|e| bug(e.to_string()));
        let mut t = TransportFlow { common, ends: None, cfg: self.cfg.clone() };
        if rest.first() == Some(&1) {
            let (c, rest) = E::unpark(&rest[1..], &self.cfg).unwrap_or_else(|e| bug(e));
            let (s, rest) = E::unpark(rest, &self.cfg).unwrap_or_else(|e| bug(e));
            debug_assert!(rest.is_empty());
            t.ends = Some([c, s]);
        }
        Box::new(t)
    }
}
