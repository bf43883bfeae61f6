//! The sender's retransmission queue and SACK scoreboard (RFC 6675 §3–4, RFC 2018).
//!
//! Every data (or FIN) segment sent and not yet cumulatively acknowledged is kept with three
//! marks: SACKed, lost, retransmitted. Counters of each kept up to date make RFC 6675's
//! `pipe` O(1), as Linux does (`packets_out − sacked_out − lost_out + retrans_out`, in bytes
//! here): an octet counts once if not SACKed and not lost, and once more if retransmitted.
//!
//! Work per ACK stays small whatever the window: SACK blocks are applied only to the gaps of
//! the already-SACKed ranges, the loss mark (`IsLost`) only moves forward, and the search for
//! the next segment to retransmit (`NextSeg` rule 1) resumes where it stopped (and, without
//! loss, costs one comparison: it runs on every transmit attempt).

use quicksim_cc::PacketRate;
use quicksim_engine::{SimDuration, SimTime};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

use crate::range_set::RangeSet;

/// Segment marks.
pub const SACKED: u8 = 1;
/// Considered lost (IsLost, the first segment at fast retransmit, or everything at an RTO).
pub const LOST: u8 = 2;
/// A retransmission of it is outstanding (counts in `pipe` again).
pub const RETRANS: u8 = 4;
/// Sent more than once at some point (Karn's rule: no RTT sample from its ACK).
pub const EVER_RETRANS: u8 = 8;
/// Carries the FIN.
pub const FIN_SEG: u8 = 16;

/// A segment in the retransmission queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SentSeg {
    pub seq: u64,
    /// Sequence space (payload, plus one for a FIN).
    pub len: u32,
    pub marks: u8,
    /// Time of the latest (re)transmission.
    pub sent: SimTime,
    /// The delivery state at the latest (re)transmission, for the rate sample of its ACK.
    pub rate: PacketRate,
}

impl SentSeg {
    pub fn end(&self) -> u64 {
        self.seq + self.len as u64
    }
    pub fn has(&self, m: u8) -> bool {
        self.marks & m != 0
    }
    /// Payload bytes (the FIN is not a byte of data).
    pub fn payload(&self) -> u64 {
        self.len as u64 - u64::from(self.has(FIN_SEG))
    }
}

/// The retransmission queue with its SACK state.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Scoreboard {
    segs: VecDeque<SentSeg>,
    /// Sequence bytes outstanding (SND.MAX − SND.UNA over the data segments).
    out: u64,
    /// Of those: SACKed; lost and not SACKed; retransmitted, not SACKed and outstanding.
    sacked: u64,
    lost: u64,
    retrans: u64,
    /// Sequence bytes ever marked lost (for the rate samples' loss counts).
    lost_total: u64,
    /// The SACKed sequence ranges (whole segments).
    sacked_set: RangeSet,
    /// Every un-SACKed segment below this is marked lost (with RFC 6675's `IsLost`; with RACK,
    /// whose marks need not be contiguous, only: no lost segment lies at or above it).
    lost_high: u64,
    /// No lost, un-retransmitted segment lies below this (NextSeg resumes here).
    retx_next: u64,
}

impl Scoreboard {
    pub fn is_empty(&self) -> bool {
        self.segs.is_empty()
    }
    /// Segments in the queue.
    pub fn len(&self) -> usize {
        self.segs.len()
    }
    pub fn first(&self) -> Option<&SentSeg> {
        self.segs.front()
    }
    pub fn iter(&self) -> impl Iterator<Item = &SentSeg> {
        self.segs.iter()
    }
    pub fn out_bytes(&self) -> u64 {
        self.out
    }
    pub fn sacked_bytes(&self) -> u64 {
        self.sacked
    }
    pub fn lost_bytes(&self) -> u64 {
        self.lost
    }
    /// Sequence bytes ever marked lost.
    pub fn lost_total(&self) -> u64 {
        self.lost_total
    }
    pub fn retrans_bytes(&self) -> u64 {
        self.retrans
    }
    /// RFC 6675 §4 `pipe`: bytes the sender believes are in the network.
    pub fn pipe(&self) -> u64 {
        self.out - self.sacked - self.lost + self.retrans
    }
    /// Highest SACKed sequence number plus one (0 without SACKs).
    pub fn high_sacked(&self) -> u64 {
        self.sacked_set.last().map_or(0, |r| r.1)
    }
    /// The segment starting at `seq`, if any.
    pub fn get(&self, seq: u64) -> Option<&SentSeg> {
        let i = self.index_of(seq);
        self.segs.get(i).filter(|s| s.seq == seq)
    }

