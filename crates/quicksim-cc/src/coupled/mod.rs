//! Coupled congestion control for a multipath connection: one [`Coupling`] per connection,
//! holding every path's window state, so that the increase on an ACK of path r and the
//! decrease on a loss of path r can read all the paths' windows and RTTs.
//!
//! Rules ([`Rule`]):
//! - `Uncoupled`: every path runs its own controller of the connection's algorithm (any
//!   registered one: NewReno, CUBIC, BBR...), as if it were a single-path connection.
//! - `Lia` (RFC 6356), `Olia` (Khalili et al., CoNEXT 2012 / IEEE/ACM ToN 2013) and `Balia`
//!   (Peng, Walid, Hwang, Low, IEEE/ACM ToN 2016; draft-walid-mptcp-congestion-control): each
//!   path is NewReno (RFC 9002 §7 with the RFC 9002 Appendix B.5 per-byte increase) for slow
//!   start, recovery periods, timeouts and persistent congestion: RFC 6356 §3 couples only the
//!   congestion-avoidance increase and leaves slow start, fast retransmit/recovery and the
//!   multiplicative decrease as in standard TCP. BALIA also couples the decrease ([`rules`]).
//!
//! A connection makes its coupling from its congestion-control spec ([`Coupling::new`]): the
//! names `lia`, `olia`, `balia` select the coupled rules, any other name is uncoupled. On a
//! single-path connection those three names are ordinary registry entries
//! ([`crate::algos::lia`] etc.): a coupling of one path, which is NewReno exactly.
//!
//! Which paths count: a path is in the sums while it is [`PathState::Active`] and has an RTT
//! sample (the Linux MPTCP implementations skip subflows without `srtt` likewise); the path an
//! event is for always counts. A connection marks a standby (backup) or not yet validated path
//! `Idle` and an abandoned one `Removed`.

pub mod one_path;
pub mod rules;
pub mod shared;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod toy;

use serde::{Deserialize, Serialize};

use crate::algos::newreno::{self, NewReno};
use crate::algos::{AnyController, BuiltinConfig};
use crate::api::EcnResponse;
use crate::{
    AckEvent, AckSummary, CcCtx, CcMetrics, CcSpec, CongestionCause, CongestionController, CongestionEvent,
    InitCtx, Phase, SentPacket, WindowRules,
};
pub use one_path::{Flavor, OnePath};
use quicksim_engine::Rate;
pub use rules::PathSample;
pub use shared::{SharedCoupling, SharedPath};

/// How the paths of a connection are coupled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Rule {
    /// Each path has its own controller; nothing is shared.
    Uncoupled,
    /// RFC 6356's Linked Increases; `alpha_scale` is §4.1's integer scale of alpha.
    Lia { alpha_scale: u64 },
    /// Opportunistic Linked Increases (Khalili et al.).
    Olia,
    /// Balanced Linked Adaptation (Peng et al.).
    Balia,
}

impl Rule {
    /// The registry name of the algorithm (`None` for uncoupled: the per-path algorithm's).
    pub fn name(self) -> Option<&'static str> {
        match self {
            Rule::Uncoupled => None,
            Rule::Lia { .. } => Some("lia"),
            Rule::Olia => Some("olia"),
            Rule::Balia => Some("balia"),
        }
    }
}

/// A path's index in its coupling: stable for the connection's life (a removed path's slot is
/// never reused, so a late event for it cannot reach another path).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct PathIdx(pub u32);

/// Whether a path takes part in the coupling's sums.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum PathState {
    /// Sending: its window and RTT count in every path's increase.
    Active,
    /// Standby, backup or not validated yet: kept, but left out of the other paths' sums.
    Idle,
    /// Abandoned: left out for good.
    Removed,
}

/// The per-path window machinery.
#[derive(Serialize, Deserialize)]
enum PathCc {
    /// Uncoupled: the path's own controller.
    Own(AnyController),
    /// Coupled: NewReno's state, whose congestion-avoidance increase the rule replaces.
    Coupled(NewReno),
}

