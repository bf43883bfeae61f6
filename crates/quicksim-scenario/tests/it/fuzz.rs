//! Fuzzing the scenario parser and the units grammar with random and mutated input: 10^5
//! mutated scenarios (structural edits of valid ones, then byte edits of their text) through
//! `validate`, a sample of the accepted ones through `run` under an event budget, and random
//! strings through each unit parser. Nothing may panic: every input is accepted or refused with
//! a `ScenarioError` (field path + message, on one line). Deterministic (a fixed xorshift seed),
//! so a failure reproduces; the failing input is printed.

use quicksim_scenario::units::{
    format_bytes, format_duration, format_rate, parse_bytes, parse_duration, parse_rate,
};
use quicksim_scenario::{run, validate};
use serde_json::{json, Value};
use std::panic::{catch_unwind, AssertUnwindSafe};

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.below(v.len())]
    }
}

fn seeds() -> Vec<Value> {
    vec![
        json!({
            "run": {"duration": "1s", "record_interval": "100ms"},
            "dumbbell": {"pairs": 2, "mtu": "1500B", "bottleneck": {"rate": "10Mbps", "delay": "10ms",
                "queue": {"packets": 20}, "loss": {"kind": "bernoulli", "p": 0.01}},
                "access": {"rate": "100Mbps", "delay": "1ms"}},
            "quic": {"cc": "cubic"},
            "flows": [
                {"name": "u", "kind": "udp", "src": "sender1", "dst": "receiver1", "size": "1000B", "rate": "2Mbps"},
                {"name": "q", "kind": "quic", "app": "bulk", "bytes": "100kB", "src": "sender2", "dst": "receiver2",
                 "start": "100ms", "streams": 2},
            ]
        }),
        json!({
            "run": {"duration": "2s", "record": {"packets": ["t"], "conn_interval": "10ms"}},
            "nodes": {"a": {"kind": "host"}, "r": {"kind": "router"}, "b": {"kind": "host"}},
            "links": [
                {"name": "l1", "a": "a", "b": "r", "rate": "5Mbps", "delay": "5ms", "jitter": {"max": "1ms"}},
                {"name": "l2", "a": "r", "b": "b", "rate": "1Mbps", "delay": "20ms",
                 "queue": {"kind": "droptail", "bytes": "30kB"}}
            ],
            "tcp": {"cc": "newreno"},
            "flows": [
                {"name": "t", "kind": "tcp", "app": "bulk", "bytes": "200kB", "src": "a", "dst": "b"},
                {"name": "m", "kind": "quic", "app": "messages", "size": "3000B", "interval": "50ms",
                 "src": "b", "dst": "a", "stop": "1500ms"},
                {"name": "o", "kind": "onoff", "src": "a", "dst": "b", "size": {"dist": "uniform", "min": "100B", "max": "900B"},
                 "interval": "5ms", "on": {"dist": "exponential", "mean": "200ms"}, "off": "100ms"}
            ]
        }),
        // Issue 39: the overloaded link whose drops outgrew the memory.
        json!({
            "run": {"duration": "2s", "record": {"max_samples": 1000}},
            "dumbbell": {"pairs": 1, "bottleneck": {"rate": "1Gbps", "delay": "10ms"},
                "access": {"rate": "100Gbps", "delay": "1ms"}},
            "flows": [{"name": "flood", "kind": "udp", "src": "sender1", "dst": "receiver1", "size": "1472B",
                "rate": "100Gbps"}]
        }),
    ]
}

