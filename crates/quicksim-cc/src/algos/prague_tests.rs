//! Prague's unit tests: the scalable reduction, the RTT-independence scaling and pacing,
//! against hand-computed numbers.

use super::*;
use crate::{RttEstimator, WindowRules};
use quicksim_engine::Rng;

const MDS: u64 = 1000;

fn new_cc(config: Config) -> Prague {
    Prague::new(&config, &InitCtx { mds: MDS, window: &WindowRules::RFC9002, rng: &Rng::from_seed(1) })
}

fn t(ms: u64) -> SimTime {
    SimTime::from_millis(ms)
}

fn rtt(ms: u64) -> RttEstimator {
    let mut r = RttEstimator::new(SimDuration::from_millis(ms));
    r.update(SimDuration::from_millis(ms), SimDuration::ZERO, SimDuration::ZERO, true);
    r
}

/// One ACK at `now` of `n` packets sent at `sent`, `ce` of them newly marked, srtt `srtt_ms`.
fn ack(cc: &mut Prague, n: u64, ce: u64, sent: SimTime, now: SimTime, srtt_ms: u64) {
    let r = rtt(srtt_ms);
    let mut cx = CcCtx { now, mds: MDS, rtt: &r, bytes_in_flight: 50 * MDS, window: &WindowRules::RFC9002 };
    let s = AckSummary {
        acked_bytes: n * MDS,
        acked_packets: n,
        largest_acked_sent_time: sent,
        app_limited: false,
        rate: None,
        ce_packets: ce,
    };
    cc.on_ack_end(&mut cx, &s);
}

#[test]
fn marks_cut_by_half_alpha_and_unmarked_packets_grow_one_segment_per_round() {
    let mut cc = new_cc(Config::default());
    assert_eq!((cc.cwnd_bytes(), cc.alpha()), (10_000, 1.0));
    // Slow start: 10 unmarked packets add 10 000 B. No mark seen yet: alpha stays 1.
    ack(&mut cc, 10, 0, t(0), t(10), 10);
    assert_eq!((cc.cwnd_bytes(), cc.alpha()), (20_000, 1.0));
    // 4 packets, 2 marked: cwnd · (1 - 1/2) = 10 000 = ssthresh, then the 2 unmarked ones in
    // congestion avoidance: 2 · 1000 · 1000 / 10 000 = 200 B. The round ends: F = 1/2,
    // upscaled alpha = 16 - 1 + 1/2 = 15.5 (units of 2^20), alpha = 15.5 / 16 = 0.96875.
    ack(&mut cc, 4, 2, t(10), t(20), 10);
    assert_eq!(cc.metrics().ssthresh_bytes, 10_000);
    assert_eq!(cc.cwnd_bytes(), 10_200);
    assert_eq!(cc.alpha(), 0.968_75);
    // A mark on a packet sent before the reduction (20 ms): same CWR period, no cut; the
    // unmarked packet still grows the window, as in Linux's CWR state: 1000 · 1000 / 10 200 =
    // 98.04 B, so 10 298.04 B (reported rounded up).
    ack(&mut cc, 2, 1, t(15), t(22), 10);
    let fp = 10_200 * ONE + 1_000_000 * ONE / 10_200;
    assert_eq!((cc.cwnd_fp, cc.cwnd_bytes()), (fp, 10_299));
    // Sent after it: cut by alpha/2 = 31/64 (Linux's +1/2 rounding): 10 298.04 · 33/64 =
    // 5 309.93 B.
    ack(&mut cc, 1, 1, t(25), t(35), 10);
    assert_eq!(cc.cwnd_fp, fp - ((ONE * 31 / 32 * fp + ONE) >> 21));
    assert_eq!(cc.cwnd_bytes(), 5_310);
}

