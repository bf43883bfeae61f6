//! NewReno: the INET byte counting, the per-ACK rule of RFC 5681 (TCP's default), quinn's
//! count, the recovery period and the RTO against hand-computed windows.

use super::*;
use crate::{CcState, RttEstimator, WindowRules};
use quicksim_engine::{Rng, SimDuration};

const MDS: u64 = 1252;

fn new_cc(config: Config) -> NewReno {
    NewReno::new(&config, &InitCtx { mds: MDS, window: &WindowRules::RFC9002, rng: &Rng::from_seed(1) })
}

/// Runs `f` with a context at `now` with `in_flight` bytes in flight.
fn call<R>(now: SimTime, in_flight: u64, f: impl FnOnce(&mut CcCtx) -> R) -> R {
    let rtt = RttEstimator::new(SimDuration::from_millis(100));
    let mut cx =
        CcCtx { now, mds: MDS, rtt: &rtt, bytes_in_flight: in_flight, window: &WindowRules::RFC9002 };
    f(&mut cx)
}

fn t(ms: u64) -> SimTime {
    SimTime::from_millis(ms)
}

/// Acks `n` full-size packets sent at `sent` and acked at `now`, not app-limited.
fn ack_n(cc: &mut NewReno, n: u64, sent: SimTime, now: SimTime) {
    for _ in 0..n {
        ack_one(cc, MDS, sent, now, false);
    }
}

fn ack_one(cc: &mut NewReno, bytes: u64, sent: SimTime, now: SimTime, app_limited: bool) {
    call(now, 100_000, |cx| cc.on_ack(cx, &AckEvent { sent_time: sent, bytes, app_limited }));
}

fn event(cc: &mut NewReno, cause: CongestionCause, sent: SimTime, now: SimTime, lost_bytes: u64) {
    let ev = CongestionEvent { cause, sent_time: sent, lost_bytes };
    call(now, 100_000, |cx| cc.on_congestion_event(cx, &ev));
}

fn lose(cc: &mut NewReno, sent: SimTime, now: SimTime) {
    event(cc, CongestionCause::Loss, sent, now, MDS);
}

#[test]
fn initial_window_from_the_transport_rules() {
    // RFC 9002 §7.2: min(10 · 1252, max(2 · 1252, 14720)) = 12520.
    let cc = new_cc(Config::default());
    assert_eq!(cc.cwnd_bytes(), 12_520);
    assert_eq!(cc.metrics().ssthresh_bytes, u64::MAX);
    assert_eq!(cc.metrics().state, CcState::SlowStart);
    // RFC 6928 with 1460 B segments: 14600.
    let tcp = NewReno::new(&Config::default(), &InitCtx { mds: 1460, window: &WindowRules::RFC5681, rng: &Rng::from_seed(1) });
    assert_eq!(tcp.cwnd_bytes(), 14_600);
}

#[test]
fn slow_start_doubles_per_rtt_of_acks() {
    let mut cc = new_cc(Config::default());
    ack_n(&mut cc, 10, t(0), t(100));
    assert_eq!(cc.cwnd_bytes(), 25_040);
    ack_n(&mut cc, 20, t(100), t(200));
    assert_eq!(cc.cwnd_bytes(), 50_080);
}

#[test]
fn loss_halves_window_and_sets_ssthresh() {
    let mut cc = new_cc(Config::default());
    ack_n(&mut cc, 10, t(0), t(100));
    lose(&mut cc, t(150), t(200));
    assert_eq!(cc.cwnd_bytes(), 12_520);
    let m = cc.metrics();
    assert_eq!(m.ssthresh_bytes, 12_520);
    assert!(m.in_recovery());
    // Odd window: ssthresh = floor(cwnd / 2).
    let mut odd = new_cc(Config::default());
    ack_one(&mut odd, 1, t(0), t(100), false); // 12521
    lose(&mut odd, t(50), t(100));
    assert_eq!(odd.cwnd_bytes(), 6_260);
}

#[test]
fn window_never_below_two_mds() {
    let mut cc = new_cc(Config::default());
    lose(&mut cc, t(10), t(100)); // 6260
    lose(&mut cc, t(110), t(200)); // 3130
    assert_eq!(cc.cwnd_bytes(), 3_130);
    lose(&mut cc, t(210), t(300)); // ssthresh 1565, cwnd max(1565, 2504)
    assert_eq!(cc.cwnd_bytes(), 2_504);
    assert_eq!(cc.metrics().ssthresh_bytes, 1_565);
}

