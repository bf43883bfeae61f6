//! DDSketch without a logarithm per sample: the sketch's key of an integer delay (ps) from its
//! leading zeros and mantissa bits, and the per-key counts the delay statistics keep per bin
//! and per run (a few keys inline, dense past that).
//!
//! The sketch is the `sketches-ddsketch` crate's (Masson et al., VLDB 2019), configured with
//! `alpha` = 1 %: a value v > 1 ns has key `floor(ln(v) / ln(gamma))`, gamma = 1.01 / 0.99, and
//! every quantile it returns is within 1 % (relative) of the exact sample quantile. Computing
//! that key per sample (a logarithm and a `floor` call) was most of the statistics' cost, so
//! here each delay first falls in one of 128 integer buckets per power of two (its top 8
//! significant bits: a bucket is at most 1/128 wide, narrower than a key's 2 %, so it holds at
//! most one key boundary); a bucket remembers its key and where in it the next key starts, found
//! once with the crate's own `Config::key`. The key is therefore the crate's, bit for bit (a
//! unit test compares them across the whole range), and so are the counts: [`Hist::sketch`]
//! hands them to a `DDSketch`, whose quantiles [`Hist::stats`] reproduces without building one
//! (the same rank rule and key values; compared in a test).

use sketches_ddsketch::{Config, DDSketch};

/// Relative accuracy of every quantile (DDSketch's `alpha`).
pub const RELATIVE_ACCURACY: f64 = 0.01;
/// Keys of one sketch before its lowest ones collapse: 2048 keys at 1 % cover delays from 1 ns
/// beyond 10^8 s (the whole u64 range of picoseconds is 1 860 keys), so none ever collapses.
const MAX_BINS: u32 = 2048;
/// Values at or below this (s) count as zero delay (the sketch's zero bucket).
const MIN_VALUE_S: f64 = 1e-9;
/// Mantissa bits below the leading one that choose a bucket: 2^7 buckets per power of two.
const SUB: u32 = 7;
const SUB_MASK: u64 = (1 << SUB) - 1;

/// The sketch's configuration.
pub fn config() -> Config {
    Config::new(RELATIVE_ACCURACY, MAX_BINS, MIN_VALUE_S)
}

/// Picoseconds as seconds, the value the sketch's key is computed from.
#[inline]
pub fn ps_s(ps: u64) -> f64 {
    ps as f64 * 1e-12
}

/// A bucket's key and the first value (ps) in it with the next key (`u64::MAX`: none, so a
/// delay of u64::MAX ps, 213 days, would be a key too high; 0: the bucket is not known yet).
#[derive(Clone, Copy, Default)]
struct Bucket {
    key: i32,
    next_at: u64,
}

/// The sketch's key of a delay in picoseconds, through the buckets met so far.
pub struct Keys {
    config: Config,
    /// Delays below this (ps) are in the zero bucket (`ps_s(ps) <= MIN_VALUE_S`).
    zero_below: u64,
    /// By bucket index (`(exponent - SUB) * 128 + mantissa`), filled when first met.
    buckets: Vec<Bucket>,
    /// `Config::value` of key `k` at `k - key_lo` (NaN: not computed yet; an `exp` each).
    values: Vec<f64>,
    key_lo: i32,
}

impl Keys {
    pub fn new() -> Keys {
        let config = config();
        // The crate's test is `v > min_possible`; find the first integer that passes it.
        let mut z = (MIN_VALUE_S * 1e12) as u64;
        while z > 1 && ps_s(z - 1) > MIN_VALUE_S {
            z -= 1;
        }
        while ps_s(z) <= MIN_VALUE_S {
            z += 1;
        }
        debug_assert!(z > 1 << (SUB + 1), "bucket indexes need the leading bit above SUB");
        let key_lo = config.key(ps_s(z));
        Keys { config, zero_below: z, buckets: Vec::new(), values: Vec::new(), key_lo }
    }

