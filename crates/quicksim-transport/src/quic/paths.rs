//! Several paths per connection (draft-ietf-quic-multipath-21) and connection migration
//! (RFC 9000 §9) as its one-path-at-a-time case.
//!
//! A path's own state is what a single-path connection keeps for its 1-RTT space: the ACK
//! manager, the recovery (RTT, loss detection, PTO, congestion controller), the next packet
//! number, the PTO probes owed, the lost packet numbers, the pacer. That state of the path being
//! worked on sits in the connection's own fields, so every single-path code path (input, ACKs,
//! losses, timers, packet building) serves any path unchanged; [`Connection::select_path`] swaps
//! another path's state in (a few hundred bytes moved). Streams, flow control and the handshake
//! are the connection's: data lost on one path is sent again on whichever path the scheduler
//! picks. A single-path connection has no `Multipath` (it lives in the rare state, so the
//! connection's size is unchanged) and never swaps.

use quicksim_cc::coupled::{PathIdx, PathState as CouplingState, SharedCoupling};
use quicksim_cc::InitCtx;
use quicksim_engine::{Rng, SimTime};

use super::config::MultipathMode;
use super::connection::Connection;
use super::mp_frames::{APPLICATION_ABANDON_PATH, PATH_UNSTABLE_OR_POOR};
use super::packet::{AckFrame, EcnCounts, Frame, Frames, PathAckFrame, QuicPacket, SpaceId, StreamFrame};
use super::path_sched::PathView;
pub use super::path_state::PathMetrics;
use super::path_state::{Multipath, PathCounters, Phase, Unvalidated};
use super::recovery::{Recovery, WINDOW_RULES};
use super::Role;

impl Connection {
    /// The multipath state, on a connection configured with `multipath`.
    #[inline]
    pub(super) fn mp(&self) -> Option<&Multipath> {
        self.rare.get().and_then(|r| r.mp.as_deref())
    }

    #[inline]
    pub(super) fn mp_mut(&mut self) -> Option<&mut Multipath> {
        self.rare.existing().and_then(|r| r.mp.as_deref_mut())
    }

    /// Whether the connection was configured with several paths (or migration).
    #[inline]
    pub fn is_multipath(&self) -> bool {
        self.mp().is_some()
    }

    /// Sets up the paths of a connection configured with `multipath` (at creation).
    pub(super) fn init_paths(&mut self, now: SimTime, rng: Rng) {
        let mut mp = Multipath::new(&self.cfg, now, rng);
        mp.base = PathCounters::of(&self.stats());
        if let Some(coupling) = SharedCoupling::new(&self.cfg.cc) {
            // One coupling for all paths (`lia`, `olia`, `balia`): path 0's controller is the
            // connection's own recovery's, path p's sits in its slots. Path p's index in the
            // coupling is p. Paths not validated yet are idle (`sync_coupling`).
            let rules =
                self.cfg.initial_window.map_or(WINDOW_RULES, |n| WINDOW_RULES.with_initial_segments(n));
            let rng = Rng::from_seed(0); // coupled paths are NewReno, which draws nothing
            let cx = InitCtx { mds: self.cfg.max_packet_size, window: &rules, rng: &rng };
            self.recovery.cc = coupling.add_path(&self.cfg.cc, &cx);
            for x in &mut mp.paths[1..] {
                x.slots.recovery.cc = coupling.add_path(&self.cfg.cc, &cx);
            }
            mp.coupling = Some(coupling);
        }
        self.rare.get_mut().mp = Some(Box::new(mp));
        self.sync_coupling();
    }

    /// Tells the coupling which paths count in its sums (RFC 6356 couples the paths that carry
    /// data): validated, non-backup paths are active; backup and unvalidated ones idle;
    /// abandoned ones removed. Called after every change of a path's phase or backup flags.
    fn sync_coupling(&mut self) {
        let Some(mp) = self.mp() else { return };
        let Some(coupling) = &mp.coupling else { return };
        for (p, x) in mp.paths.iter().enumerate() {
            let state = match x.phase {
                Phase::Abandoned => CouplingState::Removed,
                Phase::Active if !(x.backup || x.peer_backup) => CouplingState::Active,
                _ => CouplingState::Idle,
            };
            coupling.set_state(PathIdx(p as u32), state);
        }
    }

