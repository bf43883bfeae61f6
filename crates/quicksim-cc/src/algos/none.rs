//! No congestion control: the window is unlimited.
//!
//! INET's "No" controller (`NoCongestionController.cc`) is not unlimited: it always reports a
//! constant 65536 B of *remaining* window, however much is in flight. We deliberately return
//! `u64::MAX` instead, so that with "none" only flow control (and the link) limits the sender:
//! the flow-control validation of the INET QUIC paper (Völker et al., IFIP Networking 2020) needs
//! congestion control switched off entirely, and a hidden 64 KiB cap would confound it.

use crate::{AckEvent, CcCtx, CcMetrics, CongestionController, CongestionEvent};
use serde::{Deserialize, Serialize};

/// A controller that never limits the sender.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
pub struct NoCc;

impl NoCc {
    /// The (stateless) unlimited controller.
    pub fn new() -> Self {
        NoCc
    }
}

impl CongestionController for NoCc {
    fn snapshot(&self) -> super::CcSnapshot {
        super::CcSnapshot::None(*self)
    }
    fn on_ack(&mut self, _cx: &CcCtx, _ack: &AckEvent) {}

    fn on_congestion_event(&mut self, _cx: &CcCtx, _ev: &CongestionEvent) {}

    fn cwnd_bytes(&self) -> u64 {
        u64::MAX
    }

    fn metrics(&self) -> CcMetrics {
        CcMetrics { cwnd_bytes: u64::MAX, ssthresh_bytes: u64::MAX, in_recovery: false }
    }

    fn name(&self) -> &'static str {
        "none"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quicksim_engine::{SimDuration, SimTime};

    #[test]
    fn window_is_unlimited_whatever_happens() {
        let cx = CcCtx {
            mds: 1252,
            smoothed_rtt: SimDuration::from_millis(10),
            min_rtt: SimDuration::from_millis(10),
            latest_rtt: SimDuration::from_millis(10),
        };
        let mut cc = NoCc::new();
        assert_eq!(cc.cwnd_bytes(), u64::MAX);
        let ev = CongestionEvent {
            now: SimTime::from_millis(20),
            largest_lost_sent_time: SimTime::from_millis(10),
            lost_bytes: 1252,
            bytes_in_flight: 1_000_000,
            persistent_congestion: true,
        };
        cc.on_congestion_event(&cx, &ev);
        assert_eq!(cc.cwnd_bytes(), u64::MAX);
        assert_eq!(cc.metrics().cwnd_bytes, u64::MAX);
        assert!(cc.pacing_rate(&cx).is_none());
    }
}
