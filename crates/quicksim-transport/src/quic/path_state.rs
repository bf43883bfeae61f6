//! The per-path state of a multipath connection (`paths.rs` has what the connection does with
//! it): a path's own recovery, ACK and packet-number state, its life cycle, and the set of
//! paths with their scheduler.

use std::collections::{BTreeSet, VecDeque};

use quicksim_cc::coupled::SharedCoupling;
use quicksim_cc::InitCtx;
use quicksim_engine::{Rng, SimDuration, SimTime};

use super::ack::AckManager;
use super::config::MultipathMode;
use super::packet::{Frame, SpaceId, StreamFrame};
use super::path_sched::{self, PathScheduler};
use super::recovery::{Recovery, WINDOW_RULES};
use super::{ConnStats, QuicConfig};

/// The per-path part of a connection, swapped with the connection's fields (`select_path`).
#[derive(Debug)]
pub(super) struct PathSlots {
    pub acks: AckManager,
    pub recovery: Recovery,
    pub next_pn: u64,
    pub probes: u8,
    pub lost_pns: BTreeSet<u64>,
    pub app_limited: bool,
    pub allow_one: bool,
    pub next_send_time: SimTime,
    pub pacing_blocked: bool,
}

impl PathSlots {
    /// A new path's state: a fresh controller and RTT estimator (RFC 9000 §9.4: a new path
    /// starts from the initial window and RTT), the handshake spaces already gone.
    pub(super) fn new(cfg: &QuicConfig, now: SimTime, rng: &Rng) -> PathSlots {
        let rules = cfg.initial_window.map_or(WINDOW_RULES, |n| WINDOW_RULES.with_initial_segments(n));
        let cc = cfg.cc.build(&InitCtx { mds: cfg.max_packet_size, window: &rules, rng });
        let mut recovery = Recovery::new(cc, cfg.initial_rtt, cfg.max_packet_size, cfg.max_ack_delay);
        let ctx = super::recovery::TimerCtx {
            handshake_confirmed: true,
            peer_validated: true,
            has_handshake_keys: false,
        };
        recovery.discard_space(SpaceId::Initial, now, ctx);
        recovery.discard_space(SpaceId::Handshake, now, ctx);
        if cfg.ecn {
            recovery.enable_ecn();
        }
        PathSlots {
            acks: AckManager::new(cfg.max_ack_ranges),
            recovery,
            next_pn: 0,
            probes: 0,
            lost_pns: BTreeSet::new(),
            app_limited: true,
            allow_one: false,
            next_send_time: now,
            pacing_blocked: false,
        }
    }
}

/// Where a path is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Phase {
    /// Configured, not opened yet.
    Idle,
    /// Opened: our PATH_CHALLENGE is out (or owed), no PATH_RESPONSE yet.
    Validating,
    /// Validated: may carry data.
    Active,
    /// Abandoned (PATH_ABANDON sent or received): never used again.
    Abandoned,
}

/// RFC 9000 §8 (and §9.3 for a new peer address): before this end has validated the peer's
/// address on a path the peer opened, it sends there at most three times the bytes it has
/// received there.
pub(super) const AMPLIFICATION_FACTOR: u64 = 3;
/// The least room for a packet on a path the limit holds back: a PATH_RESPONSE, a PATH_CHALLENGE
/// and a small ACK with their header, or an ACK-only packet of a path's first few ranges (the
/// model's ACK frames on a path not yet validated are a few dozen bytes). With less, nothing
/// goes on the path until more arrives from the peer.
pub(super) const AMPLIFICATION_MIN_PACKET: u64 = 200;

/// Bytes received from and sent to the peer on a path it opened, while this end has not yet
/// validated the peer's address there (counted in QUIC packet bytes, as every path counter).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Unvalidated {
    pub received: u64,
    pub sent: u64,
}

