//! A connection's counters as it keeps them: the ones nearly every connection changes inline,
//! the rest (losses, extensions, flow-control frames) in the connection's `Rare` box, allocated
//! on first use, as a [`ConnStats`] whose hot fields stay zero.
//!
//! An idle connection (a short message now and then) never touches the rare counters, and
//! keeping all 31 of `ConnStats` inline cost 264 B per endpoint. [`Stats::snapshot`] builds
//! the public [`ConnStats`].

use quicksim_engine::SimTime;
use serde::{Deserialize, Serialize};

use super::niche::Opt;
use super::ConnStats;

/// The counters nearly every connection changes (the meanings are `ConnStats`' fields').
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
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

pub(super) const SUMS: usize = 13;

/// Counters changed by (nearly) every connection. The sums keep their low 32 bits here and
/// carry the rest into `Rare::high` ([`count`]): a connection has to send or receive
/// 4 GiB, or 2^32 packets or frames, before a carry, and 4 bytes instead of 8 per counter
/// saved 52 B per endpoint.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(super) struct Stats {
    low: [u32; SUMS],
    /// Most ranges in any ACK frame sent (a range count: it fits in 32 bits, since 2^32 ranges
    /// would take 128 GB).
    pub max_ack_ranges_sent: u32,
    pub established_at: Opt<SimTime>,
}

/// Where the carries past 32 bits go: the connection's rare box (`rare.rs`), made on first use.
pub(super) trait Carries {
    fn high(&mut self) -> &mut [u64; SUMS];
}

/// Adds `n` to counter `c`, carrying past 32 bits into the rare box.
#[inline]
pub(super) fn count(stats: &mut Stats, rare: &mut impl Carries, c: Sum, n: u64) {
    let t = u64::from(stats.low[c as usize]) + n;
    stats.low[c as usize] = t as u32; // the low 32 bits
    if t > u64::from(u32::MAX) {
        carry(rare, c, t >> 32);
    }
}

#[cold]
#[inline(never)]
fn carry(rare: &mut impl Carries, c: Sum, high: u64) {
    rare.high()[c as usize] += high;
}

impl Stats {
    /// The public counters: the rare ones (`Rare::stats`, if the box exists) with the hot ones
    /// written over them, plus the carries (`Rare::high`). Inlined, so a caller that reads a few
    /// counters (the simulator's congestion-state samples) only copies those.
    #[inline(always)]
    pub fn snapshot(&self, rare: Option<(&ConnStats, &[u64; SUMS])>) -> ConnStats {
        let (mut c, high) = match rare {
            Some((stats, high)) => (stats.clone(), *high),
            None => (ConnStats::default(), [0; SUMS]),
        };
        let sum = |x: Sum| u64::from(self.low[x as usize]) + (high[x as usize] << 32);
        c.packets_sent = sum(Sum::PacketsSent);
        c.bytes_sent = sum(Sum::BytesSent);
        c.packets_received = sum(Sum::PacketsReceived);
        c.bytes_received = sum(Sum::BytesReceived);
        c.packets_acked = sum(Sum::PacketsAcked);
        c.stream_bytes_sent = sum(Sum::StreamBytesSent);
        c.stream_bytes_delivered = sum(Sum::StreamBytesDelivered);
        c.ack_frames_sent = sum(Sum::AckFramesSent);
        c.ack_frames_received = sum(Sum::AckFramesReceived);
        c.ack_only_packets_sent = sum(Sum::AckOnlyPacketsSent);
        c.ack_frame_bytes_sent = sum(Sum::AckFrameBytesSent);
        c.ack_only_bytes_sent = sum(Sum::AckOnlyBytesSent);
        c.crypto_frames_sent = sum(Sum::CryptoFramesSent);
        c.max_ack_ranges_sent = u64::from(self.max_ack_ranges_sent);
        c.established_at = self.established_at.get();
        c
    }
}

#[cfg(test)]
mod tests {
    use super::super::rare::RareBox;
    use super::*;

    #[test]
    fn sums_carry_past_32_bits() {
        let (mut s, mut r) = (Stats::default(), RareBox::default());
        count(&mut s, &mut r, Sum::BytesSent, u64::from(u32::MAX));
        assert!(r.get().is_none(), "no carry yet");
        count(&mut s, &mut r, Sum::BytesSent, 2);
        count(&mut s, &mut r, Sum::PacketsSent, 5 << 32 | 7);
        count(&mut s, &mut r, Sum::PacketsSent, 1);
        r.get_mut().stats.packets_lost = 3; // a rare counter comes through as kept
        let c = s.snapshot(r.get().map(|r| (&r.stats, &r.high)));
        assert_eq!(c.bytes_sent, u64::from(u32::MAX) + 2);
        assert_eq!(c.packets_sent, 5 << 32 | 8);
        assert_eq!(c.bytes_received, 0);
        assert_eq!(c.packets_lost, 3);
    }
}
