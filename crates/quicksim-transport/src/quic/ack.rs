//! Receiver side of acknowledgements: which packet numbers arrived, when an ACK is owed, and
//! the ACK frame itself (INET `ReceivedPacketsAccountant`, RFC 9000 §13.2).

use quicksim_engine::{SimDuration, SimTime, PS_PER_US};
use serde::{Deserialize, Serialize};

use super::niche::Opt;
use super::packet::{varint_len, AckFrame};
use super::range_set::RangeSet;

/// Receiver ACK policy of one packet number space.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct AckPolicy {
    /// ACK at once after this many ack-eliciting packets (RFC 9000 §13.2.2).
    pub ack_ratio: u64,
    /// Delayed-ACK timer.
    pub max_ack_delay: SimDuration,
    /// ACK every ack-eliciting packet at once (Initial and Handshake spaces, RFC 9000 §13.2.1).
    pub always_immediate: bool,
    /// draft-ietf-quic-ack-frequency §6.2: 1 = ACK at once on any out-of-order packet (RFC 9000
    /// §13.2.1, the default); 0 = never because of reordering; k > 1 = once a packet is missing
    /// at least k below the largest received.
    pub reordering_threshold: u64,
}

/// How a received packet number relates to what was seen before.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Arrival {
    /// First time seen: process it.
    New,
    /// Seen before: drop it.
    Duplicate,
    /// Below the tracked window (ranges were dropped): process its frames but don't ack it.
    Untracked,
}

/// ACK state of one packet number space.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct AckManager {
    received: RangeSet,
    /// Packet numbers below this are no longer tracked (ack-of-ack or the range bound).
    lowest_tracked: u64,
    largest: Opt<u64>,
    largest_recv_time: SimTime,
    largest_ack_eliciting: Opt<u64>,
    eliciting_since_ack: u64,
    /// Some ack-eliciting packet has not been acknowledged yet.
    unacked_eliciting: bool,
    /// Some packet (of any kind) has not been acknowledged yet.
    new_info: bool,
    immediate: bool,
    deadline: Opt<SimTime>,
    /// `max_ack_ranges`, saturated to u32 (a set of 2^32 ranges would need 128 GB).
    max_ranges: u32,
    /// Smallest packet number found missing since the last ACK (for reordering thresholds > 1).
    unreported_gap: Opt<u64>,
}

impl AckManager {
    pub fn new(max_ranges: usize) -> Self {
        AckManager {
            received: RangeSet::new(),
            lowest_tracked: 0,
            largest: Opt::NONE,
            largest_recv_time: SimTime::ZERO,
            largest_ack_eliciting: Opt::NONE,
            eliciting_since_ack: 0,
            unacked_eliciting: false,
            new_info: false,
            immediate: false,
            deadline: Opt::NONE,
            max_ranges: u32::try_from(max_ranges).unwrap_or(u32::MAX),
            unreported_gap: Opt::NONE,
        }
    }

    /// Classifies `pn` without recording it.
    pub fn classify(&self, pn: u64) -> Arrival {
        if pn < self.lowest_tracked {
            Arrival::Untracked
        } else if self.received.contains(pn) {
            Arrival::Duplicate
        } else {
            Arrival::New
        }
    }

    /// Records a newly received packet and decides whether an ACK is owed at once. `ack_now`:
    /// the sender asked for an immediate ACK (the I-bit, or an IMMEDIATE_ACK frame).
    pub fn on_packet(&mut self, now: SimTime, pn: u64, ack_eliciting: bool, ack_now: bool, p: &AckPolicy) {
        debug_assert_eq!(self.classify(pn), Arrival::New);
        let prev_largest = self.largest.get();
        self.received.insert(pn, pn + 1);
        while self.received.len() > self.max_ranges as usize {
            // RFC 9000 §13.2.4: the oldest ranges may be dropped.
            let (_, e) = self.received.pop_first().expect("non-empty");
            self.lowest_tracked = e;
        }
        if !matches!(prev_largest, Some(l) if pn <= l) {
            self.largest = Opt::some(pn);
            self.largest_recv_time = now;
        }
        self.new_info = true;
        if !ack_eliciting {
            return;
        }
        self.unacked_eliciting = true;
        self.eliciting_since_ack += 1;
        // RFC 9000 §13.2.1: at once when out of order (below the largest seen) or when it
        // opens a new gap (above largest + 1); INET additionally acks after N packets and,
        // with the I-bit extension, when the sender asks for it.
        let expected = prev_largest.map_or(self.lowest_tracked, |l| l + 1);
        if self.unreported_gap.get().is_some_and(|g| self.received.contains(g)) {
            self.unreported_gap = Opt::NONE; // the hole was filled
        }
        if pn > expected && self.unreported_gap.is_none() {
            self.unreported_gap = Opt::some(expected);
        }
        let out_of_order = match p.reordering_threshold {
            0 => false,
            1 => pn < expected.saturating_sub(1) || pn > expected,
            // draft-ietf-quic-ack-frequency §6.2: the largest received is at least k above a
            // packet still missing (a late arrival below the largest alone does not count).
            k => self.unreported_gap.get().is_some_and(|g| self.largest.get().unwrap_or(0) >= g + k),
        };
        if p.always_immediate || out_of_order || self.eliciting_since_ack >= p.ack_ratio || ack_now {
            self.immediate = true;
        } else if self.deadline.is_none() {
            self.deadline = Opt::some(now + p.max_ack_delay);
        }
        if !matches!(self.largest_ack_eliciting.get(), Some(l) if pn <= l) {
            self.largest_ack_eliciting = Opt::some(pn);
        }
    }

