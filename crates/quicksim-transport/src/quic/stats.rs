//! A connection's counters as it keeps them: the ones nearly every connection changes inline,
//! the rest (losses, extensions, flow-control frames) in the connection's `Rare` box, allocated
//! on first use.
//!
//! An idle connection (a short message now and then) never touches the rare counters, and
//! keeping all 31 of `ConnStats` inline cost 264 B per endpoint. [`Stats::snapshot`] builds
//! the public [`ConnStats`].

use quicksim_engine::SimTime;

use super::niche::Opt;
use super::ConnStats;

/// Counters changed by (nearly) every connection; the field meanings are `ConnStats`'.
#[derive(Clone, Debug, Default)]
pub(super) struct Stats {
    pub packets_sent: u64,
    pub bytes_sent: u64,
    pub packets_received: u64,
    pub bytes_received: u64,
    pub packets_acked: u64,
    pub stream_bytes_sent: u64,
    pub stream_bytes_delivered: u64,
    pub ack_frames_sent: u64,
    pub ack_frames_received: u64,
    pub ack_only_packets_sent: u64,
    pub max_ack_ranges_sent: u64,
    pub ack_frame_bytes_sent: u64,
    pub ack_only_bytes_sent: u64,
    pub crypto_frames_sent: u64,
    pub established_at: Opt<SimTime>,
}

/// Counters most connections never change (kept in the connection's `Rare` box: all zero
/// until it exists).
#[derive(Clone, Debug, Default)]
pub(super) struct RareStats {
    pub packets_dropped: u64,
    pub packets_lost: u64,
    pub spurious_losses: u64,
    pub retransmitted_bytes: u64,
    pub duplicate_stream_bytes: u64,
    pub ibit_packets_sent: u64,
    pub ack_frequency_frames_sent: u64,
    pub immediate_ack_frames_sent: u64,
    pub ack_frequency_frames_applied: u64,
    pub immediate_acks_honoured: u64,
    pub pto_count_total: u64,
    pub congestion_events: u64,
    pub persistent_congestion_events: u64,
    pub max_data_frames_sent: u64,
    pub max_stream_data_frames_sent: u64,
    pub data_blocked_frames_sent: u64,
    pub stream_data_blocked_frames_sent: u64,
}

impl Stats {
    /// The public counters, with the rare ones if they exist. Inlined, so a caller that reads
    /// a few counters (the simulator's congestion-state samples) only copies those.
    #[inline(always)]
    pub fn snapshot(&self, rare: Option<&RareStats>) -> ConnStats {
        let zero = RareStats::default();
        let r = rare.unwrap_or(&zero);
        ConnStats {
            packets_sent: self.packets_sent,
            bytes_sent: self.bytes_sent,
            packets_received: self.packets_received,
            bytes_received: self.bytes_received,
            packets_dropped: r.packets_dropped,
            packets_acked: self.packets_acked,
            packets_lost: r.packets_lost,
            spurious_losses: r.spurious_losses,
            stream_bytes_sent: self.stream_bytes_sent,
            retransmitted_bytes: r.retransmitted_bytes,
            stream_bytes_delivered: self.stream_bytes_delivered,
            duplicate_stream_bytes: r.duplicate_stream_bytes,
            ack_frames_sent: self.ack_frames_sent,
            ack_frames_received: self.ack_frames_received,
            ack_only_packets_sent: self.ack_only_packets_sent,
            max_ack_ranges_sent: self.max_ack_ranges_sent,
            ibit_packets_sent: r.ibit_packets_sent,
            ack_frame_bytes_sent: self.ack_frame_bytes_sent,
            ack_only_bytes_sent: self.ack_only_bytes_sent,
            ack_frequency_frames_sent: r.ack_frequency_frames_sent,
            immediate_ack_frames_sent: r.immediate_ack_frames_sent,
            ack_frequency_frames_applied: r.ack_frequency_frames_applied,
            immediate_acks_honoured: r.immediate_acks_honoured,
            pto_count_total: r.pto_count_total,
            congestion_events: r.congestion_events,
            persistent_congestion_events: r.persistent_congestion_events,
            max_data_frames_sent: r.max_data_frames_sent,
            max_stream_data_frames_sent: r.max_stream_data_frames_sent,
            data_blocked_frames_sent: r.data_blocked_frames_sent,
            stream_data_blocked_frames_sent: r.stream_data_blocked_frames_sent,
            crypto_frames_sent: self.crypto_frames_sent,
            established_at: self.established_at.get(),
        }
    }
}
