//! The TCP connection: state, the three-way handshake, segment input and the application's
//! side (writes, reads, events). What to send is in `output.rs`; the ACK fields of a segment
//! and the timers in `recovery.rs`.

use std::collections::VecDeque;
use std::sync::Arc;

use quicksim_engine::{Rng, SimDuration, SimTime};
use serde::{Deserialize, Serialize};

use super::accecn::{self, AccEcn, Agreed, EcnMode};
use super::config::placeholder_config;
use super::config::{DelayedAck, LossDetection, Recovery, TcpConfig, TlsVersion};
use super::quickack::LinuxAck;
use super::rcvbuf::LinuxRcvBuf;
use super::receiver::Receiver;
use super::rto::Rto;
use super::segment::{TcpSegment, CWR, TS_OPTION};
use super::sender::{CaState, Sender};
use super::tls::{self, TlsItem, TlsRx, TlsTx};
use super::{cc_for, TcpStats};
use crate::endpoint::{AppEvent, EcnCodepoint, EcnState, Role, TransportMetrics};
use quicksim_cc::{CeChangeAck, CongestionController, EcnResponse};

/// Connection states (RFC 9293 §3.3.2, folded: the FIN states are flags).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(super) enum State {
    /// Server waiting for a SYN.
    Listen,
    /// Client: SYN sent.
    SynSent,
    /// Server: SYN-ACK sent.
    SynReceived,
    Established,
    /// Both FINs exchanged and acknowledged: still answers a retransmitted FIN with an ACK
    /// (TIME-WAIT's job, without its timer). Or aborted or reset (`tcb_gone`): answers with RSTs.
    Closed,
}

/// One end of a TCP connection.
#[derive(Debug, Serialize, Deserialize)]
pub struct Connection {
    /// Shared, read-only: the ends of a flow (and flows with the same settings) hold one copy.
    /// Not part of the encoded state (`Connection::encode`): `decode` takes it back.
    #[serde(skip, default = "placeholder_config")]
    pub(super) cfg: Arc<TcpConfig>,
    pub(super) role: Role,
    pub(super) state: State,
    /// Negotiated options (RFC 7323, RFC 2018).
    pub(super) ts_on: bool,
    pub(super) sack_on: bool,
    pub(super) ws_on: bool,
    /// ECN agreed in the handshake (RFC 3168 §6.1.1).
    pub(super) ecn_on: bool,
    /// Receiver: a CE mark arrived and no CWR since: ACKs carry ECE (RFC 3168 §6.1.3).
    pub(super) ece_pending: bool,
    /// An ACK of the segments before a change of CE state, owed before any other segment:
    /// (ACK number, ACE field) as they were before the changing segment arrived
    /// (`CongestionController::ce_change_ack`).
    pub(super) prior_ack: Option<(u64, accecn::Ace)>,
    /// Sender: the window was reduced for ECE; the next new data segment carries CWR.
    pub(super) cwr_pending: bool,
    /// Window scale shift of the peer's windows (0 without scaling).
    pub(super) snd_shift: u8,
    /// The peer's MSS (its SYN option; 536 B before, RFC 9293 §3.7.1).
    pub(super) peer_mss: u64,
    pub(super) tx: Sender,
    pub(super) rx: Receiver,
    pub(super) rto: Rto,
    pub(super) rto_at: Option<SimTime>,
    /// Persist timer (RFC 9293 §3.8.6.1) and its backoff.
    pub(super) persist_at: Option<SimTime>,
    pub(super) persist_backoff: u32,
    pub(super) probe_due: bool,
    /// A SYN (client) or SYN-ACK (server) must be sent, and how many were sent so far.
    pub(super) syn_due: bool,
    pub(super) syns_sent: u32,
    pub(super) syn_time: SimTime,
    pub(super) tls_tx: TlsTx,
    pub(super) tls_rx: TlsRx,
    /// The application may send (TCP, and TLS if any, handshakes done).
    pub(super) app_ready: bool,
    /// Receiving application: application bytes delivered in order, and read.
    pub(super) app_delivered: u64,
    pub(super) app_read: u64,
    /// (application offset, stream offset): the stream up to the second is consumed once the
    /// application has read up to the first.
    pub(super) consume_q: VecDeque<(u64, u64)>,
    /// The application closed: a FIN follows the data. `fin_seq` once sent.
    pub(super) fin_queued: bool,
    pub(super) fin_seq: Option<u64>,
    /// The connection was aborted or reset: its state is gone (RFC 9293 §3.10.5, §3.10.7.4),
    /// so every arriving segment but a RST is answered with a RST (`reset.rs`).
    pub(super) tcb_gone: bool,
    /// A RST to send: sequence number, and the acknowledgement it carries, if any.
    pub(super) rst_due: Option<(u64, Option<u64>)>,
    pub(super) events: VecDeque<AppEvent>,
    pub(super) stats: TcpStats,
    pub(super) low_water_armed: bool,
    pub(super) pacing_blocked: bool,
    pub(super) last_now: SimTime,
    /// The congestion controller's random stream until the handshake makes the controller
    /// again for the negotiated MSS (`negotiate`), which takes it: so the controller that runs
    /// gets the stream as given, and an established connection holds 8 B for it, not 32.
    pub(super) cc_rng: Option<Box<Rng>>,
}

