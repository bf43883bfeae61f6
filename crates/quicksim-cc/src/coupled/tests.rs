//! The coupling's bookkeeping with hand-computed numbers: which paths enter the sums (active,
//! with an RTT sample), the coupled increase and BALIA's decrease applied to real windows,
//! OLIA's inter-loss counters and negative increase, and the minimum-window floor.

use super::{apply_increase, Coupling, PathIdx, PathState, Rule};
use crate::algos::newreno::NewReno;
use crate::{
    AckEvent, Algorithm, CcCtx, CcSpec, CongestionCause, CongestionEvent, InitCtx, RttEstimator, WindowRules,
};
use quicksim_engine::{Rng, SimDuration, SimTime};

const MDS: u64 = 1000;
const W: WindowRules = WindowRules::RFC9002;

fn t(ms: u64) -> SimTime {
    SimTime::from_millis(ms)
}

fn rtt(ms: u64) -> RttEstimator {
    let mut r = RttEstimator::new(SimDuration::from_millis(333));
    r.update(SimDuration::from_millis(ms), SimDuration::ZERO, SimDuration::ZERO, true);
    r
}

fn coupling(rule: Rule, paths: usize) -> Coupling {
    let rng = Rng::from_seed(1);
    let init = InitCtx { mds: MDS, window: &W, rng: &rng };
    let mut c = Coupling::with_rule(rule);
    for _ in 0..paths {
        c.add_path(&CcSpec::default(), &init);
    }
    c
}

/// `n` ACKs of one 1000 B packet each on `p` (RTT `rtt_ms`), sent at `sent`, acked at `now`.
fn ack(c: &mut Coupling, p: u32, rtt_ms: u64, n: u64, sent: SimTime, now: SimTime) {
    let r = rtt(rtt_ms);
    let mut cx = CcCtx { now, mds: MDS, rtt: &r, bytes_in_flight: 50_000, window: &W };
    for _ in 0..n {
        c.on_ack(PathIdx(p), &mut cx, &AckEvent { sent_time: sent, bytes: MDS, app_limited: false });
    }
}

fn lose(c: &mut Coupling, p: u32, rtt_ms: u64, sent: SimTime, now: SimTime) {
    let r = rtt(rtt_ms);
    let mut cx = CcCtx { now, mds: MDS, rtt: &r, bytes_in_flight: 50_000, window: &W };
    let ev = CongestionEvent { cause: CongestionCause::Loss, sent_time: sent, lost_bytes: MDS };
    c.on_congestion_event(PathIdx(p), &mut cx, &ev);
}

/// Path 0 at 5000 B (10 ms) and path 1 at 10 000 B (40 ms), both in congestion avoidance with
/// their recovery periods started at 100 ms: the initial 10 000 B halved, and 10 000 B + 10
/// slow-start packets halved.
fn two_paths(rule: Rule) -> Coupling {
    let mut c = coupling(rule, 2);
    lose(&mut c, 0, 10, t(50), t(100));
    ack(&mut c, 1, 40, 10, t(0), t(40));
    lose(&mut c, 1, 40, t(50), t(100));
    c
}

#[test]
fn lia_increase_on_real_windows() {
    let mut c = two_paths(Rule::Lia { alpha_scale: 512 });
    assert_eq!((c.cwnd_bytes(PathIdx(0)), c.cwnd_bytes(PathIdx(1))), (5_000, 10_000));
    // cwnd/rtt² = 50 and 6.25 (path 0 max); s = 5000 + 10000·10/40 = 7500; alpha·512 =
    // ⌊512·15000·5000/7500²⌋ = ⌊682.67⌋ = 682. An ACK of 1000 B on path 1: coupled
    // ⌊10^6·10000·682/(512·15000)⌋ = 888 020 (88.8 B) < TCP's 10^6 (100 B): +88 B, carry 8020.
    ack(&mut c, 1, 40, 1, t(150), t(200));
    assert_eq!(c.cwnd_bytes(PathIdx(1)), 10_088);
    // A third path that never had an RTT sample stays out of the sums: the next ACK adds
    // ⌊10^6·10088·alpha/(512·15088)⌋ with alpha = ⌊512·15088·5000/(5000 + 2522)²⌋ = 682 ->
    // 890 610, plus the carry 8020 = 898 630: +89 B (of 10 088).
    let rng = Rng::from_seed(1);
    c.add_path(&CcSpec::default(), &InitCtx { mds: MDS, window: &W, rng: &rng });
    ack(&mut c, 1, 40, 1, t(150), t(200));
    assert_eq!(c.cwnd_bytes(PathIdx(1)), 10_177);
    // Path 0 idle: path 1 is alone, and its increase is TCP's, 10^6/10177 = 98 B.
    c.set_state(PathIdx(0), PathState::Idle);
    ack(&mut c, 1, 40, 1, t(150), t(200));
    assert!((10_177 + 98..=10_177 + 99).contains(&c.cwnd_bytes(PathIdx(1))), "{}", c.cwnd_bytes(PathIdx(1)));
}

