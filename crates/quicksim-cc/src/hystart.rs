//! HyStart++ (RFC 9406): a slow start that leaves early when the round-trip time starts to grow,
//! through a conservative slow start (CSS) that goes back to slow start if the increase was
//! spurious. Shared by every controller that has a slow start (`hystart = true` in its config;
//! off by default, so results do not change).
//!
//! The controller keeps its own window and slow-start threshold and asks this state machine:
//! - per acknowledged packet in slow start, [`HyStart::increase`]: the bytes to add (all of them
//!   in slow start, a quarter in CSS, RFC 9406 §4.2);
//! - per ACK, [`HyStart::on_ack_end`] with the ACK's RTT sample and the send time of its newest
//!   packet; it answers whether CSS has run its rounds and congestion avoidance begins
//!   (`ssthresh = cwnd`, RFC 9406 §4.2);
//! - on a loss or ECN mark, [`HyStart::on_congestion`] (slow start and CSS end, the controller
//!   reacts as it always does).
//!
//! Rounds (RFC 9406 §4.2 `windowEnd = SND.NXT`) are tracked by send time instead of sequence
//! number, which both transports already report (`AckSummary::largest_acked_sent_time`): a round
//! that starts at time T ends with the first ACK of a packet sent at or after T, i.e. after the
//! round started. The two agree except for a packet sent at the very instant of the round's
//! start but before it (same picosecond, earlier event), which here ends the round one packet
//! early.
//!
//! Not modelled: the ABC limit L on the growth per ACK (RFC 9406 §4.2 "L = infinity if paced,
//! L = 8 otherwise"): the controllers here grow by every acked byte, as RFC 9002 §7.3.1 does.

use quicksim_engine::{SimDuration, SimTime};

/// Picoseconds per millisecond (`SimDuration` counts picoseconds).
const PS_PER_MS: u64 = 1_000_000_000;
use serde::{Deserialize, Serialize};

/// RFC 9406 §4.3: lower bound of the RTT increase that ends slow start.
pub const MIN_RTT_THRESH: SimDuration = SimDuration(4 * PS_PER_MS);
/// RFC 9406 §4.3: upper bound of that increase.
pub const MAX_RTT_THRESH: SimDuration = SimDuration(16 * PS_PER_MS);
/// RFC 9406 §4.3: the threshold is the last round's minimum RTT over this, clamped.
pub const MIN_RTT_DIVISOR: u64 = 8;
/// RFC 9406 §4.3: RTT samples a round needs before its minimum is trusted.
pub const N_RTT_SAMPLE: u32 = 8;
/// RFC 9406 §4.3: CSS grows the window this many times slower than slow start.
pub const CSS_GROWTH_DIVISOR: u64 = 4;
/// RFC 9406 §4.3: rounds spent in CSS before congestion avoidance.
pub const CSS_ROUNDS: u32 = 5;

/// Where HyStart++ is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Stage {
    /// Standard slow start, watching the RTT of each round.
    SlowStart,
    /// Conservative slow start, `rounds` rounds completed so far.
    Css { rounds: u32 },
    /// Slow start is over (CSS ran its rounds, or a congestion event): nothing more to do.
    Done,
}

/// HyStart++ state for one path (RFC 9406 §4.2 variables).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct HyStart {
    stage: Stage,
    /// When the current round started; `None` before the first ACK.
    round_start: Option<SimTime>,
    /// lastRoundMinRTT and currentRoundMinRTT; `None` = infinity.
    last_round_min_rtt: Option<SimDuration>,
    current_round_min_rtt: Option<SimDuration>,
    /// rttSampleCount of the current round.
    samples: u32,
    /// cssBaselineMinRtt: the minimum RTT of the round that entered CSS.
    css_baseline: Option<SimDuration>,
    /// Carry of the CSS division, in bytes.
    css_rem: u64,
}

impl Default for HyStart {
    fn default() -> Self {
        HyStart::new()
    }
}

impl HyStart {
    /// A connection starts in slow start.
    pub fn new() -> Self {
        HyStart {
            stage: Stage::SlowStart,
            round_start: None,
            last_round_min_rtt: None,
            current_round_min_rtt: None,
            samples: 0,
            css_baseline: None,
            css_rem: 0,
        }
    }

    pub fn stage(&self) -> Stage {
        self.stage
    }

    /// The bytes slow start adds for `acked` newly acknowledged bytes: all of them in slow
    /// start, `acked / CSS_GROWTH_DIVISOR` in CSS (RFC 9406 §4.2), with the remainder carried.
    pub fn increase(&mut self, acked: u64) -> u64 {
        match self.stage {
            Stage::Css { .. } => {
                let n = acked + self.css_rem;
                self.css_rem = n % CSS_GROWTH_DIVISOR;
                n / CSS_GROWTH_DIVISOR
            }
            Stage::SlowStart | Stage::Done => acked,
        }
    }