/// MSS assumed before the peer's SYN says otherwise (RFC 9293 §3.7.1).
const DEFAULT_PEER_MSS: u64 = 536;

impl Connection {
    /// A connection at `now`: a client sends its SYN at once, a server waits for one.
    /// `cc_rng` is the congestion controller's random stream (`InitCtx::rng`).
    pub fn new(role: Role, cfg: Arc<TcpConfig>, now: SimTime, cc_rng: Rng) -> Result<Connection, String> {
        cfg.validate()?;
        let smss = cfg.local_mss() - if cfg.timestamps { TS_OPTION } else { 0 };
        let tx = Sender::new(cc_for(&cfg, smss, &cc_rng)?, smss, cfg.sack, cfg.prr);
        let rx = Receiver::new(0, cfg.recv_buffer, 0);
        Ok(Connection {
            rto: Rto::new(&cfg),
            role,
            state: if role == Role::Client { State::SynSent } else { State::Listen },
            ts_on: false,
            sack_on: false,
            ws_on: false,
            ecn_on: false,
            ece_pending: false,
            prior_ack: None,
            cwr_pending: false,
            snd_shift: 0,
            peer_mss: DEFAULT_PEER_MSS,
            tx,
            rx,
            rto_at: None,
            persist_at: None,
            persist_backoff: 0,
            probe_due: false,
            syn_due: role == Role::Client,
            syns_sent: 0,
            syn_time: now,
            tls_tx: TlsTx::default(),
            tls_rx: TlsRx::default(),
            app_ready: false,
            app_delivered: 0,
            app_read: 0,
            consume_q: VecDeque::new(),
            fin_queued: false,
            fin_seq: None,
            tcb_gone: false,
            rst_due: None,
            events: VecDeque::new(),
            stats: TcpStats::default(),
            low_water_armed: false,
            pacing_blocked: false,
            last_now: now,
            cc_rng: Some(Box::new(cc_rng)),
            cfg,
        })
    }

    // ----- the application's side -----

    /// Queues `len` application bytes; returns the bytes accepted (bounded by the send buffer).
    pub fn write(&mut self, now: SimTime, len: u64) -> u64 {
        self.enqueue(now, len, len.min(self.send_space()))
    }

    /// Queues a whole write of `len` bytes: all of it while the send buffer is below its size
    /// (it may then exceed the size by up to one write), nothing once it is full. Returns the
    /// bytes accepted (`len` or 0).
    pub fn write_whole(&mut self, now: SimTime, len: u64) -> u64 {
        let accepted = if self.send_space() > 0 { len } else { 0 };
        self.enqueue(now, len, accepted)
    }

    /// Queues `accepted` of the `len` bytes the application offered.
    #[inline]
    fn enqueue(&mut self, _now: SimTime, len: u64, accepted: u64) -> u64 {
        if self.fin_queued || self.state == State::Closed {
            return 0;
        }
        if accepted < len || self.queued_bytes() + accepted >= self.low_water_bytes() {
            self.low_water_armed = true;
        }
        self.tls_tx.unframed += accepted;
        accepted
    }

    /// Free send-buffer space.
    pub fn send_space(&self) -> u64 {
        self.cfg.send_buffer.saturating_sub(self.queued_bytes())
    }

