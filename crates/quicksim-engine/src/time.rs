//! Integer simulated time and link rates.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::ops::{Add, AddAssign, Mul, Sub};

pub const PS_PER_NS: u64 = 1_000;
pub const PS_PER_US: u64 = 1_000_000;
pub const PS_PER_MS: u64 = 1_000_000_000;
pub const PS_PER_S: u64 = 1_000_000_000_000;

/// A point in simulated time: picoseconds since the start of the run (about 213 days of range).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct SimTime(pub u64);

/// A span of simulated time in picoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct SimDuration(pub u64);

impl SimTime {
    pub const ZERO: SimTime = SimTime(0);
    pub const MAX: SimTime = SimTime(u64::MAX);
    pub fn ps(self) -> u64 {
        self.0
    }
    /// Seconds as f64, for output only.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / PS_PER_S as f64
    }
    pub fn saturating_sub(self, other: SimTime) -> SimDuration {
        SimDuration(self.0.saturating_sub(other.0))
    }
    pub fn checked_add(self, d: SimDuration) -> Option<SimTime> {
        self.0.checked_add(d.0).map(SimTime)
    }
    pub fn from_secs(s: u64) -> SimTime {
        SimTime(s * PS_PER_S)
    }
    pub fn from_millis(ms: u64) -> SimTime {
        SimTime(ms * PS_PER_MS)
    }
}

impl SimDuration {
    pub const ZERO: SimDuration = SimDuration(0);
    pub const MAX: SimDuration = SimDuration(u64::MAX);
    pub fn ps(self) -> u64 {
        self.0
    }
    pub fn from_secs(s: u64) -> Self {
        SimDuration(s * PS_PER_S)
    }
    pub fn from_millis(ms: u64) -> Self {
        SimDuration(ms * PS_PER_MS)
    }
    pub fn from_micros(us: u64) -> Self {
        SimDuration(us * PS_PER_US)
    }
    pub fn from_nanos(ns: u64) -> Self {
        SimDuration(ns * PS_PER_NS)
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / PS_PER_S as f64
    }
    /// Edge conversion from float seconds (rounded to the nearest picosecond).
    pub fn from_secs_f64(s: f64) -> Self {
        SimDuration((s * PS_PER_S as f64).round().max(0.0) as u64)
    }
    pub fn saturating_mul(self, k: u64) -> Self {
        SimDuration(self.0.saturating_mul(k))
    }
    pub fn saturating_sub(self, o: SimDuration) -> Self {
        SimDuration(self.0.saturating_sub(o.0))
    }
    /// Multiply by num/den with a u128 intermediate (e.g. 9/8 of an RTT).
    pub fn mul_ratio(self, num: u64, den: u64) -> Self {
        SimDuration((self.0 as u128 * num as u128 / den as u128) as u64)
    }
}

impl Add<SimDuration> for SimTime {
    type Output = SimTime;
    /// Saturates at `SimTime::MAX`, which no run reaches: a time that far is "never". Settings
    /// are at most `units::MAX_DURATION`, so only derived spans (a timer backed off many
    /// times, computed with saturating multiplications) get there; panicking on them aborted
    /// runs (issue 39: `quic.initial_rtt = "5000h"`).
    fn add(self, d: SimDuration) -> SimTime {
        SimTime(self.0.saturating_add(d.0))
    }
}
impl AddAssign<SimDuration> for SimTime {
    fn add_assign(&mut self, d: SimDuration) {
        *self = *self + d;
    }
}
impl Sub for SimTime {
    type Output = SimDuration;
    /// Panics if `other` is later: a negative duration is a broken invariant.
    fn sub(self, other: SimTime) -> SimDuration {
        SimDuration(self.0.checked_sub(other.0).expect("negative duration"))
    }
}
impl Sub<SimDuration> for SimTime {
    type Output = SimTime;
    fn sub(self, d: SimDuration) -> SimTime {
        SimTime(self.0.saturating_sub(d.0))
    }
}
impl Add for SimDuration {
    type Output = SimDuration;
    fn add(self, o: SimDuration) -> SimDuration {
        SimDuration(self.0.saturating_add(o.0))
    }
}
impl AddAssign for SimDuration {
    fn add_assign(&mut self, o: SimDuration) {
        self.0 = self.0.saturating_add(o.0);
    }
}
impl Sub for SimDuration {
    type Output = SimDuration;
    fn sub(self, o: SimDuration) -> SimDuration {
        SimDuration(self.0.saturating_sub(o.0))
    }
}
impl Mul<u64> for SimDuration {
    type Output = SimDuration;
    fn mul(self, k: u64) -> SimDuration {
        SimDuration(self.0.saturating_mul(k))
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.9}s", self.as_secs_f64())
    }
}
impl fmt::Display for SimDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.9}s", self.as_secs_f64())
    }
}

