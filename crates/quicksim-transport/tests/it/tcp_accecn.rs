//! TCP's Accurate ECN feedback (RFC 9768) over `net::Net`: the handshake's flags, the ACE
//! field's count, the fallback to RFC 3168 or to no ECN, and marks reaching the controller
//! (DCTCP: every one, as a count; NewReno: one reduction per window).
//!
//! One-way delay 10 ms, 10 Mbit/s, MTU 1500 with timestamps (SMSS 1448 B).

use std::sync::Arc;

use quicksim_engine::{Rate, SimDuration, SimTime};
use quicksim_transport::tcp::segment::SYN;
use quicksim_transport::tcp::{Connection, TcpConfig, TcpSegment};
use quicksim_transport::{EcnCodepoint, EcnState, Endpoint, Role};

use crate::net::{MarkFn, Net};

/// `cc` with `ecn` (RFC 3168) and `accurate_ecn` as given.
fn cfg(cc: &str, ecn: bool, accurate_ecn: bool) -> TcpConfig {
    TcpConfig { ecn, accurate_ecn, cc: quicksim_cc::CcSpec::named(cc).unwrap(), ..Default::default() }
}

/// A transfer of `bytes` from the client; `marks` (indices of its data segments, from 1) are
/// marked CE on the way.
fn run(c: TcpConfig, s: TcpConfig, bytes: u64, marks: &'static [u32]) -> Net<Connection> {
    let a = Connection::new(Role::Client, Arc::new(c), SimTime::ZERO, crate::harness::cc_rng(0)).unwrap();
    let b = Connection::new(Role::Server, Arc::new(s), SimTime::ZERO, crate::harness::cc_rng(1)).unwrap();
    let mut n =
        Net::with_drop(a, b, SimDuration::from_millis(10), Some(Rate::mbps(10)), Box::new(|_, _, _| false));
    let mut k = 0;
    let mark: MarkFn<TcpSegment> = Box::new(move |dir, _, p: &TcpSegment| {
        if dir != 0 || p.len == 0 {
            return false;
        }
        k += 1;
        marks.contains(&k)
    });
    n.mark_ce = mark;
    n.close_when_done = [true, false];
    n.write(0, bytes);
    n.run_until(SimTime::from_secs(10));
    assert_eq!(n.delivered[1], bytes, "transfer incomplete");
    n
}

/// RFC 9768 §3.1.1: SYN (AE, CWR, ECE) = (1,1,1); the SYN-ACK echoes the SYN's Not-ECT as
/// (0,1,0); the client's first ACK echoes the SYN-ACK's Not-ECT as ACE 0b010, then r.cep = 5.
#[test]
fn accecn_handshake_and_ace_from_five() {
    let n = run(cfg("newreno", false, true), cfg("newreno", false, true), 100_000, &[]);
    let syn = n.sent_by(0).next().unwrap().1;
    assert!(syn.flags & SYN != 0 && syn.ace() == 0b111 && syn.ecn == EcnCodepoint::NotEct);
    let syn_ack = n.sent_by(1).next().unwrap().1;
    assert!(syn_ack.flags & SYN != 0 && syn_ack.ace() == 0b010);
    let mut client = n.sent_by(0).skip(1).map(|(_, p)| p);
    assert_eq!(client.next().unwrap().ace(), 0b010);
    assert!(client.all(|p| p.ace() == 0b101), "no marks: r.cep stays 5");
    assert!(n.sent_by(1).skip(1).all(|(_, p)| p.ace() == 0b101));
    // New data ECT(0) for a classic controller; both ends capable.
    assert!(n.sent_by(0).filter(|(_, p)| p.len > 0).all(|(_, p)| p.ecn == EcnCodepoint::Ect0));
    assert_eq!(n.eps[0].counters().ecn_state, EcnState::Capable);
    assert_eq!(n.eps[1].counters().ecn_state, EcnState::Capable);
}

/// §3.1.1 Table 3: an AccECN end with an RFC 3168 peer uses RFC 3168 (either side first), and
/// with a peer without ECN none.
#[test]
fn accecn_falls_back_to_classic_or_off() {
    for (c, s) in [
        (cfg("newreno", false, true), cfg("newreno", true, false)),
        (cfg("newreno", true, false), cfg("newreno", false, true)),
    ] {
        let n = run(c, s, 100_000, &[60]);
        // RFC 3168 feedback: one ECE reduction, no ACE counting, no AE bit after the SYNs.
        assert_eq!(n.eps[0].stats().ecn_reductions, 1);
        assert_eq!(n.eps[0].stats().ce_reported, 0);
        assert!(n.sent_by(0).chain(n.sent_by(1)).all(|(_, p)| p.flags & SYN != 0 || !p.ae));
        assert_eq!(n.eps[0].counters().ecn_state, EcnState::Capable);
    }
    let n = run(cfg("newreno", false, true), cfg("newreno", false, false), 100_000, &[]);
    assert_eq!(n.sent_by(1).next().unwrap().1.ace(), 0);
    assert!(n.sent_by(0).all(|(_, p)| p.ecn == EcnCodepoint::NotEct));
    assert_eq!(n.eps[0].counters().ecn_state, EcnState::Failed);
}