    /// The key of `ps`, None for the zero bucket.
    #[inline]
    pub fn key(&mut self, ps: u64) -> Option<i32> {
        if ps < self.zero_below {
            return None;
        }
        let sh = 63 - ps.leading_zeros() - SUB;
        let i = ((sh as usize) << SUB) | ((ps >> sh) & SUB_MASK) as usize;
        let b = match self.buckets.get(i) {
            Some(b) if b.next_at != 0 => *b,
            _ => self.fill(i, sh),
        };
        Some(b.key + (ps >= b.next_at) as i32)
    }

    /// Finds bucket `i`'s key and boundary with the crate's key function (a few logarithms,
    /// once per bucket a run meets).
    #[cold]
    fn fill(&mut self, i: usize, sh: u32) -> Bucket {
        if self.buckets.len() <= i {
            self.buckets.resize(i + 1, Bucket::default());
        }
        let cfg = self.config;
        let key = |ps: u64| cfg.key(ps_s(ps));
        let lo = ((1 << SUB) | (i as u64 & SUB_MASK)) << sh;
        let hi = lo + ((1u64 << sh) - 1);
        let (klo, khi) = (key(lo), key(hi));
        assert!(khi - klo <= 1, "a bucket narrower than a key holds at most one key boundary");
        let next_at = if klo == khi {
            u64::MAX
        } else {
            // The smallest ps with the higher key, in (lo, hi]: bisection, first narrowed
            // around where gamma^khi says it is.
            let (mut a, mut b) = (lo, hi);
            let est = (cfg.pow_gamma(khi) * 1e12) as u64;
            for g in [est.saturating_sub(2), est.saturating_add(2)] {
                if g > a && g < b {
                    if key(g) == klo {
                        a = g;
                    } else {
                        b = g;
                    }
                }
            }
            while b - a > 1 {
                let m = a + (b - a) / 2;
                if key(m) == klo {
                    a = m;
                } else {
                    b = m;
                }
            }
            b
        };
        let bucket = Bucket { key: klo, next_at };
        self.buckets[i] = bucket;
        bucket
    }

    /// The value the sketch gives for key `k` (`Config::value`), computed once per key.
    pub fn value(&mut self, k: i32) -> f64 {
        let i = (k - self.key_lo) as usize;
        if self.values.len() <= i {
            self.values.resize(i + 1, f64::NAN);
        }
        if self.values[i].is_nan() {
            self.values[i] = self.config.value(k);
        }
        self.values[i]
    }

    /// The configuration the keys are of.
    pub fn config(&self) -> &Config {
        &self.config
    }
}

/// Distinct keys a histogram keeps inline before its counts turn dense.
const FEW: usize = 4;
/// The zero bucket's key in the inline form (below every real key: about -1 040 to 840).
const ZERO: i16 = i16::MIN;

/// Samples counted per sketch key, with their exact count and sum.
///
/// A few samples (at most [`FEW`] distinct keys, counts below 2^8, sum below 2^64 ps) are kept
/// as inline (key, count) pairs, 24 bytes in all: an idle flow's bin and run costs no heap.
/// Past that the counts are dense over the keys met (a heap block: a sample is an index).
/// The representation does not change any result: the same keys with the same counts.
#[derive(Clone)]
pub struct Hist(Repr);

#[derive(Clone)]
enum Repr {
    /// Pairs with count 0 are unused; [`ZERO`] is the zero bucket.
    Few {
        keys: [i16; FEW],
        counts: [u8; FEW],
        sum_ps: u64,
    },
    Dense(Box<Dense>),
}

/// Dense counts per key over the keys met.
#[derive(Clone, Default)]
struct Dense {
    /// The key of `counts[0]`.
    lo: i32,
    counts: Vec<u64>,
    /// Samples in the zero bucket.
    zero: u64,
    n: u64,
    sum_ps: u128,
}

impl Default for Hist {
    fn default() -> Hist {
        Hist(Repr::Few { keys: [0; FEW], counts: [0; FEW], sum_ps: 0 })
    }
}

impl Dense {
    /// Counts `c` samples of key `k` (None: the zero bucket).
    #[inline]
    fn add_count(&mut self, key: Option<i32>, c: u64) {
        self.n += c;
        match key {
            None => self.zero += c,
            Some(k) => match self.counts.get_mut(k.wrapping_sub(self.lo) as u32 as usize) {
                Some(x) => *x += c,
                None => self.add_outside(k, c),
            },
        }
    }