    /// Puts path `p`'s state into the connection's fields (the path being worked on).
    pub(super) fn select_path(&mut self, p: u8) {
        if self.mp().is_none_or(|mp| mp.active == p) {
            return;
        }
        // What the connection's counters grew by while the active path was selected is its.
        let now = PathCounters::of(&self.stats());
        let Some(r) = self.rare.existing() else { return };
        let lost_pns = &mut r.lost_pns;
        let Some(mp) = r.mp.as_deref_mut() else { return };
        let a = &mut mp.paths[mp.active as usize].counted;
        *a = a.plus_growth(&now, &mp.base);
        mp.base = now;
        // The spare in paths[active] takes the active path's state back, then path p's state
        // and the spare trade places.
        for i in [mp.active as usize, p as usize] {
            let s = &mut mp.paths[i].slots;
            std::mem::swap(self.acks.data_mut(), &mut s.acks);
            std::mem::swap(&mut self.recovery, &mut s.recovery);
            std::mem::swap(&mut self.next_pn[2], &mut s.next_pn);
            std::mem::swap(&mut self.probes[2], &mut s.probes);
            std::mem::swap(lost_pns, &mut s.lost_pns);
            std::mem::swap(&mut self.app_limited, &mut s.app_limited);
            std::mem::swap(&mut self.allow_one, &mut s.allow_one);
            std::mem::swap(&mut self.next_send_time, &mut s.next_send_time);
            std::mem::swap(&mut self.pacing_blocked, &mut s.pacing_blocked);
        }
        mp.active = p;
    }

    /// Path `p`'s recovery, wherever it is.
    pub(super) fn path_recovery(&self, p: usize) -> &Recovery {
        let mp = self.mp().expect("multipath");
        if mp.active as usize == p {
            &self.recovery
        } else {
            &mp.paths[p].slots.recovery
        }
    }

    /// Most stream bytes this end held out of order as a receiver (multipath connections).
    pub fn max_out_of_order_bytes(&self) -> u64 {
        self.mp().map_or(0, |mp| mp.max_held_bytes)
    }

    /// Every path's state (outputs; the connection-level controller's view).
    pub fn path_metrics(&self) -> Vec<PathMetrics> {
        let Some(mp) = self.mp() else { return Vec::new() };
        let now = PathCounters::of(&self.stats());
        (0..mp.paths.len())
            .map(|p| {
                let r = self.path_recovery(p);
                let m = quicksim_cc::CongestionController::metrics(&r.cc);
                let x = &mp.paths[p];
                // The active path's share runs on since it was selected.
                let counters =
                    if mp.active as usize == p { x.counted.plus_growth(&now, &mp.base) } else { x.counted };
                let ecn = r.ecn.as_ref();
                PathMetrics {
                    path: p as u8,
                    usable: mp.usable(p),
                    backup: x.backup || x.peer_backup,
                    abandoned: x.phase == Phase::Abandoned,
                    cwnd_bytes: m.cwnd_bytes,
                    ssthresh_bytes: m.ssthresh_bytes,
                    bytes_in_flight: r.bytes_in_flight,
                    smoothed_rtt: r.rtt.smoothed(),
                    latest_rtt: r.rtt.latest(),
                    min_rtt: r.rtt.min(),
                    rttvar: r.rtt.rttvar(),
                    pto: r.pto_duration(self.hs.confirmed),
                    pto_count: r.pto_count,
                    packets_sent: x.packets_sent,
                    bytes_sent: x.bytes_sent,
                    stream_bytes_sent: x.stream_bytes_sent,
                    validated_at: x.validated_at,
                    abandoned_at: x.abandoned_at,
                    counters,
                    ce_received: ecn.map_or(0, |e| e.ce_received()),
                    ecn_events: ecn.map_or(0, |e| e.congestion_events),
                }
            })
            .collect()
    }