/// Enters congestion avoidance at cwnd = ssthresh = 12520 with recovery started at 200 ms.
fn in_ca(config: Config) -> NewReno {
    let mut cc = new_cc(config);
    if config.per_ack_increase == Some(true) {
        for _ in 0..10 {
            ack_covering(&mut cc, 1, t(0), t(100));
        }
    } else {
        ack_n(&mut cc, 10, t(0), t(100));
    }
    lose(&mut cc, t(150), t(200));
    assert_eq!((cc.cwnd_bytes(), cc.metrics().ssthresh_bytes), (12_520, 12_520));
    cc
}

#[test]
fn exact_ca_adds_one_mds_per_cwnd_of_acked_bytes() {
    let mut cc = in_ca(Config { exact_increase: true, ..Default::default() });
    // Increase when pba > cwnd - MDS = 11268: 9 packets (11268) are not enough, 10 are.
    ack_n(&mut cc, 9, t(250), t(300));
    assert_eq!(cc.cwnd_bytes(), 12_520);
    assert_eq!(cc.carry, 11_268);
    ack_n(&mut cc, 1, t(250), t(300));
    assert_eq!(cc.cwnd_bytes(), 13_772);
    assert_eq!(cc.carry, 0); // new cwnd 13772 >= pba 12520 -> 0
    assert!(!cc.metrics().in_recovery());
    // Next step needs pba > 12520: 11 packets (one cwnd of 13772 B).
    ack_n(&mut cc, 10, t(300), t(400));
    assert_eq!(cc.cwnd_bytes(), 13_772);
    ack_n(&mut cc, 1, t(300), t(400));
    assert_eq!(cc.cwnd_bytes(), 15_024);
}

#[test]
fn quinn_ca_adds_one_mds_per_cwnd_and_keeps_its_count_across_recovery() {
    let mut cc = in_ca(Config { quinn_increase: true, ..Default::default() });
    assert_eq!(cc.cwnd_bytes(), 12_520);
    // quinn-proto's `bytes_acked >= window`: 9 packets (11 268 B) are not enough, 10 are,
    // one packet later than INET's `pba > cwnd - MDS`.
    ack_n(&mut cc, 9, t(250), t(300));
    assert_eq!((cc.cwnd_bytes(), cc.carry), (12_520, 11_268));
    ack_n(&mut cc, 1, t(250), t(300));
    assert_eq!((cc.cwnd_bytes(), cc.carry), (13_772, 0));
    ack_n(&mut cc, 7, t(300), t(400));
    // A loss halves the window and keeps the count (quinn does not reset `bytes_acked`);
    // acknowledgements of packets sent before the recovery add nothing to it.
    lose(&mut cc, t(350), t(450));
    assert_eq!((cc.cwnd_bytes(), cc.carry), (6_886, 7 * MDS));
    ack_n(&mut cc, 5, t(400), t(460));
    assert_eq!((cc.cwnd_bytes(), cc.carry), (6_886, 7 * MDS));
    // The first new acknowledgement after the recovery: 8 x 1252 >= 6886, one MDS more.
    ack_n(&mut cc, 1, t(455), t(500));
    assert_eq!((cc.cwnd_bytes(), cc.carry), (8_138, 8 * MDS - 6_886));
}

#[test]
fn exact_ca_subtracts_new_cwnd_from_large_pba() {
    // INET: after the increase, pba -= cwnd (the increased one) if cwnd < pba.
    let mut cc = in_ca(Config { exact_increase: true, ..Default::default() });
    ack_one(&mut cc, 30_000, t(250), t(300), false);
    assert_eq!(cc.cwnd_bytes(), 13_772);
    assert_eq!(cc.carry, 30_000 - 13_772);
}

