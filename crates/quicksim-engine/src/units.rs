//! Quantities with units, as OMNeT++ writes them: "10Mbps", "10ms", "25kB", "200kb".
//! SI prefixes are decimal (k = 1000); binary prefixes (KiB, MiB) are accepted for bytes.
//! Parsing is exact decimal arithmetic: "1.5s" is 1_500_000_000_000 ps, no float rounding.
//! Writing back (`format_*`, and `Serialize` of the unit types) gives one canonical text per
//! value, which parses back to exactly that value.
//! Here rather than in the scenario crate so that component settings (a queue discipline's
//! `bytes = "150kB"`) deserialize with the same units wherever the component lives.

use crate::{Rate, SimDuration};
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;

/// Split "12.5Mbps" into the decimal number (as mantissa, decimal exponent) and the unit.
/// The number may carry a power of ten, as Python and TOML write floats ("1e-3s", "1.5e7bps",
/// "2E3ms"): the value stays exact decimal (1.5e7 is 15 * 10^6).
fn split(s: &str) -> Option<(u128, u32, &str)> {
    let s = s.trim();
    let end = s.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_')).unwrap_or(s.len());
    let (num, rest) = s.split_at(end);
    let (exp, unit) = split_exponent(rest);
    let (m, dec, unit) = split_plain(num, unit)?;
    let Some(exp) = exp else { return Some((m, dec, unit)) };
    let shift = exp? - i64::from(dec);
    if shift >= 0 {
        let m = m.checked_mul(10u128.checked_pow(u32::try_from(shift).ok()?)?)?;
        Some((m, 0, unit))
    } else {
        Some((m, u32::try_from(-shift).ok()?, unit))
    }
}

/// An exponent "e-3"/"E+7" at the start of `rest` (then Some(Some(e)), or Some(None) when it is
/// malformed), and the text after it; (None, rest) when `rest` does not start with one.
fn split_exponent(rest: &str) -> (Option<Option<i64>>, &str) {
    let Some(after) = rest.strip_prefix(['e', 'E']) else { return (None, rest) };
    let sign_len = usize::from(after.starts_with(['+', '-']));
    let digits = after[sign_len..].find(|c: char| !c.is_ascii_digit()).unwrap_or(after.len() - sign_len);
    if digits == 0 {
        return (None, rest); // not an exponent: "e" starts the unit (none does today)
    }
    let (text, unit) = after.split_at(sign_len + digits);
    (Some(text.parse::<i64>().ok().filter(|e| e.abs() <= 40)), unit)
}

fn split_plain<'a>(num: &str, unit: &'a str) -> Option<(u128, u32, &'a str)> {
    let num: String = num.chars().filter(|&c| c != '_').collect();
    if num.is_empty() || num.matches('.').count() > 1 {
        return None;
    }
    let (int, frac) = num.split_once('.').unwrap_or((&num, ""));
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    let digits = format!("{int}{frac}");
    let m: u128 = digits.parse().ok()?;
    Some((m, frac.len() as u32, unit.trim()))
}

/// mantissa * 10^-dec * factor, only if exact.
fn scale(m: u128, dec: u32, factor: u128) -> Option<u128> {
    let p = 10u128.checked_pow(dec)?;
    let v = m.checked_mul(factor)?;
    (v % p == 0).then_some(v / p)
}

/// The longest duration a scenario may give: 50 days, a quarter of simulated time's range (2^64
/// ps, about 213 days). A time within a run plus three such durations (a delay, 3 x an initial
/// RTT) stays in range; what the engine derives beyond that (a backed-off timer) saturates at
/// `SimTime::MAX`, "never" (`SimTime + SimDuration`). So no setting can overflow simulated
/// time: `quic.initial_rtt = "5000h"` is refused here, where it used to panic mid-run.
pub const MAX_DURATION: SimDuration = SimDuration(50 * 86_400 * crate::time::PS_PER_S);

