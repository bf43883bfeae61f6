//! TCP's ECN (RFC 3168) over `net::Net`: the ECN-setup handshake, ECT(0) on new data only, the
//! receiver's ECE echo until CWR, and the sender's one reduction per window of data.
//!
//! One-way delay 10 ms, 10 Mbit/s, MTU 1500 with timestamps (SMSS 1448 B), NewReno.

use std::sync::Arc;

use quicksim_engine::{Rate, SimDuration, SimTime};
use quicksim_transport::tcp::segment::{CWR, ECE, SYN};
use quicksim_transport::tcp::{Connection, TcpConfig, TcpSegment};
use quicksim_transport::{EcnCodepoint, EcnState, Endpoint, Role};

use crate::net::{MarkFn, Net};

fn cfg(ecn: bool) -> TcpConfig {
    TcpConfig { ecn, cc: quicksim_cc::CcSpec::named("newreno").unwrap(), ..Default::default() }
}

/// A transfer of `bytes` from the client, with `mark` choosing client segments to mark CE.
fn run(c: TcpConfig, s: TcpConfig, bytes: u64, mark: MarkFn<TcpSegment>) -> Net<Connection> {
    let a = Connection::new(Role::Client, Arc::new(c), SimTime::ZERO, crate::harness::cc_rng(0)).unwrap();
    let b = Connection::new(Role::Server, Arc::new(s), SimTime::ZERO, crate::harness::cc_rng(1)).unwrap();
    let mut n =
        Net::with_drop(a, b, SimDuration::from_millis(10), Some(Rate::mbps(10)), Box::new(|_, _, _| false));
    n.mark_ce = mark;
    n.close_when_done = [true, false];
    n.write(0, bytes);
    n.run_until(SimTime::from_secs(10));
    assert_eq!(n.delivered[1], bytes, "transfer incomplete");
    n
}

fn no_marks() -> MarkFn<TcpSegment> {
    Box::new(|_, _, _| false)
}

/// RFC 3168 §6.1.1: SYN with ECE and CWR, SYN-ACK with ECE alone, both Not-ECT; then ECT(0)
/// on every new data segment and on nothing else.
#[test]
fn ecn_setup_handshake_and_ect_on_new_data_only() {
    let n = run(cfg(true), cfg(true), 200_000, no_marks());
    let syn = n.sent_by(0).next().unwrap().1;
    assert!(syn.flags & SYN != 0 && syn.flags & (ECE | CWR) == ECE | CWR && syn.ecn == EcnCodepoint::NotEct);
    let syn_ack = n.sent_by(1).next().unwrap().1;
    assert!(syn_ack.flags & SYN != 0 && syn_ack.flags & (ECE | CWR) == ECE);
    assert_eq!(syn_ack.ecn, EcnCodepoint::NotEct);
    for (_, p) in n.sent_by(0).skip(1) {
        let want = if p.len > 0 { EcnCodepoint::Ect0 } else { EcnCodepoint::NotEct };
        assert_eq!(p.ecn, want, "{p:?}");
    }
    assert!(n.sent_by(1).all(|(_, p)| p.ecn == EcnCodepoint::NotEct && p.flags & CWR == 0));
    assert_eq!(n.eps[0].counters().ecn_state, EcnState::Capable);
    assert_eq!(n.eps[1].counters().ecn_state, EcnState::Capable);
}

/// A server without ECN answers the ECN-setup SYN without ECE: the client does not use ECN.
#[test]
fn a_peer_without_ecn_leaves_it_off() {
    let n = run(cfg(true), cfg(false), 100_000, no_marks());
    let syn_ack = n.sent_by(1).next().unwrap().1;
    assert_eq!(syn_ack.flags & (ECE | CWR), 0);
    assert!(n.sent_by(0).all(|(_, p)| p.ecn == EcnCodepoint::NotEct));
    assert_eq!(n.eps[0].counters().ecn_state, EcnState::Failed);
    assert_eq!(n.eps[1].counters().ecn_state, EcnState::Off);
    // A client without ECN sends a plain SYN; an ECN server then stays off too.
    let n = run(cfg(false), cfg(true), 100_000, no_marks());
    assert_eq!(n.sent_by(0).next().unwrap().1.flags & (ECE | CWR), 0);
    assert_eq!(n.eps[1].counters().ecn_state, EcnState::Failed);
}