#[derive(Serialize, Deserialize)]
struct Slot {
    cc: PathCc,
    state: PathState,
    /// Smoothed RTT in ns at the path's latest call with an RTT sample; 0 until it has one.
    srtt_ns: u64,
    /// OLIA's ℓ1 (bytes acknowledged between the last two losses) and ℓ2 (since the last).
    l1: u64,
    l2: u64,
}

/// NewReno as the coupled rules extend it: the RFC 9002 Appendix B.5 increase
/// `cwnd += MDS·acked/cwnd` with an integer carry, which is RFC 6356 eq. (1)'s second term, so
/// that the coupled increase replaces it term for term.
const RENO: newreno::Config = newreno::Config {
    exact_increase: false,
    hystart: false,
    per_ack_increase: Some(false),
    ssthresh_from_flight: false,
    quinn_increase: false,
};

/// The congestion control of one multipath connection: every path's window state and the
/// rule coupling them.
#[derive(Serialize, Deserialize)]
pub struct Coupling {
    rule: Rule,
    /// The coupled paths' window floor, if the algorithm's settings replace the transport's.
    min_window: MinWindow,
    slots: Vec<Slot>,
    /// Reused buffer for the paths' samples (no allocation per ACK).
    #[serde(skip)]
    scratch: Vec<PathSample>,
}

impl std::fmt::Debug for Coupling {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let cwnds: Vec<_> = (0..self.slots.len()).map(|i| self.cwnd_bytes(PathIdx(i as u32))).collect();
        write!(f, "Coupling({:?}, cwnd {cwnds:?})", self.rule)
    }
}

impl Coupling {
    /// The coupling a connection configured with `spec` uses: `lia`, `olia` and `balia` couple
    /// their paths; every other algorithm runs uncoupled, one controller per path.
    pub fn new(spec: &CcSpec) -> Coupling {
        let (rule, min) = match spec {
            CcSpec::Builtin(BuiltinConfig::Lia(c)) => (crate::algos::lia::rule(c), c.min_window_segments),
            CcSpec::Builtin(BuiltinConfig::Olia(c)) => (Rule::Olia, c.min_window_segments),
            CcSpec::Builtin(BuiltinConfig::Balia(c)) => (Rule::Balia, c.min_window_segments),
            _ => (Rule::Uncoupled, None),
        };
        Coupling::with_rule(rule).with_min_window(min)
    }

    /// An empty coupling with `rule`.
    pub fn with_rule(rule: Rule) -> Coupling {
        Coupling { rule, min_window: MinWindow(None), slots: Vec::new(), scratch: Vec::new() }
    }

    /// The coupled paths' window floor in segments ([`MinWindow`]; `None`: the transport's).
    #[must_use]
    pub fn with_min_window(mut self, segments: Option<u64>) -> Coupling {
        self.min_window = MinWindow(segments);
        self
    }

    pub fn rule(&self) -> Rule {
        self.rule
    }

    /// Adds an active path with a fresh window (the transport's initial window for `cx.mds`).
    /// `spec` builds an uncoupled path's controller; coupled rules ignore it.
    pub fn add_path(&mut self, spec: &CcSpec, cx: &InitCtx) -> PathIdx {
        let cc = match self.rule {
            Rule::Uncoupled => PathCc::Own(spec.build(cx)),
            _ => PathCc::Coupled(<NewReno as crate::Algorithm>::new(&RENO, cx)),
        };
        self.slots.push(Slot { cc, state: PathState::Active, srtt_ns: 0, l1: 0, l2: 0 });
        PathIdx(self.slots.len() as u32 - 1)
    }

    /// Forgets path `p`'s congestion state (RFC 9000 §9.4: a connection that moves to a new
    /// path resets its window to the initial one; the RTT too, so it leaves the sums until its
    /// next sample). The path becomes active.
    pub fn reset_path(&mut self, p: PathIdx, spec: &CcSpec, cx: &InitCtx) {
        let cc = match self.rule {
            Rule::Uncoupled => PathCc::Own(spec.build(cx)),
            _ => PathCc::Coupled(<NewReno as crate::Algorithm>::new(&RENO, cx)),
        };
        self.slots[p.0 as usize] = Slot { cc, state: PathState::Active, srtt_ns: 0, l1: 0, l2: 0 };
    }