    /// One ACK in slow start or CSS, at `now`, with RTT sample `rtt` (the latest RTT) and the
    /// send time of its newest acknowledged packet. Returns true when CSS has completed
    /// CSS_ROUNDS rounds: the controller sets ssthresh = cwnd and enters congestion avoidance.
    pub fn on_ack_end(&mut self, now: SimTime, rtt: SimDuration, largest_acked_sent_time: SimTime) -> bool {
        if self.stage == Stage::Done {
            return false;
        }
        // RFC 9406 §4.2: a round ends when windowEnd is acked, i.e. a packet sent after the
        // round started; the next one starts now.
        let round_over = match self.round_start {
            None => true,
            Some(start) => largest_acked_sent_time >= start,
        };
        if round_over {
            if let Stage::Css { rounds } = &mut self.stage {
                *rounds += 1;
                if *rounds >= CSS_ROUNDS {
                    // RFC 9406 §4.2: CSS_ROUNDS rounds in CSS: congestion avoidance.
                    self.stage = Stage::Done;
                    return true;
                }
            }
            self.last_round_min_rtt = self.current_round_min_rtt;
            self.current_round_min_rtt = None;
            self.samples = 0;
            self.round_start = Some(now);
        }
        self.current_round_min_rtt = Some(self.current_round_min_rtt.map_or(rtt, |m| m.min(rtt)));
        self.samples += 1;
        if self.samples < N_RTT_SAMPLE {
            return false;
        }
        let current = self.current_round_min_rtt.expect("set above");
        match self.stage {
            Stage::SlowStart => {
                if let Some(last) = self.last_round_min_rtt {
                    // RFC 9406 §4.2: RttThresh = max(MIN_RTT_THRESH, min(last / 8, MAX_RTT_THRESH)).
                    let thresh = SimDuration(last.0 / MIN_RTT_DIVISOR).clamp(MIN_RTT_THRESH, MAX_RTT_THRESH);
                    if current >= last + thresh {
                        self.css_baseline = Some(current);
                        self.stage = Stage::Css { rounds: 0 };
                    }
                }
            }
            Stage::Css { .. } => {
                // RFC 9406 §4.2: the RTT fell below the baseline: the exit was spurious, back
                // to slow start.
                if self.css_baseline.is_some_and(|b| current < b) {
                    self.css_baseline = None;
                    self.stage = Stage::SlowStart;
                }
            }
            Stage::Done => {}
        }
        false
    }

    /// A loss or ECN mark (or a timeout): slow start and CSS are over (RFC 9406 §4.2 "If a loss
    /// or ECN-marking is observed anytime during standard slow start or CSS, ... exit").
    pub fn on_congestion(&mut self) {
        self.stage = Stage::Done;
    }
}

/// Drives a controller's HyStart++ in its unit tests (`algos/*.rs`).
#[cfg(test)]
pub(crate) mod testing {
    use crate::{AckEvent, AckSummary, CcCtx, CongestionController, RttEstimator, WindowRules};
    use quicksim_engine::{SimDuration, SimTime};

