//! A connection's counters as it keeps them: the ones nearly every connection changes inline,
//! the rest (losses, extensions, flow-control frames) in the connection's `Rare` box, allocated
//! on first use.
//!
//! An idle connection (a short message now and then) never touches the rare counters, and
//! keeping all 31 of `ConnStats` inline cost 264 B per endpoint. [`Stats::snapshot`] builds
//! the public [`ConnStats`].

use quicksim_engine::SimTime;

use super::connection::RareBox;
use super::niche::Opt;
use super::ConnStats;

/// The counters nearly every connection changes (the meanings are `ConnStats`' fields').
#[derive(Clone, Copy, Debug)]
pub(super) enum Sum {
    PacketsSent,
    BytesSent,
    PacketsReceived,
    BytesReceived,
    PacketsAcked,
    StreamBytesSent,
    StreamBytesDelivered,
    AckFramesSent,
    AckFramesReceived,
    AckOnlyPacketsSent,
    AckFrameBytesSent,
    AckOnlyBytesSent,
    CryptoFramesSent,
}

const SUMS: usize = 13;

/// Counters changed by (nearly) every connection. The sums keep their low 32 bits here and
/// carry the rest into `RareStats::high` ([`count`]): a connection has to send or receive
/// 4 GiB, or 2^32 packets or frames, before a carry, and 4 bytes instead of 8 per counter
/// saved 52 B per endpoint.
#[derive(Clone, Debug, Default)]
pub(super) struct Stats {
    low: [u32; SUMS],
    /// Most ranges in any ACK frame sent (a range count: it fits in 32 bits, since 2^32 ranges
    /// would take 128 GB).
    pub max_ack_ranges_sent: u32,
    pub established_at: Opt<SimTime>,
}

/// Adds `n` to counter `c`, carrying past 32 bits into the rare box.
#[inline]
pub(super) fn count(stats: &mut Stats, rare: &mut RareBox, c: Sum, n: u64) {
    let t = u64::from(stats.low[c as usize]) + n;
    stats.low[c as usize] = t as u32; // the low 32 bits
    if t > u64::from(u32::MAX) {
        carry(rare, c, t >> 32);
    }
}

#[cold]
#[inline(never)]
fn carry(rare: &mut RareBox, c: Sum, high: u64) {
    rare.get_mut().stats.high[c as usize] += high;
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
    /// Bits 32 and up of the `Stats` sums.
    pub high: [u64; SUMS],
}

impl Stats {
    /// The public counters, with the rare ones if they exist. Inlined, so a caller that reads
    /// a few counters (the simulator's congestion-state samples) only copies those.
    #[inline(always)]
    pub fn snapshot(&self, rare: Option<&RareStats>) -> ConnStats {
        let zero = RareStats::default();
        let r = rare.unwrap_or(&zero);
        let sum = |c: Sum| u64::from(self.low[c as usize]) + (r.high[c as usize] << 32);
        ConnStats {
            packets_sent: sum(Sum::PacketsSent),
            bytes_sent: sum(Sum::BytesSent),
            packets_received: sum(Sum::PacketsReceived),
            bytes_received: sum(Sum::BytesReceived),
            packets_dropped: r.packets_dropped,
            packets_acked: sum(Sum::PacketsAcked),
            packets_lost: r.packets_lost,
            spurious_losses: r.spurious_losses,
            stream_bytes_sent: sum(Sum::StreamBytesSent),
            retransmitted_bytes: r.retransmitted_bytes,
            stream_bytes_delivered: sum(Sum::StreamBytesDelivered),
            duplicate_stream_bytes: r.duplicate_stream_bytes,
            ack_frames_sent: sum(Sum::AckFramesSent),
            ack_frames_received: sum(Sum::AckFramesReceived),
            ack_only_packets_sent: sum(Sum::AckOnlyPacketsSent),
            max_ack_ranges_sent: u64::from(self.max_ack_ranges_sent),
            ibit_packets_sent: r.ibit_packets_sent,
            ack_frame_bytes_sent: sum(Sum::AckFrameBytesSent),
            ack_only_bytes_sent: sum(Sum::AckOnlyBytesSent),
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
            crypto_frames_sent: sum(Sum::CryptoFramesSent),
            established_at: self.established_at.get(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_carry_past_32_bits() {
        let (mut s, mut r) = (Stats::default(), RareBox::default());
        count(&mut s, &mut r, Sum::BytesSent, u64::from(u32::MAX));
        assert!(r.get().is_none(), "no carry yet");
        count(&mut s, &mut r, Sum::BytesSent, 2);
        count(&mut s, &mut r, Sum::PacketsSent, 5 << 32 | 7);
        count(&mut s, &mut r, Sum::PacketsSent, 1);
        let c = s.snapshot(r.get().map(|r| &r.stats));
        assert_eq!(c.bytes_sent, u64::from(u32::MAX) + 2);
        assert_eq!(c.packets_sent, 5 << 32 | 8);
        assert_eq!(c.bytes_received, 0);
    }
}