    pub fn set_state(&mut self, p: PathIdx, state: PathState) {
        self.slots[p.0 as usize].state = state;
    }

    pub fn state(&self, p: PathIdx) -> PathState {
        self.slots[p.0 as usize].state
    }

    /// Number of paths ever added (including removed ones).
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Path `p` as a [`CongestionController`], for code written against one controller.
    pub fn path(&mut self, p: PathIdx) -> PathView<'_> {
        PathView { coupling: self, path: p }
    }

    /// Whether the coupling can be encoded with an idle connection (every uncoupled
    /// controller a built-in one).
    pub fn can_park(&self) -> bool {
        self.slots.iter().all(|s| match &s.cc {
            PathCc::Own(c) => c.can_park(),
            PathCc::Coupled(_) => true,
        })
    }

    fn slot(&mut self, p: PathIdx, cx: &CcCtx) -> &mut Slot {
        let s = &mut self.slots[p.0 as usize];
        if cx.rtt.has_sample() {
            s.srtt_ns = (cx.rtt.smoothed().ps() / 1_000).max(1);
        }
        s
    }

    /// Fills `scratch` with the paths that count for an event on `p` (see the module doc) and
    /// returns `p`'s position among them.
    fn sample(&mut self, p: PathIdx, cx: &CcCtx) -> usize {
        self.scratch.clear();
        let mut at = 0;
        for (j, s) in self.slots.iter().enumerate() {
            let own = j == p.0 as usize;
            if !own && (s.state != PathState::Active || s.srtt_ns == 0) {
                continue;
            }
            let PathCc::Coupled(reno) = &s.cc else { continue };
            if own {
                at = self.scratch.len();
            }
            // The path of the event uses its context's RTT (the initial RTT before a sample).
            let srtt_ns = if own { (cx.rtt.smoothed().ps() / 1_000).max(1) } else { s.srtt_ns };
            self.scratch.push(PathSample { cwnd: reno.cwnd, srtt_ns, interloss_bytes: s.l1.max(s.l2) });
        }
        at
    }

    pub fn on_packet_sent(&mut self, p: PathIdx, cx: &mut CcCtx, sent: &SentPacket) {
        match &mut self.slot(p, cx).cc {
            PathCc::Own(c) => c.on_packet_sent(cx, sent),
            PathCc::Coupled(reno) => reno.on_packet_sent(cx, sent),
        }
    }

    /// One newly acknowledged packet on path `p` (as [`CongestionController::on_ack`]).
    pub fn on_ack(&mut self, p: PathIdx, cx: &mut CcCtx, ack: &AckEvent) {
        let rule = self.rule;
        let slot = self.slot(p, cx);
        slot.l2 += ack.bytes;
        let reno = match &mut slot.cc {
            PathCc::Own(c) => return c.on_ack(cx, ack),
            PathCc::Coupled(reno) => reno,
        };
        // Slow start, the recovery period and application-limited ACKs are NewReno's own.
        if reno.sent_in_recovery(ack.sent_time) || ack.app_limited || reno.cwnd < reno.ssthresh {
            return reno.on_ack(cx, ack);
        }
        reno.phase = Phase::Open;
        let r = self.sample(p, cx);
        let acked_mss = cx.mds * ack.bytes;
        let paths = &self.scratch;
        let increase = match rule {
            Rule::Lia { alpha_scale } => rules::lia_increase(paths, r, alpha_scale, acked_mss),
            Rule::Olia => rules::olia_increase(paths, r, acked_mss),
            Rule::Balia => rules::balia_increase(paths, r, acked_mss),
            Rule::Uncoupled => unreachable!("uncoupled paths have their own controller"),
        };
        let PathCc::Coupled(reno) = &mut self.slots[p.0 as usize].cc else { unreachable!() };
        apply_increase(reno, increase, self.min_window.rules(cx.window).minimum_window(cx.mds));
    }

    pub fn on_ack_end(&mut self, p: PathIdx, cx: &mut CcCtx, ack: &AckSummary) {
        match &mut self.slot(p, cx).cc {
            PathCc::Own(c) => c.on_ack_end(cx, ack),
            PathCc::Coupled(reno) => reno.on_ack_end(cx, ack),
        }
    }

    /// A loss, ECN mark or timeout on path `p`. LIA and OLIA halve the path's own window, as
    /// TCP (RFC 6356 §3; OLIA likewise halves w_r on a loss of path r);
    /// BALIA takes w_r·min(α_r, 1.5)/2 off it. A timeout or persistent congestion collapses
    /// the window as NewReno does (none of the three changes that).
    pub fn on_congestion_event(&mut self, p: PathIdx, cx: &mut CcCtx, ev: &CongestionEvent) {
        let rule = self.rule;
        let slot = self.slot(p, cx);
        let reno = match &mut slot.cc {
            PathCc::Own(c) => return c.on_congestion_event(cx, ev),
            PathCc::Coupled(reno) => reno,
        };
        let new_period = !reno.sent_in_recovery(ev.sent_time);
        let loss = matches!(ev.cause, CongestionCause::Loss | CongestionCause::Ecn);
        if rule == Rule::Olia && new_period && ev.cause != CongestionCause::Rto && slot.l2 > 0 {
            // A new loss: ℓ2 becomes ℓ1 and counting restarts (as the Linux implementation's
            // loss1/loss2/loss3, which also skips a timeout's retransmissions).
            slot.l1 = slot.l2;
            slot.l2 = 0;
        }
        let balia = if rule == Rule::Balia && new_period && ev.cause != CongestionCause::Rto {
            let r = self.sample(p, cx);
            Some(rules::balia_reduced_window(&self.scratch, r))
        } else {
            None
        };
        let rules = self.min_window.rules(cx.window);
        let PathCc::Coupled(reno) = &mut self.slots[p.0 as usize].cc else { unreachable!() };
        let mut own = CcCtx { window: &rules, ..*cx };
        reno.on_congestion_event(&mut own, ev);
        if let Some(w) = balia {
            // In place of NewReno's cwnd/2, with the same floor (RFC 9002 §7.2 kMinimumWindow).
            reno.ssthresh = w;
            if loss {
                reno.cwnd = w.max(rules.minimum_window(cx.mds));
            }
        }
    }

    pub fn on_spurious_congestion(&mut self, p: PathIdx, cx: &mut CcCtx) {
        match &mut self.slot(p, cx).cc {
            PathCc::Own(c) => c.on_spurious_congestion(cx),
            PathCc::Coupled(reno) => reno.on_spurious_congestion(cx),
        }
    }

    pub fn cwnd_bytes(&self, p: PathIdx) -> u64 {
        match &self.slots[p.0 as usize].cc {
            PathCc::Own(c) => c.cwnd_bytes(),
            PathCc::Coupled(reno) => reno.cwnd,
        }
    }

    pub fn metrics(&self, p: PathIdx) -> CcMetrics {
        match &self.slots[p.0 as usize].cc {
            PathCc::Own(c) => c.metrics(),
            PathCc::Coupled(reno) => reno.metrics(),
        }
    }

    pub fn pacing_rate(&self, p: PathIdx, cx: &CcCtx) -> Option<Rate> {
        match &self.slots[p.0 as usize].cc {
            PathCc::Own(c) => c.pacing_rate(cx),
            PathCc::Coupled(_) => None,
        }
    }

    pub fn owns_recovery_window(&self, p: PathIdx) -> bool {
        match &self.slots[p.0 as usize].cc {
            PathCc::Own(c) => c.owns_recovery_window(),
            PathCc::Coupled(_) => false,
        }
    }

    pub fn wants_rate_samples(&self, p: PathIdx) -> bool {
        match &self.slots[p.0 as usize].cc {
            PathCc::Own(c) => c.wants_rate_samples(),
            PathCc::Coupled(_) => false,
        }
    }

    pub fn ecn_response(&self, p: PathIdx) -> EcnResponse {
        match &self.slots[p.0 as usize].cc {
            PathCc::Own(c) => c.ecn_response(),
            PathCc::Coupled(_) => EcnResponse::Classic,
        }
    }
}