    /// Bytes in the send buffer: laid out and not acknowledged, plus not yet framed.
    pub fn queued_bytes(&self) -> u64 {
        let acked = self.tx.snd_una.saturating_sub(1).min(self.tls_tx.stream_end);
        self.tls_tx.stream_end - acked + self.tls_tx.unframed
    }

    /// With `manual_read`: the application reads up to `max` bytes; returns how many.
    pub fn read(&mut self, now: SimTime, max: u64) -> u64 {
        let n = max.min(self.app_delivered - self.app_read);
        if n > 0 {
            self.events.push_back(AppEvent::StreamData { stream_id: 0, offset: self.app_read, len: n });
            self.app_read += n;
            self.drain_consumed();
            self.rcv_space_adjust(now);
        }
        n
    }

    /// Application bytes delivered and not read yet (always 0 without `manual_read`).
    pub fn readable(&self) -> u64 {
        self.app_delivered - self.app_read
    }

    /// The application is done: a FIN follows the queued data (a graceful close).
    pub fn close(&mut self, now: SimTime) {
        match self.state {
            State::Listen => self.finish(now, None),
            // The FIN follows the queued data once the handshake is done (RFC 9293 §3.10.4
            // deletes a SYN-SENT connection; a simulated application that writes and closes at
            // once means "send this, then close").
            State::SynSent | State::SynReceived | State::Established => self.fin_queued = true,
            State::Closed => {}
        }
    }

    pub fn poll_event(&mut self) -> Option<AppEvent> {
        self.events.pop_front()
    }

    // ----- inspection -----

    pub fn stats(&self) -> &TcpStats {
        &self.stats
    }
    pub fn config(&self) -> &TcpConfig {
        &self.cfg
    }
    pub fn role(&self) -> Role {
        self.role
    }
    pub fn sender(&self) -> &Sender {
        &self.tx
    }
    pub fn receiver(&self) -> &Receiver {
        &self.rx
    }
    pub fn rto(&self) -> &Rto {
        &self.rto
    }
    /// The current retransmission timeout (with backoff).
    pub fn rto_value(&self) -> SimDuration {
        self.rto.current(&self.cfg, self.is_tcp_established())
    }
    /// When the retransmission timer fires, if running.
    pub fn rto_deadline(&self) -> Option<SimTime> {
        self.rto_at
    }
    /// When the persist timer fires, if running.
    pub fn persist_deadline(&self) -> Option<SimTime> {
        self.persist_at
    }
    /// Payload of a full-sized data segment (SMSS: MSS minus the timestamps option).
    pub fn smss(&self) -> u64 {
        self.tx.smss
    }
    pub fn is_established(&self) -> bool {
        self.app_ready && self.state != State::Closed
    }
    pub fn is_closed(&self) -> bool {
        self.state == State::Closed
    }
    fn is_tcp_established(&self) -> bool {
        matches!(self.state, State::Established | State::Closed)
    }

    /// Where this end's use of ECN stands (`TransportCounters::ecn_state`).
    pub fn ecn_state(&self) -> EcnState {
        match (self.ecn_mode() != EcnMode::Off, self.ecn_on, self.is_tcp_established()) {
            (false, _, _) => EcnState::Off,
            (true, true, _) => EcnState::Capable,
            (true, false, false) => EcnState::Testing,
            (true, false, true) => EcnState::Failed,
        }
    }

    pub fn metrics(&self) -> TransportMetrics {
        let m = self.tx.cc.metrics();
        let rtt = &self.rto.rtt;
        TransportMetrics {
            cwnd_bytes: self.tx.cwnd(),
            ssthresh_bytes: m.ssthresh_bytes,
            bytes_in_flight: self.tx.in_flight(),
            latest_rtt: rtt.latest(),
            smoothed_rtt: if rtt.has_sample() { rtt.smoothed() } else { SimDuration::ZERO },
            min_rtt: rtt.min(),
            rttvar: Some(if rtt.has_sample() { rtt.rttvar() } else { SimDuration::ZERO }),
            rto: Some(self.rto_value()),
            in_recovery: self.tx.state != CaState::Open,
            pto_count: self.rto.backoff,
            send_queue_bytes: self.queued_bytes(),
        }
    }

    // ----- input -----

