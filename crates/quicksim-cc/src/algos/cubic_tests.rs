//! CUBIC: the curve, K, the Reno-friendly region, fast convergence, HyStart++ and timeouts
//! against hand-computed windows.

use super::*;
use quicksim_engine::Rng;
use crate::{CcState, RttEstimator, WindowRules};

const MDS: u64 = 1000;

/// Runs `f` with a context at `now` whose smoothed RTT is `rtt`.
fn call<R>(rtt: SimDuration, now: SimTime, f: impl FnOnce(&mut CcCtx) -> R) -> R {
    let rtt = RttEstimator::new(rtt);
    let mut cx = CcCtx { now, mds: MDS, rtt: &rtt, bytes_in_flight: 50_000, window: &WindowRules::RFC9002 };
    f(&mut cx)
}

fn new_cc(config: Config) -> Cubic {
    Cubic::new(&config, &InitCtx { mds: MDS, window: &WindowRules::RFC9002, rng: &Rng::from_seed(1) })
}

/// The curve with RFC 9438's C = 0.4.
fn w_rfc(t: SimDuration, k_us: u64, origin: u64) -> u64 {
    w_cubic(t, k_us, origin, MDS, 2, 5)
}

fn ms(v: u64) -> SimDuration {
    SimDuration::from_millis(v)
}

fn at(ms: u64) -> SimTime {
    SimTime::from_millis(ms)
}

fn ack(cc: &mut Cubic, rtt: SimDuration, bytes: u64, sent: SimTime, now: SimTime) {
    let a = AckEvent { sent_time: sent, bytes, app_limited: false };
    call(rtt, now, |cx| cc.on_ack(cx, &a));
}

fn event(cc: &mut Cubic, cause: CongestionCause, sent: SimTime, now: SimTime, lost_bytes: u64) {
    let ev = CongestionEvent { cause, sent_time: sent, lost_bytes };
    call(ms(100), now, |cx| cc.on_congestion_event(cx, &ev));
}

fn lose(cc: &mut Cubic, sent: SimTime, now: SimTime) {
    event(cc, CongestionCause::Loss, sent, now, MDS);
}

/// Slow start to 36 000 B (W_max = 36 segments), then a loss at 1 s: cwnd = 25 200 B and
/// K = cbrt((36 - 25.2) / 0.4) = cbrt(27) = 3 s.
fn after_first_loss(config: Config) -> Cubic {
    let mut cc = new_cc(config);
    assert_eq!(cc.cwnd_bytes(), 10_000);
    for _ in 0..26 {
        ack(&mut cc, ms(100), MDS, at(0), at(100));
    }
    assert_eq!(cc.cwnd_bytes(), 36_000);
    lose(&mut cc, at(900), at(1_000));
    cc
}

#[test]
fn integer_cube_root_and_k() {
    assert_eq!(icbrt(0), 0);
    assert_eq!(icbrt(26), 2);
    assert_eq!(icbrt(27), 3);
    assert_eq!(icbrt(u128::MAX), 6_981_463_658_331);
    // (36 000 - 25 200) B at MDS 1000: K = cbrt(10.8 / 0.4) s = 3 s.
    assert_eq!(k_micros(10_800, 1000, 2, 5), 3_000_000);
    // cbrt(75) = 4.217163 s.
    assert_eq!(k_micros(30_000, 1000, 2, 5), 4_217_163);
}

#[test]
fn cubic_curve_hand_values() {
    let (k, w_max) = (3_000_000, 36_000);
    // W(t) = 0.4 (t - 3)^3 + 36 segments of 1000 B.
    assert_eq!(w_rfc(SimDuration::ZERO, k, w_max), 25_200);
    assert_eq!(w_rfc(ms(1_000), k, w_max), 32_800);
    assert_eq!(w_rfc(ms(2_000), k, w_max), 35_600);
    assert_eq!(w_rfc(ms(3_000), k, w_max), 36_000);
    assert_eq!(w_rfc(ms(4_000), k, w_max), 36_400);
    assert_eq!(w_rfc(ms(5_000), k, w_max), 39_200);
    // 0.4 * (-1.1)^3 = -0.5324 segments -> floor(-532.4 B) = -533 B.
    assert_eq!(w_rfc(ms(1_900), k, w_max), 35_467);
}