    /// A packet arrived on `pkt.path`: make that path the one worked on. False: drop it (an
    /// unknown or abandoned path, a path the peer may not open, a handshake packet off path 0).
    pub(super) fn enter_path(&mut self, now: SimTime, pkt: &QuicPacket) -> bool {
        let p = pkt.path as usize;
        let negotiated = self.negotiated();
        let role = self.role;
        let Some(mp) = self.mp_mut() else { return p == 0 };
        if p >= mp.paths.len() || (p != 0 && (pkt.space != SpaceId::Data || !negotiated)) {
            return false;
        }
        match mp.paths[p].phase {
            Phase::Abandoned => return false,
            Phase::Idle if role == Role::Server => {
                // The client opened the path: validate its address in turn (RFC 9000 §8.2),
                // and send no more than the anti-amplification limit allows until then.
                mp.challenge(p);
                mp.paths[p].unvalidated = Some(Unvalidated::default());
            }
            Phase::Idle => return false,
            _ => {}
        }
        let x = &mut mp.paths[p];
        if let (Some(u), Phase::Validating) = (x.unvalidated.as_mut(), x.phase) {
            u.received += pkt.size_bytes();
        }
        // A suspect path is not cleared by a packet arriving on it: that proves the way back,
        // not the way forward. An ACK of one of its packets does (`on_path_answered`).
        let _ = now;
        self.select_path(p as u8);
        true
    }

    /// The peer takes part in multipath (or migration), once its parameters are known.
    pub(super) fn negotiated(&mut self) -> bool {
        let peer = self.peer();
        let Some(mp) = self.mp_mut() else { return false };
        if mp.negotiated.is_none() {
            if let Some(p) = peer {
                mp.negotiated = Some(mp.mode == MultipathMode::Migrate || p.initial_max_path_id.is_some());
                if let Some(max) = p.initial_max_path_id {
                    // Paths above the peer's limit are never opened.
                    for x in mp.paths.iter_mut().skip(max as usize + 1) {
                        x.phase = Phase::Abandoned;
                    }
                }
            }
        }
        mp.negotiated == Some(true)
    }

    /// An ACK of path `of` (PATH_ACK, or an ACK frame: path 0's) in a packet of path `on`.
    pub(super) fn on_path_ack(
        &mut self,
        now: SimTime,
        of: u8,
        on: u8,
        ack: &AckFrame,
        ecn: Option<&EcnCounts>,
    ) -> bool {
        let known = self.mp().is_some_and(|mp| (of as usize) < mp.paths.len());
        if !known {
            return false;
        }
        self.select_path(of);
        let freed = self.on_ack_frame(now, SpaceId::Data, ack, ecn);
        self.select_path(on);
        freed
    }

    /// An ACK newly acknowledged packets of the selected path (any of them: data, a PTO probe,
    /// a packet sent before the PTO): the path delivers in both directions, so it is no longer
    /// suspect. RFC 9002 §6.2.1 resets the PTO backoff on the same evidence. Called from
    /// `on_ack_frame` for every application-data ACK, whichever frame carried it: path 0's
    /// come in ACK frames on path 0 itself, and a suspect path 0 used to stay suspect for
    /// good when only PATH_ACK frames cleared the flag.
    pub(super) fn on_path_answered(&mut self) {
        if let Some(mp) = self.mp_mut() {
            let p = mp.active as usize;
            mp.paths[p].suspect = false;
        }
    }

    pub(super) fn on_path_challenge(&mut self, on: u8, token: u64) {
        if let Some(mp) = self.mp_mut() {
            mp.paths[on as usize].response = Some(token);
        }
    }

