//! Multipath connections (draft-ietf-quic-multipath-21) through the two-endpoint harness: every
//! path shares its one link, so these test the protocol (negotiation, validation, per-path
//! packet number spaces and loss recovery), not path diversity.

use crate::harness::Sim;
use quicksim_engine::{Rate, SimDuration, SimTime};
use quicksim_transport::quic::{Frame, MultipathConfig, MultipathMode, PathConfig};
use quicksim_transport::QuicConfig;

fn mp_cfg(scheduler: &str) -> QuicConfig {
    QuicConfig {
        multipath: Some(MultipathConfig {
            paths: vec![PathConfig { src: None, dst: None, backup: false }],
            scheduler: scheduler.into(),
            mode: MultipathMode::Multipath,
            abandon_after_ptos: 2,
            plugin: None,
        }),
        ..Default::default()
    }
}

fn ms(n: u64) -> SimDuration {
    SimDuration::from_millis(n)
}

#[test]
fn a_peer_without_the_extension_keeps_one_path() {
    let mut sim = Sim::new(mp_cfg("roundrobin"), QuicConfig::default(), ms(10), Some(Rate::mbps(10)));
    sim.write(0, 0, 500_000);
    assert!(sim.run_transfer(500_000, SimTime::from_secs(5)).is_some());
    let p = sim.conns[0].path_metrics();
    assert_eq!(p.len(), 2);
    assert_eq!(p[1].packets_sent, 0, "path 1 never opened: {p:?}");
    // Path 0 carried every 1-RTT packet (the three handshake packets are not a path's).
    assert_eq!(p[0].packets_sent + 3, sim.conns[0].stats().packets_sent);
    assert!(sim.conns[1].path_metrics().is_empty());
}

#[test]
fn both_paths_carry_data_after_one_validation_round_trip() {
    let mut sim = Sim::new(mp_cfg("roundrobin"), mp_cfg("roundrobin"), ms(10), Some(Rate::mbps(10)));
    sim.write(0, 0, 2_000_000);
    assert!(sim.run_transfer(2_000_000, SimTime::from_secs(10)).is_some());
    let p = sim.conns[0].path_metrics();
    // The handshake (1 RTT = 20 ms plus serialization) confirms at the client after the server's
    // HANDSHAKE_DONE; the challenge then takes one round trip more.
    let established = sim.conns[0].stats().established_at.unwrap();
    let v = p[1].validated_at.expect("path 1 validated");
    assert!(
        v >= established + ms(20) && v < established + ms(60),
        "validated at {v}, established {established}"
    );
    // Round robin: both paths carry a good part of the data (path 1 starts later, and when the
    // path whose turn it is has no window the other goes, so not exactly half each).
    let (a, b) = (p[0].stream_bytes_sent as f64, p[1].stream_bytes_sent as f64);
    assert!(b > 0.25 * (a + b) && a > 0.25 * (a + b), "{a} {b}");
    // Each path has its own RTT estimate.
    assert!(p[1].smoothed_rtt >= ms(20) && p[0].smoothed_rtt >= ms(20));
}

#[test]
fn losses_on_one_path_are_recovered_and_resent_wherever() {
    // Every 7th packet of path 1 (client to server) lost: path 1 detects them in its own space.
    let drop: crate::harness::DropFn = Box::new(|dir, _, p| {
        dir == 0 && p.path == 1 && p.pn % 7 == 3 && p.frames.iter().any(|f| matches!(f, Frame::Stream(_)))
    });
    let mut sim =
        Sim::new_with_drop(mp_cfg("roundrobin"), mp_cfg("roundrobin"), ms(10), Some(Rate::mbps(10)), drop);
    sim.write(0, 0, 1_000_000);
    assert!(
        sim.run_transfer(1_000_000, SimTime::from_secs(20)).is_some(),
        "every byte delivered once, in order"
    );
    let s = sim.conns[0].stats();
    assert!(s.packets_lost > 0 && s.retransmitted_bytes > 0, "{s:?}");
}