/// Draft §2.4 (Linux `prague_rate_scaled_ai_ack_increase`): (R / 25 ms)² segments per round
/// below the target, 1 at or above it and above 100 ms.
#[test]
fn rtt_independence_scales_the_increase_by_the_squared_rtt_ratio() {
    let mut cc = new_cc(Config { rtt_transition_rounds: 0, ..Config::default() });
    let ms = SimDuration::from_millis;
    // (5/25)² = 0.04 → round(0.04 · 2^20) = round(41 943.04); (10/25)² = 0.16 → 167 772.16.
    assert_eq!(cc.ai_per_round(ms(5)), 41_943);
    assert_eq!(cc.ai_per_round(ms(10)), 167_772);
    assert_eq!(cc.ai_per_round(ms(25)), ONE);
    assert_eq!(cc.ai_per_round(ms(80)), ONE);
    assert_eq!(cc.ai_per_round(ms(150)), ONE);
    // Off, or before the transition rounds: unscaled.
    let off = new_cc(Config { rtt_independence: false, rtt_transition_rounds: 0, ..Config::default() });
    assert_eq!(off.ai_per_round(ms(5)), ONE);
    let young = new_cc(Config::default());
    assert_eq!(young.ai_per_round(ms(5)), ONE);
    // Per ACK at 10 ms out of slow start: 10 000 B window, 5 packets acked:
    // 5 · 1000 · 1000 · 167 772 / 10 000 units of 2^-20 B = 83 886 000 (80 B).
    cc.ssthresh = 10_000;
    let before = cc.cwnd_fp;
    ack(&mut cc, 5, 0, t(0), t(10), 10);
    assert_eq!(cc.cwnd_fp - before, 83_886_000);
}

/// With RTT independence a 10 ms flow reduces and updates alpha at most once per 25 ms; without
/// it, once per round trip.
#[test]
fn rtt_independence_spaces_reductions_by_the_target() {
    for (indep, cuts) in [(true, 2), (false, 4)] {
        let mut cc = new_cc(Config { rtt_independence: indep, rtt_transition_rounds: 0, ..Config::default() });
        (cc.cwnd_fp, cc.ssthresh) = (100_000 * ONE, 100_000); // out of slow start
        let mut n = 0;
        // Marked ACKs every 10 ms from 30 ms, each for a packet sent after the previous
        // reduction: with the rule, cuts at 30 and 60 ms (25 ms apart at least).
        for k in 1..=4u64 {
            let before = cc.cwnd_bytes();
            ack(&mut cc, 1, 1, t(10 * k + 19), t(10 * k + 20), 10);
            n += u32::from(cc.cwnd_bytes() < before);
        }
        assert_eq!(n, cuts, "rtt_independence = {indep}");
    }
}

#[test]
fn loss_halves_and_stops_growth_until_recovered() {
    let mut cc = new_cc(Config::default());
    let r = rtt(10);
    let mut cx = CcCtx { now: t(50), mds: MDS, rtt: &r, bytes_in_flight: 0, window: &WindowRules::RFC9002 };
    let ev = CongestionEvent { cause: CongestionCause::Loss, sent_time: t(40), lost_bytes: MDS };
    cc.on_congestion_event(&mut cx, &ev);
    assert_eq!((cc.cwnd_bytes(), cc.metrics().ssthresh_bytes), (5_000, 5_000));
    assert!(cc.metrics().in_recovery());
    // Another loss in the same period: no second cut; ACKs of old packets: no growth.
    cc.on_congestion_event(&mut cx, &ev);
    ack(&mut cc, 5, 0, t(45), t(55), 10);
    assert_eq!(cc.cwnd_bytes(), 5_000);
    // A packet sent after the loss: recovery over, growth again (5 · 1000 · 1000 / 5000).
    ack(&mut cc, 5, 0, t(51), t(61), 10);
    assert_eq!(cc.cwnd_bytes(), 6_000);
    assert!(!cc.metrics().in_recovery());
    assert_eq!(cc.ecn_response(), EcnResponse::Scalable { ect1: true });
}

#[test]
fn pacing_is_cwnd_over_srtt_doubled_in_early_slow_start() {
    let mut cc = new_cc(Config::default());
    let r = rtt(10);
    let cx = CcCtx { now: t(10), mds: MDS, rtt: &r, bytes_in_flight: 0, window: &WindowRules::RFC9002 };
    // 10 000 B / 10 ms = 8 Mbit/s, doubled: 16 Mbit/s.
    assert_eq!(cc.pacing_rate(&cx), Some(Rate::bps(16_000_000)));
    cc.ssthresh = 10_000;
    assert_eq!(cc.pacing_rate(&cx), Some(Rate::bps(8_000_000)));
    let off = new_cc(Config { pacing: false, ..Config::default() });
    assert_eq!(off.pacing_rate(&cx), None);
    // No RTT sample yet: no rate.
    let none = RttEstimator::new(SimDuration::from_millis(10));
    let cx = CcCtx { now: t(10), mds: MDS, rtt: &none, bytes_in_flight: 0, window: &WindowRules::RFC9002 };
    assert_eq!(cc.pacing_rate(&cx), None);
}
