//! DualPI2's unit tests: the probabilities against RFC 9332's pseudocode on hand-computed
//! inputs, the classifier, the TS-FIFO's choice, the native L4S step and ramp, overload.

use super::super::codel::tests::{pkt, Log};
use super::*;
use quicksim_engine::Rng;

fn ms(x: u64) -> SimDuration {
    SimDuration::from_millis(x)
}

/// One `dualpi2_update` at `now` with a Classic head packet that has waited `curq` (and an
/// empty L queue).
fn update_with(q: &mut DualPi2<()>, now: SimTime, curq: SimDuration) {
    let (mut rng, mut log) = (Rng::from_seed(1), Log::default());
    q.c = TimedFifo::default();
    q.l = TimedFifo::default();
    if curq > SimDuration::ZERO {
        q.c.push(Queued { pkt: pkt(1, 0, 1500, Ecn::NotEct), enqueued_at: now - curq });
    }
    let mut cx = QdiscCtx::new(now, &mut rng, &mut log);
    q.on_timer(&mut cx);
}

#[test]
fn pi2_probabilities_follow_the_pseudocode_by_hand() {
    // Defaults: alpha = 0.16 Hz, beta = 3.2 Hz, target = 15 ms, k = 2; p' = 0, prevq = 0.
    let mut q: DualPi2<()> = DualPi2::new(&Config::default());
    let t = SimTime::from_millis(1000);
    let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
    // curq = 35 ms: p' += 0.16 (0.035 - 0.015) + 3.2 (0.035 - 0) = 0.0032 + 0.112 = 0.1152;
    // p_CL = 2 * 0.1152 = 0.2304; p_C = 0.1152^2 = 0.01327104.
    update_with(&mut q, t, ms(35));
    assert!(close(q.p_base(), 0.1152) && close(q.p_cl(), 0.2304) && close(q.p_c(), 0.013_271_04));
    // curq = 35 ms again: only the integral term, 0.16 * 0.02 = 0.0032: p' = 0.1184,
    // p_CL = 0.2368, p_C = 0.01401856.
    update_with(&mut q, t + ms(16), ms(35));
    assert!(close(q.p_base(), 0.1184) && close(q.p_cl(), 0.2368) && close(q.p_c(), 0.014_018_56));
    // curq = 5 ms: 0.16 (0.005 - 0.015) + 3.2 (0.005 - 0.035) = -0.0016 - 0.096 = -0.0976:
    // p' = 0.0208, p_CL = 0.0416, p_C = 0.00043264.
    update_with(&mut q, t + ms(32), ms(5));
    assert!(close(q.p_base(), 0.0208) && close(q.p_cl(), 0.0416) && close(q.p_c(), 0.000_432_64));
    // Empty C (curq = 0): 0.16 (-0.015) + 3.2 (-0.005) = -0.0184: p' = 0.0024.
    update_with(&mut q, t + ms(48), SimDuration::ZERO);
    assert!(close(q.p_base(), 0.0024));
    // Again: -0.0024, to 0; a further update would go negative and is held at 0.
    update_with(&mut q, t + ms(64), SimDuration::ZERO);
    update_with(&mut q, t + ms(80), SimDuration::ZERO);
    assert_eq!((q.p_base(), q.p_cl(), q.p_c()), (0.0, 0.0, 0.0));
    // A queue of 500 ms: 0.16 * 0.485 + 3.2 * 0.5 = 1.6776, held at p' = 1: p_CL = p_C = 1.
    update_with(&mut q, t + ms(96), ms(500));
    assert_eq!((q.p_base(), q.p_cl(), q.p_c()), (1.0, 1.0, 1.0));
    assert!(q.overloaded());
}

#[test]
fn the_rfc_s_own_gains_give_their_own_numbers() {
    // RFC 9332 A.1 with RTT_max = 100 ms: Tupdate = 15 ms, alpha = 0.1 * 0.015 / 0.01 =
    // 0.15 Hz, beta = 0.3 / 0.1 = 3 Hz, k = 3 (any k): curq = 20 ms from 0: p' = 0.15 * 0.005
    // + 3 * 0.02 = 0.06075; p_CL = 3 * 0.06075 = 0.18225; p_C = 0.0036905625.
    let cfg = Config { alpha: 0.15, beta: 3.0, k: 3.0, ..Config::default() };
    let mut q: DualPi2<()> = DualPi2::new(&cfg);
    update_with(&mut q, SimTime::from_millis(500), ms(20));
    assert!((q.p_base() - 0.06075).abs() < 1e-12);
    assert!((q.p_cl() - 0.18225).abs() < 1e-12);
    assert!((q.p_c() - 0.003_690_562_5).abs() < 1e-12);
    // p_Cmax = min(1/k^2, 1) = 1/9: p' = 1/3 is the overload's edge.
    q.set_base(0.33);
    assert!(!q.overloaded());
    q.set_base(0.34);
    assert!(q.overloaded());
}

