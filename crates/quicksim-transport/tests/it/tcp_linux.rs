//! The options of `profile = "linux"` end to end, each against a hand computation: two
//! connections over `net::Net` (one-way delay 10 ms, no rate limit, MTU 1500 with timestamps:
//! SMSS 1448 B). The client's SYN leaves at 0, its first data at 20 ms, which reaches the
//! server at 30 ms.

use std::sync::Arc;

use quicksim_engine::{SimDuration, SimTime};
use quicksim_transport::tcp::{Connection, DelayedAck, RtoEstimator, TcpConfig, TcpProfile, TcpSegment};
use quicksim_transport::Role;

use crate::net::Net;

const SMSS: u64 = 1448;

fn ms(x: u64) -> SimDuration {
    SimDuration::from_millis(x)
}

fn linux() -> TcpConfig {
    TcpConfig {
        profile: TcpProfile::Linux,
        cc: quicksim_cc::CcSpec::named("newreno").unwrap(),
        ..Default::default()
    }
}

fn net(c: TcpConfig) -> Net<Connection> {
    let c = Arc::new(c);
    let a = Connection::new(Role::Client, Arc::clone(&c), SimTime::ZERO, crate::harness::cc_rng(0)).unwrap();
    let b = Connection::new(Role::Server, c, SimTime::ZERO, crate::harness::cc_rng(1)).unwrap();
    Net::with_drop(a, b, ms(10), None, Box::new(|_, _, _| false))
}

/// (time, ACK number) of the server's pure ACKs.
fn acks(n: &Net<Connection>) -> Vec<(SimTime, u64)> {
    n.sent_by(1)
        .filter(|(_, p): &(SimTime, &TcpSegment)| p.len == 0 && !p.is_syn())
        .map(|(t, p)| (t, p.ack))
        .collect()
}

#[test]
fn quick_acks_acknowledge_the_first_flight_segment_by_segment() {
    // Ten segments (IW10) reach the server at 30 ms. Linux: quick-ACK mode, min(16, 65 535 /
    // 2896 = 22) quick-ACKs, so ten ACKs; the fixed policy acknowledges every second: five.
    let mut n = net(linux());
    n.write(0, 10 * SMSS);
    n.run_until(SimTime::from_millis(200));
    let a = acks(&n);
    assert_eq!(a.len(), 10);
    assert!(a.iter().all(|&(t, _)| t == SimTime::from_millis(30)));
    assert_eq!(a.last().unwrap().1, 1 + 10 * SMSS);
    let mut n = net(TcpConfig { delayed_ack: Some(DelayedAck::Fixed), ..linux() });
    n.write(0, 10 * SMSS);
    n.run_until(SimTime::from_millis(200));
    assert_eq!(acks(&n).len(), 5);

    // Twenty segments at once (initial_window 20): the first six raise rcv_ssthresh (65 160 →
    // 80 472 B: room 81 920 − 1448 − 65 160 = 15 312, five steps of 2920 B and 712 B), each
    // granting a quick-ACK that its own ACK uses (`tcp_grow_window`), so the 16 quick-ACKs last
    // until segment 22: all 20 are acknowledged one by one, none by the timer.
    let mut n = net(TcpConfig { initial_window: Some(20), ..linux() });
    n.write(0, 20 * SMSS);
    n.run_until(SimTime::from_millis(200));
    assert_eq!(acks(&n).len(), 20);
    assert_eq!(n.eps[1].stats().delack_timer_fires, 0);
}

