//! Quantities that may be random: a constant with a unit ("1000B", "10ms") or a distribution
//! table (`{ dist = "uniform", min = "500B", max = "1500B" }`), read and written back in the same
//! form, and drawn from a stream of the run's seed.
//!
//! The parameters are OMNeT++'s where it has the distribution with a unit (`uniform(min, max)`,
//! `exponential(mean)`, `truncnormal(mean, stddev)`), ns-3's otherwise (`LogNormalRandomVariable`
//! Mu/Sigma, with Mu given as the median e^Mu so that it carries a unit; `ParetoRandomVariable`
//! Scale/Shape, or the mean as ns-3's older `ParetoVariable (mean, shape)`). Every bound is
//! checked when the scenario is read, the error naming the value.

use quicksim_engine::{exp_portable, Rate, Rng, SimDuration};
use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde::Deserialize;
use serde_json::Value;
use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

/// A quantity a distribution draws: a size in bytes or a duration.
pub trait Quantity: Copy + PartialEq + PartialOrd + fmt::Debug {
    /// "size" or "duration", in messages.
    const WHAT: &'static str;
    /// The schema type of one value with its unit.
    fn unit_schema(gen: &mut SchemaGenerator) -> Schema;
    fn parse(s: &str) -> Result<Self, String>;
    fn format(self) -> String;
    /// The value in the unit draws are computed in (bytes; seconds).
    fn to_f64(self) -> f64;
    /// A drawn value back (rounded to the nearest byte or picosecond; saturating).
    fn from_f64(x: f64) -> Self;
    fn is_zero(self) -> bool;
    /// The value in its integer unit (bytes; picoseconds), and back.
    fn to_base(self) -> u64;
    fn from_base(v: u64) -> Self;
}

impl Quantity for u64 {
    const WHAT: &'static str = "size";
    fn unit_schema(gen: &mut SchemaGenerator) -> Schema {
        gen.subschema_for::<crate::units::Bytes>()
    }
    fn parse(s: &str) -> Result<u64, String> {
        crate::units::parse_bytes(s)
    }
    fn format(self) -> String {
        crate::units::format_bytes(self)
    }
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn from_f64(x: f64) -> u64 {
        x.round().max(0.0) as u64
    }
    fn is_zero(self) -> bool {
        self == 0
    }
    fn to_base(self) -> u64 {
        self
    }
    fn from_base(v: u64) -> u64 {
        v
    }
}

impl Quantity for SimDuration {
    const WHAT: &'static str = "duration";
    fn unit_schema(gen: &mut SchemaGenerator) -> Schema {
        gen.subschema_for::<crate::units::Dur>()
    }
    fn parse(s: &str) -> Result<SimDuration, String> {
        crate::units::parse_duration(s)
    }
    fn format(self) -> String {
        crate::units::format_duration(self)
    }
    fn to_f64(self) -> f64 {
        self.as_secs_f64()
    }
    fn from_f64(x: f64) -> SimDuration {
        SimDuration::from_secs_f64(x)
    }
    fn is_zero(self) -> bool {
        self.0 == 0
    }
    fn to_base(self) -> u64 {
        self.0
    }
    fn from_base(v: u64) -> SimDuration {
        SimDuration(v)
    }
}

impl Quantity for Rate {
    const WHAT: &'static str = "rate";
    fn unit_schema(gen: &mut SchemaGenerator) -> Schema {
        gen.subschema_for::<crate::units::RateVal>()
    }
    fn parse(s: &str) -> Result<Rate, String> {
        crate::units::parse_rate(s)
    }
    fn format(self) -> String {
        crate::units::format_rate(self)
    }
    fn to_f64(self) -> f64 {
        self.bits_per_s as f64
    }
    fn from_f64(x: f64) -> Rate {
        Rate { bits_per_s: x.round().max(0.0) as u64 }
    }
    fn is_zero(self) -> bool {
        self.bits_per_s == 0
    }
    fn to_base(self) -> u64 {
        self.bits_per_s
    }
    fn from_base(v: u64) -> Rate {
        Rate { bits_per_s: v }
    }
}

