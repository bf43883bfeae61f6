//! The receiving half: reassembly, SACK blocks, the delayed-ACK policy, the advertised window
//! and the timestamp echo.
//!
//! - ACK policy (RFC 5681 §4.2, RFC 1122 §4.2.3.2): an ACK for at least every `ack_every`-th
//!   data segment, else after `delack_timeout`; at once for an out-of-order segment, for one
//!   that fills all or part of a gap, for a duplicate, and for a FIN.
//! - SACK blocks (RFC 2018 §4): the first reports the block holding the segment that
//!   triggered the ACK, then the most recently reported other blocks.
//! - Window: the buffer holds `[consumed, consumed + buffer)` of the sequence space, so the
//!   right edge is `consumed + buffer` whatever lies out of order inside it, and never moves
//!   left (RFC 9293 §3.8.6.2.1). It moves right only by at least min(buffer/2, MSS) at a time
//!   (receiver silly-window avoidance, RFC 9293 §3.8.6.2.2). Scaled windows are rounded up to
//!   the next multiple of 2^shift, as Linux does, so quantization never shrinks the window.
//! - With `delayed_ack = "linux"`, Linux's quick-ACK mode and adaptive ACK timeout decide
//!   instead of `delack_timeout` alone (`quickack.rs`), and each segment that grows the
//!   receive window (`rcvbuf.rs`) is acknowledged at once.
//! - TS.Recent (RFC 7323 §4.3): taken from segments at or below the last ACK sent, so a delayed
//!   ACK echoes the earlier segment and the RTT sample includes the delay.

use quicksim_engine::SimTime;
use serde::{Deserialize, Serialize};

use super::quickack::LinuxAck;
use super::rcvbuf::LinuxRcvBuf;
use super::segment::SackBlocks;
use crate::range_set::RangeSet;

/// What one arriving segment did to the receive sequence space.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Arrival {
    /// Sequence numbers that became in order: `[from, to)` (empty if none).
    pub from: u64,
    pub to: u64,
    /// The peer's FIN became in order.
    pub fin: bool,
}

/// Receive state of one connection.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Receiver {
    /// RCV.NXT.
    pub rcv_nxt: u64,
    /// Out-of-order sequence ranges above `rcv_nxt`.
    ooo: RangeSet,
    /// SACK blocks, most recently changed first.
    recent: SackBlocks,
    /// Sequence number of the peer's FIN once seen.
    fin_seq: Option<u64>,
    pub fin_received: bool,
    /// Everything below this sequence number has been consumed by the application.
    pub consumed: u64,
    buffer: u64,
    /// Our window scale shift (0 without scaling).
    pub shift: u8,
    /// Right edge of the window last advertised.
    pub adv_right: u64,
    /// ACK number of the last segment we sent (RFC 7323 Last.ACK.sent).
    pub last_ack_sent: u64,
    /// TS.Recent (RFC 7323 §4.3).
    pub ts_recent: SimTime,
    /// An ACK is owed at once.
    pub ack_now: bool,
    /// The delayed-ACK timer.
    pub delack_at: Option<SimTime>,
    /// Data segments received since the last ACK.
    unacked_segs: u64,
    /// Linux's quick-ACK and ATO state, with `delayed_ack = "linux"`.
    pub linux: Option<LinuxAck>,
    /// Linux's receive-window growth and buffer autotuning, with `delayed_ack = "linux"`.
    pub rcvbuf: Option<LinuxRcvBuf>,
}

impl Receiver {
    /// Receive state once the peer's SYN (sequence number `irs`) has been seen.
    pub fn new(irs: u64, buffer: u64, shift: u8) -> Self {
        Receiver {
            rcv_nxt: irs + 1,
            ooo: RangeSet::new(),
            recent: SackBlocks::new(),
            fin_seq: None,
            fin_received: false,
            consumed: irs + 1,
            buffer,
            shift,
            adv_right: irs + 1,
            last_ack_sent: irs + 1,
            ts_recent: SimTime::ZERO,
            ack_now: false,
            delack_at: None,
            unacked_segs: 0,
            linux: None,
            rcvbuf: None,
        }
    }

