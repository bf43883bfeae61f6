//! Queue limits in bandwidth-delay products: `packets = { bdp = 1.5, rtt = "100ms" }` (or
//! `bytes = ..`) in a queue table stands for 1.5 × the link direction's rate × 100 ms, resolved
//! into a number before the queue discipline reads its table.
//!
//! Rounding: up, so that "1 BDP" never holds less than one BDP. `bytes`: whole bytes of IP
//! datagrams (what a queue's byte limit counts); `packets`: the bytes over the link's MTU, at
//! least 1 packet (MTU-sized packets; a queue of smaller packets holds fewer bytes).

use super::err;
use crate::ScenarioError;
use quicksim_engine::Rate;
use serde_json::{Map, Value};

/// The limit keys that may be given in BDPs.
const KEYS: [&str; 2] = ["packets", "bytes"];

/// `table` (a queue table, at `path`) with each `{ bdp, rtt }` limit replaced by its number for a
/// direction of rate `rate` and MTU `mtu`.
pub(super) fn resolve(
    table: &mut Map<String, Value>,
    path: &str,
    rate: Rate,
    mtu: u64,
) -> Result<(), ScenarioError> {
    for key in KEYS {
        let Some(Value::Object(m)) = table.get(key) else { continue };
        let at = format!("{path}.{key}");
        let bytes = bdp_bytes(m, &at, rate)?;
        let v = if key == "bytes" {
            Value::String(format!("{bytes}B"))
        } else {
            Value::from(bytes.div_ceil(mtu).max(1))
        };
        table.insert(key.to_string(), v);
    }
    Ok(())
}

/// The bytes of `{ bdp = x, rtt = "..." }` at `at` for rate `rate`, rounded up.
fn bdp_bytes(m: &Map<String, Value>, at: &str, rate: Rate) -> Result<u64, ScenarioError> {
    if let Some(k) = m.keys().find(|k| !matches!(k.as_str(), "bdp" | "rtt")) {
        return Err(err(
            format!("{at}.{k}"),
            "unknown field: a limit in BDPs is { bdp = 1.0, rtt = \"100ms\" }",
        ));
    }
    let x = match m.get("bdp") {
        Some(Value::Number(n)) => n.as_f64().unwrap_or(f64::NAN),
        Some(other) => return Err(err(format!("{at}.bdp"), format!("{other} is not a number"))),
        None => return Err(err(at, "missing field `bdp` (how many bandwidth-delay products, e.g. 1.0)")),
    };
    if !x.is_finite() || x <= 0.0 {
        return Err(err(format!("{at}.bdp"), format!("{x}: must be a number above 0")));
    }
    let rtt = match m.get("rtt") {
        Some(Value::String(s)) => {
            crate::units::parse_duration(s).map_err(|e| err(format!("{at}.rtt"), format!("{s:?}: {e}")))?
        }
        Some(other) => {
            return Err(err(format!("{at}.rtt"), format!("{other} is not a duration like \"100ms\"")))
        }
        None => {
            return Err(err(at, "missing field `rtt` (the round-trip time the BDP is of, e.g. \"100ms\")"))
        }
    };
    if rtt.0 == 0 {
        return Err(err(format!("{at}.rtt"), "\"0s\": the round-trip time must be above 0"));
    }
    // rate × rtt in bit·ps, exact; one BDP in bytes is that over 8e12.
    let bit_ps = rate.bits_per_s as u128 * rtt.0 as u128;
    let bytes = x * bit_ps as f64 / 8e12;
    // Up, but not past a whole number the product only misses by floating-point error.
    let up = (bytes - bytes * 1e-12).ceil();
    if up >= u64::MAX as f64 {
        return Err(err(
            format!("{at}.bdp"),
            format!("{x} BDPs of {} is too large", crate::units::format_rate(rate)),
        ));
    }
    Ok((up as u64).max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limit(v: Value, rate_bps: u64, mtu: u64) -> Result<Value, ScenarioError> {
        let mut t = v.as_object().unwrap().clone();
        resolve(&mut t, "links[0].queue", Rate { bits_per_s: rate_bps }, mtu)?;
        Ok(Value::Object(t))
    }

    #[test]
    fn one_bdp_of_10_mbps_at_100_ms_is_125_kb_or_84_packets() {
        // 10e6 bit/s × 0.1 s / 8 = 125 000 B; / 1500 B = 83.3 -> 84 packets (rounded up).
        let bdp = serde_json::json!({"bdp": 1.0, "rtt": "100ms"});
        let v = limit(serde_json::json!({"kind": "droptail", "packets": bdp}), 10_000_000, 1500).unwrap();
        assert_eq!(v["packets"], 84);
        let v = limit(serde_json::json!({"bytes": bdp}), 10_000_000, 1500).unwrap();
        assert_eq!(v["bytes"], "125000B");
        let half = serde_json::json!({"packets": {"bdp": 0.5, "rtt": "100ms"}});
        assert_eq!(limit(half, 12_000_000, 1500).unwrap()["packets"], 50);
        // A tiny BDP is still one packet.
        let tiny = serde_json::json!({"packets": {"bdp": 0.001, "rtt": "1ms"}});
        assert_eq!(limit(tiny, 1_000_000, 1500).unwrap()["packets"], 1);
    }

    #[test]
    fn bad_limits_name_the_field_and_value() {
        let e = |v: Value| limit(v, 10_000_000, 1500).unwrap_err();
        let x = e(serde_json::json!({"packets": {"bdp": -1.0, "rtt": "100ms"}}));
        assert_eq!(
            (x.path.as_str(), x.message.as_str()),
            ("links[0].queue.packets.bdp", "-1: must be a number above 0")
        );
        let x = e(serde_json::json!({"packets": {"bdp": 1.0, "rtt": "100 parsecs"}}));
        assert_eq!(x.path, "links[0].queue.packets.rtt");
        assert!(x.message.contains("100 parsecs"), "{}", x.message);
        let x = e(serde_json::json!({"bytes": {"bdp": 1.0}}));
        assert_eq!(x.path, "links[0].queue.bytes");
        assert!(x.message.contains("rtt"), "{}", x.message);
        let x = e(serde_json::json!({"bytes": {"bdp": 1.0, "rtt": "1ms", "rate": "1Mbps"}}));
        assert_eq!(x.path, "links[0].queue.bytes.rate");
        let x = e(serde_json::json!({"bytes": {"bdp": 1.0, "rtt": "0s"}}));
        assert_eq!(x.path, "links[0].queue.bytes.rtt");
    }
}