/// One path of a connection.
#[derive(Debug)]
pub(super) struct Path {
    /// The path's state while another path's is in the connection; a spare while its own is.
    pub slots: PathSlots,
    pub phase: Phase,
    /// The token of our latest PATH_CHALLENGE awaiting its response, and whether it is still to
    /// be sent.
    pub challenge: Option<u64>,
    pub challenge_pending: bool,
    /// The tokens of our earlier PATH_CHALLENGEs on this path while it validates: a response
    /// to any of them validates it (RFC 9000 §8.2.3).
    pub earlier_challenges: Vec<u64>,
    /// A PATH_RESPONSE owed on this path.
    pub response: Option<u64>,
    /// We (`backup`) or the peer (`peer_backup`, PATH_STATUS_BACKUP) want it used only while no
    /// other path is usable.
    pub backup: bool,
    pub peer_backup: bool,
    /// Its PTO fired while another path is usable: no new data on it until it answers again
    /// (its outstanding data was queued again for the other paths).
    pub suspect: bool,
    /// Copies of other paths' STREAM frames to send (the redundant scheduler).
    pub copies: VecDeque<StreamFrame>,
    /// When it was validated (the failover and migration checks read it).
    pub validated_at: Option<SimTime>,
    /// When it was abandoned (PATH_ABANDON sent or received, or left by migration).
    pub abandoned_at: Option<SimTime>,
    /// Counters of this path: packets and bytes sent, STREAM bytes sent.
    pub packets_sent: u64,
    pub bytes_sent: u64,
    pub stream_bytes_sent: u64,
    /// The connection's counters this path moved, up to its last `select_path` away from it.
    pub counted: PathCounters,
    /// The peer opened the path: the anti-amplification limit's counts until our challenge is
    /// answered (`Multipath::amplification_room`). None on a path we opened.
    pub unvalidated: Option<Unvalidated>,
}

impl Path {
    fn new(slots: PathSlots, phase: Phase, backup: bool) -> Path {
        Path {
            slots,
            phase,
            challenge: None,
            challenge_pending: false,
            earlier_challenges: Vec::new(),
            response: None,
            backup,
            peer_backup: false,
            suspect: false,
            copies: VecDeque::new(),
            validated_at: None,
            abandoned_at: None,
            packets_sent: 0,
            bytes_sent: 0,
            stream_bytes_sent: 0,
            counted: PathCounters::default(),
            unvalidated: None,
        }
    }
}

/// The paths of a connection and how data is spread over them.
#[derive(Debug)]
pub(super) struct Multipath {
    pub(super) paths: Vec<Path>,
    /// The path whose state is in the connection's fields.
    pub(super) active: u8,
    pub(super) mode: MultipathMode,
    /// Migration: the path in use.
    pub(super) current: u8,
    /// Whether the peer takes part (its initial_max_path_id; always with migration). None
    /// until its transport parameters are known.
    pub(super) negotiated: Option<bool>,
    pub(super) scheduler: Box<dyn PathScheduler>,
    pub(super) abandon_after: u32,
    /// PATH_ABANDON and PATH_STATUS frames to send (on any usable path).
    pub(super) control: Vec<Frame>,
    pub(super) status_seq: u64,
    /// Each new path's controller stream.
    rng: Rng,
    next_token: u64,
    /// Reused buffer of the scheduler's order.
    pub(super) order: Vec<u8>,
    /// Most stream bytes the receiver held out of order (above the delivered prefix, holes
    /// included), the reordering cost of paths of different RTTs.
    pub(super) max_held_bytes: u64,
    /// The paths' shared coupled controller (`lia`, `olia`, `balia`); None when every path
    /// runs a controller of its own (uncoupled).
    pub(super) coupling: Option<SharedCoupling>,
    /// The connection's counters when the active path was selected: what they grew by since
    /// belongs to it (`Connection::select_path`).
    pub(super) base: PathCounters,
}

/// The connection's counters that one path's events move (the `conn` table's per-path rows).
/// Every such event (a packet sent, an ACK of the path's packets, a loss or PTO of its
/// recovery) happens while its path is the one worked on, so a path's share is what the
/// connection's counters grew by while it was selected, and the paths' shares sum to the
/// connection's counts exactly.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PathCounters {
    pub packets_sent: u64,
    pub packets_acked: u64,
    pub packets_lost: u64,
    pub retransmitted_bytes: u64,
    /// PTO expiries.
    pub timeouts: u64,
    pub ack_frames_sent: u64,
}

impl PathCounters {
    /// The connection's running counts.
    pub(super) fn of(s: &ConnStats) -> PathCounters {
        PathCounters {
            packets_sent: s.packets_sent,
            packets_acked: s.packets_acked,
            packets_lost: s.packets_lost,
            retransmitted_bytes: s.retransmitted_bytes,
            timeouts: s.pto_count_total,
            ack_frames_sent: s.ack_frames_sent,
        }
    }