/// Marks on 12 data segments in two bursts (more than the ACE field's 8 values): the receiver
/// counts 12, the sender infers 12 through the wrap; DCTCP (which turns AccECN on itself) gets
/// them as counts and never a classic event; NewReno over AccECN reduces once per window.
#[test]
fn marks_cross_the_wrap_and_reach_the_controller() {
    const MARKS: &[u32] = &[100, 101, 102, 103, 104, 105, 106, 107, 108, 300, 301, 302];
    let n = run(cfg("dctcp", false, false), cfg("dctcp", false, false), 2_000_000, MARKS);
    let (c, s) = (n.eps[0].stats(), n.eps[1].stats());
    assert_eq!((s.ce_received, c.ce_reported), (12, 12));
    assert_eq!((c.ece_received, c.ecn_reductions), (0, 0));
    assert_eq!(c.retransmitted_segments, 0);
    // DCTCP reduced: ssthresh is set (its first cut, alpha = 1, halves).
    assert!(n.eps[0].metrics().ssthresh_bytes < u64::MAX);
    let reno = run(cfg("newreno", false, true), cfg("newreno", false, true), 2_000_000, MARKS);
    let c = reno.eps[0].stats();
    assert_eq!((c.ce_reported, c.ecn_reductions), (12, 2));
}

/// Per ACK of the server, whether the data segments it newly acknowledges were all marked or
/// all unmarked (`MARKS` as in `run`, the client sending in order without losses): the ACE
/// increment is checked against the marked count, and the mixed ACKs are counted.
fn mixed_acks(n: &Net<Connection>, marks: &[u32]) -> usize {
    let data: Vec<(u64, u64, bool)> = n
        .sent_by(0)
        .filter(|(_, p)| p.len > 0)
        .enumerate()
        .map(|(i, (_, p))| (p.seq, p.seq + u64::from(p.len), marks.contains(&(i as u32 + 1))))
        .collect();
    let (mut prev_ack, mut prev_ace, mut mixed) = (1, 5u8, 0);
    for (_, a) in n.sent_by(1).skip(1) {
        if a.ack <= prev_ack {
            continue;
        }
        let covered: Vec<bool> =
            data.iter().filter(|s| s.0 >= prev_ack && s.1 <= a.ack).map(|s| s.2).collect();
        let ce = covered.iter().filter(|&&m| m).count() as u8;
        assert_eq!(a.ace(), (prev_ace + ce) % 8, "ACE counts the marks the ACK covers");
        mixed += usize::from(ce > 0 && (ce as usize) < covered.len());
        (prev_ack, prev_ace) = (a.ack, a.ace());
    }
    mixed
}

/// RFC 8257 §3.2's receiver under AccECN (DCTCP): at a change of CE state with a delayed ACK
/// pending, the segments before the change are acknowledged first, so no ACK covers both
/// marked and unmarked segments; RFC 9768's single change-triggered ACK (NewReno's receiver)
/// does mix them. Isolated marks on odd and even segments meet a pending delayed ACK.
#[test]
fn dctcp_receiver_acks_each_ce_state_apart() {
    const MARKS: &[u32] = &[101, 102, 150, 201, 203, 204, 205, 260];
    let n = run(cfg("dctcp", false, false), cfg("dctcp", false, false), 1_000_000, MARKS);
    assert_eq!(mixed_acks(&n, MARKS), 0);
    assert_eq!(n.eps[1].stats().ce_received, MARKS.len() as u64);
    // ns-3's variant: the changing segment waits for the delayed ACK, so fewer ACKs.
    let ns3 = quicksim_cc::algos::dctcp::Config { delay_ce_change_ack: true, ..Default::default() };
    let ns3 = TcpConfig {
        cc: quicksim_cc::CcSpec::Builtin(quicksim_cc::BuiltinConfig::Dctcp(ns3)),
        ..cfg("dctcp", false, false)
    };
    let d = run(ns3.clone(), ns3, 1_000_000, MARKS);
    assert_eq!(mixed_acks(&d, MARKS), 0);
    assert!(d.eps[1].stats().acks_sent < n.eps[1].stats().acks_sent);
    let reno = run(cfg("newreno", false, true), cfg("newreno", false, true), 1_000_000, MARKS);
    assert!(mixed_acks(&reno, MARKS) > 0);
}
