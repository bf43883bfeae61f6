//! The sending half against hand-computed windows: the loss window after an RTO, PRR (RFC
//! 6937 and Linux's bound), back-to-back recoveries, ECN reductions through CWR.

use super::*;
use quicksim_cc::RttEstimator;
use quicksim_engine::Rng;

const MSS: u64 = 1000;

fn sender(sack: bool, prr: bool) -> (Sender, TcpConfig, CcCtx<'static>) {
    sender_with("newreno", sack, prr)
}

fn sender_with(cc: &str, sack: bool, prr: bool) -> (Sender, TcpConfig, CcCtx<'static>) {
    let cfg = TcpConfig { cc: quicksim_cc::CcSpec::named(cc).unwrap(), sack, prr, ..Default::default() };
    let s = Sender::new(crate::tcp::cc_for(&cfg, MSS, &Rng::from_seed(1)).unwrap(), MSS, sack, prr);
    let mut rtt = RttEstimator::new(SimDuration::from_millis(100));
    rtt.update(SimDuration::from_millis(100), SimDuration::ZERO, SimDuration::ZERO, true);
    // The context borrows the estimator for the whole test.
    let rtt: &'static RttEstimator = Box::leak(Box::new(rtt));
    let cx = s.cc_ctx(rtt, SimTime::ZERO);
    (s, cfg, cx)
}

/// Sends `n` full segments at `t` ms.
fn send(s: &mut Sender, cx: &CcCtx, n: u64, t: u64) {
    for _ in 0..n {
        s.board.push(s.snd_nxt, MSS as u32, false, SimTime::from_millis(t), Default::default());
        s.snd_nxt += MSS;
        s.on_sent(cx, SimTime::from_millis(t), MSS, false);
    }
}

fn seg(i: u64) -> (u64, u64) {
    (1 + i * MSS, 1 + (i + 1) * MSS)
}

#[test]
fn rto_leaves_a_one_segment_window() {
    let (mut s, _, cx) = sender(true, true);
    s.snd_una = 1;
    s.snd_nxt = 1;
    send(&mut s, &cx, 10, 0);
    // IW (RFC 6928) = min(10·1000, max(2·1000, 14 600)) = 10 000 B.
    assert_eq!(s.cwnd(), 10_000);
    s.on_rto(&cx, SimTime::from_millis(300));
    // RFC 5681 §3.1: ssthresh = max(FlightSize/2, 2·SMSS) = 10 000/2 = 5000; cwnd = LW = 1 SMSS.
    assert_eq!((s.cwnd(), s.cc.metrics().ssthresh_bytes), (1000, 5000));
    assert_eq!((s.state, s.in_flight()), (CaState::Loss, 0));
    assert!(s.window_allows(MSS, false) && !s.window_allows(MSS + 1, false));
}