#[test]
fn uncoupled_paths_are_independent_newreno() {
    let spec = CcSpec::Builtin(crate::BuiltinConfig::NewReno(super::RENO));
    let rng = Rng::from_seed(1);
    let init = InitCtx { mds: MDS, window: &W, rng: &rng };
    let mut c = Coupling::new(&spec);
    assert_eq!(c.rule(), Rule::Uncoupled);
    c.add_path(&spec, &init);
    c.add_path(&spec, &init);
    lose(&mut c, 0, 10, t(50), t(100));
    ack(&mut c, 1, 40, 10, t(0), t(40));
    lose(&mut c, 1, 40, t(50), t(100));
    // TCP's own increase: 10^6/10000 = 100 B, whatever path 0 does.
    ack(&mut c, 1, 40, 1, t(150), t(200));
    assert_eq!(c.cwnd_bytes(PathIdx(1)), 10_100);
    assert_eq!(Coupling::new(&CcSpec::named("olia").unwrap()).rule(), Rule::Olia);
    assert_eq!(Coupling::new(&CcSpec::named("lia").unwrap()).rule(), Rule::Lia { alpha_scale: 512 });
}

#[test]
fn balia_decrease_on_real_windows() {
    let mut c = coupling(Rule::Balia, 2);
    // Path 0's first loss has no other path with a sample: a = 1, it halves 10 000 to 5000.
    lose(&mut c, 0, 10, t(50), t(100));
    assert_eq!(c.cwnd_bytes(PathIdx(0)), 5_000);
    // Path 1 at 20 000 B and 40 ms: x = 500 B/ms against path 0's 500 B/ms: a = 1, halves.
    ack(&mut c, 1, 40, 10, t(0), t(40));
    lose(&mut c, 1, 40, t(50), t(100));
    assert_eq!(c.cwnd_bytes(PathIdx(1)), 10_000);
    assert_eq!(c.metrics(PathIdx(1)).ssthresh_bytes, 10_000);
    // Path 1 now at 10 000 B / 40 ms = 250 B/ms, path 0 at 500: a = 2, capped at 1.5: a loss
    // takes 10000/2·1.5 = 7500 off, leaving 2500.
    lose(&mut c, 1, 40, t(150), t(200));
    assert_eq!((c.cwnd_bytes(PathIdx(1)), c.metrics(PathIdx(1)).ssthresh_bytes), (2_500, 2_500));
}

#[test]
fn olia_counts_interloss_bytes_and_shrinks_the_largest_window() {
    let mut c = two_paths(Rule::Olia);
    // Path 1: 10 slow-start packets before its loss: ℓ = 10 000. Path 0 lost before any ACK
    // (ℓ2 = 0: nothing to shift). 20 ACKs of packets sent before path 0's recovery started:
    // no growth, but ℓ0 = 20 000 B.
    ack(&mut c, 0, 40, 20, t(50), t(120));
    assert_eq!(c.cwnd_bytes(PathIdx(0)), 5_000);
    // Same RTT (40 ms) on both from now on: B = {0} (ℓ 20 000 > 10 000), M = {1} (10 000 B):
    // α_0 = +1/2, α_1 = -1/2. Path 1's increase: 10^6·(10000²/15000² - 1/2) = 444 444 - 500 000
    // = -55 556 in 1/10000 B: the window shrinks by 6 B and carries 4444.
    ack(&mut c, 1, 40, 1, t(150), t(200));
    assert_eq!(c.cwnd_bytes(PathIdx(1)), 9_994);
    // Path 0: 10^6·(5000²/14994² + 1/2) = 111 200 + 500 000 = 611 200 in 1/5000 B: +122 B.
    ack(&mut c, 0, 40, 1, t(150), t(200));
    assert_eq!(c.cwnd_bytes(PathIdx(0)), 5_122);
}