    /// Out-of-order bytes held.
    pub fn ooo_bytes(&self) -> u64 {
        self.ooo.total()
    }

    /// Bytes from RCV.NXT to the end of the highest out-of-order range (0 if none).
    pub fn ooo_span(&self) -> u64 {
        self.ooo.last().map_or(0, |(_, b)| b.saturating_sub(self.rcv_nxt))
    }

    /// Out-of-order data is held (a hole waits for a retransmission).
    pub fn holds_out_of_order(&self) -> bool {
        !self.ooo.is_empty()
    }

    /// In-order bytes not yet consumed.
    pub fn unread(&self) -> u64 {
        self.rcv_nxt - self.consumed - u64::from(self.fin_received)
    }

    /// A data (or FIN) segment `[seq, seq + len)` (`fin`: a FIN follows the payload) arrived.
    /// `ack_every` and `delack` are the ACK policy; `now` starts the delayed-ACK timer.
    pub fn on_data(
        &mut self,
        seq: u64,
        len: u64,
        fin: bool,
        now: SimTime,
        ack_every: u64,
        delack: quicksim_engine::SimDuration,
    ) -> Arrival {
        let mut out = Arrival { from: self.rcv_nxt, to: self.rcv_nxt, fin: false };
        let end = seq + len;
        if fin {
            self.fin_seq = Some(end);
        }
        // Data beyond the window we advertised is dropped (RFC 9293 §3.10.7.4); the sender never
        // sends it, as the window is never shrunk.
        let end = end.min(self.adv_right.max(self.rcv_nxt));
        if end <= self.rcv_nxt && !(fin && self.fin_seq == Some(self.rcv_nxt) && !self.fin_received) {
            // A duplicate (or a window probe): ACK at once (RFC 9293 §3.10.7.4, RFC 5681 §4.2).
            self.ack_now = true;
            if let Some(l) = &mut self.linux {
                if len > 0 {
                    l.on_duplicate(self.adv_right.saturating_sub(self.last_ack_sent));
                }
            }
            return out;
        }
        if seq > self.rcv_nxt {
            // Out of order: keep it, report it first, ACK at once (RFC 5681 §4.2).
            self.ooo.insert(seq, end);
            let block = self.ooo.range_containing(seq).expect("just inserted");
            self.touch(block);
            self.ack_now = true;
            if let Some(l) = &mut self.linux {
                l.scheduled = true;
            }
            if self.rcvbuf.is_some() {
                let span = self.ooo_span();
                if let Some(b) = &mut self.rcvbuf {
                    b.on_out_of_order(span);
                }
            }
            return out;
        }
        let filled_gap = !self.ooo.is_empty();
        self.rcv_nxt = self.rcv_nxt.max(end);
        if let Some((a, b)) = self.ooo.first() {
            if a <= self.rcv_nxt {
                self.rcv_nxt = self.rcv_nxt.max(b);
                self.ooo.pop_first();
            }
        }
        if self.fin_seq == Some(self.rcv_nxt) && !self.fin_received {
            self.fin_received = true;
            self.rcv_nxt += 1;
            out.fin = true;
            self.ack_now = true;
        }
        out.to = self.rcv_nxt - u64::from(out.fin);
        if let Some(l) = &mut self.linux {
            l.on_in_order(now, len, self.adv_right.saturating_sub(self.last_ack_sent));
            if let Some(b) = &mut self.rcvbuf {
                // What the queues hold: this segment and the unread and out-of-order data.
                let held = self.rcv_nxt - self.consumed + self.ooo.total();
                if b.grow_window(len, held) {
                    l.quick |= 1; // tcp_grow_window
                }
            }
            if !filled_gap {
                self.unacked_segs += 1;
                if l.in_quickack_mode() || self.unacked_segs >= ack_every {
                    self.ack_now = true;
                } else {
                    match l.delack_deadline(now, self.delack_at) {
                        Some(t) => self.delack_at = Some(t),
                        None => self.ack_now = true,
                    }
                }
                return out;
            }
        }
        if filled_gap {
            self.ack_now = true; // RFC 5681 §4.2: fills all or part of a gap
        } else {
            self.unacked_segs += 1;
            if self.unacked_segs >= ack_every {
                self.ack_now = true;
            } else if self.delack_at.is_none() {
                self.delack_at = Some(now + delack);
            }
        }
        out
    }

