//! The interface every transport endpoint offers the run loop: quinn's sans-IO contract
//! (`handle_*(now, ..)` in, `poll_*(now)` out, `poll_timeout` for the next wake-up) as a trait,
//! so the simulator drives QUIC, TCP and later stacks through one set of calls.
//!
//! Call order, per event that concerns an endpoint (the run loop in `quicksim-scenario` keeps
//! it, `docs/architecture.md` spells it out): one `handle_packet` or `handle_timeout`, then
//! `poll_transmit` until it returns `None`, then `poll_event` until it returns `None` (the
//! application may `write` in reaction, and the transmit loop runs again), then
//! `poll_timeout` once. `poll_transmit` returning `None` is a fixed point for that `now`: only
//! new application data changes it.

use quicksim_engine::{SimDuration, SimTime};
use serde::{Deserialize, Serialize};

/// Which end of the connection this is (the client opens it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Role {
    Client,
    Server,
}

/// Something the application should know about.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum AppEvent {
    /// The handshake completed (immediately at creation without a handshake).
    Established,
    /// The send buffer fell below its low-water mark after an acknowledgement: refill it.
    SendQueueLow,
    /// Bytes `[offset, offset+len)` of stream `stream_id` were delivered in order (TCP has one
    /// stream, 0).
    StreamData { stream_id: u64, offset: u64, len: u64 },
    /// The connection closed: None for a normal close, else the reason.
    Closed { error: Option<String> },
}

/// The sampled state of a sending endpoint, for the `conn` table (recorded when it changes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TransportMetrics {
    /// Congestion window (`u64::MAX` without congestion control).
    pub cwnd_bytes: u64,
    /// `u64::MAX` until the first loss.
    pub ssthresh_bytes: u64,
    pub bytes_in_flight: u64,
    /// Zero before the first RTT sample.
    pub latest_rtt: SimDuration,
    pub smoothed_rtt: SimDuration,
    pub min_rtt: SimDuration,
    /// The RTT variation of the estimator; None if the stack does not expose it (quinn).
    pub rttvar: Option<SimDuration>,
    /// The current retransmission timeout, backoff included: TCP's RTO (RFC 6298 §2, §5.5),
    /// QUIC's PTO period (RFC 9002 §6.2.1: (smoothed_rtt + max(4·rttvar, kGranularity) +
    /// max_ack_delay) · 2^pto_count, max_ack_delay 0 until the handshake is confirmed). None if
    /// the stack does not expose it (quinn).
    pub rto: Option<SimDuration>,
    pub in_recovery: bool,
    /// Consecutive probe or retransmission timeouts (QUIC's PTO count, TCP's RTO backoff).
    pub pto_count: u32,
    /// Unsent plus unacknowledged bytes in the send buffers.
    pub send_queue_bytes: u64,
}

/// Why a packet was declared lost (RFC 9002 §6.1), as qlog's `packet_lost` trigger names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LossTrigger {
    /// kPacketThreshold packets sent after it were acknowledged (`reordering_threshold`).
    ReorderingThreshold,
    /// It was sent more than the time threshold before a later acknowledged one.
    TimeThreshold,
}

/// Transport parameters as a trace reports them (RFC 9000 §18.2; one value for every stream
/// type, as the QUIC model has).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceParams {
    pub initial_max_data: u64,
    pub initial_max_stream_data: u64,
    pub max_ack_delay: SimDuration,
    pub ack_delay_exponent: u8,
    pub min_ack_delay: Option<SimDuration>,
}

/// What an endpoint reports for a trace (a qlog writer) while tracing is on
/// ([`Endpoint::set_tracing`]): what the packets it sends and receives do not show.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceEvent {
    /// Transport parameters took effect: ours (`local`) or the peer's.
    ParametersSet { local: bool, params: TraceParams },
    /// A packet was declared lost: its packet number space (0 Initial, 1 Handshake, 2 1-RTT),
    /// number, size above UDP and why, and its path (multipath QUIC: the number is in the
    /// path's space; 0 on a single-path connection).
    PacketLost { space: u8, pn: u64, bytes: u64, trigger: LossTrigger, path: u8 },
}