/// A coupled algorithm's own floor for its paths' windows, in segments (`min_window_segments`
/// of `lia`, `olia`, `balia`), in place of the transport's: the smallest window a loss, an ECN
/// mark or OLIA's negative alpha leaves (QUIC's is RFC 9002 §7.2's kMinimumWindow, 2), and the
/// window after persistent congestion or an RTO, which is at most this floor. Khalili et al.'s
/// testbed ran Linux MPTCP, whose windows count whole segments and go down to 1
/// (`mptcp_olia_cong_avoid`: `max(1, snd_cwnd - 1)`; an RTO's loss window, RFC 5681 §3.1); the
/// draft's "optimal algorithm with probing cost" sends 1 MSS per RTT on a path it does not use.
/// `None` (the default) keeps the transport's rules, so nothing changes unless it is set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MinWindow(pub Option<u64>);

impl MinWindow {
    /// The transport's rules with this floor.
    pub fn rules(self, base: &WindowRules) -> WindowRules {
        match self.0 {
            None => *base,
            Some(n) => WindowRules {
                minimum_segments: n,
                loss_window_segments: base.loss_window_segments.min(n),
                ..*base
            },
        }
    }
}

/// Reads `min_window_segments`: a whole number of segments in [1, 1000].
pub fn min_window_segments<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    let v = u64::deserialize(d)?;
    if (1..=1000).contains(&v) {
        Ok(Some(v))
    } else {
        Err(serde::de::Error::custom(format!("min_window_segments: {v} is not in [1, 1000] segments")))
    }
}

