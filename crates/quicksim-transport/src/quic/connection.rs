//! The connection: state, the public API, packet input and timers. Packet assembly
//! (`poll_transmit`) lives in `send.rs`, ACK and loss consequences in `acked.rs`, the rarely
//! needed state in `rare.rs`, and the compact encoding of idle connections in `park.rs`.

use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::sync::Arc;

use crate::endpoint::TraceEvent;

use quicksim_cc::{CongestionController, InitCtx};
use quicksim_engine::{Rng, SimDuration, SimTime, PS_PER_US};

use super::ack::{AckManager, AckPolicy, Arrival};
use super::ack_frequency::AckFreqSender;
use super::config::placeholder_config;
use super::flow_control::{ReceiveWindow, SendCredit, WindowRule};
use super::handshake::Handshake;
use super::niche::Opt;
use super::packet::{
    AckFrequencyFrame, Frame, QuicPacket, SpaceId, TransportParams, FLOW_CONTROL_ERROR, NO_ERROR,
};
use super::per_space::PerSpace;
use super::rare::{push_event, PendingStreamControl, RareBox};
use super::recovery::{Recovery, TimeoutAction, TimerCtx, GRANULARITY, WINDOW_RULES};
use super::stats::{count, Stats, Sum};
use super::streams::{RecvStream, SendStream, Streams};
use super::{ConnEvent, ConnMetrics, ConnStats, QuicConfig, Role};

/// Lifecycle (RFC 9000 §10.2). Closing: we sent CONNECTION_CLOSE; Draining: the peer did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(super) enum State {
    Handshaking,
    Established,
    Closing { until: SimTime },
    Draining { until: SimTime },
    Closed,
}

/// Control frames waiting for the next 1-RTT packet (values are taken at build time, so a
/// regenerated MAX_* frame always carries the current limit).
/// The per-stream and blocked frames are in [`Rare`](super::rare::Rare).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(super) struct PendingControl {
    pub handshake_done: bool,
    pub max_data: bool,
}

/// The peer's transport parameters. Nearly always the same as ours (both ends of a flow share
/// a configuration): then only that fact is kept, 16 B instead of 48 B per endpoint.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) enum PeerParams {
    /// Not received yet.
    Unknown,
    /// Equal to our `cfg.local_params()`.
    Local,
    Other(Box<TransportParams>),
}

impl PeerParams {
    #[inline]
    pub fn resolve(&self, cfg: &QuicConfig) -> Option<TransportParams> {
        match self {
            PeerParams::Unknown => None,
            PeerParams::Local => Some(cfg.local_params()),
            PeerParams::Other(p) => Some(**p),
        }
    }
}

/// One QUIC connection endpoint (sans-IO; see the crate docs).
#[derive(Debug, Serialize, Deserialize)]
pub struct Connection {
    pub(super) role: Role,
    /// Shared, read-only: the endpoints of a flow (and flows with the same settings) hold one
    /// copy between them. Not part of the encoded state (`Connection::encode`): `decode` takes it.
    #[serde(skip, default = "placeholder_config")]
    pub(super) cfg: Arc<QuicConfig>,
    pub(super) state: State,
    pub(super) hs: Handshake,
    pub(super) peer: PeerParams,
    pub(super) next_pn: [u64; 3],
    /// ACK state per space; the Initial and Handshake ones are freed with their keys.
    pub(super) acks: PerSpace<AckManager>,
    pub(super) recovery: Recovery,
    pub(super) streams: Streams,
    /// Connection credit the peer grants us (MAX_DATA).
    pub(super) conn_send: SendCredit,
    /// Connection credit we grant the peer.
    pub(super) conn_recv: ReceiveWindow,
    pub(super) pending: PendingControl,
    /// PTO probes owed per space.
    pub(super) probes: [u8; 3],
    /// INET `appLimited`: the last send attempt found nothing to send (RFC 9002 §7.8).
    pub(super) app_limited: bool,
    /// INET `allowOnePacket` (RFC 9002 §7.3.2).
    pub(super) allow_one: bool,
    /// Pacing: earliest time of the next in-flight packet, and whether sending waits for it.
    pub(super) next_send_time: SimTime,
    pub(super) pacing_blocked: bool,
    pub(super) queued_bytes: u64,
    pub(super) low_water_armed: bool,
    pub(super) last_activity: SimTime,
    /// Latest time any input gave us; `poll_timeout` never returns an earlier time (a PTO
    /// recomputed after an RTT drop can lie in the past, RFC 9002 A.8: it fires at once).
    pub(super) last_now: SimTime,
    /// The oldest event for the application (the others are in `rare.events`).
    pub(super) event: Option<ConnEvent>,
    pub(super) stats: Stats,
    /// Our ACK_FREQUENCY requests to the peer (draft-ietf-quic-ack-frequency).
    /// Boxed, and only with an `ack_policy` that sends frames (~5 % of an idle connection).
    pub(super) ack_freq_tx: Option<Box<AckFreqSender>>,
    pub(super) rare: RareBox,
}