#[test]
fn loss_reduces_window_to_seven_tenths() {
    let cc = after_first_loss(Config::default());
    assert_eq!(cc.cwnd_bytes(), 25_200);
    let m = cc.metrics();
    assert_eq!(m.ssthresh_bytes, 25_200);
    assert!(m.in_recovery());
    assert_eq!(cc.w_max, 36_000);
    assert_eq!(cc.cwnd_prior, 36_000);
}

#[test]
fn growth_follows_cubic_curve_near_k() {
    let mut cc = after_first_loss(Config::default());
    // First CA ack at 2 s starts the epoch (t = 0, RTT 0): W_cubic(0) = 25 200 = cwnd, so
    // no cubic step; W_est = 25 200 + 9/17 * 1000 * 1000 / 25 200 = 25 221 (carry 3600),
    // and W_cubic(0) < W_est puts us in the Reno-friendly region: cwnd = 25 221.
    ack(&mut cc, SimDuration::ZERO, MDS, at(1_500), at(2_000));
    assert_eq!(cc.cwnd_bytes(), 25_221);
    assert_eq!(cc.epoch.unwrap().k_us, 3_000_000);
    // t = 1.9 s, RTT 0.1 s: target = W_cubic(2 s) = 35 600.
    // step = (35 600 - 25 221) * 1000 / 25 221 = 411 (carry 13 169). W_cubic(1.9) = 35 467
    // is above W_est (25 241), so the cubic step stands: 25 632.
    ack(&mut cc, ms(100), MDS, at(2_500), at(3_900));
    assert_eq!(cc.cwnd_bytes(), 25_632);
    assert_eq!(cc.epoch.unwrap().w_est, 25_241);
    // t + RTT = K: target = W_max = 36 000.
    // step = ((36 000 - 25 632) * 1000 + 13 169) / 25 632 = 405.
    ack(&mut cc, ms(100), MDS, at(2_500), at(4_900));
    assert_eq!(cc.cwnd_bytes(), 26_037);
}

#[test]
fn plateau_at_w_max_around_k_then_convex_growth() {
    // Ack clock with RTT 100 ms: each round acks one window in MDS packets. The
    // Reno-friendly region is off: at 36 segments and 100 ms it would dominate (AIMD
    // reaches W_max after about 20 RTTs, the curve after K = 3 s).
    let mut cc = after_first_loss(Config { reno_friendly: false, ..Config::default() });
    let rtt = ms(100);
    let mut now = at(1_100); // packets sent after the 1 s recovery start
    let mut cwnd_at = Vec::new();
    for _ in 0..60 {
        let sent = now;
        now += rtt;
        for _ in 0..cc.cwnd_bytes() / MDS {
            ack(&mut cc, rtt, MDS, sent, now);
        }
        cwnd_at.push(cc.cwnd_bytes());
    }
    // Epoch started at 1.2 s, so t = K = 3 s at 4.2 s, after round 31 (index 30). The
    // window is then within a few hundred bytes below W_max = 36 000 (concave approach).
    assert!((35_500..=36_000).contains(&cwnd_at[30]), "{}", cwnd_at[30]);
    // Around the plateau growth is tiny: less than 300 B over the five rounds around K
    // (about 3 800 B per five rounds right after the loss).
    assert!(cwnd_at[33] - cwnd_at[28] < 300, "{:?}", &cwnd_at[28..34]);
    assert!(cwnd_at[5] - cwnd_at[0] > 3_000, "{:?}", &cwnd_at[..6]);
    // Convex afterwards: at t = 5 s (index 50) W_cubic(5.1 s) = 36 000 + 0.4*2.1^3*1000 =
    // 39 704; the window lags the target by less than one round.
    assert!((38_800..=39_704).contains(&cwnd_at[50]), "{}", cwnd_at[50]);
    assert!(cwnd_at.windows(2).all(|w| w[0] <= w[1]));
}