#[test]
fn approximate_ca_keeps_integer_remainder() {
    let mut cc = in_ca(Config { exact_increase: false, ..Default::default() });
    // 1252 * 1252 = 1_567_504 = 125 * 12520 + 2504
    ack_n(&mut cc, 1, t(250), t(300));
    assert_eq!(cc.cwnd_bytes(), 12_645);
    assert_eq!(cc.carry, 2_504);
    // 1_567_504 + 2504 = 1_570_008 = 124 * 12645 + 2028
    ack_n(&mut cc, 1, t(250), t(300));
    assert_eq!(cc.cwnd_bytes(), 12_769);
    assert_eq!(cc.carry, 2_028);
    // The remainder is per controller: a fresh one starts from zero.
    let mut other = in_ca(Config { exact_increase: false, ..Default::default() });
    ack_n(&mut other, 1, t(250), t(300));
    assert_eq!(other.cwnd_bytes(), 12_645);
    // One cwnd of acks grows the window by about one MDS.
    let mut cc = in_ca(Config { exact_increase: false, ..Default::default() });
    ack_n(&mut cc, 10, t(250), t(300));
    assert!((13_600..=13_772).contains(&cc.cwnd_bytes()), "{}", cc.cwnd_bytes());
}

#[test]
fn recovery_period_ignores_losses_and_acks_of_older_packets() {
    // Recovery started at 200 ms.
    let mut cc = in_ca(Config::default());
    // Loss of a packet sent before the recovery start: ignored.
    lose(&mut cc, t(199), t(260));
    assert_eq!(cc.cwnd_bytes(), 12_520);
    // Acks of packets sent before recovery start: no growth, but pba still counts (INET).
    ack_n(&mut cc, 5, t(190), t(260));
    assert_eq!(cc.cwnd_bytes(), 12_520);
    assert_eq!(cc.carry, 5 * MDS);
    assert!(cc.metrics().in_recovery());
    // A packet sent exactly at the recovery start is not in recovery (INET's `<`).
    lose(&mut cc, t(200), t(270));
    assert_eq!(cc.cwnd_bytes(), 6_260);
    assert_eq!(cc.carry, 0);
    assert_eq!(cc.recovery_start, t(270));
}

#[test]
fn recovery_acks_count_toward_pba_only_in_ca() {
    let mut cc = new_cc(Config::default());
    lose(&mut cc, t(50), t(100)); // cwnd 6260 = ssthresh, CA
    ack_n(&mut cc, 2, t(50), t(150));
    assert_eq!(cc.carry, 2 * MDS);
    // After persistent congestion cwnd < ssthresh: slow start, and no pba in recovery.
    let mut pc = new_cc(Config::default());
    event(&mut pc, CongestionCause::PersistentCongestion, t(50), t(100), 3 * MDS);
    pc.recovery_start = t(100); // pretend a later loss started recovery again
    ack_n(&mut pc, 2, t(50), t(150));
    assert_eq!(pc.carry, 0);
    assert_eq!(pc.cwnd_bytes(), 2 * MDS);
}

#[test]
fn persistent_congestion_collapses_to_minimum_and_resets_recovery() {
    let mut cc = new_cc(Config::default());
    ack_n(&mut cc, 10, t(0), t(100)); // 25040
    event(&mut cc, CongestionCause::PersistentCongestion, t(500), t(1_000), 10 * MDS);
    assert_eq!(cc.cwnd_bytes(), 2_504);
    assert_eq!(cc.metrics().ssthresh_bytes, 12_520);
    assert!(!cc.metrics().in_recovery());
    // Recovery start is reset: a loss of an old packet now triggers a new reduction, and
    // acks of old packets grow the window (slow start, cwnd < ssthresh).
    ack_n(&mut cc, 1, t(400), t(1_100));
    assert_eq!(cc.cwnd_bytes(), 2_504 + MDS);
    lose(&mut cc, t(600), t(1_200));
    assert_eq!(cc.cwnd_bytes(), 2_504); // max(3756 / 2, 2 MDS)
    assert_eq!(cc.metrics().ssthresh_bytes, 1_878);
}

#[test]
fn app_limited_acks_do_not_grow_the_window() {
    let mut ss = new_cc(Config::default());
    ack_one(&mut ss, MDS, t(0), t(100), true);
    assert_eq!(ss.cwnd_bytes(), 12_520);
    for exact in [true, false] {
        let mut ca = in_ca(Config { exact_increase: exact, ..Default::default() });
        for _ in 0..50 {
            ack_one(&mut ca, MDS, t(250), t(300), true);
        }
        assert_eq!(ca.cwnd_bytes(), 12_520);
        assert_eq!(ca.carry, 0);
    }
}