/// A duration with its unit ("10ms", "1.5s", "2min", "1h"): exact to the picosecond, at most
/// [`MAX_DURATION`].
pub fn parse_duration(s: &str) -> Result<SimDuration, String> {
    let bad = || format!("{s:?} is not a duration; try \"10ms\" (units: s, ms, us, ns, ps, min)");
    if s.trim_start().starts_with('-') {
        return Err(format!("{s:?} is negative; a duration must be >= 0"));
    }
    let (m, dec, unit) = split(s).ok_or_else(bad)?;
    let f: u128 = match unit {
        "s" => 1_000_000_000_000,
        "ms" => 1_000_000_000,
        "us" | "µs" => 1_000_000,
        "ns" => 1_000,
        "ps" => 1,
        "min" => 60_000_000_000_000,
        "h" => 3_600_000_000_000_000,
        "" => return Err(format!("{s:?} needs a unit, e.g. \"{s}ms\" or \"{s}s\"")),
        _ => return Err(bad()),
    };
    let v = scale(m, dec, f).ok_or_else(|| format!("{s:?} is not a whole number of picoseconds"))?;
    match u64::try_from(v) {
        Ok(ps) if ps <= MAX_DURATION.0 => Ok(SimDuration(ps)),
        _ => Err(format!(
            "{s:?} is too long: simulated time spans about 213 days, and a duration is at most 50 days (\"{}\")",
            format_duration(MAX_DURATION)
        )),
    }
}

pub fn parse_rate(s: &str) -> Result<Rate, String> {
    let bad = || format!("{s:?} is not a rate; try \"10Mbps\" (units: bps, kbps, Mbps, Gbps, Tbps)");
    if s.trim_start().starts_with('-') {
        return Err(format!("{s:?} is negative; a rate must be > 0"));
    }
    let (m, dec, unit) = split(s).ok_or_else(bad)?;
    let f: u128 = match unit {
        "bps" | "b/s" | "bit/s" => 1,
        "kbps" | "kb/s" | "kbit/s" => 1_000,
        "Mbps" | "Mb/s" | "Mbit/s" => 1_000_000,
        "Gbps" | "Gb/s" | "Gbit/s" => 1_000_000_000,
        "Tbps" | "Tb/s" | "Tbit/s" => 1_000_000_000_000,
        "" => return Err(format!("{s:?} needs a unit, e.g. \"{s}Mbps\"")),
        _ => return Err(bad()),
    };
    let v = scale(m, dec, f).ok_or_else(|| format!("{s:?} is not a whole number of bit/s"))?;
    if v == 0 {
        return Err(format!("{s:?} is zero; a rate must be > 0"));
    }
    u64::try_from(v).map(Rate::bps).map_err(|_| format!("{s:?} is too large"))
}

pub fn parse_bytes(s: &str) -> Result<u64, String> {
    let bad = || {
        format!("{s:?} is not a size; try \"1280B\" or \"25kB\" (units: B, kB, MB, GB, KiB, MiB, GiB; b, kb, Mb for bits)")
    };
    if s.trim_start().starts_with('-') {
        return Err(format!("{s:?} is negative; a size must be >= 0"));
    }
    let (m, dec, unit) = split(s).ok_or_else(bad)?;
    // (factor, divisor): bits units divide by 8 and must come out whole.
    let (f, bits): (u128, bool) = match unit {
        "B" => (1, false),
        "kB" | "KB" => (1_000, false),
        "MB" => (1_000_000, false),
        "GB" => (1_000_000_000, false),
        "TB" => (1_000_000_000_000, false),
        "KiB" => (1 << 10, false),
        "MiB" => (1 << 20, false),
        "GiB" => (1 << 30, false),
        "b" => (1, true),
        "kb" => (1_000, true),
        "Mb" => (1_000_000, true),
        "Gb" => (1_000_000_000, true),
        "" => return Err(format!("{s:?} needs a unit, e.g. \"{s}B\"")),
        _ => return Err(bad()),
    };
    let mut v = scale(m, dec, f).ok_or_else(|| format!("{s:?} is not a whole number of bytes"))?;
    if bits {
        if v % 8 != 0 {
            return Err(format!("{s:?} is not a whole number of bytes"));
        }
        v /= 8;
    }
    u64::try_from(v).map_err(|_| format!("{s:?} is too large"))
}