    /// An ACK must go out now (immediately or the delayed-ACK timer expired).
    pub fn ack_due(&self, now: SimTime) -> bool {
        self.unacked_eliciting && (self.immediate || self.deadline.get().is_some_and(|d| d <= now))
    }

    /// An ACK frame is worth bundling into a packet that is sent anyway (INET §2.4).
    pub fn wants_bundle(&self, bundle_non_eliciting: bool) -> bool {
        self.unacked_eliciting || (bundle_non_eliciting && self.new_info)
    }

    /// Delayed-ACK timer, while one is pending.
    pub fn deadline(&self) -> Option<SimTime> {
        if self.unacked_eliciting && !self.immediate {
            self.deadline.get()
        } else {
            None
        }
    }

    /// Builds an ACK frame of at most `budget` bytes and resets the ACK triggers; returns it
    /// with its largest acknowledged and its size (`AckFrame::size`), known here without
    /// reading the frame back (the sender's read of the returned frame waited on the stores
    /// that had just written it: a store-forwarding stall per ACK sent).
    pub fn build(&mut self, now: SimTime, exponent: u8, budget: u64) -> Option<(AckFrame, u64, u64)> {
        if self.received.is_empty() {
            return None;
        }
        let delay_us = now.saturating_sub(self.largest_recv_time).ps() / PS_PER_US;
        let ack_delay = delay_us >> exponent;
        let mut frame = AckFrame { ranges: Default::default(), ack_delay };
        // The frame size is kept incrementally (`AckFrame::size` walks every range, and calling
        // it per added range made this loop quadratic): `body` is everything but the
        // range-count varint, which is added when checking against the budget.
        let mut body = 0;
        let mut prev_smallest = 0;
        let mut largest = 0;
        for (s, e) in self.received.iter().rev() {
            let l = e - 1;
            let add = if frame.ranges.is_empty() {
                1 + varint_len(l) + varint_len(ack_delay) + varint_len(l - s)
            } else {
                varint_len(prev_smallest - l - 2) + varint_len(l - s)
            };
            let n = frame.ranges.len() + 1;
            if n > self.max_ranges as usize || body + add + varint_len(n as u64 - 1) > budget {
                break;
            }
            if n == 1 {
                largest = l;
            }
            body += add;
            prev_smallest = s;
            frame.ranges.push((s, l));
        }
        if frame.ranges.is_empty() {
            return None;
        }
        let size = body + varint_len(frame.ranges.len() as u64 - 1);
        debug_assert_eq!(size, frame.size());
        debug_assert_eq!(largest, frame.largest());
        self.eliciting_since_ack = 0;
        self.unacked_eliciting = false;
        self.new_info = false;
        self.immediate = false;
        self.deadline = Opt::NONE;
        self.unreported_gap = Opt::NONE;
        Some((frame, largest, size))
    }

    /// The peer acknowledged a packet of ours that carried an ACK frame up to `largest`:
    /// stop acknowledging anything below it (RFC 9000 §13.2.4, INET "ack of ack").
    pub fn on_ack_of_ack(&mut self, largest: u64) {
        if largest > self.lowest_tracked {
            self.received.remove_below(largest);
            self.lowest_tracked = largest;
        }
    }

    /// Number of ranges currently tracked.
    pub fn range_count(&self) -> usize {
        self.received.len()
    }

