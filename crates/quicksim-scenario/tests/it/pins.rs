//! Golden values of whole runs, all in one text file (`pins.txt` beside this module): for each
//! pinned scenario the event count, the event-trace hash, one hash per output table and one per
//! block of the summary. Work on the engine, the network, the transports, the controllers or
//! the recorders cannot change a result without this test noticing, and a new column moves only
//! its own table's line. Each scenario also runs twice: the same seed gives the same values.
//!
//! A change that is *meant* to alter results re-blesses the file:
//! `UPDATE_PINS=1 cargo test -p quicksim-scenario --test it pins` rewrites it and prints every
//! line that moved (old -> new); the commit says why.

use super::*;
use serde_json::json;
use std::collections::BTreeMap;

/// The golden file, next to this module.
const GOLDEN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/it/pins.txt");

/// The command that rewrites the golden file (quoted in it and in failures).
const REBLESS: &str = "UPDATE_PINS=1 cargo test -p quicksim-scenario --test it pins";

/// One pinned scenario: its name in the golden file, what it runs and so guards (the file's
/// comment above its lines), and the scenario.
struct Pinned {
    name: &'static str,
    guards: &'static str,
    scenario: fn() -> serde_json::Value,
}

fn pinned() -> Vec<Pinned> {
    vec![
        Pinned {
            name: "mixed_udp",
            guards: "UDP and ON/OFF sources both ways over a dumbbell with a byte-limited queue, jitter, \
                     Bernoulli loss, a rate schedule and a down period: every path through the event loop, \
                     the channel and the recorders (no transport, so transport work cannot move it)",
            scenario: mixed,
        },
        Pinned {
            name: "quic_linksharing",
            guards: "the linksharing showcase (INET's application: connect at 0 s, 100 kB writes): QUIC \
                     NewReno flows sharing a bottleneck with UDP background",
            scenario: linksharing,
        },
        Pinned {
            name: "quic_linksharing_default_app",
            guards: "the showcase with the default application (connect at start, fill to the limit): its \
                     results from before the `connect` and `write_size` options",
            scenario: || linksharing_with(false),
        },
        Pinned {
            name: "quic_lossy",
            guards: "QUIC with 1 % loss both ways, reordering jitter, ack ratio 10 with the I-bit, three \
                     streams, CUBIC with pacing: loss detection, ACK ranges, the I-bit",
            scenario: lossy,
        },
        Pinned {
            name: "quic_bulk_with_loss",
            guards: "QUIC handshakes over 3 % loss, bulk transfers to completion, small flow-control \
                     windows, long headers, a messages application",
            scenario: bulk_with_loss,
        },
        Pinned {
            name: "quic_ack_frequency",
            guards: "QUIC ACK_FREQUENCY with the cwnd and fixed policies, IMMEDIATE_ACK when the window \
                     blocks",
            scenario: ack_frequency,
        },
        Pinned {
            name: "link_models",
            guards: "UDP both ways over a trace-driven bottleneck with a drop list forward and \
                     Gilbert-Elliott loss backward: the link models",
            scenario: super::links::everything,
        },
        Pinned {
            name: "bbr1_tcp",
            guards: "TCP BBRv1, 10 Mbit/s, 40 ms, 1 % loss, a 30-packet queue, 12 s: recovery, ProbeBW \
                     (its random start phase) and two ProbeRTTs",
            scenario: || super::bbr::one_flow("tcp", "bbr1", 10, 0.01, 30, 12),
        },
        Pinned {
            name: "bbr1_quic",
            guards: "the same over QUIC",
            scenario: || super::bbr::one_flow("quic", "bbr1", 10, 0.01, 30, 12),
        },
        Pinned {
            name: "bbr_tcp",
            guards: "TCP BBR (draft-ietf-ccwg-bbr), 10 Mbit/s, 40 ms, 1 % loss, a 3-BDP queue, 12 s: its \
                     loss responses and ProbeBW's random waits",
            scenario: || super::bbr::one_flow("tcp", "bbr", 10, 0.01, 100, 12),
        },
        Pinned {
            name: "bbr_quic",
            guards: "the same over QUIC",
            scenario: || super::bbr::one_flow("quic", "bbr", 10, 0.01, 100, 12),
        },
    ]
}