    /// Index of the first segment with `seq >= x`.
    fn index_of(&self, x: u64) -> usize {
        self.segs.partition_point(|s| s.seq < x)
    }

    /// A new segment `[seq, seq + len)` was sent at `now`.
    pub fn push(&mut self, seq: u64, len: u32, fin: bool, now: SimTime, rate: PacketRate) {
        debug_assert!(self.segs.back().is_none_or(|b| b.end() == seq), "segments must be contiguous");
        let marks = if fin { FIN_SEG } else { 0 };
        self.segs.push_back(SentSeg { seq, len, marks, sent: now, rate });
        self.out += len as u64;
    }

    /// Removes everything below `ack` (a cumulative ACK), calling `f` for each segment that
    /// was not SACKed before (newly delivered). A segment split by `ack` is trimmed.
    pub fn ack_to(&mut self, ack: u64, mut f: impl FnMut(&SentSeg)) {
        while let Some(front) = self.segs.front() {
            if front.seq >= ack {
                break;
            }
            if front.end() > ack {
                let s = *front;
                // Partly acknowledged (never with fixed segments; kept for robustness).
                let cut = ack - s.seq;
                let front = self.segs.front_mut().expect("exists");
                self.out -= cut;
                if s.has(SACKED) {
                    self.sacked -= cut;
                } else {
                    if s.has(LOST) {
                        self.lost -= cut;
                    }
                    if s.has(RETRANS) {
                        self.retrans -= cut;
                    }
                    f(&SentSeg { len: cut as u32, marks: s.marks & !FIN_SEG, ..s });
                }
                front.seq = ack;
                front.len -= cut as u32;
                break;
            }
            let s = self.segs.pop_front().expect("exists");
            let len = s.len as u64;
            self.out -= len;
            if s.has(SACKED) {
                self.sacked -= len;
            } else {
                if s.has(LOST) {
                    self.lost -= len;
                }
                if s.has(RETRANS) {
                    self.retrans -= len;
                }
                f(&s);
            }
        }
        if !self.sacked_set.is_empty() {
            self.sacked_set.remove_below(ack);
        }
        self.lost_high = self.lost_high.max(ack);
        self.retx_next = self.retx_next.max(ack);
    }

    /// Applies SACK blocks (RFC 2018): marks every segment wholly inside a block, calling `f`
    /// for each newly SACKed one. Returns the bytes newly SACKed.
    pub fn on_sack(&mut self, blocks: &[(u64, u64)], mut f: impl FnMut(&SentSeg)) -> u64 {
        let (lo, hi) = match (self.segs.front(), self.segs.back()) {
            (Some(a), Some(b)) => (a.seq, b.end()),
            _ => return 0,
        };
        let mut newly = 0;
        for &(s, e) in blocks {
            let (s, e) = (s.max(lo), e.min(hi));
            if s >= e {
                continue; // below SND.UNA (a D-SACK or an old block) or beyond SND.MAX
            }
            // The parts of [s, e) not SACKed yet.
            let mut gaps: smallvec::SmallVec<[(u64, u64); 4]> = smallvec::SmallVec::new();
            let mut at = s;
            for (a, b) in self.sacked_set.iter() {
                if b <= at {
                    continue;
                }
                if a >= e {
                    break;
                }
                if a > at {
                    gaps.push((at, a));
                }
                at = at.max(b);
            }
            if at < e {
                gaps.push((at, e));
            }
            for (g0, g1) in gaps {
                let mut i = self.index_of(g0);
                while let Some(seg) = self.segs.get_mut(i) {
                    if seg.seq >= g1 || seg.end() > e {
                        break;
                    }
                    if !seg.has(SACKED) {
                        let len = seg.len as u64;
                        if seg.has(LOST) {
                            self.lost -= len;
                        }
                        if seg.has(RETRANS) {
                            self.retrans -= len;
                        }
                        seg.marks = (seg.marks & !(LOST | RETRANS)) | SACKED;
                        self.sacked += len;
                        newly += len;
                        let copy = *seg;
                        self.sacked_set.insert(copy.seq, copy.end());
                        f(&copy);
                    }
                    i += 1;
                }
            }
        }
        newly
    }