    /// Moves `block` to the front of the SACK list (RFC 2018 §4).
    fn touch(&mut self, block: (u64, u64)) {
        self.recent.retain(|r| r.1 < block.0 || r.0 > block.1);
        self.recent.insert(0, block);
        self.recent.truncate(4);
    }

    /// The SACK blocks to send now (at most `max`), refreshed to the current ranges.
    pub fn sack_blocks(&mut self, max: usize) -> SackBlocks {
        // Nothing out of order (nearly every call: every poll of the sender, every in-order
        // ACK): no block survives the refresh below, so skip its lookups and copies.
        if self.ooo.is_empty() {
            self.recent.clear();
            return SackBlocks::new();
        }
        let ooo = &self.ooo;
        let mut fresh = SackBlocks::new();
        for &(s, _) in self.recent.iter() {
            if let Some(r) = ooo.range_containing(s) {
                if !fresh.contains(&r) {
                    fresh.push(r);
                }
            }
        }
        self.recent = fresh.clone();
        fresh.truncate(max);
        fresh
    }

    /// The window to advertise and its right edge. `syn`: unscaled, at most 65535 (RFC 7323
    /// §2.2). Applies receiver SWS avoidance; `mss` is the effective send MSS of the peer.
    pub fn window(&mut self, syn: bool, mss: u64) -> u64 {
        let target = self.consumed + self.buffer;
        if syn {
            let w = self.buffer.min(65_535);
            self.adv_right = self.adv_right.max(self.rcv_nxt + w);
            return w;
        }
        // RFC 9293 §3.8.6.2.2: move the right edge by at least min(buffer/2, MSS).
        if target >= self.adv_right + mss.min(self.buffer / 2) {
            self.adv_right = target;
        }
        let want = self.adv_right.saturating_sub(self.rcv_nxt);
        // ceil(want / 2^shift) by shifts (a division per ACK otherwise).
        let unit_mask = (1u64 << self.shift) - 1;
        let field = ((want >> self.shift) + u64::from(want & unit_mask != 0)).min(65_535);
        let w = field << self.shift;
        self.adv_right = self.adv_right.max(self.rcv_nxt + w);
        w
    }

    /// The window we would advertise now (no state change), for window-update decisions.
    pub fn window_now(&self) -> u64 {
        self.adv_right.saturating_sub(self.rcv_nxt)
    }

    /// `bytes` more sequence space was consumed by the application. Returns whether a window
    /// update should be sent (Linux `tcp_cleanup_rbuf`: the window at least doubles from a
    /// value at most half the window clamp). The clamp here is min(buffer, 65535): the window
    /// of the SYN is capped at 65535 (RFC 7323 §2.2), and the first ACK after the handshake
    /// opens it anyway, so a reader that keeps up never causes extra ACKs.
    pub fn consume(&mut self, bytes: u64) -> bool {
        self.consumed += bytes;
        debug_assert!(self.consumed <= self.rcv_nxt);
        let cur = self.window_now();
        let new = (self.consumed + self.buffer).saturating_sub(self.rcv_nxt);
        let update = 2 * cur <= self.buffer.min(65_535) && new >= 2 * cur && new > 0;
        if update {
            self.ack_now = true;
        }
        update
    }