/// How the connection-level receive window grows (MAX_DATA).
fn conn_window_rule(cfg: &QuicConfig) -> WindowRule {
    WindowRule {
        window: cfg.initial_max_data,
        threshold_fraction: cfg.max_data_threshold,
        round: cfg.round_consumed_data,
    }
}

/// How a stream's receive window grows (MAX_STREAM_DATA).
fn stream_window_rule(cfg: &QuicConfig) -> WindowRule {
    WindowRule {
        window: cfg.initial_max_stream_data,
        threshold_fraction: cfg.max_stream_data_threshold,
        round: cfg.round_consumed_data,
    }
}

/// Transport error code PROTOCOL_VIOLATION (RFC 9000 §20.1).
const PROTOCOL_VIOLATION: u64 = 0x0a;

impl Connection {
    /// A new endpoint. The client starts the handshake (or, with `handshake = false`, both start
    /// established). Errors name the invalid configuration field. `cfg` may be a `QuicConfig` or
    /// an `Arc` of one shared with other connections. `cc_rng` is the congestion controller's
    /// random stream (`InitCtx::rng`; a controller that draws keeps it in its own state).
    pub fn new(
        role: Role,
        cfg: impl Into<Arc<QuicConfig>>,
        now: SimTime,
        cc_rng: Rng,
    ) -> Result<Connection, String> {
        let cfg: Arc<QuicConfig> = cfg.into();
        cfg.validate()?;
        // A configured initial window replaces RFC 9002's; the controller reads it only here.
        let rules = cfg.initial_window.map_or(WINDOW_RULES, |n| WINDOW_RULES.with_initial_segments(n));
        let cc = cfg.cc.build(&InitCtx { mds: cfg.max_packet_size, window: &rules, rng: &cc_rng });
        let peer =
            if cfg.handshake { None } else { Some(cfg.peer_params.unwrap_or_else(|| cfg.local_params())) };
        let peer_mad = peer.map_or(cfg.max_ack_delay, |p| p.max_ack_delay);
        let mut recovery = Recovery::new(cc, cfg.initial_rtt, cfg.max_packet_size, peer_mad);
        // A controller that counts CE marks itself (DCTCP, Prague) needs ECN: it is on for it
        // whatever `ecn` says (as Linux's TCP_CONG_NEEDS_ECN).
        let scalable = matches!(recovery.cc.ecn_response(), quicksim_cc::EcnResponse::Scalable { .. });
        if cfg.ecn || scalable {
            recovery.enable_ecn();
        }
        let mk_ack = || AckManager::new(cfg.max_ack_ranges);
        let mut c = Connection {
            role,
            state: State::Handshaking,
            hs: if cfg.handshake { Handshake::start() } else { Handshake::established() },
            peer: PeerParams::Unknown,
            next_pn: [0; 3],
            acks: PerSpace::new(mk_ack),
            recovery,
            streams: Streams::new(cfg.scheduler),
            conn_send: SendCredit::new(0),
            conn_recv: ReceiveWindow::new(&conn_window_rule(&cfg)),
            pending: PendingControl::default(),
            probes: [0; 3],
            app_limited: true,
            allow_one: false,
            next_send_time: now,
            pacing_blocked: false,
            queued_bytes: 0,
            low_water_armed: false,
            last_activity: now,
            last_now: now,
            event: None,
            stats: Stats::default(),
            ack_freq_tx: (cfg.ack_policy != super::config::AckPolicyKind::Receiver).then(Box::default),
            rare: RareBox::default(),
            cfg,
        };
        if c.cfg.multipath.is_some() {
            let mut r = cc_rng;
            c.init_paths(now, r.split());
        }
        if let Some(p) = peer {
            c.apply_peer_params(p);
            c.discard_space(SpaceId::Initial, now);
            c.discard_space(SpaceId::Handshake, now);
            c.set_established(now);
        } else if role == Role::Client {
            let params = c.cfg.local_params();
            let size = c.cfg.crypto_sizes[0];
            if let Some(cs) = c.hs.crypto(SpaceId::Initial) {
                cs.queue(size, Some(params));
            }
        }
        Ok(c)
    }