#[test]
fn target_capped_at_one_and_a_half_cwnd() {
    let mut cc = after_first_loss(Config::default());
    // RTT 20 s makes W_cubic(t + RTT) huge; target = 1.5 * 25 200 = 37 800, step =
    // 12 600 * 1000 / 25 200 = 500.
    ack(&mut cc, ms(20_000), MDS, at(1_500), at(2_000));
    assert_eq!(cc.cwnd_bytes(), 25_700);
}

#[test]
fn reno_friendly_region_at_small_rtt() {
    let mut cc = after_first_loss(Config::default());
    let rtt = ms(1);
    let mut now = at(1_001);
    let start = now + rtt;
    let mut per_round = Vec::new();
    for _ in 0..40 {
        let sent = now;
        now += rtt;
        let before = cc.cwnd_bytes();
        for _ in 0..cc.cwnd_bytes() / MDS {
            ack(&mut cc, rtt, MDS, sent, now);
        }
        per_round.push(cc.cwnd_bytes() - before);
    }
    let e = cc.epoch.unwrap();
    // Reno-friendly: cwnd is W_est, far above the cubic curve (which after 40 ms has
    // grown by 0.4 * (3^3 - 2.96^3) segments, about 426 B).
    assert_eq!(cc.cwnd_bytes(), e.w_est);
    let t = now.saturating_sub(start);
    assert!(w_rfc(t + rtt, e.k_us, e.origin) < 25_700);
    // Below cwnd_prior (36 000), W_est grows by 9/17 of an MDS per window of acks
    // (529 B, a little less since a round acks only whole packets)...
    assert!(per_round[1..15].iter().all(|&g| (480..=530).contains(&g)), "{per_round:?}");
    // ... and by one MDS per window once it has reached cwnd_prior.
    assert!(per_round[30..].iter().all(|&g| (900..=1000).contains(&g)), "{per_round:?}");
    // Without the Reno-friendly region the window stays on the flat cubic curve.
    let mut pure = after_first_loss(Config { reno_friendly: false, ..Config::default() });
    let mut now = at(1_001);
    for _ in 0..40 {
        let sent = now;
        now += rtt;
        for _ in 0..pure.cwnd_bytes() / MDS {
            ack(&mut pure, rtt, MDS, sent, now);
        }
    }
    assert!(pure.cwnd_bytes() < 25_700, "{}", pure.cwnd_bytes());
}

#[test]
fn fast_convergence_lowers_w_max() {
    for (fc, w_max) in [(true, 21_420), (false, 25_200)] {
        let mut cc = after_first_loss(Config { fast_convergence: fc, ..Config::default() });
        // A second loss of a packet sent after the recovery start, still below W_max.
        lose(&mut cc, at(1_100), at(1_200));
        assert_eq!(cc.w_max, w_max); // 25 200 * 0.85 = 21 420
        assert_eq!(cc.cwnd_bytes(), 17_640); // 25 200 * 0.7
    }
}

#[test]
fn fast_convergence_ignores_a_shortfall_within_the_same_segment() {
    // W_max = 36 000 B = 36 segments of 1000 B. A loss at 35 000 B (a whole segment below):
    // fast convergence, W_max = 35 000 · 0.85 = 29 750. At 35 001 or 35 999 B (less than a
    // segment below, the byte-counted window creeping up the flat plateau) it must not fire:
    // the byte-exact test of earlier versions did.
    for (cwnd, w_max) in [(35_000, 29_750), (35_001, 35_001), (35_999, 35_999), (36_999, 36_999)] {
        let mut cc = after_first_loss(Config::default());
        cc.cwnd = cwnd;
        cc.phase = Phase::Open;
        lose(&mut cc, at(1_100), at(1_200));
        assert_eq!(cc.w_max, w_max, "cwnd {cwnd}");
        assert_eq!(cc.cwnd_bytes(), cwnd * 7 / 10);
    }
    // W_max = 36 500 B: 35 500 B is one segment below (fires: 30 175), 35 501 B is not.
    for (cwnd, w_max) in [(35_500, 30_175), (35_501, 35_501)] {
        let mut cc = after_first_loss(Config::default());
        cc.w_max = 36_500;
        cc.cwnd = cwnd;
        lose(&mut cc, at(1_100), at(1_200));
        assert_eq!(cc.w_max, w_max, "cwnd {cwnd}");
    }
}

