//! Round-trip time estimation (RFC 9002 §5), transport-neutral.
//!
//! The same smoothing is RFC 6298 §2 for TCP (alpha = 1/8, beta = 1/4, first sample sets
//! SRTT = R and RTTVAR = R/2, RTO = SRTT + max(G, 4·RTTVAR)); TCP passes a zero ack delay.
//! All arithmetic is integer picoseconds, truncating (u128 intermediates). INET multiplies
//! `simtime_t` by 3.0/4 and 7.0/8 term by term, so its values can differ from ours by a
//! picosecond or two; nothing observable depends on that.

use quicksim_engine::SimDuration;
use serde::{Deserialize, Serialize};

/// Smoothed RTT, RTT variation, minimum and latest RTT of one path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RttEstimator {
    latest: SimDuration,
    smoothed: SimDuration,
    rttvar: SimDuration,
    min: SimDuration,
    has_sample: bool,
}

impl RttEstimator {
    /// Estimator before any sample: srtt = `initial_rtt`, rttvar = `initial_rtt`/2
    /// (RFC 9002 §5.3 / §6.2.2; QUIC's kInitialRtt is 333 ms, TCP's initial RTO basis 1 s).
    /// `latest()` and `min()` are zero until the first sample (RFC 9002 Appendix A.4).
    pub fn new(initial_rtt: SimDuration) -> Self {
        RttEstimator {
            latest: SimDuration::ZERO,
            smoothed: initial_rtt,
            rttvar: SimDuration(initial_rtt.0 / 2),
            min: SimDuration::ZERO,
            has_sample: false,
        }
    }

    /// Take one RTT sample (RFC 9002 §5.3).
    ///
    /// `ack_delay` is the peer-reported delay (zero for TCP and for Initial/Handshake ACKs); it is
    /// clamped to `max_ack_delay` only once `handshake_confirmed` (INET always clamps: its
    /// transport passes `true`). It is subtracted only if the result stays at or above min_rtt.
    pub fn update(
        &mut self,
        latest_rtt: SimDuration,
        ack_delay: SimDuration,
        max_ack_delay: SimDuration,
        handshake_confirmed: bool,
    ) {
        self.latest = latest_rtt;
        if !self.has_sample {
            // RFC 9002 §5.3: the first sample initializes everything; ack_delay is ignored.
            self.has_sample = true;
            self.min = latest_rtt;
            self.smoothed = latest_rtt;
            self.rttvar = SimDuration(latest_rtt.0 / 2);
            return;
        }
        // RFC 9002 §5.2: min_rtt ignores ack delay.
        self.min = self.min.min(latest_rtt);
        let ack_delay = if handshake_confirmed { ack_delay.min(max_ack_delay) } else { ack_delay };
        // RFC 9002 §5.3: subtract ack_delay only if that does not go below min_rtt.
        let adjusted = if latest_rtt.0 >= self.min.0.saturating_add(ack_delay.0) {
            latest_rtt - ack_delay
        } else {
            latest_rtt
        };
        let diff = self.smoothed.0.abs_diff(adjusted.0);
        // RFC 9002 §5.3 (and RFC 6298 §2.3): rttvar = 3/4 rttvar + 1/4 |srtt - adj|,
        // srtt = 7/8 srtt + 1/8 adj. rttvar uses the old srtt, so it is updated first.
        self.rttvar = SimDuration(((3 * self.rttvar.0 as u128 + diff as u128) / 4) as u64);
        self.smoothed = SimDuration(((7 * self.smoothed.0 as u128 + adjusted.0 as u128) / 8) as u64);
    }

    /// Smoothed RTT (srtt).
    pub fn smoothed(&self) -> SimDuration {
        self.smoothed
    }

    /// Most recent raw sample (zero before the first one).
    pub fn latest(&self) -> SimDuration {
        self.latest
    }

    /// Minimum sample seen (zero before the first one).
    pub fn min(&self) -> SimDuration {
        self.min
    }

    /// RTT variation (rttvar).
    pub fn rttvar(&self) -> SimDuration {
        self.rttvar
    }

    /// Whether at least one sample was taken (persistent congestion needs one, RFC 9002 §7.6.2).
    pub fn has_sample(&self) -> bool {
        self.has_sample
    }

    /// srtt + max(4·rttvar, granularity): the PTO before max_ack_delay and backoff
    /// (RFC 9002 §6.2.1; RFC 6298 §2.3 RTO before its 1 s floor).
    pub fn pto_base(&self, granularity: SimDuration) -> SimDuration {
        self.smoothed + (self.rttvar * 4).max(granularity)
    }

