//! HyStart as Linux's CUBIC runs it (net/ipv4/tcp_cubic.c, Linux 6.x: `hystart_update`,
//! `bictcp_hystart_reset`, `cubictcp_acked`, `hystart_ack_delay`; Ha & Rhee, "Taming the
//! elephants: New TCP slow start", Computer Networks 2011), not RFC 9406's HyStart++
//! ([`crate::hystart`]). Slow start ends (ssthresh = cwnd) at the first of two signs, once the
//! window is at least 16 segments (`hystart_low_window`):
//! - ACK train: the ACKs of a round keep arriving within 2 ms of each other
//!   (`hystart_ack_delta_us`) for longer than a threshold: the minimum RTT plus
//!   `hystart_ack_delay`, halved when the socket is not paced (`sk_pacing_status ==
//!   SK_PACING_NONE`; a paced sender's ACKs may take the whole RTT to come back);
//! - delay: the smallest RTT of the round, once the round has had 8 samples
//!   (`HYSTART_MIN_SAMPLES`), exceeds the minimum RTT by clamp(min RTT / 8, 4 ms, 16 ms)
//!   (`HYSTART_DELAY_THRESH`).
//!
//! `hystart_ack_delay` is the allowance for TSO/GRO aggregation: min(1 ms, 4 ·
//! `sk_gso_max_size` / `sk_pacing_rate`). The caller passes it ([`ack_delay`]): Linux keeps a
//! pacing rate whether or not it paces (2 · cwnd / SRTT in slow start, `tcp_update_pacing_rate`)
//! and every device that can take GSO, software GSO included (the emulator's TUN devices),
//! gives a socket `sk_gso_max_size` = 65 536 B (`GSO_LEGACY_MAX_SIZE`), so the allowance is
//! 1 ms except at small RTTs with large windows.
//!
//! Rounds are Linux's `end_seq = snd_nxt`, counted by send time: a round that starts at T
//! ends with the first ACK of a packet sent at T or later. What the ACK at T itself releases is
//! sent at T, after Linux has taken `end_seq = snd_nxt` (`tcp_ack` runs `pkts_acked` before
//! `tcp_data_snd_check`), so its first segment starts at `end_seq` and the ACK of that segment
//! has `snd_una > end_seq`: `hystart_update`'s `after(tp->snd_una, ca->end_seq)` starts the
//! next round there. Rounds are counted from the connection's first ACK whatever the
//! window, and only the detection waits for 16 segments: Linux 6.14's "tcp_cubic: fix
//! incorrect HyStart round start detection" (January 2025, backported to the stable 6.x
//! kernels). From commit 4e1fddc98d25 (2020) until then the round check sat behind the window
//! check, so the first round started at the first ACK with 16 segments.
//! The RTT of an ACK is that of its newest acknowledged packet (Linux's `ca_rtt_us`). The
//! minimum RTT is the controller's `delay_min`, forgotten after a timeout (`bictcp_reset`
//! from `cubictcp_state`), when HyStart also starts again.
//!
//! Measured against Linux 6.18 (the kernel's `TcpExtTCPHystartTrainCwnd` counter and a
//! capture of iperf3 through the emulator, 10 Mbit/s, 50 ms, a paced CUBIC flow): replaying
//! these rules on the capture finds the kernel's exit, an ACK train at 124 segments; with the
//! first round at 16 segments or an unpaced threshold it would have been found at 108 (delay)
//! or 62 (train) segments.
//!
//! Not modelled: Linux's exit takes effect before the ACK's own growth (`pkts_acked` runs
//! before `cong_avoid`), here after it (at most the segments of one ACK).

use quicksim_engine::{SimDuration, SimTime};
use serde::{Deserialize, Serialize};

/// `hystart_low_window`: no detection below 16 segments.
pub const LOW_WINDOW_SEGMENTS: u64 = 16;
/// `hystart_ack_delta_us`: ACKs closer than this form a train.
pub const ACK_DELTA: SimDuration = SimDuration(2_000_000_000);
/// `HYSTART_MIN_SAMPLES`: RTT samples a round needs before the delay test.
pub const MIN_SAMPLES: u32 = 8;
/// `HYSTART_DELAY_MIN`, `HYSTART_DELAY_MAX`: the bounds of the delay threshold.
pub const DELAY_MIN: SimDuration = SimDuration(4_000_000_000);
pub const DELAY_MAX: SimDuration = SimDuration(16_000_000_000);
/// `hystart_ack_delay`'s cap, `USEC_PER_MSEC`.
pub const ACK_DELAY_MAX: SimDuration = SimDuration(1_000_000_000);
/// `sk_gso_max_size` of a socket on a device with (software) GSO: `GSO_LEGACY_MAX_SIZE`.
pub const GSO_MAX_SIZE_BYTES: u64 = 65_536;

