//! RACK-TLP (`loss_detection = "rack"`, RFC 8985) end to end against hand computations, beside
//! RFC 6675's detection on the same losses: two connections over `net::Net` (one-way delay
//! 10 ms, MTU 1500 with timestamps: SMSS 1448 B, profile "linux" with NewReno). The client's SYN
//! leaves at 0, the SYN-ACK gives the first RTT sample (20 ms), and the first flight (IW10)
//! leaves at 20 ms.

use std::sync::Arc;

use quicksim_engine::{Rate, SimDuration, SimTime};
use quicksim_transport::tcp::{Connection, LossDetection, TcpConfig, TcpProfile, TcpSegment};
use quicksim_transport::Role;

use crate::net::Net;

const SMSS: u64 = 1448;

fn ms(x: u64) -> SimDuration {
    SimDuration::from_millis(x)
}

fn cfg(detection: LossDetection) -> TcpConfig {
    TcpConfig {
        profile: TcpProfile::Linux,
        cc: quicksim_cc::CcSpec::named("newreno").unwrap(),
        loss_detection: Some(detection),
        ..Default::default()
    }
}

/// Sequence number of the client's data segment `i` (0-based).
fn seq(i: u64) -> u64 {
    1 + i * SMSS
}

/// A connection pair whose client's data segments are dropped by `drops`: (segment index, how
/// many of its transmissions, the first ones). `rate`: both directions' serialization rate.
fn net(c: TcpConfig, drops: &'static [(u64, u32)], rate: Option<Rate>) -> Net<Connection> {
    let c = Arc::new(c);
    let a = Connection::new(Role::Client, Arc::clone(&c), SimTime::ZERO, crate::harness::cc_rng(0)).unwrap();
    let b = Connection::new(Role::Server, c, SimTime::ZERO, crate::harness::cc_rng(1)).unwrap();
    let mut seen = vec![0u32; drops.len()];
    let drop = move |dir: usize, _: u64, p: &TcpSegment| {
        let Some(k) = drops.iter().position(|&(i, _)| dir == 0 && p.len > 0 && p.seq == seq(i)) else {
            return false;
        };
        seen[k] += 1;
        seen[k] <= drops[k].1
    };
    Net::with_drop(a, b, ms(10), rate, Box::new(drop))
}

/// Send times of the client's data segments starting at `seq`.
fn sends(n: &Net<Connection>, s: u64) -> Vec<SimTime> {
    n.sent_by(0).filter(|(_, p)| p.len > 0 && p.seq == s).map(|(t, _)| t).collect()
}

#[test]
fn a_tail_loss_is_repaired_by_the_probe_without_a_timeout() {
    // Segments 8 and 9 of ten are lost. The ACKs of 0..7 arrive at 40 ms (quick ACKs), SRTT
    // 20 ms: two segments out, PTO = 2·20 + 2 ms = 42 ms → the probe at 82 ms. No new data: it
    // resends segment 9, which the server SACKs at 92 ms. At 102 ms RACK holds segment 9's
    // probe (sent 82 ms, RTT 20 ms); segment 8, sent at 20 ms, waited 82 ms > 20 ms + reo_wnd
    // (min_RTT/4 = 5 ms): lost, fast recovery resends it at 102 ms, acknowledged at 122 ms.
    let mut n = net(cfg(LossDetection::Rack), &[(8, 1), (9, 1)], None);
    n.write(0, 10 * SMSS);
    let done = n.run_transfer(10 * SMSS, SimTime::from_secs(5)).unwrap();
    let s = n.eps[0].stats();
    assert_eq!((s.rtos, s.loss_probes, s.retransmitted_segments, s.sack_recoveries), (0, 1, 2, 1));
    assert_eq!(sends(&n, seq(9)), [SimTime::from_millis(20), SimTime::from_millis(82)]);
    assert_eq!(sends(&n, seq(8)), [SimTime::from_millis(20), SimTime::from_millis(102)]);
    assert_eq!(done, SimTime::from_millis(112));
    // RFC 6675: one SACKed segment is no loss; the RTO (Linux's: SRTT 20 + 200 ms after the
    // ACK at 40 ms) resends both, at 260 ms.
    let mut n = net(cfg(LossDetection::Rfc6675), &[(8, 1), (9, 1)], None);
    n.write(0, 10 * SMSS);
    n.run_transfer(10 * SMSS, SimTime::from_secs(5)).unwrap();
    let s = n.eps[0].stats();
    assert_eq!((s.rtos, s.loss_probes), (1, 0));
    assert_eq!(sends(&n, seq(8)), [SimTime::from_millis(20), SimTime::from_millis(260)]);
}