    /// Processes one received QUIC packet.
    pub fn handle_packet(&mut self, now: SimTime, pkt: &QuicPacket) {
        self.advance(now);
        if !matches!(self.state, State::Handshaking | State::Established) {
            // Closing/draining: RFC 9000 §10.2 allows ignoring everything.
            return;
        }
        let multipath = pkt.path != 0 || self.is_multipath();
        if multipath && !self.enter_path(now, pkt) {
            self.rare.get_mut().stats.packets_dropped += 1;
            return;
        }
        let space = pkt.space;
        let si = space.index();
        if !self.hs.keys[si] || self.recovery.is_discarded(space) {
            self.rare.get_mut().stats.packets_dropped += 1;
            return;
        }
        let arrival = self.acks[space].classify(pkt.pn);
        if arrival == Arrival::Duplicate {
            self.rare.get_mut().stats.packets_dropped += 1;
            return;
        }
        count(&mut self.stats, &mut self.rare, Sum::PacketsReceived, 1);
        count(&mut self.stats, &mut self.rare, Sum::BytesReceived, pkt.size_bytes());
        if let Some(e) = self.recovery.ecn.as_deref_mut() {
            e.count_received(space, pkt.ecn);
        }
        self.last_activity = now;
        if self.role == Role::Client && space == SpaceId::Initial {
            self.hs.server_cid_known = true;
        }
        let ack_eliciting = pkt.is_ack_eliciting();
        let mut queue_freed = false;
        let mut immediate_ack = false;
        for frame in &pkt.frames {
            match *frame {
                // With several paths an ACK frame is path 0's (draft-ietf-quic-multipath-21 §4.1).
                Frame::Ack(ref a) if pkt.path != 0 => {
                    queue_freed |= self.on_path_ack(now, 0, pkt.path, a, None)
                }
                Frame::AckEcn(ref a) if pkt.path != 0 => {
                    queue_freed |= self.on_path_ack(now, 0, pkt.path, &a.ack, Some(&a.counts))
                }
                Frame::Ack(ref a) => queue_freed |= self.on_ack_frame(now, space, a, None),
                Frame::AckEcn(ref a) => queue_freed |= self.on_ack_frame(now, space, &a.ack, Some(&a.counts)),
                Frame::PathAck(ref a) => {
                    if let Ok(of) = u8::try_from(a.path) {
                        queue_freed |= self.on_path_ack(now, of, pkt.path, &a.ack, a.ecn.as_ref());
                    }
                }
                Frame::PathChallenge(t) => self.on_path_challenge(pkt.path, t),
                Frame::PathResponse(t) => self.on_path_response(now, pkt.path, t),
                Frame::PathAbandon { path, .. } => self.on_path_abandon(now, path),
                Frame::PathStatus { path, available, .. } => self.on_path_status(path, available),
                Frame::Stream(f) => self.on_stream_frame(now, f.id, f.offset, f.len),
                Frame::Crypto(ref c) => self.on_crypto_frame(now, space, c.params.as_deref().copied()),
                Frame::MaxData(m) => {
                    self.conn_send.on_max(m);
                }
                Frame::MaxStreamData { id, max } => {
                    if let Some(s) = self.streams.send.get_mut(&id) {
                        s.max_stream_data = s.max_stream_data.max(max);
                    }
                }
                Frame::HandshakeDone => {
                    if self.role == Role::Client && !self.hs.confirmed {
                        self.hs.confirmed = true;
                        self.discard_space(SpaceId::Handshake, now);
                    }
                }
                Frame::ConnectionClose { error_code } => {
                    self.enter_draining(now, error_code);
                    return;
                }
                Frame::AckFrequency(f) => self.on_ack_frequency(now, f),
                // draft §5: only an endpoint that advertised min_ack_delay acts on it.
                Frame::ImmediateAck if self.cfg.min_ack_delay.is_some() => {
                    immediate_ack = true;
                    self.rare.get_mut().stats.immediate_acks_honoured += 1;
                }
                Frame::ImmediateAck => {}
                Frame::Padding(_) | Frame::Ping | Frame::DataBlocked(_) | Frame::StreamDataBlocked { .. } => {
                }
            }
            if !matches!(self.state, State::Handshaking | State::Established) {
                return; // closed by a flow-control violation
            }
        }
        if multipath {
            self.select_path(pkt.path);
        }
        if arrival == Arrival::New && !self.recovery.is_discarded(space) {
            let mut policy = AckPolicy {
                ack_ratio: self.cfg.ack_ratio,
                max_ack_delay: self.cfg.max_ack_delay,
                always_immediate: space != SpaceId::Data,
                reordering_threshold: 1,
            };
            if let Some(f) = self.rare.get().and_then(|r| r.ack_freq_rx.as_ref()) {
                // draft §4: ACK after more than Ack-Eliciting Threshold packets.
                policy.ack_ratio = f.ack_eliciting_threshold.saturating_add(1);
                policy.max_ack_delay = SimDuration(f.request_max_ack_delay_us.saturating_mul(PS_PER_US));
                policy.reordering_threshold = f.reordering_threshold;
            }
            let ack_now = (self.cfg.ibit && pkt.i_bit) || immediate_ack;
            self.acks[space].on_packet(now, pkt.pn, ack_eliciting, ack_now, &policy);
        }
        // RFC 9001 §4.9.1: the server discards Initial keys on its first Handshake packet.
        if self.role == Role::Server && space == SpaceId::Handshake {
            self.discard_space(SpaceId::Initial, now);
        }
        if queue_freed {
            self.check_low_water();
        }
    }