    /// RFC 6675 §4 `IsLost` applied to the queue: an un-SACKed segment is lost once at least
    /// `dupthresh` SACKed segments, or more than (dupthresh − 1)·SMSS SACKed bytes, lie above
    /// it. Marks the newly lost ones; returns the bytes newly marked.
    pub fn mark_lost(&mut self, dupthresh: u64, smss: u64) -> u64 {
        let top = self.high_sacked();
        if top <= self.lost_high {
            return 0;
        }
        // Walk down from the highest SACKed segment until the threshold is met.
        let mut i = self.index_of(top);
        let (mut count, mut bytes) = (0u64, 0u64);
        let mut boundary = None;
        while i > 0 {
            i -= 1;
            let s = &self.segs[i];
            if s.seq < self.lost_high {
                break;
            }
            if s.has(SACKED) {
                count += 1;
                bytes += s.len as u64;
                if count >= dupthresh || bytes > (dupthresh - 1) * smss {
                    boundary = Some(s.seq);
                    break;
                }
            }
        }
        let boundary = match boundary {
            Some(b) => b,
            // The threshold lies below lost_high: count what is already known above it.
            None => return 0,
        };
        self.mark_lost_below(boundary)
    }

    /// Marks every un-SACKed segment in `[lost_high, boundary)` lost.
    fn mark_lost_below(&mut self, boundary: u64) -> u64 {
        let mut newly = 0;
        let mut i = self.index_of(self.lost_high);
        while let Some(s) = self.segs.get_mut(i) {
            if s.seq >= boundary {
                break;
            }
            if !s.has(SACKED | LOST) {
                s.marks |= LOST;
                self.lost += s.len as u64;
                self.lost_total += s.len as u64;
                newly += s.len as u64;
                if s.has(RETRANS) {
                    s.marks &= !RETRANS;
                    self.retrans -= s.len as u64;
                }
            }
            i += 1;
        }
        self.lost_high = self.lost_high.max(boundary);
        newly
    }

    /// Marks the first segment lost (fast retransmit without SACK, RFC 6582 partial ACKs, or
    /// the retransmission at fast-retransmit entry, RFC 6675 §5 step 4.2).
    pub fn mark_first_lost(&mut self) -> bool {
        let Some(s) = self.segs.front_mut() else { return false };
        if s.has(SACKED) || (s.has(LOST) && !s.has(RETRANS)) {
            return false; // SACKed, or already waiting for its retransmission
        }
        if s.has(RETRANS) {
            // Its retransmission is deemed lost too (a partial ACK did not cover it).
            s.marks &= !RETRANS;
            self.retrans -= s.len as u64;
        }
        if !s.has(LOST) {
            s.marks |= LOST;
            self.lost += s.len as u64;
            self.lost_total += s.len as u64;
        }
        let (seq, end) = (s.seq, s.end());
        self.retx_next = self.retx_next.min(seq);
        self.lost_high = self.lost_high.max(end);
        true
    }