    /// Our challenge on path `on` answered: the path is validated (RFC 9000 §8.2.2), one round
    /// trip after the challenge. Migrating, the connection moves to it.
    pub(super) fn on_path_response(&mut self, now: SimTime, on: u8, token: u64) {
        let Some(mp) = self.mp_mut() else { return };
        let x = &mut mp.paths[on as usize];
        let ours = x.challenge == Some(token) || x.earlier_challenges.contains(&token);
        if !ours || x.phase != Phase::Validating {
            return;
        }
        x.challenge = None;
        x.challenge_pending = false;
        x.earlier_challenges = Vec::new();
        // The round trip is proven; a PTO while it validated made it suspect.
        x.suspect = false;
        x.phase = Phase::Active;
        x.validated_at = Some(now);
        if mp.mode == MultipathMode::Migrate && on != mp.current {
            let old = mp.current;
            mp.current = on;
            // The old path's outstanding data goes on the new one; it is not used again.
            self.leave_path(now, old, false);
        }
        if self.mp().is_some_and(|mp| mp.paths[on as usize].backup) {
            let mp = self.mp_mut().expect("multipath");
            mp.status_seq += 1;
            mp.control.push(Frame::PathStatus { path: u64::from(on), seq: mp.status_seq, available: false });
        }
        self.sync_coupling();
    }

    pub(super) fn on_path_abandon(&mut self, now: SimTime, path: u64) {
        let ok = self.mp().is_some_and(|mp| {
            (path as usize) < mp.paths.len() && mp.paths[path as usize].phase != Phase::Abandoned
        });
        if ok {
            self.leave_path(now, path as u8, false);
        }
    }

    pub(super) fn on_path_status(&mut self, path: u64, available: bool) {
        if let Some(x) = self.mp_mut().and_then(|mp| mp.paths.get_mut(path as usize)) {
            x.peer_backup = !available;
        }
        self.sync_coupling();
    }

    /// A packet of the selected path carrying our PATH_CHALLENGE `token` was lost: while the
    /// path still validates and that was its latest challenge, a new one goes (RFC 9000 §13.3:
    /// PATH_CHALLENGE is not retransmitted as such; without a new one the path would wait for
    /// a response that cannot come, with nothing in flight to fire a PTO).
    pub(super) fn on_path_challenge_lost(&mut self, token: u64) {
        let Some(mp) = self.mp_mut() else { return };
        let p = mp.active as usize;
        let x = &mp.paths[p];
        if x.phase == Phase::Validating && x.challenge == Some(token) && !x.challenge_pending {
            mp.challenge(p);
        }
    }

    /// Stops using path `p`: its outstanding STREAM data goes back to the queue for the other
    /// paths and its 1-RTT space is dropped (no more timers or probes); with `tell`, a
    /// PATH_ABANDON goes to the peer.
    fn leave_path(&mut self, now: SimTime, p: u8, tell: bool) {
        let back = self.mp().map_or(0, |mp| mp.active);
        self.select_path(p);
        self.requeue_outstanding();
        let ctx = self.timer_ctx();
        self.recovery.discard_space(SpaceId::Data, now, ctx);
        self.probes[2] = 0;
        let mp = self.mp_mut().expect("multipath");
        mp.paths[p as usize].phase = Phase::Abandoned;
        mp.paths[p as usize].abandoned_at = Some(now);
        mp.paths[p as usize].copies.clear();
        if tell && mp.mode == MultipathMode::Multipath {
            mp.control.push(Frame::PathAbandon { path: u64::from(p), error_code: PATH_UNSTABLE_OR_POOR });
        }
        self.select_path(if back == p { 0 } else { back });
        self.sync_coupling();
    }

    /// Queues what the selected path's packets in flight carry again (STREAM data, MAX_DATA and
    /// the other control frames), so other paths send it; the packets stay in flight here (an
    /// ACK that still comes releases them).
    fn requeue_outstanding(&mut self) {
        let frames: Vec<Frame> =
            self.recovery.outstanding(SpaceId::Data).flat_map(|p| p.frames.iter().cloned()).collect();
        for f in frames {
            self.requeue_frame(SpaceId::Data, f);
        }
    }