    /// Handles an expired timer; a no-op if nothing is due.
    pub fn handle_timeout(&mut self, now: SimTime) {
        self.advance(now);
        match self.state {
            State::Closing { until } | State::Draining { until } => {
                if now >= until {
                    self.state = State::Closed;
                }
                return;
            }
            State::Closed => return,
            _ => {}
        }
        if let Some(d) = self.idle_deadline() {
            if now >= d {
                self.state = State::Closed;
                push_event(
                    &mut self.event,
                    &mut self.rare,
                    ConnEvent::Closed { error: Some("idle timeout".into()) },
                );
                return;
            }
        }
        if self.is_multipath() {
            self.paths_handle_timeout(now);
            return;
        }
        self.on_recovery_timer(now);
    }

    /// The loss-detection timer of the (selected) path: losses, or a PTO probe owed. Returns
    /// whether it was a PTO.
    pub(super) fn on_recovery_timer(&mut self, now: SimTime) -> bool {
        let ctx = self.timer_ctx();
        let Some(action) = self.recovery.on_timeout(now, ctx) else { return false };
        let pto = matches!(action, TimeoutAction::Probe { .. } | TimeoutAction::AntiDeadlock { .. });
        match action {
            TimeoutAction::Lost { space, lost, congestion, persistent_congestion } => {
                for p in lost {
                    self.on_packet_lost(space, p);
                }
                self.on_congestion(congestion, persistent_congestion);
            }
            TimeoutAction::Probe { space } => {
                self.rare.get_mut().stats.pto_count_total += 1;
                self.probes[space.index()] = 1;
                if space != SpaceId::Data {
                    // Re-send every unacknowledged handshake flight (RFC 9002 §6.2.4 allows
                    // probing with data of other spaces).
                    for c in self.hs.crypto_all() {
                        c.on_lost();
                    }
                }
            }
            TimeoutAction::AntiDeadlock { space } => {
                self.rare.get_mut().stats.pto_count_total += 1;
                self.probes[space.index()] = 1;
            }
        }
        if let Some(max) = self.cfg.max_consecutive_ptos {
            // With several paths, only when no other path can carry the connection.
            let other = self.is_multipath() && self.other_path_usable(self.mp().map_or(0, |m| m.active));
            if self.recovery.pto_count >= max && !other {
                // INET kMaxProbePackets: the connection is given up without a close frame.
                self.state = State::Closed;
                push_event(
                    &mut self.event,
                    &mut self.rare,
                    ConnEvent::Closed { error: Some(format!("no response after {max} consecutive PTOs")) },
                );
            }
        }
        pto
    }

