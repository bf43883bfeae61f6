//! The sending half's congestion state: ACK processing, duplicate ACKs, the recovery state
//! machine and the window the sender may fill.
//!
//! States (Linux's names): `Open`; `Recovery` (fast retransmit / fast recovery) until the
//! cumulative ACK reaches the recovery point (RFC 6675 §5 RecoveryPoint, RFC 6582 `recover`);
//! `Loss` after an RTO until the same; `Cwr` after a scalable controller's reduction on CE marks
//! when it asks for it (`spreads_ecn_reduction`: DCTCP) and PRR is on, until SND.NXT of the
//! reduction is acknowledged (Linux `tcp_enter_cwr`, `high_seq`): PRR (RFC 6937, as Linux's
//! `tcp_cwnd_reduction`) brings the window down to the controller's over that round trip
//! instead of at once. Classic (RFC 3168) reductions still apply at once.
//!
//! The controller (quicksim-cc) decides the window outside recovery. TCP-specific rules:
//! - In `Recovery` the controller gets no ACKs (no window growth during fast recovery, RFC 5681
//!   §3.2, RFC 6675 §5; Linux calls no `cong_avoid` then): the window is RFC 6675's
//!   `cwnd = ssthresh` (the controller's window after its reduction) with `pipe`, or PRR
//!   (RFC 6937) with SACK, or RFC 6582's inflated window without SACK.
//! - The controllers reduce on their own RFC 9002 rules: NewReno to max(cwnd/2, 2·SMSS), not
//!   RFC 5681's max(FlightSize/2, 2·SMSS) (the same while the sender is window-limited).
//! - RTO: RFC 5681 §3.1 sets cwnd to 1 SMSS (the loss window) and ssthresh to
//!   max(FlightSize/2, 2·SMSS): the controller gets a congestion event with cause `Rto` and
//!   applies the window rules TCP hands it (`WindowRules::RFC5681`: IW per RFC 6928, loss
//!   window 1 SMSS, minimum 2 SMSS).
//! - Limited transmit (RFC 3042) without SACK: two new segments on the first two duplicate
//!   ACKs. With SACK it is implicit: SACKed bytes leave `pipe`.

use quicksim_cc::{
    AckEvent, AckSampler, AckSummary, AnyController, CcCtx, CongestionCause, CongestionController,
    CongestionEvent, DeliveryRate, RateSample, SentPacket, WindowRules,
};
use quicksim_engine::{SimDuration, SimTime};
use serde::{Deserialize, Serialize};

use super::config::TcpConfig;
use super::rack::{Rack, RackSample};
use super::sack::{Scoreboard, SentSeg, EVER_RETRANS};

/// The window rules TCP hands its controller: RFC 6928's initial window, RFC 5681's loss window
/// (1 SMSS after an RTO) and minimum (2 SMSS).
pub const WINDOW_RULES: WindowRules = WindowRules::RFC5681;

/// Congestion state (Linux `tcp_ca_state`, without Disorder).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum CaState {
    Open,
    Recovery,
    Loss,
    /// A scalable controller's ECN reduction being spread by PRR (module docs).
    Cwr,
}

/// What an ACK did on the sending side.
#[derive(Clone, Copy, Debug, Default)]
pub struct AckOutcome {
    /// SND.UNA moved.
    pub advanced: bool,
    /// Bytes newly acknowledged cumulatively.
    pub acked_bytes: u64,
    /// Segments newly acknowledged or SACKed.
    pub delivered_segs: u64,
    /// A duplicate ACK (RFC 5681 §2; with SACK: RFC 6675 §2).
    pub dupack: bool,
    /// Fast retransmit started.
    pub entered_recovery: bool,
    /// RTT sample without timestamps (Karn's rule applied).
    pub karn_sample: Option<SimDuration>,
    /// Send time of the newest segment newly acknowledged or SACKed.
    pub newest_sent: Option<SimTime>,
}

/// What the controller needs of a newly delivered segment.
#[derive(Clone, Copy, Debug)]
struct Acked {
    sent: SimTime,
    bytes: u64,
}