#[test]
fn pi2_reads_the_larger_head_delay_as_linux_or_c_s_alone_as_the_rfc() {
    // C's head has waited 5 ms, L's 35 ms. Linux's max: curq = 35 ms, p' = 0.1152 as above;
    // the RFC's cq.time(): curq = 5 ms, 0.16 * (0.005 - 0.015) + 3.2 * 0.005 = 0.0144.
    for (mode, want) in [(Pi2Delay::Max, 0.1152), (Pi2Delay::Classic, 0.0144)] {
        let mut q: DualPi2<()> = DualPi2::new(&Config { pi2_qdelay: mode, ..Config::default() });
        let now = SimTime::from_millis(1000);
        q.c.push(Queued { pkt: pkt(1, 0, 1500, Ecn::NotEct), enqueued_at: now - ms(5) });
        q.l.push(Queued { pkt: pkt(2, 0, 1500, Ecn::Ect1), enqueued_at: now - ms(35) });
        let (mut rng, mut log) = (Rng::from_seed(1), Log::default());
        q.on_timer(&mut QdiscCtx::new(now, &mut rng, &mut log));
        assert!((q.p_base() - want).abs() < 1e-12, "{mode:?}: {}", q.p_base());
    }
}

#[test]
fn ect1_and_ce_go_to_l_not_ect_and_ect0_to_c() {
    assert_eq!(DualPi2::<()>::classify(Ecn::Ect1), Which::L);
    assert_eq!(DualPi2::<()>::classify(Ecn::Ce), Which::L);
    assert_eq!(DualPi2::<()>::classify(Ecn::Ect0), Which::C);
    assert_eq!(DualPi2::<()>::classify(Ecn::NotEct), Which::C);
    let mut q: DualPi2<()> = DualPi2::new(&Config::default());
    let (mut rng, mut log) = (Rng::from_seed(1), Log::default());
    let mut cx = QdiscCtx::new(SimTime::ZERO, &mut rng, &mut log);
    for (u, e) in [Ecn::Ect1, Ecn::Ce, Ecn::Ect0, Ecn::NotEct, Ecn::Ect1].into_iter().enumerate() {
        let v = q.enqueue(&mut cx, Queued { pkt: pkt(u as u64, 0, 1000, e), enqueued_at: SimTime::ZERO });
        assert!(matches!(v, Verdict::Queued));
    }
    assert_eq!(q.l_len(), QueueLen { packets: 3, bytes: 3000 });
    assert_eq!(q.c_len(), QueueLen { packets: 2, bytes: 2000 });
    assert_eq!((q.len_packets(), q.len_bytes()), (5, 5000));
}

#[test]
fn ts_fifo_serves_c_only_when_its_head_is_older_by_more_than_tshift() {
    // tshift = 50 ms. C's head arrived at 0.
    let mut q: DualPi2<()> = DualPi2::new(&Config::default());
    q.c.push(Queued { pkt: pkt(1, 0, 1500, Ecn::NotEct), enqueued_at: SimTime::ZERO });
    for (l_at, want) in [(40, Which::L), (50, Which::L), (51, Which::C)] {
        q.l = TimedFifo::default();
        q.l.push(Queued { pkt: pkt(2, 0, 1500, Ecn::Ect1), enqueued_at: SimTime::from_millis(l_at) });
        assert_eq!(q.schedule(), Some(want), "L head at {l_at} ms");
    }
    // Through dequeue: C (at 0) then L (at 51 ms) once C's head goes first.
    let (mut rng, mut log) = (Rng::from_seed(1), Log::default());
    let mut cx = QdiscCtx::new(SimTime::from_millis(60), &mut rng, &mut log);
    assert_eq!(q.dequeue(&mut cx).unwrap().uid(), 1);
    assert_eq!(q.dequeue(&mut cx).unwrap().uid(), 2);
    assert!(q.dequeue(&mut cx).is_none());
    // A zero shift is plain FIFO over both queues.
    let mut q: DualPi2<()> = DualPi2::new(&Config { tshift: Dur(SimDuration::ZERO), ..Config::default() });
    q.c.push(Queued { pkt: pkt(1, 0, 1500, Ecn::NotEct), enqueued_at: SimTime::from_millis(1) });
    q.l.push(Queued { pkt: pkt(2, 0, 1500, Ecn::Ect1), enqueued_at: SimTime::from_millis(2) });
    assert_eq!(q.schedule(), Some(Which::C));
}