#[test]
fn a_lone_segment_after_the_quick_acks_waits_for_the_ato() {
    // 23 segments: 16 quick-ACKs and six granted by the window's growth (above) acknowledge
    // the first 22, the 23rd waits for the timer. ATO: the gaps are 0 ≤ 20 ms, so ATO = ATO/2
    // + 20 ms stays 40 ms; the ACK leaves at 30 + 40 = 70 ms.
    let mut n = net(TcpConfig { initial_window: Some(23), ..linux() });
    n.write(0, 23 * SMSS);
    n.run_until(SimTime::from_millis(200));
    let a = acks(&n);
    assert_eq!(a.len(), 23);
    assert_eq!(*a.last().unwrap(), (SimTime::from_millis(70), 1 + 23 * SMSS));
    assert_eq!(n.eps[1].stats().delack_timer_fires, 1);
}

#[test]
fn linux_rto_is_srtt_plus_the_floor() {
    // RTT 20 ms from the handshake: Linux RTO = SRTT + max(4·mdev, 200) = 20 + 200 = 220 ms,
    // and it stays SRTT + 200 ms; RFC 6298 (the default) gives max(200, 20 + 40) = 200 ms.
    // (One sample of the transfer includes a delayed ACK's wait: SRTT ends at 20.23 ms.)
    let mut n = net(linux());
    n.write(0, 100 * SMSS);
    n.run_until(SimTime::from_millis(500));
    let srtt = n.eps[0].metrics().smoothed_rtt;
    assert!(srtt >= ms(20) && srtt < ms(21), "{srtt:?}");
    assert_eq!(n.eps[0].rto_value(), srtt + ms(200));
    let mut n = net(TcpConfig { rto_estimator: Some(RtoEstimator::Rfc6298), ..linux() });
    n.write(0, 100 * SMSS);
    n.run_until(SimTime::from_millis(500));
    assert_eq!(n.eps[0].rto_value(), ms(200));
}

#[test]
fn linux_hystart_leaves_slow_start_on_the_delay_increase() {
    // 10 Mbit/s each way, 20 ms base RTT, an unbounded queue (no loss ever). delay_min is the
    // first data ACK's RTT, 21.24 ms (20 ms + serializations), so an ACK train must last more
    // than (21.24 + hystart_ack_delay ≤ 1) / 2 ≤ 11.12 ms (unpaced). The receiver
    // acknowledges segments 1-22 one by one (16 quick-ACKs and six from the window's growth),
    // then every second one until autotuning raises its window clamp one receiver RTT after
    // the handshake, then every segment again, 1.2 ms apart (a segment's serialization).
    // HyStart's rounds start at the first data ACK (41.3 ms; Linux 6.14+ counts rounds below
    // 16 segments and only tests from 16), then with the ACK of the first segment sent at or
    // after the ACK that began the last (`end_seq = snd_nxt` before that ACK's sends,
    // `hystart_update`'s `after(snd_una, end_seq)`): segment 11, which the first data ACK
    // released. Round 2's ACKs of 11-22 come one by one, 1.2 ms apart: at segment 21, 12.0 ms
    // after the round began, the train ends slow start with cwnd 10 + 21 = 31: ssthresh =
    // 31 · 1448 = 44 888 B. (The unpaced kernel at 10 Mbit/s, 20 ms, a quick-mode capture:
    // `ss` shows ssthresh 29 with no loss; Linux's rounds replayed on it find the train at 28-30.)
    // Without HyStart slow start never ends here.
    let run = |c: TcpConfig| {
        let c = Arc::new(c);
        let a =
            Connection::new(Role::Client, Arc::clone(&c), SimTime::ZERO, crate::harness::cc_rng(0)).unwrap();
        let b = Connection::new(Role::Server, c, SimTime::ZERO, crate::harness::cc_rng(1)).unwrap();
        let rate = Some(quicksim_engine::Rate::bps(10_000_000));
        let mut n = Net::with_drop(a, b, ms(10), rate, Box::new(|_, _, _| false));
        n.write(0, 2000 * SMSS);
        n.run_until(SimTime::from_millis(400));
        n.eps[0].metrics().ssthresh_bytes
    };
    assert_eq!(run(TcpConfig::linux()), 31 * SMSS);
    assert_eq!(run(TcpConfig::default()), u64::MAX);
}
