//! A coupled algorithm as an ordinary registry entry: a [`Coupling`] of one path. That is what
//! a single-path flow configured with `lia`, `olia` or `balia` runs, and it is NewReno (with
//! the RFC 9002 Appendix B.5 increase) exactly: RFC 6356 goal 1 with n = 1. A multipath
//! connection does not use this type; it builds one [`Coupling`] for all its paths.

use std::fmt;
use std::marker::PhantomData;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::{Coupling, PathIdx, Rule};
use crate::api::EcnResponse;
use crate::registry::Algorithm;
use crate::{
    AckEvent, AckSummary, CcCtx, CcMetrics, CongestionController, CongestionEvent, InitCtx, SentPacket,
};

/// What distinguishes the coupled registry entries: their name, settings and rule.
pub trait Flavor: 'static {
    const NAME: &'static str;
    type Config: DeserializeOwned + Default + Clone + PartialEq + fmt::Debug + Send + Sync + 'static;
    fn rule(cfg: &Self::Config) -> Rule;
    /// The setting's floor of a path's window in segments ([`super::MinWindow`]).
    fn min_window_segments(cfg: &Self::Config) -> Option<u64>;
}

/// A one-path coupling under the registry name `F::NAME`.
#[derive(Serialize, Deserialize)]
#[serde(bound = "")]
pub struct OnePath<F> {
    coupling: Coupling,
    #[serde(skip)]
    flavor: PhantomData<fn() -> F>,
}

const P: PathIdx = PathIdx(0);

impl<F: Flavor> Algorithm for OnePath<F> {
    const NAME: &'static str = F::NAME;
    type Config = F::Config;

    fn new(cfg: &F::Config, cx: &InitCtx) -> Self {
        let mut coupling = Coupling::with_rule(F::rule(cfg)).with_min_window(F::min_window_segments(cfg));
        // The spec only builds uncoupled paths; a coupled rule ignores it.
        coupling.add_path(&crate::CcSpec::default(), cx);
        OnePath { coupling, flavor: PhantomData }
    }
}

impl<F: Flavor> CongestionController for OnePath<F> {
    fn on_packet_sent(&mut self, cx: &mut CcCtx, p: &SentPacket) {
        self.coupling.on_packet_sent(P, cx, p);
    }
    fn on_ack(&mut self, cx: &mut CcCtx, ack: &AckEvent) {
        self.coupling.on_ack(P, cx, ack);
    }
    fn on_ack_end(&mut self, cx: &mut CcCtx, ack: &AckSummary) {
        self.coupling.on_ack_end(P, cx, ack);
    }
    fn on_congestion_event(&mut self, cx: &mut CcCtx, ev: &CongestionEvent) {
        self.coupling.on_congestion_event(P, cx, ev);
    }
    fn on_spurious_congestion(&mut self, cx: &mut CcCtx) {
        self.coupling.on_spurious_congestion(P, cx);
    }
    fn cwnd_bytes(&self) -> u64 {
        self.coupling.cwnd_bytes(P)
    }
    fn wants_rate_samples(&self) -> bool {
        false
    }
    fn ecn_response(&self) -> EcnResponse {
        EcnResponse::Classic
    }
    fn metrics(&self) -> CcMetrics {
        self.coupling.metrics(P)
    }
}

#[cfg(test)]
mod tests {
    use crate::algos::newreno::{self, NewReno};
    use crate::algos::{balia::Balia, lia::Lia, olia::Olia};
    use crate::registry::Algorithm;
    use crate::{
        AckEvent, AckSummary, CcCtx, CcMetrics, CongestionCause, CongestionController, CongestionEvent,
        InitCtx, RttEstimator, WindowRules,
    };
    use proptest::prelude::*;
    use quicksim_engine::{Rng, SimDuration, SimTime};

    const MDS: u64 = 1252;

    #[derive(Clone, Debug)]
    enum Step {
        Ack { bytes: u64, age_ms: u64, app_limited: bool, rtt_ms: u64 },
        AckEnd { bytes: u64, age_ms: u64 },
        Congestion { age_ms: u64, cause: CongestionCause },
        Wait { ms: u64 },
    }