/// `hystart_ack_delay` for a window of `cwnd_bytes` and a smoothed RTT `srtt`: min(1 ms,
/// 4 · 65 536 B / rate) at Linux's slow-start pacing rate, rate = 2 · cwnd / SRTT
/// (`tcp_update_pacing_rate` with `tcp_pacing_ss_ratio` = 200 %). Zero before an RTT sample
/// (Linux's rate is then unset: `sk_pacing_rate` ~0).
pub fn ack_delay(cwnd_bytes: u64, srtt: SimDuration) -> SimDuration {
    if srtt == SimDuration::ZERO || cwnd_bytes == 0 {
        return SimDuration::ZERO;
    }
    // 4 · G / (2 · cwnd / srtt) = 2 · G · srtt / cwnd.
    let t = 2 * u128::from(GSO_MAX_SIZE_BYTES) * u128::from(srtt.ps()) / u128::from(cwnd_bytes);
    SimDuration(t.min(u128::from(ACK_DELAY_MAX.ps())) as u64)
}

/// What `hystart_update` reads of the socket besides the ACK: its window in segments, whether
/// it is in slow start, whether it is paced, and `hystart_ack_delay` ([`ack_delay`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sender {
    pub cwnd_segments: u64,
    pub slow_start: bool,
    pub paced: bool,
    pub ack_delay: SimDuration,
}

impl Sender {
    /// An unpaced sender in slow start with no aggregation allowance (tests).
    pub fn unpaced(cwnd_segments: u64) -> Sender {
        Sender { cwnd_segments, slow_start: true, paced: false, ack_delay: SimDuration::ZERO }
    }
}

/// Why slow start ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Exit {
    AckTrain,
    Delay,
}

/// Linux HyStart state of one connection (`struct bictcp`'s HyStart fields).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinuxHyStart {
    /// The exit was found (`ca->found`); None while still looking.
    pub found: Option<Exit>,
    /// `round_start`, also the send time that ends the round; None before the first ACK.
    round_start: Option<SimTime>,
    last_ack: SimTime,
    /// `curr_rtt`: the smallest RTT of the round (None = Linux's ~0U).
    curr_rtt: Option<SimDuration>,
    sample_cnt: u32,
    /// `delay_min`: the smallest RTT since the start or the last timeout.
    pub delay_min: Option<SimDuration>,
}

impl LinuxHyStart {
    /// `bictcp_hystart_reset` at `now`.
    fn reset(&mut self, now: SimTime) {
        self.round_start = Some(now);
        self.last_ack = now;
        self.curr_rtt = None;
        self.sample_cnt = 0;
    }

    /// A timeout (`cubictcp_state` with `TCP_CA_Loss`): look again, from a fresh minimum RTT.
    pub fn on_timeout(&mut self) {
        *self = LinuxHyStart::default();
    }