    /// A segment from the peer.
    pub fn handle_packet(&mut self, now: SimTime, seg: &TcpSegment) {
        self.advance(now);
        self.stats.segments_received += 1;
        self.stats.bytes_received += crate::WirePacket::size_bytes(seg);
        if seg.is_rst() {
            self.stats.rsts_received += 1;
        }
        if self.tcb_gone {
            self.answer_without_tcb(seg);
            return;
        }
        if seg.is_rst() {
            self.on_rst(now, seg);
            return;
        }
        let mut completes_handshake = false;
        match self.state {
            State::Listen => {
                if seg.is_syn() && !seg.has_ack() {
                    self.on_syn(now, seg);
                }
                return;
            }
            State::SynSent => {
                if seg.is_syn() && seg.has_ack() && seg.ack == 1 {
                    self.on_syn_ack(now, seg);
                }
                return;
            }
            State::SynReceived => {
                completes_handshake = true;
                if seg.is_syn() && !seg.has_ack() {
                    self.syn_due = true; // the SYN-ACK was lost: send it again (Linux)
                    return;
                }
                if !(seg.has_ack() && seg.ack >= 1) {
                    return;
                }
                self.tcp_established(now, seg.ts.map(|t| t.ecr));
            }
            State::Established | State::Closed => {
                if seg.is_syn() {
                    // Our ACK of the SYN-ACK was lost: acknowledge again.
                    self.rx.ack_now = true;
                    return;
                }
            }
        }
        if self.ts_on {
            if let Some(ts) = seg.ts {
                self.rx.on_timestamp(seg.seq, ts.val);
            }
        }
        if self.ecn_on {
            self.on_ecn_fields(seg);
        }
        // RFC 9768 §3.2.2.5: the ACE field of an ACK, once established (the segment that
        // completes the server's handshake echoes the SYN-ACK instead, §3.2.2.1).
        if let (true, Some(a)) = (seg.has_ack() && !completes_handshake, self.tx.accecn.as_deref_mut()) {
            a.ace_in = Some(seg.ace());
        }
        if seg.has_ack() && self.state != State::Closed {
            self.on_ack(now, seg);
        }
        if seg.len > 0 || seg.is_fin() {
            self.on_data(now, seg);
        } else if seg.seq < self.rx.rcv_nxt {
            // Not acceptable (a window probe): answer with an ACK (RFC 9293 §3.10.7.4).
            self.rx.ack_now = true;
        }
        self.check_closed(now);
    }

    /// Server: a SYN arrived (RFC 9293 §3.10.7.2).
    fn on_syn(&mut self, now: SimTime, seg: &TcpSegment) {
        self.negotiate(now, seg);
        // The SYN's window is never scaled (RFC 7323 §2.2).
        self.tx.snd_wnd = seg.window;
        self.tx.wnd_right = 1 + seg.window;
        self.tx.max_snd_wnd = seg.window;
        self.state = State::SynReceived;
        self.syn_due = true;
        self.syn_time = now;
    }