    /// Largest packet number received so far.
    pub fn largest(&self) -> Option<u64> {
        self.largest.get()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(n: u64) -> AckPolicy {
        AckPolicy {
            ack_ratio: n,
            max_ack_delay: SimDuration::from_millis(25),
            always_immediate: false,
            reordering_threshold: 1,
        }
    }

    #[test]
    fn ack_ratio_and_timer() {
        let mut a = AckManager::new(64);
        let p = policy(2);
        let t0 = SimTime::from_millis(1);
        a.on_packet(t0, 0, true, false, &p);
        assert!(!a.ack_due(t0));
        assert_eq!(a.deadline(), Some(t0 + SimDuration::from_millis(25)));
        assert!(a.ack_due(SimTime::from_millis(26)));
        a.on_packet(t0, 1, true, false, &p);
        assert!(a.ack_due(t0));
        let (f, largest, size) = a.build(SimTime::from_millis(2), 3, 1000).unwrap();
        assert_eq!(f.ranges[..], [(0, 1)]);
        // type + largest 1 + delay 125 (2 B) + range count + first range 1.
        assert_eq!((largest, size), (1, 6));
        assert_eq!(f.ack_delay, 1000 >> 3);
        assert!(!a.ack_due(SimTime::from_millis(100)));
    }

    #[test]
    fn gap_and_reorder_ack_at_once_and_ibit() {
        let mut a = AckManager::new(64);
        let p = policy(10);
        let t = SimTime::ZERO;
        a.on_packet(t, 0, true, false, &p);
        a.build(t, 3, 1000);
        a.on_packet(t, 2, true, false, &p); // gap
        assert!(a.ack_due(t));
        a.build(t, 3, 1000);
        a.on_packet(t, 1, true, false, &p); // reordered
        assert!(a.ack_due(t));
        a.build(t, 3, 1000);
        a.on_packet(t, 3, true, true, &p); // I-bit
        assert!(a.ack_due(t));
        a.build(t, 3, 1000);
        a.on_packet(t, 4, false, false, &p); // not ack-eliciting
        assert!(!a.ack_due(SimTime::from_secs(1)));
        assert!(a.wants_bundle(true) && !a.wants_bundle(false));
        assert_eq!(a.classify(4), Arrival::Duplicate);
    }

    /// An ACK_FREQUENCY threshold of T means an ACK after more than T packets: T = 9 gives one
    /// ACK per 10 packets, and the requested delay replaces the timer.
    #[test]
    fn threshold_changes_the_ack_count() {
        let count = |ratio: u64| {
            let mut a = AckManager::new(64);
            let p = AckPolicy { max_ack_delay: SimDuration::from_millis(5), ..policy(ratio) };
            let mut acks = 0;
            for pn in 0..100 {
                let t = SimTime::ZERO + SimDuration::from_micros(pn * 10);
                a.on_packet(t, pn, true, false, &p);
                if a.ack_due(t) {
                    a.build(t, 3, 1000);
                    acks += 1;
                }
            }
            (acks, a.deadline())
        };
        assert_eq!(count(1).0, 100);
        assert_eq!(count(2).0, 50);
        assert_eq!(count(10).0, 10);
        let (n, d) = count(7); // 98 packets in 14 ACKs, 2 wait for the 5 ms timer
        assert_eq!(n, 14);
        assert_eq!(d, Some(SimTime::ZERO + SimDuration::from_micros(980) + SimDuration::from_millis(5)));
    }

    #[test]
    fn reordering_threshold() {
        let run = |k: u64, pns: &[u64]| {
            let mut a = AckManager::new(64);
            let p = AckPolicy { reordering_threshold: k, ..policy(100) };
            pns.iter()
                .map(|&pn| {
                    a.on_packet(SimTime::ZERO, pn, true, false, &p);
                    let due = a.ack_due(SimTime::ZERO);
                    if due {
                        a.build(SimTime::ZERO, 3, 1000);
                    }
                    due
                })
                .collect::<Vec<_>>()
        };
        // pn 2 is missing.
        assert_eq!(run(1, &[0, 1, 3, 4, 5]), [false, false, true, false, false]);
        assert_eq!(run(0, &[0, 1, 3, 4, 5]), [false; 5]);
        // k = 3: ACK once the largest is 3 above the missing pn 2, i.e. at pn 5.
        assert_eq!(run(3, &[0, 1, 3, 4, 5, 6]), [false, false, false, false, true, false]);
        // The hole filled before reaching the threshold: no immediate ACK.
        assert_eq!(run(3, &[0, 1, 3, 2, 4, 5]), [false; 6]);
    }

    #[test]
    fn ranges_are_bounded_and_trimmed() {
        let mut a = AckManager::new(4);
        let p = policy(2);
        for pn in (0..40).step_by(2) {
            a.on_packet(SimTime::ZERO, pn, true, false, &p);
            assert!(a.range_count() <= 4);
        }
        let (f, largest, size) = a.build(SimTime::ZERO, 3, 10_000).unwrap();
        assert_eq!(f.ranges.len(), 4);
        // type + largest 38 + delay 0 + count + first range + 3 x (gap, range).
        assert_eq!((largest, size, f.size()), (38, 11, 11));
        assert_eq!(f.ranges[0], (38, 38));
        assert_eq!(a.classify(0), Arrival::Untracked);
        a.on_ack_of_ack(36);
        assert_eq!(a.range_count(), 2);
        // A budget too small for a second range keeps only the first.
        let (f, largest, size) = a.build(SimTime::ZERO, 3, 6).unwrap();
        assert_eq!(f.ranges[..], [(38, 38)]);
        assert_eq!((largest, size), (38, 5));
    }
}