#[test]
fn empty_flight_resets_partial_bytes_acked() {
    let mut cc = in_ca(Config::default());
    ack_n(&mut cc, 3, t(250), t(300));
    assert_eq!(cc.carry, 3 * MDS);
    let last = AckEvent { sent_time: t(250), bytes: MDS, app_limited: false };
    call(t(300), 0, |cx| cc.on_ack(cx, &last));
    // Reset first, then this ack counts.
    assert_eq!(cc.carry, MDS);
}

/// One ACK of `n` full-size packets sent at `sent` (per-packet calls, then the summary).
fn ack_covering(cc: &mut NewReno, n: u64, sent: SimTime, now: SimTime) {
    ack_n(cc, n, sent, now);
    let summary = AckSummary {
        acked_bytes: n * MDS,
        acked_packets: n,
        largest_acked_sent_time: sent,
        app_limited: false,
        rate: None,
        ce_packets: 0,
    };
    call(now, 100_000, |cx| cc.on_ack_end(cx, &summary));
}

const PER_ACK: Config = Config { exact_increase: true, hystart: false, per_ack_increase: Some(true), ssthresh_from_flight: false, quinn_increase: false };

#[test]
fn per_ack_slow_start_adds_one_mds_per_ack_whatever_it_covers() {
    // RFC 5681 §3.1 / ns-3: 10 ACKs of one packet and 10 ACKs of two packets both add 10 MDS.
    let mut one = new_cc(PER_ACK);
    for _ in 0..10 {
        ack_covering(&mut one, 1, t(0), t(100));
    }
    let mut two = new_cc(PER_ACK);
    for _ in 0..10 {
        ack_covering(&mut two, 2, t(0), t(100));
    }
    assert_eq!(one.cwnd_bytes(), 12_520 + 10 * MDS);
    assert_eq!(two.cwnd_bytes(), 12_520 + 10 * MDS);
    // The per-packet calls alone change nothing in this mode.
    let mut cc = new_cc(PER_ACK);
    ack_n(&mut cc, 10, t(0), t(100));
    assert_eq!(cc.cwnd_bytes(), 12_520);
}

#[test]
fn per_ack_congestion_avoidance_is_rfc5681_eq3_in_integer_bytes() {
    let mut cc = in_ca(PER_ACK);
    // ⌊1252² / 12520⌋ = ⌊125.2⌋ = 125, then ⌊1_567_504 / 12_645⌋ = 123 (123.96: truncated,
    // as ns-3's `static_cast<uint32_t>(adder)`).
    ack_covering(&mut cc, 1, t(250), t(300));
    assert_eq!(cc.cwnd_bytes(), 12_645);
    ack_covering(&mut cc, 2, t(250), t(300));
    assert_eq!(cc.cwnd_bytes(), 12_768);
    // A huge window still grows by at least one byte per ACK.
    cc.cwnd = 2 * MDS * MDS;
    ack_covering(&mut cc, 1, t(250), t(300));
    assert_eq!(cc.cwnd_bytes(), 2 * MDS * MDS + 1);
}

#[test]
fn per_ack_growth_with_delayed_acks_is_half_an_mds_per_window() {
    // One window of packets (10) acked one by one adds ~1 MDS; acked two by two (delayed
    // ACKs, b = 2) ~1/2 MDS: Mathis' b.
    let mut b1 = in_ca(PER_ACK);
    for _ in 0..10 {
        ack_covering(&mut b1, 1, t(250), t(300));
    }
    let mut b2 = in_ca(PER_ACK);
    for _ in 0..5 {
        ack_covering(&mut b2, 2, t(250), t(300));
    }
    let (g1, g2) = (b1.cwnd_bytes() - 12_520, b2.cwnd_bytes() - 12_520);
    assert!((1_150..=MDS).contains(&g1), "{g1}");
    assert!((600..=626).contains(&g2), "{g2}");
    // No growth from an ACK of packets sent before the recovery start, nor when app-limited.
    let mut cc = in_ca(PER_ACK);
    ack_covering(&mut cc, 2, t(190), t(260));
    assert_eq!(cc.cwnd_bytes(), 12_520);
    let summary = AckSummary {
        acked_bytes: MDS,
        acked_packets: 1,
        largest_acked_sent_time: t(250),
        app_limited: true,
        rate: None,
        ce_packets: 0,
    };
    call(t(300), 100_000, |cx| cc.on_ack_end(cx, &summary));
    assert_eq!(cc.cwnd_bytes(), 12_520);
}