/// Monotonic counters every transport keeps, for the `conn` table and the per-flow totals.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TransportCounters {
    /// Packets (QUIC) or segments (TCP) sent, retransmissions and pure ACKs included.
    pub packets_sent: u64,
    /// In-flight packets or segments newly acknowledged.
    pub packets_acked: u64,
    /// Packets or segments declared lost (QUIC loss detection; TCP: retransmitted segments).
    pub packets_lost: u64,
    /// Payload bytes sent again.
    pub retransmitted_bytes: u64,
    /// Expiries of the retransmission timer: QUIC's PTOs (RFC 9002 §6.2), TCP's RTOs of the
    /// SYN and of data (RFC 6298 §5.4). Loss-time timer expiries (QUIC) are not counted.
    pub timeouts: u64,
    /// Acknowledgements sent (QUIC: ACK frames; TCP: segments carrying a new ACK).
    pub acks_sent: u64,
    /// Packets or segments that arrived at this endpoint marked Congestion Experienced (the
    /// data receiver's count is the number of marks the network made on the flow's data).
    pub ce_received: u64,
    /// Congestion events those marks caused (at most one per round trip: RFC 9002 §7.1,
    /// RFC 3168 §6.1.2).
    pub ecn_congestion_events: u64,
    /// Where this sender's use of ECN stands.
    pub ecn_state: EcnState,
}

/// The ECN field of a packet's IP header (RFC 3168 §5), as a transport sets it when sending
/// and reads it when receiving; the values are the codepoints. The network's `Ecn`
/// (quicksim-net) is the same field: the run loop copies one into the other.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[repr(u8)]
pub enum EcnCodepoint {
    /// 00: not ECN-capable.
    #[default]
    NotEct = 0b00,
    /// 01: ECT(1).
    Ect1 = 0b01,
    /// 10: ECT(0), what RFC 3168 and RFC 9000 §13.4 senders use.
    Ect0 = 0b10,
    /// 11: Congestion Experienced, set by a queue instead of dropping.
    Ce = 0b11,
}

/// A sender's use of ECN (RFC 9000 §13.4.2 and its Appendix A.4; RFC 3168 §6.1.1 for TCP).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum EcnState {
    /// ECN is not enabled.
    #[default]
    Off,
    /// QUIC: the first packets go out with ECT(0) and the peer's ACKs are checked. TCP: the
    /// ECN-setup SYN is out, the handshake not done.
    Testing,
    /// QUIC: the testing packets are sent; no marking until an ACK validates them.
    Unknown,
    /// The path and the peer carry and echo the marks: packets go out with ECT(0).
    Capable,
    /// QUIC: validation failed (marks bleached, CE marks not echoed, or every marked packet
    /// lost); TCP: the peer did not agree to ECN in the handshake. No marking.
    Failed,
}

impl EcnState {
    /// The name used in the `conn` table and `summary.json`.
    pub fn as_str(self) -> &'static str {
        match self {
            EcnState::Off => "off",
            EcnState::Testing => "testing",
            EcnState::Unknown => "unknown",
            EcnState::Capable => "capable",
            EcnState::Failed => "failed",
        }
    }
}

/// What a packet is on the wire, as far as the network needs to know.
pub trait WirePacket {
    /// Bytes above IP: the transport header(s) and payload (QUIC: the UDP payload, without the
    /// 8-byte UDP header; TCP: header with options plus payload).
    fn size_bytes(&self) -> u64;
    /// The ECN codepoint this packet is sent with. Default: Not-ECT.
    #[inline]
    fn ecn(&self) -> EcnCodepoint {
        EcnCodepoint::NotEct
    }
    /// The codepoint the packet arrived with (a queue may have set CE on the way): the run loop
    /// sets it before `Endpoint::handle_packet`. Default: ignored (a transport without ECN).
    #[inline]
    fn set_ecn(&mut self, _e: EcnCodepoint) {}
}