#[test]
fn native_step_and_ramp() {
    let step: DualPi2<()> = DualPi2::new(&Config::default());
    assert_eq!(step.laqm(SimDuration::from_micros(999)), 0.0);
    assert_eq!(step.laqm(ms(1)), 0.0, "a sojourn equal to the threshold is not above it");
    assert_eq!(step.laqm(SimDuration::from_micros(1001)), 1.0);
    // The RFC's example ramp: minTh = 800 us, range = 400 us.
    let cfg = Config {
        min_th: Dur(SimDuration::from_micros(800)),
        range: Dur(SimDuration::from_micros(400)),
        ..Config::default()
    };
    let ramp: DualPi2<()> = DualPi2::new(&cfg);
    for (us, want) in [(700, 0.0), (800, 0.0), (900, 0.25), (1000, 0.5), (1200, 1.0), (5000, 1.0)] {
        assert!((ramp.laqm(SimDuration::from_micros(us)) - want).abs() < 1e-12, "{us} us");
    }
}

#[test]
fn the_step_marks_l_packets_above_min_th_except_the_last_th_len() {
    // Five ECT(1) packets put in at 0, dequeued at 2 ms (sojourn 2 ms > 1 ms), p_CL = 0:
    // the first four are marked (the L queue holds 5, 4, 3, 2 > Th_len = 1 packets as each
    // leaves), the last one (a queue of 1) is not.
    let mut q: DualPi2<()> = DualPi2::new(&Config::default());
    let (mut rng, mut log) = (Rng::from_seed(1), Log::default());
    for u in 0..5 {
        q.l.push(Queued { pkt: pkt(u, 0, 1500, Ecn::Ect1), enqueued_at: SimTime::ZERO });
    }
    let mut cx = QdiscCtx::new(SimTime::from_millis(2), &mut rng, &mut log);
    let ecn: Vec<Ecn> = std::iter::from_fn(|| q.dequeue(&mut cx).map(|p| p.ecn())).collect();
    assert_eq!(ecn, vec![Ecn::Ce, Ecn::Ce, Ecn::Ce, Ecn::Ce, Ecn::Ect1]);
    assert_eq!(log.marks.len(), 4);
}

/// Dequeues `n` packets of `ecn` from one queue with p' set to `p`; returns (marked, dropped).
fn marks_and_drops(cfg: &Config, p: f64, ecn: Ecn, n: u64) -> (usize, usize) {
    let mut q: DualPi2<()> = DualPi2::new(cfg);
    q.set_base(p);
    let (mut rng, mut log) = (Rng::from_seed(11), Log::default());
    let mut cx = QdiscCtx::new(SimTime::ZERO, &mut rng, &mut log);
    for u in 0..n {
        let v = q.enqueue(&mut cx, Queued { pkt: pkt(u, 0, 1500, ecn), enqueued_at: SimTime::ZERO });
        assert!(matches!(v, Verdict::Queued));
    }
    let mut sent = 0;
    while q.dequeue(&mut cx).is_some() {
        sent += 1;
    }
    assert_eq!(sent + log.drops.len(), n as usize);
    (log.marks.len(), log.drops.len())
}

/// `x` within 4 standard deviations of a binomial(n, p).
fn binomial_ok(x: usize, n: u64, p: f64) -> bool {
    let (mean, sd) = (n as f64 * p, (n as f64 * p * (1.0 - p)).sqrt());
    (x as f64 - mean).abs() <= 4.0 * sd
}

#[test]
fn coupled_l_marking_and_squared_classic_marking_and_dropping() {
    // p' = 0.3: p_CL = 0.6, p_C = 0.09 (below p_Cmax = 0.25: no overload).
    let cfg = Config::default();
    let (m, d) = marks_and_drops(&cfg, 0.3, Ecn::Ect1, 4000);
    assert!(d == 0 && binomial_ok(m, 4000, 0.6), "L: {m} marks, {d} drops");
    let (m, d) = marks_and_drops(&cfg, 0.3, Ecn::Ect0, 4000);
    assert!(d == 0 && binomial_ok(m, 4000, 0.09), "C ECT(0): {m} marks, {d} drops");
    let (m, d) = marks_and_drops(&cfg, 0.3, Ecn::NotEct, 4000);
    // Each drop is followed by another draw for the next packet: every packet is judged
    // once, so the drops are binomial(4000, 0.09).
    assert!(m == 0 && binomial_ok(d, 4000, 0.09), "C Not-ECT: {m} marks, {d} drops");
}