/// Indices (in the client's direction) of data segments with payload, in sending order.
fn data_index(n: &Net<Connection>, pred: impl Fn(&TcpSegment) -> bool) -> Vec<usize> {
    n.sent_by(0)
        .filter(|(_, p)| p.len > 0)
        .enumerate()
        .filter(|(_, (_, p))| pred(p))
        .map(|(i, _)| i)
        .collect()
}

/// One CE mark on data segment 40: the receiver sets ECE on its ACKs from then on, until the
/// segment with CWR arrives; the sender halves its window once and puts CWR on its next new
/// data segment; nothing is retransmitted.
#[test]
fn ce_is_echoed_until_cwr_and_reduces_once() {
    let mut k = 0;
    let mark: MarkFn<TcpSegment> = Box::new(move |dir, _, p: &TcpSegment| {
        if dir != 0 || p.len == 0 {
            return false;
        }
        k += 1;
        k == 41
    });
    let n = run(cfg(true), cfg(true), 300_000, mark);
    let (c, s) = (n.eps[0].stats(), n.eps[1].stats());
    assert_eq!(s.ce_received, 1);
    assert_eq!(c.ecn_reductions, 1);
    assert_eq!(c.retransmitted_segments, 0);
    let cwr = data_index(&n, |p| p.flags & CWR != 0);
    assert_eq!(cwr.len(), 1, "one CWR");
    assert!(cwr[0] > 40);
    // ECE on the receiver's ACKs: a contiguous run, starting with the ACK sent at once for the
    // marked segment and ending with the last ACK sent before the CWR segment arrived (every
    // ECE ACK acknowledges less than the CWR segment, the first ACK covering it has none).
    let acks: Vec<(u64, bool)> = n.sent_by(1).skip(1).map(|(_, p)| (p.ack, p.flags & ECE != 0)).collect();
    let first = acks.iter().position(|a| a.1).expect("an ECE");
    let last = acks.iter().rposition(|a| a.1).unwrap();
    assert!(acks[first..=last].iter().all(|a| a.1), "ECE until CWR, without a gap");
    let cwr = n.sent_by(0).map(|(_, p)| p).find(|p| p.len > 0 && p.flags & CWR != 0).unwrap();
    assert!(acks[last].0 <= cwr.seq && acks[last + 1].0 >= cwr.seq + u64::from(cwr.len));
    assert_eq!(c.ece_received, (last - first + 1) as u64);
    // NewReno halved: ssthresh set.
    assert!(n.eps[0].metrics().ssthresh_bytes < u64::MAX);
}

/// Five consecutive CE marks (one window) are one reduction; a mark two seconds later, after
/// the first window of data is acknowledged, is a second one.
#[test]
fn one_reduction_per_window_of_data() {
    let mut k = 0;
    let mark: MarkFn<TcpSegment> = Box::new(move |dir, _, p: &TcpSegment| {
        if dir != 0 || p.len == 0 {
            return false;
        }
        k += 1;
        (100..105).contains(&k) || k == 1200
    });
    let n = run(cfg(true), cfg(true), 2_500_000, mark);
    let (c, s) = (n.eps[0].stats(), n.eps[1].stats());
    assert_eq!(s.ce_received, 6);
    assert_eq!(c.ecn_reductions, 2);
    assert_eq!(c.retransmitted_segments, 0);
    assert_eq!(n.eps[0].counters().ecn_congestion_events, 2);
    assert_eq!(n.eps[1].counters().ce_received, 6);
}