#[test]
fn a_dead_path_is_abandoned_and_the_transfer_completes_on_the_other() {
    // Path 1 stops delivering anything at 300 ms (both directions).
    let drop: crate::harness::DropFn = Box::new(|_, _, _| false);
    let mut sim = Sim::new_with_drop(mp_cfg("minrtt"), mp_cfg("minrtt"), ms(10), Some(Rate::mbps(10)), drop);
    sim.write(0, 0, 3_000_000);
    sim.run_until(SimTime::from_millis(300));
    let before = sim.conns[0].path_metrics();
    assert!(before[1].stream_bytes_sent > 0, "path 1 used before it fails: {before:?}");
    sim.drop = Box::new(|_, _, p| p.path == 1);
    assert!(sim.run_transfer(3_000_000, SimTime::from_secs(20)).is_some());
    let p = sim.conns[0].path_metrics();
    assert!(p[1].abandoned && !p[1].usable, "{p:?}");
    assert!(p[0].usable);
}

/// What `transfer_across_an_outage_of_path_0` saw.
struct Outage {
    /// The client's paths when the outage ends, and at the end.
    mid: Vec<quicksim_transport::quic::PathMetrics>,
    end: Vec<quicksim_transport::quic::PathMetrics>,
    /// Bytes delivered in order at the server during the outage, from 200 ms after it began.
    delivered_meanwhile: u64,
    done: Option<SimTime>,
}

/// Runs a 10 MB transfer over two paths (minRTT) and cuts path 0 (both directions) during
/// `[300 ms, 300 ms + outage)`.
fn transfer_across_an_outage_of_path_0(outage: SimDuration, abandon_after_ptos: u32) -> Outage {
    let cfg = || {
        let mut c = mp_cfg("minrtt");
        c.multipath.as_mut().unwrap().abandon_after_ptos = abandon_after_ptos;
        // The harness's queues are unbounded: the credit bounds what waits in them (about
        // 80 ms at 10 Mbit/s), so the RTTs and PTOs stay near those of a real path.
        c.initial_max_data = 100_000;
        c.initial_max_stream_data = 100_000;
        c
    };
    let mut sim = Sim::new(cfg(), cfg(), ms(10), Some(Rate::mbps(10)));
    let bytes = 10_000_000;
    sim.write(0, 0, bytes);
    let cut = SimTime::from_millis(300);
    sim.run_until(cut);
    assert!(sim.conns[0].path_metrics()[0].stream_bytes_sent > 0, "path 0 in use before the cut");
    sim.drop = Box::new(|_, _, p| p.path == 0);
    sim.run_until(cut + outage);
    let mid = sim.conns[0].path_metrics();
    let settled = cut + ms(200);
    let delivered_meanwhile = sim.deliveries[1].iter().filter(|d| d.0 >= settled).map(|d| d.1).sum();
    sim.drop = Box::new(|_, _, _| false);
    let done = sim.run_transfer(bytes, SimTime::from_secs(30));
    Outage { mid, end: sim.conns[0].path_metrics(), delivered_meanwhile, done }
}

#[test]
fn a_path_whose_probe_is_acknowledged_is_used_again() {
    // Path 0 loses everything for 100 ms: its tail is lost, its PTO (about 135 ms) fires while
    // path 1 is usable (suspect, its data queued again for path 1), and the probe, sent after
    // the outage, is acknowledged. That ACK shows the path works (RFC 9002 §6.2.1 resets the
    // PTO backoff on it), so the path carries data again. It stayed suspect for good when only
    // a PATH_ACK cleared the flag: path 0's ACKs come in ACK frames.
    let Outage { mid, end, done, .. } = transfer_across_an_outage_of_path_0(ms(100), 2);
    assert!(done.is_some(), "the transfer completes");
    assert_eq!(end[0].counters.timeouts, 1, "one PTO on path 0, its probe answered: {end:?}");
    assert!(!end[0].abandoned && end[0].usable, "path 0 usable again: {end:?}");
    assert_eq!(end[0].pto_count, 0);
    // And used: a good part of what was sent after the outage went on path 0.
    let on0 = end[0].stream_bytes_sent - mid[0].stream_bytes_sent;
    let on1 = end[1].stream_bytes_sent - mid[1].stream_bytes_sent;
    assert!(on0 > (on0 + on1) / 4, "path 0 {on0} B, path 1 {on1} B after the outage");
}

