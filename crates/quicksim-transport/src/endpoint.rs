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
    pub rttvar: SimDuration,
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
    /// number, size above UDP and why.
    PacketLost { space: u8, pn: u64, bytes: u64, trigger: LossTrigger },
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
    /// Acknowledgements sent (QUIC: ACK frames; TCP: segments carrying a new ACK).
    pub acks_sent: u64,
}

/// What a packet is on the wire, as far as the network needs to know.
pub trait WirePacket {
    /// Bytes above IP: the transport header(s) and payload (QUIC: the UDP payload, without the
    /// 8-byte UDP header; TCP: header with options plus payload).
    fn size_bytes(&self) -> u64;
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
    /// Closes the connection (the application is done, or its stop time came).
    fn close(&mut self, now: SimTime);
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
    /// Nothing is going on: no bytes in flight, no data to send, no event for the application.
    /// Only decides whether the run loop may store the endpoint compactly (`false`: never).
    fn is_quiet(&self) -> bool {
        false
    }
}