/// `v` in the largest of `units` (largest first, the last of factor 1) that holds it as a whole
/// number: "1500ms" rather than "1.5s". Whole numbers keep the text unique (one value, one
/// text) and exact for the parser; 0 is written in the base unit `zero` ("0s", "0B").
fn canonical(v: u64, units: &[(u64, &str)], zero: &str) -> String {
    if v == 0 {
        return format!("0{zero}");
    }
    let &(f, unit) = units.iter().find(|&&(f, _)| v.is_multiple_of(f)).unwrap_or(&units[units.len() - 1]);
    format!("{}{unit}", v / f)
}

/// A duration as the canonical text `parse_duration` reads back: "10ms", "1500ms", "102960ns".
pub fn format_duration(d: SimDuration) -> String {
    const UNITS: [(u64, &str); 5] =
        [(1_000_000_000_000, "s"), (1_000_000_000, "ms"), (1_000_000, "us"), (1_000, "ns"), (1, "ps")];
    canonical(d.0, &UNITS, "s")
}

/// A rate as the canonical text `parse_rate` reads back: "10Mbps", "2500Mbps".
pub fn format_rate(r: Rate) -> String {
    const UNITS: [(u64, &str); 5] = [
        (1_000_000_000_000, "Tbps"),
        (1_000_000_000, "Gbps"),
        (1_000_000, "Mbps"),
        (1_000, "kbps"),
        (1, "bps"),
    ];
    canonical(r.bits_per_s, &UNITS, "bps")
}

/// A size as the canonical text `parse_bytes` reads back, in decimal units: "1500B", "25kB"
/// (1 KiB is "1024B": binary prefixes are accepted on input but not written).
pub fn format_bytes(b: u64) -> String {
    const UNITS: [(u64, &str); 5] =
        [(1_000_000_000_000, "TB"), (1_000_000_000, "GB"), (1_000_000, "MB"), (1_000, "kB"), (1, "B")];
    canonical(b, &UNITS, "B")
}

macro_rules! unit_type {
    ($name:ident, $inner:ty, $parse:ident, $format:ident, $what:literal) => {
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub struct $name(pub $inner);
        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&$format(self.0))
            }
        }
        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        f.write_str(concat!("a ", $what, " string with a unit"))
                    }
                    fn visit_str<E: de::Error>(self, s: &str) -> Result<$name, E> {
                        $parse(s).map($name).map_err(E::custom)
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$name, E> {
                        self.visit_str(&v.to_string())
                    }
                    fn visit_u64<E: de::Error>(self, v: u64) -> Result<$name, E> {
                        self.visit_str(&v.to_string())
                    }
                    fn visit_f64<E: de::Error>(self, v: f64) -> Result<$name, E> {
                        self.visit_str(&v.to_string())
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}

unit_type!(Dur, SimDuration, parse_duration, format_duration, "duration");
unit_type!(RateVal, Rate, parse_rate, format_rate, "rate");
unit_type!(Bytes, u64, parse_bytes, format_bytes, "size");

/// The number part of a quantity, as `split` reads it (digits, `_`, one `.`, a power of ten).
macro_rules! number_re {
    () => {
        r"^\s*[0-9_]*\.?[0-9_]*([eE][+-]?[0-9]+)?\s*"
    };
}
/// What `parse_duration` reads, as a regular expression (for the JSON Schema).
pub const DURATION_PATTERN: &str = concat!(number_re!(), r"(ps|ns|us|µs|ms|s|min|h)\s*$");
/// What `parse_rate` reads.
pub const RATE_PATTERN: &str = concat!(number_re!(), r"([kMGT]?(bps|b/s|bit/s))\s*$");
/// What `parse_bytes` reads.
pub const BYTES_PATTERN: &str = concat!(number_re!(), r"(B|kB|KB|MB|GB|TB|KiB|MiB|GiB|b|kb|Mb|Gb)\s*$");

macro_rules! unit_schema {
    ($name:ident, $pattern:ident, $doc:literal) => {
        impl schemars::JsonSchema for $name {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($name).into()
            }
            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                schemars::json_schema!({ "type": "string", "pattern": $pattern, "description": $doc })
            }
        }
    };
}
unit_schema!(
    Dur,
    DURATION_PATTERN,
    "A duration with a unit: ps, ns, us, ms, s, min or h (\"25ms\", \"1.5s\")."
);
unit_schema!(RateVal, RATE_PATTERN, "A rate with a unit: bps, kbps, Mbps, Gbps or Tbps (\"10Mbps\").");
unit_schema!(
    Bytes,
    BYTES_PATTERN,
    "A size with a unit: B, kB, MB, GB, KiB, MiB, GiB; b, kb, Mb for bits (\"1500B\")."
);

