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
//! Linux computes its RTO differently (`rto_estimator = "linux"`, [`LinuxRttvar`]): the floor
//! applies to the variance term, not to the sum, so a 100 ms path has an RTO of at least
//! 300 ms there, and of at least `max(min_rto, 100 ms + 4·RTTVAR)` under RFC 6298.

use quicksim_cc::RttEstimator;
use quicksim_engine::SimDuration;
use serde::{Deserialize, Serialize};

use super::config::{RtoEstimator, TcpConfig};

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
    /// Linux's variance state, with `rto_estimator = "linux"` once a sample arrived.
    pub linux: Option<LinuxRttvar>,
}

/// Linux's RTT variance (net/ipv4/tcp_input.c `tcp_rtt_estimator`), in picoseconds where
/// Linux counts microseconds; the names are Linux's, each "4·" scaled as Linux stores them
/// (`mdev_us` is four times the mean deviation).
///
/// - First sample m: mdev = 2m (so the RTO is 3m), rttvar = max(mdev, rto_min).
/// - Later: err = m − SRTT (SRTT before this sample). mdev += |err| − mdev/4, except that when
///   err < 0 a positive |err| − mdev/4 is divided by 8 first (Linux: "similar to one of Eifel
///   findings": a falling RTT shrinks the RTO slowly).
/// - mdev_max is the largest mdev of the current round trip (at least rto_min); rttvar rises
///   to it at once, and at the end of a round trip (SND.UNA past `rtt_seq`, the SND.NXT when it
///   began) falls a quarter of the way to it.
/// - RTO = SRTT + rttvar, at most `max_rto` (`__tcp_set_rto`, `tcp_bound_rto`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinuxRttvar {
    pub mdev: SimDuration,
    pub mdev_max: SimDuration,
    pub rttvar: SimDuration,
    pub rtt_seq: u64,
}

impl LinuxRttvar {
    /// The first sample `m` (`rto_min`: the floor of the variance term; `snd_nxt` ends the
    /// first round trip).
    pub fn first(m: SimDuration, rto_min: SimDuration, snd_nxt: u64) -> Self {
        let mdev = SimDuration(m.ps().saturating_mul(2));
        let rttvar = mdev.max(rto_min);
        LinuxRttvar { mdev, mdev_max: rttvar, rttvar, rtt_seq: snd_nxt }
    }

    /// A later sample `m`, with `srtt` the smoothed RTT before it.
    pub fn update(
        &mut self,
        m: SimDuration,
        srtt: SimDuration,
        rto_min: SimDuration,
        snd_una: u64,
        snd_nxt: u64,
    ) {
        let quarter = (self.mdev.ps() / 4) as i128;
        let err = m.ps() as i128 - srtt.ps() as i128;
        let step = if err < 0 {
            let e = -err - quarter;
            if e > 0 {
                e >> 3
            } else {
                e
            }
        } else {
            err - quarter
        };
        self.mdev = SimDuration((self.mdev.ps() as i128 + step).max(0) as u64);
        if self.mdev > self.mdev_max {
            self.mdev_max = self.mdev;
            self.rttvar = self.rttvar.max(self.mdev_max);
        }
        if snd_una > self.rtt_seq {
            if self.mdev_max < self.rttvar {
                self.rttvar = self.rttvar - SimDuration((self.rttvar - self.mdev_max).ps() / 4);
            }
            self.rtt_seq = snd_nxt;
            self.mdev_max = rto_min;
        }
    }
}

impl Rto {
    pub fn new(cfg: &TcpConfig) -> Self {
        Rto { rtt: RttEstimator::new(cfg.initial_rto), backoff: 0, syn_timed_out: false, linux: None }
    }