    /// Earliest time `handle_timeout` has something to do.
    pub fn poll_timeout(&self) -> Option<SimTime> {
        match self.state {
            State::Closing { until } | State::Draining { until } => return Some(until),
            State::Closed => return None,
            _ => {}
        }
        if self.is_multipath() {
            let t = [self.paths_timeout(), self.idle_deadline()].into_iter().flatten().min();
            return t.map(|t| t.max(self.last_now));
        }
        let mut t = self.recovery.timer();
        let mut take = |x: Option<SimTime>| {
            if let Some(x) = x {
                t = Some(t.map_or(x, |y| y.min(x)));
            }
        };
        take(self.acks.data().deadline());
        if self.pacing_blocked {
            take(Some(self.next_send_time));
        }
        take(self.idle_deadline());
        t.map(|t| t.max(self.last_now))
    }

    /// Queues `len` abstract bytes on a stream; returns the bytes accepted (bounded by the
    /// send-queue space).
    pub fn stream_send(&mut self, now: SimTime, stream_id: u64, len: u64) -> u64 {
        self.enqueue(now, stream_id, len, len.min(self.send_queue_space()))
    }

    /// Queues a whole message of `len` bytes as INET's QUIC takes an application's message: all
    /// of it while the send queues are below their limit (they may then exceed it by up to one
    /// message), nothing once they reach it. Returns the bytes accepted (`len` or 0).
    pub fn stream_send_whole(&mut self, now: SimTime, stream_id: u64, len: u64) -> u64 {
        let accepted = if self.send_queue_space() > 0 { len } else { 0 };
        self.enqueue(now, stream_id, len, accepted)
    }

    /// Queues `accepted` of the `len` bytes the application offered on a stream.
    #[inline]
    fn enqueue(&mut self, now: SimTime, stream_id: u64, len: u64, accepted: u64) -> u64 {
        self.advance(now);
        if !matches!(self.state, State::Handshaking | State::Established) {
            return 0;
        }
        if accepted < len || self.queued_bytes + accepted >= self.low_water_bytes() {
            self.low_water_armed = true;
        }
        if accepted == 0 {
            return 0;
        }
        let initial = self.peer().map_or(0, |p| p.initial_max_stream_data);
        let s = self.streams.send.get_or_insert_with(stream_id, || SendStream::new(initial));
        s.unsent.insert(s.written, s.written + accepted);
        s.written += accepted;
        self.queued_bytes += accepted;
        accepted
    }

    /// Free space in the send queues (limit − unsent − unacknowledged).
    pub fn send_queue_space(&self) -> u64 {
        self.cfg.send_queue_limit.saturating_sub(self.queued_bytes)
    }

    pub fn poll_event(&mut self) -> Option<ConnEvent> {
        let e = self.event.take()?;
        self.event = self.rare.existing().and_then(|r| r.events.pop_front());
        Some(e)
    }

    /// Abrupt close as INET: CONNECTION_CLOSE at once, queued data is dropped, then the closing
    /// period of 3·PTO.
    pub fn close(&mut self, now: SimTime) {
        self.advance(now);
        self.close_with(now, NO_ERROR, None);
    }

    /// The connection's counters (built on each call: see `stats.rs`).
    #[inline(always)]
    pub fn stats(&self) -> ConnStats {
        self.stats.snapshot(self.rare.get().map(|r| (&r.stats, &r.high)))
    }

