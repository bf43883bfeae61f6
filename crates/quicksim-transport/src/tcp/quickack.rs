//! Linux's delayed-ACK engine (`delayed_ack = "linux"`): quick-ACK mode and the adaptive ACK
//! timeout (ATO), the receiver's `icsk_ack` state. Sources (Linux 6.x):
//! - net/ipv4/tcp_input.c `tcp_event_data_recv`: the first data segment starts quick-ACK mode
//!   (`tcp_incr_quickack` with `TCP_MAX_QUICKACKS` = 16) and sets ATO = `TCP_ATO_MIN` (40 ms);
//!   each later in-order segment moves the ATO with the gap m since the previous one:
//!   m ≤ ATO_MIN/2 → ATO/2 + ATO_MIN/2; m < ATO → min(ATO/2 + m, RTO); m > RTO → quick-ACK
//!   mode again (the sender had stopped, so its window restarts with ACKs at once).
//! - `tcp_incr_quickack`: quick = max(quick, min(16, max(2, rcv_wnd / (2·rcv_mss)))).
//! - `tcp_data_queue`: a segment wholly below RCV.NXT (a retransmission) enters quick-ACK mode
//!   (`tcp_enter_quickack_mode`: quick-ACKs and ATO = ATO_MIN).
//! - `__tcp_ack_snd_check`: in quick-ACK mode every segment is acknowledged at once.
//! - net/ipv4/tcp_output.c `tcp_event_ack_sent` → include/net/tcp.h `tcp_dec_quickack_mode`:
//!   each ACK sent while one was owed uses one quick-ACK; the last one resets ATO to ATO_MIN.
//! - `tcp_send_delayed_ack`: the timer is ATO, and when ATO > `TCP_DELACK_MIN` (40 ms) at most
//!   max(SRTT, 40 ms) and 500 ms (`HZ/2`), then at most `TCP_DELACK_MAX` (200 ms); a timer
//!   already running is kept if earlier, and an ACK goes at once if it would fire within ATO/4.
//! - net/ipv4/tcp_timer.c `tcp_delack_timer_handler`: a timer that fires doubles the ATO, at
//!   most the RTO.
//!
//! Not modelled: the interactive ("pingpong") mode of request-response connections, which
//! turns quick-ACKs off and caps the ATO at 200 ms; `ICSK_ACK_PUSHED` for short segments; SACK
//! compression (`tcp_comp_sack_delay_ns`); ACK timing in jiffies (the timer here is exact).
//! The quick-ACK that `tcp_grow_window` grants while the receive window opens is `rcvbuf.rs`'s.

use quicksim_engine::{SimDuration, SimTime};
use serde::{Deserialize, Serialize};

/// `TCP_MAX_QUICKACKS` (include/net/tcp.h).
pub const MAX_QUICKACKS: u32 = 16;
/// `TCP_DELACK_MAX`, HZ/5 (include/net/tcp.h): the cap of every delayed-ACK timer.
pub const DELACK_MAX: SimDuration = SimDuration(200_000_000_000);
/// HZ/2: the cap of the ATO outside interactive mode (`tcp_send_delayed_ack`).
pub const ATO_CAP: SimDuration = SimDuration(500_000_000_000);
/// `TCP_MIN_RCVMSS` (include/net/tcp.h): the receiver's first guess of the peer's MSS.
pub const MIN_RCVMSS: u64 = 536;

/// The receiver's quick-ACK and ATO state (Linux `icsk_ack`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinuxAck {
    /// Quick-ACKs left.
    pub quick: u32,
    /// The ACK timeout; zero before the first data segment.
    pub ato: SimDuration,
    /// When the previous in-order data segment arrived.
    pub lrcvtime: SimTime,
    /// The receiver's estimate of the peer's MSS (`rcv_mss`): the largest payload seen.
    pub rcv_mss: u64,
    /// An ACK is owed for data (`ICSK_ACK_SCHED`).
    pub scheduled: bool,
    /// `TCP_ATO_MIN` = `TCP_DELACK_MIN`: the configured `delack_timeout`.
    pub ato_min: SimDuration,
    /// The connection's current RTO and smoothed RTT, refreshed before each segment.
    pub rto: SimDuration,
    pub srtt: Option<SimDuration>,
}

impl LinuxAck {
    pub fn new(ato_min: SimDuration) -> Self {
        LinuxAck {
            quick: 0,
            ato: SimDuration::ZERO,
            lrcvtime: SimTime::ZERO,
            rcv_mss: MIN_RCVMSS,
            scheduled: false,
            ato_min,
            rto: SimDuration::from_secs(1),
            srtt: None,
        }
    }

    /// `tcp_incr_quickack`: `rcv_wnd` is the window last advertised.
    fn incr_quickack(&mut self, rcv_wnd: u64) {
        let n = (rcv_wnd / (2 * self.rcv_mss)).max(2).min(u64::from(MAX_QUICKACKS)) as u32;
        self.quick = self.quick.max(n);
    }

    /// `tcp_enter_quickack_mode`: a segment wholly below RCV.NXT.
    pub fn on_duplicate(&mut self, rcv_wnd: u64) {
        self.incr_quickack(rcv_wnd);
        self.ato = self.ato_min;
        self.scheduled = true;
    }

    /// `tcp_event_data_recv` for `len` in-order payload bytes at `now`.
    pub fn on_in_order(&mut self, now: SimTime, len: u64, rcv_wnd: u64) {
        self.rcv_mss = self.rcv_mss.max(len);
        self.scheduled = true;
        if self.ato == SimDuration::ZERO {
            self.incr_quickack(rcv_wnd);
            self.ato = self.ato_min;
        } else {
            let m = now - self.lrcvtime;
            let half_min = SimDuration(self.ato_min.ps() / 2);
            let half = SimDuration(self.ato.ps() / 2);
            if m <= half_min {
                self.ato = half + half_min;
            } else if m < self.ato {
                self.ato = (half + m).min(self.rto);
            } else if m > self.rto {
                self.incr_quickack(rcv_wnd);
            }
        }
        self.lrcvtime = now;
    }