#[test]
fn per_ack_slow_start_crossing_ssthresh_spends_the_rest_in_ca() {
    // ns-3 `IncreaseWindow`: SlowStart takes one segment, CongestionAvoidance the rest.
    let mut cc = in_ca(PER_ACK);
    cc.ssthresh = 12_520 + MDS; // 13772
    ack_covering(&mut cc, 2, t(250), t(300));
    assert_eq!(cc.cwnd_bytes(), 13_772 + 1_567_504 / 13_772);
    let mut one = in_ca(PER_ACK);
    one.ssthresh = 12_520 + MDS;
    ack_covering(&mut one, 1, t(250), t(300));
    assert_eq!(one.cwnd_bytes(), 13_772);
}

#[test]
fn ssthresh_from_flight_halves_the_reported_bytes_in_flight() {
    // cwnd 25040 after slow start; the transport reports 20000 B in flight (pipe, less the
    // lost and SACKed segments): ssthresh = 10000, not 12520. Floor 2 MDS.
    let cfg = Config { ssthresh_from_flight: true, ..Config::default() };
    let mut cc = new_cc(cfg);
    ack_n(&mut cc, 10, t(0), t(100));
    let ev = CongestionEvent { cause: CongestionCause::Loss, sent_time: t(150), lost_bytes: MDS };
    call(t(200), 20_000, |cx| cc.on_congestion_event(cx, &ev));
    assert_eq!((cc.cwnd_bytes(), cc.metrics().ssthresh_bytes), (10_000, 10_000));
    let mut small = new_cc(cfg);
    let ev = CongestionEvent { cause: CongestionCause::Loss, sent_time: t(150), lost_bytes: MDS };
    call(t(200), 3_000, |cx| small.on_congestion_event(cx, &ev));
    assert_eq!((small.cwnd_bytes(), small.metrics().ssthresh_bytes), (2 * MDS, 2 * MDS));
    // The default halves cwnd whatever is in flight.
    let mut dflt = new_cc(Config::default());
    ack_n(&mut dflt, 10, t(0), t(100));
    call(t(200), 20_000, |cx| dflt.on_congestion_event(cx, &ev));
    assert_eq!(dflt.cwnd_bytes(), 12_520);
    // A timeout: from the in-flight count before it (20 000), not from the FlightSize the
    // event carries (SND.MAX - SND.UNA, 300 000 here: SACKed data above a lost segment);
    // the default keeps RFC 5681's FlightSize.
    let rto = CongestionEvent { cause: CongestionCause::Rto, sent_time: t(150), lost_bytes: 300_000 };
    let mut cc = new_cc(cfg);
    ack_n(&mut cc, 10, t(0), t(100));
    call(t(1_200), 20_000, |cx| cc.on_congestion_event(cx, &rto));
    assert_eq!((cc.cwnd_bytes(), cc.metrics().ssthresh_bytes), (2 * MDS, 10_000)); // RFC 9002 rules: LW = 2 MDS
    let mut dflt = new_cc(Config::default());
    ack_n(&mut dflt, 10, t(0), t(100));
    call(t(1_200), 20_000, |cx| dflt.on_congestion_event(cx, &rto));
    assert_eq!(dflt.metrics().ssthresh_bytes, 150_000);
}

#[test]
fn ecn_mark_reacts_as_a_loss() {
    let mut cc = new_cc(Config::default());
    ack_n(&mut cc, 10, t(0), t(100)); // 25040
    event(&mut cc, CongestionCause::Ecn, t(150), t(200), 0);
    assert_eq!((cc.cwnd_bytes(), cc.metrics().ssthresh_bytes), (12_520, 12_520));
    assert_eq!(cc.metrics().state, CcState::Recovery);
    // One reduction per recovery period, whatever the signal.
    event(&mut cc, CongestionCause::Ecn, t(190), t(210), 0);
    lose(&mut cc, t(195), t(220));
    assert_eq!(cc.cwnd_bytes(), 12_520);
}

/// Runs `f` with TCP's window rules (RFC 5681/6928) and 1460 B segments.
fn tcp_call<R>(now: SimTime, f: impl FnOnce(&mut CcCtx) -> R) -> R {
    let rtt = RttEstimator::new(SimDuration::from_millis(100));
    let mut cx = CcCtx { now, mds: 1460, rtt: &rtt, bytes_in_flight: 50_000, window: &WindowRules::RFC5681 };
    f(&mut cx)
}