fn random_value(r: &mut Rng, depth: usize) -> Value {
    const STRINGS: &[&str] = &[
        "",
        "0s",
        "1ps",
        "10 Mbs",
        "1e-3s",
        "-5ms",
        "abc",
        "1.5.5s",
        "µs",
        "1µs",
        "100000000000000000000000Gbps",
        "0B",
        "1KiB",
        "18446744073709551616B",
        "sender1",
        "receiver1",
        "router1",
        "a",
        "b",
        "r",
        "bulk",
        "messages",
        "quic",
        "tcp",
        "udp",
        "onoff",
        "cubic",
        "nope",
        "droptail",
        "red",
        "bernoulli",
        "periodic",
        "1h",
        "9999h",
        // Issue 39: durations at and past simulated time's range (50 days is the longest).
        "5000h",
        "1200h",
        "1201h",
        "4320000s",
        // Issue 39, the memory budget: rates at and past what picosecond time carries (a
        // datagram every ns at most), and the growing tables' settings.
        "1000Tbps",
        "12Tbps",
        "11Tbps",
        "100Gbps",
        "18446744073709551615bps",
        "drops",
        "queues",
        "packets",
        "conn",
        "../../x",
        "/abs",
        "a/b",
        "0.000000001ps",
        "1_000ms",
        "nan",
        "inf",
        "true",
        "{}",
        "[",
        "\u{0}",
        "ü",
        "💥",
    ];
    match r.below(if depth > 3 { 7 } else { 10 }) {
        0 => json!(r.pick(&[0i64, -1, 1, 2, 3, 7, 1500, 4000, i64::MIN, i64::MAX, 4_294_967_296])),
        1 => json!(r.pick(&[u64::MAX, 1u64 << 40, 1 << 32, 1 << 12])),
        2 => json!(r.pick(&[0.0f64, -0.0, 0.5, 1.0, 1.5, -1.0, 1e308, -1e308, 1e-308, 0.999_999])),
        3 | 4 => json!(r.pick(STRINGS)),
        5 => json!(r.below(2) == 0),
        6 => Value::Null,
        7 => Value::Array((0..r.below(3)).map(|_| random_value(r, depth + 1)).collect()),
        8 => {
            let keys = ["kind", "name", "rate", "p", "every", "packets", "dist", "mean", "x"];
            let mut m = serde_json::Map::new();
            for _ in 0..r.below(3) {
                m.insert(r.pick(&keys).to_string(), random_value(r, depth + 1));
            }
            Value::Object(m)
        }
        _ => {
            // Deep nesting (serde_json's own limit is 128 levels).
            let mut v = json!(1);
            for _ in 0..r.below(300) {
                v = json!([v]);
            }
            v
        }
    }
}

/// A random node of the tree (by repeated descent), as a mutable reference.
fn random_node<'a>(r: &mut Rng, mut v: &'a mut Value) -> &'a mut Value {
    loop {
        let stop = r.below(4) == 0;
        let n = match v {
            Value::Object(m) => m.len(),
            Value::Array(a) => a.len(),
            _ => 0,
        };
        if stop || n == 0 {
            return v;
        }
        let i = r.below(n);
        v = match v {
            Value::Object(m) => m.values_mut().nth(i).expect("in range"),
            Value::Array(a) => &mut a[i],
            _ => unreachable!(),
        };
    }
}

fn mutate(r: &mut Rng, v: &mut Value) {
    let node = random_node(r, v);
    match r.below(5) {
        0 | 1 => *node = random_value(r, 0),
        2 => match node {
            Value::Object(m) if !m.is_empty() => {
                let k = m.keys().nth(r.below(m.len())).expect("in range").clone();
                m.remove(&k);
            }
            Value::Array(a) if !a.is_empty() => {
                let i = r.below(a.len());
                a.remove(i);
            }
            _ => *node = random_value(r, 0),
        },
        3 => match node {
            Value::Object(m) => {
                let keys = [
                    "name",
                    "kind",
                    "start",
                    "stop",
                    "bytes",
                    "rate",
                    "mtu",
                    "pairs",
                    "streams",
                    "zzz",
                    "initial_rtt",
                    "max_ack_delay",
                    "delay",
                    "size",
                    "interval",
                ];
                m.insert(r.pick(&keys).to_string(), random_value(r, 0));
            }
            Value::Array(a) if !a.is_empty() => {
                let e = a[r.below(a.len())].clone();
                a.push(e);
            }
            _ => *node = random_value(r, 0),
        },
        _ => *node = Value::Null,
    }
}

fn text_mutate(r: &mut Rng, s: &str) -> String {
    let mut b: Vec<char> = s.chars().collect();
    for _ in 0..1 + r.below(3) {
        let i = r.below(b.len() + 1);
        match r.below(3) {
            0 if i < b.len() => {
                b.remove(i);
            }
            1 => {
                b.insert(i, *r.pick(&['{', '}', '[', ']', '"', ',', ':', '0', '9', '-', '.', 'e', '\\', ' ']))
            }
            _ if i < b.len() => b[i] = *r.pick(&['"', '1', 'x', '}', ']', 'µ']),
            _ => {}
        }
    }
    b.into_iter().collect()
}

