//! RFC 6356's goals checked on a Monte-Carlo toy: flows advance in rounds of one RTT (100 ms
//! for every path, so throughput is proportional to the packets delivered), and each packet
//! crossing a bottleneck is lost with a probability that grows with the bottleneck's load (a
//! RED-like linear ramp), drawn from a seeded stream. Every flow crossing a bottleneck sees the
//! same loss probability, which is what RFC 6356 §3 derives alpha from. The controllers are the
//! real ones ([`Coupling`] and [`NewReno`]), fed per-packet ACKs and one congestion event per
//! round with a loss, as a transport would.

use super::{Coupling, PathIdx};
use crate::algos::newreno::{self, NewReno};
use crate::{
    AckEvent, AckSummary, Algorithm, CcCtx, CcSpec, CongestionCause, CongestionEvent, InitCtx, RttEstimator,
    WindowRules,
};
use quicksim_engine::{Rng, SimDuration, SimTime};

const MDS: u64 = 1252;
const RTT_MS: u64 = 100;
/// Loss probability per packet: 0 up to `RAMP_START` packets per RTT on a bottleneck, then
/// rising by `RAMP_SLOPE` per packet (1000 packets more add 0.1).
const RAMP_START: f64 = 50.0;
const RAMP_SLOPE: f64 = 1e-4;

const RENO: newreno::Config = super::RENO;

/// A window-based sender in the toy: one path of the multipath connection, or the single-path
/// NewReno flow.
enum Sender {
    Path(PathIdx),
    Single,
}

struct Toy {
    mp: Coupling,
    single: NewReno,
    rtt: RttEstimator,
    rng: Rng,
    window: &'static WindowRules,
}

/// What a run measured: packets delivered per multipath path and by the single-path flow.
#[derive(Debug)]
struct Delivered {
    paths: Vec<u64>,
    single: u64,
}

impl Toy {
    fn new(spec: &CcSpec, n_paths: usize, seed: u64) -> Toy {
        let window = &WindowRules::RFC9002;
        let rng = Rng::from_seed(seed);
        let init = InitCtx { mds: MDS, window, rng: &rng };
        let mut mp = Coupling::new(spec);
        for _ in 0..n_paths {
            mp.add_path(spec, &init);
        }
        let mut rtt = RttEstimator::new(SimDuration::from_millis(RTT_MS));
        rtt.update(SimDuration::from_millis(RTT_MS), SimDuration::ZERO, SimDuration::ZERO, true);
        Toy { mp, single: NewReno::new(&RENO, &init), rtt, rng, window }
    }

    fn cwnd(&self, s: &Sender) -> u64 {
        match s {
            Sender::Path(p) => self.mp.cwnd_bytes(*p),
            Sender::Single => self.single.cwnd,
        }
    }

    /// One round of `s` starting at `t` with per-packet loss probability `p`: the packets
    /// before the first loss are acked (growing the window), the first loss is one congestion
    /// event, and the rest are acked in the recovery period. Returns the packets delivered.
    fn round(&mut self, s: &Sender, t: SimTime, p: f64) -> u64 {
        let n = (self.cwnd(s) / MDS).max(1);
        let now = t + SimDuration::from_millis(RTT_MS);
        let (rtt, window) = (self.rtt, self.window);
        let mut cx = CcCtx { now, mds: MDS, rtt: &rtt, bytes_in_flight: n * MDS, window };
        let (mut delivered, mut signalled) = (0, false);
        for _ in 0..n {
            cx.bytes_in_flight -= MDS;
            if self.rng.bernoulli(p) {
                if !signalled {
                    let ev = CongestionEvent { cause: CongestionCause::Loss, sent_time: t, lost_bytes: MDS };
                    match s {
                        Sender::Path(i) => self.mp.on_congestion_event(*i, &mut cx, &ev),
                        Sender::Single => {
                            crate::CongestionController::on_congestion_event(&mut self.single, &mut cx, &ev)
                        }
                    }
                    signalled = true;
                }
                continue;
            }
            delivered += 1;
            let ack = AckEvent { sent_time: t, bytes: MDS, app_limited: false };
            match s {
                Sender::Path(i) => self.mp.on_ack(*i, &mut cx, &ack),
                Sender::Single => crate::CongestionController::on_ack(&mut self.single, &mut cx, &ack),
            }
        }
        if delivered > 0 {
            let end = AckSummary {
                acked_bytes: delivered * MDS,
                acked_packets: delivered,
                largest_acked_sent_time: t,
                app_limited: false,
                rate: None,
                ce_packets: 0,
            };
            match s {
                Sender::Path(i) => self.mp.on_ack_end(*i, &mut cx, &end),
                Sender::Single => crate::CongestionController::on_ack_end(&mut self.single, &mut cx, &end),
            }
        }
        delivered
    }

