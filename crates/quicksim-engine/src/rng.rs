//! Seeded, pinned pseudo-random numbers. One master seed per run; every component draws from its
//! own named stream derived from it, so adding a component never shifts another's numbers.
//! The generator is xoshiro256** (Blackman & Vigna), seeded through SplitMix64; both are written
//! out here so results never depend on a crate's version.

/// One independent random stream.
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

fn splitmix64(x: &mut u64) -> u64 {
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
    pub fn from_seed(seed: u64) -> Rng {
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
    /// Uniform integer in [lo, hi] (inclusive), unbiased (Lemire's method with rejection).
    pub fn range_u64(&mut self, lo: u64, hi: u64) -> u64 {
        assert!(lo <= hi);
        let span = hi - lo;
        if span == u64::MAX {
            return self.next_u64();
        }
        let n = span + 1;
        let zone = u64::MAX - (u64::MAX - n + 1) % n;
        loop {
            let v = self.next_u64();
            if v <= zone {
                return lo + v % n;
            }
        }
    }
    /// True with probability p.
    pub fn bernoulli(&mut self, p: f64) -> bool {
        self.uniform01() < p
    }
    /// Exponential with the given mean.
    pub fn exponential(&mut self, mean: f64) -> f64 {
        -mean * (1.0 - self.uniform01()).ln()
    }
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
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