#[test]
fn recovery_period_and_minimum_window() {
    let mut cc = after_first_loss(Config::default());
    // RFC 9002: losses and acks of packets sent at or before the recovery start are ignored.
    lose(&mut cc, at(1_000), at(1_050));
    assert_eq!(cc.cwnd_bytes(), 25_200);
    ack(&mut cc, ms(100), MDS, at(1_000), at(1_100));
    assert_eq!(cc.cwnd_bytes(), 25_200);
    assert!(cc.metrics().in_recovery());
    // Repeated losses bottom out at 2 MDS.
    let mut t = 1_100;
    for _ in 0..10 {
        lose(&mut cc, at(t), at(t + 1));
        t += 10;
    }
    assert_eq!(cc.cwnd_bytes(), 2 * MDS);
}

#[test]
fn persistent_congestion_restarts_with_k_zero() {
    let mut cc = after_first_loss(Config::default());
    event(&mut cc, CongestionCause::PersistentCongestion, at(1_500), at(2_000), 10 * MDS);
    assert_eq!(cc.cwnd_bytes(), 2 * MDS);
    assert_eq!(cc.metrics().ssthresh_bytes, 17_640);
    assert!(!cc.metrics().in_recovery());
    // Slow start back to ssthresh, then the first CA epoch has K = 0 and W_max = cwnd_epoch.
    while cc.cwnd_bytes() < 17_640 {
        ack(&mut cc, ms(100), MDS, at(1_500), at(2_100));
    }
    ack(&mut cc, ms(100), MDS, at(2_100), at(2_200));
    let e = cc.epoch.unwrap();
    assert_eq!(e.k_us, 0);
    assert_eq!(e.origin, 18_000);
}

#[test]
fn app_limited_acks_do_not_grow_the_window() {
    let mut cc = new_cc(Config::default());
    let a = AckEvent { sent_time: at(0), bytes: MDS, app_limited: true };
    call(ms(100), at(100), |cx| cc.on_ack(cx, &a));
    assert_eq!(cc.cwnd_bytes(), 10_000);
    assert_eq!(cc.metrics().state, CcState::AppLimited);
    let mut ca = after_first_loss(Config::default());
    let a = AckEvent { sent_time: at(2_000), ..a };
    for _ in 0..100 {
        call(ms(100), at(5_000), |cx| ca.on_ack(cx, &a));
    }
    assert_eq!(ca.cwnd_bytes(), 25_200);
    assert!(ca.epoch.is_none());
}

#[test]
fn beta_and_c_from_the_configuration() {
    // beta = 0.5 (1/2), C = 0.8 (4/5): a loss at 36 000 B halves the window, and
    // K = cbrt((36 - 18) / 0.8) s = cbrt(22.5) s = 2.823108 s.
    let cfg = Config { beta: 0.5, c: 0.8, ..Config::default() };
    let mut cc = after_first_loss(cfg);
    assert_eq!((cc.cwnd_bytes(), cc.metrics().ssthresh_bytes), (18_000, 18_000));
    assert_eq!(cc.w_max, 36_000);
    // alpha = 3 (1 - 0.5) / (1 + 0.5) = 1.
    assert_eq!(cc.params.alpha(), (3, 3));
    assert_eq!(k_micros(18_000, MDS, 4, 5), 2_823_108);
    // The first CA ack starts the epoch: W_cubic(0) = 18 000 = cwnd (no cubic step); W_est
    // += 1 · 1000 · 1000 / 18 000 = 55 (Reno-friendly region): cwnd = 18 055.
    ack(&mut cc, SimDuration::ZERO, MDS, at(1_500), at(2_000));
    assert_eq!(cc.cwnd_bytes(), 18_055);
    assert_eq!(cc.epoch.unwrap().k_us, 2_823_108);
    // W_cubic(1 s) = 36 000 + 0.8 · (1 - 2.823108)^3 · 1000 = 31 152.6 -> 31 152.
    let e = cc.epoch.unwrap();
    assert_eq!(cc.curve(ms(1_000), &e, MDS), 31_152);
    // Fast convergence with beta 0.5: W_max = 18 055 · (1 + 0.5) / 2 = 13 541.
    lose(&mut cc, at(1_900), at(2_100));
    assert_eq!(cc.w_max, 13_541);
    assert_eq!(cc.cwnd_bytes(), 9_027);
}

