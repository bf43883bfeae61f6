//! No congestion control: the window is unlimited.
//!
//! INET's "No" controller (`NoCongestionController.cc`) is not unlimited: it always reports a
//! constant 65536 B of *remaining* window, however much is in flight. We deliberately return
//! `u64::MAX` instead, so that with "none" only flow control (and the link) limits the sender:
//! the flow-control validation of the INET QUIC paper (Völker et al., IFIP Networking 2020) needs
//! congestion control switched off entirely, and a hidden 64 KiB cap would confound it.

use crate::registry::Algorithm;
use crate::{AckEvent, CcCtx, CcMetrics, CcState, CongestionController, CongestionEvent, InitCtx};
use serde::{Deserialize, Serialize};

/// No settings (`cc = "none"` or `cc = { algo = "none" }`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {}

/// A controller that never limits the sender.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
pub struct NoCc;

impl Algorithm for NoCc {
    const NAME: &'static str = "none";
    type Config = Config;
    fn new(_cfg: &Config, _cx: &InitCtx) -> Self {
        NoCc
    }
}

impl CongestionController for NoCc {
    fn on_ack(&mut self, _cx: &mut CcCtx, _ack: &AckEvent) {}

    fn on_congestion_event(&mut self, _cx: &mut CcCtx, _ev: &CongestionEvent) {}

    /// no controller never reads the delivery-rate sample.
    fn wants_rate_samples(&self) -> bool {
        false
    }

    fn cwnd_bytes(&self) -> u64 {
        u64::MAX
    }

    fn metrics(&self) -> CcMetrics {
        // Never limited by a window: the steady state, whatever happens.
        CcMetrics { cwnd_bytes: u64::MAX, ssthresh_bytes: u64::MAX, state: CcState::CongestionAvoidance }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CongestionCause, RttEstimator, WindowRules};
    use quicksim_engine::{Rng, SimDuration, SimTime};

    #[test]
    fn window_is_unlimited_whatever_happens() {
        let rtt = RttEstimator::new(SimDuration::from_millis(10));
        let mut cx = CcCtx {
            now: SimTime::from_millis(20),
            mds: 1252,
            rtt: &rtt,
            bytes_in_flight: 1_000_000,
            window: &WindowRules::RFC9002,
        };
        let mut cc = NoCc::new(&Config {}, &InitCtx { mds: 1252, window: &WindowRules::RFC9002, rng: &Rng::from_seed(1) });
        assert_eq!(cc.cwnd_bytes(), u64::MAX);
        for cause in [CongestionCause::PersistentCongestion, CongestionCause::Rto] {
            let ev = CongestionEvent { cause, sent_time: SimTime::from_millis(10), lost_bytes: 1252 };
            cc.on_congestion_event(&mut cx, &ev);
        }
        assert_eq!(cc.cwnd_bytes(), u64::MAX);
        assert_eq!(cc.metrics().cwnd_bytes, u64::MAX);
        assert!(cc.pacing_rate(&cx).is_none());
    }
}