    /// max(9/8 · max(srtt, latest_rtt), granularity): the time threshold of loss detection
    /// (RFC 9002 §6.1.2, kTimeThreshold = 9/8).
    pub fn loss_delay(&self, granularity: SimDuration) -> SimDuration {
        // RFC 9002 §6.1.2: kTimeThreshold = 9/8.
        self.smoothed.max(self.latest).mul_ratio(9, 8).max(granularity)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> SimDuration {
        SimDuration::from_millis(v)
    }
    fn us(v: u64) -> SimDuration {
        SimDuration::from_micros(v)
    }

    #[test]
    fn initial_values_before_any_sample() {
        let r = RttEstimator::new(ms(333));
        assert_eq!(r.smoothed(), ms(333));
        assert_eq!(r.rttvar(), us(166_500));
        assert_eq!(r.latest(), SimDuration::ZERO);
        assert_eq!(r.min(), SimDuration::ZERO);
        assert!(!r.has_sample());
        // PTO base with kInitialRtt: 333 + 4 * 166.5 = 999 ms (RFC 9002 §6.2.2: "1 second").
        assert_eq!(r.pto_base(ms(1)), ms(999));
        // loss delay uses srtt while latest is zero: 9/8 * 333 = 374.625 ms.
        assert_eq!(r.loss_delay(ms(1)), us(374_625));
    }

    #[test]
    fn first_sample_initializes_and_ignores_ack_delay() {
        let mut r = RttEstimator::new(ms(333));
        r.update(ms(100), ms(20), ms(25), true);
        assert!(r.has_sample());
        assert_eq!(r.latest(), ms(100));
        assert_eq!(r.min(), ms(100));
        assert_eq!(r.smoothed(), ms(100));
        assert_eq!(r.rttvar(), ms(50));
    }

    #[test]
    fn second_sample_subtracts_plausible_ack_delay() {
        let mut r = RttEstimator::new(ms(333));
        r.update(ms(100), SimDuration::ZERO, ms(25), true);
        // 120 >= 100 + 10, so adj = 110.
        r.update(ms(120), ms(10), ms(25), true);
        assert_eq!(r.latest(), ms(120));
        assert_eq!(r.min(), ms(100));
        // rttvar = (3 * 50 + |100 - 110|) / 4 = 160 / 4 = 40 ms
        assert_eq!(r.rttvar(), ms(40));
        // srtt = (7 * 100 + 110) / 8 = 101.25 ms
        assert_eq!(r.smoothed(), us(101_250));
    }

    #[test]
    fn implausible_ack_delay_is_not_subtracted() {
        let mut r = RttEstimator::new(ms(333));
        r.update(ms(100), SimDuration::ZERO, ms(25), true);
        // 105 < 100 + 10: adj = latest = 105.
        r.update(ms(105), ms(10), ms(25), true);
        // rttvar = (150 + 5) / 4 = 38.75 ms; srtt = (700 + 105) / 8 = 100.625 ms
        assert_eq!(r.rttvar(), us(38_750));
        assert_eq!(r.smoothed(), us(100_625));
    }

    #[test]
    fn ack_delay_clamped_only_after_handshake_confirmation() {
        // Confirmed: 40 ms is clamped to 25 ms, adj = 150 - 25 = 125.
        let mut a = RttEstimator::new(ms(333));
        a.update(ms(100), SimDuration::ZERO, ms(25), true);
        a.update(ms(150), ms(40), ms(25), true);
        // rttvar = (150 + 25) / 4 = 43.75; srtt = (700 + 125) / 8 = 103.125
        assert_eq!(a.rttvar(), us(43_750));
        assert_eq!(a.smoothed(), us(103_125));

        // Not confirmed: the full 40 ms is subtracted, adj = 110.
        let mut b = RttEstimator::new(ms(333));
        b.update(ms(100), SimDuration::ZERO, ms(25), false);
        b.update(ms(150), ms(40), ms(25), false);
        assert_eq!(b.rttvar(), ms(40));
        assert_eq!(b.smoothed(), us(101_250));
    }

    #[test]
    fn min_rtt_tracks_smaller_samples_and_gates_ack_delay() {
        let mut r = RttEstimator::new(ms(333));
        r.update(ms(100), SimDuration::ZERO, ms(25), true);
        r.update(ms(80), SimDuration::ZERO, ms(25), true);
        assert_eq!(r.min(), ms(80));
        // rttvar = (150 + 20) / 4 = 42.5; srtt = (700 + 80) / 8 = 97.5
        assert_eq!(r.rttvar(), us(42_500));
        assert_eq!(r.smoothed(), us(97_500));
        // 85 >= 80 + 5: adj = 80. rttvar = (3*42.5 + 17.5)/4 = 36.25; srtt = (7*97.5+80)/8 = 95.3125
        r.update(ms(85), ms(5), ms(25), true);
        assert_eq!(r.min(), ms(80));
        assert_eq!(r.rttvar(), us(36_250));
        assert_eq!(r.smoothed(), SimDuration(95_312_500_000));
    }

    #[test]
    fn integer_arithmetic_truncates_in_picoseconds() {
        let mut r = RttEstimator::new(SimDuration(3));
        assert_eq!(r.rttvar(), SimDuration(1));
        r.update(SimDuration(7), SimDuration::ZERO, SimDuration::ZERO, true);
        assert_eq!(r.rttvar(), SimDuration(3));
        r.update(SimDuration(10), SimDuration::ZERO, SimDuration::ZERO, true);
        // rttvar = (9 + 3) / 4 = 3; srtt = (49 + 10) / 8 = 7 (7.375 truncated)
        assert_eq!(r.rttvar(), SimDuration(3));
        assert_eq!(r.smoothed(), SimDuration(7));
    }

    #[test]
    fn pto_base_and_loss_delay() {
        let mut r = RttEstimator::new(ms(333));
        r.update(ms(100), SimDuration::ZERO, ms(25), true);
        // 100 + max(4 * 50, 1) = 300 ms
        assert_eq!(r.pto_base(ms(1)), ms(300));
        // 9/8 * max(100, 100) = 112.5 ms
        assert_eq!(r.loss_delay(ms(1)), us(112_500));
        // latest above srtt drives the loss delay: srtt = (700 + 200) / 8 = 112.5, latest = 200.
        r.update(ms(200), SimDuration::ZERO, ms(25), true);
        assert_eq!(r.loss_delay(ms(1)), ms(225));

        // Tiny RTTs: the granularity floors both.
        let mut t = RttEstimator::new(ms(333));
        t.update(us(40), SimDuration::ZERO, ms(25), true);
        assert_eq!(t.pto_base(ms(1)), us(1_040));
        assert_eq!(t.loss_delay(ms(1)), ms(1));
    }
}