    pub fn metrics(&self) -> ConnMetrics {
        // With several paths: path 0's (`path_metrics` has every path's).
        let recovery = if self.is_multipath() { self.path_recovery(0) } else { &self.recovery };
        let m = recovery.cc.metrics();
        let rtt = &recovery.rtt;
        ConnMetrics {
            cwnd_bytes: m.cwnd_bytes,
            ssthresh_bytes: m.ssthresh_bytes,
            bytes_in_flight: recovery.bytes_in_flight,
            latest_rtt: rtt.latest(),
            smoothed_rtt: rtt.smoothed(),
            min_rtt: rtt.min(),
            rttvar: Some(rtt.rttvar()),
            // The period an armed PTO would use: application data's (with max_ack_delay) once
            // the handshake is confirmed, the handshake spaces' before (RFC 9002 §6.2.1).
            rto: Some(recovery.pto_duration(self.hs.confirmed)),
            in_recovery: m.in_recovery(),
            pto_count: recovery.pto_count,
            send_queue_bytes: self.queued_bytes,
        }
    }

    pub fn is_established(&self) -> bool {
        self.state == State::Established
    }

    /// Closed from the application's view (closing, draining or gone). `poll_timeout` still
    /// reports the end of the closing/draining period; after it, the endpoint can be dropped.
    pub fn is_closed(&self) -> bool {
        matches!(self.state, State::Closing { .. } | State::Draining { .. } | State::Closed)
    }

    pub fn role(&self) -> Role {
        self.role
    }

    /// The configuration in use.
    pub fn config(&self) -> &QuicConfig {
        &self.cfg
    }

    /// Number of ACK ranges the receiver currently tracks in the 1-RTT space.
    pub fn ack_range_count(&self) -> usize {
        self.acks.data().range_count()
    }

    // ----- internals -----

    /// Records the newest input time; inputs must not go back in time.
    pub(super) fn advance(&mut self, now: SimTime) {
        debug_assert!(now >= self.last_now, "time went back: {now} < {}", self.last_now);
        self.last_now = self.last_now.max(now);
    }

    /// Drops a packet number space's keys and state (RFC 9001 §4.9); once Initial and
    /// Handshake are both gone their ACK and CRYPTO state is freed too.
    pub(super) fn discard_space(&mut self, space: SpaceId, now: SimTime) {
        let ctx = self.timer_ctx();
        self.recovery.discard_space(space, now, ctx);
        if self.recovery.is_discarded(SpaceId::Initial) && self.recovery.is_discarded(SpaceId::Handshake) {
            self.acks.free_early();
            self.hs.discard_crypto();
        }
    }

    pub(super) fn timer_ctx(&self) -> TimerCtx {
        TimerCtx {
            handshake_confirmed: self.hs.confirmed,
            peer_validated: self.role == Role::Server || self.hs.confirmed || self.hs.handshake_acked,
            has_handshake_keys: self.hs.keys[SpaceId::Handshake.index()]
                && !self.recovery.is_discarded(SpaceId::Handshake),
        }
    }

    fn low_water_bytes(&self) -> u64 {
        (self.cfg.send_queue_limit as f64 * self.cfg.send_queue_low_water) as u64
    }

    fn check_low_water(&mut self) {
        if self.low_water_armed && self.queued_bytes < self.low_water_bytes() {
            self.low_water_armed = false;
            push_event(&mut self.event, &mut self.rare, ConnEvent::SendQueueLow);
        }
    }

    fn idle_deadline(&self) -> Option<SimTime> {
        let idle = self.cfg.idle_timeout?;
        // RFC 9000 §10.1: at least 3·PTO.
        let min = (self.recovery.rtt.pto_base(GRANULARITY) + self.recovery.peer_max_ack_delay) * 3;
        Some(self.last_activity + idle.max(min))
    }

    /// Reports the local transport parameters (and the peer's, if known) from now on, and every
    /// later trace event (`Endpoint::set_tracing`).
    pub fn set_tracing(&mut self) {
        let local = self.cfg.local_params();
        let peer = self.peer();
        let t = self.rare.get_mut().trace.get_or_insert_with(VecDeque::new);
        t.push_back(TraceEvent::ParametersSet { local: true, params: local.traced() });
        if let Some(p) = peer {
            t.push_back(TraceEvent::ParametersSet { local: false, params: p.traced() });
        }
    }