    /// Counts `c` samples of key `k`, which is outside the keys met so far: widens `counts`.
    #[cold]
    fn add_outside(&mut self, k: i32, c: u64) {
        if self.counts.is_empty() {
            self.lo = k;
            self.counts.push(c);
            return;
        }
        if k < self.lo {
            let more = (self.lo - k) as usize;
            self.counts.splice(0..0, std::iter::repeat_n(0, more));
            self.lo = k;
        } else {
            self.counts.resize((k - self.lo) as usize + 1, 0);
        }
        self.counts[(k - self.lo) as usize] += c;
    }
}

impl Hist {
    /// Counts one sample of `ps` picoseconds with key `key` (`Keys::key(ps)`).
    #[inline]
    pub fn add(&mut self, key: Option<i32>, ps: u64) {
        match &mut self.0 {
            Repr::Dense(d) => {
                d.sum_ps += ps as u128;
                d.add_count(key, 1);
            }
            Repr::Few { .. } => {
                self.add_sum(ps as u128);
                self.add_count(key, 1);
            }
        }
    }

    /// Adds `s` ps to the sum.
    fn add_sum(&mut self, s: u128) {
        if let Repr::Few { sum_ps, .. } = &mut self.0 {
            if let Some(x) = u64::try_from(s).ok().and_then(|s| sum_ps.checked_add(s)) {
                *sum_ps = x;
                return;
            }
        }
        self.dense().sum_ps += s;
    }

    /// Counts `c` samples of key `key` (the sum is added apart).
    fn add_count(&mut self, key: Option<i32>, c: u64) {
        if c == 0 {
            return;
        }
        if let Repr::Few { keys, counts, .. } = &mut self.0 {
            let k = match key {
                None => Some(ZERO),
                Some(k) => i16::try_from(k).ok().filter(|&k| k != ZERO),
            };
            if let Some(k) = k {
                let at = (0..FEW)
                    .find(|&i| counts[i] > 0 && keys[i] == k)
                    .or_else(|| (0..FEW).find(|&i| counts[i] == 0));
                if let Some(i) = at {
                    if let Some(x) = u8::try_from(c).ok().and_then(|c| counts[i].checked_add(c)) {
                        keys[i] = k;
                        counts[i] = x;
                        return;
                    }
                }
            }
        }
        self.dense().add_count(key, c);
    }

    /// The dense form (made from the inline pairs, which then no longer fit).
    fn dense(&mut self) -> &mut Dense {
        if let Repr::Few { .. } = self.0 {
            let mut d = Dense { sum_ps: self.sum(), ..Dense::default() };
            self.each(|k, c| d.add_count(k, c));
            self.0 = Repr::Dense(Box::new(d));
        }
        match &mut self.0 {
            Repr::Dense(d) => d,
            Repr::Few { .. } => unreachable!("made dense above"),
        }
    }

    /// The sum of the samples (ps).
    fn sum(&self) -> u128 {
        match &self.0 {
            Repr::Few { sum_ps, .. } => *sum_ps as u128,
            Repr::Dense(d) => d.sum_ps,
        }
    }

    /// Calls `f(key, count)` for every key with samples, in increasing order, the zero bucket
    /// (None) first.
    fn each(&self, mut f: impl FnMut(Option<i32>, u64)) {
        match &self.0 {
            Repr::Few { keys, counts, .. } => {
                let mut e: [(i16, u8); FEW] = std::array::from_fn(|i| (keys[i], counts[i]));
                e.sort_unstable();
                for (k, c) in e.into_iter().filter(|e| e.1 > 0) {
                    f((k != ZERO).then_some(k as i32), c as u64);
                }
            }
            Repr::Dense(d) => {
                if d.zero > 0 {
                    f(None, d.zero);
                }
                for (i, &c) in d.counts.iter().enumerate().filter(|(_, &c)| c > 0) {
                    f(Some(d.lo + i as i32), c);
                }
            }
        }
    }