#[test]
fn prr_spreads_the_reduction_over_the_acks() {
    let (mut s, cfg, cx) = sender(true, true);
    s.snd_una = 1;
    s.snd_nxt = 1;
    s.wnd_right = u64::MAX;
    send(&mut s, &cx, 20, 0);
    let now = SimTime::from_millis(100);
    let sack_to =
        |s: &mut Sender, i: u64| s.on_ack(&cfg, &cx, now, 1, 1, 0, 1 << 20, &[(seg(1).0, seg(i).1)]);
    // Segment 0 lost; the SACKs of 1 and 2 grow cwnd in slow start to 12 000 B; the SACK
    // of 3 makes 0 lost (3 SACKed above): recovery with ssthresh = 6000, RecoverFS = 20 000.
    for i in 1..=3 {
        assert!(sack_to(&mut s, i).dupack);
    }
    assert_eq!(s.state, CaState::Recovery);
    // prr_delivered 1000, pipe = 20 000 − 3000 − 1000 = 16 000 > ssthresh:
    // sndcnt = ceil(1000 · 6000 / 20 000) − 0 = 300 → window = 16 300.
    assert_eq!(s.cwnd(), 16_300);
    // The fast retransmission goes regardless (force_one) and counts in prr_out.
    assert!(s.force_one);
    s.board.on_retransmit(1, now, Default::default());
    s.on_sent(&cx, now, MSS, false);
    // SACKs of 4..8: prr_delivered 6000 → ceil(6000 · 0.3) − 1000 = 800 < 1 segment.
    for i in 4..=8 {
        sack_to(&mut s, i);
        assert!(!s.window_allows(MSS, true), "after SACK {i}");
    }
    // SACK of 9: 7000 → 2100 − 1000 = 1100: one new segment (3 per 10 delivered).
    sack_to(&mut s, 9);
    assert_eq!(s.cwnd(), s.in_flight() + 1_100);
    assert!(s.window_allows(MSS, true));
    // The ACK of everything: Open, cwnd = ssthresh, and then this ACK's own increase (TCP's
    // per-ACK rule, RFC 5681 §3.1): its newest segment, the retransmission, was sent at the
    // instant the recovery started, which counts as after it (INET's `<`, newreno.rs), so
    // 6000 + ⌊1000² / 6000⌋ = 6166.
    s.on_ack(&cfg, &cx, now, 1, seg(19).1, 0, 1 << 20, &[]);
    assert_eq!((s.state, s.cwnd()), (CaState::Open, 6_166));
}

/// DCTCP's cut on CE marks goes through CWR: PRR spreads it over the round trip (Linux
/// `tcp_cwnd_reduction`, RecoverFS = the window before the cut) and the controller's window
/// is in force once data sent after the cut is acknowledged.
#[test]
fn dctcp_cut_is_spread_by_prr_in_cwr() {
    let (mut s, cfg, cx) = sender_with("dctcp", true, true);
    s.accecn = Some(Box::new(crate::tcp::accecn::AccEcn { scalable: true, ..Default::default() }));
    s.snd_una = 1;
    s.snd_nxt = 1;
    s.wnd_right = u64::MAX;
    send(&mut s, &cx, 10, 0);
    let at = SimTime::from_millis;
    let ack = |s: &mut Sender, to: u64, ce: u64, t: u64| {
        s.accecn.as_deref_mut().unwrap().ce_pending = ce;
        s.on_ack(&cfg, &cx, at(t), 1, to, 0, 1 << 20, &[])
    };
    // The first window, unmarked: slow start to 20 000 B; alpha = 1 · 15/16.
    ack(&mut s, seg(9).1, 0, 100);
    assert_eq!((s.state, s.cwnd()), (CaState::Open, 20_000));
    send(&mut s, &cx, 20, 100);
    // Two segments, one marked: alpha = (15/16)·(15/16) + (1/2)/16 = 0.91015625, cut
    // 20 000 · alpha / 2 = 9101 (truncated; the ACK that cuts grows nothing, as Linux's CWR):
    // the target is 10 899 B.
    ack(&mut s, seg(11).1, 1, 200);
    assert_eq!(s.state, CaState::Cwr);
    assert_eq!(s.cc.cwnd_bytes(), 10_899);
    // PRR: pipe 18 000 > 10 899, sndcnt = ceil(2000 · 10 899 / 20 000) − 0 = 1090.
    assert_eq!(s.cwnd(), 18_000 + 1_090);
    assert!(s.window_allows(MSS, false) && !s.window_allows(2 * MSS, false));
    send(&mut s, &cx, 1, 200);
    // Next two segments: ceil(4000 · 10 899 / 20 000) − 1000 = 1180 over pipe 17 000.
    ack(&mut s, seg(13).1, 0, 201);
    assert_eq!(s.cwnd(), 17_000 + 1_180);
    // Marks on data sent before the cut do not cut again.
    ack(&mut s, seg(15).1, 2, 202);
    assert_eq!((s.state, s.cc.cwnd_bytes()), (CaState::Cwr, 10_899));
    // Everything sent before the cut acknowledged, and the segment sent after it: Open, the
    // controller's window in force, grown by congestion avoidance on this ACK (Linux's
    // `tcp_cong_avoid_ai`: 15 segments against a window of 10 whole segments, one more).
    ack(&mut s, seg(30).1, 0, 300);
    assert_eq!(s.state, CaState::Open);
    assert_eq!(s.cwnd(), s.cc.cwnd_bytes());
    assert_eq!(s.cwnd(), 11_899);
}