    /// Runs `rounds` rounds. `bottleneck_of[i]` is the bottleneck path i crosses; the
    /// single-path flow crosses bottleneck 0. Every sender's packets in a round count toward
    /// its bottleneck's load, which sets that round's loss probability.
    fn run(&mut self, bottleneck_of: &[usize], rounds: u64) -> Delivered {
        let n = bottleneck_of.len();
        let mut out = Delivered { paths: vec![0; n], single: 0 };
        let warmup = rounds / 10;
        for k in 0..rounds {
            let t = SimTime::from_millis(k * RTT_MS);
            let mut load = [0.0f64; 2];
            for (i, &b) in bottleneck_of.iter().enumerate() {
                load[b] += (self.mp.cwnd_bytes(PathIdx(i as u32)) / MDS) as f64;
            }
            load[0] += (self.single.cwnd / MDS) as f64;
            let p = load.map(|l| ((l - RAMP_START) * RAMP_SLOPE).clamp(0.0, 1.0));
            for (i, &b) in bottleneck_of.iter().enumerate() {
                let d = self.round(&Sender::Path(PathIdx(i as u32)), t, p[b]);
                if k >= warmup {
                    out.paths[i] += d;
                }
            }
            let d = self.round(&Sender::Single, t, p[0]);
            if k >= warmup {
                out.single += d;
            }
        }
        out
    }
}

fn specs() -> [(&'static str, CcSpec); 4] {
    let reno = CcSpec::Builtin(crate::BuiltinConfig::NewReno(RENO));
    [
        ("uncoupled", reno),
        ("lia", CcSpec::named("lia").unwrap()),
        ("olia", CcSpec::named("olia").unwrap()),
        ("balia", CcSpec::named("balia").unwrap()),
    ]
}

const ROUNDS: u64 = 20_000;
const SEEDS: [u64; 3] = [1, 2, 3];

/// RFC 6356 goals 1 and 2 at a shared bottleneck: a two-path connection whose paths both cross
/// the bottleneck of a single-path NewReno flow. The coupled algorithms take what the single
/// flow takes (ratio 1.0); two uncoupled NewReno paths take twice as much (2.0).
#[test]
fn shared_bottleneck_ratio_is_one_coupled_and_two_uncoupled() {
    for (name, spec) in specs() {
        let (mut mp, mut single) = (0, 0);
        for seed in SEEDS {
            let d = Toy::new(&spec, 2, seed).run(&[0, 0], ROUNDS);
            mp += d.paths.iter().sum::<u64>();
            single += d.single;
        }
        let ratio = mp as f64 / single as f64;
        eprintln!("{name}: multipath/single = {ratio:.3}");
        // 54 000 RTTs of ~30-packet windows: about 3600 loss cycles per flow, so the ratio's
        // sampling error is about 2 %. Measured (these seeds): uncoupled 1.99, LIA 1.11, OLIA
        // 1.05, BALIA 1.06. The coupled ones sit above the fluid model's 1.0 for a mechanism
        // the fluid model lacks: the two windows fluctuate apart (each loss halves one of
        // them), and LIA's alpha = max/total at equal RTTs averaged 0.83 in this toy instead
        // of the balanced 0.5, so the aggregate grows faster than one NewReno between losses;
        // OLIA and BALIA weigh the windows differently and show a smaller excess. Hence the
        // upper band of +15 %.
        let (lo, hi) = if name == "uncoupled" { (1.9, 2.1) } else { (0.95, 1.15) };
        assert!((lo..hi).contains(&ratio), "{name}: ratio {ratio:.3} not in [{lo}, {hi})");
    }
}

/// RFC 6356 goal 3: one path shares the single-path flow's bottleneck (congested), the other
/// has a bottleneck of its own (free). The coupled algorithms send a larger share on the free
/// path than uncoupled NewReno does, and OLIA (Pareto-optimal) the largest.
#[test]
fn coupled_algorithms_move_traffic_to_the_free_path() {
    let mut share = Vec::new();
    for (name, spec) in specs() {
        let (mut congested, mut free) = (0, 0);
        for seed in SEEDS {
            let d = Toy::new(&spec, 2, seed).run(&[0, 1], ROUNDS);
            congested += d.paths[0];
            free += d.paths[1];
        }
        let s = free as f64 / (free + congested) as f64;
        eprintln!("{name}: share on the free path = {s:.3}");
        share.push((name, s));
    }
    let uncoupled = share[0].1;
    for &(name, s) in &share[1..] {
        assert!(s > uncoupled + 0.05, "{name}: share {s:.3} not above uncoupled {uncoupled:.3}");
    }
    let olia = share[2].1;
    assert!(olia >= share[1].1, "OLIA {olia:.3} below LIA {:.3}", share[1].1);
}