#[test]
fn a_negative_increase_stops_at_the_minimum_window() {
    let rng = Rng::from_seed(1);
    let mut reno = NewReno::new(&super::RENO, &InitCtx { mds: MDS, window: &W, rng: &rng });
    reno.cwnd = 2_100;
    // -500 000 / 2100 = -238.1, rounded down to -239: 1861 B would be below 2 MDS = 2000 B.
    apply_increase(&mut reno, -500_000, W.minimum_window(MDS));
    assert_eq!((reno.cwnd, reno.carry), (2_000, 0));
    // Already below the minimum (after a collapse): a decrease leaves it where it is.
    reno.cwnd = 1_000;
    apply_increase(&mut reno, -10_000, W.minimum_window(MDS));
    assert_eq!(reno.cwnd, 1_000);
    // Positive: carry kept as NewReno does (RFC 9002 B.5).
    reno.cwnd = 10_000;
    reno.carry = 9_000;
    apply_increase(&mut reno, 1_000_000 + 1_500, W.minimum_window(MDS));
    assert_eq!((reno.cwnd, reno.carry), (10_101, 500));
}

#[test]
fn a_coupling_parks_and_resumes() {
    let mut c = two_paths(Rule::Olia);
    ack(&mut c, 0, 40, 20, t(50), t(120));
    let bytes = postcard::to_allocvec(&c).unwrap();
    let mut back: Coupling = postcard::from_bytes(&bytes).unwrap();
    assert!(c.can_park());
    ack(&mut c, 1, 40, 3, t(150), t(200));
    ack(&mut back, 1, 40, 3, t(150), t(200));
    assert_eq!(c.cwnd_bytes(PathIdx(1)), back.cwnd_bytes(PathIdx(1)));
    assert_eq!(postcard::to_allocvec(&c).unwrap(), postcard::to_allocvec(&back).unwrap());
}