    /// Whether a path other than `p` may carry data now.
    pub(super) fn other_path_usable(&self, p: u8) -> bool {
        self.mp().is_some_and(|mp| (0..mp.paths.len()).any(|q| q != p as usize && mp.usable(q)))
    }

    /// A PTO fired on the selected path `p` (its probe is owed). A path still validating
    /// sends a new PATH_CHALLENGE as the probe (RFC 9000 §9.4: the challenge or its response
    /// was lost). With another path usable the path is suspect: its outstanding data is queued
    /// again for the others (failover within one PTO), and after `abandon_after_ptos` it is
    /// abandoned. Migrating, the next configured path is probed.
    pub(super) fn on_path_pto(&mut self, now: SimTime, p: u8) {
        let ptos = self.recovery.pto_count;
        let Some(mp) = self.mp() else { return };
        let mode = mp.mode;
        let abandon_after = mp.abandon_after;
        if mp.paths[p as usize].phase == Phase::Validating {
            self.mp_mut().expect("multipath").challenge(p as usize);
        }
        if self.other_path_usable(p) {
            let first = !self.mp().expect("multipath").paths[p as usize].suspect;
            self.mp_mut().expect("multipath").paths[p as usize].suspect = true;
            if first {
                self.requeue_outstanding();
            }
            if ptos >= abandon_after {
                self.leave_path(now, p, true);
            }
            return;
        }
        if mode == MultipathMode::Migrate && self.role == Role::Client && self.hs.confirmed {
            // Probe the next path not tried yet (RFC 9000 §9: probe, validate, then move).
            let mp = self.mp_mut().expect("multipath");
            if mp.paths.iter().any(|x| x.phase == Phase::Validating) {
                return;
            }
            if let Some(n) = (0..mp.paths.len()).find(|&q| mp.paths[q].phase == Phase::Idle) {
                mp.challenge(n);
            }
        }
    }

    /// The client opens its further paths once the handshake is confirmed and the peer agreed
    /// (draft-21 §3.1: not before).
    fn open_paths(&mut self) {
        if self.role != Role::Client || !self.hs.confirmed || !self.negotiated() {
            return;
        }
        let mp = self.mp_mut().expect("multipath");
        if mp.mode != MultipathMode::Multipath {
            return;
        }
        for p in 1..mp.paths.len() {
            if mp.paths[p].phase == Phase::Idle {
                mp.challenge(p);
            }
        }
    }

