//! Settings with units in the transports' configurations: the scenario's parsers and canonical
//! forms (`quicksim_engine::units`) as serde `with` modules, so a configuration struct reads and
//! writes its own `[quic]`/`[tcp]` table. Durations are strings with a unit ("40ms"); sizes a
//! number of bytes or a string with a unit ("64MiB", "4500B"), written back as a number
//! (`bytes`) or as text (`bytes_text`).

use quicksim_engine::SimDuration;
use serde::de::{self, Deserializer, Visitor};
use serde::Serializer;
use std::fmt;

pub use quicksim_engine::units::parse_duration;

/// "64MiB" → bytes, as the scenario's sizes; a bare number is bytes.
pub fn parse_bytes(s: &str) -> Result<u64, String> {
    match s.trim().parse::<u64>() {
        Ok(v) => Ok(v),
        Err(_) => quicksim_engine::units::parse_bytes(s),
    }
}

struct V<T>(fn(&str) -> Result<T, String>, &'static str);

impl<'de, T> Visitor<'de> for V<T> {
    type Value = T;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.1)
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<T, E> {
        (self.0)(s).map_err(E::custom)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<T, E> {
        self.visit_str(&v.to_string())
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<T, E> {
        if v < 0 {
            return Err(E::custom(format!("{v} is negative")));
        }
        self.visit_str(&v.to_string())
    }
}

/// A duration with a unit ("40ms"), written back in its canonical form.
pub mod duration {
    use super::*;
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<SimDuration, D::Error> {
        d.deserialize_any(V(parse_duration, "a duration string with a unit, e.g. \"40ms\""))
    }
    pub fn serialize<S: Serializer>(v: &SimDuration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&quicksim_engine::units::format_duration(*v))
    }
}

/// An optional duration (`None` is left out of a written table).
pub mod opt_duration {
    use super::*;
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<SimDuration>, D::Error> {
        duration::deserialize(d).map(Some)
    }
    pub fn serialize<S: Serializer>(v: &Option<SimDuration>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(v) => duration::serialize(v, s),
            None => s.serialize_none(),
        }
    }
}

/// A size: a number of bytes or a string with a unit, written back as a number.
pub mod bytes {
    use super::*;
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        d.deserialize_any(V(parse_bytes, "a size in bytes, e.g. 1500 or \"64MiB\""))
    }
    pub fn serialize<S: Serializer>(v: &u64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(*v)
    }
}

/// An optional size (`None` is left out of a written table).
pub mod opt_bytes {
    use super::*;
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
        bytes::deserialize(d).map(Some)
    }
    pub fn serialize<S: Serializer>(v: &Option<u64>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(v) => s.serialize_u64(*v),
            None => s.serialize_none(),
        }
    }
}

/// A size read as `bytes`, written back as canonical text ("15MB").
pub mod bytes_text {
    use super::*;
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        bytes::deserialize(d)
    }
    pub fn serialize<S: Serializer>(v: &u64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&quicksim_engine::units::format_bytes(*v))
    }
}

/// JSON Schema of these forms (what an editor shows and checks).
pub mod schema {
    use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
    use std::borrow::Cow;

    /// A duration: a string with a unit.
    pub struct Duration;
    impl JsonSchema for Duration {
        fn schema_name() -> Cow<'static, str> {
            "Duration".into()
        }
        fn json_schema(_: &mut SchemaGenerator) -> Schema {
            json_schema!({
                "type": "string",
                "pattern": quicksim_engine::units::DURATION_PATTERN,
                "description": "A duration with a unit: ps, ns, us, ms, s or min (\"25ms\", \"1.5s\").",
            })
        }
    }

    /// A size: bytes as an integer, or a string with a unit.
    pub struct Size;
    impl JsonSchema for Size {
        fn schema_name() -> Cow<'static, str> {
            "Size".into()
        }
        fn json_schema(_: &mut SchemaGenerator) -> Schema {
            json_schema!({
                "anyOf": [
                    {"type": "integer", "minimum": 0},
                    {"type": "string", "pattern": quicksim_engine::units::BYTES_PATTERN},
                ],
                "description": "A size: bytes as a number, or a string with a unit: B, kB, MB, GB, KiB, MiB, GiB (\"1500B\", \"64MiB\").",
            })
        }
    }
}