/// A constant quantity, or a distribution of it.
#[derive(Debug, Clone, PartialEq)]
pub enum Dist<Q> {
    /// Always this value (`"10ms"` or `{ dist = "constant", value = "10ms" }`).
    Const(Q),
    /// Uniform over [min, max], every value (byte, picosecond) equally likely.
    Uniform(Q, Q),
    /// Exponential with this mean.
    Exponential(Q),
    /// Normal with this mean and standard deviation, truncated at 0: a negative draw is drawn
    /// again (OMNeT++'s `truncnormal`), so the mean of the draws is above `mean` when `stddev`
    /// is not small against it.
    Normal { mean: Q, stddev: Q },
    /// Log-normal: ln of the value is normal with mean ln(median) and deviation `sigma`.
    LogNormal { median: Q, sigma: f64 },
    /// Pareto: P(X > x) = (scale / x)^shape for x >= scale; `mean` is kept when it was given
    /// instead of `scale` (scale = mean (shape - 1) / shape), to write the table back as read.
    Pareto { scale: Q, shape: f64, mean: Option<Q> },
}

/// A constant size, or a distribution of sizes (bytes).
pub type SizeDist = Dist<u64>;
/// A constant time, or a distribution of times.
pub type TimeDist = Dist<SimDuration>;
/// A constant rate, or a distribution of rates (bit/s).
pub type RateDist = Dist<Rate>;

impl<Q: Quantity> Dist<Q> {
    /// Always the same value (nothing random to draw).
    pub fn is_const(&self) -> bool {
        matches!(self, Dist::Const(_))
    }

    /// The largest value it can draw, if bounded.
    pub fn max(&self) -> Option<Q> {
        match *self {
            Dist::Const(v) | Dist::Uniform(_, v) => Some(v),
            _ => None,
        }
    }

    /// The distribution as three numbers, for a resting flow's compact state (the scenario
    /// types' serde form is the file's): kind, then two parameters (a shape as its bits).
    pub fn code(&self) -> (u8, u64, u64) {
        match *self {
            Dist::Const(v) => (0, v.to_base(), 0),
            Dist::Uniform(a, b) => (1, a.to_base(), b.to_base()),
            Dist::Exponential(m) => (2, m.to_base(), 0),
            Dist::Normal { mean, stddev } => (3, mean.to_base(), stddev.to_base()),
            Dist::LogNormal { median, sigma } => (4, median.to_base(), sigma.to_bits()),
            Dist::Pareto { scale, shape, mean: None } => (5, scale.to_base(), shape.to_bits()),
            Dist::Pareto { shape, mean: Some(m), .. } => (6, m.to_base(), shape.to_bits()),
        }
    }

    /// [`Dist::code`] read back.
    pub fn from_code((k, a, b): (u8, u64, u64)) -> Self {
        let (qa, qb, f) = (Q::from_base(a), Q::from_base(b), f64::from_bits(b));
        match k {
            0 => Dist::Const(qa),
            1 => Dist::Uniform(qa, qb),
            2 => Dist::Exponential(qa),
            3 => Dist::Normal { mean: qa, stddev: qb },
            4 => Dist::LogNormal { median: qa, sigma: f },
            5 => Dist::Pareto { scale: qa, shape: f, mean: None },
            _ => Dist::Pareto { scale: pareto_scale(qa, f), shape: f, mean: Some(qa) },
        }
    }

    /// One value from `rng`. A constant draws nothing; uniform, exponential draw as they always
    /// did (the golden pins of scenarios with random message sizes stay as they are).
    pub fn draw(&self, rng: &mut Rng) -> Q {
        match *self {
            Dist::Const(v) => v,
            Dist::Uniform(a, b) => Q::from_base(rng.range_u64(a.to_base(), b.to_base())),
            Dist::Exponential(m) => Q::from_f64(rng.exponential(m.to_f64())),
            Dist::Normal { mean, stddev } => loop {
                let x = mean.to_f64() + stddev.to_f64() * rng.standard_normal();
                if x >= 0.0 {
                    break Q::from_f64(x);
                }
            },
            Dist::LogNormal { median, sigma } => {
                Q::from_f64(median.to_f64() * exp_portable(sigma * rng.standard_normal()))
            }
            Dist::Pareto { scale, shape, .. } => {
                // Inverse transform: scale * U^(-1/shape), U in (0, 1].
                let u = 1.0 - rng.uniform01();
                Q::from_f64(scale.to_f64() * exp_portable(-quicksim_engine::ln_portable(u) / shape))
            }
        }
    }
}