    /// The next packet of a multipath connection, after the handshake spaces (path 0): per
    /// path its PTO probe or path-validation frames, then new data on the paths the scheduler
    /// picks, then the ACKs each path owes.
    pub(super) fn poll_transmit_paths(&mut self, now: SimTime) -> Option<QuicPacket> {
        self.open_paths();
        let n = self.mp().expect("multipath").paths.len();
        let mps = self.cfg.max_packet_size;
        for p in 0..n {
            let mp = self.mp().expect("multipath");
            let x = &mp.paths[p];
            if matches!(x.phase, Phase::Idle | Phase::Abandoned) || mp.amplification_blocked(p) {
                continue;
            }
            let control =
                x.challenge_pending || x.response.is_some() || (!mp.control.is_empty() && mp.usable(p));
            self.select_path(p as u8);
            self.recovery.prune(now);
            if self.probes[2] > 0 {
                self.probes[2] -= 1;
                let x = &self.mp().expect("multipath").paths[p];
                let pkt = if x.phase == Phase::Validating && x.challenge_pending {
                    // Its new PATH_CHALLENGE (`on_path_pto`) is the probe.
                    self.build_path_control(now)
                } else if x.suspect || x.phase == Phase::Validating {
                    self.build_path_probe(now)
                } else {
                    self.build_data_packet(now, mps, true)
                };
                return Some(self.sent_on_path(pkt));
            }
            if control {
                let pkt = self.build_path_control(now);
                return Some(self.sent_on_path(pkt));
            }
        }
        self.queue_blocked_frames();
        let has_content = !self.pending_is_empty() || self.streams.any_ready(self.conn_send.available());
        let views: Vec<PathView> = {
            let mp = self.mp().expect("multipath");
            (0..n)
                .map(|p| {
                    let r = self.path_recovery(p);
                    let x = &mp.paths[p];
                    let cwnd = quicksim_cc::CongestionController::cwnd_bytes(&r.cc);
                    PathView {
                        id: p as u8,
                        usable: mp.usable(p),
                        backup: x.backup || x.peer_backup,
                        srtt: r.rtt.smoothed(),
                        room_bytes: cwnd.saturating_sub(r.bytes_in_flight),
                        cwnd_bytes: cwnd,
                        bytes_in_flight: r.bytes_in_flight,
                    }
                })
                .collect()
        };
        let mut order = std::mem::take(&mut self.mp_mut().expect("multipath").order);
        order.clear();
        self.mp_mut().expect("multipath").scheduler.order(&views, &mut order);
        let redundant = self.mp().expect("multipath").scheduler.redundant();
        let mut out = None;
        for &p in &order {
            let copies = !self.mp().expect("multipath").paths[p as usize].copies.is_empty();
            if !has_content && !copies {
                continue;
            }
            self.select_path(p);
            let Some(budget) = self.window_budget() else { continue };
            if now < self.next_send_time {
                self.pacing_blocked = true;
                continue;
            }
            self.app_limited = false;
            let pkt = if copies {
                self.build_copy_packet(now, budget)
            } else {
                self.build_data_packet(now, budget, false)
            };
            if redundant && !copies {
                let frames: Vec<StreamFrame> = pkt
                    .frames
                    .iter()
                    .filter_map(|f| if let Frame::Stream(s) = f { Some(*s) } else { None })
                    .collect();
                let mp = self.mp_mut().expect("multipath");
                for &q in order.iter().filter(|&&q| q != p) {
                    mp.paths[q as usize].copies.extend(frames.iter().copied());
                }
            }
            out = Some(self.sent_on_path(pkt));
            break;
        }
        self.mp_mut().expect("multipath").order = order;
        if out.is_some() {
            return out;
        }
        if !has_content {
            self.app_limited = true;
        }
        for p in 0..n {
            let mp = self.mp().expect("multipath");
            if mp.paths[p].phase == Phase::Idle || mp.amplification_blocked(p) {
                continue;
            }
            self.select_path(p as u8);
            if !self.recovery.is_discarded(SpaceId::Data) && self.acks.data().ack_due(now) {
                let pkt = self.build_ack_only(now, SpaceId::Data)?;
                return Some(self.sent_on_path(pkt));
            }
        }
        None
    }

    /// A packet of the selected path with its path-validation frames (padded to 1200 B with a
    /// challenge, RFC 9000 §8.2.1), the pending PATH_ABANDON / PATH_STATUS frames if the path is
    /// usable, and its ACK if one is owed.
    fn build_path_control(&mut self, now: SimTime) -> QuicPacket {
        let pn = self.next_pn[2];
        let mps = self.amplification_cap();
        let mut avail = mps.saturating_sub(self.header_len_data(pn));
        let mut frames = Frames::new();
        let mut ack = None;
        if let Some((f, largest, n)) = self.owed_ack_frame(now, avail / 2) {
            ack = Some((largest, n));
            avail -= n;
            frames.push(f);
        }
        let p = self.mp().expect("multipath").active as usize;
        let usable = self.mp().expect("multipath").usable(p);
        let mp = self.mp_mut().expect("multipath");
        let x = &mut mp.paths[p];
        let mut challenge = false;
        if x.challenge_pending {
            x.challenge_pending = false;
            frames.push(Frame::PathChallenge(x.challenge.expect("a pending challenge has a token")));
            challenge = true;
        }
        if let Some(t) = x.response.take() {
            frames.push(Frame::PathResponse(t));
        }
        if usable {
            for f in std::mem::take(&mut mp.control) {
                if f.size() <= avail {
                    avail -= f.size();
                    frames.push(f);
                } else {
                    mp.control.push(f);
                }
            }
        }
        if challenge {
            let hdr = self.header_len_data(pn);
            let total = hdr + frames.iter().map(Frame::size).sum::<u64>();
            let target = mps.min(1200);
            if total < target {
                frames.push(Frame::Padding(target - total));
            }
        }
        self.finish_path_packet(now, pn, frames, ack)
    }