    /// RFC 7323 §4.3: take the peer's TSval if the segment starts at or below Last.ACK.sent.
    pub fn on_timestamp(&mut self, seq: u64, tsval: SimTime) {
        if seq <= self.last_ack_sent && tsval >= self.ts_recent {
            self.ts_recent = tsval;
        }
    }

    /// A segment carrying our current ACK was sent: nothing is owed any more.
    pub fn on_ack_sent(&mut self) {
        if let Some(l) = &mut self.linux {
            l.on_ack_sent();
        }
        self.ack_now = false;
        self.delack_at = None;
        self.unacked_segs = 0;
        self.last_ack_sent = self.rcv_nxt;
    }

    /// In-order data segments received since the last ACK (a delayed ACK is pending).
    pub fn unacked_segs(&self) -> u64 {
        self.unacked_segs
    }

    /// Whether an ACK is owed (at once, or because the delayed-ACK timer expired by `now`).
    pub fn ack_due(&self, now: SimTime) -> bool {
        self.ack_now || self.delack_at.is_some_and(|t| t <= now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quicksim_engine::SimDuration;

    const MSS: u64 = 1000;

    fn rx() -> Receiver {
        let mut r = Receiver::new(0, 1 << 20, 0);
        r.adv_right = 1 + (1 << 20);
        r
    }

    fn data(r: &mut Receiver, i: u64) -> Arrival {
        r.on_data(1 + i * MSS, MSS, false, SimTime::from_millis(i), 2, SimDuration::from_millis(40))
    }

    /// Which of `n` in-order 1448 B segments (starting at `first`) were acknowledged at
    /// once; the application reads each, an owed ACK is sent before the next arrives.
    fn linux_acks(r: &mut Receiver, first: u64, n: u64) -> Vec<bool> {
        (first..first + n)
            .map(|i| {
                let now = SimTime::ZERO + SimDuration::from_micros(1200 * i);
                r.on_data(1 + i * 1448, 1448, false, now, 2, SimDuration::from_millis(40));
                r.consume(1448);
                let at_once = r.ack_now;
                if at_once {
                    r.window(false, 1448);
                    r.on_ack_sent();
                }
                at_once
            })
            .collect()
    }

    #[test]
    fn linux_receiver_acks_each_segment_that_grows_its_window() {
        let mut r = Receiver::new(0, 6 << 20, 7);
        r.linux = Some(LinuxAck::new(SimDuration::from_millis(40)));
        r.rcvbuf = Some(LinuxRcvBuf::new(1448, 1460, 6 << 20, SimTime::ZERO, 1));
        // The SYN-ACK's 65 535 B: min(16, 65 535 / 2896) = 16 quick-ACKs.
        r.window(true, 1448);
        // rcv_ssthresh 65 160, clamp 81 920 less this segment: room 15 312 = five steps of
        // 2920 and 712 B. Those six segments each grant a quick-ACK, which their own ACK uses,
        // so the initial 16 last until segment 22; then every second segment.
        let acks = linux_acks(&mut r, 0, 30);
        assert!(acks[..22].iter().all(|&a| a), "{acks:?}");
        assert_eq!(acks[22..], [false, true, false, true, false, true, false, true]);
        assert_eq!(r.rcvbuf.map(|b| b.rcv_ssthresh), Some(80_472));
        // Autotuning raises the clamp to 160 000 B: room 160 000 − 1448 − 80 472 = 78 080, so
        // 26 segments of 2920 B and one of 2160 B are acknowledged one by one, then every
        // second one.
        if let Some(b) = r.rcvbuf.as_mut() {
            b.window_clamp = 160_000;
        }
        let acks = linux_acks(&mut r, 30, 40);
        assert!(acks[..27].iter().all(|&a| a), "{acks:?}");
        assert_eq!(acks[27..31], [false, true, false, true], "{acks:?}");
    }

    #[test]
    fn every_second_segment_is_acked_else_the_timer_runs() {
        let mut r = rx();
        let a = data(&mut r, 0);
        assert_eq!((a.from, a.to), (1, 1001));
        assert!(!r.ack_now);
        assert_eq!(r.delack_at, Some(SimTime::from_millis(40)));
        data(&mut r, 1);
        assert!(r.ack_now);
        r.on_ack_sent();
        assert_eq!(r.last_ack_sent, 2001);
        assert!(!r.ack_due(SimTime::from_secs(1)));
        data(&mut r, 2);
        assert!(!r.ack_due(SimTime::from_millis(41)));
        assert!(r.ack_due(SimTime::from_millis(42)));
    }

    #[test]
    fn reordering_gets_immediate_acks_and_sack_blocks_in_rfc2018_order() {
        let mut r = rx();
        data(&mut r, 0);
        r.on_ack_sent();
        // 1 missing; 2 arrives: immediate ACK, block [2001, 3001).
        let a = data(&mut r, 2);
        assert_eq!(a.from, a.to);
        assert!(r.ack_now);
        assert_eq!(r.sack_blocks(3).to_vec(), vec![(2001, 3001)]);
        // 4 arrives (3 missing too): its block first, then the older one.
        data(&mut r, 4);
        assert_eq!(r.sack_blocks(3).to_vec(), vec![(4001, 5001), (2001, 3001)]);
        // 3 arrives and joins both blocks: one block [2001, 5001).
        data(&mut r, 3);
        assert_eq!(r.sack_blocks(3).to_vec(), vec![(2001, 5001)]);
        r.on_ack_sent();
        // 1 fills the hole: everything up to 5001 in order, immediate ACK, no blocks left.
        let a = data(&mut r, 1);
        assert_eq!((a.from, a.to), (1001, 5001));
        assert!(r.ack_now);
        assert!(r.sack_blocks(3).is_empty());
        // A duplicate: immediate ACK, nothing new.
        r.on_ack_sent();
        let a = data(&mut r, 1);
        assert_eq!(a.from, a.to);
        assert!(r.ack_now);
    }

    #[test]
    fn window_tracks_consumption_and_never_shrinks() {
        let mut r = Receiver::new(0, 10 * MSS, 0);
        // SYN-ACK window: min(buffer, 65535) = 10 000.
        assert_eq!(r.window(true, MSS), 10_000);
        for i in 0..4 {
            data(&mut r, i);
        }
        // Nothing consumed: the right edge stays at 10 001, 6 000 B left.
        assert_eq!(r.window(false, MSS), 6_000);
        // Out-of-order data does not shrink it either.
        data(&mut r, 6);
        assert_eq!(r.window(false, MSS), 6_000);
        // Consuming 500 B: the edge would move by 500 < min(5000, 1000): no update.
        assert!(!r.consume(500));
        assert_eq!(r.window(false, MSS), 6_000);
        // Consuming the rest: +4000 B, and the window (6000) was above half the buffer.
        assert!(!r.consume(3_500));
        assert_eq!(r.window(false, MSS), 10_000);
    }

    #[test]
    fn zero_window_then_update_when_reader_catches_up() {
        let mut r = Receiver::new(0, 4 * MSS, 0);
        r.window(true, MSS);
        for i in 0..4 {
            data(&mut r, i);
        }
        assert_eq!(r.window(false, MSS), 0);
        r.on_ack_sent();
        // Reading 2000 B: window 0 → 2000 ≥ 2·0 and 0 ≤ half the buffer: update.
        assert!(r.consume(2 * MSS));
        assert!(r.ack_now);
        assert_eq!(r.window(false, MSS), 2_000);
    }

    #[test]
    fn scaled_window_rounds_up() {
        let mut r = Receiver::new(0, 1 << 20, 7);
        r.adv_right = 1;
        // 2^20 = 8192 · 128 exactly; after 100 B in order: ceil((2^20 − 100) / 128) · 128 = 2^20.
        r.window(false, MSS);
        r.on_data(1, 100, false, SimTime::ZERO, 2, SimDuration::from_millis(40));
        assert_eq!(r.window(false, MSS), 1 << 20);
    }
}
