//! Seeded, pinned pseudo-random numbers. One master seed per run; every component draws from its
//! own named stream derived from it, so adding a component never shifts another's numbers.
//! The generator is xoshiro256** (Blackman & Vigna), seeded through SplitMix64; both are written
//! out here so results never depend on a crate's version.

use serde::{Deserialize, Serialize};

/// One independent random stream.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Rng {
    s: [u64; 4],
}

const fn splitmix64(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// FNV-1a: a stable hash of stream names (std's hasher may change between releases).
fn fnv1a(s: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x100_0000_01b3);
    }
    h
}

impl Rng {
    /// A stream from a seed (`const`, so a test can hold one in a constant).
    pub const fn from_seed(seed: u64) -> Rng {
        let mut x = seed;
        let s = [splitmix64(&mut x), splitmix64(&mut x), splitmix64(&mut x), splitmix64(&mut x)];
        Rng { s }
    }
    pub fn next_u64(&mut self) -> u64 {
        let r = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        r
    }
    /// Uniform in [0, 1) with 53 bits of precision.
    pub fn uniform01(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
    /// Uniform integer in [lo, hi] (inclusive), unbiased (rejection of the draws above the last
    /// whole multiple of the range, then the remainder). For many draws with the same bounds,
    /// [`UniformU64`] gives the same numbers with one division fewer per draw.
    pub fn range_u64(&mut self, lo: u64, hi: u64) -> u64 {
        UniformU64::new(lo, hi).sample(self)
    }
    /// A new stream seeded from this one's next number: for a component that hands each of its
    /// parts a stream of its own (a flow's `"cc"` stream, one per endpoint).
    pub fn split(&mut self) -> Rng {
        Rng::from_seed(self.next_u64())
    }
    /// True with probability p.
    pub fn bernoulli(&mut self, p: f64) -> bool {
        self.uniform01() < p
    }
    /// Exponential with the given mean. Uses [`ln_portable`], not the platform's libm, so
    /// draws are bit-identical on every machine.
    pub fn exponential(&mut self, mean: f64) -> f64 {
        -mean * ln_portable(1.0 - self.uniform01())
    }
    /// Standard normal (mean 0, standard deviation 1) by Marsaglia's polar method: only
    /// [`ln_portable`] and `sqrt` (correctly rounded by IEEE 754), so draws are bit-identical
    /// on every machine (Box-Muller's `cos` is not). One of the pair is used, so each draw
    /// depends only on the stream's state.
    pub fn standard_normal(&mut self) -> f64 {
        loop {
            let u = 2.0 * self.uniform01() - 1.0;
            let v = 2.0 * self.uniform01() - 1.0;
            let s = u * u + v * v;
            if s > 0.0 && s < 1.0 {
                return u * (-2.0 * ln_portable(s) / s).sqrt();
            }
        }
    }
}

/// e^x from IEEE-754 basic operations only (as [`ln_portable`]): x = k ln 2 + r (ln 2 in two
/// parts, Cody and Waite) with
/// |r| <= ln 2 / 2, e^r by its Taylor series (27 terms reach full double precision for
/// |r| < 0.35), times 2^k built from the exponent bits. Overflows to infinity above ~709.78,
/// underflows to 0 below ~-745.
pub fn exp_portable(x: f64) -> f64 {
    assert!(!x.is_nan(), "exp_portable(NaN)");
    if x > 709.782_712_893_384 {
        return f64::INFINITY;
    }
    if x < -745.133_219_101_941_1 {
        return 0.0;
    }
    // ln 2 in two parts (fdlibm's): k × LN2_HI is exact for |k| < 2^20, so the reduction
    // loses nothing for large |x|.
    const LN2_HI: f64 = 6.931_471_803_691_238_164_9e-1;
    const LN2_LO: f64 = 1.908_214_929_270_587_700_02e-10;
    let k = (x / std::f64::consts::LN_2).round();
    let r = (x - k * LN2_HI) - k * LN2_LO;
    let mut sum = 1.0;
    let mut term = 1.0;
    for n in 1..28 {
        term *= r / n as f64;
        sum += term;
    }
    // 2^k in two steps, so that k down to -1074 (subnormal results) and up to 1024 stay exact.
    let k = k as i64;
    let (k1, k2) = (k / 2, k - k / 2);
    let pow2 = |e: i64| -> f64 {
        if e >= -1022 {
            f64::from_bits(((e + 1023) as u64) << 52)
        } else {
            f64::from_bits(1u64 << (e + 1074))
        }
    };
    sum * pow2(k1) * pow2(k2)
}

/// `Rng::range_u64(lo, hi)` with its bounds fixed once: the rejection zone is computed when it is
/// made, so a draw costs one 64-bit division instead of two (a link with jitter draws once per
/// frame). Every draw is the number `range_u64(lo, hi)` gives from the same stream state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UniformU64 {
    lo: u64,
    /// The number of values, hi - lo + 1; 0 for the whole u64 range (which does not fit).
    n: u64,
    /// The largest draw accepted: draws above it would make the low values likelier.
    zone: u64,
}

