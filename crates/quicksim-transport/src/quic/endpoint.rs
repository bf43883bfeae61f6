//! The QUIC connection as an [`Endpoint`]: the run loop's calls mapped onto `Connection`'s own
//! API (which keeps QUIC's names: streams, `stream_send`, `stats`).

use super::{Connection, QuicPacket};
use crate::endpoint::TraceEvent;
use crate::endpoint::{
    AppEvent, EcnCodepoint, EcnState, Endpoint, TransportCounters, TransportMetrics, WirePacket,
};
use quicksim_engine::SimTime;

impl WirePacket for QuicPacket {
    #[inline]
    fn size_bytes(&self) -> u64 {
        QuicPacket::size_bytes(self)
    }
    #[inline]
    fn ecn(&self) -> EcnCodepoint {
        self.ecn
    }
    #[inline]
    fn set_ecn(&mut self, e: EcnCodepoint) {
        self.ecn = e;
    }
}

impl Endpoint for Connection {
    type Packet = QuicPacket;
    /// QUIC rides on UDP (RFC 768: an 8-byte header).
    const ENCAP_BYTES: u64 = 8;

    #[inline]
    fn handle_packet(&mut self, now: SimTime, p: &QuicPacket) {
        Connection::handle_packet(self, now, p)
    }
    #[inline]
    fn handle_timeout(&mut self, now: SimTime) {
        Connection::handle_timeout(self, now)
    }
    #[inline]
    fn poll_transmit(&mut self, now: SimTime) -> Option<QuicPacket> {
        Connection::poll_transmit(self, now)
    }
    #[inline]
    fn poll_timeout(&self) -> Option<SimTime> {
        Connection::poll_timeout(self)
    }
    #[inline]
    fn poll_event(&mut self) -> Option<AppEvent> {
        Connection::poll_event(self)
    }
    fn set_tracing(&mut self) {
        Connection::set_tracing(self)
    }
    #[inline]
    fn poll_trace(&mut self) -> Option<TraceEvent> {
        self.rare.existing()?.trace.as_mut()?.pop_front()
    }
    /// Client-initiated bidirectional streams: ids 0, 4, 8, ... (RFC 9000 §2.1).
    #[inline]
    fn app_stream_id(index: u32) -> u64 {
        u64::from(index) * 4
    }
    #[inline]
    fn send_space(&self) -> u64 {
        self.send_queue_space()
    }
    #[inline]
    fn write(&mut self, now: SimTime, stream: u64, len: u64) -> u64 {
        self.stream_send(now, stream, len)
    }
    #[inline]
    fn write_whole(&mut self, now: SimTime, stream: u64, len: u64) -> u64 {
        self.stream_send_whole(now, stream, len)
    }
    #[inline]
    fn close(&mut self, now: SimTime) {
        Connection::close(self, now)
    }
    #[inline]
    fn metrics(&self) -> TransportMetrics {
        Connection::metrics(self)
    }
    fn counters(&self) -> TransportCounters {
        let s = self.stats();
        TransportCounters {
            packets_sent: s.packets_sent,
            packets_acked: s.packets_acked,
            packets_lost: s.packets_lost,
            retransmitted_bytes: s.retransmitted_bytes,
            timeouts: s.pto_count_total,
            acks_sent: s.ack_frames_sent,
            ce_received: self.recovery.ecn.as_ref().map_or(0, |e| e.ce_received()),
            ecn_congestion_events: self.recovery.ecn.as_ref().map_or(0, |e| e.congestion_events),
            ecn_state: self.recovery.ecn.as_ref().map_or(EcnState::Off, |e| e.state()),
        }
    }
    #[inline]
    fn is_established(&self) -> bool {
        Connection::is_established(self)
    }
    #[inline]
    fn is_closed(&self) -> bool {
        Connection::is_closed(self)
    }
    #[inline]
    fn is_quiet(&self) -> bool {
        Connection::is_quiet(self)
    }
}