#[cfg(test)]
mod tests {
    use super::*;

    /// Powers of ten, as Python and TOML write floats; the same cases as the Python side's
    /// `tests/test_unit_grammar.py`.
    #[test]
    fn exponents() {
        assert_eq!(parse_duration("1e-3s").unwrap(), parse_duration("1ms").unwrap());
        assert_eq!(parse_duration("2E3ms").unwrap(), parse_duration("2s").unwrap());
        assert_eq!(parse_duration("2.5e+1ms").unwrap(), parse_duration("25ms").unwrap());
        assert_eq!(parse_rate("1.5e7bps").unwrap(), parse_rate("15Mbps").unwrap());
        assert_eq!(parse_rate("1e1Gbps").unwrap(), parse_rate("10Gbps").unwrap());
        assert_eq!(parse_bytes("1.5e3B").unwrap(), 1500);
        assert!(parse_duration("1e-13s").is_err()); // below a picosecond: not exact
        assert!(parse_duration("1e99s").is_err());
        assert!(parse_duration("1es").is_err());
        assert!(parse_duration("1e").is_err());
        assert!(parse_rate("1e-1bps").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("10ms").unwrap(), SimDuration(10_000_000_000));
        assert_eq!(parse_duration("1.5s").unwrap(), SimDuration(1_500_000_000_000));
        assert_eq!(parse_duration("0.5s").unwrap(), SimDuration(500_000_000_000));
        assert_eq!(parse_duration("102.96us").unwrap(), SimDuration(102_960_000));
        assert!(parse_duration("10").unwrap_err().contains("needs a unit"));
        assert!(parse_duration("10 parsecs").unwrap_err().contains("not a duration"));
        assert!(parse_duration("-1s").unwrap_err().contains("negative"));
        assert!(parse_duration("0.0001ps").is_err());
    }

    /// Issue 39: "5000h" parsed (it fits u64 picoseconds) and then overflowed simulated time in
    /// the run; every duration past MAX_DURATION is refused by the parser now.
    #[test]
    fn durations_fit_simulated_time() {
        let e = parse_duration("5000h").unwrap_err();
        assert!(e.starts_with("\"5000h\" is too long: simulated time spans about 213 days"), "{e}");
        assert!(e.ends_with("(\"4320000s\")"), "{e}");
        assert_eq!(parse_duration("1200h").unwrap(), MAX_DURATION);
        assert_eq!(parse_duration("4320000s").unwrap(), MAX_DURATION);
        assert!(parse_duration("4320000000000000001ps").is_err());
        assert!(parse_duration("1e30s").is_err());
        assert!(parse_duration("99999999999999999999999999999999999999h").is_err());
    }

