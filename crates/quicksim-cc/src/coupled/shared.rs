//! One [`Coupling`] shared by the paths of a multipath connection: each path's recovery holds a
//! [`SharedPath`] (the coupling and the path's index) as its controller, so every controller
//! call of the transport's single-path code reaches the coupling with the right path, and a
//! path's increase reads every other path's window and RTT.

use std::sync::{Arc, Mutex, MutexGuard};

use quicksim_engine::Rate;

use super::{Coupling, PathIdx, PathState};
use crate::api::EcnResponse;
use crate::registry::DynController;
use crate::{
    AckEvent, AckSummary, AnyController, CcCtx, CcMetrics, CcSpec, CongestionController, CongestionEvent,
    InitCtx, SentPacket,
};

/// A coupling the paths of one connection share (a mutex only to be `Send`: a connection is
/// worked on by one thread, so it is never contended).
#[derive(Clone, Debug)]
pub struct SharedCoupling(Arc<Mutex<Coupling>>);

impl SharedCoupling {
    /// A coupling of `spec`'s rule when it is a coupled one (`lia`, `olia`, `balia`); `None`
    /// for every other algorithm, whose paths run uncoupled controllers of their own.
    pub fn new(spec: &CcSpec) -> Option<SharedCoupling> {
        let c = Coupling::new(spec);
        c.rule().name().map(|_| SharedCoupling(Arc::new(Mutex::new(c))))
    }

    fn lock(&self) -> MutexGuard<'_, Coupling> {
        self.0.lock().expect("a coupling is used by one thread")
    }

    /// Adds a path (active, initial window) and returns its controller, named as the rule.
    pub fn add_path(&self, spec: &CcSpec, cx: &InitCtx) -> AnyController {
        let mut c = self.lock();
        let path = c.add_path(spec, cx);
        let name = c.rule().name().expect("a coupled rule");
        AnyController::Dyn(Box::new(DynController {
            name: name.into(),
            cc: Box::new(SharedPath { coupling: self.clone(), path }),
        }))
    }

    pub fn set_state(&self, p: PathIdx, state: PathState) {
        self.lock().set_state(p, state);
    }

    pub fn state(&self, p: PathIdx) -> PathState {
        self.lock().state(p)
    }

    pub fn cwnd_bytes(&self, p: PathIdx) -> u64 {
        self.lock().cwnd_bytes(p)
    }
}

/// One path of a [`SharedCoupling`] as a [`CongestionController`].
pub struct SharedPath {
    coupling: SharedCoupling,
    path: PathIdx,
}

