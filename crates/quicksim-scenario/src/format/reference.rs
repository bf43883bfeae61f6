//! The scenario format described from its types: a JSON Schema (`quicksim schema`; editors
//! validate and complete TOML with it) and the Markdown reference `docs/scenario-reference.md`,
//! both generated from the same schema, so neither can drift from what `parse` accepts. Each
//! setting's documentation is its doc comment where it is defined.

use crate::schema::Scenario;
use schemars::generate::SchemaSettings;
use schemars::{Schema, SchemaGenerator};
use serde_json::{Map, Value};
use std::collections::BTreeSet;
use std::fmt::Write;

/// The JSON Schema (draft 2020-12) of a scenario document.
pub fn json_schema() -> Value {
    let mut gen = SchemaGenerator::new(SchemaSettings::draft2020_12());
    let flow = super::flow_schema(&mut gen);
    let tables: Vec<(&str, Schema)> = crate::flows::TRANSPORT_KINDS
        .iter()
        .map(|&k| (k, crate::flows::settings_schema(k, &mut gen)))
        .collect();
    // A flow's own table refers to its transport's settings by name.
    for (kind, s) in &tables {
        gen.definitions_mut().insert(format!("{kind}_settings"), s.clone().to_value());
    }
    let mut root = gen.root_schema_for::<Scenario>().to_value();
    root["title"] = "quicksim scenario".into();
    let props = root["properties"].as_object_mut().expect("the scenario is a table");
    props.insert(
        "flows".into(),
        serde_json::json!({"description": "The flows (`[[flows]]`); each kind has its own fields.", "type": "array", "items": flow}),
    );
    for (kind, _) in tables {
        props.insert(
            kind.to_string(),
            serde_json::json!({
                "$ref": format!("#/$defs/{kind}_settings"),
                "description": format!("Defaults for every {kind} flow; a flow's own `{kind}` table overrides them key by key."),
            }),
        );
    }
    root
}

/// `docs/scenario-reference.md`: every table of the format with its keys, types, defaults and
/// documentation, from `json_schema`.
pub fn markdown() -> String {
    let schema = json_schema();
    let defs = schema.get("$defs").and_then(Value::as_object).cloned().unwrap_or_default();
    let mut w = Writer { defs, out: String::new(), done: BTreeSet::new(), queue: Vec::new() };
    w.out.push_str(
        "# Scenario reference\n\n\
         Generated from the scenario format's types by `quicksim schema --reference` (do not edit by hand; \
         `tests/test_schema.py` fails when it is out of date). The same source gives the JSON Schema \
         (`quicksim schema > scenario.schema.json`), which editors use to check and complete TOML \
         (Even Better TOML / taplo: `#:schema ./scenario.schema.json` as a scenario's first line).\n\n\
         Each section is a table of the format, named by its path (`dumbbell.bottleneck`, `flows[]`); \
         \"required\" marks keys without a default, \"-\" a key that is unset unless given (its meaning \
         says what that does). Quantities are described [at the end](#quantities).\n",
    );
    w.table("scenario (top level)", &schema);
    while let Some((title, s)) = w.queue.pop() {
        w.table(&title, &s);
    }
    w.out.push_str(
        "\n## Quantities\n\n\
         | type | written as |\n|---|---|\n\
         | duration | a number with a unit: `\"25ms\"`, `\"1.5s\"`, `\"2e3us\"` (ps, ns, us, ms, s, min, h) |\n\
         | rate | `\"10Mbps\"` (bps, kbps, Mbps, Gbps, Tbps; also b/s, bit/s forms) |\n\
         | size | `\"1500B\"` (B, kB, MB, GB, TB, KiB, MiB, GiB; b, kb, Mb, Gb for bits, which must come out in whole bytes); transport settings also take a bare number of bytes |\n\
         | duration or distribution | a duration, or a distribution of durations: `{ dist = \"constant\", value = .. }`, `{ dist = \"uniform\", min = .., max = .. }`, `{ dist = \"exponential\", mean = .. }`, `{ dist = \"normal\", mean = .., stddev = .. }` (a negative draw is drawn again: OMNeT++'s `truncnormal`), `{ dist = \"lognormal\", median = .., sigma = 0.5 }` (ns-3's Mu/Sigma with Mu = ln median), `{ dist = \"pareto\", scale = .., shape = 1.5 }` or `{ dist = \"pareto\", mean = .., shape = 1.5 }` (ns-3's Scale/Shape; a mean needs shape > 1). A flow's `start`, `stop`, bulk `bytes`, datagram `rate` and `extra_delay` are drawn once per flow from the flow's own stream (keyed by its name; `meta.drawn` in summary.json lists them); message sizes, intervals and ON/OFF periods once per message or period |\n\
         | size or distribution | a size, or a distribution of sizes (the same tables as durations; draws rounded to whole bytes). A datagram's `size` must be bounded by the path MTU: a size or `uniform` |\n\
         | rate or distribution | a rate, or a distribution of rates (the same tables as durations; draws rounded to whole bit/s, at least 1 bit/s) |\n\
         | controller | a registry name (`\"cubic\"`; the built-ins: `none`, `newreno`, `cubic`, `bbr1`, `bbr`, `dctcp`, `prague`, `lia`, `olia`, `balia`) or a plugin's, or a table `{ algo = \"cubic\", beta = 0.7 }` with the controller's settings |\n",
    );
    w.out
}

