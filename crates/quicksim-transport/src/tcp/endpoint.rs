//! The TCP connection as an [`Endpoint`]: the run loop's calls mapped onto `Connection`.

use super::{Connection, TcpSegment};
use crate::endpoint::{AppEvent, Endpoint, TransportCounters, TransportMetrics};
use quicksim_engine::SimTime;

impl Endpoint for Connection {
    type Packet = TcpSegment;
    /// `size_bytes` is the whole TCP segment; only IP lies below.
    const ENCAP_BYTES: u64 = 0;
    /// A segment is ~180 B (inline SACK blocks and record marks): written in place.
    const TRANSMIT_IN_PLACE: bool = true;

    #[inline]
    fn handle_packet(&mut self, now: SimTime, p: &TcpSegment) {
        Connection::handle_packet(self, now, p)
    }
    #[inline]
    fn handle_timeout(&mut self, now: SimTime) {
        Connection::handle_timeout(self, now)
    }
    #[inline]
    fn poll_transmit(&mut self, now: SimTime) -> Option<TcpSegment> {
        Connection::poll_transmit(self, now)
    }
    #[inline]
    fn poll_transmit_into(&mut self, now: SimTime, out: &mut TcpSegment) -> bool {
        Connection::poll_transmit_into(self, now, out)
    }
    #[inline]
    fn poll_timeout(&self) -> Option<SimTime> {
        Connection::poll_timeout(self)
    }
    #[inline]
    fn poll_event(&mut self) -> Option<AppEvent> {
        Connection::poll_event(self)
    }
    #[inline]
    fn send_space(&self) -> u64 {
        Connection::send_space(self)
    }
    /// TCP has one stream; `stream` is ignored.
    #[inline]
    fn write(&mut self, now: SimTime, _stream: u64, len: u64) -> u64 {
        Connection::write(self, now, len)
    }
    #[inline]
    fn write_whole(&mut self, now: SimTime, _stream: u64, len: u64) -> u64 {
        Connection::write_whole(self, now, len)
    }
    #[inline]
    fn close(&mut self, now: SimTime) {
        Connection::close(self, now)
    }
    fn abort(&mut self, now: SimTime) {
        Connection::abort(self, now)
    }
    #[inline]
    fn metrics(&self) -> TransportMetrics {
        Connection::metrics(self)
    }
    fn counters(&self) -> TransportCounters {
        let s = self.stats();
        TransportCounters {
            packets_sent: s.segments_sent,
            packets_acked: s.segments_acked,
            packets_lost: s.retransmitted_segments,
            retransmitted_bytes: s.retransmitted_bytes,
            timeouts: s.rtos + s.syn_timeouts,
            acks_sent: s.acks_sent,
            ce_received: s.ce_received,
            ecn_congestion_events: s.ecn_reductions,
            ecn_state: self.ecn_state(),
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