/// A 2-segment window that each delayed ACK empties (one ACK of both segments, nothing left
/// in flight). INET's byte count restarts whenever the flight is empty, so with per-byte
/// growth the window never leaves 2 segments; TCP's default, per ACK (RFC 5681 §3.1), adds
/// ⌊SMSS²/cwnd⌋ per ACK: ⌊2 131 600 / 2 920⌋ = 730, then +584, +503, +449.
#[test]
fn tcp_default_grows_a_window_that_each_ack_empties() {
    let rng = Rng::from_seed(1);
    let init = InitCtx { mds: 1460, window: &WindowRules::RFC5681, rng: &rng };
    let rtt = RttEstimator::new(SimDuration::from_millis(100));
    let linux_rules = WindowRules { growth: Growth::Linux, ..WindowRules::RFC5681 };
    let linux = InitCtx { mds: 1460, window: &linux_rules, rng: &rng };
    let run_with = |config: Config, init: &InitCtx| {
        let mut cc = NewReno::new(&config, init);
        let cx = |now, flight| CcCtx { now, mds: 1460, rtt: &rtt, bytes_in_flight: flight, window: &WindowRules::RFC5681 };
        // Three losses in three recovery periods: 14 600 -> 7 300 -> 3 650 -> 2 920 (2 SMSS).
        for k in 1..=3 {
            let ev = CongestionEvent { cause: CongestionCause::Loss, sent_time: t(100 * k), lost_bytes: 1460 };
            cc.on_congestion_event(&mut cx(t(100 * k + 50), 0), &ev);
        }
        assert_eq!(cc.cwnd_bytes(), 2_920);
        let mut windows = vec![];
        for k in 0..4u64 {
            let (sent, now) = (t(1_000 + 100 * k), t(1_050 + 100 * k));
            for _ in 0..2 {
                cc.on_ack(&mut cx(now, 0), &AckEvent { sent_time: sent, bytes: 1460, app_limited: false });
            }
            let summary = AckSummary {
                acked_bytes: 2_920,
                acked_packets: 2,
                largest_acked_sent_time: sent,
                app_limited: false,
                rate: None,
                ce_packets: 0,
            };
            cc.on_ack_end(&mut cx(now, 0), &summary);
            windows.push(cc.cwnd_bytes());
        }
        windows
    };
    let run = |config: Config| run_with(config, &init);
    assert_eq!(run(Config::default()), [3_650, 4_234, 4_737, 5_186]);
    // Linux's count (profile "linux"): 2 segments acknowledged per ACK against w = 2, 3, 3, 4
    // segments: +1 segment, carry 0; carry 2 < 3; carry 4 -> +1, carry 1; carry 3 < 4.
    assert_eq!(run_with(Config::default(), &linux), [4_380, 4_380, 5_840, 5_840]);
    assert_eq!(run(Config { per_ack_increase: Some(false), ..Default::default() }), [2_920; 4]);
}

#[test]
fn rto_follows_rfc5681_with_the_transport_loss_window() {
    // Per-byte growth (each `on_ack` call grows the window), to follow the RTO rules alone.
    let per_byte = Config { per_ack_increase: Some(false), ..Default::default() };
    let mut cc = NewReno::new(&per_byte, &InitCtx { mds: 1460, window: &WindowRules::RFC5681, rng: &Rng::from_seed(1) });
    assert_eq!(cc.cwnd_bytes(), 14_600);
    let ack = |cc: &mut NewReno, sent, now| {
        tcp_call(now, |cx| cc.on_ack(cx, &AckEvent { sent_time: sent, bytes: 1460, app_limited: false }))
    };
    let ev = |cc: &mut NewReno, cause, sent, now, lost_bytes| {
        tcp_call(now, |cx| cc.on_congestion_event(cx, &CongestionEvent { cause, sent_time: sent, lost_bytes }))
    };
    for _ in 0..10 {
        ack(&mut cc, t(0), t(100));
    }
    assert_eq!(cc.cwnd_bytes(), 29_200);
    // 20 segments outstanding when the timer fires: ssthresh = max(29200 / 2, 2920) = 14600,
    // cwnd = LW = 1 SMSS.
    ev(&mut cc, CongestionCause::Rto, t(150), t(1_000), 20 * 1460);
    assert_eq!((cc.cwnd_bytes(), cc.metrics().ssthresh_bytes), (1_460, 14_600));
    assert_eq!(cc.metrics().state, CcState::Recovery);
    // The retransmission (sent at the timeout) is acked: slow start from LW.
    ack(&mut cc, t(1_000), t(1_100));
    assert_eq!(cc.cwnd_bytes(), 2_920);
    assert_eq!(cc.metrics().state, CcState::SlowStart);
    // A loss of a packet sent before the timeout does not reduce again.
    ev(&mut cc, CongestionCause::Loss, t(500), t(1_150), 1460);
    assert_eq!(cc.cwnd_bytes(), 2_920);
    // The same segment timing out again (reported with its first send time): ssthresh is
    // kept (RFC 5681 §3.1), cwnd collapses to LW again.
    ev(&mut cc, CongestionCause::Rto, t(150), t(1_200), 1460);
    assert_eq!((cc.cwnd_bytes(), cc.metrics().ssthresh_bytes), (1_460, 14_600));
    // A small flight: ssthresh = max(1460 / 2, 2 · 1460) = 2920.
    let mut small = NewReno::new(&Config::default(), &InitCtx { mds: 1460, window: &WindowRules::RFC5681, rng: &Rng::from_seed(1) });
    ev(&mut small, CongestionCause::Rto, t(10), t(300), 1460);
    assert_eq!((small.cwnd_bytes(), small.metrics().ssthresh_bytes), (1_460, 2_920));
}