/// The segments one ACK newly delivered (SACKed or cumulatively acknowledged), in order,
/// with what `AckOutcome` reports of them. Kept small (16 B per segment, not the whole
/// `SentSeg`): the rate-sample part of each segment is consumed as it is delivered.
#[derive(Default)]
struct Delivered {
    segs: smallvec::SmallVec<[Acked; 8]>,
    newest_sent: Option<SimTime>,
    /// Send time of the first cumulatively acknowledged segment, and whether any of those
    /// was ever retransmitted (Karn's rule).
    first_acked_sent: Option<SimTime>,
    retx_acked: bool,
    /// With RACK: what it learns from the segments delivered (`rack.rs`).
    rack: Option<RackSample>,
}

impl Delivered {
    #[inline]
    fn add(&mut self, delivery: &mut DeliveryRate, sampler: &mut AckSampler, now: SimTime, s: &SentSeg) {
        let bytes = s.payload();
        delivery.on_acked(sampler, now, s.sent, &s.rate, bytes);
        self.segs.push(Acked { sent: s.sent, bytes });
        self.newest_sent = Some(self.newest_sent.map_or(s.sent, |t| t.max(s.sent)));
        if let Some(r) = self.rack.as_mut() {
            r.add(now, s.sent, s.end(), s.has(EVER_RETRANS));
        }
    }

    /// `s` was delivered by the cumulative ACK.
    #[inline]
    fn add_acked(
        &mut self,
        delivery: &mut DeliveryRate,
        sampler: &mut AckSampler,
        now: SimTime,
        s: &SentSeg,
    ) {
        self.retx_acked |= s.has(EVER_RETRANS);
        if self.first_acked_sent.is_none() {
            self.first_acked_sent = Some(s.sent);
        }
        self.add(delivery, sampler, now, s);
    }

    /// Karn's rule as Linux applies it (`tcp_clean_rtx_queue`): no sample from an ACK that
    /// covers any retransmitted segment; else the earliest segment acknowledged.
    fn karn_sample(&self, now: SimTime) -> Option<SimDuration> {
        self.first_acked_sent.filter(|_| !self.retx_acked).map(|t| now - t)
    }
}

/// The sending half.
#[derive(Serialize, Deserialize)]
pub struct Sender {
    /// SND.UNA and the next new sequence number (SND.NXT = SND.MAX: retransmissions are
    /// tracked in the scoreboard, not by moving SND.NXT back).
    pub snd_una: u64,
    pub snd_nxt: u64,
    pub board: Scoreboard,
    /// The controller (serde: built-in ones encode; a run-time one refuses, `can_park`).
    pub cc: AnyController,
    /// Payload of a full-sized segment without SACK blocks (the controller's MDS).
    pub smss: u64,
    pub state: CaState,
    pub recovery_point: u64,
    /// SND.NXT at the last ECN reduction: ECE is answered again once it is acknowledged.
    pub ecn_recover: u64,
    /// SND.NXT when `Cwr` began: it ends once this is acknowledged (its own point, so that a
    /// loss during CWR still starts recovery at once).
    cwr_point: u64,
    pub dupacks: u64,
    /// RFC 6582 window during recovery without SACK (ssthresh + inflation).
    pub reno_cwnd: u64,
    /// RFC 6937 state: bytes delivered and sent since recovery began, RecoverFS, the window
    /// the last ACK allows.
    prr_delivered: u64,
    prr_out: u64,
    recover_fs: u64,
    prr_cwnd: u64,
    /// One segment may go out regardless of the window (the fast retransmission, RFC 5681
    /// §3.2 step 4, RFC 6675 §5 step 4.2, RFC 6582 partial ACK).
    pub force_one: bool,
    /// Right edge of the peer's window (SND.UNA + SND.WND) and RFC 9293 SND.WL1/WL2.
    pub wnd_right: u64,
    pub snd_wnd: u64,
    wl1: u64,
    wl2: u64,
    /// Largest window the peer advertised (sender SWS avoidance, RFC 9293 §3.8.6.2.1).
    pub max_snd_wnd: u64,
    /// Nothing to send while the window was open at the last transmit attempt.
    pub app_limited: bool,
    /// Pacing: earliest time of the next data segment.
    pub next_send_time: SimTime,
    /// Delivery-rate estimation (its per-segment part is `SentSeg::rate`).
    pub delivery: DeliveryRate,
    sack: bool,
    prr: bool,
    /// Linux's recovery (`Recovery::Linux`): PRR's bound in `prr_update`, and the next
    /// recovery at once when one ends with segments marked lost (`on_ack`).
    pub linux_recovery: bool,
    /// The last ACK fed to the controller reported CE marks (`AckSummary::ce_packets`).
    ce_fed: bool,
    /// Accurate ECN state (`accecn.rs`), once agreed in the handshake; both halves live here.
    pub accecn: Option<Box<super::accecn::AccEcn>>,
    /// RACK-TLP (`rack.rs`): with `loss_detection = "rack"` once SACK is agreed; else the
    /// losses are RFC 6675's (`Scoreboard::mark_lost`).
    pub rack: Option<Box<Rack>>,
}