#[test]
fn default_parameters_encode_in_two_bytes() {
    let default = Params::new(&Config::default());
    assert_eq!((default.beta_num, default.beta_den, default.c_num, default.c_den), (7, 10, 2, 5));
    let bytes = postcard::to_allocvec(&default).unwrap();
    assert_eq!(bytes, [3, 0]); // both flags, no ratios
    let custom = Params::new(&Config { fast_convergence: false, beta: 0.5, c: 0.8, ..Config::default() });
    let bytes = postcard::to_allocvec(&custom).unwrap();
    assert_eq!(bytes, [2, 1, 1, 2, 4, 5]);
    assert_eq!(postcard::from_bytes::<Params>(&bytes).unwrap(), custom);
}

#[test]
fn ecn_mark_reduces_as_a_loss() {
    let mut cc = after_first_loss(Config::default());
    event(&mut cc, CongestionCause::Ecn, at(1_100), at(1_200), 0);
    assert_eq!(cc.cwnd_bytes(), 17_640); // 25 200 · 0.7
    assert_eq!(cc.metrics().state, CcState::Recovery);
}

#[test]
fn rto_collapses_to_the_loss_window_then_k_zero() {
    let mut cc = after_first_loss(Config::default());
    let tcp = |now, f: &mut dyn FnMut(&mut CcCtx)| {
        let rtt = RttEstimator::new(ms(100));
        let mut cx = CcCtx { now, mds: MDS, rtt: &rtt, bytes_in_flight: 0, window: &WindowRules::RFC5681 };
        f(&mut cx)
    };
    let rto = CongestionEvent { cause: CongestionCause::Rto, sent_time: at(1_100), lost_bytes: 20 * MDS };
    tcp(at(2_000), &mut |cx| cc.on_congestion_event(cx, &rto));
    // ssthresh = 25 200 · 0.7 (RFC 9438 §4.8); cwnd = LW = 1 MSS (RFC 5681 §3.1).
    assert_eq!((cc.cwnd_bytes(), cc.metrics().ssthresh_bytes), (1_000, 17_640));
    assert_eq!(cc.metrics().state, CcState::Recovery);
    assert_eq!(cc.w_max, 0);
    // Packets sent at or before the timeout do not grow the window; later ones slow-start.
    let a = AckEvent { sent_time: at(2_000), bytes: MDS, app_limited: false };
    tcp(at(2_100), &mut |cx| cc.on_ack(cx, &a));
    assert_eq!(cc.cwnd_bytes(), 1_000);
    let a = AckEvent { sent_time: at(2_001), ..a };
    while cc.cwnd_bytes() < 17_640 {
        tcp(at(2_100), &mut |cx| cc.on_ack(cx, &a));
    }
    assert_eq!(cc.cwnd_bytes(), 18_000);
    // The first congestion avoidance stage has K = 0 and W_max = cwnd_epoch.
    tcp(at(2_200), &mut |cx| cc.on_ack(cx, &a));
    let e = cc.epoch.unwrap();
    assert_eq!((e.k_us, e.origin), (0, 18_000));
}
/// One ACK of one MDS-sized packet sent at `sent`, acked at `now`, RTT sample `rtt_ms`.
fn hs_ack(cc: &mut Cubic, rtt_ms: u64, sent: SimTime, now: SimTime) {
    crate::hystart::testing::one_ack(cc, MDS, 50_000, rtt_ms, sent, now);
}