    fn step() -> impl Strategy<Value = Step> {
        let cause = prop_oneof![
            6 => Just(CongestionCause::Loss),
            1 => Just(CongestionCause::Ecn),
            1 => Just(CongestionCause::Rto),
            1 => Just(CongestionCause::PersistentCongestion),
        ];
        prop_oneof![
            12 => (1..=3 * MDS, 0..200u64, prop::bool::weighted(0.1), 1..400u64)
                .prop_map(|(bytes, age_ms, app_limited, rtt_ms)| Step::Ack { bytes, age_ms, app_limited, rtt_ms }),
            2 => (1..=3 * MDS, 0..200u64).prop_map(|(bytes, age_ms)| Step::AckEnd { bytes, age_ms }),
            1 => (0..200u64, cause).prop_map(|(age_ms, cause)| Step::Congestion { age_ms, cause }),
            2 => (0..500u64).prop_map(|ms| Step::Wait { ms }),
        ]
    }

    /// Runs `steps` on `cc` and returns its metrics after each.
    fn trace(cc: &mut dyn CongestionController, w: &WindowRules, steps: &[Step]) -> Vec<CcMetrics> {
        let mut now = SimTime::from_secs(1);
        let mut rtt = RttEstimator::new(SimDuration::from_millis(333));
        let mut out = Vec::new();
        for s in steps {
            let flight = 10 * MDS;
            match *s {
                Step::Ack { bytes, age_ms, app_limited, rtt_ms } => {
                    rtt.update(SimDuration::from_millis(rtt_ms), SimDuration::ZERO, SimDuration::ZERO, true);
                    let a =
                        AckEvent { sent_time: now - SimDuration::from_millis(age_ms), bytes, app_limited };
                    let mut cx = CcCtx { now, mds: MDS, rtt: &rtt, bytes_in_flight: flight, window: w };
                    cc.on_ack(&mut cx, &a);
                }
                Step::AckEnd { bytes, age_ms } => {
                    let sent = now - SimDuration::from_millis(age_ms);
                    let a = AckSummary {
                        acked_bytes: bytes,
                        acked_packets: 1,
                        largest_acked_sent_time: sent,
                        app_limited: false,
                        rate: None,
                        ce_packets: 0,
                    };
                    let mut cx = CcCtx { now, mds: MDS, rtt: &rtt, bytes_in_flight: flight, window: w };
                    cc.on_ack_end(&mut cx, &a);
                }
                Step::Congestion { age_ms, cause } => {
                    let sent_time = now - SimDuration::from_millis(age_ms);
                    let ev = CongestionEvent { cause, sent_time, lost_bytes: 4 * MDS };
                    let mut cx = CcCtx { now, mds: MDS, rtt: &rtt, bytes_in_flight: flight, window: w };
                    cc.on_congestion_event(&mut cx, &ev);
                }
                Step::Wait { ms } => now += SimDuration::from_millis(ms),
            }
            out.push(cc.metrics());
        }
        out
    }

    proptest! {
        /// RFC 6356 goal 1 with n = 1: a coupled algorithm on one path is NewReno (RFC 9002
        /// Appendix B.5 increase) byte for byte, whatever the acks, losses, timeouts and RTTs.
        #[test]
        fn one_path_is_newreno_exactly(steps in prop::collection::vec(step(), 1..400)) {
            let reno_cfg = newreno::Config { exact_increase: false, per_ack_increase: Some(false), ..Default::default() };
            for w in [&WindowRules::RFC9002, &WindowRules::RFC5681] {
                let rng = Rng::from_seed(1);
                let cx = InitCtx { mds: MDS, window: w, rng: &rng };
                let want = trace(&mut NewReno::new(&reno_cfg, &cx), w, &steps);
                prop_assert_eq!(&trace(&mut Lia::new(&Default::default(), &cx), w, &steps), &want);
                prop_assert_eq!(&trace(&mut Olia::new(&Default::default(), &cx), w, &steps), &want);
                prop_assert_eq!(&trace(&mut Balia::new(&Default::default(), &cx), w, &steps), &want);
                let lia_1 = crate::algos::lia::Config { alpha_scale: 1, ..Default::default() };
                prop_assert_eq!(&trace(&mut Lia::new(&lia_1, &cx), w, &steps), &want);
            }
        }
    }
}
