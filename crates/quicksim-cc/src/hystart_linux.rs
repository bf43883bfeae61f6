//! HyStart as Linux's CUBIC runs it (net/ipv4/tcp_cubic.c, Linux 5.7 to 6.x: `hystart_update`,
//! `bictcp_hystart_reset`, `cubictcp_acked`; Ha & Rhee, "Taming the elephants: New TCP slow
//! start", Computer Networks 2011), not RFC 9406's HyStart++ ([`crate::hystart`]). Slow start
//! ends (ssthresh = cwnd) at the first of two signs, once the window is at least 16 segments
//! (`hystart_low_window`):
//! - ACK train: the ACKs of a round keep arriving within 2 ms of each other
//!   (`hystart_ack_delta_us`) for longer than half the minimum RTT (`delay_min >> 1`; Linux
//!   waits for the whole minimum RTT when the socket is paced by fq or by the controller: not
//!   modelled, the sender here counts as unpaced);
//! - delay: the smallest RTT of the round, once the round has had 8 samples
//!   (`HYSTART_MIN_SAMPLES`), exceeds the minimum RTT by clamp(min RTT / 8, 4 ms, 16 ms)
//!   (`HYSTART_DELAY_THRESH`).
//!
//! Rounds are Linux's `end_seq = snd_nxt`, counted by send time: a round that starts at T
//! ends with the first ACK of a packet sent after T (what the ACK at T itself releases is sent
//! at T, and Linux has taken `snd_nxt` before it goes out: `tcp_ack` runs `pkts_acked` before
//! `tcp_data_snd_check`). The first
//! round starts at the first ACK with a window of 16 segments or more (below it Linux does not
//! call `hystart_update`, where the round check is). The RTT of an
//! ACK is that of its newest acknowledged packet (Linux's `ca_rtt_us`). The minimum RTT is the
//! controller's `delay_min`, forgotten after a timeout (`bictcp_reset` from `cubictcp_state`),
//! when HyStart also starts again.
//!
//! Not modelled: `hystart_ack_delay`, the allowance for TSO/GRO aggregation (zero when GSO is off,
//! as on the emulator's TUN interfaces); Linux's exit takes effect before the ACK's own growth
//! (`pkts_acked` runs before `cong_avoid`), here after it (at most the segments of one ACK).

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
    /// packet was sent at `newest_sent`; `cwnd_segments` is the window in segments and
    /// `slow_start` whether the controller is in slow start. Returns the exit if this ACK
    /// found it (the controller then sets ssthresh = cwnd).
    pub fn on_ack(
        &mut self,
        now: SimTime,
        newest_sent: SimTime,
        cwnd_segments: u64,
        slow_start: bool,
    ) -> Option<Exit> {
        // Linux counts microseconds and never lets a sample be 0.
        let delay = (now - newest_sent).max(SimDuration::from_micros(1));
        let delay_min = self.delay_min.map_or(delay, |d| d.min(delay));
        self.delay_min = Some(delay_min);
        if self.found.is_some() || !slow_start {
            return None;
        }
        // Linux calls `hystart_update`, whose first step is the round check, only from a window
        // of 16 segments on (`cubictcp_acked`): the first round starts at the first ACK there,
        // not at the connection's first ACK, which places every later round boundary.
        if cwnd_segments < LOW_WINDOW_SEGMENTS {
            return None;
        }
        // Strictly after: what this ACK makes the sender send leaves at `now` and belongs to
        // the round being started (Linux takes `end_seq = snd_nxt` before sending it).
        if self.round_start.is_none_or(|start| newest_sent > start) {
            self.reset(now);
        }
        if now - self.last_ack <= ACK_DELTA {
            self.last_ack = now;
            let start = self.round_start.expect("set above");
            if now - start > SimDuration(delay_min.ps() / 2) {
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
        assert_eq!(h.on_ack(at_us(t), at_us(t - 100_000), 20, true), None);
        // Round 2 starts with an ACK of a packet sent after round 1 began (at 100 ms): RTTs
        // of 112 ms ≤ 112.5 never trigger; 113 ms does, on the ninth sample of the round.
        t = 250_000;
        for i in 0..9 {
            let now = t + i * 10_000;
            assert_eq!(h.on_ack(at_us(now), at_us(now - 112_000), 20, true), None, "sample {i}");
        }
        let mut h2 = h.clone();
        // A round of 113 ms samples: 8 samples to learn curr_rtt, the ninth tests it.
        t = 400_000;
        for i in 0..8 {
            let now = t + i * 10_000;
            assert_eq!(h2.on_ack(at_us(now), at_us(now - 113_000), 20, true), None, "sample {i}");
        }
        assert_eq!(h2.on_ack(at_us(t + 80_000), at_us(t + 80_000 - 113_000), 20, true), Some(Exit::Delay));
        // Below 16 segments nothing is tested.
        for i in 0..12 {
            let now = t + i * 10_000;
            assert_eq!(h.on_ack(at_us(now), at_us(now - 113_000), 15, true), None);
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
            out = h.on_ack(at_us(now), sent(now), 32, true);
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
            assert_eq!(h.on_ack(at_us(now), sent(now), 32, true), None);
        }
        // A timeout forgets everything.
        h.on_timeout();
        assert_eq!(h, LinuxHyStart::default());
    }

    #[test]
    fn the_first_round_starts_at_sixteen_segments() {
        // The same 1 ms train, the window growing by one segment per ACK from 10: the round
        // (and the train) starts with the ACK that finds 16 segments, at 1.006 s, not with the
        // connection's first ACK at 1.000 s, so the train ends slow start 20 ms after that, at
        // 1.027 s (window 37; from 1.000 s it would have been 1.021 s, window 31).
        let mut h = LinuxHyStart::default();
        let mut found = None;
        for i in 0..40 {
            let now = 1_000_000 + i * 1_000;
            if let Some(e) = h.on_ack(at_us(now), at_us(now - 40_000), 10 + i, true) {
                found = Some((e, now, 10 + i));
                break;
            }
        }
        assert_eq!(found, Some((Exit::AckTrain, 1_027_000, 37)));
    }

    #[test]
    fn what_the_round_starting_ack_releases_belongs_to_that_round() {
        // The round starts at the ACK at 1 s. The packets that ACK lets out leave at 1 s too
        // (Linux took `end_seq = snd_nxt` before they went): their ACK stays in the round; the
        // ACK of a packet sent after 1 s starts the next.
        let mut h = LinuxHyStart::default();
        h.on_ack(at_us(1_000_000), at_us(950_000), 20, true);
        assert_eq!((h.round_start, h.sample_cnt), (Some(at_us(1_000_000)), 1));
        h.on_ack(at_us(1_050_000), at_us(1_000_000), 22, true);
        assert_eq!((h.round_start, h.sample_cnt), (Some(at_us(1_000_000)), 2));
        h.on_ack(at_us(1_053_000), at_us(1_000_001), 24, true);
        assert_eq!((h.round_start, h.sample_cnt), (Some(at_us(1_053_000)), 1));
    }
}