#[test]
fn hystart_leaves_slow_start_through_css() {
    for hystart in [true, false] {
        let mut cc = new_cc(Config { hystart, ..Config::default() });
        // Round 1 (8 ACKs, RTT 100 ms): slow start, 10 000 -> 18 000 B. Round 2 (RTT 150 ms
        // >= 100 + 12.5): slow start to 26 000 B, and the 8th sample enters CSS.
        for _ in 0..8 {
            hs_ack(&mut cc, 100, at(0), at(100));
        }
        for _ in 0..8 {
            hs_ack(&mut cc, 150, at(100), at(250));
        }
        assert_eq!(cc.cwnd_bytes(), 26_000);
        // CSS rounds 1-4 (4 ACKs each, RTT still 150 ms: no return): 250 B per 1000 B acked.
        for r in 0..4 {
            for _ in 0..4 {
                hs_ack(&mut cc, 150, at(250 + 150 * r), at(400 + 150 * r));
            }
        }
        // The first ACK of round 7 ends the 5th CSS round: ssthresh = cwnd = 30 250 B.
        hs_ack(&mut cc, 150, at(850), at(1_000));
        let m = cc.metrics();
        if hystart {
            assert_eq!((m.cwnd_bytes, m.ssthresh_bytes), (30_250, 30_250));
            assert_eq!(m.state, CcState::CongestionAvoidance);
            // Congestion avoidance starts with no W_max: K = 0 at the next ACK.
            hs_ack(&mut cc, 150, at(900), at(1_100));
            assert_eq!(cc.epoch.unwrap().k_us, 0);
        } else {
            // Plain slow start: every acked byte, no threshold.
            assert_eq!((m.cwnd_bytes, m.ssthresh_bytes), (43_000, u64::MAX));
        }
    }
}

/// One ACK of one MDS-sized packet sent at `sent_ms`, acked `rtt_ms` later (Linux HyStart's
/// sample is the newest acknowledged packet's RTT).
fn linux_ack(cc: &mut Cubic, sent_us: u64, rtt_us: u64) {
    let sent = SimTime::ZERO + SimDuration::from_micros(sent_us);
    let now = sent + SimDuration::from_micros(rtt_us);
    crate::hystart::testing::one_ack(cc, MDS, 50_000, rtt_us / 1000, sent, now);
}

#[test]
fn linux_hystart_ends_slow_start_on_a_delay_increase() {
    let mut cc = new_cc(Config { hystart_linux: true, ..Config::default() });
    // Round 1: 10 ACKs 5 ms apart (no ACK train), RTT 100 ms: slow start 10 000 -> 20 000 B.
    for i in 0..10 {
        linux_ack(&mut cc, i * 5_000, 100_000);
    }
    assert_eq!((cc.cwnd_bytes(), cc.metrics().ssthresh_bytes), (20_000, u64::MAX));
    // HyStart's first round began at the ACK that found 16 segments (the seventh, at 130 ms).
    // Round 2, packets sent after that, RTT 120 ms > 100 + clamp(100/8, 4, 16) = 112.5 ms:
    // 8 samples, the ninth tests and ends slow start after its own growth: ssthresh = cwnd =
    // 20 000 + 9 000.
    for i in 0..9 {
        linux_ack(&mut cc, 135_000 + i * 5_000, 120_000);
    }
    let m = cc.metrics();
    assert_eq!((m.cwnd_bytes, m.ssthresh_bytes), (29_000, 29_000));
    assert_eq!(m.state, CcState::CongestionAvoidance);
    // Without it, slow start goes on.
    let mut plain = new_cc(Config::default());
    for i in 0..10 {
        linux_ack(&mut plain, i * 5_000, 100_000);
    }
    for i in 0..9 {
        linux_ack(&mut plain, 135_000 + i * 5_000, 120_000);
    }
    assert_eq!(plain.metrics().ssthresh_bytes, u64::MAX);
    // A timeout starts HyStart again.
    event(&mut cc, CongestionCause::Rto, at(200), at(1_000), MDS);
    assert_eq!(cc.hystart_linux.as_deref(), Some(&LinuxHyStart::default()));
}

