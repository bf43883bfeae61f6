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

    // Twenty segments at once (initial_window 20): the first 16 are quick-ACKed, then every
    // second one (4 → 2 ACKs): 18 ACKs, none by the timer.
    let mut n = net(TcpConfig { initial_window: Some(20), ..linux() });
    n.write(0, 20 * SMSS);
    n.run_until(SimTime::from_millis(200));
    assert_eq!(acks(&n).len(), 18);
    assert_eq!(n.eps[1].stats().delack_timer_fires, 0);
}

#[test]
fn a_lone_segment_after_the_quick_acks_waits_for_the_ato() {
    // 17 segments: 16 quick-ACKs, the 17th waits for the timer. ATO: the gaps are 0 ≤ 20 ms,
    // so ATO = ATO/2 + 20 ms stays 40 ms; the ACK leaves at 30 + 40 = 70 ms.
    let mut n = net(TcpConfig { initial_window: Some(17), ..linux() });
    n.write(0, 17 * SMSS);
    n.run_until(SimTime::from_millis(200));
    let a = acks(&n);
    assert_eq!(a.len(), 17);
    assert_eq!(*a.last().unwrap(), (SimTime::from_millis(70), 1 + 17 * SMSS));
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
    // first data ACK's RTT, 21.24 ms (20 ms + serializations), so the threshold is 21.24 +
    // clamp(21.24/8, 4, 16) = 25.24 ms. HyStart's rounds start at the first data ACK (41.3 ms,
    // 11 segments; Linux 6.14+ counts rounds below 16 segments and only tests from 16), then
    // with the ACK of a segment sent after the ACK that began the last: at 23 segments
    // (65.0 ms) and 48 (95.0 ms). Slow start's bursts let the queue drain between rounds until
    // the window passes the BDP: round 2's smallest RTT is 22.4 ms, round 3's 28.8 ms, and its
    // ninth ACK (8 samples, then the test) ends slow start at 48 + 16 = 64 segments: ssthresh
    // = 64 · 1448 = 92 672 B. (With the first round at 16 segments, as Linux counted before the
    // 6.14 fix, it was 86.) Without HyStart slow start never ends here.
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
    assert_eq!(run(TcpConfig::linux()), 64 * SMSS);
    assert_eq!(run(TcpConfig::default()), u64::MAX);
}
