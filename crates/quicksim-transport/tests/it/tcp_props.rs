//! Property test of the TCP model: whatever the loss, reordering and duplication, and whatever
//! the options (SACK, PRR, timestamps, delayed ACKs, TLS, controller, pacing), every
//! application byte is delivered exactly once and in order (the harness checks each delivery),
//! the transfer finishes in bounded simulated time, and both ends close cleanly.

use std::sync::Arc;

use proptest::prelude::*;
use quicksim_engine::{Rate, Rng, SimDuration, SimTime};
use quicksim_transport::tcp::{Connection, LossDetection, TcpConfig, TlsVersion};
use quicksim_transport::Role;

use crate::net::Net;

#[derive(Clone, Debug)]
struct Case {
    seed: u64,
    loss_permille: u64,
    reorder_permille: u64,
    dup_permille: u64,
    one_way_ms: u64,
    rate_mbps: Option<u64>,
    sack: bool,
    prr: bool,
    timestamps: bool,
    ack_every: u64,
    tls: TlsVersion,
    cc: &'static str,
    pacing: bool,
    bytes: u64,
}

fn case() -> impl Strategy<Value = Case> {
    (
        (
            any::<u64>(),
            0u64..120,
            0u64..200,
            0u64..50,
            1u64..40,
            prop_oneof![Just(None), (1u64..100).prop_map(Some)],
        ),
        (any::<bool>(), any::<bool>(), any::<bool>(), 1u64..4),
        (
            prop_oneof![Just(TlsVersion::None), Just(TlsVersion::Tls12), Just(TlsVersion::Tls13)],
            prop_oneof![Just("newreno"), Just("cubic")],
            any::<bool>(),
            1u64..400_000,
        ),
    )
        .prop_map(
            |((seed, loss, reorder, dup, ow, rate), (sack, prr, ts, ack_every), (tls, cc, pacing, bytes))| {
                Case {
                    seed,
                    loss_permille: loss,
                    reorder_permille: reorder,
                    dup_permille: dup,
                    one_way_ms: ow,
                    rate_mbps: rate,
                    sack,
                    prr,
                    timestamps: ts,
                    ack_every,
                    tls,
                    cc,
                    pacing,
                    bytes,
                }
            },
        )
}

fn run(c: &Case) {
    run_with(c, None);
}

/// `run` with the loss detection given (None: the default, RFC 6675).
fn run_with(c: &Case, loss_detection: Option<LossDetection>) {
    let cfg = Arc::new(TcpConfig {
        loss_detection,
        sack: c.sack,
        prr: c.prr,
        timestamps: c.timestamps,
        ack_every: c.ack_every,
        tls: c.tls,
        cc: quicksim_cc::CcSpec::named(c.cc).expect("registered"),
        pacing: c.pacing,
        // Heavy loss can take many backed-off timeouts; the property is about delivery.
        max_retries: 100,
        syn_retries: 100,
        ..Default::default()
    });
    let a = Connection::new(Role::Client, cfg.clone(), SimTime::ZERO, crate::harness::cc_rng(0)).unwrap();
    let b = Connection::new(Role::Server, cfg, SimTime::ZERO, crate::harness::cc_rng(1)).unwrap();
    let mut drop_rng = Rng::from_seed(c.seed);
    let mut jit_rng = Rng::from_seed(c.seed ^ 0x5eed);
    let mut dup_rng = Rng::from_seed(c.seed ^ 0xd0d0);
    let (loss, reorder, dup) = (c.loss_permille, c.reorder_permille, c.dup_permille);
    let one_way = SimDuration::from_millis(c.one_way_ms);
    let mut n = Net::with_drop(
        a,
        b,
        one_way,
        c.rate_mbps.map(Rate::mbps),
        Box::new(move |_, _, _| drop_rng.range_u64(0, 1000) < loss),
    );
    let max_extra_us = 2 * c.one_way_ms * 1000 + 1;
    n.jitter = Box::new(move |_, _| {
        if jit_rng.range_u64(0, 1000) < reorder {
            SimDuration::from_micros(jit_rng.range_u64(0, max_extra_us))
        } else {
            SimDuration::ZERO
        }
    });
    n.dup = Box::new(move |_, _| dup_rng.range_u64(0, 1000) < dup);
    n.close_when_done[0] = true;
    n.write(0, c.bytes);
    let limit = SimTime::from_secs(3600);
    let done = n.run_transfer(c.bytes, limit);
    assert!(
        done.is_some(),
        "stalled: delivered {} of {} by {}; {:?} / {:?}",
        n.delivered[1],
        c.bytes,
        n.now,
        n.eps[0].stats(),
        n.eps[0].sender()
    );
    assert_eq!(n.delivered[1], c.bytes);
    assert_eq!(n.eps[1].stats().app_bytes_delivered, c.bytes);
    // Both FINs exchanged: the client closed after writing, the server followed.
    while n.now < limit && !(n.closed[0].is_some() && n.closed[1].is_some()) {
        let next = n.now + SimDuration::from_secs(1);
        n.run_until(next);
    }
    assert_eq!(n.closed, [Some(None), Some(None)], "{:?}", n.eps[0].stats());
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(128),
        ..ProptestConfig::default()
    })]
    #[test]
    fn tcp_every_byte_once_in_order_without_stall(c in case()) {
        run(&c);
    }

    /// The same with RACK-TLP (`rack.rs`): its marks, timers and probes under loss,
    /// reordering (up to two one-way delays: past its window) and duplication.
    #[test]
    fn tcp_rack_every_byte_once_in_order_without_stall(c in case()) {
        run_with(&c, Some(LossDetection::Rack));
    }
}