    proptest::proptest! {
        /// Durations -> time: whatever a scenario writes, a parsed duration is at most
        /// MAX_DURATION, a time within the run plus three of them is exact, and any multiple
        /// (a backed-off timer) never panics.
        #[test]
        fn no_duration_overflows_time(
            n in 0u64..=u64::MAX,
            unit in proptest::sample::select(vec!["ps", "ns", "us", "ms", "s", "min", "h"]),
            frac in proptest::option::of(0u32..1000),
            k in 0u64..=u64::MAX,
        ) {
            let text = match frac { Some(f) => format!("{n}.{f:03}{unit}"), None => format!("{n}{unit}") };
            if let Ok(d) = parse_duration(&text) {
                proptest::prop_assert!(d <= MAX_DURATION);
                // A time within the run (at most MAX_DURATION) plus three durations stays exact.
                let t = crate::SimTime(MAX_DURATION.0) + d + d + d;
                proptest::prop_assert_eq!(u128::from(t.0), u128::from(MAX_DURATION.0) + 3 * u128::from(d.0));
                let later = t + d * k; // saturates at SimTime::MAX ("never"), no panic
                proptest::prop_assert!(later >= t);
            }
        }
    }

    #[test]
    fn rates() {
        assert_eq!(parse_rate("10Mbps").unwrap(), Rate::mbps(10));
        assert_eq!(parse_rate("2.5Gbps").unwrap(), Rate::bps(2_500_000_000));
        let e = parse_rate("10 Mbs").unwrap_err();
        assert!(e.contains("\"10 Mbs\" is not a rate; try \"10Mbps\""), "{e}");
        assert!(parse_rate("-5Mbps").unwrap_err().contains("negative"));
        assert!(parse_rate("0Mbps").unwrap_err().contains("zero"));
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_bytes("25kB").unwrap(), 25_000);
        assert_eq!(parse_bytes("200kb").unwrap(), 25_000); // OMNeT++: b is bits
        assert_eq!(parse_bytes("1280B").unwrap(), 1280);
        assert_eq!(parse_bytes("1KiB").unwrap(), 1024);
        assert_eq!(parse_bytes("33.6MB").unwrap(), 33_600_000);
        assert!(parse_bytes("1.5B").is_err());
        assert!(parse_bytes("12 bytes").is_err());
    }

    #[test]
    fn canonical_texts() {
        assert_eq!(format_duration(SimDuration::from_millis(10)), "10ms");
        assert_eq!(format_duration(parse_duration("1.5s").unwrap()), "1500ms");
        assert_eq!(format_duration(parse_duration("102.96us").unwrap()), "102960ns");
        assert_eq!(format_duration(parse_duration("2min").unwrap()), "120s");
        assert_eq!(format_duration(SimDuration(0)), "0s");
        assert_eq!(format_duration(SimDuration(7)), "7ps");
        assert_eq!(format_rate(Rate::mbps(10)), "10Mbps");
        assert_eq!(format_rate(parse_rate("2.5Gbps").unwrap()), "2500Mbps");
        assert_eq!(format_rate(Rate::bps(1)), "1bps");
        assert_eq!(format_bytes(1500), "1500B");
        assert_eq!(format_bytes(parse_bytes("200kb").unwrap()), "25kB");
        assert_eq!(format_bytes(parse_bytes("1KiB").unwrap()), "1024B");
        assert_eq!(format_bytes(parse_bytes("33.6MB").unwrap()), "33600kB");
        assert_eq!(format_bytes(0), "0B");
        assert_eq!(serde_json::to_string(&RateVal(Rate::gbps(1))).unwrap(), "\"1Gbps\"");
    }

    proptest::proptest! {
        /// Every value, written and read back, is itself: the canonical text loses nothing.
        #[test]
        fn canonical_texts_parse_back(v in proptest::prelude::any::<u64>(), scale in 0u32..13) {
            // Values with many trailing zeros reach the larger units too.
            let v = v / 10u64.pow(scale) * 10u64.pow(scale);
            // Durations up to MAX_DURATION (a longer one is refused, see durations_fit_simulated_time).
            let d = SimDuration(v % (MAX_DURATION.0 + 1) / 10u64.pow(scale) * 10u64.pow(scale));
            proptest::prop_assert_eq!(parse_duration(&format_duration(d)).unwrap(), d);
            proptest::prop_assert_eq!(parse_bytes(&format_bytes(v)).unwrap(), v);
            let r = Rate::bps(v.max(1));
            proptest::prop_assert_eq!(parse_rate(&format_rate(r)).unwrap(), r);
        }
    }
}