/// Without PRR, or for a controller that sets its window at once (Prague), the cut applies
/// at once.
#[test]
fn ecn_cut_at_once_without_prr_or_for_prague() {
    for (cc, prr) in [("dctcp", false), ("prague", true)] {
        let (mut s, cfg, cx) = sender_with(cc, true, prr);
        s.accecn = Some(Box::new(crate::tcp::accecn::AccEcn { scalable: true, ..Default::default() }));
        s.snd_una = 1;
        s.snd_nxt = 1;
        s.wnd_right = u64::MAX;
        send(&mut s, &cx, 10, 0);
        s.on_ack(&cfg, &cx, SimTime::from_millis(100), 1, seg(1).1, 0, 1 << 20, &[]);
        send(&mut s, &cx, 4, 100);
        let before = s.cc.cwnd_bytes();
        s.accecn.as_deref_mut().unwrap().ce_pending = 2;
        s.on_ack(&cfg, &cx, SimTime::from_millis(200), 1, seg(3).1, 0, 1 << 20, &[]);
        assert_eq!(s.state, CaState::Open, "{cc}");
        assert!(s.cwnd() < before, "{cc}: {} -> {}", before, s.cwnd());
        assert_eq!(s.cwnd(), s.cc.cwnd_bytes(), "{cc}");
    }
}

/// Linux's PRR bound (`Recovery::Linux`, `tcp_cwnd_reduction`) against RFC 6937's PRR-SSRB
/// after a burst of losses leaves `pipe` below ssthresh: Linux sends what is delivered, one
/// segment more only on an ACK that advances SND.UNA without marking new losses; SSRB adds a
/// segment on every ACK. RecoverFS is the window before the cut (Linux) or the flight size.
#[test]
fn linux_prr_conserves_packets_below_ssthresh() {
    for linux in [false, true] {
        let (mut s, cfg, cx) = sender(true, true);
        s.linux_recovery = linux;
        s.snd_una = 1;
        s.snd_nxt = 1;
        s.wnd_right = u64::MAX;
        send(&mut s, &cx, 20, 0);
        let now = SimTime::from_millis(100);
        let ack = |s: &mut Sender, una: u64, top: u64| {
            s.on_ack(&cfg, &cx, now, 1, una, 0, 1 << 20, &[(seg(14).0, seg(top).1)])
        };
        // Segments 0..13 lost. The SACKs of 14 and 15 grow slow start to 12 000 B; the SACK of
        // 16 marks 0..13 lost (RFC 6675 IsLost): recovery, ssthresh 12 000 / 2 = 6000, pipe
        // 20 000 − 3000 − 14 000 = 3000. Linux: MAX(1000 − 0, 1000) = 1000, no SND.UNA
        // advance; SSRB: 1000 + 1000 = 2000.
        ack(&mut s, 1, 14);
        ack(&mut s, 1, 15);
        ack(&mut s, 1, 16);
        assert_eq!((s.state, s.cc.cwnd_bytes(), s.in_flight()), (CaState::Recovery, 6_000, 3_000));
        assert_eq!(s.recover_fs, if linux { 12_000 } else { 20_000 }, "linux {linux}");
        assert_eq!(s.cwnd(), if linux { 4_000 } else { 5_000 }, "linux {linux}");
        // The fast retransmission of segment 0 (prr_out 1000), then the SACK of 17:
        // prr_delivered 2000, pipe 3000. Linux: MAX(2000 − 1000, 1000) = 1000; SSRB 2000.
        s.board.on_retransmit(1, now, Default::default());
        s.on_sent(&cx, now, MSS, false);
        ack(&mut s, 1, 17);
        assert_eq!(s.in_flight(), 3_000);
        assert_eq!(s.cwnd(), if linux { 4_000 } else { 5_000 }, "linux {linux}");
        // The retransmission arrives: SND.UNA moves past segment 0 without new losses:
        // prr_delivered 3000 − prr_out 1000 = 2000, and Linux's extra segment: 3000; pipe
        // 2000 (segment 0 left it), so the window is min(6000 − 2000, 3000) + 2000 = 5000.
        // SSRB: 2000 + 1000 = 3000 as well.
        ack(&mut s, seg(0).1, 17);
        assert_eq!(s.in_flight(), 2_000);
        assert_eq!(s.cwnd(), 5_000, "linux {linux}");
    }
}