#[test]
fn a_suspect_path_keeps_being_probed_with_backoff_until_it_answers() {
    // Path 0 dead for 2 s with abandon_after_ptos large: its PTO keeps firing, doubling each
    // time (RFC 9002 §6.2.1), so several probes go out while it is down, and the first one
    // after it returns brings it back.
    let Outage { mid, end, done, delivered_meanwhile } =
        transfer_across_an_outage_of_path_0(SimDuration::from_secs(2), 100);
    assert!(done.is_some(), "the transfer completes");
    // The PTO is about 135 ms at the cut: with the backoff it fires about 0.17, 0.44, 0.98 s
    // after the cut (the next at about 2.06 s, after the path is back).
    assert!(mid[0].counters.timeouts >= 3, "path 0 probed while down: {mid:?}");
    assert!(mid[0].pto_count >= 3 && !mid[0].usable, "{mid:?}");
    // Meanwhile path 1 carries the transfer at its rate: 1.8 s of 10 Mbit/s is 2.25 MB on the
    // wire, about 2.17 MB of stream data. A probe that took new data onto the dead path held
    // up in-order delivery (and with it the credit) until the next PTO: 31 kB got through.
    assert!(delivered_meanwhile > 1_900_000, "{delivered_meanwhile} B delivered while path 0 was down");
    assert!(!end[0].abandoned && end[0].usable, "path 0 usable again: {end:?}");
    let on0 = end[0].stream_bytes_sent - mid[0].stream_bytes_sent;
    let on1 = end[1].stream_bytes_sent - mid[1].stream_bytes_sent;
    assert!(on0 > (on0 + on1) / 4, "path 0 {on0} B, path 1 {on1} B after the outage");
}

/// A two-path transfer where `drop` loses validation packets, the server's initial RTT
/// `server_initial_rtt`; the client's and the server's paths at the end.
fn validation_with_losses(
    drop: crate::harness::DropFn,
    server_initial_rtt: SimDuration,
) -> [Vec<quicksim_transport::quic::PathMetrics>; 2] {
    let cfg = || {
        let mut c = mp_cfg("roundrobin");
        // The credit bounds the harness's unbounded queue (see `transfer_across_an_outage_of_path_0`).
        c.initial_max_data = 100_000;
        c.initial_max_stream_data = 100_000;
        c
    };
    let server = QuicConfig { initial_rtt: server_initial_rtt, ..cfg() };
    let mut sim = Sim::new_with_drop(cfg(), server, ms(10), Some(Rate::mbps(10)), drop);
    sim.write(0, 0, 5_000_000);
    assert!(sim.run_transfer(5_000_000, SimTime::from_secs(20)).is_some(), "the transfer completes");
    let p = sim.conns[0].path_metrics();
    assert!(p[1].validated_at.is_some() && p[1].usable, "{p:?}");
    assert!(p[1].stream_bytes_sent > 200_000, "path 1 carried data: {p:?}");
    [p, sim.conns[1].path_metrics()]
}

/// Drops the first packet on path 1 in direction `dir` that has a frame `want`.
fn first_with(dir: usize, want: fn(&Frame) -> bool) -> crate::harness::DropFn {
    let mut done = false;
    Box::new(move |d, _, p| {
        let hit = !done && d == dir && p.path == 1 && p.frames.iter().any(want);
        done |= hit;
        hit
    })
}

#[test]
fn a_lost_path_challenge_is_sent_again_with_a_new_token() {
    // The client's first PATH_CHALLENGE on path 1 is lost: the path's PTO fires with nothing
    // else of it in flight, and its probe is a new challenge (RFC 9000 §9.4, §13.3). It used
    // to be a data or PING probe, whose ACK left the path validating for good.
    let [p, s] = validation_with_losses(
        first_with(0, |f| matches!(f, Frame::PathChallenge(_))),
        QuicConfig::default().initial_rtt,
    );
    assert!(p[1].counters.timeouts >= 1, "found by its PTO: {p:?}");
    assert!(s[1].validated_at.is_some(), "the server validated the client's address too: {s:?}");
}