#[test]
fn reordering_within_the_window_is_not_a_loss() {
    // 10 Mbit/s: a 1500 B frame every 1.2 ms (+20 B IPv4: 1.216 ms), so the first flight's
    // segments are that far apart. Segment 3 is held 2 ms (jitter on the client's fifth
    // packet: SYN, then data 0..3), so it arrives after segment 4 (1.216 ms later) and before
    // segment 5: the server SACKs 4, the client sees one SACKed segment above a hole. RACK:
    // segment 3 was sent 1.216 ms before segment 4, whose RTT is RACK.rtt; it is lost only
    // 1.216 ms + min_RTT/4 (~5 ms) after that ACK, and its own ACK comes 0.8 ms after: no loss,
    // no retransmission, and RACK has seen reordering.
    let mut n = net(cfg(LossDetection::Rack), &[], Some(Rate::mbps(10)));
    n.jitter = Box::new(|dir, idx| if dir == 0 && idx == 4 { ms(2) } else { SimDuration::ZERO });
    n.write(0, 10 * SMSS);
    n.run_until(SimTime::from_secs(1));
    assert_eq!(n.delivered[1], 10 * SMSS);
    let s = n.eps[0].stats();
    assert_eq!((s.retransmitted_segments, s.sack_recoveries, s.rtos), (0, 0, 0));
    // The reordering happened: the server sent a SACK block for segment 4 alone.
    assert!(n.sent_by(1).any(|(_, p)| p.sack.iter().any(|&b| b == (seq(4), seq(5)))));
    assert!(n.eps[0].sender().rack.as_deref().unwrap().reordering_seen);
    // Held 9 ms it arrives after segments 4..10: with three SACKed above it, reo_wnd is 0
    // (Linux's dupthresh case, reordering not yet seen) and it is resent at once.
    let mut n = net(cfg(LossDetection::Rack), &[], Some(Rate::mbps(10)));
    n.jitter = Box::new(|dir, idx| if dir == 0 && idx == 4 { ms(9) } else { SimDuration::ZERO });
    n.write(0, 10 * SMSS);
    n.run_until(SimTime::from_secs(1));
    assert_eq!(n.eps[0].stats().retransmitted_segments, 1);
}

#[test]
fn a_lost_retransmission_is_found_by_rack_not_by_the_timeout() {
    // Segment 2 is lost twice. At 40 ms the ACK of 0..1 and SACKs of 3..9 (seven segments:
    // reo_wnd 0) mark it lost: fast recovery resends it at 40 ms with new segments after it.
    // That retransmission is lost too; the SACKs of the new segments (sent after it) reach the
    // client at 60 ms, RACK.rtt 20 ms: the retransmission has waited 20 ms ≥ 20 ms + 0, so it is
    // lost again and resent at 60 ms, acknowledged at 80 ms. RFC 6675 marks nothing twice: the
    // RTO resends it.
    let mut n = net(cfg(LossDetection::Rack), &[(2, 2)], None);
    n.write(0, 30 * SMSS);
    n.run_until(SimTime::from_secs(5));
    let s = n.eps[0].stats();
    assert_eq!((s.rtos, s.sack_recoveries), (0, 1));
    let t = sends(&n, seq(2));
    assert_eq!(t, [SimTime::from_millis(20), SimTime::from_millis(40), SimTime::from_millis(60)]);
    assert_eq!(n.delivered[1], 30 * SMSS);

    let mut n = net(cfg(LossDetection::Rfc6675), &[(2, 2)], None);
    n.write(0, 30 * SMSS);
    n.run_until(SimTime::from_secs(5));
    assert_eq!(n.eps[0].stats().rtos, 1);
    assert_eq!(n.delivered[1], 30 * SMSS);
}