impl CongestionController for SharedPath {
    fn on_packet_sent(&mut self, cx: &mut CcCtx, p: &SentPacket) {
        self.coupling.lock().on_packet_sent(self.path, cx, p);
    }
    fn on_ack(&mut self, cx: &mut CcCtx, ack: &AckEvent) {
        self.coupling.lock().on_ack(self.path, cx, ack);
    }
    fn on_ack_end(&mut self, cx: &mut CcCtx, ack: &AckSummary) {
        self.coupling.lock().on_ack_end(self.path, cx, ack);
    }
    fn on_congestion_event(&mut self, cx: &mut CcCtx, ev: &CongestionEvent) {
        self.coupling.lock().on_congestion_event(self.path, cx, ev);
    }
    fn on_spurious_congestion(&mut self, cx: &mut CcCtx) {
        self.coupling.lock().on_spurious_congestion(self.path, cx);
    }
    fn cwnd_bytes(&self) -> u64 {
        self.coupling.lock().cwnd_bytes(self.path)
    }
    fn owns_recovery_window(&self) -> bool {
        self.coupling.lock().owns_recovery_window(self.path)
    }
    fn pacing_rate(&self, cx: &CcCtx) -> Option<Rate> {
        self.coupling.lock().pacing_rate(self.path, cx)
    }
    fn wants_rate_samples(&self) -> bool {
        self.coupling.lock().wants_rate_samples(self.path)
    }
    fn ecn_response(&self) -> EcnResponse {
        self.coupling.lock().ecn_response(self.path)
    }
    fn metrics(&self) -> CcMetrics {
        self.coupling.lock().metrics(self.path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CongestionCause, RttEstimator, WindowRules};
    use quicksim_engine::{Rng, SimDuration, SimTime};

    const MDS: u64 = 1252;

    /// A loss at 1 s (sent at 0.9 s) puts `cc` in congestion avoidance; then `n` ACKs of one
    /// packet each, sent after the loss. Returns the window.
    fn loss_then_acks(cc: &mut AnyController, rtt: &RttEstimator, n: u64) -> u64 {
        let w = &WindowRules::RFC9002;
        let now = SimTime::from_secs(1);
        let mut cx = CcCtx { now, mds: MDS, rtt, bytes_in_flight: 10 * MDS, window: w };
        let ev = CongestionEvent {
            cause: CongestionCause::Loss,
            sent_time: now - SimDuration::from_millis(100),
            lost_bytes: MDS,
        };
        cc.on_congestion_event(&mut cx, &ev);
        for i in 0..n {
            let now = SimTime::from_secs(2) + SimDuration::from_millis(i);
            let mut cx = CcCtx { now, mds: MDS, rtt, bytes_in_flight: 10 * MDS, window: w };
            let ack =
                AckEvent { sent_time: now - SimDuration::from_millis(30), bytes: MDS, app_limited: false };
            cc.on_ack(&mut cx, &ack);
        }
        cc.cwnd_bytes()
    }

    /// Two active paths of one LIA coupling with equal windows and RTTs: alpha = 1/2 and
    /// cwnd_total = 2w, so an ACK adds a quarter of NewReno's MDS·acked/w (RFC 6356 eq. 1);
    /// an idle second path leaves the first one NewReno. A coupling per path (what a multipath
    /// connection built before) would grow each as NewReno.
    #[test]
    fn the_paths_of_one_shared_coupling_see_each_other() {
        let spec = CcSpec::Builtin(crate::BuiltinConfig::Lia(Default::default()));
        let rng = Rng::from_seed(1);
        let init = InitCtx { mds: MDS, window: &WindowRules::RFC9002, rng: &rng };
        let mut rtt = RttEstimator::new(SimDuration::from_millis(30));
        rtt.update(SimDuration::from_millis(30), SimDuration::ZERO, SimDuration::ZERO, true);
        let alone = loss_then_acks(
            &mut CcSpec::Builtin(crate::BuiltinConfig::Lia(Default::default())).build(&init),
            &rtt,
            40,
        );

        let shared = SharedCoupling::new(&spec).expect("lia couples");
        let mut p0 = shared.add_path(&spec, &init);
        let mut p1 = shared.add_path(&spec, &init);
        assert_eq!(p0.name(), "lia");
        // Both halve once, from the initial window (RFC 9002: 10 MDS) to 5 MDS, and take an
        // RTT sample; then path 0 takes 40 ACKs.
        loss_then_acks(&mut p1, &rtt, 0);
        let coupled = loss_then_acks(&mut p0, &rtt, 40);
        let w0 = 5 * MDS;
        // NewReno: 40 ACKs of one MDS, each adding MDS²/cwnd with cwnd from 5 to 10 MDS, add
        // more than 4 MDS (6613 B). Coupled, the first ACK adds a quarter of that (alpha = 1/2,
        // cwnd_total = 2w) and later ones w0/(w0 + w1)² of MDS·acked (alpha/cwnd_total with
        // w0 > w1): 2475 B, under half of NewReno's.
        assert!(alone - w0 > 4 * MDS, "alone {alone}");
        assert!(coupled > w0 && coupled - w0 < (alone - w0) / 2, "coupled {coupled} alone {alone}");
        assert_eq!(shared.cwnd_bytes(PathIdx(0)), coupled);

        // With path 1 idle, path 0's increase is NewReno's again.
        let shared = SharedCoupling::new(&spec).expect("lia couples");
        let mut p0 = shared.add_path(&spec, &init);
        let mut p1 = shared.add_path(&spec, &init);
        loss_then_acks(&mut p1, &rtt, 0);
        shared.set_state(PathIdx(1), PathState::Idle);
        assert_eq!(shared.state(PathIdx(1)), PathState::Idle);
        assert_eq!(loss_then_acks(&mut p0, &rtt, 40), alone);
    }
}
