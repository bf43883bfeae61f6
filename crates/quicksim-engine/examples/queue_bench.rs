//! Binary heap (`EventQueue`) vs calendar queue (`CalendarQueue`) on the hold model: N pending
//! events; each operation pops the earliest and schedules one new event at now + an increment.
//! `cargo run --release --example queue_bench -p quicksim-engine [-- OPS [N ...]]` prints ns per
//! hold operation (median of 3 runs) for several N (default 256, 4096, 65536; OPS default 30 000,
//! a few seconds in all) and increment mixes. Both queues carry the same
//! 16-byte payload and pop in the same order (checked on the fly by a checksum of the payloads).

use quicksim_engine::{CalendarQueue, EventQueue, Rng, SimTime};
use std::time::Instant;

#[derive(Clone, Copy)]
enum Mix {
    /// What the world schedules outside the per-link FIFO lanes: serialization ends (~1-2 us at
    /// 1-10 Gbit/s), transport timers (1-200 ms), a few same-time events.
    Network,
    /// Classic hold-model increments: exponential, mean 1 ms.
    Exponential,
    /// Ties and far-apart times mixed: 10 ms propagation (many equal times) and 1 us events.
    Bimodal,
}

fn increment(mix: Mix, rng: &mut Rng) -> u64 {
    const US: u64 = 1_000_000;
    match mix {
        Mix::Network => match rng.range_u64(0, 99) {
            0..=4 => 0,
            5..=84 => rng.range_u64(US, 2 * US),
            _ => rng.range_u64(1_000 * US, 200_000 * US),
        },
        Mix::Exponential => (rng.exponential(1.0) * 1e9) as u64,
        Mix::Bimodal => {
            if rng.range_u64(0, 1) == 0 {
                10_000 * US
            } else {
                rng.range_u64(US / 2, 3 * US / 2)
            }
        }
    }
}

trait Queue {
    fn push(&mut self, at: SimTime, ev: [u64; 2]);
    fn pop(&mut self) -> Option<(SimTime, [u64; 2])>;
}
impl Queue for EventQueue<[u64; 2]> {
    fn push(&mut self, at: SimTime, ev: [u64; 2]) {
        EventQueue::push(self, at, ev)
    }
    fn pop(&mut self) -> Option<(SimTime, [u64; 2])> {
        EventQueue::pop(self)
    }
}
impl Queue for CalendarQueue<[u64; 2]> {
    fn push(&mut self, at: SimTime, ev: [u64; 2]) {
        CalendarQueue::push(self, at, ev)
    }
    fn pop(&mut self) -> Option<(SimTime, [u64; 2])> {
        CalendarQueue::pop(self)
    }
}

/// ns per hold operation, and a checksum of the popped (time, payload) sequence.
fn hold<Q: Queue>(q: &mut Q, n: usize, ops: usize, mix: Mix) -> (f64, u64) {
    let mut rng = Rng::from_seed(42);
    for i in 0..n {
        q.push(SimTime(increment(mix, &mut rng)), [i as u64, 0]);
    }
    let mut sum = 0u64;
    let started = Instant::now();
    for i in 0..ops {
        let (t, ev) = q.pop().expect("n > 0");
        sum = sum.wrapping_mul(31).wrapping_add(t.0 ^ ev[0]);
        q.push(SimTime(t.0 + increment(mix, &mut rng)), [(n + i) as u64, t.0]);
    }
    (started.elapsed().as_nanos() as f64 / ops as f64, sum)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).expect("finite"));
    v[v.len() / 2]
}

/// Default hold operations per measurement and queue sizes: the whole table in seconds. The
/// calendar queue's worst case sets the pace: in the network mix at N = 4096 its cost per
/// operation grows with the run (7 us/op over 20 000 operations, 54 us/op over 100 000), which
/// made the former default (2 M operations, N up to 1 M) run for more than 10 minutes.
const DEFAULT_OPS: usize = 30_000;
const DEFAULT_SIZES: [usize; 3] = [256, 4_096, 65_536];
const REPS: usize = 3;

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|s| s.parse().unwrap_or_else(|_| panic!("arguments are numbers: OPS [N ...], not {s:?}")))
        .collect();
    let ops = args.first().copied().unwrap_or(DEFAULT_OPS);
    let sizes = if args.len() > 1 { args[1..].to_vec() } else { DEFAULT_SIZES.to_vec() };
    println!("{ops} hold operations per run, median of {REPS} runs");
    println!("{:<12} {:>8} {:>14} {:>14} {:>8}", "mix", "N", "heap ns/op", "calendar ns/op", "ratio");
    for (name, mix) in
        [("network", Mix::Network), ("exponential", Mix::Exponential), ("bimodal", Mix::Bimodal)]
    {
        for &n in &sizes {
            let (mut h, mut c) = (Vec::new(), Vec::new());
            for _ in 0..REPS {
                let (th, sh) = hold(&mut EventQueue::new(), n, ops, mix);
                let (tc, sc) = hold(&mut CalendarQueue::new(), n, ops, mix);
                assert_eq!(sh, sc, "the two queues popped different sequences");
                h.push(th);
                c.push(tc);
            }
            let (mh, mc) = (median(h), median(c));
            println!("{name:<12} {n:>8} {mh:>14.1} {mc:>14.1} {:>8.2}", mh / mc);
        }
    }
}