#[test]
fn a_lost_path_response_is_answered_by_a_new_challenge() {
    // The server's PATH_RESPONSE (with its own challenge and the ACK of the client's) is lost:
    // the client's PTO on path 1 sends a new challenge, and the server answers that one.
    let [_, s] = validation_with_losses(
        first_with(1, |f| matches!(f, Frame::PathResponse(_))),
        QuicConfig::default().initial_rtt,
    );
    assert!(s[1].validated_at.is_some(), "{s:?}");
}

#[test]
fn a_challenge_declared_lost_by_a_later_ack_is_sent_again() {
    // As above, but the server's PTO on path 1 is slow (initial RTT 1 s: about 3 s). The
    // client validates path 1 on its second challenge and sends data on it; the server's ACKs
    // on path 1, acknowledged in turn, declare the server's lost challenge lost (RFC 9002
    // §6.1) with nothing of the path left in flight, so no PTO would come: the loss itself
    // sends a new challenge, and the server validates well before its PTO.
    let [_, s] = validation_with_losses(
        first_with(1, |f| matches!(f, Frame::PathChallenge(_))),
        SimDuration::from_secs(1),
    );
    let v = s[1].validated_at.unwrap_or_else(|| panic!("the server validated path 1: {s:?}"));
    assert!(v < SimTime::from_millis(2000), "validated at {v}: {s:?}");
    assert_eq!(s[1].counters.timeouts, 0, "no PTO on the server's path 1: {s:?}");
}

/// The server's bytes on path 1 and the client's bytes that reached it there, with every
/// packet of the server on path 1 lost and every packet of the client on path 1 after its
/// first (the PATH_CHALLENGE) lost: the server never has the client's new address validated.
/// The server's PTO is short (initial RTT 10 ms) and it gives the path up only after 20 PTOs,
/// so without a limit it would send a new challenge on every PTO until the client abandons
/// the path (2 PTOs of about 1 s and 2 s).
fn unvalidated_server_path() -> (u64, u64, u64) {
    use std::cell::Cell;
    use std::rc::Rc;
    let counts = Rc::new(Cell::new((0u64, 0u64, 0u64)));
    let seen = counts.clone();
    let mut client_on_1 = 0;
    let drop: crate::harness::DropFn = Box::new(move |dir, _, p| {
        if p.path != 1 {
            return false;
        }
        let (mut got, mut sent, mut packets) = seen.get();
        let lost = if dir == 0 {
            client_on_1 += 1;
            if client_on_1 == 1 {
                got += p.size_bytes();
            }
            client_on_1 > 1
        } else {
            sent += p.size_bytes();
            packets += 1;
            true
        };
        seen.set((got, sent, packets));
        lost
    });
    let mut server = mp_cfg("roundrobin");
    server.initial_rtt = ms(10);
    if let Some(m) = server.multipath.as_mut() {
        m.abandon_after_ptos = 20;
    }
    let mut sim = Sim::new_with_drop(mp_cfg("roundrobin"), server, ms(10), Some(Rate::mbps(10)), drop);
    sim.write(0, 0, 2_000_000);
    assert!(
        sim.run_transfer(2_000_000, SimTime::from_secs(20)).is_some(),
        "the transfer completes on path 0"
    );
    assert!(sim.conns[1].path_metrics()[1].validated_at.is_none());
    counts.get()
}

#[test]
fn a_server_sends_at_most_three_times_what_it_received_on_an_unvalidated_path() {
    // RFC 9000 §8, §9.3: the client's PATH_CHALLENGE is padded to 1200 B (§8.2.1), so the
    // server may send 3600 B on path 1 until it has the client's address validated: its
    // PATH_RESPONSE with its own PATH_CHALLENGE (padded to 1200 B) and two more challenges
    // (its PTO probes), then nothing more; its later PTOs find the path blocked. (Without the
    // limit: 6000 B in 5 packets before the client's PATH_ABANDON.)
    let (received, sent, packets) = unvalidated_server_path();
    assert_eq!(received, 1200);
    assert_eq!((sent, packets), (3600, 3), "{sent} B in {packets} packets");
}