    /// Options in force: those both SYNs carry (RFC 7323 §2.2, §3.2; RFC 2018 §2).
    fn negotiate(&mut self, now: SimTime, seg: &TcpSegment) {
        let o = seg.syn_opts.unwrap_or(super::segment::SynOptions {
            mss: DEFAULT_PEER_MSS as u16,
            wscale: None,
            sack_permitted: false,
        });
        self.ts_on = self.cfg.timestamps && seg.ts.is_some();
        // RFC 3168 §6.1.1: a SYN asks with ECE and CWR, the SYN-ACK agrees with ECE alone;
        // RFC 9768 §3.1.1: AccECN with AE too, and the SYN-ACK echoes the SYN's IP-ECN field.
        let mode = self.ecn_mode();
        let (agreed, synack) = if seg.has_ack() {
            (accecn::client_negotiate(mode, seg.ace()), 0)
        } else {
            accecn::server_negotiate(mode, seg.ace(), seg.ecn)
        };
        self.ecn_on = agreed != Agreed::Off;
        self.sack_on = self.cfg.sack && o.sack_permitted;
        let scaling = self.cfg.window_scaling && o.wscale.is_some();
        self.ws_on = scaling;
        self.snd_shift = if scaling { o.wscale.unwrap_or(0) } else { 0 };
        let rcv_shift = if scaling { self.local_wscale() } else { 0 };
        self.peer_mss = u64::from(o.mss);
        self.rx = Receiver::new(seg.seq, self.cfg.recv_buffer, rcv_shift);
        if self.cfg.delayed_ack() == DelayedAck::Linux {
            self.rx.linux = Some(LinuxAck::new(self.cfg.delack_timeout));
        }
        if let (true, Some(ts)) = (self.ts_on, seg.ts) {
            self.rx.ts_recent = ts.val;
        }
        // SMSS: the smaller MSS minus the options every segment carries (Linux `mss_cache`).
        let mss = self.cfg.local_mss().min(self.peer_mss);
        let smss = mss - if self.ts_on { TS_OPTION } else { 0 };
        if self.cfg.delayed_ack() == DelayedAck::Linux {
            // The measure starts here for an active open, at the handshake's end for a passive
            // one (`tcp_established`).
            let (local, consumed) = (self.cfg.local_mss(), self.rx.consumed);
            let rx_mss = local - if self.ts_on { TS_OPTION } else { 0 };
            self.rx.rcvbuf = Some(LinuxRcvBuf::new(rx_mss, local, self.cfg.recv_buffer, now, consumed));
        }
        // Once per connection (a SYN in Listen, a SYN-ACK in SynSent): the stream is still here.
        let rng = self.cc_rng.take().expect("the handshake negotiates once");
        self.tx =
            Sender::new(cc_for(&self.cfg, smss, &rng).expect("validated"), smss, self.sack_on, self.cfg.prr);
        self.tx.snd_nxt = 1;
        self.tx.linux_recovery = self.cfg.recovery() == Recovery::Linux;
        // RACK-TLP needs SACK (RFC 8985 §2); without it RFC 6582's recovery runs either way.
        if self.sack_on && self.cfg.loss_detection() == LossDetection::Rack {
            self.tx.rack = Some(Box::default());
        }
        if agreed == Agreed::Accurate {
            let response = self.tx.cc.ecn_response();
            let scalable = matches!(response, EcnResponse::Scalable { .. });
            let ect1 = matches!(response, EcnResponse::Scalable { ect1: true });
            // The client's first ACK echoes the SYN-ACK's IP-ECN field (§3.2.2.1 Table 4).
            let handshake_ack = seg.has_ack().then(|| accecn::handshake_ace(seg.ecn));
            self.tx.accecn =
                Some(Box::new(AccEcn { synack, handshake_ack, scalable, ect1, ..AccEcn::default() }));
        }
    }

    /// The ECN feedback this end offers: AccECN if configured or if the controller counts marks
    /// itself (DCTCP, Prague: as Linux's TCP_CONG_NEEDS_ACCECN), else RFC 3168 if `ecn`.
    pub(super) fn ecn_mode(&self) -> EcnMode {
        if self.cfg.accurate_ecn || matches!(self.tx.cc.ecn_response(), EcnResponse::Scalable { .. }) {
            EcnMode::Accurate
        } else if self.cfg.ecn {
            EcnMode::Classic
        } else {
            EcnMode::Off
        }
    }

    /// The shift that lets the buffer be advertised in 16 bits (RFC 7323 §2.3, at most 14).
    pub(super) fn local_wscale(&self) -> u8 {
        let mut s = 0u8;
        while (self.cfg.recv_buffer >> s) > 65_535 && s < 14 {
            s += 1;
        }
        s
    }

    /// Client: the SYN-ACK arrived.
    fn on_syn_ack(&mut self, now: SimTime, seg: &TcpSegment) {
        self.negotiate(now, seg);
        self.rx.ack_now = true; // the third segment of the handshake
                                // The SYN-ACK's window is never scaled (RFC 7323 §2.2).
        let w = seg.window;
        self.tx.snd_wnd = w;
        self.tx.wnd_right = 1 + w;
        self.tx.max_snd_wnd = w;
        self.tcp_established(now, seg.ts.map(|t| t.ecr));
    }