    /// Queues a trace event if the connection is traced (nothing to do otherwise: the rare
    /// state of an untraced connection has no queue).
    #[inline]
    pub(super) fn trace(&mut self, ev: impl FnOnce() -> TraceEvent) {
        if let Some(t) = self.rare.existing().and_then(|r| r.trace.as_mut()) {
            t.push_back(ev());
        }
    }

    fn apply_peer_params(&mut self, p: TransportParams) {
        self.trace(|| TraceEvent::ParametersSet { local: false, params: p.traced() });
        self.peer =
            if p == self.cfg.local_params() { PeerParams::Local } else { PeerParams::Other(Box::new(p)) };
        self.recovery.peer_max_ack_delay = p.max_ack_delay;
        self.conn_send.on_max(p.initial_max_data);
        for s in self.streams.send.values_mut() {
            s.max_stream_data = s.max_stream_data.max(p.initial_max_stream_data);
        }
    }

    fn set_established(&mut self, now: SimTime) {
        if self.state == State::Handshaking {
            self.state = State::Established;
            self.stats.established_at = Opt::some(now);
            push_event(&mut self.event, &mut self.rare, ConnEvent::Established);
        }
    }

    pub(super) fn close_with(&mut self, now: SimTime, code: u64, reason: Option<String>) {
        if !matches!(self.state, State::Handshaking | State::Established) {
            return;
        }
        let until = now + self.closing_period();
        self.state = State::Closing { until };
        self.rare.get_mut().close_pending = Some(code);
        self.drop_send_state();
        push_event(&mut self.event, &mut self.rare, ConnEvent::Closed { error: reason });
    }

    fn enter_draining(&mut self, now: SimTime, code: u64) {
        let until = now + self.closing_period();
        self.state = State::Draining { until };
        self.drop_send_state();
        let error = (code != NO_ERROR).then(|| format!("closed by peer with error code 0x{code:x}"));
        push_event(&mut self.event, &mut self.rare, ConnEvent::Closed { error });
    }

    /// No control frame is waiting.
    /// The peer's transport parameters, once known.
    #[inline]
    pub(super) fn peer(&self) -> Option<TransportParams> {
        self.peer.resolve(&self.cfg)
    }

    pub(super) fn pending_is_empty(&self) -> bool {
        !self.pending.handshake_done
            && !self.pending.max_data
            && self.rare.get().is_none_or(|r| r.pending.is_empty())
    }

    /// INET waits 3·PTO (RFC 9000 §10.2: at least three times the current PTO).
    fn closing_period(&self) -> SimDuration {
        (self.recovery.rtt.pto_base(GRANULARITY) + self.recovery.peer_max_ack_delay) * 3
    }

    /// INET `close()` drops unsent and unacknowledged data.
    fn drop_send_state(&mut self) {
        self.streams.send.clear();
        self.queued_bytes = 0;
        self.pending = PendingControl::default();
        if let Some(r) = self.rare.existing() {
            r.pending = PendingStreamControl::default();
        }
        self.probes = [0; 3];
    }

    /// Applies the peer's ACK_FREQUENCY if we advertised min_ack_delay and it is the newest
    /// (draft-ietf-quic-ack-frequency §4); a request below min_ack_delay is a protocol violation.
    fn on_ack_frequency(&mut self, now: SimTime, f: AckFrequencyFrame) {
        let Some(min) = self.cfg.min_ack_delay else { return };
        if self.rare.get().and_then(|r| r.ack_freq_rx.as_ref()).is_some_and(|o| o.seq >= f.seq) {
            return; // obsolete (reordered or retransmitted)
        }
        if f.request_max_ack_delay_us.saturating_mul(PS_PER_US) < min.ps() {
            let reason = format!(
                "PROTOCOL_VIOLATION: ACK_FREQUENCY requests {} us below min_ack_delay {min}",
                f.request_max_ack_delay_us
            );
            self.close_with(now, PROTOCOL_VIOLATION, Some(reason));
            return;
        }
        let r = self.rare.get_mut();
        r.ack_freq_rx = Some(f);
        r.stats.ack_frequency_frames_applied += 1;
    }

