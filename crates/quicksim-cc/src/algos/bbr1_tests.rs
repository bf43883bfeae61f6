//! BBRv1's state machine, fed synthetic rate samples (exact transitions) and run on the
//! one-flow test path (timings): Startup exits after three rounds without 25 % growth, Drain
//! ends when in flight ≤ BDP, ProbeBW cycles its eight gains one RTprop each, ProbeRTT comes
//! every 10 s and holds 4 segments for 200 ms.

use super::*;
use crate::testpath::{fixed_rtt, rate_ack, Path};
use crate::{RttEstimator, WindowRules};

const MDS: u64 = 1448;

fn bbr() -> Bbr1 {
    Bbr1::new(&Config::default(), &InitCtx { mds: MDS, window: &WindowRules::RFC5681, rng: &Rng::from_seed(1) })
}

fn ms(v: u64) -> SimTime {
    SimTime::from_millis(v)
}

/// One ACK of one segment that starts a new round, measuring `bw_bps`, `inflight` left.
fn ack(b: &mut Bbr1, rtt: &RttEstimator, now: SimTime, bw_bps: u64, inflight: u64) {
    let delivered = b.delivered;
    rate_ack(b, MDS, delivered, rtt, now, (bw_bps, inflight, 0));
}

fn rtt40() -> RttEstimator {
    fixed_rtt(40)
}

#[test]
fn startup_exits_after_three_rounds_without_25_percent_growth_then_drains() {
    let (mut b, rtt) = (bbr(), rtt40());
    let mut t = 40;
    // Doubling each round: Startup.
    for mbps in [1, 2, 4, 8] {
        ack(&mut b, &rtt, ms(t), mbps * 1_000_000, 20_000);
        t += 40;
        assert_eq!(b.mode(), Mode::Startup);
    }
    // 10 Mbit/s is exactly 25 % above 8: still growth (full_bw = 10). Then 11, 12 (< 12.5)
    // and 12 again: three rounds below 25 % growth; the third ends Startup.
    for (i, mbps) in [10, 11, 12, 12].into_iter().enumerate() {
        ack(&mut b, &rtt, ms(t), mbps * 1_000_000, 200_000);
        t += 40;
        let want = if i < 3 { Mode::Startup } else { Mode::Drain };
        assert_eq!(b.mode(), want, "after {mbps} Mbit/s (round {i})");
    }
    assert!((b.pacing_gain() - 1.0 / 2.89).abs() < 1e-9);
    // Drain lasts while more than one BDP (12 Mbit/s · 40 ms = 60 000 B, + 3 segments) is in
    // flight; at that level ProbeBW starts.
    let bdp = 60_000 + 3 * MDS;
    ack(&mut b, &rtt, ms(t), 12_000_000, bdp + 1);
    assert_eq!(b.mode(), Mode::Drain);
    ack(&mut b, &rtt, ms(t + 40), 12_000_000, bdp);
    assert_eq!(b.mode(), Mode::ProbeBw);
    assert_eq!(b.btl_bw(), Rate::mbps(12));
}

#[test]
fn probe_bw_cycles_the_eight_gains_one_rtprop_each() {
    // 10 Mbit/s, 40 ms, a 2 BDP buffer, no loss: record each change of the pacing gain.
    let path = Path { rate: Rate::mbps(10), base_rtt: SimDuration::from_millis(40), mds: MDS, buffer: 100_000, loss_every: 0 };
    let mut b = bbr();
    let mut changes: Vec<(SimTime, f64)> = Vec::new();
    path.run(&mut b, SimDuration::from_secs(8), |now, b, _| {
        if b.mode() == Mode::ProbeBw && changes.last().is_none_or(|c| c.1 != b.pacing_gain()) {
            changes.push((now, b.pacing_gain()));
        }
    });
    // After the first 1.25 phase the cycle repeats 1.25, 0.75, then 1 for six RTprops: over
    // the run's remaining ~7.5 s, at 8 · 40+ ms a cycle, 20+ cycles.
    let first = changes.iter().position(|c| c.1 == 1.25).expect("a probing phase");
    let seq: Vec<f64> = changes[first..].iter().map(|c| c.1).collect();
    assert!(seq.len() >= 40, "{seq:?}");
    for w in seq.chunks_exact(3) {
        assert_eq!(w, &[1.25, 0.75, 1.0], "{seq:?}");
    }
    // Each 1.25 phase lasts at least one RTprop (≥ 40 ms); a whole cycle 8 RTprops with the
    // queueing the probe adds (8 · 40 ms to 8 · 60 ms).
    let probes: Vec<SimTime> = changes[first..].iter().filter(|c| c.1 == 1.25).map(|c| c.0).collect();
    for w in probes.windows(2) {
        let d = (w[1] - w[0]).as_secs_f64();
        assert!((0.32..0.48).contains(&d), "cycle of {d} s");
    }
}