/// An ACK that reaches the recovery point while segments sent during the recovery are marked
/// lost: Linux starts the next recovery on it (`tcp_fastretrans_alert`), from the window the
/// first one ended with, and the window never opens to the old ssthresh; RFC 6675 returns to
/// Open, cwnd = ssthresh, and enters the next recovery on a later ACK.
#[test]
fn linux_recovery_follows_a_recovery_at_once() {
    for linux in [false, true] {
        let (mut s, cfg, cx) = sender(true, true);
        s.linux_recovery = linux;
        s.snd_una = 1;
        s.snd_nxt = 1;
        s.wnd_right = u64::MAX;
        send(&mut s, &cx, 10, 0);
        let now = SimTime::from_millis(100);
        // Segment 0 lost: the SACKs of 1..3 (slow start 10 000 -> 12 000 on the first two)
        // start recovery with ssthresh 6000 up to segment 10.
        for i in 1..=3 {
            s.on_ack(&cfg, &cx, now, 1, 1, 0, 1 << 20, &[(seg(1).0, seg(i).1)]);
        }
        assert_eq!((s.state, s.cc.cwnd_bytes(), s.recovery_point), (CaState::Recovery, 6_000, seg(9).1));
        s.board.on_retransmit(1, now, Default::default());
        s.on_sent(&cx, now, MSS, false);
        // Five new segments (10..14) during the recovery; 10 and 11 are lost: the SACKs of 12..14
        // mark them lost (RFC 6675 IsLost), still inside the first recovery.
        send(&mut s, &cx, 5, 100);
        let later = SimTime::from_millis(200);
        s.on_ack(&cfg, &cx, later, 1, 1, 0, 1 << 20, &[(seg(1).0, seg(9).1), (seg(12).0, seg(14).1)]);
        assert_eq!((s.state, s.board.lost_bytes()), (CaState::Recovery, 3_000));
        // The retransmission of 0 is acknowledged: SND.UNA reaches the recovery point.
        let o = s.on_ack(&cfg, &cx, later, 1, seg(9).1, 0, 1 << 20, &[(seg(12).0, seg(14).1)]);
        if linux {
            // The next recovery at once: ssthresh 6000 / 2 = 3000, up to segment 15; PRR from
            // the window the first ended with (6000), pipe = 5000 − 3000 − 2000 = 0: one
            // segment, for the one this ACK delivered (the retransmitted segment 0).
            assert!(o.entered_recovery);
            assert_eq!((s.state, s.cc.cwnd_bytes(), s.recovery_point), (CaState::Recovery, 3_000, seg(14).1));
            assert_eq!((s.recover_fs, s.in_flight(), s.cwnd()), (6_000, 0, 1_000));
        } else {
            // Open with the whole ssthresh (6000) over a pipe of 0: a burst of six segments
            // (this ACK's per-ACK increase, ⌊1000² / 6000⌋ = 166 B, adds no whole segment).
            assert!(!o.entered_recovery);
            assert_eq!((s.state, s.cwnd()), (CaState::Open, 6_166));
        }
    }
}
