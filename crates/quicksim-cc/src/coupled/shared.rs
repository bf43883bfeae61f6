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
