//! Random flow values (start, stop, bulk bytes drawn once per flow from its own stream), flow
//! groups and queue limits in bandwidth-delay products, through whole scenarios: what was drawn
//! (`meta.drawn`), that it repeats with the seed and stays put when flows are added, each kind
//! in a group, and each bad input refused naming its field and value.

use super::*;
use serde_json::{json, Value};

/// `flows` (tables without src/dst: sender1 -> receiver1 added) over a one-pair dumbbell.
fn sc(flows: Value) -> Value {
    let flows: Vec<Value> = flows
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let mut f = f.clone();
            f["src"] = "sender1".into();
            f["dst"] = "receiver1".into();
            f
        })
        .collect();
    json!({
        "run": {"duration": "2s"},
        "dumbbell": {"pairs": 1, "bottleneck": {"rate": "10Mbps", "delay": "10ms"}},
        "flows": flows
    })
}

fn udp(name: &str, extra: Value) -> Value {
    let mut f = json!({"name": name, "kind": "udp", "size": "100B", "interval": "10ms"});
    for (k, v) in extra.as_object().unwrap() {
        f[k] = v.clone();
    }
    f
}

fn drawn(o: &RunOutput, flow: &str, key: &str) -> f64 {
    o.meta["drawn"][flow][key].as_f64().unwrap_or_else(|| panic!("meta.drawn.{flow}.{key}: {}", o.meta))
}

#[test]
fn a_random_start_is_drawn_within_its_bounds_and_used() {
    let start = json!({"dist": "uniform", "min": "100ms", "max": "900ms"});
    let o = go(&sc(json!([udp("a", json!({"start": start}))])), Some(1));
    let s = drawn(&o, "a", "start_s");
    assert!((0.1..=0.9).contains(&s), "{s}");
    // The flow's totals say the same start, and it did send.
    assert_eq!(o.totals["flows"]["a"]["start_s"].as_f64().unwrap(), s);
    assert!(o.totals["flows"]["a"]["packets_sent"].as_u64().unwrap() > 0);
}

#[test]
fn draws_repeat_with_the_seed_differ_across_seeds_and_ignore_other_flows() {
    let start = json!({"dist": "exponential", "mean": "300ms"});
    let bytes = json!({"dist": "pareto", "mean": "100kB", "shape": 1.5});
    let one = json!([{"name": "t", "kind": "tcp", "app": "bulk", "bytes": bytes, "start": start}]);
    let draws = |flows: &Value, seed| {
        let o = go(&sc(flows.clone()), Some(seed));
        (drawn(&o, "t", "start_s"), drawn(&o, "t", "bytes"))
    };
    let a = draws(&one, 7);
    assert_eq!(a, draws(&one, 7));
    let others: Vec<(f64, f64)> = (8..12).map(|s| draws(&one, s)).collect();
    assert!(others.iter().all(|&b| b != a), "{a:?} {others:?}");
    // Flows added before and after it (also random) leave its draws as they were.
    let more = json!([udp("first", json!({"start": start})),
                      {"name": "t", "kind": "tcp", "app": "bulk", "bytes": bytes, "start": start},
                      udp("last", json!({"start": start}))]);
    assert_eq!(draws(&more, 7), a);
}

#[test]
fn constant_flows_draw_nothing_and_show_nothing() {
    let o = go(&sc(json!([udp("a", json!({"start": "0.5s"}))])), None);
    assert!(o.meta.get("drawn").is_none(), "{}", o.meta);
}

#[test]
fn a_group_makes_its_members_for_every_kind() {
    let kinds = [
        udp("g", json!({})),
        json!({"name": "g", "kind": "onoff", "size": "100B", "interval": "10ms",
               "on": {"dist": "exponential", "mean": "100ms"}, "off": "100ms"}),
        json!({"name": "g", "kind": "quic"}),
        json!({"name": "g", "kind": "tcp", "app": "bulk", "bytes": "20kB"}),
        json!({"name": "g", "kind": "quinn", "app": "bulk", "bytes": "20kB"}),
    ];
    for mut f in kinds {
        f["count"] = 3.into();
        f["stagger"] = "100ms".into();
        let o = go(&sc(json!([f])), None);
        let flows = o.totals["flows"].as_object().unwrap();
        let names: Vec<&String> = flows.keys().collect();
        assert_eq!(names, ["g-0", "g-1", "g-2"], "{}", f["kind"]);
        for i in 0..3 {
            let m = &flows[&format!("g-{i}")];
            // Member i starts i × stagger after the group's start.
            assert!((m["start_s"].as_f64().unwrap() - 0.1 * i as f64).abs() < 1e-12, "{m}");
            assert!(m["delivered_bytes"].as_u64().unwrap() > 0, "{} g-{i}: {m}", f["kind"]);
        }
    }
}