impl UniformU64 {
    pub fn new(lo: u64, hi: u64) -> Self {
        assert!(lo <= hi, "empty range [{lo}, {hi}]");
        let n = (hi - lo).wrapping_add(1);
        let zone = if n == 0 { u64::MAX } else { u64::MAX - (u64::MAX - n + 1) % n };
        UniformU64 { lo, n, zone }
    }

    #[inline]
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        if self.n == 0 {
            return rng.next_u64();
        }
        loop {
            let v = rng.next_u64();
            if v <= self.zone {
                return self.lo + v % self.n;
            }
        }
    }
}

/// Natural logarithm of a positive finite `x` from IEEE-754 basic operations only (+, -, *, /
/// are correctly rounded everywhere, libm's `ln` is not), so results never depend on the
/// platform. x = m * 2^e with m in [sqrt(1/2), sqrt(2)); ln m = 2 atanh((m-1)/(m+1)) by its
/// series (|z| < 0.172, 30 terms reach full double precision).
pub fn ln_portable(x: f64) -> f64 {
    assert!(x > 0.0 && x.is_finite(), "ln_portable({x})");
    const LN2: f64 = std::f64::consts::LN_2;
    let bits = x.to_bits();
    let mut e = ((bits >> 52) & 0x7ff) as i64;
    let mut m = if e == 0 {
        // subnormal: scale up first
        let y = x * (1u64 << 54) as f64;
        e = (((y.to_bits() >> 52) & 0x7ff) as i64) - 54;
        f64::from_bits((y.to_bits() & !(0x7ffu64 << 52)) | (1023u64 << 52))
    } else {
        f64::from_bits((bits & !(0x7ffu64 << 52)) | (1023u64 << 52))
    };
    e -= 1023;
    if m > std::f64::consts::SQRT_2 {
        m /= 2.0;
        e += 1;
    }
    let z = (m - 1.0) / (m + 1.0);
    let z2 = z * z;
    let mut term = z;
    let mut sum = 0.0;
    let mut k = 1.0;
    for _ in 0..30 {
        sum += term / k;
        term *= z2;
        k += 2.0;
    }
    e as f64 * LN2 + 2.0 * sum
}

/// Derives named streams from one master seed (ns-3's SetSeed/SetRun idea).
#[derive(Clone, Copy, Debug)]
pub struct RngStreams {
    seed: u64,
}