#[test]
fn state_labels() {
    let mut cc = new_cc(Config::default());
    ack_one(&mut cc, MDS, t(0), t(100), true);
    assert_eq!(cc.metrics().state, CcState::AppLimited);
    ack_one(&mut cc, MDS, t(0), t(100), false);
    assert_eq!(cc.metrics().state, CcState::SlowStart);
    lose(&mut cc, t(50), t(150));
    assert_eq!(cc.metrics().state, CcState::Recovery);
    // An app-limited ACK of a packet sent in recovery leaves the recovery state.
    ack_one(&mut cc, MDS, t(100), t(200), true);
    assert_eq!(cc.metrics().state, CcState::Recovery);
    ack_one(&mut cc, MDS, t(160), t(250), false);
    assert_eq!(cc.metrics().state, CcState::CongestionAvoidance);
}
/// One ACK of one MDS-sized packet sent at `sent`, acked at `now`, RTT sample `rtt_ms`.
fn hs_ack(cc: &mut NewReno, rtt_ms: u64, sent: SimTime, now: SimTime) {
    crate::hystart::testing::one_ack(cc, MDS, 100_000, rtt_ms, sent, now);
}

#[test]
fn hystart_css_grows_a_quarter_and_a_loss_ends_it() {
    let mut cc = new_cc(Config { hystart: true, ..Config::default() });
    // Round 1 at RTT 100 ms, round 2 at 150 ms (>= 100 + 12.5): 16 ACKs of slow start,
    // 12 520 + 16 · 1252 = 32 552 B, and CSS from the 16th.
    for _ in 0..8 {
        hs_ack(&mut cc, 100, t(0), t(100));
    }
    for _ in 0..8 {
        hs_ack(&mut cc, 150, t(100), t(250));
    }
    assert_eq!(cc.cwnd_bytes(), 32_552);
    // CSS: 1252 / 4 = 313 B per packet.
    for _ in 0..4 {
        hs_ack(&mut cc, 150, t(250), t(400));
    }
    assert_eq!(cc.cwnd_bytes(), 33_804);
    assert_eq!(cc.hystart.as_ref().unwrap().stage(), crate::hystart::Stage::Css { rounds: 1 });
    // A loss in CSS: NewReno's halving, and HyStart++ is over.
    lose(&mut cc, t(300), t(450));
    assert_eq!((cc.cwnd_bytes(), cc.metrics().ssthresh_bytes), (16_902, 16_902));
    assert_eq!(cc.hystart.as_ref().unwrap().stage(), crate::hystart::Stage::Done);
    // Off (the default): the same ACKs are plain slow start.
    let mut plain = new_cc(Config::default());
    for _ in 0..8 {
        hs_ack(&mut plain, 100, t(0), t(100));
    }
    for _ in 0..12 {
        hs_ack(&mut plain, 150, t(100), t(250));
    }
    assert_eq!(plain.cwnd_bytes(), 12_520 + 20 * 1252);
    assert!(plain.hystart.is_none());
}