    /// Both ends' SYNs are acknowledged at this end. `ecr`: the timestamp echo of the
    /// acknowledging segment.
    fn tcp_established(&mut self, now: SimTime, ecr: Option<SimTime>) {
        self.state = State::Established;
        let consumed = self.rx.consumed;
        if let Some(b) = self.rx.rcvbuf.as_mut() {
            b.established(now, consumed);
        }
        self.tx.snd_una = 1;
        self.rto_at = None;
        // RTT of the handshake: from the timestamp echo, else only if the SYN was sent once
        // (Karn). RFC 6298 §5.7 if the SYN timed out.
        let sample = match ecr.filter(|_| self.ts_on) {
            Some(t) => Some(now - t),
            None if self.syns_sent == 1 => Some(now - self.syn_time),
            None => None,
        };
        if let Some(r) = sample {
            self.rto.on_sample(&self.cfg, r, self.tx.snd_una, self.tx.snd_nxt);
        }
        if self.syns_sent > 1 {
            self.rto.syn_timed_out = true;
        }
        // The SYN's backoff ends with the handshake (the data RTO starts afresh, §5.7).
        self.rto.backoff = 0;
        self.stats.handshake_done_at = Some(now);
        match self.cfg.tls {
            TlsVersion::None => self.set_app_ready(now),
            _ if self.role == Role::Client => {
                self.tls_tx.push_flight(0, tls::flight_size(&self.cfg, 0));
            }
            _ => {}
        }
    }

    fn set_app_ready(&mut self, now: SimTime) {
        if !self.app_ready {
            self.app_ready = true;
            self.stats.established_at = Some(now);
            self.events.push_back(AppEvent::Established);
        }
    }

    /// The receiver's side of ECN (RFC 3168 §6.1.3): CWR ends the echo, a CE mark starts it
    /// (and is acknowledged at once, as Linux's quick-ACK on CE does, so the sender hears of it
    /// within a round trip).
    fn on_ecn_fields(&mut self, seg: &TcpSegment) {
        if let Some(a) = self.tx.accecn.as_deref_mut() {
            // RFC 9768 §3.2.2.2: count CE-marked packets (r.cep); ACK on a change (§3.2.2.5.1).
            let before = (self.rx.rcv_nxt, a.ace_now());
            if a.on_received(seg.ecn, seg.len > 0) {
                let how = self.tx.cc.ce_change_ack();
                // RFC 8257 §3.2's two ACKs: a delayed ACK pending goes first, with the CE
                // state of the segments it covers (`CeChangeAck::Apart`).
                if how != CeChangeAck::Together && self.rx.unacked_segs() > 0 {
                    self.prior_ack = Some(before);
                }
                if how != CeChangeAck::ApartDelayed {
                    self.rx.ack_now = true;
                }
            }
            if seg.ecn == EcnCodepoint::Ce {
                self.stats.ce_received += 1;
            }
            return;
        }
        if seg.flags & CWR != 0 {
            self.ece_pending = false;
        }
        if seg.ecn == EcnCodepoint::Ce {
            self.stats.ce_received += 1;
            if !self.ece_pending {
                self.ece_pending = true;
                self.rx.ack_now = true;
            }
        }
    }

    /// The data and FIN of an arriving segment.
    fn on_data(&mut self, now: SimTime, seg: &TcpSegment) {
        if !seg.records.is_empty() {
            self.tls_rx.on_marks(&seg.records);
        }
        if self.rx.linux.is_some() {
            // Linux's ATO is bounded by this end's RTO and SRTT (`quickack.rs`).
            let (rto, rtt) = (self.rto_value(), &self.rto.rtt);
            let srtt = rtt.has_sample().then(|| rtt.smoothed());
            if let Some(l) = self.rx.linux.as_mut() {
                (l.rto, l.srtt) = (rto, srtt);
            }
            let queue_empty = self.rx.unread() == 0;
            let rcv_mss = self.rx.linux.map_or(0, |l| l.rcv_mss);
            if let (Some(b), Some(ts)) = (self.rx.rcvbuf.as_mut(), seg.ts.filter(|_| self.ts_on)) {
                b.on_timestamp(now, ts.ecr, seg.len as u64, rcv_mss, queue_empty);
            }
        }
        let cfg = &self.cfg;
        let a =
            self.rx.on_data(seg.seq, seg.len as u64, seg.is_fin(), now, cfg.ack_every, cfg.delack_timeout);
        if a.to > a.from {
            // Sequence number s is stream offset s − 1.
            self.on_in_order(now, a.from - 1, a.to - 1);
        }
        self.rcv_space_adjust(now);
        if a.fin {
            // The peer is done; this end's application closes too once its data is sent (the
            // simulator's applications never half-close).
            self.fin_queued = true;
        }
    }