#[test]
fn min_window_segments_replaces_the_transports_floor() {
    // Path 0 at 2500 B (2.5 segments of 1000 B): its first loss halves 10 000 to 5000, the
    // second to 2500; both paths at 40 ms.
    let setup = |min: Option<u64>| {
        let mut c = coupling(Rule::Olia, 2).with_min_window(min);
        lose(&mut c, 0, 40, t(50), t(100));
        lose(&mut c, 0, 40, t(150), t(200));
        c
    };
    let (mut quic, mut one) = (setup(None), setup(Some(1)));
    assert_eq!((quic.cwnd_bytes(PathIdx(0)), one.cwnd_bytes(PathIdx(0))), (2_500, 2_500));
    // A third loss: ⌊2500/2⌋ = 1250 B. RFC 9002's floor (2 segments) makes it 2000 B; with
    // `min_window_segments = 1` the floor is 1000 B and the window is 1250 B, ssthresh 1250
    // either way.
    lose(&mut quic, 0, 40, t(250), t(300));
    lose(&mut one, 0, 40, t(250), t(300));
    assert_eq!(quic.cwnd_bytes(PathIdx(0)), 2_000);
    assert_eq!(one.cwnd_bytes(PathIdx(0)), 1_250);
    assert_eq!(one.metrics(PathIdx(0)).ssthresh_bytes, 1_250);
    // OLIA's negative increase stops at the setting's floor. Path 0 down to 625 B, floored at
    // 1000; path 1 down to 1250 B (the largest window: M); then 20 ACKs on path 0 of packets
    // sent before its recovery: no growth, ℓ0 = 20 000 B against ℓ1 = 0 (B = {0}), so α_1 =
    // -1/2. Both at 40 ms.
    let mut c = coupling(Rule::Olia, 2).with_min_window(Some(1));
    for k in 0..4 {
        lose(&mut c, 0, 40, t(100 * k + 50), t(100 * k + 100));
    }
    for k in 0..3 {
        lose(&mut c, 1, 40, t(100 * k + 50), t(100 * k + 100));
    }
    ack(&mut c, 0, 40, 20, t(350), t(400));
    assert_eq!((c.cwnd_bytes(PathIdx(0)), c.cwnd_bytes(PathIdx(1))), (1_000, 1_250));
    // One ACK of 3000 B on path 1 (3 packets; acked·MSS = 3·10^6): 3·10^6·(1250²/2250² - 1/2)
    // = 925 925 - 1 500 000 = -574 075 in 1/1250 B: ⌊-459.3⌋ = -460 B, 790 B, below 1 segment:
    // 1000 B, carry 0. (The transport's floor would keep it at 1250, never raising a window.)
    let r = rtt(40);
    let mut cx = CcCtx { now: t(500), mds: MDS, rtt: &r, bytes_in_flight: 50_000, window: &W };
    c.on_ack(PathIdx(1), &mut cx, &AckEvent { sent_time: t(450), bytes: 3 * MDS, app_limited: false });
    assert_eq!(c.cwnd_bytes(PathIdx(1)), 1_000);
    // The floor of a collapse is the setting too (RFC 9002's persistent congestion: 2000 B).
    let mut cx = CcCtx { now: t(3_000), mds: MDS, rtt: &r, bytes_in_flight: 50_000, window: &W };
    let pc = CongestionEvent {
        cause: CongestionCause::PersistentCongestion,
        sent_time: t(2_500),
        lost_bytes: MDS,
    };
    ack(&mut c, 1, 40, 30, t(450), t(500));
    assert!(c.cwnd_bytes(PathIdx(1)) > 1_000);
    c.on_congestion_event(PathIdx(1), &mut cx, &pc);
    assert_eq!(c.cwnd_bytes(PathIdx(1)), 1_000);
    let mut q = coupling(Rule::Olia, 1);
    q.on_congestion_event(PathIdx(0), &mut cx, &pc);
    assert_eq!(q.cwnd_bytes(PathIdx(0)), 2_000);
}

#[test]
fn min_window_segments_comes_from_the_algorithms_settings() {
    use crate::algos::BuiltinConfig;
    for algo in ["lia", "olia", "balia"] {
        let parse = |v: serde_json::Value| BuiltinConfig::parse(algo, v).map(|c| c.expect("registered"));
        let spec = CcSpec::Builtin(parse(serde_json::json!({"min_window_segments": 1})).unwrap());
        let mut c = Coupling::new(&spec);
        let rng = Rng::from_seed(1);
        c.add_path(&spec, &InitCtx { mds: MDS, window: &W, rng: &rng });
        for k in 0..4 {
            lose(&mut c, 0, 40, t(100 * k + 50), t(100 * k + 100));
        }
        // 10 000 -> 5000 -> 2500 -> 1250 -> 625, floored at 1 segment (1000 B).
        assert_eq!(c.cwnd_bytes(PathIdx(0)), 1_000, "{algo}");
        let err = parse(serde_json::json!({"min_window_segments": 0})).unwrap_err().to_string();
        assert!(err.contains("min_window_segments: 0 is not in [1, 1000]"), "{algo}: {err}");
        // Unset: the transport's floor (RFC 9002: 2 segments).
        let spec = CcSpec::Builtin(parse(serde_json::json!({})).unwrap());
        let mut c = Coupling::new(&spec);
        c.add_path(&spec, &InitCtx { mds: MDS, window: &W, rng: &rng });
        for k in 0..4 {
            lose(&mut c, 0, 40, t(100 * k + 50), t(100 * k + 100));
        }
        assert_eq!(c.cwnd_bytes(PathIdx(0)), 2_000, "{algo}");
    }
}