struct Writer {
    defs: Map<String, Value>,
    out: String,
    /// Definitions already given a section.
    done: BTreeSet<String>,
    /// Sections still to write (a stack: the first nested table comes next).
    queue: Vec<(String, Value)>,
}

/// The alternatives of `s` that are tables.
fn table_alternatives(s: &Value) -> impl Iterator<Item = &Value> {
    ["oneOf", "anyOf"].into_iter().flat_map(move |k| s.get(k).and_then(Value::as_array).into_iter().flatten())
}

impl Writer {
    fn resolve<'a>(&'a self, s: &'a Value) -> &'a Value {
        match s.get("$ref").and_then(Value::as_str) {
            Some(r) => self.defs.get(r.trim_start_matches("#/$defs/")).unwrap_or(s),
            None => s,
        }
    }

    fn has_table(&self, s: &Value) -> bool {
        let s = self.resolve(s);
        s.get("properties").is_some()
            || table_alternatives(s).any(|a| self.resolve(a).get("properties").is_some())
    }

    /// A section for table `s` (its keys), then one for each of its alternatives.
    fn table(&mut self, title: &str, s: &Value) {
        let s = self.resolve(s).clone();
        let _ = write!(self.out, "\n## {title}\n\n");
        if let Some(d) = s.get("description").and_then(Value::as_str) {
            let _ = writeln!(self.out, "{}\n", one_paragraph(d));
        }
        let base = title.split(" (").next().unwrap_or(title).trim_end_matches(" top level").to_string();
        let base = if base == "scenario" { String::new() } else { base };
        let mut nested = Vec::new();
        if let Some(props) = s.get("properties").and_then(Value::as_object) {
            let required: BTreeSet<&str> = s
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            self.out.push_str("| key | type | default | meaning |\n|---|---|---|---|\n");
            for (key, p) in props {
                let path = if base.is_empty() { key.clone() } else { format!("{base}.{key}") };
                let ty = self.type_name(p, &mut nested, &path);
                let default = match p.get("default").filter(|v| !is_unset(v)) {
                    Some(v) => format!("`{}`", compact(v)),
                    None if required.contains(key.as_str()) => "required".into(),
                    None => "-".into(),
                };
                let doc = p
                    .get("description")
                    .or_else(|| self.resolve(p).get("description"))
                    .and_then(Value::as_str)
                    .map(one_paragraph)
                    .unwrap_or_else(|| match (key.as_str(), p.get("const")) {
                        ("kind", Some(_)) => "Selects this kind.".into(),
                        _ => String::new(),
                    });
                let _ = writeln!(self.out, "| `{key}` | {ty} | {default} | {} |", doc.replace('|', "\\|"));
            }
        }
        for a in table_alternatives(&s) {
            let a = self.resolve(a).clone();
            if a.get("properties").is_some() {
                let tag = a
                    .pointer("/properties/kind/const")
                    .and_then(Value::as_str)
                    .map(|k| format!("kind = \"{k}\""))
                    .or_else(|| a.get("title").and_then(Value::as_str).map(|t| format!("kind = \"{t}\"")))
                    .unwrap_or_else(|| "table".into());
                nested.push((format!("{base} ({tag})"), a));
            }
        }
        // Nested tables in the order their keys appear (the stack pops the first one next).
        self.queue.extend(nested.into_iter().rev());
    }