#[test]
fn overload_drops_in_both_queues_unless_switched_off() {
    // p' = 0.6: p_C = 0.36 >= p_Cmax = 0.25, p_CL = 1.
    let on = Config::default();
    // L: dropped with p_C, every survivor marked.
    let (m, d) = marks_and_drops(&on, 0.6, Ecn::Ect1, 4000);
    assert!(binomial_ok(d, 4000, 0.36) && m == 4000 - d, "L: {m} marks, {d} drops");
    // C: ECN-capable packets dropped too, never marked.
    let (m, d) = marks_and_drops(&on, 0.6, Ecn::Ect0, 4000);
    assert!(m == 0 && binomial_ok(d, 4000, 0.36), "C: {m} marks, {d} drops");
    // `overflow` behaviour: marks only.
    let off = Config { drop_on_overload: false, ..Config::default() };
    let (m, d) = marks_and_drops(&off, 0.6, Ecn::Ect1, 4000);
    assert!(d == 0 && m == 4000);
    let (m, d) = marks_and_drops(&off, 0.6, Ecn::Ect0, 4000);
    assert!(d == 0 && binomial_ok(m, 4000, 0.36));
}

#[test]
fn an_unresponsive_l_flow_drives_the_aqm_into_overload() {
    // A 2:1 overload of ECT(1) packets (one every 0.5 ms, service 1 ms) beside a trickle of
    // Classic packets: TS-FIFO lets C wait tshift longer than L, C's delay grows, p' passes
    // 0.5 and L packets start to be dropped; the L queue stays bounded far below the limit.
    let mut q: DualPi2<()> = DualPi2::new(&Config::default());
    let (mut rng, mut log) = (Rng::from_seed(5), Log::default());
    let (mut t, mut link, mut uid) = (SimTime::ZERO, SimTime::ZERO, 0u64);
    let end = SimTime::from_millis(20_000);
    let mut max_l = 0;
    while t < end {
        let next_timer = q.next_timer().unwrap_or(end);
        if next_timer <= t.min(link) {
            let mut cx = QdiscCtx::new(next_timer, &mut rng, &mut log);
            q.on_timer(&mut cx);
        } else if t <= link {
            let mut cx = QdiscCtx::new(t, &mut rng, &mut log);
            let e = if uid % 20 == 0 { Ecn::Ect0 } else { Ecn::Ect1 };
            let _ = q.enqueue(&mut cx, Queued { pkt: pkt(uid, 0, 1500, e), enqueued_at: t });
            uid += 1;
            t += SimDuration::from_micros(500);
        } else {
            let mut cx = QdiscCtx::new(link, &mut rng, &mut log);
            let _ = q.dequeue(&mut cx);
            link += ms(1);
        }
        max_l = max_l.max(q.l_len().packets);
    }
    assert!(q.p_base() >= 0.5, "p' = {}", q.p_base());
    assert!(!log.drops.is_empty() && log.drops.iter().all(|d| d.2 == DropReason::Aqm));
    assert!(max_l < 1000, "the L queue reached {max_l} packets");
}

#[test]
fn the_limit_counts_both_queues() {
    let mut q: DualPi2<()> = DualPi2::new(&Config { packets: 3, ..Config::default() });
    let (mut rng, mut log) = (Rng::from_seed(1), Log::default());
    let mut cx = QdiscCtx::new(SimTime::ZERO, &mut rng, &mut log);
    for (u, e) in [Ecn::Ect1, Ecn::NotEct, Ecn::Ect1].into_iter().enumerate() {
        let v = q.enqueue(&mut cx, Queued { pkt: pkt(u as u64, 0, 1500, e), enqueued_at: SimTime::ZERO });
        assert!(matches!(v, Verdict::Queued));
    }
    let v = q.enqueue(&mut cx, Queued { pkt: pkt(9, 0, 1500, Ecn::Ect0), enqueued_at: SimTime::ZERO });
    assert!(matches!(v, Verdict::Dropped(_, DropReason::Overflow)));
}

#[test]
fn bad_parameters_name_the_field() {
    for (cfg, field) in [
        (Config { k: 0.0, ..Config::default() }, "k"),
        (Config { tupdate: Dur(SimDuration(0)), ..Config::default() }, "tupdate"),
        (Config { alpha: -1.0, ..Config::default() }, "alpha"),
        (Config { beta: f64::NAN, ..Config::default() }, "beta"),
        (Config { packets: 0, ..Config::default() }, "packets"),
        (Config { bytes: Some(Bytes(0)), ..Config::default() }, "bytes"),
    ] {
        assert_eq!(cfg.validate().unwrap_err().field, field);
    }
    assert!(Config::default().validate().is_ok());
}