    /// `cubictcp_acked` and `hystart_update` for one ACK at `now` whose newest acknowledged
    /// packet was sent at `newest_sent`, from a sender in the state `tx`. Returns the exit if
    /// this ACK found it (the controller then sets ssthresh = cwnd).
    pub fn on_ack(&mut self, now: SimTime, newest_sent: SimTime, tx: Sender) -> Option<Exit> {
        // Linux counts microseconds and never lets a sample be 0.
        let delay = (now - newest_sent).max(SimDuration::from_micros(1));
        let delay_min = self.delay_min.map_or(delay, |d| d.min(delay));
        self.delay_min = Some(delay_min);
        if self.found.is_some() || !tx.slow_start {
            return None;
        }
        // The round check comes first, at any window (Linux 6.14+). What the round-starting
        // ACK lets out leaves at its time `start`, at or beyond Linux's `end_seq` (taken before
        // it was sent), so the ACK of a packet sent at `start` already ends the round:
        // `after(tp->snd_una, ca->end_seq)` in `hystart_update`.
        if self.round_start.is_none_or(|start| newest_sent >= start) {
            self.reset(now);
        }
        if tx.cwnd_segments < LOW_WINDOW_SEGMENTS {
            return None;
        }
        if now - self.last_ack <= ACK_DELTA {
            self.last_ack = now;
            let start = self.round_start.expect("set above");
            let mut threshold = delay_min + tx.ack_delay;
            if !tx.paced {
                threshold = SimDuration(threshold.ps() / 2);
            }
            if now - start > threshold {
                self.found = Some(Exit::AckTrain);
                return self.found;
            }
        }
        let curr = self.curr_rtt.map_or(delay, |c| c.min(delay));
        self.curr_rtt = Some(curr);
        if self.sample_cnt < MIN_SAMPLES {
            self.sample_cnt += 1;
        } else if curr > delay_min + SimDuration(delay_min.ps() / 8).clamp(DELAY_MIN, DELAY_MAX) {
            self.found = Some(Exit::Delay);
        }
        self.found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at_us(x: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_micros(x)
    }
    fn ms(x: u64) -> SimDuration {
        SimDuration::from_millis(x)
    }

    #[test]
    fn delay_exit_after_eight_samples_above_min_plus_threshold() {
        let mut h = LinuxHyStart::default();
        // Round 1: RTT 100 ms (delay_min 100 ms, threshold clamp(12.5, 4, 16) = 12.5 ms).
        // ACKs 10 ms apart (no ACK train), window 20 segments.
        let mut t = 100_000;
        assert_eq!(h.on_ack(at_us(t), at_us(t - 100_000), Sender::unpaced(20)), None);
        // Round 2 starts with an ACK of a packet sent after round 1 began (at 100 ms): RTTs
        // of 112 ms ≤ 112.5 never trigger; 113 ms does, on the ninth sample of the round.
        t = 250_000;
        for i in 0..9 {
            let now = t + i * 10_000;
            assert_eq!(h.on_ack(at_us(now), at_us(now - 112_000), Sender::unpaced(20)), None, "sample {i}");
        }
        let mut h2 = h.clone();
        // A round of 113 ms samples: 8 samples to learn curr_rtt, the ninth tests it.
        t = 400_000;
        for i in 0..8 {
            let now = t + i * 10_000;
            assert_eq!(h2.on_ack(at_us(now), at_us(now - 113_000), Sender::unpaced(20)), None, "sample {i}");
        }
        assert_eq!(
            h2.on_ack(at_us(t + 80_000), at_us(t + 80_000 - 113_000), Sender::unpaced(20)),
            Some(Exit::Delay)
        );
        // Below 16 segments nothing is tested.
        for i in 0..12 {
            let now = t + i * 10_000;
            assert_eq!(h.on_ack(at_us(now), at_us(now - 113_000), Sender::unpaced(15)), None);
        }
        assert_eq!(h.delay_min, Some(ms(100)));
    }

    #[test]
    fn ack_train_longer_than_half_the_min_rtt() {
        let mut h = LinuxHyStart::default();
        // delay_min 40 ms; the round starts at 1 s; ACKs every 1 ms (≤ 2 ms: a train): the
        // first ACK more than 20 ms after the round start, at 1.021 s, ends slow start.
        let sent = |now: u64| at_us(now - 40_000);
        let mut out = None;
        let mut when = 0;
        for i in 0..30 {
            let now = 1_000_000 + i * 1_000;
            out = h.on_ack(at_us(now), sent(now), Sender::unpaced(32));
            if out.is_some() {
                when = now;
                break;
            }
        }
        assert_eq!((out, when), (Some(Exit::AckTrain), 1_021_000));
        // ACKs 3 ms apart never form a train (and the delay stays at its minimum).
        let mut h = LinuxHyStart::default();
        for i in 0..30 {
            let now = 1_000_000 + i * 3_000;
            assert_eq!(h.on_ack(at_us(now), sent(now), Sender::unpaced(32)), None);
        }
        // A timeout forgets everything.
        h.on_timeout();
        assert_eq!(h, LinuxHyStart::default());
    }

    #[test]
    fn rounds_start_below_sixteen_segments() {
        // ACKs every 1 ms (a train), each of a packet sent 40 ms before, the window growing by
        // one segment per ACK from 10. The first round starts at the first ACK, 1.000 s, with
        // 10 segments (Linux 6.14+); its ACKs below 16 segments are not tested, so `last_ack`
        // stays at 1.000 s and the ACK at 1.006 s, the first tested, is 6 ms after it: no train
        // in this round. The next starts at 1.040 s (the first ACK of a packet sent at or after
        // 1.000 s) and its train ends slow start 21 ms later, at 1.061 s with 71 segments.
        // (Before the 6.14 fix the first round started at 16 segments, 1.006 s: exit at 1.027 s.)
        let mut h = LinuxHyStart::default();
        let mut found = None;
        for i in 0..80 {
            let now = 1_000_000 + i * 1_000;
            if let Some(e) = h.on_ack(at_us(now), at_us(now - 40_000), Sender::unpaced(10 + i)) {
                found = Some((e, now, 10 + i));
                break;
            }
        }
        assert_eq!(found, Some((Exit::AckTrain, 1_061_000, 71)));
    }

    #[test]
    fn a_paced_sender_waits_for_a_train_of_the_whole_min_rtt_plus_the_ack_delay() {
        // delay_min 40 ms; ACKs every 1 ms from the round's start at 1 s, of packets sent half
        // as fast as the ACKs come (a queue building: the round lasts until 1.080 s). Unpaced
        // with a 1 ms allowance: (40 + 1) / 2 = 20.5 ms, found at 1.021 s; paced: 41 ms, found
        // at 1.042 s.
        let sent = |now: u64| at_us(960_000 + (now - 1_000_000) / 2);
        let exit_at = |paced: bool| {
            let mut h = LinuxHyStart::default();
            let tx = Sender { cwnd_segments: 32, slow_start: true, paced, ack_delay: ms(1) };
            (0..60).map(|i| 1_000_000 + i * 1_000).find(|&now| h.on_ack(at_us(now), sent(now), tx).is_some())
        };
        assert_eq!((exit_at(false), exit_at(true)), (Some(1_021_000), Some(1_042_000)));
    }

    #[test]
    fn the_ack_delay_is_a_millisecond_unless_the_window_is_large_for_the_rtt() {
        // 16 segments of 1448 B at 50 ms: 2 · 65 536 · 0.05 / 23 168 s = 283 ms, capped at 1 ms.
        assert_eq!(ack_delay(16 * 1448, ms(50)), ms(1));
        // 1000 segments at 100 µs: 2 · 65 536 · 100 µs / 1 448 000 = 9.05 µs.
        assert_eq!(ack_delay(1000 * 1448, SimDuration::from_micros(100)), SimDuration(9_051_933));
        assert_eq!(ack_delay(16 * 1448, SimDuration::ZERO), SimDuration::ZERO);
    }

    #[test]
    fn the_ack_of_what_the_round_starting_ack_released_ends_the_round() {
        // net/ipv4/tcp_cubic.c `hystart_update`: `if (after(tp->snd_una, ca->end_seq))
        // bictcp_hystart_reset(sk)`, with `end_seq = tp->snd_nxt` taken in `pkts_acked`, before
        // `tcp_data_snd_check` sends what the ACK released. The round starts at the ACK at 1 s;
        // the packets it lets out leave at 1 s, from `end_seq` on, so the ACK of the first of
        // them (sent at 1 s) has `snd_una > end_seq` and starts the next round. The ACK of a
        // packet sent before 1 s (`snd_una <= end_seq`) does not.
        let mut h = LinuxHyStart::default();
        h.on_ack(at_us(1_000_000), at_us(950_000), Sender::unpaced(20));
        assert_eq!((h.round_start, h.sample_cnt), (Some(at_us(1_000_000)), 1));
        h.on_ack(at_us(1_049_000), at_us(999_999), Sender::unpaced(21));
        assert_eq!((h.round_start, h.sample_cnt), (Some(at_us(1_000_000)), 2));
        h.on_ack(at_us(1_050_000), at_us(1_000_000), Sender::unpaced(22));
        assert_eq!((h.round_start, h.sample_cnt), (Some(at_us(1_050_000)), 1));
    }
}