/// A link rate in bits per second.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Rate {
    pub bits_per_s: u64,
}

impl Rate {
    pub fn bps(bits_per_s: u64) -> Rate {
        Rate { bits_per_s }
    }
    pub fn mbps(m: u64) -> Rate {
        Rate { bits_per_s: m * 1_000_000 }
    }
    pub fn gbps(g: u64) -> Rate {
        Rate { bits_per_s: g * 1_000_000_000 }
    }
    /// Exact time to serialize `bytes` at this rate, rounded up to the next picosecond
    /// (u128 intermediate; a 1287 B frame at 100 Mbit/s is exactly 102.96 us).
    /// Rounding up (never down) keeps a link from ever exceeding its nominal rate.
    #[inline]
    pub fn tx_time(self, bytes: u64) -> SimDuration {
        assert!(self.bits_per_s > 0, "tx_time at zero rate");
        // u64 arithmetic whenever it cannot overflow (up to ~2.3 MB, every frame): a 128-bit
        // division is a library call, once per packet and hop (1.3 % of the showcase's cycles).
        if let Some(num) = bytes.checked_mul(8 * PS_PER_S) {
            return SimDuration(num.div_ceil(self.bits_per_s));
        }
        let num = bytes as u128 * 8 * PS_PER_S as u128;
        let d = self.bits_per_s as u128;
        SimDuration(num.div_ceil(d) as u64)
    }
    /// Bytes that this rate carries in `d` (rounded down).
    pub fn bytes_in(self, d: SimDuration) -> u64 {
        (self.bits_per_s as u128 * d.0 as u128 / (8 * PS_PER_S as u128)) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tx_time_is_the_same_on_both_sides_of_the_u64_fast_path() {
        let limit = u64::MAX / (8 * PS_PER_S); // largest byte count on the u64 path
        for rate in [1u64, 7, 10_000_000, 999_999_937, 100_000_000_000, u64::MAX] {
            let r = Rate { bits_per_s: rate };
            for bytes in [0, 1, 1287, 65_535, limit - 1, limit, limit + 1, 10 * limit] {
                let exact = (bytes as u128 * 8 * PS_PER_S as u128).div_ceil(rate as u128);
                if exact <= u64::MAX as u128 {
                    assert_eq!(r.tx_time(bytes).0 as u128, exact, "{bytes} B at {rate} bit/s");
                }
            }
        }
    }

    #[test]
    fn ppp_frame_at_100mbps_is_exact() {
        // 1287 B * 8 / 1e8 b/s = 102.96 us
        assert_eq!(Rate::mbps(100).tx_time(1287), SimDuration(102_960_000));
    }

    #[test]
    fn tx_time_exact_at_100gbps() {
        // 1287 B at 100 Gbit/s = 102.96 ns = 102960 ps exactly.
        assert_eq!(Rate::gbps(100).tx_time(1287), SimDuration(102_960));
    }

    #[test]
    fn tx_time_rounds_up() {
        // 1 B at 3 bit/s = 8/3 s -> rounded up to the picosecond.
        assert_eq!(Rate::bps(3).tx_time(1).0, 2_666_666_666_667);
    }

    #[test]
    fn time_arithmetic() {
        let t = SimTime::from_millis(5) + SimDuration::from_micros(3);
        assert_eq!(t.ps(), 5_003_000_000);
        assert_eq!(t - SimTime::from_millis(5), SimDuration::from_micros(3));
        assert_eq!(SimDuration::from_millis(8).mul_ratio(9, 8), SimDuration::from_millis(9));
    }
}
