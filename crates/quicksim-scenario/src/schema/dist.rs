//! Quantities that may be random: a constant with a unit ("1000B", "10ms") or a distribution
//! table (`{ dist = "uniform", min = "500B", max = "1500B" }`), read and written back in the same
//! form.

use crate::units::{format_bytes, format_duration};
use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde::Deserialize;
use std::borrow::Cow;
use std::fmt;

/// A constant size, or a distribution.
#[derive(Debug, Clone, PartialEq)]
pub enum SizeDist {
    Const(u64),
    Uniform(u64, u64),
}

impl SizeDist {
    /// Always the same size (nothing random to draw).
    pub fn is_const(&self) -> bool {
        matches!(self, SizeDist::Const(_))
    }
}

/// A constant time, or a distribution.
#[derive(Debug, Clone, PartialEq)]
pub enum TimeDist {
    Const(quicksim_engine::SimDuration),
    Uniform(quicksim_engine::SimDuration, quicksim_engine::SimDuration),
    Exponential(quicksim_engine::SimDuration),
}

impl TimeDist {
    /// Always the same time (nothing random to draw).
    pub fn is_const(&self) -> bool {
        matches!(self, TimeDist::Const(_))
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DistTable {
    dist: String,
    #[serde(default)]
    value: Option<serde_json::Value>,
    #[serde(default)]
    min: Option<serde_json::Value>,
    #[serde(default)]
    max: Option<serde_json::Value>,
    #[serde(default)]
    mean: Option<serde_json::Value>,
}

/// Parses one field of a distribution table (value, min, max, mean) into a quantity.
type FieldParser<'a, T> = &'a dyn Fn(&Option<serde_json::Value>, &str) -> Result<T, String>;

fn field_str(v: &Option<serde_json::Value>, name: &str, dist: &str) -> Result<String, String> {
    match v {
        Some(serde_json::Value::String(s)) => Ok(s.clone()),
        Some(other) => Ok(other.to_string()),
        None => Err(format!("distribution {dist:?} needs `{name}`")),
    }
}

macro_rules! dist_de {
    ($ty:ident, $parse:path, $constv:expr, $build:expr, $what:literal) => {
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = $ty;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        f.write_str(concat!(
                            "a ",
                            $what,
                            " with a unit, or a table like { dist = \"uniform\", min = ..., max = ... }"
                        ))
                    }
                    fn visit_str<E: de::Error>(self, s: &str) -> Result<$ty, E> {
                        $parse(s).map($constv).map_err(E::custom)
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$ty, E> {
                        self.visit_str(&v.to_string())
                    }
                    fn visit_u64<E: de::Error>(self, v: u64) -> Result<$ty, E> {
                        self.visit_str(&v.to_string())
                    }
                    fn visit_map<A: MapAccess<'de>>(self, m: A) -> Result<$ty, A::Error> {
                        let t = DistTable::deserialize(de::value::MapAccessDeserializer::new(m))?;
                        let f = |v: &Option<serde_json::Value>, n: &str| {
                            field_str(v, n, &t.dist).and_then(|s| $parse(&s))
                        };
                        $build(&t, &f).map_err(<A::Error as de::Error>::custom)
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}

dist_de!(
    SizeDist,
    crate::units::parse_bytes,
    SizeDist::Const,
    |t: &DistTable, f: FieldParser<u64>| -> Result<SizeDist, String> {
        match t.dist.as_str() {
            "constant" => Ok(SizeDist::Const(f(&t.value, "value")?)),
            "uniform" => {
                let (a, b) = (f(&t.min, "min")?, f(&t.max, "max")?);
                if a > b {
                    return Err(format!("uniform min {a} B is larger than max {b} B"));
                }
                Ok(SizeDist::Uniform(a, b))
            }
            other => Err(format!("{other:?} is not a size distribution; use \"constant\" or \"uniform\"")),
        }
    },
    "size"
);

dist_de!(
    TimeDist,
    crate::units::parse_duration,
    TimeDist::Const,
    |t: &DistTable, f: FieldParser<quicksim_engine::SimDuration>| -> Result<TimeDist, String> {
        match t.dist.as_str() {
            "constant" => Ok(TimeDist::Const(f(&t.value, "value")?)),
            "uniform" => {
                let (a, b) = (f(&t.min, "min")?, f(&t.max, "max")?);
                if a > b {
                    return Err(format!("uniform min {a} is larger than max {b}"));
                }
                Ok(TimeDist::Uniform(a, b))
            }
            "exponential" => Ok(TimeDist::Exponential(f(&t.mean, "mean")?)),
            other => Err(format!(
                "{other:?} is not a time distribution; use \"constant\", \"uniform\" or \"exponential\""
            )),
        }
    },
    "duration"
);

/// A constant is its quantity ("1000B"); a distribution is the table it was read from.
impl Serialize for SizeDist {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match *self {
            SizeDist::Const(v) => s.serialize_str(&format_bytes(v)),
            SizeDist::Uniform(a, b) => {
                let mut m = s.serialize_map(Some(3))?;
                m.serialize_entry("dist", "uniform")?;
                m.serialize_entry("min", &format_bytes(a))?;
                m.serialize_entry("max", &format_bytes(b))?;
                m.end()
            }
        }
    }
}

impl Serialize for TimeDist {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match *self {
            TimeDist::Const(v) => s.serialize_str(&format_duration(v)),
            TimeDist::Uniform(a, b) => {
                let mut m = s.serialize_map(Some(3))?;
                m.serialize_entry("dist", "uniform")?;
                m.serialize_entry("min", &format_duration(a))?;
                m.serialize_entry("max", &format_duration(b))?;
                m.end()
            }
            TimeDist::Exponential(mean) => {
                let mut m = s.serialize_map(Some(2))?;
                m.serialize_entry("dist", "exponential")?;
                m.serialize_entry("mean", &format_duration(mean))?;
                m.end()
            }
        }
    }
}

impl JsonSchema for SizeDist {
    fn schema_name() -> Cow<'static, str> {
        "SizeDist".into()
    }
    fn json_schema(gen: &mut SchemaGenerator) -> Schema {
        let unit = gen.subschema_for::<crate::units::Bytes>();
        json_schema!({
            "description": "A size, or a distribution of sizes: { dist = \"constant\", value = ... } or { dist = \"uniform\", min = ..., max = ... }.",
            "anyOf": [
                unit.clone(),
                {"type": "object", "additionalProperties": false, "required": ["dist", "value"],
                 "properties": {"dist": {"const": "constant"}, "value": unit.clone()}},
                {"type": "object", "additionalProperties": false, "required": ["dist", "min", "max"],
                 "properties": {"dist": {"const": "uniform"}, "min": unit.clone(), "max": unit}},
            ]
        })
    }
}

impl JsonSchema for TimeDist {
    fn schema_name() -> Cow<'static, str> {
        "TimeDist".into()
    }
    fn json_schema(gen: &mut SchemaGenerator) -> Schema {
        let unit = gen.subschema_for::<crate::units::Dur>();
        json_schema!({
            "description": "A duration, or a distribution: { dist = \"constant\", value = ... }, { dist = \"uniform\", min = ..., max = ... } or { dist = \"exponential\", mean = ... }.",
            "anyOf": [
                unit.clone(),
                {"type": "object", "additionalProperties": false, "required": ["dist", "value"],
                 "properties": {"dist": {"const": "constant"}, "value": unit.clone()}},
                {"type": "object", "additionalProperties": false, "required": ["dist", "min", "max"],
                 "properties": {"dist": {"const": "uniform"}, "min": unit.clone(), "max": unit.clone()}},
                {"type": "object", "additionalProperties": false, "required": ["dist", "mean"],
                 "properties": {"dist": {"const": "exponential"}, "mean": unit}},
            ]
        })
    }
}