    /// One ACK of one `mds`-byte packet sent at `sent`, acked at `now`, whose RTT sample is
    /// `rtt_ms`: `on_ack` then `on_ack_end`, as the transports call them.
    pub(crate) fn one_ack(
        cc: &mut impl CongestionController,
        mds: u64,
        bytes_in_flight: u64,
        rtt_ms: u64,
        sent: SimTime,
        now: SimTime,
    ) {
        let mut rtt = RttEstimator::new(SimDuration::from_millis(100));
        rtt.update(SimDuration::from_millis(rtt_ms), SimDuration::ZERO, SimDuration::ZERO, true);
        let mut cx = CcCtx { now, mds, rtt: &rtt, bytes_in_flight, window: &WindowRules::RFC9002 };
        cc.on_ack(&mut cx, &AckEvent { sent_time: sent, bytes: mds, app_limited: false });
        let summary = AckSummary {
            acked_bytes: mds,
            acked_packets: 1,
            largest_acked_sent_time: sent,
            app_limited: false,
            rate: None,
            ce_packets: 0,
        };
        cc.on_ack_end(&mut cx, &summary);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> SimDuration {
        SimDuration::from_millis(v)
    }
    fn at(v: u64) -> SimTime {
        SimTime::from_millis(v)
    }

    /// One round of `n` ACKs at `t` ms (each acking a packet sent in the previous round, at
    /// `t - 100` ms, so the first ACK ends the previous round) with RTT `rtt` ms.
    fn round(h: &mut HyStart, t: u64, n: u32, rtt: u64) -> Vec<bool> {
        (0..n).map(|i| h.on_ack_end(at(t) + SimDuration(u64::from(i)), ms(rtt), at(t - 100))).collect()
    }

    #[test]
    fn constants_are_the_rfcs() {
        assert_eq!((MIN_RTT_THRESH, MAX_RTT_THRESH), (ms(4), ms(16)));
        assert_eq!((MIN_RTT_DIVISOR, N_RTT_SAMPLE, CSS_GROWTH_DIVISOR, CSS_ROUNDS), (8, 8, 4, 5));
    }

    #[test]
    fn rounds_end_when_a_packet_sent_after_the_round_start_is_acked() {
        let mut h = HyStart::new();
        // The first ACK starts round 1 at 100 ms; 7 more samples of 50 ms.
        h.on_ack_end(at(100), ms(50), at(0));
        assert_eq!(h.round_start, Some(at(100)));
        for _ in 0..7 {
            h.on_ack_end(at(110), ms(50), at(99));
        }
        // Packets sent before 100 ms do not end the round...
        assert_eq!((h.round_start, h.samples), (Some(at(100)), 8));
        // ... one sent at the round's start does: round 2 starts at 150 ms with 50 ms as the
        // last round's minimum.
        h.on_ack_end(at(150), ms(60), at(100));
        assert_eq!(h.round_start, Some(at(150)));
        assert_eq!(
            (h.last_round_min_rtt, h.current_round_min_rtt, h.samples),
            (Some(ms(50)), Some(ms(60)), 1)
        );
    }

    #[test]
    fn rtt_threshold_is_an_eighth_of_the_last_minimum_clamped_to_4_16_ms() {
        // Last round's minimum 100 ms: threshold 12.5 ms. 112 ms stays in slow start, 112.5 ms
        // leaves it.
        for (rtt_us, css) in [(112_000u64, false), (112_500, true)] {
            let mut h = HyStart::new();
            round(&mut h, 100, 8, 100);
            for i in 0..8 {
                h.on_ack_end(at(300) + SimDuration(i), SimDuration::from_micros(rtt_us), at(200));
            }
            assert_eq!(h.stage() != Stage::SlowStart, css, "rtt {rtt_us} us");
        }
        // 20 ms: 20/8 = 2.5 ms is raised to 4 ms (24 ms stays, 24.000001 would not matter: 24
        // is the edge, >= leaves). 200 ms: 25 ms is capped at 16 ms.
        for (last, now, css) in [(20, 23, false), (20, 24, true), (200, 215, false), (200, 216, true)] {
            let mut h = HyStart::new();
            round(&mut h, 1_000, 8, last);
            round(&mut h, 2_000, 8, now);
            assert_eq!(h.stage() != Stage::SlowStart, css, "{last} -> {now} ms");
        }
    }

    #[test]
    fn needs_eight_samples_in_the_round() {
        let mut h = HyStart::new();
        round(&mut h, 100, 8, 100);
        // 7 samples at 200 ms: not yet; the 8th decides.
        round(&mut h, 300, 7, 200);
        assert_eq!(h.stage(), Stage::SlowStart);
        h.on_ack_end(at(301), ms(200), at(250));
        assert_eq!(h.stage(), Stage::Css { rounds: 0 });
        // The first round has no last minimum: never leaves, whatever the RTT.
        let mut first = HyStart::new();
        round(&mut first, 100, 50, 900);
        assert_eq!(first.stage(), Stage::SlowStart);
    }

    #[test]
    fn css_grows_a_quarter_and_ends_after_five_rounds() {
        let mut h = HyStart::new();
        assert_eq!(h.increase(1_000), 1_000);
        round(&mut h, 100, 8, 100);
        round(&mut h, 200, 8, 120);
        assert_eq!(h.stage(), Stage::Css { rounds: 0 });
        // 1000 B acked adds 250 B; 1001 + 1003 B add 250 + 251 with the carry (2004 / 4).
        assert_eq!(h.increase(1_000), 250);
        assert_eq!(h.increase(1_001) + h.increase(1_003), 501);
        // Rounds 1 to 4 in CSS (RTT stays high: no return to slow start); the 5th round's end
        // says congestion avoidance.
        for r in 1..=4 {
            let v = round(&mut h, 200 + 100 * r, 8, 120);
            assert!(v.iter().all(|&x| !x));
            assert_eq!(h.stage(), Stage::Css { rounds: r as u32 });
        }
        assert!(h.on_ack_end(at(800), ms(120), at(700)));
        assert_eq!(h.stage(), Stage::Done);
        assert_eq!(h.increase(1_000), 1_000);
        assert!(!h.on_ack_end(at(900), ms(120), at(800)));
    }

    #[test]
    fn css_returns_to_slow_start_when_the_rtt_falls_below_the_baseline() {
        let mut h = HyStart::new();
        round(&mut h, 100, 8, 100);
        round(&mut h, 200, 8, 120);
        assert_eq!((h.stage(), h.css_baseline), (Stage::Css { rounds: 0 }, Some(ms(120))));
        // Next round: minimum 119 ms < baseline 120 ms after 8 samples: spurious, slow start.
        round(&mut h, 300, 7, 119);
        assert_eq!(h.stage(), Stage::Css { rounds: 1 });
        h.on_ack_end(at(301), ms(119), at(250));
        assert_eq!((h.stage(), h.css_baseline), (Stage::SlowStart, None));
        assert_eq!(h.increase(1_000), 1_000);
    }

    #[test]
    fn a_congestion_event_ends_it() {
        let mut h = HyStart::new();
        round(&mut h, 100, 8, 100);
        h.on_congestion();
        assert_eq!(h.stage(), Stage::Done);
        round(&mut h, 200, 8, 500);
        assert_eq!(h.stage(), Stage::Done);
    }
}