    /// RTO (RFC 6298 §5.4, RFC 6675 §5.1): every un-SACKed segment is lost, retransmissions
    /// included; SACK marks are kept (Linux `tcp_enter_loss`, RFC 6675 §5.1 allows it).
    pub fn mark_all_lost(&mut self) {
        for s in self.segs.iter_mut() {
            if s.has(SACKED) {
                continue;
            }
            if s.has(RETRANS) {
                s.marks &= !RETRANS;
                self.retrans -= s.len as u64;
            }
            if !s.has(LOST) {
                s.marks |= LOST;
                self.lost += s.len as u64;
                self.lost_total += s.len as u64;
            }
        }
        self.lost_high = self.segs.back().map_or(0, |s| s.end());
        self.retx_next = self.segs.front().map_or(0, |s| s.seq);
    }

    /// RFC 6675 §4 NextSeg rule 1: the lowest lost segment not yet retransmitted.
    pub fn next_lost(&mut self) -> Option<SentSeg> {
        if self.retx_next >= self.lost_high {
            // Nothing lost waits below `lost_high` (the case without loss): no search. The same
            // `retx_next` as the search below would leave (it stops at the first segment).
            self.retx_next = self.lost_high;
            return None;
        }
        let mut i = self.index_of(self.retx_next);
        while let Some(s) = self.segs.get(i) {
            if s.seq >= self.lost_high {
                break;
            }
            if s.has(LOST) && !s.has(RETRANS | SACKED) {
                self.retx_next = s.seq;
                return Some(*s);
            }
            i += 1;
        }
        self.retx_next = self.segs.get(i).map_or(self.lost_high, |s| s.seq.min(self.lost_high));
        None
    }

    /// RACK (RFC 8985 §6.2 step 5, Linux `tcp_rack_detect_loss`): every segment sent before the
    /// one RACK holds (sent at `xmit_ts`, ending at `end_seq`; a later end breaks a tie) that is
    /// neither SACKed nor waiting for its retransmission is lost once `wait` (RACK.rtt +
    /// RACK.reo_wnd) has passed since it was sent; a retransmission that was lost again is
    /// marked too. Returns the bytes newly marked and the longest time still to wait for one
    /// that was not yet (the reordering timer, §6.3).
    pub fn rack_mark_lost(
        &mut self,
        now: SimTime,
        xmit_ts: SimTime,
        end_seq: u64,
        wait: SimDuration,
    ) -> (u64, Option<SimDuration>) {
        let (mut newly, mut longest) = (0, None::<SimDuration>);
        for s in self.segs.iter_mut() {
            if s.has(SACKED) || (s.has(LOST) && !s.has(RETRANS)) {
                continue;
            }
            if !(xmit_ts > s.sent || (xmit_ts == s.sent && end_seq > s.end())) {
                // Sent after RACK's segment. Segments never retransmitted went out in sequence
                // order, and a later segment's retransmission after its first transmission: so
                // everything above one never retransmitted was sent later still.
                if s.has(EVER_RETRANS) {
                    continue;
                }
                break;
            }
            let waited = now - s.sent;
            if waited >= wait {
                let len = s.len as u64;
                if s.has(RETRANS) {
                    s.marks &= !RETRANS;
                    self.retrans -= len;
                }
                if !s.has(LOST) {
                    s.marks |= LOST;
                    self.lost += len;
                }
                // A retransmission lost again is a loss again (for the rate samples).
                self.lost_total += len;
                newly += len;
                self.retx_next = self.retx_next.min(s.seq);
                self.lost_high = self.lost_high.max(s.end());
            } else {
                longest = Some(longest.map_or(wait - waited, |l| l.max(wait - waited)));
            }
        }
        (newly, longest)
    }

    /// The highest segment not SACKed (what a tail loss probe sends again), if any.
    pub fn last_unsacked(&self) -> Option<SentSeg> {
        self.segs.iter().rev().find(|s| !s.has(SACKED)).copied()
    }