    /// One RTT measurement (RFC 6298 §2.2/2.3); ends the backoff (§5.7 with Karn's rule).
    /// `snd_una` and `snd_nxt` after the ACK that gave it (Linux's round trips).
    pub fn on_sample(&mut self, cfg: &TcpConfig, sample: SimDuration, snd_una: u64, snd_nxt: u64) {
        if cfg.rto_estimator() == RtoEstimator::Linux {
            match (&mut self.linux, self.rtt.has_sample()) {
                (Some(l), true) => l.update(sample, self.rtt.smoothed(), cfg.min_rto, snd_una, snd_nxt),
                _ => self.linux = Some(LinuxRttvar::first(sample, cfg.min_rto, snd_nxt)),
            }
        }
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
        if let Some(l) = &self.linux {
            // `__tcp_set_rto`: SRTT + rttvar (rttvar already holds the floor), `tcp_bound_rto`.
            return (self.rtt.smoothed() + l.rttvar).min(cfg.max_rto);
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
        r.on_sample(&cfg, ms(100), 1, 1);
        assert_eq!(r.current(&cfg, true), ms(300));
        // Second sample 100 ms: RTTVAR = 3/4·50 = 37.5, RTO = 100 + 150 = 250 ms.
        r.on_sample(&cfg, ms(100), 1, 1);
        assert_eq!(r.current(&cfg, true), ms(250));
        // Many equal samples: RTTVAR → 0, the 200 ms floor wins over 100 + 4·RTTVAR.
        for _ in 0..40 {
            r.on_sample(&cfg, ms(100), 1, 1);
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
        r.on_sample(&cfg, ms(100), 1, 1);
        r.on_timeout();
        assert_eq!(r.current(&cfg, true), ms(600));
        r.on_timeout();
        assert_eq!(r.current(&cfg, true), ms(1200));
        for _ in 0..20 {
            r.on_timeout();
        }
        assert_eq!(r.current(&cfg, true), SimDuration::from_secs(120));
        // A sample ends the backoff: SRTT = 7/8·100 + 1/8·100 = 100, RTTVAR = 3/4·50 = 37.5.
        r.on_sample(&cfg, ms(100), 1, 1);
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

    fn us(x: u64) -> SimDuration {
        SimDuration::from_micros(x)
    }

    #[test]
    fn linux_floors_the_variance_term_not_the_sum() {
        let cfg = TcpConfig { rto_estimator: Some(RtoEstimator::Linux), ..Default::default() };
        let mut r = Rto::new(&cfg);
        assert_eq!(r.current(&cfg, false), ms(1000));
        // First sample 100 ms (SND.NXT 1): mdev = 200, rttvar = max(200, 200): RTO 300 ms.
        r.on_sample(&cfg, ms(100), 1, 1);
        assert_eq!(r.current(&cfg, true), ms(300));
        // Equal samples: mdev decays to 0, but each round trip restarts mdev_max at rto_min, so
        // rttvar stays 200 ms and the RTO 300 ms (RFC 6298: 250 ms, then the 200 ms floor).
        let mut una = 1;
        for _ in 0..40 {
            una += 10;
            r.on_sample(&cfg, ms(100), una, una + 10);
        }
        assert_eq!(r.linux.unwrap().rttvar, ms(200));
        assert_eq!(r.current(&cfg, true), ms(300));
        // The profile selects it too.
        let linux = TcpConfig { profile: super::super::TcpProfile::Linux, ..Default::default() };
        assert_eq!(linux.rto_estimator(), RtoEstimator::Linux);
        assert_eq!(TcpConfig::default().rto_estimator(), RtoEstimator::Rfc6298);
    }

    #[test]
    fn linux_rttvar_rises_at_once_and_decays_per_round_trip() {
        let cfg = TcpConfig { rto_estimator: Some(RtoEstimator::Linux), ..Default::default() };
        let mut r = Rto::new(&cfg);
        // First sample 100 ms: mdev 200, rttvar 200, rtt_seq 1.
        r.on_sample(&cfg, ms(100), 1, 1);
        // 300 ms, SND.UNA 2 > rtt_seq: err 200, mdev = 200 + 200 − 50 = 350 > mdev_max: rttvar
        // 350; the round ends (mdev_max 350 is not below rttvar): rtt_seq 20, mdev_max 200.
        // SRTT = 7/8·100 + 1/8·300 = 125: RTO = 125 + 350 = 475 ms.
        r.on_sample(&cfg, ms(300), 2, 20);
        assert_eq!(r.current(&cfg, true), ms(475));
        // 125 ms in the same round: err 0, mdev = 350 − 87.5 = 262.5 > mdev_max 200: mdev_max
        // 262.5, rttvar stays 350.
        r.on_sample(&cfg, ms(125), 5, 20);
        let l = r.linux.unwrap();
        assert_eq!((l.mdev, l.mdev_max, l.rttvar), (us(262_500), us(262_500), ms(350)));
        assert_eq!(r.current(&cfg, true), ms(475));
        // 125 ms, SND.UNA 21 > 20: mdev = 262.5 − 65.625 = 196.875; the round ends with
        // mdev_max 262.5 below rttvar: rttvar −= (350 − 262.5)/4 = 21.875 → 328.125 ms.
        r.on_sample(&cfg, ms(125), 21, 40);
        assert_eq!(r.linux.unwrap().rttvar, us(328_125));
        assert_eq!(r.current(&cfg, true), us(453_125));
        // A sample below SRTT (25 ms): |err| − mdev/4 = 100 − 49.21875 = 50.78125 > 0 is cut
        // to an eighth, 6.34765625: mdev = 203.22265625 ms (RFC 6298's rttvar would take a
        // quarter of the full 100 ms).
        r.on_sample(&cfg, ms(25), 22, 40);
        assert_eq!(r.linux.unwrap().mdev, SimDuration(203_222_656_250));
    }

    #[test]
    fn linux_backoff_and_cap() {
        let cfg = TcpConfig { rto_estimator: Some(RtoEstimator::Linux), ..Default::default() };
        let mut r = Rto::new(&cfg);
        r.on_sample(&cfg, ms(100), 1, 1);
        r.on_timeout();
        assert_eq!(r.current(&cfg, true), ms(600));
        // A 100 s RTT: RTO = 100 + 200 s capped at max_rto (120 s, `tcp_bound_rto`).
        let mut r = Rto::new(&cfg);
        r.on_sample(&cfg, SimDuration::from_secs(100), 1, 1);
        assert_eq!(r.current(&cfg, true), SimDuration::from_secs(120));
    }
}