    /// `tcp_in_quickack_mode` (outside interactive mode, which is not modelled).
    pub fn in_quickack_mode(&self) -> bool {
        self.quick > 0
    }

    /// `tcp_send_delayed_ack`: when the delayed ACK is due, given the timer already running
    /// (`pending`). None: send the ACK now (the running timer would fire within ATO/4).
    pub fn delack_deadline(&self, now: SimTime, pending: Option<SimTime>) -> Option<SimTime> {
        let mut ato = self.ato;
        if ato > self.ato_min {
            let mut max_ato = ATO_CAP;
            if let Some(srtt) = self.srtt {
                max_ato = max_ato.min(srtt.max(self.ato_min));
            }
            ato = ato.min(max_ato);
        }
        let ato = ato.min(DELACK_MAX);
        let timeout = now + ato;
        match pending {
            Some(t) if t <= now + SimDuration(ato.ps() / 4) => None,
            Some(t) => Some(timeout.min(t)),
            None => Some(timeout),
        }
    }

    /// `tcp_event_ack_sent` → `tcp_dec_quickack_mode`.
    pub fn on_ack_sent(&mut self) {
        if self.quick > 0 && self.scheduled {
            self.quick -= 1;
            if self.quick == 0 {
                self.ato = self.ato_min;
            }
        }
        self.scheduled = false;
    }

    /// `tcp_delack_timer_handler`: the timer fired with an ACK owed.
    pub fn on_timer(&mut self) {
        if self.scheduled {
            self.ato = SimDuration(self.ato.ps().saturating_mul(2)).min(self.rto);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> SimDuration {
        SimDuration::from_millis(x)
    }
    fn at(x: u64) -> SimTime {
        SimTime::from_millis(x)
    }

    fn state() -> LinuxAck {
        let mut l = LinuxAck::new(ms(40));
        l.rto = ms(300);
        l.srtt = Some(ms(100));
        l
    }

    #[test]
    fn quickacks_at_the_start_then_ato_min() {
        let mut l = state();
        // First segment, 1448 B, window 65 535: 65 535 / 2896 = 22 quick-ACKs, capped at 16.
        l.on_in_order(at(0), 1448, 65_535);
        assert_eq!((l.quick, l.ato, l.rcv_mss), (16, ms(40), 1448));
        for i in 0..16 {
            assert!(l.in_quickack_mode(), "ACK {i}");
            l.on_ack_sent();
            l.on_in_order(at(1), 1448, 65_535);
        }
        assert!(!l.in_quickack_mode());
        assert_eq!(l.ato, ms(40));
        // A window of 4 segments: 5792 / 2896 = 2 quick-ACKs; a tiny one still gives 2.
        let mut l = state();
        l.on_in_order(at(0), 1448, 5792);
        assert_eq!(l.quick, 2);
        let mut l = state();
        l.on_in_order(at(0), 1448, 1000);
        assert_eq!(l.quick, 2);
        // An ACK sent with none owed (a window update) uses no quick-ACK.
        let mut l = state();
        l.on_in_order(at(0), 1448, 65_535);
        l.on_ack_sent();
        l.on_ack_sent();
        assert_eq!(l.quick, 15);
    }

    #[test]
    fn ato_follows_the_arrival_gaps() {
        let mut l = state();
        l.on_in_order(at(0), 1448, 65_535);
        l.quick = 0;
        // Gap 10 ms ≤ 20 ms: ATO = 40/2 + 20 = 40 ms.
        l.on_in_order(at(10), 1448, 65_535);
        assert_eq!(l.ato, ms(40));
        // The timer fires: ATO doubles to 80 ms (RTO 300 ms caps it).
        l.on_timer();
        assert_eq!(l.ato, ms(80));
        // Gap 60 ms < 80: ATO = 40 + 60 = 100 ms.
        l.on_in_order(at(70), 1448, 65_535);
        assert_eq!(l.ato, ms(100));
        // The timer: ATO 100 > 40, capped by max(SRTT 100, 40) and 500: 100 ms from now.
        assert_eq!(l.delack_deadline(at(70), None), Some(at(170)));
        // With SRTT 50 ms the cap is 50 ms.
        l.srtt = Some(ms(50));
        assert_eq!(l.delack_deadline(at(70), None), Some(at(120)));
        // A timer that fires within ATO/4 (12.5 ms, the capped 50 ms) means: ACK now.
        assert_eq!(l.delack_deadline(at(70), Some(at(80))), None);
        assert_eq!(l.delack_deadline(at(70), Some(at(90))), Some(at(90)));
        // Gap 400 ms > RTO 300 ms: quick-ACK mode again.
        l.on_in_order(at(470), 1448, 65_535);
        assert_eq!(l.quick, 16);
        // A duplicate: quick-ACKs and ATO back to 40 ms.
        l.quick = 0;
        l.ato = ms(120);
        l.on_duplicate(65_535);
        assert_eq!((l.quick, l.ato), (16, ms(40)));
    }

    #[test]
    fn timer_is_capped_at_delack_max() {
        let mut l = state();
        l.on_in_order(at(0), 1448, 65_535);
        l.ato = ms(300);
        l.srtt = Some(ms(1000));
        // ATO 300 ms, max(SRTT, 40) = 1 s and 500 ms do not cap it; TCP_DELACK_MAX does.
        assert_eq!(l.delack_deadline(at(0), None), Some(at(200)));
    }
}
