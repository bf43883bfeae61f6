//! Linux's receive-window growth and receive-buffer autotuning (with `delayed_ack = "linux"`),
//! as far as they decide when the receiver acknowledges each segment at once: every in-order
//! segment that raises `rcv_ssthresh` sets a quick-ACK (`icsk_ack.quick |= 1`), and the room
//! for raising it comes from the buffer that autotuning grows once per receiver RTT. In slow
//! start that acknowledges most segments of a round one by one (the ACK trains HyStart sees).
//! Sources (Linux 6.18, net/ipv4/tcp_input.c unless named):
//! - `tcp_grow_window` (from `tcp_event_data_recv`, segments of 128 B or more): room =
//!   min(window_clamp, `tcp_space`) − rcv_ssthresh; if positive, rcv_ssthresh grows by
//!   min(room, max(2·advmss, 2·len)) and a quick-ACK is granted. `tcp_space` is the free part of
//!   the buffer in window units: the clamp less what the queues hold (this segment, data not
//!   read yet, out-of-order data). The buffer-overhead test (`tcp_win_from_space(truesize) <=
//!   len`) is taken to pass: the scaling ratio is measured from the segments themselves
//!   (`tcp_measure_rcv_mss`), so an MSS-sized segment fits.
//! - tcp_output.c `tcp_select_initial_window`, `tcp_init_buffer_space`, `tcp_set_window_clamp`:
//!   a passive socket starts with rcv_ssthresh = rcv_wnd = `tcp_rmem[1]` (128 KiB) at the default
//!   scaling ratio ½ rounded down to the MSS (65 160 B at an MSS of 1448 B), rcvq_space.space =
//!   min(that, 10·advmss), and its clamp, once the first full segment sets the path's ratio,
//!   `tcp_rmem[1]` × that ratio.
//! - `tcp_rcv_rtt_measure_ts`, `tcp_rcv_rtt_update`: the receiver's RTT from each new timestamp
//!   echo on a full segment; a smaller sample replaces the estimate, a larger one moves it by
//!   1/8 if nothing waits to be read.
//! - `tcp_rcv_space_adjust` (each read) and `tcp_rcvbuf_grow`: once a receiver RTT has passed
//!   since the last measure, `copied` = bytes read since; if above rcvq_space.space, the clamp
//!   becomes at least rcvwin = 2·copied + 2·(2·copied)·(copied − space)/space ("DRS is always
//!   one RTT late" and the slow-start term), at most `tcp_rmem[2]`; `tcp_data_queue_ofo` grows it
//!   too, to 2·space plus the out-of-order span.
//!
//! The scaling ratio (payload per byte of buffer memory) is the receive path's: 160/256 for
//! 1448 B segments in 2304 B buffers, which puts the first clamp at 80 KiB as the kernel's
//! captures through quicksim's emulator show (the window stops at 80 KiB until autotuning
//! first grows it). Not modelled: the advertised window's limit by rcv_ssthresh (the model
//! advertises its whole buffer; in the linux-vs-model captures the kernel's window stayed above
//! the flight), memory pressure, the millisecond timestamp clock (samples here are exact).

use quicksim_engine::{SimDuration, SimTime};
use serde::{Deserialize, Serialize};

/// `tcp_rmem[1]`: the initial receive buffer.
pub const RMEM_DEFAULT: u64 = 131_072;
/// The receive path's scaling ratio, in 1/256 (`tp->scaling_ratio`).
pub const SCALING_RATIO: u64 = 160;
/// `TCP_DEFAULT_SCALING_RATIO`: the ratio before the first segment, in 1/256.
pub const DEFAULT_SCALING_RATIO: u64 = 128;
/// `TCP_INIT_CWND`: the initial rcvq_space.space is at most this many advmss.
const INIT_SPACE_SEGMENTS: u64 = 10;

/// The receiver's window-growth and autotuning state (Linux `rcv_ssthresh`, `window_clamp`,
/// `rcvq_space`, `rcv_rtt_est`). Windows are in bytes of payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinuxRcvBuf {
    pub rcv_ssthresh: u64,
    pub window_clamp: u64,
    /// The clamp's ceiling: `tcp_rmem[2]` in window units.
    cap: u64,
    /// Our MSS option (`advmss`).
    advmss: u64,
    /// rcvq_space: bytes read in the last measured RTT, and where and when that measure began.
    pub space: u64,
    space_seq: u64,
    space_time: SimTime,
    /// The receiver's RTT estimate ×8 (`rcv_rtt_est.rtt_us`), zero before a sample.
    rtt8: SimDuration,
    /// The last timestamp echo sampled (`rcv_rtt_last_tsecr`).
    last_tsecr: Option<SimTime>,
}