/// FNV-1a, 64 bits.
struct Fnv(u64);

impl Fnv {
    fn new() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
    fn eat(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3);
        }
    }
    fn hex(&self) -> String {
        format!("{:016x}", self.0)
    }
}

/// FNV-1a of one table: each column's name, length and values (floats by their bits, strings
/// row by row, a dictionary-encoded column as the strings it holds).
fn table_hash(table: &quicksim_scenario::Table) -> String {
    let mut h = Fnv::new();
    for (cname, col) in table {
        h.eat(cname.as_bytes());
        h.eat(&(col.len() as u64).to_le_bytes());
        match col {
            Column::F64(v) => v.iter().for_each(|x| h.eat(&x.to_bits().to_le_bytes())),
            Column::I64(v) => v.iter().for_each(|x| h.eat(&x.to_le_bytes())),
            Column::Str(_) | Column::Dict { .. } => col.strings().unwrap_or_default().iter().for_each(|s| {
                h.eat(s.as_bytes());
                h.eat(&[0]);
            }),
        }
    }
    h.hex()
}

/// FNV-1a over every table and the summary: one number for "the whole output is the same".
pub(crate) fn tables_hash(o: &RunOutput) -> String {
    let mut h = Fnv::new();
    for (name, table) in &o.tables {
        h.eat(name.as_bytes());
        h.eat(table_hash(table).as_bytes());
    }
    h.eat(o.totals.to_string().as_bytes());
    h.hex()
}

/// One golden line: key, value, and what it guards.
type Line = (String, String, String);

/// The golden lines of one run: events, trace hash, one hash per table, one per summary block.
fn lines(o: &RunOutput) -> Vec<Line> {
    let mut v = vec![
        ("events".to_string(), o.meta["events"].to_string(), "events processed".to_string()),
        (
            "trace".to_string(),
            o.meta["trace_hash"].as_str().expect("trace_hash").to_string(),
            "every event's time and kind, in order".to_string(),
        ),
    ];
    for (name, table) in &o.tables {
        v.push((format!("table.{name}"), table_hash(table), format!("the {name} table")));
    }
    for (key, block) in o.totals.as_object().expect("totals is an object") {
        let mut h = Fnv::new();
        h.eat(block.to_string().as_bytes());
        v.push((format!("totals.{key}"), h.hex(), format!("summary.json's {key}")));
    }
    v
}

/// Every pinned scenario's lines, each scenario run twice (in parallel: one thread a scenario).
fn compute() -> Vec<(Pinned, Vec<Line>)> {
    std::thread::scope(|s| {
        let runs: Vec<_> = pinned()
            .into_iter()
            .map(|p| {
                s.spawn(move || {
                    let sc = (p.scenario)();
                    let a = lines(&go(&sc, None));
                    assert_eq!(
                        lines(&go(&sc, None)),
                        a,
                        "{}: the same seed twice gave different results",
                        p.name
                    );
                    (p, a)
                })
            })
            .collect();
        runs.into_iter().map(|h| h.join().expect("a pinned scenario panicked")).collect()
    })
}

/// The golden file's text for `runs`.
fn render(runs: &[(Pinned, Vec<Line>)]) -> String {
    let mut out = String::from(
        "# Golden values of whole runs (quicksim-scenario, tests/it/pins.rs): each scenario's event\n\
         # count, event-trace hash (FNV-1a), one hash per output table and one per summary.json block.\n\
         # Generated: a change meant to move results re-blesses it with\n",
    );
    out.push_str(&format!("#   {REBLESS}\n"));
    out.push_str(
        "# which rewrites this file and prints each line that moved (old -> new); the commit says why.\n\
         # Columns: scenario, key, value, what the line guards.\n",
    );
    for (p, lines) in runs {
        out.push('\n');
        let mut comment = format!("# {}: {}", p.name, p.guards);
        // Wrapped at 100 columns, as the code.
        while comment.len() > 100 {
            let cut = comment[..100].rfind(' ').expect("words");
            out.push_str(&comment[..cut]);
            out.push('\n');
            comment = format!("#   {}", &comment[cut + 1..]);
        }
        out.push_str(&comment);
        out.push('\n');
        for (key, value, guard) in lines {
            out.push_str(&format!("{:<29} {key:<16} {value:<16}  # {guard}\n", p.name));
        }
    }
    out
}