/// A transport endpoint (one end of a connection), driven by the run loop.
pub trait Endpoint {
    /// The packets this transport exchanges (kept in the run loop's packet pool while they cross
    /// the network).
    type Packet: WirePacket;
    /// Bytes of headers below [`WirePacket::size_bytes`] and above IP (QUIC: 8 for UDP; TCP: 0).
    const ENCAP_BYTES: u64;

    /// A packet from the peer arrived.
    fn handle_packet(&mut self, now: SimTime, p: &Self::Packet);
    /// The time given by `poll_timeout` was reached (called only then).
    fn handle_timeout(&mut self, now: SimTime);
    /// The next packet to send now, if any.
    fn poll_transmit(&mut self, now: SimTime) -> Option<Self::Packet>;
    /// Whether the run loop should poll with `poll_transmit_into` (the transport writes its
    /// packets in place) rather than `poll_transmit`.
    const TRANSMIT_IN_PLACE: bool = false;
    /// `poll_transmit` written over `out`, a spent packet of this transport (the old value of
    /// the run loop's pool slot): whether a packet was written (`out` is unchanged if not).
    /// The default moves `poll_transmit`'s packet in; a transport whose packets are large
    /// writes the fields in place instead (and sets `TRANSMIT_IN_PLACE`), saving the moves of
    /// the whole packet from its builder to the caller and into the slot.
    #[inline]
    fn poll_transmit_into(&mut self, now: SimTime, out: &mut Self::Packet) -> bool {
        match self.poll_transmit(now) {
            Some(p) => {
                *out = p;
                true
            }
            None => false,
        }
    }
    /// When `handle_timeout` wants to be called next.
    fn poll_timeout(&self) -> Option<SimTime>;
    /// The next event for the application.
    fn poll_event(&mut self) -> Option<AppEvent>;
    /// The stream id of the application's `index`-th stream (0, 1, 2, ...), as `write` takes it
    /// and `AppEvent::StreamData` reports it. TCP has one stream, 0.
    fn app_stream_id(index: u32) -> u64
    where
        Self: Sized,
    {
        u64::from(index)
    }
    /// Bytes the send buffer accepts now.
    fn send_space(&self) -> u64;
    /// Hands `len` bytes of stream `stream` to the transport; returns the bytes accepted.
    fn write(&mut self, now: SimTime, stream: u64, len: u64) -> u64;
    /// Hands a whole message of `len` bytes to the transport, as INET's QUIC takes an
    /// application's message: accepted in full while the send buffer is below its limit (it may
    /// then exceed the limit by up to one message), refused (0) once it is at the limit.
    fn write_whole(&mut self, now: SimTime, stream: u64, len: u64) -> u64;
    /// Closes the connection (the application is done): TCP sends its FIN after the data
    /// written (a graceful close); QUIC closes at once (CONNECTION_CLOSE, as INET's QUIC).
    fn close(&mut self, now: SimTime);
    /// Stops sending at once: data not yet sent or acknowledged is dropped and the peer is
    /// told (TCP: a RST, RFC 9293 §3.10.5 ABORT). Default: `close`, for a transport whose
    /// close already drops its queued data (QUIC's CONNECTION_CLOSE).
    fn abort(&mut self, now: SimTime) {
        self.close(now)
    }
    fn metrics(&self) -> TransportMetrics;
    fn counters(&self) -> TransportCounters;
    fn is_established(&self) -> bool;
    fn is_closed(&self) -> bool;
    /// Start reporting [`TraceEvent`]s (a qlog of this endpoint is written). Tracing keeps the
    /// endpoint from being stored encoded (`is_quiet` is then false). Default: nothing to report.
    fn set_tracing(&mut self) {}
    /// The next trace event, oldest first (only while tracing).
    fn poll_trace(&mut self) -> Option<TraceEvent> {
        None
    }
    /// The qlog records (JSON-SEQ text) the stack wrote itself since the last call, for a real
    /// stack with its own qlog writer (quinn-proto); only while traced. Default: none.
    fn poll_qlog(&mut self) -> Option<String> {
        None
    }
    /// Nothing is going on: no bytes in flight, no data to send, no event for the application.
    /// Only decides whether the run loop may store the endpoint compactly (`false`: never).
    fn is_quiet(&self) -> bool {
        false
    }
}