#[test]
fn group_members_draw_each_from_their_own_stream() {
    let f = udp("g", json!({"count": 4, "start": {"dist": "uniform", "min": "0s", "max": "1s"}}));
    let o = go(&sc(json!([f])), Some(3));
    let s: Vec<f64> = (0..4).map(|i| drawn(&o, &format!("g-{i}"), "start_s")).collect();
    for i in 0..4 {
        for j in 0..i {
            assert_ne!(s[i], s[j], "{s:?}");
        }
    }
    // A member draws what a lone flow of its name draws.
    let lone = udp("g-2", json!({"start": {"dist": "uniform", "min": "0s", "max": "1s"}}));
    assert_eq!(drawn(&go(&sc(json!([lone])), Some(3)), "g-2", "start_s"), s[2]);
}

#[test]
fn the_scenario_is_written_back_as_written() {
    let f = udp(
        "g",
        json!({"count": 100, "stagger": "1ms", "start": {"dist": "normal", "mean": "1s", "stddev": "100ms"}}),
    );
    let n = quicksim_scenario::normalize(&sc(json!([f, udp("h", json!({}))])).to_string()).unwrap();
    let flows = n["flows"].as_array().unwrap();
    assert_eq!(flows.len(), 2, "{n}");
    assert_eq!(flows[0]["name"], "g");
    assert_eq!(flows[0]["count"], 100);
    assert_eq!(flows[0]["stagger"], "1ms");
    assert_eq!(flows[0]["start"], json!({"dist": "normal", "mean": "1s", "stddev": "100ms"}));
    assert_eq!(flows[1]["name"], "h");
}

#[test]
fn errors_name_the_field_and_value() {
    let bad = |f: Value| err_of(sc(json!([f])));
    let cases = [
        (
            udp("a", json!({"start": {"dist": "uniform", "min": "2s", "max": "1s"}})),
            "flows[0].start",
            "\"2s\"",
        ),
        (udp("a", json!({"start": {"dist": "gauss", "mean": "1s"}})), "flows[0].start", "\"gauss\""),
        (udp("a", json!({"start": {"dist": "normal", "mean": "1s"}})), "flows[0].start", "stddev"),
        (
            udp("a", json!({"start": {"dist": "uniform", "min": "0s", "max": "1s", "mean": "1s"}})),
            "flows[0].start",
            "`mean`",
        ),
        (udp("a", json!({"stop": {"dist": "exponential", "mean": "0s"}})), "flows[0].stop", "\"0s\""),
        (
            udp("a", json!({"start": {"dist": "pareto", "mean": "1s", "shape": 1.0}})),
            "flows[0].start",
            "shape = 1",
        ),
        (
            udp("a", json!({"start": {"dist": "lognormal", "median": "1s", "sigma": -1}})),
            "flows[0].start",
            "sigma = -1",
        ),
        (udp("a", json!({"size": {"dist": "exponential", "mean": "100B"}})), "flows[0].size", "exponential"),
        (udp("a", json!({"count": 0})), "flows[0].count", "0"),
        (udp("a", json!({"stagger": "1ms"})), "flows[0].stagger", "\"1ms\""),
        (
            json!({"name": "a", "kind": "tcp", "app": "bulk", "bytes": {"dist": "uniform", "min": "1kB"}}),
            "flows[0].bytes",
            "max",
        ),
    ];
    for (f, path, value) in cases {
        let e = bad(f.clone());
        assert!(e.starts_with(path), "{f}: {e}");
        assert!(e.contains(value), "{f}: {e}");
    }
    // Two members clashing with a flow of the same name.
    let e = err_of(sc(json!([udp("g", json!({"count": 2})), udp("g-1", json!({}))])));
    assert!(e.starts_with("flows[1].name") && e.contains("\"g-1\""), "{e}");
}

#[test]
fn a_queue_in_bdp_is_the_rate_times_the_rtt_rounded_up_to_packets() {
    // 10 Mbit/s × 100 ms = 125 000 B; 1.5 BDP = 187 500 B = 125 packets of 1500 B exactly.
    let mut s = sc(json!([udp("a", json!({}))]));
    s["dumbbell"]["bottleneck"]["queue"] =
        json!({"kind": "droptail", "packets": {"bdp": 1.5, "rtt": "100ms"}});
    let o = go(&s, None);
    let links = o.meta["network"]["links"].as_object().unwrap();
    let bn: Vec<&Value> = links.iter().filter(|(n, _)| n.starts_with("bottleneck")).map(|(_, l)| l).collect();
    assert_eq!(bn.len(), 2, "{links:?}");
    for l in bn {
        assert_eq!(l["queue"]["packets"], 125, "{l}");
    }
    s["dumbbell"]["bottleneck"]["queue"]["packets"] = json!({"bdp": "lots", "rtt": "100ms"});
    let e = err_of(s);
    assert!(e.starts_with("dumbbell.bottleneck.queue.packets.bdp") && e.contains("lots"), "{e}");
}

/// A udp source's payload rate at `rate`, 1000 B datagrams.
fn cbr(name: &str, rate: Value, extra: Value) -> Value {
    let mut f = udp(name, extra);
    f.as_object_mut().unwrap().remove("interval");
    f["size"] = "1000B".into();
    f["rate"] = rate;
    f
}