    /// A property's type in words; a table of its own is queued for a section at `path`.
    fn type_name(&mut self, p: &Value, nested: &mut Vec<(String, Value)>, path: &str) -> String {
        if let Some(r) = p.get("$ref").and_then(Value::as_str) {
            let name = r.trim_start_matches("#/$defs/").to_string();
            let word = match name.as_str() {
                "Dur" | "Duration" => Some("duration"),
                "RateVal" => Some("rate"),
                "Bytes" | "Size" => Some("size"),
                "SizeDist" => Some("size or distribution"),
                "TimeDist" => Some("duration or distribution"),
                "RateDist" => Some("rate or distribution"),
                "Controller" => Some("controller"),
                _ => None,
            };
            if let Some(w) = word {
                return format!("[{w}](#quantities)");
            }
            if let Some(kind) = name.strip_suffix("_settings") {
                if self.done.insert(name.clone()) {
                    let def = self.defs.get(&name).cloned().unwrap_or(Value::Null);
                    nested.push((kind.to_string(), def));
                }
                return format!("table ([`[{kind}]`](#{kind}))");
            }
            let def = self.defs.get(&name).cloned().unwrap_or(Value::Null);
            if self.has_table(&def) {
                if self.done.insert(name.clone()) {
                    nested.push((path.to_string(), def));
                }
                return format!("table ({name})");
            }
            return self.type_name(&def, nested, path);
        }
        if let Some(c) = p.get("const") {
            return format!("`{}`", compact(c));
        }
        // A queue limit that may be given in bandwidth-delay products (`build/bdp.rs`): its
        // plain type, and the table's two keys in words (its description says what they mean).
        if let Some(alts) = p.get("anyOf").and_then(Value::as_array) {
            let is_bdp = |a: &Value| a.pointer("/properties/bdp").is_some();
            if alts.iter().any(is_bdp) {
                let plain = alts.iter().find(|a| !is_bdp(a)).cloned().unwrap_or(Value::Null);
                return format!("{} or `{{ bdp, rtt }}`", self.type_name(&plain, nested, path));
            }
        }
        if let Some(e) = p.get("enum").and_then(Value::as_array) {
            return e.iter().map(|v| format!("`{}`", compact(v))).collect::<Vec<_>>().join(" \\| ");
        }
        if self.has_table(p) {
            nested.push((path.to_string(), p.clone()));
            return "table".into();
        }
        for alt in ["anyOf", "oneOf"] {
            if let Some(a) = p.get(alt).and_then(Value::as_array) {
                let parts: Vec<String> = a
                    .iter()
                    .filter(|x| x.get("type").and_then(Value::as_str) != Some("null"))
                    .map(|x| self.type_name(x, nested, path))
                    .collect();
                return parts.join(" or ");
            }
        }
        match p.get("type") {
            Some(Value::String(t)) => match t.as_str() {
                "array" => {
                    let item = p
                        .get("items")
                        .map(|i| self.type_name(i, nested, &format!("{path}[]")))
                        .unwrap_or_default();
                    format!("list of {item}")
                }
                "object" => match p.get("additionalProperties") {
                    Some(v) if v.is_object() => {
                        format!("table of {}", self.type_name(v, nested, &format!("{path}.<name>")))
                    }
                    _ => "table (free form)".into(),
                },
                other => other.to_string(),
            },
            Some(Value::Array(ts)) => {
                let ts: Vec<&str> = ts.iter().filter_map(Value::as_str).filter(|t| *t != "null").collect();
                if ts == ["array"] {
                    let item = p
                        .get("items")
                        .map(|i| self.type_name(i, nested, &format!("{path}[]")))
                        .unwrap_or_default();
                    return format!("list of {item}");
                }
                ts.join(" or ")
            }
            _ => "any".into(),
        }
    }
}

/// A default that means "unset": null, or a table of nulls.
fn is_unset(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Object(m) => m.values().all(Value::is_null),
        _ => false,
    }
}

/// A doc comment as one Markdown paragraph.
fn one_paragraph(d: &str) -> String {
    d.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn compact(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_default()
}
