//! The registry of congestion control algorithms.
//!
//! Adding an algorithm: one file here, one `CcKind` variant, one entry in `NAMES` and one arm
//! in `CcKind::parse` / `CcKind::build`, one `CcSnapshot` variant. The registry tests then
//! cover it automatically.

pub mod cubic;
pub mod newreno;
pub mod none;

use crate::CongestionController;
use serde::{Deserialize, Serialize};

/// The whole state of a controller, as data (`CongestionController::snapshot`): what an idle
/// connection keeps of its controller while it is stored in encoded form.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum CcSnapshot {
    NewReno(newreno::NewReno),
    None(none::NoCc),
    Cubic(cubic::Cubic),
}

impl CcSnapshot {
    /// The controller again, in the state it was snapshotted in.
    pub fn restore(self) -> Box<dyn CongestionController> {
        match self {
            CcSnapshot::NewReno(c) => Box::new(c),
            CcSnapshot::None(c) => Box::new(c),
            CcSnapshot::Cubic(c) => Box::new(c),
        }
    }
}

/// Every registered name, as accepted by [`build`] and [`CcKind::parse`].
pub const NAMES: &[&str] = &["newreno", "none", "cubic"];

/// A congestion control algorithm and its settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CcKind {
    /// INET's NewReno; `exact_increase` selects RFC 5681 byte counting in congestion avoidance.
    NewReno { exact_increase: bool },
    /// No congestion limit (see [`none`]).
    None,
    /// CUBIC (RFC 9438) with its default [`cubic::Config`].
    Cubic,
}

impl CcKind {
    /// Parses a registry name. `exact_increase` only affects "newreno".
    pub fn parse(name: &str, exact_increase: bool) -> Result<CcKind, String> {
        match name {
            "newreno" => Ok(CcKind::NewReno { exact_increase }),
            "none" => Ok(CcKind::None),
            "cubic" => Ok(CcKind::Cubic),
            other => {
                Err(format!("congestion control {other:?} is unknown; valid names are: {}", NAMES.join(", ")))
            }
        }
    }

    /// The registry name.
    pub fn name(self) -> &'static str {
        match self {
            CcKind::NewReno { .. } => "newreno",
            CcKind::None => "none",
            CcKind::Cubic => "cubic",
        }
    }

    /// A fresh controller for a path whose maximum datagram size is `mds` bytes (> 0).
    pub fn build(self, mds: u64) -> Result<Box<dyn CongestionController>, String> {
        if mds == 0 {
            return Err(format!("congestion control {:?}: mds must be positive, got 0", self.name()));
        }
        Ok(match self {
            CcKind::NewReno { exact_increase } => {
                Box::new(newreno::NewReno::new(mds, newreno::Config { exact_increase }))
            }
            CcKind::None => Box::new(none::NoCc::new()),
            CcKind::Cubic => Box::new(cubic::Cubic::new(mds, cubic::Config::default())),
        })
    }
}