    /// The segment at `seq` was retransmitted at `now`.
    pub fn on_retransmit(&mut self, seq: u64, now: SimTime, rate: PacketRate) {
        let i = self.index_of(seq);
        let s = &mut self.segs[i];
        debug_assert_eq!(s.seq, seq);
        if !s.has(RETRANS) {
            self.retrans += s.len as u64;
        }
        let was_lost = s.has(LOST);
        s.marks |= RETRANS | EVER_RETRANS;
        s.sent = now;
        s.rate = rate;
        // NextSeg resumes above a lost segment resent; a tail loss probe (RFC 8985 §7.3) resends
        // one not marked lost, which leaves the search where it was.
        if was_lost {
            self.retx_next = self.retx_next.max(s.end());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    /// Ten segments of 1000 B from seq 1.
    fn board() -> Scoreboard {
        let mut b = Scoreboard::default();
        for i in 0..10 {
            b.push(1 + i * MSS, MSS as u32, false, SimTime::from_millis(i), PacketRate::default());
        }
        b
    }

    fn seg(i: u64) -> (u64, u64) {
        (1 + i * MSS, 1 + (i + 1) * MSS)
    }

    #[test]
    fn sack_marks_whole_segments_and_pipe_follows() {
        let mut b = board();
        assert_eq!(b.pipe(), 10_000);
        // Segment 2 lost; 3, 4, 5 SACKed as one block.
        let mut seen = vec![];
        let n = b.on_sack(&[(seg(3).0, seg(5).1)], |s| seen.push(s.seq));
        assert_eq!(n, 3000);
        assert_eq!(seen, vec![3001, 4001, 5001]);
        assert_eq!(b.pipe(), 7_000);
        // The same block again adds nothing; a block with a partial segment marks only whole ones.
        assert_eq!(b.on_sack(&[(seg(3).0, seg(5).1)], |_| panic!()), 0);
        assert_eq!(b.on_sack(&[(seg(6).0, seg(6).0 + 500)], |_| panic!()), 0);
        // IsLost: three SACKed segments above 0, 1 and 2 → all three lost (3·1000 > 2·1000).
        assert_eq!(b.mark_lost(3, MSS), 3000);
        assert_eq!(b.pipe(), 4_000); // 6..9 only
                                     // NextSeg rule 1 returns them in order; each retransmission counts in pipe again.
        for i in 0..3 {
            let s = b.next_lost().unwrap();
            assert_eq!(s.seq, seg(i).0);
            b.on_retransmit(s.seq, SimTime::from_millis(50), PacketRate::default());
        }
        assert!(b.next_lost().is_none());
        assert_eq!(b.pipe(), 7_000);
        // Cumulative ACK to the end of segment 5: 0, 1, 2 newly delivered, 3..5 were SACKed.
        let mut acked = vec![];
        b.ack_to(seg(5).1, |s| acked.push((s.seq, s.has(EVER_RETRANS))));
        assert_eq!(acked, vec![(1, true), (1001, true), (2001, true)]);
        assert_eq!((b.out_bytes(), b.sacked_bytes(), b.lost_bytes(), b.retrans_bytes()), (4000, 0, 0, 0));
        assert_eq!(b.pipe(), 4_000);
    }

    #[test]
    fn is_lost_needs_dupthresh_segments_above() {
        let mut b = board();
        // Only two SACKed segments (1 and 2): 2000 B is not more than 2·1000 B → nothing lost.
        b.on_sack(&[(seg(1).0, seg(2).1)], |_| {});
        assert_eq!(b.mark_lost(3, MSS), 0);
        // A third, separate block (segment 4): segment 0 has 3 SACKed segments above → lost;
        // segment 3 has only one above it → not lost.
        b.on_sack(&[(seg(4).0, seg(4).1), (seg(1).0, seg(2).1)], |_| {});
        assert_eq!(b.mark_lost(3, MSS), 1000);
        assert!(b.first().unwrap().has(LOST));
        assert!(!b.get(seg(3).0).unwrap().has(LOST));
        // Two more above segment 3 (5 and 6): now 4, 5, 6 are three above it.
        b.on_sack(&[(seg(5).0, seg(6).1)], |_| {});
        assert_eq!(b.mark_lost(3, MSS), 1000);
        assert!(b.get(seg(3).0).unwrap().has(LOST));
        assert_eq!(b.next_lost().unwrap().seq, seg(0).0);
    }

    #[test]
    fn rack_marks_by_send_time_and_finds_a_lost_retransmission() {
        // Segment i sent at i ms; segment 5 SACKed: RACK holds it (sent 5 ms). At 60 ms with
        // RACK.rtt + reo_wnd = 57 ms, segments 0..3 (waited 60..57 ms) are lost, segment 4
        // (56 ms) is due in 1 ms; 6..9 were sent after RACK's segment.
        let mut b = board();
        b.on_sack(&[seg(5)], |_| {});
        let ms = SimTime::from_millis;
        let (lost, wait) = b.rack_mark_lost(ms(60), ms(5), seg(5).1, SimDuration::from_millis(57));
        assert_eq!((lost, wait), (4000, Some(SimDuration::from_millis(1))));
        assert_eq!((b.lost_bytes(), b.pipe()), (4000, 5000));
        // Segment 0 resent at 70 ms; RACK later holds segment 9's delivery (sent 9 ms): the
        // retransmission was sent after it, so it is not lost; 4, 6, 7 and 8 (sent before 9,
        // 72-76 ms ago) now are.
        let s = b.next_lost().unwrap();
        b.on_retransmit(s.seq, ms(70), PacketRate::default());
        assert_eq!(b.pipe(), 6000);
        b.on_sack(&[seg(9)], |_| {});
        let (lost, _) = b.rack_mark_lost(ms(80), ms(9), seg(9).1, SimDuration::from_millis(20));
        assert_eq!(lost, 4000);
        assert!(b.get(seg(4).0).unwrap().has(LOST) && b.get(seg(0).0).unwrap().has(RETRANS));
        // Something sent after the retransmission is delivered (RACK at 75 ms): the
        // retransmission, 20 ms old at 90 ms, is lost again; it was counted lost once (8000 B
        // lost in all), leaves pipe as a retransmission, and NextSeg offers it once more.
        let (lost, _) = b.rack_mark_lost(ms(90), ms(75), seg(9).1, SimDuration::from_millis(20));
        assert_eq!(lost, 1000);
        assert_eq!((b.lost_bytes(), b.retrans_bytes(), b.pipe()), (8000, 0, 0));
        assert_eq!(b.next_lost().unwrap().seq, seg(0).0);
    }

    #[test]
    fn rto_marks_everything_unsacked_lost_and_restarts_nextseg() {
        let mut b = board();
        b.on_sack(&[seg(5)], |_| {});
        b.mark_first_lost();
        let s = b.next_lost().unwrap();
        b.on_retransmit(s.seq, SimTime::from_millis(30), PacketRate::default());
        assert_eq!(b.pipe(), 9_000);
        b.mark_all_lost();
        // Everything but segment 5 is lost; the retransmission no longer counts.
        assert_eq!(b.lost_bytes(), 9_000);
        assert_eq!(b.retrans_bytes(), 0);
        assert_eq!(b.pipe(), 0);
        assert_eq!(b.next_lost().unwrap().seq, 1);
        let order: Vec<u64> = std::iter::from_fn(|| {
            let s = b.next_lost()?;
            b.on_retransmit(s.seq, SimTime::from_millis(40), PacketRate::default());
            Some((s.seq - 1) / MSS)
        })
        .collect();
        assert_eq!(order, vec![0, 1, 2, 3, 4, 6, 7, 8, 9]);
        assert_eq!(b.pipe(), 9_000);
    }
}