    /// `self` plus what the counts grew by from `base` to `now`.
    pub(super) fn plus_growth(self, now: &PathCounters, base: &PathCounters) -> PathCounters {
        PathCounters {
            packets_sent: self.packets_sent + (now.packets_sent - base.packets_sent),
            packets_acked: self.packets_acked + (now.packets_acked - base.packets_acked),
            packets_lost: self.packets_lost + (now.packets_lost - base.packets_lost),
            retransmitted_bytes: self.retransmitted_bytes
                + (now.retransmitted_bytes - base.retransmitted_bytes),
            timeouts: self.timeouts + (now.timeouts - base.timeouts),
            ack_frames_sent: self.ack_frames_sent + (now.ack_frames_sent - base.ack_frames_sent),
        }
    }
}

/// A path's state as outputs and a connection-level (coupled) controller see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PathMetrics {
    pub path: u8,
    /// Validated, not abandoned, not suspected of failure.
    pub usable: bool,
    pub backup: bool,
    pub abandoned: bool,
    pub cwnd_bytes: u64,
    pub ssthresh_bytes: u64,
    pub bytes_in_flight: u64,
    pub smoothed_rtt: SimDuration,
    pub latest_rtt: SimDuration,
    pub min_rtt: SimDuration,
    pub rttvar: SimDuration,
    /// The path's PTO period, backoff included (RFC 9002 §6.2.1).
    pub pto: SimDuration,
    pub pto_count: u32,
    pub packets_sent: u64,
    pub bytes_sent: u64,
    pub stream_bytes_sent: u64,
    pub validated_at: Option<SimTime>,
    pub abandoned_at: Option<SimTime>,
    /// The connection's counters this path moved (every packet of this end on the path,
    /// handshake ones included on path 0).
    pub counters: PathCounters,
    /// Packets that arrived on the path marked CE, and the congestion events the path's
    /// recovery took from the peer's marks.
    pub ce_received: u64,
    pub ecn_events: u64,
}

impl Multipath {
    /// The multipath state of a new connection with `cfg.multipath`; path 0 is in use.
    pub(super) fn new(cfg: &QuicConfig, now: SimTime, mut rng: Rng) -> Multipath {
        let m = cfg.multipath.as_ref().expect("a multipath configuration");
        let spare = PathSlots::new(cfg, now, &rng.split());
        let mut paths = vec![Path::new(spare, Phase::Active, false)];
        paths[0].validated_at = Some(now);
        for p in &m.paths {
            paths.push(Path::new(PathSlots::new(cfg, now, &rng.split()), Phase::Idle, p.backup));
        }
        Multipath {
            paths,
            active: 0,
            mode: m.mode,
            current: 0,
            negotiated: None,
            scheduler: match &m.plugin {
                Some(f) => (f.make)(),
                None => path_sched::scheduler(&m.scheduler).expect("validated scheduler name"),
            },
            abandon_after: m.abandon_after_ptos,
            control: Vec::new(),
            status_seq: 0,
            rng,
            next_token: 0x5a5a_0000_0000_0000,
            order: Vec::new(),
            max_held_bytes: 0,
            coupling: None,
            base: PathCounters::default(),
        }
    }

    /// May carry new data: validated, not abandoned, not suspect (and, migrating, in use).
    pub(super) fn usable(&self, p: usize) -> bool {
        let x = &self.paths[p];
        x.phase == Phase::Active
            && !x.suspect
            && (self.mode == MultipathMode::Multipath || p == self.current as usize)
    }

    /// What path `p` may still send before this end has validated the peer's address there
    /// (RFC 9000 §8: three times what it received there, less what it sent); None: no limit.
    pub(super) fn amplification_room(&self, p: usize) -> Option<u64> {
        let x = &self.paths[p];
        match x.unvalidated {
            Some(u) if x.phase == Phase::Validating => {
                Some((AMPLIFICATION_FACTOR * u.received).saturating_sub(u.sent))
            }
            _ => None,
        }
    }

    /// Whether the anti-amplification limit keeps every packet off path `p` for now.
    pub(super) fn amplification_blocked(&self, p: usize) -> bool {
        self.amplification_room(p).is_some_and(|r| r < AMPLIFICATION_MIN_PACKET)
    }

    /// Path `p` validates (again): a PATH_CHALLENGE with a new token is to be sent (RFC 9000
    /// §8.2.1; a repeated challenge carries new data, §13.3), the earlier tokens still count.
    pub(super) fn challenge(&mut self, p: usize) {
        let t = self.token();
        let x = &mut self.paths[p];
        x.phase = Phase::Validating;
        if let Some(old) = x.challenge.replace(t) {
            x.earlier_challenges.push(old);
        }
        x.challenge_pending = true;
    }

    pub(super) fn token(&mut self) -> u64 {
        self.next_token += 1;
        self.next_token ^ self.rng.next_u64() >> 8
    }
}