/// Builds the controller registered as `name` for a path with maximum datagram size `mds`.
/// `exact_increase` only affects "newreno" (INET's `accurateIncreaseInNewRenoCongestionAvoidance`).
pub fn build(name: &str, mds: u64, exact_increase: bool) -> Result<Box<dyn CongestionController>, String> {
    CcKind::parse(name, exact_increase)?.build(mds)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{AckEvent, CcCtx, CongestionEvent, SentPacket};
    use proptest::prelude::*;
    use quicksim_engine::{SimDuration, SimTime};

    const MDS: u64 = 1252;

    fn cx() -> CcCtx {
        let rtt = SimDuration::from_millis(20);
        CcCtx { mds: MDS, smoothed_rtt: rtt, min_rtt: rtt, latest_rtt: rtt }
    }

    /// Every (name, exact_increase) combination.
    fn all() -> impl Iterator<Item = (&'static str, bool)> {
        NAMES.iter().flat_map(|&n| [(n, true), (n, false)])
    }

    #[test]
    fn every_name_builds_and_round_trips() {
        for (name, exact) in all() {
            let kind = CcKind::parse(name, exact).unwrap();
            assert_eq!(kind.name(), name);
            let cc = build(name, MDS, exact).unwrap();
            assert_eq!(cc.name(), name);
            assert_eq!(cc.metrics().cwnd_bytes, cc.cwnd_bytes());
        }
    }

    #[test]
    fn unknown_name_lists_the_valid_ones() {
        let err = build("bbr", MDS, true).err().unwrap();
        assert!(err.contains("\"bbr\""), "{err}");
        for name in NAMES {
            assert!(err.contains(name), "{err}");
        }
        // Names are exact: INET's spelling is not an alias.
        assert!(build("NewReno", MDS, true).is_err());
        let err = build("cubic", 0, true).err().unwrap();
        assert!(err.contains("mds"), "{err}");
    }

    #[test]
    fn every_algorithm_grows_on_acks_and_backs_off_on_loss() {
        for (name, exact) in all() {
            let mut cc = build(name, MDS, exact).unwrap();
            let cx = cx();
            let start = cc.cwnd_bytes();
            let mut now = SimTime::ZERO;
            // Ten rounds of a full window, one packet per ack.
            for round in 0..10u64 {
                let sent = SimTime::from_millis(20 * round);
                now = sent + SimDuration::from_millis(20);
                let n = (cc.cwnd_bytes() / MDS).min(1_000);
                for i in 0..n {
                    let p = SentPacket {
                        time: sent,
                        bytes: MDS,
                        bytes_in_flight: (i + 1) * MDS,
                        app_limited: false,
                    };
                    cc.on_packet_sent(&cx, &p);
                }
                for i in 0..n {
                    let a = AckEvent {
                        now,
                        sent_time: sent,
                        bytes: MDS,
                        bytes_in_flight: (n - 1 - i) * MDS,
                        app_limited: false,
                    };
                    cc.on_ack(&cx, &a);
                }
            }
            let grown = cc.cwnd_bytes();
            assert!(grown >= start, "{name}: {start} -> {grown}");
            let ev = CongestionEvent {
                now: now + SimDuration::from_millis(1),
                largest_lost_sent_time: now,
                lost_bytes: MDS,
                bytes_in_flight: 0,
                persistent_congestion: false,
            };
            cc.on_congestion_event(&cx, &ev);
            let m = cc.metrics();
            assert_eq!(m.cwnd_bytes, cc.cwnd_bytes(), "{name}");
            if name == "none" {
                assert_eq!(cc.cwnd_bytes(), u64::MAX);
            } else {
                assert!(grown > start, "{name}: no growth in slow start");
                assert!(cc.cwnd_bytes() < grown, "{name}: no back-off");
                assert!(m.in_recovery, "{name}");
                assert!(m.ssthresh_bytes < u64::MAX, "{name}");
            }
            assert!(cc.pacing_rate(&cx).is_none(), "{name}");
        }
    }

    #[derive(Clone, Debug)]
    enum Step {
        Ack { bytes: u64, age_ms: u64, app_limited: bool, empty: bool },
        Loss { age_ms: u64, persistent: bool },
        Wait { ms: u64 },
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            6 => (1..=3 * MDS, 0..200u64, any::<bool>(), any::<bool>()).prop_map(
                |(bytes, age_ms, app_limited, empty)| Step::Ack { bytes, age_ms, app_limited, empty }
            ),
            1 => (0..200u64, prop::bool::weighted(0.1))
                .prop_map(|(age_ms, persistent)| Step::Loss { age_ms, persistent }),
            2 => (0..500u64).prop_map(|ms| Step::Wait { ms }),
        ]
    }

    proptest! {
        /// Whatever the sequence of acks and losses, a window never drops below 2 MDS
        /// (RFC 9002 §7.2), metrics agree with `cwnd_bytes`, and runs are deterministic.
        #[test]
        fn window_invariants(steps in prop::collection::vec(step(), 1..300)) {
            for (name, exact) in all() {
                let run = || {
                    let mut cc = build(name, MDS, exact).unwrap();
                    let cx = cx();
                    let mut now = SimTime::from_secs(1);
                    let mut trace = Vec::new();
                    for s in &steps {
                        match *s {
                            Step::Ack { bytes, age_ms, app_limited, empty } => {
                                let a = AckEvent {
                                    now,
                                    sent_time: now - SimDuration::from_millis(age_ms),
                                    bytes,
                                    bytes_in_flight: if empty { 0 } else { 10 * MDS },
                                    app_limited,
                                };
                                cc.on_ack(&cx, &a);
                            }
                            Step::Loss { age_ms, persistent } => {
                                let ev = CongestionEvent {
                                    now,
                                    largest_lost_sent_time: now - SimDuration::from_millis(age_ms),
                                    lost_bytes: MDS,
                                    bytes_in_flight: 0,
                                    persistent_congestion: persistent,
                                };
                                cc.on_congestion_event(&cx, &ev);
                            }
                            Step::Wait { ms } => now += SimDuration::from_millis(ms),
                        }
                        let m = cc.metrics();
                        assert_eq!(m.cwnd_bytes, cc.cwnd_bytes());
                        assert!(cc.cwnd_bytes() >= 2 * MDS, "{name}: {}", cc.cwnd_bytes());
                        trace.push(m);
                    }
                    trace
                };
                prop_assert_eq!(run(), run());
            }
        }
    }
}
