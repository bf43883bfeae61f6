//! Property test: whatever the drop pattern, reordering, windows and ack policy, every stream
//! byte is delivered exactly once and in order (checked by the harness on every delivery), and
//! the transfer finishes within a bounded simulated time.

use proptest::prelude::*;
use quicksim_engine::{Rate, Rng, SimDuration, SimTime};
use quicksim_transport::quic::CcSpec;
use quicksim_transport::QuicConfig;

use crate::harness::{no_handshake, Sim};

#[derive(Clone, Debug)]
struct Case {
    seed: u64,
    handshake: bool,
    loss_permille: u64,
    reorder_permille: u64,
    one_way_ms: u64,
    rate_mbps: Option<u64>,
    max_stream_data: u64,
    max_data: u64,
    ack_ratio: u64,
    ibit: bool,
    bundle_ack: bool,
    partial_window: bool,
    pacing: bool,
    cc: &'static str,
    streams: Vec<u64>,
}

fn case() -> impl Strategy<Value = Case> {
    (
        (
            any::<u64>(),
            any::<bool>(),
            0u64..150,
            0u64..200,
            1u64..40,
            prop_oneof![Just(None), (1u64..200).prop_map(Some)],
        ),
        (
            3_000u64..300_000,
            5_000u64..1_000_000,
            1u64..12,
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
        ),
        (
            prop_oneof![Just("newreno"), Just("none"), Just("cubic")],
            proptest::collection::vec(1_000u64..600_000, 1..4),
        ),
    )
        .prop_map(
            |(
                (seed, handshake, loss, reorder, ow, rate),
                (msd, md, ratio, ibit, bundle, partial, pacing),
                (cc, streams),
            )| Case {
                seed,
                handshake,
                loss_permille: loss,
                reorder_permille: reorder,
                one_way_ms: ow,
                rate_mbps: rate,
                max_stream_data: msd,
                max_data: md,
                ack_ratio: ratio,
                ibit,
                bundle_ack: bundle,
                partial_window: partial,
                pacing,
                cc,
                streams,
            },
        )
}

fn run(c: &Case) {
    let base = QuicConfig {
        handshake: c.handshake,
        initial_max_stream_data: c.max_stream_data,
        initial_max_data: c.max_data,
        ack_ratio: c.ack_ratio,
        ibit: c.ibit,
        bundle_ack: c.bundle_ack,
        partial_window: c.partial_window,
        pacing: c.pacing,
        cc: CcSpec::named(c.cc).unwrap(),
        max_consecutive_ptos: None,
        ..Default::default()
    };
    let (cc, sc) = if c.handshake {
        (base.clone(), base.clone())
    } else {
        (no_handshake(base.clone(), &base), no_handshake(base.clone(), &base))
    };
    let mut drop_rng = Rng::from_seed(c.seed);
    let mut jit_rng = Rng::from_seed(c.seed ^ 0x5eed);
    let loss = c.loss_permille;
    let reorder = c.reorder_permille;
    let one_way = SimDuration::from_millis(c.one_way_ms);
    let mut sim = Sim::new_with_drop(
        cc,
        sc,
        one_way,
        c.rate_mbps.map(Rate::mbps),
        Box::new(move |_, _, _| drop_rng.range_u64(0, 1000) < loss),
    );
    sim.jitter = Box::new(move |_, _| {
        if jit_rng.range_u64(0, 1000) < reorder {
            SimDuration::from_micros(jit_rng.range_u64(0, 2 * c_ms(one_way) * 1000 + 1))
        } else {
            SimDuration::ZERO
        }
    });
    let total: u64 = c.streams.iter().sum();
    for (i, &n) in c.streams.iter().enumerate() {
        sim.write(0, 4 * i as u64, n);
    }
    let limit = SimTime::from_secs(600);
    let done = sim.run_transfer(total, limit);
    assert!(
        done.is_some(),
        "stalled: delivered {} of {total} by {}; {:?}",
        sim.total_delivered(1),
        sim.now,
        sim.conns[0].stats()
    );
    for (i, &n) in c.streams.iter().enumerate() {
        assert_eq!(sim.delivered[1][&(4 * i as u64)], n);
    }
    assert_eq!(sim.conns[1].stats().stream_bytes_delivered, total);
    if std::env::var_os("QUIC_PROPS_VERBOSE").is_some() {
        let st = sim.conns[0].stats();
        println!(
            "{total} B in {} (loss {}‰, reorder {}‰, cc {}): sent {} lost {} pto {}",
            done.unwrap(),
            c.loss_permille,
            c.reorder_permille,
            c.cc,
            st.packets_sent,
            st.packets_lost,
            st.pto_count_total
        );
    }
}

fn c_ms(d: SimDuration) -> u64 {
    d.ps() / 1_000_000_000
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(128),
        ..ProptestConfig::default()
    })]
    #[test]
    fn every_byte_once_in_order_without_stall(c in case()) {
        run(&c);
    }
}