#[test]
fn both_slow_start_exits_are_refused() {
    let e = serde_json::from_value::<Config>(serde_json::json!({"hystart": true, "hystart_linux": true}));
    assert!(e.unwrap_err().to_string().contains("choose one"));
    let c: Config = serde_json::from_value(serde_json::json!({"hystart_linux": true})).unwrap();
    assert!(c.hystart_linux && c.beta == 0.7);
    assert!(serde_json::from_value::<Config>(serde_json::json!({"hystrat": true})).is_err());
}

#[test]
fn linux_constants_and_reno_friendly_growth() {
    // beta 717/1024 and C 410/1024 exactly (`ratio` keeps multiples of 1/1024).
    let cfg = Config { beta: 717.0 / 1024.0, c: 410.0 / 1024.0, linux: true, ..Config::default() };
    let p = Params::new(&cfg);
    assert_eq!((p.beta_num, p.beta_den, p.c_num, p.c_den), (717, 1024, 205, 512));
    // beta_scale = 8 · 1741 / 3 / 307 = 4642 / 307 = 15: W_est grows 8/15 per window; the
    // same for 0.7 (8 · 17 / 3 / 3 = 15).
    assert_eq!(p.linux_alpha(), (8, 15));
    assert_eq!(Params::new(&Config::default()).linux_alpha(), (8, 15));
    // A loss at 40 000 B: ssthresh = 40 000 · 717/1024 = 28 007 B (floored).
    let mut cc = new_cc(cfg);
    cc.cwnd = 40_000;
    lose(&mut cc, at(900), at(1_000));
    assert_eq!(cc.cwnd_bytes(), 28_007);
}

#[test]
fn linux_grows_a_twentieth_per_ack_without_w_max() {
    // Congestion avoidance at 20 000 B with no W_max (as after HyStart), Reno-friendly off:
    // RFC 9438's curve starts flat (W(0 + 100 ms) = 20 000 + 0.4 B): no growth from one
    // 1000 B ACK; Linux's at least 1/20 segment per segment: 1000 · 1000 / 20 000 = 50 B.
    for (linux, grown) in [(false, 20_000), (true, 20_050)] {
        let mut cc = new_cc(Config { linux, reno_friendly: false, ..Config::default() });
        (cc.cwnd, cc.ssthresh) = (20_000, 20_000);
        ack(&mut cc, ms(100), MDS, at(0), at(100));
        assert_eq!(cc.cwnd_bytes(), grown, "linux {linux}");
    }
}

#[test]
fn linux_aims_one_minimum_rtt_ahead() {
    // After the loss of `after_first_loss` (cwnd 25 200 B, K = 3 s, W_max 36 000 B), the first
    // ACK at t = 0 of the epoch with SRTT 30 ms and minimum RTT 20 ms (samples 20, 100 ms):
    // RFC 9438 aims at W(0.03 s) = 36 000 − 400 · 2.97³ = 25 520 B, +320 · 1000 / 25 200 = 12 B;
    // Linux at W(0.02 s) = 36 000 − 400 · 2.98³ = 25 414 B, +214 · 1000 / 25 200 = 8 B.
    for (linux, grown) in [(false, 25_212), (true, 25_208)] {
        let mut cc = after_first_loss(Config { linux, reno_friendly: false, ..Config::default() });
        let mut rtt = RttEstimator::new(ms(100));
        rtt.update(ms(20), SimDuration::ZERO, SimDuration::ZERO, true);
        rtt.update(ms(100), SimDuration::ZERO, SimDuration::ZERO, true);
        assert_eq!((rtt.smoothed(), rtt.min()), (ms(30), ms(20)));
        let mut cx =
            CcCtx { now: at(1_200), mds: MDS, rtt: &rtt, bytes_in_flight: 50_000, window: &WindowRules::RFC9002 };
        cc.on_ack(&mut cx, &AckEvent { sent_time: at(1_100), bytes: MDS, app_limited: false });
        assert_eq!(cc.cwnd_bytes(), grown, "linux {linux}");
    }
}