fn check_no_panic(text: &str, what: &str) -> bool {
    match catch_unwind(AssertUnwindSafe(|| validate(text))) {
        Ok(Ok(_)) => true,
        Ok(Err(e)) => {
            let line = e.to_string();
            assert!(!line.contains('\n'), "{what}: a multi-line error for {text}: {line}");
            false
        }
        Err(_) => panic!("{what}: validate panicked on {text}"),
    }
}

#[test]
fn mutated_scenarios_never_panic() {
    let seeds = seeds();
    for s in &seeds {
        assert!(check_no_panic(&s.to_string(), "seed"), "a seed scenario must be valid: {s}");
    }
    let mut r = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut accepted, mut ran) = (0, 0);
    let cases = 100_000;
    for case in 0..cases {
        let mut v = r.pick(&seeds).clone();
        for _ in 0..1 + r.below(2) {
            mutate(&mut r, &mut v);
        }
        let mut text = v.to_string();
        if case % 8 == 0 {
            text = text_mutate(&mut r, &text);
        }
        if std::env::var("FUZZ_TRACE").is_ok() {
            eprintln!("V {case} {text}");
        }
        if check_no_panic(&text, &format!("case {case}")) {
            accepted += 1;
            // Some accepted ones run as well, under an event budget.
            if accepted % 40 == 0 {
                if let Ok(mut v) = serde_json::from_str::<Value>(&text) {
                    v["run"]["max_events"] = json!(3000);
                    let t = v.to_string();
                    if std::env::var("FUZZ_TRACE").is_ok() {
                        eprintln!("R {case} {t}");
                    }
                    let out = catch_unwind(AssertUnwindSafe(|| run(&t, Some(1), &mut |_, _| true)));
                    assert!(out.is_ok(), "case {case}: run panicked on {t}");
                    ran += 1;
                }
            }
        }
    }
    eprintln!("{cases} cases: {accepted} accepted ({ran} run), {} refused with one line", cases - accepted);
    // The mutations must leave a fair share valid, or the fuzzing only tests the first checks.
    assert!(accepted > cases / 25 && ran > 50, "accepted {accepted}, ran {ran}");
}

fn random_unit_text(r: &mut Rng) -> String {
    const UNITS: &[&str] = &[
        "", "s", "ms", "us", "µs", "ns", "ps", "min", "h", "bps", "kbps", "Mbps", "Gbps", "Tbps", "B", "kB",
        "MB", "GB", "KiB", "MiB", "b", "kb", "Mb", "x", " s", "S", "e3s",
    ];
    let mut s = String::new();
    if r.below(10) == 0 {
        s.push(*r.pick(&['-', '+', ' ', '.']));
    }
    let max = if r.below(50) == 0 { 60 } else { 8 };
    for _ in 0..r.below(max) {
        s.push(*r.pick(&['0', '1', '5', '9', '.', '_', '0', '3']));
    }
    let unit: &&str = r.pick(UNITS);
    s.push_str(unit);
    if r.below(20) == 0 {
        s.push(*r.pick(&['\u{0}', 'é', ' ', '.', '9']));
    }
    s
}

#[test]
fn units_never_panic_and_round_trip() {
    let mut r = Rng(0x2545_f491_4f6c_dd1d);
    for i in 0..120_000 {
        let s = random_unit_text(&mut r);
        let out = catch_unwind(|| {
            if let Ok(d) = parse_duration(&s) {
                assert_eq!(parse_duration(&format_duration(d)), Ok(d), "{s:?}");
            }
            if let Ok(v) = parse_rate(&s) {
                assert_eq!(parse_rate(&format_rate(v)).map(|x| x.bits_per_s), Ok(v.bits_per_s), "{s:?}");
            }
            if let Ok(b) = parse_bytes(&s) {
                assert_eq!(parse_bytes(&format_bytes(b)), Ok(b), "{s:?}");
            }
            for e in
                [parse_duration(&s).err(), parse_rate(&s).err(), parse_bytes(&s).err()].into_iter().flatten()
            {
                assert!(!e.contains('\n'), "{s:?}: {e}");
            }
        });
        assert!(out.is_ok(), "case {i}: a unit parser panicked on {s:?}");
    }
}
