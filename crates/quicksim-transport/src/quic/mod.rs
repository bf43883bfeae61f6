//! The QUIC model: a sans-IO reproduction of INET's QUIC (Völker et al., IFIP Networking 2020;
//! `inet/src/inet/transportlayer/quic`), following RFC 9000/9002 where INET deviates by mistake.
//!
//! Split by concern: [`packet`] (frames, sizes, headers), [`ack`] (receiver ACK policy),
//! [`recovery`] (loss detection, RTT, PTO, congestion-control calls), [`streams`] (send and
//! receive queues, scheduler), [`flow_control`], [`handshake`], and the [`Connection`] that
//! ties them together (`connection.rs` for input and timers, `send.rs` for packet assembly,
//! `acked.rs` for what ACKs and losses mean for the frames, `rare.rs` for the rarely needed
//! state, `park.rs` for the compact encoding of idle connections).

pub mod ack;
pub mod ack_frequency;
mod acked;
pub mod config;
mod connection;
mod delivery;
pub mod ecn;
mod endpoint;
pub mod flow_control;
pub mod handshake;
pub mod mp_frames;
pub mod niche;
pub mod packet;
mod park;
pub mod path_sched;
mod path_state;
mod paths;
mod per_space;
/// Moved to the crate root (shared with TCP); kept here so existing paths still work.
pub use crate::range_set;
mod rare;
pub mod recovery;
mod send;
mod sent_packets;
mod stats;
pub mod streams;

use quicksim_engine::SimTime;
use serde::{Deserialize, Serialize};

pub use crate::endpoint::{AppEvent as ConnEvent, Role, TransportMetrics as ConnMetrics};
pub use config::placeholder_config;
pub use config::{
    AckFreqPolicy, AckPolicyKind, HeaderKind, MultipathConfig, MultipathMode, PathConfig, QuicConfig,
    DEFAULT_DCID_LEN,
};
pub use connection::Connection;
pub use packet::{
    AckEcnFrame, AckFrame, AckFrequencyFrame, CryptoFrame, EcnCounts, Frame, HeaderProfile, QuicPacket,
    SpaceId, StreamFrame, TransportParams,
};
pub use path_state::PathCounters;
pub use paths::PathMetrics;
pub use quicksim_cc::CcSpec;
pub use quicksim_engine::compact::encode_into;
pub use streams::{SchedulerKind, StreamScheduler};

/// Counters of one connection (monotonic, except `max_ack_ranges_sent` which is a maximum).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConnStats {
    /// QUIC packets sent, all spaces.
    pub packets_sent: u64,
    /// QUIC bytes sent (UDP payload: headers and frames).
    pub bytes_sent: u64,
    pub packets_received: u64,
    pub bytes_received: u64,
    /// Received packets dropped (duplicate packet number, no keys, discarded space).
    pub packets_dropped: u64,
    /// In-flight packets newly acknowledged.
    pub packets_acked: u64,
    /// In-flight packets declared lost.
    pub packets_lost: u64,
    /// Packets declared lost that were acknowledged later (spurious loss).
    pub spurious_losses: u64,
    /// STREAM payload bytes sent, retransmissions included.
    pub stream_bytes_sent: u64,
    /// STREAM payload bytes sent again (below the highest offset already sent).
    pub retransmitted_bytes: u64,
    /// STREAM payload bytes delivered in order to the application.
    pub stream_bytes_delivered: u64,
    /// STREAM payload bytes received more than once.
    pub duplicate_stream_bytes: u64,
    pub ack_frames_sent: u64,
    pub ack_frames_received: u64,
    pub ack_only_packets_sent: u64,
    /// Most ranges in any ACK frame sent.
    pub max_ack_ranges_sent: u64,
    /// Packets sent with the I-bit.
    pub ibit_packets_sent: u64,
    /// Bytes of the ACK frames sent (frames only; see `ack_only_bytes_sent` for whole packets).
    pub ack_frame_bytes_sent: u64,
    /// QUIC bytes (header + frames) of the ACK-only packets sent.
    pub ack_only_bytes_sent: u64,
    /// ACK_FREQUENCY frames sent (draft-ietf-quic-ack-frequency), retransmissions included.
    pub ack_frequency_frames_sent: u64,
    /// IMMEDIATE_ACK frames sent.
    pub immediate_ack_frames_sent: u64,
    /// ACK_FREQUENCY frames received and applied (newer sequence number, extension enabled).
    pub ack_frequency_frames_applied: u64,
    /// IMMEDIATE_ACK frames received and honoured.
    pub immediate_acks_honoured: u64,
    /// PTO expiries (including anti-deadlock ones).
    pub pto_count_total: u64,
    pub congestion_events: u64,
    pub persistent_congestion_events: u64,
    pub max_data_frames_sent: u64,
    pub max_stream_data_frames_sent: u64,
    pub data_blocked_frames_sent: u64,
    pub stream_data_blocked_frames_sent: u64,
    pub crypto_frames_sent: u64,
    /// When the handshake completed (creation time without a handshake).
    pub established_at: Option<SimTime>,
}