    fn on_stream_frame(&mut self, now: SimTime, id: u64, off: u64, len: u64) {
        let rule = stream_window_rule(&self.cfg);
        let rs = self.streams.recv.get_or_insert_with(id, || RecvStream::new(ReceiveWindow::new(&rule)));
        let end = off + len;
        let prev_high = rs.highest;
        if !rs.fc.on_received(end) {
            let reason =
                format!("FLOW_CONTROL_ERROR: stream {id} data up to {end} exceeds the limit {}", rs.fc.limit);
            self.close_with(now, FLOW_CONTROL_ERROR, Some(reason));
            return;
        }
        // Only bytes above the stream's highest offset use connection credit, so duplicates are
        // not counted twice (INET counts them: report §2.5).
        if end > prev_high {
            let total = self.conn_recv.received + (end - prev_high);
            if !self.conn_recv.on_received(total) {
                let reason = format!(
                    "FLOW_CONTROL_ERROR: connection data {total} exceeds the limit {}",
                    self.conn_recv.limit
                );
                self.close_with(now, FLOW_CONTROL_ERROR, Some(reason));
                return;
            }
        }
        let (dup, deliver) = rs.on_data(off, len);
        if let Some(mp) = self.rare.existing().and_then(|r| r.mp.as_deref_mut()) {
            // Received above the in-order prefix (holes included), after this delivery.
            mp.max_held_bytes = mp.max_held_bytes.max(rs.highest.saturating_sub(rs.delivered));
        }
        if dup > 0 {
            self.rare.get_mut().stats.duplicate_stream_bytes += dup;
        }
        if let Some((o, l)) = deliver {
            count(&mut self.stats, &mut self.rare, Sum::StreamBytesDelivered, l);
            push_event(
                &mut self.event,
                &mut self.rare,
                ConnEvent::StreamData { stream_id: id, offset: o, len: l },
            );
            // The discard receiver consumes at once, returning credit (INET QuicDiscardServer).
            if rs.fc.on_consumed(l, &rule).is_some() {
                self.rare.get_mut().pending.max_stream_data.insert(id);
            }
            if self.conn_recv.on_consumed(l, &conn_window_rule(&self.cfg)).is_some() {
                self.pending.max_data = true;
            }
        }
    }

    fn on_crypto_frame(&mut self, now: SimTime, space: SpaceId, params: Option<TransportParams>) {
        let Some(c) = self.hs.crypto(space) else { return };
        if c.received {
            return; // a retransmitted flight: the ACK is all it needs
        }
        c.received = true;
        let sizes = self.cfg.crypto_sizes;
        match (self.role, space) {
            (Role::Server, SpaceId::Initial) => {
                if let Some(p) = params {
                    self.apply_peer_params(p);
                }
                let local = self.cfg.local_params();
                if let Some(c) = self.hs.crypto(SpaceId::Initial) {
                    c.queue(sizes[1], None);
                }
                if let Some(c) = self.hs.crypto(SpaceId::Handshake) {
                    c.queue(sizes[2], Some(local));
                }
                self.hs.keys[SpaceId::Handshake.index()] = true;
                // INET's server is established straight away and may send 1-RTT data (0.5-RTT).
                self.hs.keys[SpaceId::Data.index()] = true;
            }
            (Role::Client, SpaceId::Initial) => {
                self.hs.keys[SpaceId::Handshake.index()] = true;
            }
            (Role::Client, SpaceId::Handshake) => {
                if let Some(p) = params {
                    self.apply_peer_params(p);
                }
                if let Some(c) = self.hs.crypto(SpaceId::Handshake) {
                    c.queue(sizes[3], None);
                }
                self.hs.keys[SpaceId::Data.index()] = true;
                self.hs.complete = true;
                self.set_established(now);
            }
            (Role::Server, SpaceId::Handshake) => {
                // Client Finished: the handshake is complete and confirmed (RFC 9001 §4.1.2).
                self.hs.complete = true;
                self.hs.confirmed = true;
                self.pending.handshake_done = true;
                self.set_established(now);
                self.discard_space(SpaceId::Initial, now);
                self.discard_space(SpaceId::Handshake, now);
            }
            (_, SpaceId::Data) => {}
        }
    }
}