    /// The PTO probe of a suspect path: a PING (with the path's ACK if one is owed). Its data
    /// and control frames went to the other paths (`on_path_pto`); new ones put in the probe
    /// would wait behind a path that may be dead until the next PTO, holding up in-order
    /// delivery and flow-control credit. The probe only has to find out whether the path
    /// answers; RFC 9002 §6.2.4 requires it to be ack-eliciting and leaves its content to the
    /// implementation. It is sent whatever the window (RFC 9002 §7.5).
    fn build_path_probe(&mut self, now: SimTime) -> QuicPacket {
        let pn = self.next_pn[2];
        let avail = self.amplification_cap().saturating_sub(self.header_len_data(pn));
        let mut frames = Frames::new();
        let mut ack = None;
        if let Some((f, largest, n)) = self.owed_ack_frame(now, avail / 2) {
            ack = Some((largest, n));
            frames.push(f);
        }
        frames.push(Frame::Ping);
        self.finish_path_packet(now, pn, frames, ack)
    }

    /// A packet of copies of other paths' STREAM frames (the redundant scheduler).
    fn build_copy_packet(&mut self, now: SimTime, budget: u64) -> QuicPacket {
        let pn = self.next_pn[2];
        let mut avail = budget.saturating_sub(self.header_len_data(pn));
        let mut frames = Frames::new();
        let p = self.mp().expect("multipath").active as usize;
        while let Some(sf) = self.mp_mut().expect("multipath").paths[p].copies.pop_front() {
            let acked = self
                .streams
                .send
                .get(&sf.id)
                .is_none_or(|s| s.acked.count_in(sf.offset, sf.offset + sf.len) == sf.len);
            if acked {
                continue;
            }
            if sf.size() > avail {
                self.mp_mut().expect("multipath").paths[p].copies.push_front(sf);
                break;
            }
            avail -= sf.size();
            frames.push(Frame::Stream(sf));
        }
        if frames.is_empty() {
            frames.push(Frame::Ping);
        }
        self.finish_path_packet(now, pn, frames, None)
    }

    /// The largest packet the selected path may carry now: the packet size, or less while the
    /// anti-amplification limit holds it (a challenge is then padded only up to the limit,
    /// RFC 9000 §8.2.1).
    fn amplification_cap(&self) -> u64 {
        let mp = self.mp().expect("multipath");
        let room = mp.amplification_room(mp.active as usize).unwrap_or(u64::MAX);
        self.cfg.max_packet_size.min(room)
    }

    /// Counts a packet built on the selected path and stamps its path id.
    fn sent_on_path(&mut self, mut pkt: QuicPacket) -> QuicPacket {
        let size = pkt.size_bytes();
        let stream = pkt.stream_bytes();
        let mp = self.mp_mut().expect("multipath");
        let p = mp.active;
        pkt.path = p;
        let x = &mut mp.paths[p as usize];
        x.packets_sent += 1;
        x.bytes_sent += size;
        x.stream_bytes_sent += stream;
        if let (Some(u), Phase::Validating) = (x.unvalidated.as_mut(), x.phase) {
            u.sent += size;
        }
        pkt
    }