/// The golden file's values by (scenario, key); an error names the line it cannot read.
fn parse(text: &str) -> Result<BTreeMap<(String, String), String>, String> {
    let mut m = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        let data = line.split('#').next().unwrap_or("").trim();
        if data.is_empty() {
            continue;
        }
        let f: Vec<&str> = data.split_whitespace().collect();
        if f.len() != 3 {
            return Err(format!("{GOLDEN}:{}: want `scenario key value`, got {line:?}", i + 1));
        }
        if m.insert((f[0].to_string(), f[1].to_string()), f[2].to_string()).is_some() {
            return Err(format!("{GOLDEN}:{}: {} {} is pinned twice", i + 1, f[0], f[1]));
        }
    }
    Ok(m)
}

/// Lines that differ between the golden values and the run's: `scenario key: old -> new`.
fn moved(
    golden: &BTreeMap<(String, String), String>,
    got: &BTreeMap<(String, String), String>,
) -> Vec<String> {
    let keys: std::collections::BTreeSet<_> = golden.keys().chain(got.keys()).collect();
    keys.into_iter()
        .filter_map(|k| {
            let (a, b) = (golden.get(k), got.get(k));
            (a != b).then(|| {
                let show = |v: Option<&String>| v.map_or("(none)".to_string(), Clone::clone);
                format!("{} {}: {} -> {}", k.0, k.1, show(a), show(b))
            })
        })
        .collect()
}

#[test]
fn pins_match_the_golden_file() {
    let runs = compute();
    let got: BTreeMap<_, _> = runs
        .iter()
        .flat_map(|(p, lines)| lines.iter().map(|(k, v, _)| ((p.name.to_string(), k.clone()), v.clone())))
        .collect();
    let text = std::fs::read_to_string(GOLDEN).unwrap_or_default();
    let diff = moved(&parse(&text).unwrap_or_else(|e| panic!("{e}")), &got);
    if std::env::var("UPDATE_PINS").is_ok_and(|v| v == "1") {
        let new = render(&runs);
        if new != text {
            std::fs::write(GOLDEN, &new).unwrap_or_else(|e| panic!("{GOLDEN}: {e}"));
        }
        println!("pins: {} line(s) moved{}", diff.len(), if diff.is_empty() { "" } else { ":" });
        diff.iter().for_each(|d| println!("  {d}"));
        return;
    }
    assert!(
        diff.is_empty(),
        "{} pinned value(s) moved (scenario key: pinned -> now):\n  {}\nIf the change is meant to move \
         results, re-bless with `{REBLESS}` and say why in the commit.",
        diff.len(),
        diff.join("\n  ")
    );
    assert_eq!(render(&runs), text, "{GOLDEN} is not as `{REBLESS}` writes it (values match: rewrite it)");
}

/// The golden file's parser refuses what it cannot read, naming the line, and the diff names
/// every moved, new and vanished value.
#[test]
fn pins_file_format() {
    let m = parse("# c\n\na  events 12  # guard\na trace ff\n").unwrap();
    assert_eq!(m.len(), 2);
    assert_eq!(m[&("a".to_string(), "events".to_string())], "12");
    let bad = parse("a events\n").unwrap_err();
    assert!(bad.ends_with("pins.txt:1: want `scenario key value`, got \"a events\""), "{bad}");
    let twice = parse("a k 1\na k 2\n").unwrap_err();
    assert!(twice.ends_with("pins.txt:2: a k is pinned twice"), "{twice}");
    let got = parse("a events 13\na trace ff\nb trace 00\n").unwrap();
    let mut gone = m.clone();
    gone.insert(("c".to_string(), "trace".to_string()), "11".to_string());
    assert_eq!(
        moved(&gone, &got),
        vec!["a events: 12 -> 13", "b trace: (none) -> 00", "c trace: 11 -> (none)"]
    );
}