impl LinuxRcvBuf {
    /// A connection whose segments carry at most `mss` payload bytes (the MSS less options),
    /// advertising `advmss`, with `buffer` (`tcp_rmem[2]`) as the largest receive buffer,
    /// established at `now` with `consumed` as the first unread sequence number.
    pub fn new(mss: u64, advmss: u64, buffer: u64, now: SimTime, consumed: u64) -> Self {
        let full = RMEM_DEFAULT * DEFAULT_SCALING_RATIO / 256;
        let rcv_wnd = if full > mss { full / mss * mss } else { full };
        LinuxRcvBuf {
            rcv_ssthresh: rcv_wnd,
            window_clamp: RMEM_DEFAULT * SCALING_RATIO / 256,
            cap: (buffer * SCALING_RATIO / 256).max(RMEM_DEFAULT * SCALING_RATIO / 256),
            advmss,
            space: rcv_wnd.min(INIT_SPACE_SEGMENTS * advmss),
            space_seq: consumed,
            space_time: now,
            rtt8: SimDuration::ZERO,
            last_tsecr: None,
        }
    }

    /// `tcp_init_buffer_space` on a passive open: the measure starts when the handshake ends.
    pub fn established(&mut self, now: SimTime, consumed: u64) {
        self.space_seq = consumed;
        self.space_time = now;
    }

    /// `tcp_rcv_rtt_measure_ts`: a segment of `len` bytes echoing `tsecr` at `now`;
    /// `rcv_mss` the receiver's MSS estimate, `queue_empty` whether everything is read.
    pub fn on_timestamp(&mut self, now: SimTime, tsecr: SimTime, len: u64, rcv_mss: u64, queue_empty: bool) {
        if self.last_tsecr == Some(tsecr) {
            return;
        }
        self.last_tsecr = Some(tsecr);
        if len < rcv_mss || now <= tsecr {
            return;
        }
        let sample = now - tsecr;
        let m = SimDuration(sample.ps().saturating_mul(8));
        if self.rtt8 == SimDuration::ZERO || m < self.rtt8 {
            self.rtt8 = m;
        } else if queue_empty {
            self.rtt8 = SimDuration(self.rtt8.ps() - self.rtt8.ps() / 8 + sample.ps());
        }
    }

    /// `tcp_grow_window` for an in-order segment of `len` bytes, with `held` bytes in the
    /// queues (this segment, unread and out-of-order data). True if it grants a quick-ACK.
    pub fn grow_window(&mut self, len: u64, held: u64) -> bool {
        if len < 128 {
            return false;
        }
        let free = self.window_clamp.saturating_sub(held);
        let room = free.saturating_sub(self.rcv_ssthresh);
        if room == 0 {
            return false;
        }
        self.rcv_ssthresh += room.min((2 * self.advmss).max(2 * len));
        true
    }

    /// `tcp_rcvbuf_grow`: rcvq_space.space becomes `new`; the clamp rises to the window that
    /// lets the sender double its rate (`ooo_span`: out-of-order bytes above RCV.NXT).
    fn rcvbuf_grow(&mut self, new: u64, ooo_span: u64) {
        let old = self.space.max(1);
        self.space = new;
        let rcvwin = 2 * new;
        let grow =
            u64::try_from(u128::from(2 * rcvwin) * u128::from(new.saturating_sub(old)) / u128::from(old))
                .unwrap_or(u64::MAX);
        let rcvwin = rcvwin.saturating_add(grow).saturating_add(ooo_span).min(self.cap);
        if rcvwin > self.window_clamp {
            self.window_clamp = rcvwin;
        }
    }

    /// `tcp_data_queue_ofo`: a segment was queued out of order.
    pub fn on_out_of_order(&mut self, ooo_span: u64) {
        self.rcvbuf_grow(self.space, ooo_span);
    }