#[test]
fn a_random_rate_is_drawn_once_within_its_bounds_and_sent_at() {
    let rate = json!({"dist": "uniform", "min": "1Mbps", "max": "3Mbps"});
    let o = go(&sc(json!([cbr("a", rate.clone(), json!({}))])), Some(3));
    let r = drawn(&o, "a", "rate_bps");
    assert!((1e6..=3e6).contains(&r), "{r}");
    // 2 s at the drawn rate, one datagram at t = 0 and then one per 8000 bits / r.
    let sent = o.totals["flows"]["a"]["app_sent_bytes"].as_f64().unwrap();
    let want = (2.0 * r / 8000.0).ceil() * 1000.0;
    assert!((sent - want).abs() <= 1000.0, "sent {sent} B, at {r} bit/s {want} B");
    // An ON-OFF source's rate is drawn too, from its own stream.
    let onoff = json!({"name": "b", "kind": "onoff", "size": "1000B", "rate": rate,
                       "on": {"dist": "exponential", "mean": "100ms"}, "off": "50ms"});
    let o = go(&sc(json!([onoff])), Some(3));
    assert!((1e6..=3e6).contains(&drawn(&o, "b", "rate_bps")));
}

#[test]
fn rates_and_extra_delays_repeat_with_the_seed_and_leave_earlier_draws_alone() {
    let rate = json!({"dist": "lognormal", "median": "2Mbps", "sigma": 0.5});
    let delay = json!({"dist": "uniform", "min": "5ms", "max": "50ms"});
    let start = json!({"dist": "uniform", "min": "0s", "max": "500ms"});
    let flows = json!([cbr("a", rate, json!({"extra_delay": delay, "start": start}))]);
    let draws = |seed| {
        let o = go(&sc(flows.clone()), Some(seed));
        (drawn(&o, "a", "start_s"), drawn(&o, "a", "rate_bps"), drawn(&o, "a", "extra_delay_s"))
    };
    let a = draws(5);
    assert_eq!(a, draws(5));
    assert!((0.005..=0.05).contains(&a.2), "{a:?}");
    assert!((6..10).map(draws).all(|b| b.1 != a.1 && b.2 != a.2), "{a:?}");
    // The start is drawn first, as it was before rates and delays could be drawn.
    let plain = go(&sc(json!([cbr("a", "2Mbps".into(), json!({"start": start}))])), Some(5));
    assert_eq!(drawn(&plain, "a", "start_s"), a.0);
    assert!(plain.meta["drawn"]["a"].get("rate_bps").is_none(), "a constant rate is not a draw");
}

#[test]
fn an_extra_delay_adds_to_every_packets_one_way_delay() {
    // 1 Mbit/s through an idle 10 Mbit/s dumbbell: no packet waits, so every one-way delay is
    // the same, and 20 ms more with the extra delay.
    let owd = |extra: Value| {
        let mut s = sc(json!([cbr("a", "1Mbps".into(), extra)]));
        s["run"]["record"] = json!({"delays": true});
        let o = go(&s, None);
        let t = &o.totals["flows"]["a"];
        assert_eq!(t["queueing_p99_s"].as_f64(), Some(0.0), "{t}");
        (t["owd_mean_s"].as_f64().unwrap(), t["packets_delivered"].as_u64().unwrap())
    };
    let (base, n) = owd(json!({}));
    let (held, m) = owd(json!({"extra_delay": "20ms"}));
    assert!((held - base - 0.020).abs() < 1e-12, "{base} -> {held}");
    // Packets still in the 20 ms at the end are not delivered: at 1 Mbit/s, 1000 B every 8 ms.
    assert!(n - m <= 3 && m > 0, "{n} vs {m}");
}

#[test]
fn bad_rates_and_delays_name_the_field_and_value() {
    let cases = [
        (
            cbr("a", json!({"dist": "uniform", "min": "2Mbps", "max": "1Mbps"}), json!({})),
            "flows[0].rate",
            "uniform min \"2Mbps\" is larger than max \"1Mbps\"",
        ),
        (cbr("a", json!({"dist": "exponential", "mean": "0Mbps"}), json!({})), "flows[0].rate", "\"0Mbps\""),
        (cbr("a", json!({"dist": "poisson", "mean": "1Mbps"}), json!({})), "flows[0].rate", "\"poisson\""),
        (
            cbr("a", json!({"dist": "uniform", "min": "1Mbps", "max": "2ms"}), json!({})),
            "flows[0].rate",
            "\"2ms\"",
        ),
        (
            cbr("a", json!({"dist": "uniform", "min": "1000Tbps", "max": "2000Tbps"}), json!({})),
            "flows[0].rate",
            "drawn",
        ),
        (
            udp("a", json!({"extra_delay": {"dist": "normal", "mean": "1ms"}})),
            "flows[0].extra_delay",
            "stddev",
        ),
        (udp("a", json!({"extra_delay": "-1ms"})), "flows[0].extra_delay", "\"-1ms\""),
    ];
    for (f, path, value) in cases {
        let e = err_of(sc(json!([f])));
        assert!(e.starts_with(path), "{f}: {e}");
        assert!(e.contains(value), "{f}: {e}");
    }
}