/// The scale of a Pareto distribution with this mean (mean = scale shape / (shape - 1)).
fn pareto_scale<Q: Quantity>(mean: Q, shape: f64) -> Q {
    Q::from_f64(mean.to_f64() * (shape - 1.0) / shape)
}

/// Which keys each distribution takes, for "does not apply" errors and the schema.
const DISTS: &[(&str, &[&str])] = &[
    ("constant", &["value"]),
    ("uniform", &["min", "max"]),
    ("exponential", &["mean"]),
    ("normal", &["mean", "stddev"]),
    ("lognormal", &["median", "sigma"]),
    ("pareto", &["scale", "shape"]),
];

/// A distribution table's value `key` as a quantity with a unit.
fn quantity<Q: Quantity>(t: &serde_json::Map<String, Value>, key: &str, dist: &str) -> Result<Q, String> {
    match t.get(key) {
        Some(Value::String(s)) => Q::parse(s).map_err(|e| format!("{key}: {e}")),
        Some(Value::Number(n)) => Q::parse(&n.to_string()).map_err(|e| format!("{key}: {e}")),
        Some(other) => Err(format!("{key}: {other} is not a {}", Q::WHAT)),
        None => Err(format!("distribution {dist:?} needs `{key}`")),
    }
}

/// A distribution table's plain number `key` (a shape), finite and above `low`.
fn number(t: &serde_json::Map<String, Value>, key: &str, dist: &str, low: f64) -> Result<f64, String> {
    let x = match t.get(key) {
        Some(Value::Number(n)) => n.as_f64().unwrap_or(f64::NAN),
        Some(other) => return Err(format!("{key}: {other} is not a number")),
        None => return Err(format!("distribution {dist:?} needs `{key}`")),
    };
    if !x.is_finite() || x <= low {
        return Err(format!("{key} = {x}: must be a number above {low}"));
    }
    Ok(x)
}