/// Adds `increase` (in 1/cwnd bytes, signed) to the window with NewReno's carry (RFC 9002
/// Appendix B.5: `n = MDS·acked + carry; cwnd += n / cwnd; carry = n % cwnd`). RFC 6356 §3 says
/// an increase that rounds to 0 bytes MUST be 1 byte; carrying the fraction to the next ACK
/// loses nothing either and keeps one path identical to NewReno, so the carry is used. A
/// negative increase (OLIA) never takes the window below the transport's minimum.
fn apply_increase(reno: &mut NewReno, increase: i128, minimum: u64) {
    let cwnd = i128::from(reno.cwnd);
    let n = increase + i128::from(reno.carry);
    let grown = cwnd + n.div_euclid(cwnd);
    reno.carry = n.rem_euclid(cwnd) as u64;
    let floor = i128::from(minimum.min(reno.cwnd));
    if grown < floor {
        reno.cwnd = floor as u64;
        reno.carry = 0;
    } else {
        reno.cwnd = grown as u64;
    }
}

/// One path of a [`Coupling`] seen as a [`CongestionController`].
pub struct PathView<'a> {
    coupling: &'a mut Coupling,
    path: PathIdx,
}

impl CongestionController for PathView<'_> {
    fn on_packet_sent(&mut self, cx: &mut CcCtx, p: &SentPacket) {
        self.coupling.on_packet_sent(self.path, cx, p);
    }
    fn on_ack(&mut self, cx: &mut CcCtx, ack: &AckEvent) {
        self.coupling.on_ack(self.path, cx, ack);
    }
    fn on_ack_end(&mut self, cx: &mut CcCtx, ack: &AckSummary) {
        self.coupling.on_ack_end(self.path, cx, ack);
    }
    fn on_congestion_event(&mut self, cx: &mut CcCtx, ev: &CongestionEvent) {
        self.coupling.on_congestion_event(self.path, cx, ev);
    }
    fn on_spurious_congestion(&mut self, cx: &mut CcCtx) {
        self.coupling.on_spurious_congestion(self.path, cx);
    }
    fn cwnd_bytes(&self) -> u64 {
        self.coupling.cwnd_bytes(self.path)
    }
    fn owns_recovery_window(&self) -> bool {
        self.coupling.owns_recovery_window(self.path)
    }
    fn pacing_rate(&self, cx: &CcCtx) -> Option<Rate> {
        self.coupling.pacing_rate(self.path, cx)
    }
    fn wants_rate_samples(&self) -> bool {
        self.coupling.wants_rate_samples(self.path)
    }
    fn ecn_response(&self) -> EcnResponse {
        self.coupling.ecn_response(self.path)
    }
    fn metrics(&self) -> CcMetrics {
        self.coupling.metrics(self.path)
    }
}