    /// The earliest timer of any path (loss detection, delayed ACK, pacer).
    pub(super) fn paths_timeout(&self) -> Option<SimTime> {
        let mp = self.mp()?;
        let mut t: Option<SimTime> = None;
        for p in 0..mp.paths.len() {
            if mp.paths[p].phase == Phase::Abandoned {
                // Nothing is sent on it any more (`poll_transmit_paths`), so an ACK it still
                // owed or a pacing wait would wake the connection at the same instant forever
                // (a run stuck at 3.976 s: Khalili scenario C, N1 = 30, LIA, seed 2). Its loss
                // timer went with its space (`leave_path`).
                continue;
            }
            let (r, acks, pacing) = if mp.active as usize == p {
                (&self.recovery, self.acks.data(), self.pacing_blocked.then_some(self.next_send_time))
            } else {
                let s = &mp.paths[p].slots;
                (&s.recovery, &s.acks, s.pacing_blocked.then_some(s.next_send_time))
            };
            // An ACK the anti-amplification limit holds back waits for more from the peer, not
            // for its deadline (which would wake the connection at the same instant forever).
            let acks = if mp.amplification_blocked(p) { None } else { acks.deadline() };
            for x in [r.timer(), acks, pacing].into_iter().flatten() {
                t = Some(t.map_or(x, |y| y.min(x)));
            }
        }
        t
    }

    /// Expired loss-detection timers of every path, each handled on its path.
    pub(super) fn paths_handle_timeout(&mut self, now: SimTime) {
        let n = self.mp().expect("multipath").paths.len();
        for p in 0..n {
            if self.path_recovery(p).timer().is_some_and(|t| t <= now) {
                self.select_path(p as u8);
                let pto = self.on_recovery_timer(now);
                if pto {
                    self.on_path_pto(now, p as u8);
                }
                if !matches!(
                    self.state,
                    super::connection::State::Handshaking | super::connection::State::Established
                ) {
                    return;
                }
            }
        }
    }

    /// Abandons path `p` at the application's request (PATH_ABANDON with
    /// APPLICATION_ABANDON_PATH).
    pub fn abandon_path(&mut self, now: SimTime, p: u8) {
        let ok = self.mp().is_some_and(|mp| {
            (p as usize) < mp.paths.len() && mp.paths[p as usize].phase != Phase::Abandoned
        });
        if ok {
            self.leave_path(now, p, false);
            let mp = self.mp_mut().expect("multipath");
            mp.control.push(Frame::PathAbandon { path: u64::from(p), error_code: APPLICATION_ABANDON_PATH });
        }
    }

    /// A PATH_ACK (or, on path 0, ACK) frame of the selected path, as `build_ack` builds them,
    /// when one is due or may ride along (the path control packet and the PTO probe).
    fn owed_ack_frame(&mut self, now: SimTime, budget: u64) -> Option<(Frame, u64, u64)> {
        if !(self.acks.data().ack_due(now) || self.acks.data().wants_bundle(true)) {
            return None;
        }
        self.build_ack(now, SpaceId::Data, self.cfg.ack_delay_exponent, budget)
    }

    /// Wraps the selected path's ACK into a PATH_ACK frame, unless it is path 0's (draft-21
    /// §4.1: ACK frames acknowledge path 0). Returns the frame and its size.
    pub(super) fn path_ack_wrap(&self, f: Frame, size: u64) -> (Frame, u64) {
        let Some(mp) = self.mp() else { return (f, size) };
        if mp.active == 0 {
            return (f, size);
        }
        let path = u64::from(mp.active);
        let extra = super::packet::varint_len(path);
        let frame = match f {
            Frame::Ack(ack) => PathAckFrame { path, ack, ecn: None },
            Frame::AckEcn(a) => PathAckFrame { path, ack: a.ack, ecn: Some(a.counts) },
            other => return (other, size),
        };
        (Frame::PathAck(Box::new(frame)), size + extra)
    }
}