/// Two saturating CBR sources, a random-size/random-gap source, an ON/OFF source and a reverse
/// CBR flow over a dumbbell with a byte-limited bottleneck queue, jitter, Bernoulli loss, a rate
/// schedule and a down period: every path through the event loop and the channel runs.
fn mixed() -> serde_json::Value {
    json!({
        "run": {"duration": "3s", "seed": 7, "record_interval": "0.1s", "record": {"packets": ["random"]}},
        "dumbbell": {
            "pairs": 4, "mtu": "1500B",
            "bottleneck": {
                "rate": "20Mbps", "delay": "5ms", "queue": {"bytes": "30kB", "packets": 40},
                "forward": {"loss": {"kind": "bernoulli", "p": 0.01},
                            "jitter": {"max": "200us"},
                            "schedule": [{"at": "1s", "rate": "15Mbps"}, {"at": "2s", "rate": "20Mbps"}]},
                "reverse": {"down": [{"from": "1.5s", "to": "1.6s"}]}
            },
            "access": {"rate": "100Mbps", "delay": "1ms"}
        },
        "flows": [
            {"name": "cbr1", "kind": "udp", "src": "sender1", "dst": "receiver1", "size": "1200B", "rate": "9Mbps"},
            {"name": "cbr2", "kind": "udp", "src": "sender2", "dst": "receiver2", "size": "1472B", "rate": "8Mbps", "start": "0.5s", "stop": "2.5s"},
            {"name": "random", "kind": "udp", "src": "sender3", "dst": "receiver3",
             "size": {"dist": "uniform", "min": "100B", "max": "1400B"},
             "interval": {"dist": "exponential", "mean": "2ms"}},
            {"name": "onoff", "kind": "onoff", "src": "sender4", "dst": "receiver4", "size": "1000B", "rate": "6Mbps",
             "on": {"dist": "exponential", "mean": "100ms"}, "off": {"dist": "exponential", "mean": "100ms"}},
            {"name": "back", "kind": "udp", "src": "receiver1", "dst": "sender1", "size": "500B", "rate": "1Mbps"}
        ]
    })
}

/// The bundled showcase `python/quicksim/scenarios/linksharing.toml`, converted by hand: INET's
/// application (connections opened at 0 s, 100 kB whole writes).
pub(crate) fn linksharing() -> serde_json::Value {
    linksharing_with(true)
}

/// The showcase with `inet_app` false: without `connect` and `write_size`, so each connection
/// opens at its start and the application fills the send queue to exactly its limit (the
/// defaults, and the showcase as it was before those options existed).
pub(crate) fn linksharing_with(inet_app: bool) -> serde_json::Value {
    let quic = |name: &str, pair: u32, start: &str, stop: &str| {
        let mut f = json!({"name": name, "kind": "quic", "src": format!("sender{pair}"),
                           "dst": format!("receiver{pair}"), "start": start, "stop": stop});
        if inet_app {
            f["connect"] = json!("0s");
            f["write_size"] = json!("100kB");
        }
        f
    };
    json!({
        "name": "linksharing",
        "run": {"duration": "50s", "seed": 1, "record_interval": "0.5s"},
        "dumbbell": {
            "pairs": 4, "mtu": "1280B",
            "bottleneck": {"rate": "10Mbps", "delay": "10ms", "queue": {"bytes": "25kB", "packets": 10000}},
            "access": {"rate": "1Gbps", "delay": "0s"}
        },
        "quic": {
            "handshake": true, "cc": "newreno", "exact_increase": true, "ack_ratio": 2, "bundle_ack": true,
            "initial_max_data": "4294967295B", "initial_max_stream_data": "4294967295B",
            "send_queue_limit": "100kB", "send_queue_low_water": 0.8
        },
        "flows": [
            quic("sender1", 1, "5s", "30s"),
            quic("sender2", 2, "10s", "40s"),
            quic("sender3", 3, "20s", "45s"),
            {"name": "background", "kind": "udp", "src": "sender4", "dst": "receiver4",
             "size": {"dist": "uniform", "min": "500B", "max": "1000B"},
             "interval": {"dist": "uniform", "min": "10ms", "max": "20ms"}}
        ]
    })
}

