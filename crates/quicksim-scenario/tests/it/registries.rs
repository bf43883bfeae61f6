//! What a registry entry gets without another line anywhere: every built-in queue discipline of
//! `qdiscs!` (its `KINDS`, so a new one is picked up here automatically) is accepted by a
//! scenario with its defaults, carries a packet flow end to end, and has its section in the
//! scenario reference and the JSON Schema.

use quicksim_net::QdiscConfig;
use quicksim_scenario::format::reference;
use serde_json::json;

fn udp_through(queue: serde_json::Value) -> serde_json::Value {
    json!({
        "run": {"duration": "2s"},
        "dumbbell": {"pairs": 1, "bottleneck": {"rate": "10Mbps", "delay": "5ms", "queue": queue}},
        "flows": [{"name": "u", "kind": "udp", "src": "sender1", "dst": "receiver1",
                   "size": "1000B", "rate": "2Mbps"}],
    })
}

#[test]
fn every_builtin_queue_discipline_runs_with_its_defaults_and_is_documented() {
    assert!(QdiscConfig::KINDS.len() >= 5, "{:?}", QdiscConfig::KINDS);
    let md = reference::markdown();
    let schema = reference::json_schema();
    let titles: Vec<String> = schema["$defs"]["Queue"]["anyOf"]
        .as_array()
        .expect("the queue schema lists its alternatives")
        .iter()
        .map(|a| a["title"].as_str().unwrap_or("").to_string())
        .collect();
    for kind in QdiscConfig::KINDS {
        let sc = udp_through(json!({"kind": kind}));
        let out = quicksim_scenario::run(&sc.to_string(), None, &mut |_, _| true)
            .unwrap_or_else(|e| panic!("queue kind {kind:?}: {e}"));
        // 2 Mbit/s of 1000 B payloads for 2 s into a 10 Mbit/s link: nothing waits, nothing is
        // dropped; every packet sent is delivered or still in the 5 ms path at the end.
        let f = &out.totals["flows"]["u"];
        let (sent, deliv) = (f["packets_sent"].as_u64().unwrap(), f["packets_delivered"].as_u64().unwrap());
        assert_eq!(sent, 500, "{kind}");
        assert_eq!(f["packets_dropped"].as_u64(), Some(0), "{kind}");
        assert_eq!(sent, deliv + out.meta["packets_in_network_at_end"].as_u64().unwrap(), "{kind}");
        assert!(
            md.contains(&format!("## links[].queue (kind = \"{kind}\")")),
            "{kind} has no reference section"
        );
        assert!(titles.iter().any(|t| t == kind), "{kind} is not in the schema's queue alternatives");
    }
}