impl RngStreams {
    pub fn new(seed: u64) -> Self {
        RngStreams { seed }
    }
    pub fn seed(&self) -> u64 {
        self.seed
    }
    /// The stream for component `name` (e.g. "link", "app"), instance `index`.
    pub fn stream(&self, name: &str, index: u64) -> Rng {
        let mut x = self.seed ^ fnv1a(name).rotate_left(17);
        let a = splitmix64(&mut x);
        let mut y = a ^ index.wrapping_mul(0xD6E8_FEB8_6659_FD93);
        Rng::from_seed(splitmix64(&mut y))
    }
    /// The stream for component `name`, instance `key` (a flow's name): a component known by
    /// its name rather than its position keeps its numbers when others are added or reordered.
    pub fn stream_keyed(&self, name: &str, key: &str) -> Rng {
        self.stream(name, fnv1a(key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_portable_matches_libm_closely() {
        for &x in &[-700.0, -20.5, -1.0, -1e-9, 0.0, 1e-9, 0.5, 1.0, std::f64::consts::LN_10, 10.0, 700.0] {
            let (a, b) = (exp_portable(x), f64::exp(x));
            assert!(((a - b) / b).abs() < 4e-16, "exp({x}): {a} vs {b}");
        }
        assert_eq!(exp_portable(0.0), 1.0);
        assert_eq!(exp_portable(800.0), f64::INFINITY);
        assert_eq!(exp_portable(-800.0), 0.0);
        assert!((exp_portable(ln_portable(123.456)) - 123.456).abs() < 1e-12);
    }

    #[test]
    fn standard_normal_has_mean_0_and_variance_1() {
        let mut r = Rng::from_seed(7);
        let n = 200_000;
        let xs: Vec<f64> = (0..n).map(|_| r.standard_normal()).collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n as f64;
        // Standard errors: 1/sqrt(n) = 0.0022 for the mean, sqrt(2/n) = 0.0032 for the variance.
        assert!(mean.abs() < 0.01, "mean {mean}");
        assert!((var - 1.0).abs() < 0.015, "variance {var}");
    }

    #[test]
    fn keyed_streams_depend_on_the_key_only() {
        let s = RngStreams::new(5);
        assert_eq!(s.stream_keyed("flow", "a").next_u64(), s.stream_keyed("flow", "a").next_u64());
        assert_ne!(s.stream_keyed("flow", "a").next_u64(), s.stream_keyed("flow", "b").next_u64());
        assert_ne!(
            s.stream_keyed("flow", "a").next_u64(),
            RngStreams::new(6).stream_keyed("flow", "a").next_u64()
        );
    }

    #[test]
    fn pinned_sequence() {
        // Pin the generator: if this changes, every published result changes.
        let mut r = Rng::from_seed(42);
        let a = r.next_u64();
        let b = r.next_u64();
        let mut r2 = Rng::from_seed(42);
        assert_eq!((a, b), (r2.next_u64(), r2.next_u64()));
        assert_ne!(a, b);
    }

    #[test]
    fn streams_are_independent_and_reproducible() {
        let s = RngStreams::new(7);
        let x: Vec<u64> = (0..3).map(|i| s.stream("link", i).next_u64()).collect();
        assert_ne!(x[0], x[1]);
        assert_eq!(s.stream("link", 1).next_u64(), x[1]);
        assert_ne!(s.stream("app", 0).next_u64(), x[0]);
        assert_ne!(RngStreams::new(8).stream("link", 0).next_u64(), x[0]);
    }

    #[test]
    fn split_streams_are_reproducible_and_differ_from_each_other_and_the_parent() {
        let s = RngStreams::new(7);
        let (mut p, mut q) = (s.stream("cc", 3), s.stream("cc", 3));
        let (mut a, mut b) = (p.split(), p.split());
        let (mut a2, mut b2) = (q.split(), q.split());
        let draws = |r: &mut Rng| (0..4).map(|_| r.next_u64()).collect::<Vec<_>>();
        let (da, db) = (draws(&mut a), draws(&mut b));
        assert_eq!((draws(&mut a2), draws(&mut b2)), (da.clone(), db.clone()));
        assert_ne!(da, db);
        assert_ne!(da, draws(&mut s.stream("cc", 3)));
    }

    #[test]
    fn portable_ln_matches_libm_closely() {
        for &x in &[1e-300, 1e-12, 0.001, 0.1, 0.5, 0.75, 1.0, 1.5, 2.0, 10.0, 12345.678, 1e300] {
            let (a, b) = (ln_portable(x), x.ln());
            assert!((a - b).abs() <= 4.0 * f64::EPSILON * b.abs().max(1.0), "{x}: {a} vs {b}");
        }
        assert_eq!(ln_portable(1.0), 0.0);
    }

    #[test]
    fn uniform_mean_and_range() {
        let mut r = Rng::from_seed(1);
        let n = 200_000;
        let mut sum = 0.0;
        for _ in 0..n {
            let u = r.uniform01();
            assert!((0.0..1.0).contains(&u));
            sum += u;
        }
        // mean 0.5, sd of mean = sqrt(1/12/n) = 6.5e-4; 5 sigma
        assert!((sum / n as f64 - 0.5).abs() < 5.0 * 6.5e-4);
        for _ in 0..1000 {
            let v = r.range_u64(500, 1000);
            assert!((500..=1000).contains(&v));
        }
    }

    /// A fixed-bounds sampler draws exactly what `range_u64` drew before it existed (the
    /// formula below, written out as it was), from the same stream, including the rejections
    /// (the range [0, 2^63] rejects almost half its draws) and the whole u64 range; so a link's
    /// jitter draws, which now use it, are unchanged.
    #[test]
    fn fixed_bounds_sampler_draws_what_range_u64_drew() {
        fn reference(r: &mut Rng, lo: u64, hi: u64) -> u64 {
            let span = hi - lo;
            if span == u64::MAX {
                return r.next_u64();
            }
            let n = span + 1;
            let zone = u64::MAX - (u64::MAX - n + 1) % n;
            loop {
                let v = r.next_u64();
                if v <= zone {
                    return lo + v % n;
                }
            }
        }
        let bounds =
            [(0, 0), (0, 10), (7, 7), (500, 1000), (0, 1 << 40), (0, 1 << 63), (3, u64::MAX), (0, u64::MAX)];
        for (lo, hi) in bounds {
            let (mut a, mut b, mut c) = (Rng::from_seed(9), Rng::from_seed(9), Rng::from_seed(9));
            let u = UniformU64::new(lo, hi);
            for _ in 0..10_000 {
                let want = reference(&mut a, lo, hi);
                assert_eq!(u.sample(&mut b), want, "[{lo}, {hi}]");
                assert_eq!(c.range_u64(lo, hi), want, "[{lo}, {hi}]");
            }
        }
    }
}