/// 1 % Bernoulli loss both ways, jitter with reordering on the data direction, ack ratio 10
/// with the I-bit: loss detection, reordering ACKs, ACK ranges and the I-bit all run.
fn lossy() -> serde_json::Value {
    json!({
        "run": {"duration": "4s", "seed": 11, "record_interval": "0.1s"},
        "dumbbell": {
            "pairs": 3, "mtu": "1500B",
            "bottleneck": {
                "rate": "20Mbps", "delay": "10ms", "queue": {"bytes": "60kB"},
                "loss": {"kind": "bernoulli", "p": 0.01},
                "forward": {"jitter": {"max": "2ms", "reorder": true}}
            },
            "access": {"rate": "100Mbps", "delay": "1ms"}
        },
        "quic": {"handshake": true, "ack_ratio": 10, "ibit": true},
        "flows": [
            {"name": "q1", "kind": "quic", "src": "sender1", "dst": "receiver1"},
            {"name": "q2", "kind": "quic", "src": "sender2", "dst": "receiver2", "start": "0.3s", "streams": 3},
            {"name": "q3", "kind": "quic", "src": "sender3", "dst": "receiver3", "start": "0.5s",
             "quic": {"cc": "cubic", "pacing": true}}
        ]
    })
}

/// Handshakes over a lossy path, then bulk transfers to completion (or the end of the run).
fn bulk_with_loss() -> serde_json::Value {
    json!({
        "run": {"duration": "6s", "seed": 5, "record_interval": "0.2s"},
        "dumbbell": {
            "pairs": 4, "mtu": "1280B",
            "bottleneck": {
                "rate": "10Mbps", "delay": "15ms", "queue": {"packets": 30},
                "loss": {"kind": "bernoulli", "p": 0.03}
            },
            "access": {"rate": "1Gbps", "delay": "0s"}
        },
        "quic": {"handshake": true, "header": "rfc9000", "dcid_len": 8},
        "flows": [
            {"name": "b1", "kind": "quic", "app": "bulk", "bytes": "1MB", "src": "sender1", "dst": "receiver1"},
            {"name": "b2", "kind": "quic", "app": "bulk", "bytes": "2MB", "src": "sender2", "dst": "receiver2", "start": "0.1s",
             "quic": {"initial_max_data": "64kB", "initial_max_stream_data": "32kB"}},
            {"name": "b3", "kind": "quic", "app": "bulk", "bytes": "300kB", "src": "sender3", "dst": "receiver3", "start": "0.2s",
             "quic": {"partial_window": true, "max_ack_ranges": 4}},
            {"name": "m4", "kind": "quic", "app": "messages", "size": "1000B", "interval": "50ms",
             "src": "sender4", "dst": "receiver4", "start": "0.05s"}
        ]
    })
}

/// ACK_FREQUENCY with the cwnd policy and IMMEDIATE_ACK when the window blocks.
fn ack_frequency() -> serde_json::Value {
    json!({
        "run": {"duration": "3s", "seed": 3, "record_interval": "0.1s"},
        "dumbbell": {
            "pairs": 2, "mtu": "1280B",
            "bottleneck": {"rate": "50Mbps", "delay": "10ms", "queue": {"bytes": "125kB"},
                           "forward": {"loss": {"kind": "bernoulli", "p": 0.002}}},
            "access": {"rate": "1Gbps", "delay": "0s"}
        },
        "quic": {"handshake": true, "min_ack_delay": "1ms", "immediate_ack_on_block": true},
        "flows": [
            {"name": "af1", "kind": "quic", "src": "sender1", "dst": "receiver1",
             "quic": {"ack_policy": "cwnd", "ack_frequency_max": 8}},
            {"name": "af2", "kind": "quic", "src": "sender2", "dst": "receiver2", "start": "0.4s",
             "quic": {"ack_policy": "fixed", "ack_frequency_threshold": 3}}
        ]
    })
}
