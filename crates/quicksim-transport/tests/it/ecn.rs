//! QUIC's ECN through the two-endpoint harness (RFC 9000 §13.4, RFC 9002 §7.1): ACK_ECN counts
//! as the receiver saw the codepoints, validation against bleaching, dropping and a peer that
//! does not echo, and one congestion event per round trip for a burst of CE marks.

use super::harness::{RemarkFn, Sim};
use quicksim_engine::{Rate, SimDuration, SimTime};
use quicksim_transport::quic::{EcnCounts, Frame, SpaceId};
use quicksim_transport::{EcnCodepoint, EcnState, Endpoint, QuicConfig};
use std::cell::RefCell;
use std::rc::Rc;

fn ecn_cfg() -> QuicConfig {
    QuicConfig { ecn: true, ..QuicConfig::default() }
}

/// A 10 Mbit/s path with 10 ms one way, sending `bytes` from the client; `remark` changes
/// packets on the way, `drop_ect` drops every ECN-capable client packet.
fn transfer(client: QuicConfig, server: QuicConfig, bytes: u64, remark: RemarkFn, drop_ect: bool) -> Sim {
    let drop: super::harness::DropFn =
        Box::new(move |dir, _, p| drop_ect && dir == 0 && p.ecn != EcnCodepoint::NotEct);
    let mut sim =
        Sim::new_with_drop(client, server, SimDuration::from_millis(10), Some(Rate::mbps(10)), drop);
    sim.remark = remark;
    sim.write(0, 0, bytes);
    sim.run_transfer(bytes, SimTime::from_secs(20)).expect("transfer completes");
    sim.run_until(sim.now + SimDuration::from_millis(100));
    sim
}

/// Collects the codepoints of the client's 1-RTT packets (in sending order) and the last ECN
/// counts the server reported, by wrapping a remark function.
type Seen = Rc<RefCell<(Vec<(bool, EcnCodepoint)>, Option<EcnCounts>)>>;

fn watching(
    seen: Seen,
    mut inner: impl FnMut(usize, u64, &mut quicksim_transport::QuicPacket) + 'static,
) -> RemarkFn {
    Box::new(move |dir, idx, p| {
        let mut s = seen.borrow_mut();
        if dir == 0 && p.space == SpaceId::Data {
            s.0.push((p.is_ack_eliciting(), p.ecn));
        }
        if dir == 1 {
            for f in &p.frames {
                if let Frame::AckEcn(a) = f {
                    s.1 = Some(a.counts);
                }
            }
        }
        drop(s);
        inner(dir, idx, p);
    })
}

/// A clean path: the server counts every ECT(0) packet and reports it in ACK_ECN frames; the
/// client validates with its first ACK and keeps marking.
#[test]
fn ack_ecn_counts_match_the_marked_packets_and_validate() {
    let seen: Seen = Rc::default();
    let sim = transfer(ecn_cfg(), ecn_cfg(), 300_000, watching(seen.clone(), |_, _, _| {}), false);
    let c = sim.conns[0].counters();
    assert_eq!(c.ecn_state, EcnState::Capable);
    assert_eq!((c.ce_received, c.ecn_congestion_events, c.packets_lost), (0, 0, 0));
    let s = seen.borrow();
    let marked = s.0.iter().filter(|(_, e)| *e == EcnCodepoint::Ect0).count() as u64;
    // The ten testing packets are the initial window (RFC 9002 §7.2: 10 packets of 1252 B);
    // the 11th waits for the first ACK, which validates: every ack-eliciting packet is marked.
    assert!(s.0.iter().all(|(ae, e)| !*ae || *e == EcnCodepoint::Ect0));
    assert!(s.0.iter().all(|(ae, e)| *ae || *e == EcnCodepoint::NotEct), "ACK-only packets are not marked");
    // The server's last ACK_ECN counts every marked packet (the last ACK acknowledges all).
    assert_eq!(s.1, Some(EcnCounts { ect0: marked, ect1: 0, ce: 0 }));
    // The server's few ack-eliciting packets (HANDSHAKE_DONE, MAX_DATA) validated too.
    assert_eq!(sim.conns[1].counters().ecn_state, EcnState::Capable);
}

/// ECN off (the default): no packet marked, no ACK_ECN frame, the counters stay at zero.
#[test]
fn without_ecn_nothing_is_marked() {
    let seen: Seen = Rc::default();
    let sim = transfer(
        QuicConfig::default(),
        QuicConfig::default(),
        100_000,
        watching(seen.clone(), |_, _, _| {}),
        false,
    );
    let s = seen.borrow();
    assert!(s.0.iter().all(|(_, e)| *e == EcnCodepoint::NotEct) && s.1.is_none());
    assert_eq!(sim.conns[0].counters().ecn_state, EcnState::Off);
}

