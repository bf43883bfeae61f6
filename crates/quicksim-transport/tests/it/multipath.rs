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