    /// `tcp_rcv_space_adjust` after the application read up to `consumed` at `now`
    /// (`rcv_nxt`: what has arrived in order; `ooo_span`: out-of-order bytes above it).
    pub fn space_adjust(&mut self, now: SimTime, consumed: u64, rcv_nxt: u64, ooo_span: u64) {
        if self.rtt8 == SimDuration::ZERO || now - self.space_time < SimDuration(self.rtt8.ps() / 8) {
            return;
        }
        let inq = rcv_nxt.saturating_sub(consumed);
        let copied = consumed.saturating_sub(self.space_seq).saturating_sub(inq);
        if copied > self.space {
            self.rcvbuf_grow(copied, ooo_span);
        }
        self.space_seq = consumed;
        self.space_time = now;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> SimTime {
        SimTime::from_millis(x)
    }

    #[test]
    fn starts_as_a_passive_linux_socket() {
        // 131 072 · ½ = 65 536, rounded down to 1448 B: 45 · 1448 = 65 160; the clamp
        // 131 072 · 160/256 = 81 920; space min(65 160, 10 · 1460) = 14 600.
        let b = LinuxRcvBuf::new(1448, 1460, 6 << 20, ms(0), 1);
        assert_eq!((b.rcv_ssthresh, b.window_clamp, b.space), (65_160, 81_920, 14_600));
    }

    #[test]
    fn window_grows_by_two_advmss_until_the_clamp_less_what_is_queued() {
        let mut b = LinuxRcvBuf::new(1448, 1460, 6 << 20, ms(0), 1);
        // Room 81 920 − 1448 (this segment) − 65 160 = 15 312: five steps of 2920
        // (65 160 → 79 760), then the last 712 B, then none.
        for i in 1..=5 {
            assert!(b.grow_window(1448, 1448), "segment {i}");
            assert_eq!(b.rcv_ssthresh, 65_160 + i * 2920);
        }
        assert!(b.grow_window(1448, 1448));
        assert_eq!(b.rcv_ssthresh, 80_472);
        assert!(!b.grow_window(1448, 1448));
        // Short segments never grow it.
        b.window_clamp = 200_000;
        assert!(!b.grow_window(100, 100));
        // Out-of-order data held takes room: 200 000 − 119 528 − 80 472 = 0.
        assert!(!b.grow_window(1448, 119_528));
    }

    #[test]
    fn autotuning_once_per_receiver_rtt() {
        let mut b = LinuxRcvBuf::new(1448, 1460, 6 << 20, ms(0), 1);
        // No RTT sample yet: nothing happens.
        b.space_adjust(ms(60), 20_000, 20_000, 0);
        assert_eq!((b.space, b.space_seq), (14_600, 1));
        // Echo of a timestamp sent at 10 ms, on a full segment at 60 ms: RTT 50 ms.
        b.on_timestamp(ms(60), ms(10), 1448, 1448, true);
        assert_eq!(b.rtt8, SimDuration::from_millis(400));
        // The same echo again is not a sample; a larger one with data unread is ignored, with
        // the queue empty it moves the estimate by 1/8: 400 − 50 + 58 = 408 (×8).
        b.on_timestamp(ms(90), ms(10), 1448, 1448, true);
        b.on_timestamp(ms(70), ms(12), 1448, 1448, false);
        assert_eq!(b.rtt8, SimDuration::from_millis(400));
        b.on_timestamp(ms(72), ms(14), 1448, 1448, true);
        assert_eq!(b.rtt8, SimDuration::from_millis(408));
        // 40 ms since the measure began (< 51 ms): not yet.
        b.space_adjust(ms(40), 16_001, 16_001, 0);
        assert_eq!(b.space, 14_600);
        // At 60 ms, 16 000 B read (> 14 600): rcvwin = 32 000 + 2·32 000·1400/14 600 = 38 136
        // (integer), below the clamp of 81 920: only the space moves.
        b.space_adjust(ms(60), 16_001, 16_001, 0);
        assert_eq!((b.space, b.window_clamp, b.space_time), (16_000, 81_920, ms(60)));
        // 51 ms later 30 000 B more: rcvwin = 60 000 + 2·60 000·14 000/16 000 = 165 000.
        b.space_adjust(ms(111), 46_001, 46_001, 0);
        assert_eq!((b.space, b.window_clamp), (30_000, 165_000));
        // Less read than the space: no growth, but a new measure begins.
        b.space_adjust(ms(170), 66_001, 66_001, 0);
        assert_eq!((b.space, b.window_clamp, b.space_seq), (30_000, 165_000, 66_001));
        // Out of order: 2·30 000 + a span of 200 000 = 260 000.
        b.on_out_of_order(200_000);
        assert_eq!(b.window_clamp, 260_000);
        // The ceiling: tcp_rmem[2] = 6 MiB · 160/256 = 3 932 160.
        b.on_out_of_order(10_000_000);
        assert_eq!(b.window_clamp, 3_932_160);
    }
}