    /// `tcp_rcv_space_adjust` after the application read (`rcvbuf.rs`).
    fn rcv_space_adjust(&mut self, now: SimTime) {
        if self.rx.rcvbuf.is_none() {
            return; // Every connection without the Linux ACK rules: read no more state.
        }
        let (consumed, rcv_nxt, span) = (self.rx.consumed, self.rx.rcv_nxt, self.rx.ooo_span());
        if let Some(b) = self.rx.rcvbuf.as_mut() {
            b.space_adjust(now, consumed, rcv_nxt, span);
        }
    }

    /// Stream bytes `[from, to)` became in order.
    fn on_in_order(&mut self, now: SimTime, from: u64, to: u64) {
        if self.cfg.tls == TlsVersion::None {
            self.deliver_app(now, to - from, to);
            return;
        }
        let mut items: smallvec::SmallVec<[TlsItem; 4]> = smallvec::SmallVec::new();
        self.tls_rx.advance(to, |i| items.push(i));
        for item in items {
            match item {
                TlsItem::App { app, end } => self.deliver_app(now, app, end),
                TlsItem::Flight(k) => {
                    // A flight is consumed by TLS itself.
                    let end = self.tls_rx.parsed;
                    self.consume_q.push_back((self.app_delivered, end));
                    if tls::flight_sender(k) == self.role {
                        continue; // not ours to receive (cannot happen with a sane peer)
                    }
                    let (reply, ready) = tls::on_flight(self.cfg.tls, k);
                    if let Some(r) = reply {
                        self.tls_tx.push_flight(r, tls::flight_size(&self.cfg, r));
                    }
                    if ready {
                        self.set_app_ready(now);
                    }
                }
            }
        }
        self.drain_consumed();
    }

    /// `app` more application bytes are in order; their stream ends at `end`.
    fn deliver_app(&mut self, now: SimTime, app: u64, end: u64) {
        if app > 0 && self.stats.first_app_byte_at.is_none() {
            self.stats.first_app_byte_at = Some(now);
        }
        self.app_delivered += app;
        self.stats.app_bytes_delivered += app;
        self.consume_q.push_back((self.app_delivered, end));
        if !self.cfg.manual_read && app > 0 {
            self.events.push_back(AppEvent::StreamData { stream_id: 0, offset: self.app_read, len: app });
            self.app_read += app;
        }
        self.drain_consumed();
    }

    /// Frees the receive buffer for everything the application has read.
    fn drain_consumed(&mut self) {
        while let Some(&(app_end, stream_end)) = self.consume_q.front() {
            if app_end > self.app_read {
                break;
            }
            self.consume_q.pop_front();
            let seq_end = stream_end + 1;
            if seq_end > self.rx.consumed {
                let n = seq_end - self.rx.consumed;
                self.rx.consume(n);
            }
        }
    }

    /// Closed once our FIN is acknowledged and the peer's FIN is in.
    fn check_closed(&mut self, now: SimTime) {
        if self.state == State::Established
            && self.rx.fin_received
            && self.fin_seq.is_some_and(|f| self.tx.snd_una > f)
        {
            self.finish(now, None);
        }
    }

    /// The connection ends (`error` None for a normal close).
    pub(super) fn finish(&mut self, _now: SimTime, error: Option<String>) {
        if self.state == State::Closed {
            return;
        }
        self.state = State::Closed;
        self.rto_at = None;
        self.persist_at = None;
        if let Some(r) = self.tx.rack.as_deref_mut() {
            r.stop();
        }
        self.probe_due = false;
        self.syn_due = false;
        self.pacing_blocked = false;
        self.events.push_back(AppEvent::Closed { error });
    }

    // ----- internals -----

    pub(super) fn advance(&mut self, now: SimTime) {
        debug_assert!(now >= self.last_now, "time went back: {now} < {}", self.last_now);
        self.last_now = self.last_now.max(now);
    }

    fn low_water_bytes(&self) -> u64 {
        (self.cfg.send_buffer as f64 * self.cfg.send_buffer_low_water) as u64
    }

    pub(super) fn check_low_water(&mut self) {
        if self.low_water_armed && self.queued_bytes() < self.low_water_bytes() {
            self.low_water_armed = false;
            self.events.push_back(AppEvent::SendQueueLow);
        }
    }
}