impl std::fmt::Debug for Sender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sender")
            .field("snd_una", &self.snd_una)
            .field("snd_nxt", &self.snd_nxt)
            .field("state", &self.state)
            .field("cwnd", &self.cwnd())
            .field("pipe", &self.in_flight())
            .finish()
    }
}

impl Sender {
    pub fn new(cc: AnyController, smss: u64, sack: bool, prr: bool) -> Self {
        Sender {
            snd_una: 0,
            snd_nxt: 0,
            board: Scoreboard::default(),
            cc,
            smss,
            state: CaState::Open,
            recovery_point: 0,
            ecn_recover: 0,
            cwr_point: 0,
            dupacks: 0,
            reno_cwnd: 0,
            prr_delivered: 0,
            prr_out: 0,
            recover_fs: 0,
            prr_cwnd: 0,
            force_one: false,
            wnd_right: 0,
            snd_wnd: 0,
            wl1: 0,
            wl2: 0,
            max_snd_wnd: 0,
            app_limited: false,
            next_send_time: SimTime::ZERO,
            delivery: DeliveryRate::default(),
            sack,
            prr,
            linux_recovery: false,
            ce_fed: false,
            accecn: None,
            rack: None,
        }
    }

    /// The controller's view at `now`: TCP's window rules (RFC 5681/6928), SMSS as the MDS.
    pub fn cc_ctx<'a>(&self, rtt: &'a quicksim_cc::RttEstimator, now: SimTime) -> CcCtx<'a> {
        CcCtx { now, mds: self.smss, rtt, bytes_in_flight: self.in_flight(), window: &WINDOW_RULES }
    }

    /// Bytes in the network as the window check counts them: RFC 6675 `pipe`. Without SACK
    /// nothing is SACKed, so it is the FlightSize of RFC 5681/6582, less the segments marked
    /// lost and not yet resent (the first one in fast recovery; everything after an RTO, which
    /// is what lets the loss window of one segment retransmit).
    pub fn in_flight(&self) -> u64 {
        self.board.pipe()
    }

    /// The congestion window in force.
    pub fn cwnd(&self) -> u64 {
        // Outside recovery, and for a controller that sets its own recovery window (BBR), the
        // controller's window (the state first: it is the cheap test).
        match self.state {
            CaState::Recovery if !self.cc.owns_recovery_window() => {
                if !self.sack {
                    self.reno_cwnd
                } else if self.prr_enabled() {
                    self.prr_cwnd
                } else {
                    self.cc.cwnd_bytes()
                }
            }
            CaState::Cwr => self.prr_cwnd,
            _ => self.cc.cwnd_bytes(),
        }
    }

    fn prr_enabled(&self) -> bool {
        self.sack && self.prr
    }

    /// Whether an ECN reduction of this controller goes through `Cwr` (module docs). PRR's
    /// counts need no SACK here: nothing is lost, so `pipe` is the flight size.
    fn spreads_ecn(&self) -> bool {
        self.prr && self.accecn.as_deref().is_some_and(|a| a.scalable) && self.cc.spreads_ecn_reduction()
    }

    /// Whether `len` more bytes fit the congestion window (`limited`: new data may use RFC 3042
    /// limited transmit).
    pub fn window_allows(&self, len: u64, limited: bool) -> bool {
        let mut cwnd = self.cwnd();
        if limited && !self.sack && self.state == CaState::Open {
            cwnd = cwnd.saturating_add(self.dupacks.min(2) * self.smss);
        }
        self.in_flight().saturating_add(len) <= cwnd
    }

    /// A data segment was sent (new, or a retransmission when `retx`).
    pub fn on_sent(&mut self, cx: &CcCtx, now: SimTime, bytes: u64, app_limited: bool) {
        if matches!(self.state, CaState::Recovery | CaState::Cwr) {
            self.prr_out += bytes;
        }
        self.force_one = false;
        if app_limited {
            self.delivery.on_app_limited(self.in_flight());
        }
        let mut cx = CcCtx { now, bytes_in_flight: self.in_flight(), ..*cx };
        self.cc.on_packet_sent(&mut cx, &SentPacket { bytes, app_limited });
    }

    /// Processes the ACK fields of a segment: `ack`, SACK `blocks`, `window` (bytes, already
    /// scaled), with the segment's `seq` and payload `len` for the window-update and dupack rules.
    #[allow(clippy::too_many_arguments)]
    pub fn on_ack(
        &mut self,
        cfg: &TcpConfig,
        cx: &CcCtx,
        now: SimTime,
        seq: u64,
        ack: u64,
        len: u64,
        window: u64,
        blocks: &[(u64, u64)],
    ) -> AckOutcome {
        let mut out = AckOutcome::default();
        let ace = self.accecn.as_deref_mut().and_then(|a| a.ace_in.take());
        if ack > self.snd_nxt || ack < self.snd_una {
            return out; // acknowledges nothing we sent, or is old (RFC 9293 §3.10.7.4)
        }
        let prior_una = self.snd_una;
        let prior_sacked = self.board.sacked_bytes();
        let prior_wnd = self.snd_wnd;
        let prior_lost = self.board.lost_total();
        // Each newly delivered segment (SACKed, then cumulatively acknowledged) goes to the
        // delivery-rate estimator at once (it reads nothing the rest of the ACK changes); the
        // controller gets them below, after the state machine, from `delivered`.
        let mut delivered = Delivered {
            rack: self.rack.as_ref().map(|_| RackSample {
                min_rtt: cx.rtt.min(),
                prior_fack: self.board.high_sacked().max(prior_una),
                ..RackSample::default()
            }),
            ..Delivered::default()
        };
        let mut sampler = AckSampler::default();
        if self.sack && !blocks.is_empty() {
            let delivery = &mut self.delivery;
            self.board.on_sack(blocks, |s| delivered.add(delivery, &mut sampler, now, s));
        }
        let newly_sacked = self.board.sacked_bytes() - prior_sacked;
        if ack > prior_una {
            let delivery = &mut self.delivery;
            self.board.ack_to(ack, |s| delivered.add_acked(delivery, &mut sampler, now, s));
            self.snd_una = ack;
            out.advanced = true;
            out.acked_bytes = ack - prior_una;
        }
        out.karn_sample = delivered.karn_sample(now);
        out.delivered_segs = delivered.segs.len() as u64;
        out.newest_sent = delivered.newest_sent;
        // RFC 9768 §3.2.2.5: the marks this ACK reports, with the newly delivered segments for
        // the wrap-around safety rule; the controller gets them with the next ACK it is fed.
        if let (Some(ace), Some(a)) = (ace, self.accecn.as_deref_mut()) {
            a.ce_pending += a.on_ace(ace, out.delivered_segs);
        }
        // RFC 9293 §3.10.7.4: update the window from the newest segment.
        if self.wl1 < seq || (self.wl1 == seq && self.wl2 <= ack) {
            self.snd_wnd = window;
            self.wl1 = seq;
            self.wl2 = ack;
            self.wnd_right = ack + window;
            self.max_snd_wnd = self.max_snd_wnd.max(window);
        }
        // RFC 5681 §2 (and RFC 6675 §2 with SACK): same ACK, no data, something outstanding.
        out.dupack = ack == prior_una
            && len == 0
            && !self.board.is_empty()
            && if self.sack { newly_sacked > 0 } else { window == prior_wnd };
        if let (Some(sample), Some(r)) = (delivered.rack, self.rack.as_deref_mut()) {
            r.on_sample(now, &sample);
            // Linux `tcp_rack_mark_lost`: only when RACK moved.
            if std::mem::take(&mut r.advanced) {
                self.rack_detect(cfg, cx, now);
            }
        } else if self.sack {
            self.board.mark_lost(cfg.dupthresh, self.smss);
        }
        self.delivery.on_lost(self.board.lost_total() - prior_lost);
        // Linux's PRR adds its extra segment only on such an ACK (`prr_update`).
        let una_clean = out.advanced && self.board.lost_total() == prior_lost;
        let delivered = &delivered.segs[..];
        // NewReno and CUBIC never read a rate sample: its 128-bit division is skipped for them.
        let rate = if self.cc.wants_rate_samples() {
            self.delivery.sample(sampler, cx.rtt.min())
        } else {
            self.delivery.skip_sample();
            None
        };
        if self.rack.as_ref().is_some_and(|r| r.tlp_high_seq.is_some()) {
            self.on_tlp_ack(cx, now, ack, out.advanced || newly_sacked > 0);
        }
        let mut fed = false;
        // RFC 6937 DeliveredData = Δ SND.UNA + Δ SACKed.
        let delivered_data = (out.acked_bytes + self.board.sacked_bytes()).saturating_sub(prior_sacked);
        match self.state {
            CaState::Open | CaState::Cwr => {
                if out.advanced {
                    self.dupacks = 0;
                }
                if out.dupack {
                    self.dupacks += 1;
                }
                // With RACK a segment marked lost is the trigger (Linux `tcp_time_to_recover`:
                // "the loss is proven").
                let trigger = if self.rack.is_some() {
                    self.board.lost_bytes() > 0
                } else {
                    self.dupacks >= cfg.dupthresh
                        || (self.sack && self.board.first().is_some_and(|s| s.has(super::sack::LOST)))
                };
                // RFC 6582 §3.2 step 1 / RFC 6675 §5: not again for data below the last
                // recovery point (one reduction per window of data).
                if trigger && self.snd_una >= self.recovery_point && !self.board.is_empty() {
                    self.enter_recovery(cfg, cx, now, delivered_data);
                    out.entered_recovery = true;
                } else {
                    // CWR ends once data above its SND.NXT is acknowledged (Linux: `snd_una`
                    // past `high_seq`, "for CWR bit to reach receiver"; ns-3: `m_recover`); the
                    // controller's window is then in force, and this ACK may start the next.
                    if self.state == CaState::Cwr && self.snd_una > self.cwr_point {
                        self.state = CaState::Open;
                        self.prr_cwnd = 0;
                    }
                    let prior_cwnd = self.cc.cwnd_bytes();
                    fed = self.feed_cc(cx, now, delivered, rate);
                    if self.state == CaState::Cwr {
                        self.prr_update(delivered_data, una_clean);
                    } else if self.ce_fed && self.cc.cwnd_bytes() < prior_cwnd && self.spreads_ecn() {
                        self.enter_cwr(delivered_data, prior_cwnd, una_clean);
                    }
                }
            }
            CaState::Recovery => {
                if self.snd_una >= self.recovery_point {
                    self.exit_recovery();
                    if self.linux_recovery
                        && self.sack
                        && self.board.lost_bytes() > 0
                        && !self.board.is_empty()
                    {
                        // Linux `tcp_fastretrans_alert`: the recovery ends (`tcp_end_cwnd_reduction`)
                        // and, segments being marked lost (`tcp_time_to_recover`: `lost_out`), the
                        // next begins on this ACK, from the window of the one that ended.
                        self.enter_recovery(cfg, cx, now, delivered_data);
                        out.entered_recovery = true;
                    } else {
                        fed = self.feed_cc(cx, now, delivered, rate);
                    }
                } else if self.sack {
                    self.prr_update(delivered_data, una_clean);
                } else if out.advanced {
                    // RFC 6582 §3.2 step 5: partial ACK. Retransmit the first unacknowledged
                    // segment, deflate by the amount acked, add back one SMSS if ≥ SMSS acked.
                    self.board.mark_first_lost();
                    self.force_one = true;
                    self.reno_cwnd = self.reno_cwnd.saturating_sub(out.acked_bytes);
                    if out.acked_bytes >= self.smss {
                        self.reno_cwnd += self.smss;
                    }
                    // Never below one segment, so the sender cannot stall with nothing in flight.
                    self.reno_cwnd = self.reno_cwnd.max(self.smss);
                } else if out.dupack {
                    // RFC 6582 §3.2 step 4: inflate by one SMSS per further duplicate ACK.
                    self.reno_cwnd += self.smss;
                }
            }
            CaState::Loss => {
                if self.snd_una >= self.recovery_point {
                    self.state = CaState::Open;
                    self.dupacks = 0;
                }
                fed = self.feed_cc(cx, now, delivered, rate);
            }
        }
        // A controller that sets its own recovery window (BBR) sees every ACK, in recovery too.
        if !fed && self.cc.owns_recovery_window() {
            self.feed_cc(cx, now, delivered, rate);
        }
        out
    }

    /// Each newly delivered segment to the controller (ascending sequence order is not
    /// guaranteed across SACK and cumulative ACKs; the controllers only use send times).
    fn feed_cc(&mut self, cx: &CcCtx, now: SimTime, delivered: &[Acked], rate: Option<RateSample>) -> bool {
        if delivered.is_empty() {
            return true;
        }
        let mut cx = CcCtx { now, bytes_in_flight: self.in_flight(), ..*cx };
        let (mut bytes, mut largest_sent) = (0, SimTime::ZERO);
        for s in delivered {
            let ev = AckEvent { sent_time: s.sent, bytes: s.bytes, app_limited: self.app_limited };
            self.cc.on_ack(&mut cx, &ev);
            bytes += s.bytes;
            largest_sent = largest_sent.max(s.sent);
        }
        let summary = AckSummary {
            acked_bytes: bytes,
            acked_packets: delivered.len() as u64,
            largest_acked_sent_time: largest_sent,
            app_limited: self.app_limited,
            rate,
            // CE marks from the AccECN ACE field, for a scalable controller (`accecn.rs`).
            ce_packets: match self.accecn.as_deref_mut() {
                Some(a) if a.scalable => std::mem::take(&mut a.ce_pending),
                _ => 0,
            },
        };
        self.ce_fed = summary.ce_packets > 0;
        self.cc.on_ack_end(&mut cx, &summary);
        true
    }

    /// An ACK with ECE acknowledged segments, the newest sent at `sent_time` (RFC 3168
    /// §6.1.2): a congestion event for the controller, unless the window is already being
    /// reduced (loss recovery, or an ECN reduction whose window of data is not yet acknowledged:
    /// ECE counts again only on an ACK beyond SND.NXT of the last reduction, where the first
    /// new segment, the one with CWR, went out; the receiver sent any ACK below it before it
    /// saw CWR).
    /// Returns true if it was one. Loss recovery keeps its own recovery point: a loss in the
    /// same window is still repaired at once (the controller does not reduce twice in one
    /// recovery period).
    pub fn on_ece(&mut self, cx: &CcCtx, now: SimTime, sent_time: SimTime) -> bool {
        if self.state != CaState::Open || self.snd_una <= self.ecn_recover {
            return false;
        }
        self.ecn_recover = self.snd_nxt;
        let ev = CongestionEvent { cause: CongestionCause::Ecn, sent_time, lost_bytes: 0 };
        let mut cx = CcCtx { now, bytes_in_flight: self.in_flight(), ..*cx };
        self.cc.on_congestion_event(&mut cx, &ev);
        true
    }

    /// Fast retransmit (RFC 5681 §3.2, RFC 6675 §5 step 4, RFC 6582 §3.2 step 2).
    pub(super) fn enter_recovery(&mut self, cfg: &TcpConfig, cx: &CcCtx, now: SimTime, delivered_data: u64) {
        let prior_cwnd = self.cwnd();
        self.state = CaState::Recovery;
        self.recovery_point = self.snd_nxt;
        if let Some(r) = self.rack.as_deref_mut() {
            // RACK marked what is lost; no probe during recovery, and a probe's episode ends
            // (Linux `tcp_init_cwnd_reduction`).
            r.tlp_at = None;
            r.tlp_due = false;
            r.tlp_high_seq = None;
        } else {
            self.board.mark_first_lost();
        }
        self.force_one = true;
        let lost_sent = self.board.first().map_or(now, |s| s.sent);
        let ev = CongestionEvent {
            cause: CongestionCause::Loss,
            sent_time: lost_sent,
            lost_bytes: self.board.lost_bytes(),
        };
        let mut cx = CcCtx { now, bytes_in_flight: self.in_flight(), ..*cx };
        self.cc.on_congestion_event(&mut cx, &ev);
        let ssthresh = self.cc.cwnd_bytes();
        if !self.sack {
            // RFC 6582 §3.2 step 2 / RFC 5681 §3.2 step 3: cwnd = ssthresh + 3·SMSS.
            self.reno_cwnd = ssthresh.saturating_add(cfg.dupthresh * self.smss);
        } else if self.prr {
            self.prr_delivered = 0;
            self.prr_out = 0;
            self.prr_cwnd = 0;
            if self.linux_recovery {
                // Linux `tcp_init_cwnd_reduction`: RecoverFS is the window before the cut
                // (`prior_cwnd`); a recovery begun by RACK's reordering timer counts one segment
                // delivered (`tcp_rack_reo_timeout`), as every ACK that starts one delivers some.
                self.recover_fs = prior_cwnd.max(1);
                self.prr_update(delivered_data.max(self.smss), false);
            } else {
                // RFC 6937 §3: RecoverFS = SND.NXT − SND.UNA.
                self.recover_fs = self.board.out_bytes().max(1);
                self.prr_update(delivered_data, false);
            }
        }
    }

    /// A scalable controller cut its window on CE marks (the ACK that delivered
    /// `delivered_data`): Linux's `tcp_enter_cwr` and `tcp_init_cwnd_reduction` (`high_seq` =
    /// SND.NXT), then this ACK's share of the reduction (`tcp_cwnd_reduction` runs on the same
    /// ACK). RecoverFS is the window before the cut, `prior_cwnd`, as Linux divides by
    /// (`tp->prior_cwnd`), not RFC 6937 §3's flight size: a sender a packet or two short of its
    /// window would otherwise send at almost the old rate all round and cut at the end.
    fn enter_cwr(&mut self, delivered_data: u64, prior_cwnd: u64, una_clean: bool) {
        self.state = CaState::Cwr;
        self.cwr_point = self.snd_nxt;
        self.prr_delivered = 0;
        self.prr_out = 0;
        self.recover_fs = prior_cwnd.max(1);
        self.prr_update(delivered_data, una_clean);
    }

    /// RFC 6937 §3 on each ACK in recovery; the window becomes pipe + sndcnt. `una_clean`: the
    /// ACK advanced SND.UNA and marked nothing newly lost (Linux's condition for its extra
    /// segment).
    fn prr_update(&mut self, delivered: u64, una_clean: bool) {
        if self.state != CaState::Cwr && !self.prr_enabled() {
            return;
        }
        if self.linux_recovery && delivered == 0 {
            // Linux `tcp_cwnd_reduction` leaves the window alone on an ACK that delivers nothing.
            return;
        }
        self.prr_delivered += delivered;
        let ssthresh = self.cc.cwnd_bytes();
        let pipe = self.board.pipe();
        let sndcnt = if pipe > ssthresh {
            // Proportional part: CEIL(prr_delivered · ssthresh / RecoverFS) − prr_out.
            let target = (self.prr_delivered as u128 * ssthresh as u128).div_ceil(self.recover_fs as u128);
            (target as u64).saturating_sub(self.prr_out)
        } else if self.linux_recovery {
            // Linux `tcp_cwnd_reduction` (5.10+, RFC 6937bis): packet conservation,
            // MAX(prr_delivered − prr_out, DeliveredData), and one segment more only on an ACK
            // that advances SND.UNA without new losses; so after a burst of losses `pipe` stays
            // near what the path delivered instead of climbing back to ssthresh within the
            // episode (what PRR-SSRB's + MSS on every ACK does, sending into a full queue).
            let limit = self.prr_delivered.saturating_sub(self.prr_out).max(delivered);
            let limit = if una_clean { limit + self.smss } else { limit };
            (ssthresh - pipe).min(limit)
        } else {
            // PRR-SSRB: MIN(ssthresh − pipe, MAX(prr_delivered − prr_out, DeliveredData) + MSS).
            let limit = self.prr_delivered.saturating_sub(self.prr_out).max(delivered) + self.smss;
            (ssthresh - pipe).min(limit)
        };
        // No forced first segment in CWR (Linux and ns-3 force one "for the fast retransmit",
        // which CWR has none of). Measured with it (DCTCP growing as Linux's Reno): the model
        // moves away from ns-3's TcpDctcp (10 flows: queue mean -11 %, std +12 %, against -8 %
        // and +8.5 % without; both before DCTCP's receiver acknowledged each CE state apart,
        // `CeChangeAck::Apart`) and from the DCTCP analysis (period 105 ms against 73 with
        // per-packet ACKs); why is open. The 57 : 43 lock of two equal flows it caused under
        // the earlier INET growth is gone (49.7 : 50.3, crates/quicksim-scenario/tests/it/l4s.rs).
        self.prr_cwnd = pipe + sndcnt;
    }

    fn exit_recovery(&mut self) {
        // RFC 6937 §3 / RFC 6675 §5: at the end cwnd = ssthresh, the controller's window.
        self.state = CaState::Open;
        self.dupacks = 0;
        self.prr_cwnd = 0;
    }

    /// RTO (RFC 6298 §5.4–5.6, RFC 5681 §3.1): everything outstanding is lost, the window
    /// restarts from one segment (see the module docs), slow start until the recovery point.
    pub fn on_rto(&mut self, cx: &CcCtx, now: SimTime) {
        let lost_sent = self.board.first().map_or(now, |s| s.sent);
        // RFC 5681 §3.1 eq. 4: ssthresh from the FlightSize before the timeout.
        let flight = self.board.out_bytes();
        // The controller also sees the pipe before the timeout (its `bytes_in_flight`), the
        // count ns-3 halves (`ReTxTimeout` with `BytesInFlight()`).
        let pipe = self.board.pipe();
        self.board.mark_all_lost();
        if let Some(r) = self.rack.as_deref_mut() {
            r.stop();
            r.tlp_high_seq = None;
        }
        self.state = CaState::Loss;
        self.recovery_point = self.snd_nxt;
        self.dupacks = 0;
        self.force_one = false;
        let ev = CongestionEvent { cause: CongestionCause::Rto, sent_time: lost_sent, lost_bytes: flight };
        let mut cx = CcCtx { now, bytes_in_flight: pipe, ..*cx };
        self.cc.on_congestion_event(&mut cx, &ev);
    }

    /// The pacing rate: the controller's, else Linux's 200 % (slow start) or 120 % of
    /// cwnd/srtt (`tcp_update_pacing_rate`). None before an RTT sample or without a window.
    pub fn pacing_rate(&self, cx: &CcCtx, has_sample: bool) -> Option<quicksim_engine::Rate> {
        if let Some(r) = self.cc.pacing_rate(cx) {
            return (r.bits_per_s > 0).then_some(r);
        }
        let cwnd = self.cwnd();
        if !has_sample || cwnd == u64::MAX {
            return None;
        }
        let m = self.cc.metrics();
        let pct: u128 = if m.cwnd_bytes < m.ssthresh_bytes / 2 { 200 } else { 120 };
        let srtt = cx.rtt.smoothed().ps().max(1) as u128;
        let ps_per_s = quicksim_engine::PS_PER_S as u128;
        let bps = (cwnd as u128 * 8 * pct * ps_per_s / (100 * srtt)).min(u64::MAX as u128) as u64;
        (bps > 0).then(|| quicksim_engine::Rate::bps(bps))
    }
}

#[cfg(test)]
#[path = "sender_tests.rs"]
mod tests;
