//! The retransmission timeout of RFC 6298: RTT smoothing, RTO bounds, exponential backoff.
//!
//! The smoothing is quicksim-cc's `RttEstimator`, which is RFC 6298 §2.2–2.3 exactly when the
//! ACK delay is zero (alpha 1/8, beta 1/4, first sample SRTT = R, RTTVAR = R/2). TCP differs
//! from QUIC's PTO in the rest, kept here:
//! - before the first sample the RTO is `initial_rto` (1 s, §2.1), not 3·kInitialRtt;
//! - RTO = SRTT + max(G, 4·RTTVAR), then at least `min_rto` (§2.4: 1 s; Linux 200 ms) and at
//!   most `max_rto` (§2.5); QUIC adds max_ack_delay and has no floor;
//! - a timeout doubles the RTO (§5.5) and the doubled value stays until a new RTT sample
//!   (Karn's rule, §5 note and Karn & Partridge 1987): which ACKs give samples is the caller's
//!   choice (only segments never retransmitted, unless the timestamps option disambiguates);
//! - if the SYN timed out and no sample exists when data starts, the RTO is 3 s (§5.7).
//!
//! Linux computes its RTO differently (`tcp_set_rto`: SRTT + max(4·mdev, TCP_RTO_MIN), the
//! floor applies to the variance term, not to the sum): with Linux's rule a 100 ms path has an
//! RTO of at least 300 ms, here of at least `max(min_rto, 100 ms + 4·RTTVAR)`.

use quicksim_cc::RttEstimator;
use quicksim_engine::SimDuration;
use serde::{Deserialize, Serialize};

use super::config::TcpConfig;

/// RFC 6298 §5.7: the RTO once data starts after a SYN timeout, without an RTT sample.
pub const RTO_AFTER_SYN_TIMEOUT: SimDuration = SimDuration(3_000_000_000_000);
/// Cap of the backoff exponent (2^16 times any RTO exceeds every sensible `max_rto`).
const MAX_SHIFT: u32 = 16;

/// RTT estimate and retransmission timeout of one connection.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Rto {
    pub rtt: RttEstimator,
    /// Consecutive timeouts without a new RTT sample (the backoff exponent).
    pub backoff: u32,
    /// The SYN or SYN-ACK timed out (RFC 6298 §5.7).
    pub syn_timed_out: bool,
}

impl Rto {
    pub fn new(cfg: &TcpConfig) -> Self {
        Rto { rtt: RttEstimator::new(cfg.initial_rto), backoff: 0, syn_timed_out: false }
    }

    /// One RTT measurement (RFC 6298 §2.2/2.3); ends the backoff (§5.7 with Karn's rule).
    pub fn on_sample(&mut self, sample: SimDuration) {
        self.rtt.update(sample, SimDuration::ZERO, SimDuration::ZERO, true);
        self.backoff = 0;
    }

    /// The timer expired: double the RTO (RFC 6298 §5.5).
    pub fn on_timeout(&mut self) {
        self.backoff = (self.backoff + 1).min(MAX_SHIFT);
    }

    /// RTO before backoff: §2.1 without a sample, else SRTT + max(G, 4·RTTVAR) bounded.
    pub fn base(&self, cfg: &TcpConfig, established: bool) -> SimDuration {
        if !self.rtt.has_sample() {
            if established && self.syn_timed_out {
                return RTO_AFTER_SYN_TIMEOUT.max(cfg.initial_rto).min(cfg.max_rto);
            }
            return cfg.initial_rto;
        }
        self.rtt.pto_base(cfg.clock_granularity).max(cfg.min_rto).min(cfg.max_rto)
    }

    /// The current timeout: base · 2^backoff, at most `max_rto` (RFC 6298 §5.5, §2.5).
    pub fn current(&self, cfg: &TcpConfig, established: bool) -> SimDuration {
        let b = self.base(cfg, established);
        SimDuration(b.ps().saturating_mul(1 << self.backoff)).min(cfg.max_rto)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> SimDuration {
        SimDuration::from_millis(x)
    }

    #[test]
    fn initial_rto_then_samples() {
        let cfg = TcpConfig::default();
        let mut r = Rto::new(&cfg);
        assert_eq!(r.current(&cfg, false), ms(1000));
        // First sample 100 ms: SRTT 100, RTTVAR 50, RTO = 100 + 200 = 300 ms.
        r.on_sample(ms(100));
        assert_eq!(r.current(&cfg, true), ms(300));
        // Second sample 100 ms: RTTVAR = 3/4·50 = 37.5, RTO = 100 + 150 = 250 ms.
        r.on_sample(ms(100));
        assert_eq!(r.current(&cfg, true), ms(250));
        // Many equal samples: RTTVAR → 0, the 200 ms floor wins over 100 + 4·RTTVAR.
        for _ in 0..40 {
            r.on_sample(ms(100));
        }
        assert_eq!(r.current(&cfg, true), ms(200));
        // RFC floor of 1 s.
        let rfc = TcpConfig { min_rto: ms(1000), ..Default::default() };
        assert_eq!(r.current(&rfc, true), ms(1000));
    }

    #[test]
    fn backoff_doubles_until_a_sample_and_is_capped() {
        let cfg = TcpConfig::default();
        let mut r = Rto::new(&cfg);
        r.on_sample(ms(100));
        r.on_timeout();
        assert_eq!(r.current(&cfg, true), ms(600));
        r.on_timeout();
        assert_eq!(r.current(&cfg, true), ms(1200));
        for _ in 0..20 {
            r.on_timeout();
        }
        assert_eq!(r.current(&cfg, true), SimDuration::from_secs(120));
        // A sample ends the backoff: SRTT = 7/8·100 + 1/8·100 = 100, RTTVAR = 3/4·50 = 37.5.
        r.on_sample(ms(100));
        assert_eq!(r.backoff, 0);
        assert_eq!(r.current(&cfg, true), ms(250));
    }

    #[test]
    fn syn_timeout_without_sample_gives_three_seconds() {
        let cfg = TcpConfig::default();
        let mut r = Rto::new(&cfg);
        r.on_timeout();
        // The SYN retransmission waits 2 s (1 s doubled).
        assert_eq!(r.current(&cfg, false), ms(2000));
        r.syn_timed_out = true;
        r.backoff = 0;
        assert_eq!(r.current(&cfg, true), ms(3000));
    }
}