/// A path that bleaches ECT(0) to Not-ECT: the marked packets are acknowledged without ECN
/// counts, validation fails and marking stops; the transfer is unharmed.
#[test]
fn bleaching_fails_validation_and_stops_marking() {
    let seen: Seen = Rc::default();
    let bleach = |dir: usize, _: u64, p: &mut quicksim_transport::QuicPacket| {
        if dir == 0 {
            p.ecn = EcnCodepoint::NotEct;
        }
    };
    let sim = transfer(ecn_cfg(), ecn_cfg(), 300_000, watching(seen.clone(), bleach), false);
    assert_eq!(sim.conns[0].counters().ecn_state, EcnState::Failed);
    let s = seen.borrow();
    let marked = s.0.iter().filter(|(_, e)| *e == EcnCodepoint::Ect0).count();
    assert_eq!(marked, 10, "only the testing packets were marked");
    assert!(s.1.is_none(), "the server never saw a mark, so never sent ACK_ECN");
}

/// A path that drops every ECN-capable packet: all ten testing packets are lost, validation
/// fails, and the unmarked retransmissions get through.
#[test]
fn dropping_marked_packets_fails_validation() {
    let sim = transfer(ecn_cfg(), ecn_cfg(), 200_000, Box::new(|_, _, _| {}), true);
    let c = sim.conns[0].counters();
    assert_eq!(c.ecn_state, EcnState::Failed);
    assert!(c.packets_lost >= 10, "{c:?}");
}

/// A path that turns CE back into ECT(0) (remarking, RFC 9000 §13.4.2.1): the counts still
/// match the marked packets, so that cannot be seen; but a path that turns CE into Not-ECT
/// leaves the counts short of the marked packets: failed.
#[test]
fn ce_remarked_to_not_ect_fails_validation() {
    let mut n = 0;
    let remark = move |dir: usize, _: u64, p: &mut quicksim_transport::QuicPacket| {
        if dir == 0 && p.ecn == EcnCodepoint::Ect0 {
            n += 1;
            if n == 5 {
                p.ecn = EcnCodepoint::NotEct; // a CE mark erased on the way
            }
        }
    };
    let sim = transfer(ecn_cfg(), ecn_cfg(), 100_000, Box::new(remark), false);
    assert_eq!(sim.conns[0].counters().ecn_state, EcnState::Failed);
}

/// A peer without ECN (it does not read the codepoints, so its ACKs carry no counts).

#[test]
fn a_peer_that_does_not_echo_fails_validation() {
    let sim = transfer(ecn_cfg(), QuicConfig::default(), 100_000, Box::new(|_, _, _| {}), false);
    assert_eq!(sim.conns[0].counters().ecn_state, EcnState::Failed);
}

/// Testing stops after ten packets (Appendix A.4's unknown state): with an initial window of
/// 20 packets, packets 11 to 20 go out unmarked, and marking resumes once the first ACK has
/// validated the counts.
#[test]
fn testing_marks_ten_packets_then_waits_for_validation() {
    let seen: Seen = Rc::default();
    let small = QuicConfig { initial_window: Some(20), ..ecn_cfg() };
    let sim = transfer(small, ecn_cfg(), 200_000, watching(seen.clone(), |_, _, _| {}), false);
    assert_eq!(sim.conns[0].counters().ecn_state, EcnState::Capable);
    let s = seen.borrow();
    let eliciting: Vec<bool> =
        s.0.iter().filter(|(ae, _)| *ae).map(|(_, e)| *e == EcnCodepoint::Ect0).collect();
    let first_gap = eliciting.iter().position(|&m| !m).expect("a gap while unknown");
    assert_eq!(first_gap, 10);
    assert!(eliciting[10..20].iter().all(|&m| !m) && eliciting[20]);
    assert!(*eliciting.last().unwrap(), "marking resumed after validation");
}

/// CE marks on eight consecutive data packets (well within one 20 ms round trip): eight marks
/// reported, one congestion event, the window halved once, nothing lost; a second burst one
/// second later is a second event.
#[test]
fn a_burst_of_ce_marks_is_one_congestion_event_per_round_trip() {
    let mut marked = 0u64;
    let remark = move |dir: usize, _: u64, p: &mut quicksim_transport::QuicPacket| {
        if dir == 0 && p.ecn == EcnCodepoint::Ect0 && p.is_ack_eliciting() {
            marked += 1;
            if (200..208).contains(&marked) || (1200..1208).contains(&marked) {
                p.ecn = EcnCodepoint::Ce;
            }
        }
    };
    let sim = transfer(ecn_cfg(), ecn_cfg(), 3_000_000, Box::new(remark), false);
    let c = sim.conns[0].counters();
    assert_eq!(c.ecn_state, EcnState::Capable);
    assert_eq!(sim.conns[1].counters().ce_received, 16);
    assert_eq!(c.ce_received, 0);
    assert_eq!(c.ecn_congestion_events, 2);
    assert_eq!(c.packets_lost, 0);
    let stats = sim.conns[0].stats();
    assert_eq!(stats.congestion_events, 0, "losses: none");
    // NewReno halved twice: ssthresh is set (it was unset before any congestion event).
    assert!(sim.conns[0].metrics().ssthresh_bytes < u64::MAX);
}
