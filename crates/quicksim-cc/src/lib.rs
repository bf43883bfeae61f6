//! quicksim-cc: congestion control shared by every transport (QUIC now, TCP next).
//!
//! The transport does loss detection and RTT estimation; a controller only decides the window
//! (and, optionally, a pacing rate). Callbacks take event structs so fields can be added without
//! touching every algorithm.

use quicksim_engine::{Rate, SimDuration, SimTime};

pub mod algos;
mod rtt;

pub use rtt::RttEstimator;

/// A packet that was just sent and counts toward bytes in flight.
#[derive(Clone, Copy, Debug)]
pub struct SentPacket {
    pub time: SimTime,
    /// Bytes counted in flight (QUIC: packet size without UDP/IP; TCP: segment size).
    pub bytes: u64,
    /// Bytes in flight after this packet was added.
    pub bytes_in_flight: u64,
    /// The sender had nothing more to send after this packet (application-limited).
    pub app_limited: bool,
}

/// One newly acknowledged in-flight packet. Transports call `on_ack` once per packet,
/// in ascending packet-number order.
#[derive(Clone, Copy, Debug)]
pub struct AckEvent {
    pub now: SimTime,
    /// When the acknowledged packet was sent (used for the recovery period check).
    pub sent_time: SimTime,
    pub bytes: u64,
    /// Bytes in flight after removing this packet.
    pub bytes_in_flight: u64,
    /// The sender was application-limited (cwnd not the constraint) when the ACK arrived.
    pub app_limited: bool,
}

/// Loss (or an ECN-CE mark) of one or more packets, reported once per ACK / timer.
#[derive(Clone, Copy, Debug)]
pub struct CongestionEvent {
    pub now: SimTime,
    /// Send time of the largest lost packet (a loss of a packet sent before the current
    /// recovery period started does not start a new one, RFC 9002 7.3.2).
    pub largest_lost_sent_time: SimTime,
    pub lost_bytes: u64,
    pub bytes_in_flight: u64,
    /// RFC 9002 7.6: persistent congestion collapses the window to the minimum.
    pub persistent_congestion: bool,
}

/// Read-only view of the transport's state a controller may need.
#[derive(Clone, Copy, Debug)]
pub struct CcCtx {
    /// Maximum datagram size in bytes (QUIC: max QUIC packet size; TCP: SMSS).
    pub mds: u64,
    pub smoothed_rtt: SimDuration,
    pub min_rtt: SimDuration,
    pub latest_rtt: SimDuration,
}

/// What a controller exposes for recording (columns of the `conn` table).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CcMetrics {
    pub cwnd_bytes: u64,
    /// `u64::MAX` while unset (slow start without a loss yet).
    pub ssthresh_bytes: u64,
    pub in_recovery: bool,
}

/// serde `with` module for a `u64` that is usually `u64::MAX` (an unset ssthresh): encoded as
/// `value + 1` (wrapping), so the maximum takes 1 byte instead of 10 as a postcard varint.
pub mod serde_max_u64 {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(v: &u64, s: S) -> Result<S::Ok, S::Error> {
        v.wrapping_add(1).serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        Ok(u64::deserialize(d)?.wrapping_sub(1))
    }
}

/// A congestion controller.
pub trait CongestionController: Send {
    fn on_packet_sent(&mut self, _cx: &CcCtx, _p: &SentPacket) {}
    fn on_ack(&mut self, cx: &CcCtx, ack: &AckEvent);
    fn on_congestion_event(&mut self, cx: &CcCtx, ev: &CongestionEvent);
    /// Current congestion window in bytes (`u64::MAX` = unlimited).
    fn cwnd_bytes(&self) -> u64;
    /// Pacing rate, when the algorithm paces (drives the pacer, not only logs).
    fn pacing_rate(&self, _cx: &CcCtx) -> Option<Rate> {
        None
    }
    fn metrics(&self) -> CcMetrics;
    /// Registry name, e.g. "newreno".
    fn name(&self) -> &'static str;
    /// A copy of the whole state, for storing an idle connection compactly
    /// ([`algos::CcSnapshot::restore`] gives the controller back, bit for bit).
    fn snapshot(&self) -> algos::CcSnapshot;
}