/// A distribution from its table (keys checked against the distribution's own).
fn from_table<Q: Quantity>(mut t: serde_json::Map<String, Value>) -> Result<Dist<Q>, String> {
    let dist = match t.remove("dist") {
        Some(Value::String(d)) => d,
        Some(other) => return Err(format!("dist: {other} is not a distribution name")),
        None => return Err("missing field `dist` (\"uniform\", \"exponential\", ...)".into()),
    };
    let names = || DISTS.iter().map(|(d, _)| format!("{d:?}")).collect::<Vec<_>>().join(", ");
    let Some(&(_, keys)) = DISTS.iter().find(|(d, _)| *d == dist) else {
        return Err(format!("{dist:?} is not a distribution; use one of {}", names()));
    };
    // A Pareto may give its mean instead of its scale.
    let allowed = |k: &str| keys.contains(&k) || (dist == "pareto" && k == "mean");
    if let Some(k) = t.keys().find(|k| !allowed(k)) {
        return Err(format!("`{k}` does not apply to dist = {dist:?} (its keys: {})", keys.join(", ")));
    }
    let w = |q: Q| q.format();
    Ok(match dist.as_str() {
        "constant" => Dist::Const(quantity(&t, "value", &dist)?),
        "uniform" => {
            let (a, b) = (quantity::<Q>(&t, "min", &dist)?, quantity::<Q>(&t, "max", &dist)?);
            if a > b {
                return Err(format!("uniform min {:?} is larger than max {:?}", w(a), w(b)));
            }
            Dist::Uniform(a, b)
        }
        "exponential" => {
            let m: Q = quantity(&t, "mean", &dist)?;
            if m.is_zero() {
                return Err(format!("exponential mean {:?}: must be above 0", w(m)));
            }
            Dist::Exponential(m)
        }
        "normal" => {
            Dist::Normal { mean: quantity(&t, "mean", &dist)?, stddev: quantity(&t, "stddev", &dist)? }
        }
        "lognormal" => {
            let median: Q = quantity(&t, "median", &dist)?;
            if median.is_zero() {
                return Err(format!("lognormal median {:?}: must be above 0", w(median)));
            }
            let sigma = match t.get("sigma") {
                Some(Value::Number(n)) if n.as_f64().is_some_and(|x| x == 0.0) => 0.0,
                _ => number(&t, "sigma", &dist, 0.0)?,
            };
            Dist::LogNormal { median, sigma }
        }
        "pareto" => {
            let shape = number(&t, "shape", &dist, 0.0)?;
            match (t.contains_key("scale"), t.contains_key("mean")) {
                (true, true) => return Err("pareto: give `scale` or `mean`, not both".into()),
                (false, false) => return Err("distribution \"pareto\" needs `scale` or `mean`".into()),
                (true, false) => {
                    let scale: Q = quantity(&t, "scale", &dist)?;
                    if scale.is_zero() {
                        return Err(format!("pareto scale {:?}: must be above 0", w(scale)));
                    }
                    Dist::Pareto { scale, shape, mean: None }
                }
                (false, true) => {
                    let mean: Q = quantity(&t, "mean", &dist)?;
                    if shape <= 1.0 {
                        return Err(format!(
                            "pareto shape = {shape} has no finite mean: give shape > 1, or `scale`"
                        ));
                    }
                    if mean.is_zero() {
                        return Err(format!("pareto mean {:?}: must be above 0", w(mean)));
                    }
                    let scale = pareto_scale(mean, shape);
                    Dist::Pareto { scale, shape, mean: Some(mean) }
                }
            }
        }
        _ => unreachable!("listed in DISTS"),
    })
}

impl<'de, Q: Quantity> Deserialize<'de> for Dist<Q> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<Q>(PhantomData<Q>);
        impl<'de, Q: Quantity> Visitor<'de> for V<Q> {
            type Value = Dist<Q>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                write!(
                    f,
                    "a {} with a unit, or a table like {{ dist = \"uniform\", min = ..., max = ... }}",
                    Q::WHAT
                )
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Dist<Q>, E> {
                Q::parse(s).map(Dist::Const).map_err(E::custom)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Dist<Q>, E> {
                self.visit_str(&v.to_string())
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Dist<Q>, E> {
                self.visit_str(&v.to_string())
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Dist<Q>, E> {
                self.visit_str(&v.to_string())
            }
            fn visit_map<A: MapAccess<'de>>(self, m: A) -> Result<Dist<Q>, A::Error> {
                let t = serde_json::Map::deserialize(de::value::MapAccessDeserializer::new(m))?;
                from_table(t).map_err(<A::Error as de::Error>::custom)
            }
        }
        d.deserialize_any(V(PhantomData))
    }
}

/// A constant is its quantity ("1000B"); a distribution is the table it was read from.
impl<Q: Quantity> Serialize for Dist<Q> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if let Dist::Const(v) = *self {
            return s.serialize_str(&v.format());
        }
        let mut m = s.serialize_map(None)?;
        match *self {
            Dist::Const(_) => unreachable!("written above"),
            Dist::Uniform(a, b) => {
                m.serialize_entry("dist", "uniform")?;
                m.serialize_entry("min", &a.format())?;
                m.serialize_entry("max", &b.format())?;
            }
            Dist::Exponential(mean) => {
                m.serialize_entry("dist", "exponential")?;
                m.serialize_entry("mean", &mean.format())?;
            }
            Dist::Normal { mean, stddev } => {
                m.serialize_entry("dist", "normal")?;
                m.serialize_entry("mean", &mean.format())?;
                m.serialize_entry("stddev", &stddev.format())?;
            }
            Dist::LogNormal { median, sigma } => {
                m.serialize_entry("dist", "lognormal")?;
                m.serialize_entry("median", &median.format())?;
                m.serialize_entry("sigma", &sigma)?;
            }
            Dist::Pareto { scale, shape, mean } => {
                m.serialize_entry("dist", "pareto")?;
                match mean {
                    Some(mean) => m.serialize_entry("mean", &mean.format())?,
                    None => m.serialize_entry("scale", &scale.format())?,
                }
                m.serialize_entry("shape", &shape)?;
            }
        }
        m.end()
    }
}