    /// The number of samples.
    pub fn count(&self) -> u64 {
        match &self.0 {
            Repr::Few { counts, .. } => counts.iter().map(|&c| c as u64).sum(),
            Repr::Dense(d) => d.n,
        }
    }

    /// Adds `o`'s samples to these.
    pub fn merge(&mut self, o: &Hist) {
        self.add_sum(o.sum());
        o.each(|k, c| self.add_count(k, c));
    }

    /// Forgets the samples (keeps the room for the next bin's).
    #[cfg(test)]
    pub fn clear(&mut self) {
        match &mut self.0 {
            Repr::Dense(d) => {
                d.counts.fill(0);
                (d.zero, d.n, d.sum_ps) = (0, 0, 0);
            }
            Repr::Few { .. } => *self = Hist::default(),
        }
    }

    /// The mean (exact, from the sum in ps) and the 0.5, 0.95 and 0.99 quantiles (s), each the
    /// value (`value(key)`; 0 for the zero bucket) of the key at rank `floor(q (n - 1))`, as
    /// the crate's `DDSketch::quantile` gives them for these counts; NaN when empty.
    fn quantiles(&self, mut value: impl FnMut(i32) -> f64) -> [f64; 4] {
        let n = self.count();
        if n == 0 {
            return [f64::NAN; 4];
        }
        let mut out = [(self.sum() as f64 / n as f64) * 1e-12, 0.0, 0.0, 0.0];
        let ranks = [0.5, 0.95, 0.99].map(|q| (q * (n as f64 - 1.0)) as u64);
        let (mut seen, mut next) = (0, 0);
        self.each(|k, c| {
            seen += c;
            while next < 3 && seen > ranks[next] {
                out[next + 1] = k.map_or(0.0, &mut value);
                next += 1;
            }
        });
        out
    }

    /// The mean (exact, from the sum in ps) and the 0.5, 0.95 and 0.99 quantiles (s), as the
    /// crate's `DDSketch::quantile` gives them for these counts (rank `floor(q (n - 1))`, the
    /// key's value `gamma^key * 2 gamma / (1 + gamma)`); NaN when empty.
    pub fn stats(&self, cfg: &Config) -> [f64; 4] {
        self.quantiles(|k| cfg.value(k))
    }

    /// The counts as (value in s, count) in increasing order of value: the zero bucket as 0,
    /// every other key as the value its quantiles report (`Config::value`). Any quantile of
    /// the samples is the value at rank `floor(q (n - 1))` of these, within 1 % of the exact
    /// sample quantile (what `summary.json`'s `totals.delay_sketches` holds).
    pub fn buckets(&self, cfg: &Config) -> (Vec<f64>, Vec<u64>) {
        let (mut values, mut counts) = (Vec::new(), Vec::new());
        self.each(|k, c| {
            values.push(k.map_or(0.0, |k| cfg.value(k)));
            counts.push(c);
        });
        (values, counts)
    }

    /// [`Hist::stats`] of these samples, which are then added to `total` and forgotten (a
    /// bin's close). Dense counts are read in one pass that stops at the last sample; they go
    /// back to the inline form after a bin of at most FEW samples (a flow gone quiet).
    pub fn close_into(&mut self, keys: &mut Keys, total: &mut Hist) -> [f64; 4] {
        let Repr::Dense(d) = &mut self.0 else {
            let out = self.quantiles(|k| keys.value(k));
            total.merge(self);
            *self = Hist::default();
            return out;
        };
        let n = d.n;
        if n == 0 {
            return [f64::NAN; 4];
        }
        let mut out = [(d.sum_ps as f64 / n as f64) * 1e-12, 0.0, 0.0, 0.0];
        let ranks = [0.5, 0.95, 0.99].map(|q| (q * (n as f64 - 1.0)) as u64);
        // These counts once went past the inline form (a fifth key, a count past u8), so have
        // the run's: they are dense too.
        let t = total.dense();
        t.sum_ps += d.sum_ps;
        t.add_count(None, d.zero);
        let mut seen = d.zero;
        // Ranks below `seen` are in the zero bucket (value 0) or found already.
        let mut next = ranks.iter().take_while(|&&r| r < seen).count();
        for (i, c) in d.counts.iter_mut().enumerate() {
            if seen == n {
                break;
            }
            if *c == 0 {
                continue;
            }
            let (k, cnt) = (d.lo + i as i32, std::mem::take(c));
            seen += cnt;
            while next < 3 && seen > ranks[next] {
                out[next + 1] = keys.value(k);
                next += 1;
            }
            t.add_count(Some(k), cnt);
        }
        if n <= FEW as u64 {
            // A handful of samples: the flow has gone quiet, its room is given back.
            *self = Hist::default();
        } else {
            (d.zero, d.n, d.sum_ps) = (0, 0, 0);
        }
        out
    }