#[test]
fn probe_rtt_every_10_s_holds_4_segments_for_200_ms() {
    let path = Path { rate: Rate::mbps(10), base_rtt: SimDuration::from_millis(40), mds: MDS, buffer: 100_000, loss_every: 0 };
    let mut b = bbr();
    // (entry, exit, largest window inside, RTprop's timestamp just before the entry)
    let mut spans: Vec<(SimTime, SimTime, u64, SimTime)> = Vec::new();
    let mut inside: Option<(SimTime, u64, SimTime)> = None;
    let mut stamp = SimTime::ZERO;
    path.run(&mut b, SimDuration::from_secs(32), |now, b, _| {
        match (b.mode() == Mode::ProbeRtt, inside) {
            (true, None) => inside = Some((now, b.cwnd_bytes(), stamp)),
            (true, Some((t0, c, st))) => inside = Some((t0, c.max(b.cwnd_bytes()), st)),
            (false, Some((t0, c, st))) => {
                spans.push((t0, now, c, st));
                inside = None;
            }
            (false, None) => {}
        }
        stamp = b.rtprop_stamp;
    });
    // Three in 32 s: RTprop (refreshed by Startup's samples, by any sample as low, and by each
    // ProbeRTT's exit) expires 10 s after its last refresh; the ACK after that enters ProbeRTT.
    assert_eq!(spans.len(), 3, "{spans:?}");
    for &(t0, t1, max_cwnd, refreshed) in &spans {
        let gap = (t0 - refreshed).as_secs_f64();
        assert!((10.0..10.005).contains(&gap), "ProbeRTT {gap} s after the last RTprop refresh");
        assert_eq!(max_cwnd, 4 * MDS, "ProbeRTT window");
        let held = (t1 - t0).as_secs_f64();
        // Draining to 4 segments takes up to an RTT (plus the queue); then 200 ms and a round.
        assert!((0.2..0.35).contains(&held), "held {held} s");
    }
}

#[test]
fn random_loss_barely_moves_the_window_and_the_rate() {
    // 1 % loss (every 100th packet) on 10 Mbit/s / 40 ms: BBRv1 ignores loss outside recovery
    // episodes, so the bottleneck stays busy: ≥ 90 % of 10 Mbit/s delivered after Startup.
    let path = Path { rate: Rate::mbps(10), base_rtt: SimDuration::from_millis(40), mds: MDS, buffer: 100_000, loss_every: 100 };
    let mut b = bbr();
    let (mut acks_after_2s, mut t_last) = (0u64, SimTime::ZERO);
    path.run(&mut b, SimDuration::from_secs(12), |now, _, _| {
        if now >= ms(2000) {
            acks_after_2s += 1;
            t_last = now;
        }
    });
    let bps = (acks_after_2s * MDS * 8) as f64 / (t_last - ms(2000)).as_secs_f64();
    assert!(bps >= 0.9e7, "{bps} bit/s");
}

/// The ProbeBW start phase is drawn from the connection's own stream (`InitCtx::rng`), not the
/// clock: the same stream gives the same phases at any times, also across an encoding (a parked
/// connection), another stream others; every phase but the 0.75 one (index 1) comes first.
#[test]
fn probe_bw_start_phases_come_from_the_connections_stream() {
    let mk = |seed| {
        Bbr1::new(&Config::default(), &InitCtx { mds: MDS, window: &WindowRules::RFC5681, rng: &Rng::from_seed(seed) })
    };
    let phases = |b: &mut Bbr1, n: u64, t0: u64| {
        (0..n)
            .map(|i| {
                b.enter_probe_bw(ms(t0 + 1_000 * i));
                b.cycle_index
            })
            .collect::<Vec<_>>()
    };
    let all = phases(&mut mk(1), 200, 0);
    let mut c = mk(1);
    let head = phases(&mut c, 50, 3);
    let mut c: Bbr1 = postcard::from_bytes(&postcard::to_allocvec(&c).unwrap()).unwrap();
    let tail = phases(&mut c, 150, 98_765);
    assert_eq!([head, tail].concat(), all);
    let mut seen: Vec<usize> = all.clone();
    seen.sort_unstable();
    seen.dedup();
    assert_eq!(seen, vec![0, 2, 3, 4, 5, 6, 7]);
    assert_ne!(phases(&mut mk(2), 200, 0), all);
}