impl<Q: Quantity> JsonSchema for Dist<Q> {
    fn schema_name() -> Cow<'static, str> {
        match Q::WHAT {
            "size" => "SizeDist".into(),
            "rate" => "RateDist".into(),
            _ => "TimeDist".into(),
        }
    }
    fn json_schema(gen: &mut SchemaGenerator) -> Schema {
        let unit = Q::unit_schema(gen);
        let num = serde_json::json!({"type": "number", "exclusiveMinimum": 0});
        let table = |dist: &str, props: serde_json::Value, required: &[&str]| {
            let mut p = props.as_object().cloned().unwrap_or_default();
            p.insert("dist".into(), serde_json::json!({"const": dist}));
            let mut req = vec!["dist"];
            req.extend_from_slice(required);
            serde_json::json!({"type": "object", "additionalProperties": false, "required": req, "properties": p})
        };
        let u = serde_json::to_value(&unit).unwrap_or(Value::Null);
        json_schema!({
            "description": format!(
                "A {what} with a unit, or a distribution: {{ dist = \"constant\", value }}, \"uniform\" (min, max), \
                 \"exponential\" (mean), \"normal\" (mean, stddev; negative draws are drawn again, OMNeT++'s \
                 truncnormal), \"lognormal\" (median = e^mu, sigma: ns-3's Mu/Sigma), \"pareto\" (scale or mean, \
                 shape: ns-3's Scale/Shape). E.g. {{ dist = \"uniform\", min = \"0s\", max = \"1s\" }}.",
                what = Q::WHAT
            ),
            "anyOf": [
                u.clone(),
                table("constant", serde_json::json!({"value": u}), &["value"]),
                table("uniform", serde_json::json!({"min": u, "max": u}), &["min", "max"]),
                table("exponential", serde_json::json!({"mean": u}), &["mean"]),
                table("normal", serde_json::json!({"mean": u, "stddev": u}), &["mean", "stddev"]),
                table("lognormal", serde_json::json!({"median": u, "sigma": {"type": "number", "minimum": 0}}), &["median", "sigma"]),
                table("pareto", serde_json::json!({"scale": u, "mean": u, "shape": num}), &["shape"]),
            ]
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn time(v: Value) -> Result<TimeDist, String> {
        serde_json::from_value(v).map_err(|e| e.to_string())
    }

    /// The mean of `n` draws.
    fn mean_of<Q: Quantity>(d: &Dist<Q>, n: usize) -> f64 {
        let mut r = Rng::from_seed(11);
        (0..n).map(|_| d.draw(&mut r).to_f64()).sum::<f64>() / n as f64
    }

    #[test]
    fn every_distribution_has_its_stated_mean() {
        let n = 200_000;
        // (table, mean by theory, standard deviation by theory)
        let e = std::f64::consts::E;
        let cases = [
            (json!({"dist": "uniform", "min": "1s", "max": "3s"}), 2.0, (4.0f64 / 12.0).sqrt()),
            (json!({"dist": "exponential", "mean": "2s"}), 2.0, 2.0),
            // mean 5 s, sd 1 s: truncation at 0 is 5 sd away, so the mean is 5 s.
            (json!({"dist": "normal", "mean": "5s", "stddev": "1s"}), 5.0, 1.0),
            // median 1 s, sigma 0.5: mean e^(s²/2), variance (e^(s²) - 1) e^(s²).
            (
                json!({"dist": "lognormal", "median": "1s", "sigma": 0.5}),
                e.powf(0.125),
                ((e.powf(0.25) - 1.0) * e.powf(0.25)).sqrt(),
            ),
            // shape 3, mean 1.5 s: scale 1 s, variance scale² shape / ((shape-1)² (shape-2)) = 0.75.
            (json!({"dist": "pareto", "mean": "1.5s", "shape": 3.0}), 1.5, 0.75f64.sqrt()),
        ];
        for (t, mean, sd) in cases {
            let d = time(t.clone()).unwrap();
            let m = mean_of(&d, n);
            // 5 standard errors (sd / sqrt(n)).
            let tol = 5.0 * sd / (n as f64).sqrt();
            assert!((m - mean).abs() < tol, "{t}: mean {m}, expected {mean} ± {tol}");
        }
    }

    #[test]
    fn a_normal_is_truncated_at_zero() {
        // Half-normal: mean sd × sqrt(2/pi), never below 0.
        let d = time(json!({"dist": "normal", "mean": "0s", "stddev": "1s"})).unwrap();
        let mut r = Rng::from_seed(3);
        assert!((0..10_000).all(|_| d.draw(&mut r).0 < u64::MAX));
        let m = mean_of(&d, 200_000);
        assert!((m - (2.0 / std::f64::consts::PI).sqrt()).abs() < 0.01, "{m}");
    }

    #[test]
    fn sizes_draw_whole_bytes_and_uniform_draws_as_before() {
        let d: SizeDist =
            serde_json::from_value(json!({"dist": "uniform", "min": "500B", "max": "1500B"})).unwrap();
        let (mut a, mut b) = (Rng::from_seed(5), Rng::from_seed(5));
        for _ in 0..100 {
            assert_eq!(d.draw(&mut a), b.range_u64(500, 1500));
        }
        let p: SizeDist =
            serde_json::from_value(json!({"dist": "pareto", "scale": "1kB", "shape": 1.2})).unwrap();
        assert!((0..1000).all(|_| p.draw(&mut a) >= 1000));
    }

    #[test]
    fn tables_write_back_as_read_and_code_round_trips() {
        let tables = [
            json!({"dist": "uniform", "min": "1ms", "max": "2ms"}),
            json!({"dist": "exponential", "mean": "1ms"}),
            json!({"dist": "normal", "mean": "1ms", "stddev": "500us"}),
            json!({"dist": "lognormal", "median": "1ms", "sigma": 0.25}),
            json!({"dist": "pareto", "mean": "1ms", "shape": 1.5}),
            json!({"dist": "pareto", "scale": "1ms", "shape": 1.5}),
        ];
        for t in tables {
            let d = time(t.clone()).unwrap();
            assert_eq!(serde_json::to_value(&d).unwrap(), t);
            assert_eq!(TimeDist::from_code(d.code()), d, "{t}");
        }
        assert_eq!(serde_json::to_value(time(json!("10ms")).unwrap()).unwrap(), "10ms");
        assert_eq!(
            time(json!({"dist": "constant", "value": "10ms"})).unwrap(),
            TimeDist::Const(SimDuration::from_millis(10))
        );
    }

    #[test]
    fn bad_tables_say_what_is_wrong_with_which_value() {
        let cases = [
            (
                json!({"dist": "uniform", "min": "2s", "max": "1s"}),
                "uniform min \"2s\" is larger than max \"1s\"",
            ),
            (
                json!({"dist": "normal", "mean": "1s", "sd": "1s"}),
                "`sd` does not apply to dist = \"normal\" (its keys: mean, stddev)",
            ),
            (
                json!({"dist": "pareto", "mean": "1s", "shape": 0.5}),
                "pareto shape = 0.5 has no finite mean: give shape > 1, or `scale`",
            ),
            (
                json!({"dist": "pareto", "mean": "1s", "scale": "1s", "shape": 2}),
                "pareto: give `scale` or `mean`, not both",
            ),
            (json!({"dist": "pareto", "scale": "1s", "shape": "big"}), "shape: \"big\" is not a number"),
            (
                json!({"dist": "lognormal", "median": "0s", "sigma": 1}),
                "lognormal median \"0s\": must be above 0",
            ),
            (json!({"dist": "exponential", "mean": "fast"}), "mean: "),
            (json!({"min": "1s"}), "missing field `dist`"),
        ];
        for (t, msg) in cases {
            let e = time(t.clone()).unwrap_err();
            assert!(e.contains(msg), "{t}: {e}");
        }
    }
}