    /// The crate's sketch of these samples: each key's count added at that key's value (so the
    /// same keys, the same counts; its sum and extremes are of those values, not the samples').
    pub fn sketch(&self, cfg: &Config) -> DDSketch {
        let mut s = DDSketch::new(*cfg);
        self.each(|k, c| s.add_with_count(k.map_or(0.0, |k| cfg.value(k)), c));
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator (xorshift64*), for sample values.
    fn values(n: usize, mut x: u64) -> impl Iterator<Item = u64> {
        std::iter::repeat_with(move || {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            x.wrapping_mul(0x2545_f491_4f6c_dd1d)
        })
        .take(n)
    }

    /// The key of every bucket's ends and boundaries, and of random values over the whole u64
    /// range, is the crate's `Config::key` of the value in seconds.
    #[test]
    fn keys_are_the_crates() {
        let mut k = Keys::new();
        let cfg = config();
        let want = |ps: u64| (ps_s(ps) > MIN_VALUE_S).then(|| cfg.key(ps_s(ps)));
        // (u64::MAX itself is the "no boundary" mark: no delay of a run is 213 days.)
        for ps in (0..5000).chain([u64::MAX - 1, 1 << 63]) {
            assert_eq!(k.key(ps), want(ps), "{ps}");
        }
        for v in values(200_000, 0x9e37_79b9_7f4a_7c15) {
            // Spread over every magnitude: shift a random value right by a random amount.
            let ps = v >> (v % 61);
            assert_eq!(k.key(ps), want(ps), "{ps}");
        }
        for b in k.buckets.clone().iter().filter(|b| b.next_at != 0 && b.next_at != u64::MAX) {
            for ps in [b.next_at - 1, b.next_at, b.next_at + 1] {
                assert_eq!(k.key(ps), want(ps), "{ps}");
            }
        }
    }

    /// Quantiles are the crate's for the same samples added one by one (its keys, its rank
    /// rule), within 1 % of the exact ones, and the mean is exact.
    #[test]
    fn stats_are_the_crates_quantiles() {
        let mut k = Keys::new();
        let cfg = config();
        for (seed, n) in [(1u64, 1usize), (2, 7), (3, 1000), (4, 50_000)] {
            let mut h = Hist::default();
            let mut s = DDSketch::new(cfg);
            let mut v: Vec<u64> = Vec::new();
            for x in values(n, seed) {
                // Delays from 0 to ~0.2 s, a tenth of them exactly 0 (no wait).
                let ps = if x % 10 == 0 { 0 } else { x % 200_000_000_000 };
                h.add(k.key(ps), ps);
                s.add(ps_s(ps));
                v.push(ps);
            }
            let got = h.stats(&cfg);
            for (i, q) in [0.5, 0.95, 0.99].into_iter().enumerate() {
                let crate_q = s.quantile(q).unwrap().unwrap();
                assert_eq!(got[i + 1], crate_q, "q{q} n={n}");
                let from_counts = h.sketch(&cfg).quantile(q).unwrap().unwrap();
                assert_eq!(from_counts, crate_q, "q{q} n={n}");
                v.sort_unstable();
                let exact = ps_s(v[(q * (n as f64 - 1.0)) as usize]);
                assert!((got[i + 1] - exact).abs() <= RELATIVE_ACCURACY * exact, "{q}: {got:?} vs {exact}");
            }
            let mean = v.iter().map(|&x| x as u128).sum::<u128>() as f64 / n as f64 * 1e-12;
            assert_eq!(got[0], mean);
        }
    }

    /// Merging bins gives the counts of adding every sample to one histogram.
    #[test]
    fn merge_is_exact() {
        let mut k = Keys::new();
        let cfg = config();
        let (mut all, mut total, mut bin) = (Hist::default(), Hist::default(), Hist::default());
        for (i, x) in values(10_000, 5).enumerate() {
            let ps = (x % 50_000_000_000) >> (i % 20);
            all.add(k.key(ps), ps);
            bin.add(k.key(ps), ps);
            if i % 997 == 0 {
                total.merge(&bin);
                bin.clear();
            }
        }
        total.merge(&bin);
        assert_eq!(total.stats(&cfg), all.stats(&cfg));
        // The same through close_into, which also gives each bin's statistics.
        let (mut total2, mut bin) = (Hist::default(), Hist::default());
        for (i, x) in values(10_000, 5).enumerate() {
            let ps = (x % 50_000_000_000) >> (i % 20);
            bin.add(k.key(ps), ps);
            if i % 997 == 996 || i == 9_999 {
                let want = bin.stats(&cfg);
                assert_eq!(bin.close_into(&mut k, &mut total2), want);
                assert_eq!((bin.count(), total_of(&bin)), (0, 0));
            }
        }
        assert_eq!(total2.stats(&cfg), all.stats(&cfg));
        assert_eq!((total_of(&total), total.count()), (all.count(), all.count()));
    }

    /// The samples a histogram's counts add up to.
    fn total_of(h: &Hist) -> u64 {
        let mut n = 0;
        h.each(|_, c| n += c);
        n
    }

    /// The counts of a histogram, key by key.
    fn pairs(h: &Hist) -> Vec<(Option<i32>, u64)> {
        let mut v = Vec::new();
        h.each(|k, c| v.push((k, c)));
        v
    }

    /// A few samples stay inline (24 bytes, no heap), and turn dense at the fifth distinct key
    /// or a count past 2^8 - 1 with the same counts, sum and statistics; a bin that would
    /// have fitted goes back inline at its close.
    #[test]
    fn few_keys_stay_inline_and_turn_dense_unchanged() {
        assert_eq!(std::mem::size_of::<Hist>(), 24);
        let mut k = Keys::new();
        let cfg = config();
        let (mut h, mut d) = (Hist::default(), Hist::default());
        d.dense();
        let is_few = |h: &Hist| matches!(h.0, Repr::Few { .. });
        // Distinct keys: zero, 10 ms, 5 us, 7 ns, then 9 ns (the fifth, at i = 6).
        let samples = [0u64, 10_000_000_000, 10_000_000_001, 0, 5_000_000, 7_000, 9_000, 2_000_000, 1];
        for (i, &ps) in samples.iter().enumerate() {
            h.add(k.key(ps), ps);
            d.add(k.key(ps), ps);
            assert_eq!(is_few(&h), i < 6, "{i}");
            assert_eq!((pairs(&h), h.stats(&cfg), h.count()), (pairs(&d), d.stats(&cfg), d.count()));
        }
        let mut h = Hist::default();
        for _ in 0..u8::MAX {
            h.add(k.key(5_000_000), 5_000_000);
        }
        assert!(is_few(&h));
        h.add(k.key(5_000_000), 5_000_000);
        assert!(!is_few(&h));
        assert_eq!((pairs(&h), h.sum()), (vec![(k.key(5_000_000), 256)], 256 * 5_000_000));
        // A dense bin of nine samples stays dense at its close (a busy flow keeps its room),
        // one of a single sample goes back inline; the total has the same counts.
        let mut total = Hist::default();
        let want = d.stats(&cfg);
        let want_pairs = pairs(&d);
        assert_eq!(d.close_into(&mut k, &mut total), want);
        assert!(!is_few(&d) && d.count() == 0);
        assert_eq!(pairs(&total), want_pairs);
        let mut bin = Hist::default();
        bin.add(k.key(3_000_000), 3_000_000);
        bin.dense();
        bin.close_into(&mut k, &mut total);
        assert!(is_few(&bin));
    }
}
