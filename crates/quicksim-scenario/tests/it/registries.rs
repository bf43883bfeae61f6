//! What a registry entry gets without another line anywhere: every built-in queue discipline of
//! `qdiscs!` and every link model of `link_models!` (their `KINDS`, so a new one is picked up
//! here automatically) is read by a scenario and has its section in the scenario reference and
//! the JSON Schema; each discipline also carries a packet flow end to end with its defaults.

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

/// Every link model of `link_models!` (its `KINDS`): the reference and the JSON Schema describe
/// it, and a scenario naming it is read by the registry (an unknown kind is refused naming the
/// field and the models there are).
#[test]
fn every_builtin_link_model_is_documented_and_read_from_the_registry() {
    use quicksim_net::model::LinkModelConfig;
    let md = reference::markdown();
    let schema = reference::json_schema();
    let titles: Vec<String> = schema["$defs"]["Model"]["oneOf"]
        .as_array()
        .expect("the model schema lists its alternatives")
        .iter()
        .map(|a| a["title"].as_str().unwrap_or("").to_string())
        .collect();
    for kind in LinkModelConfig::KINDS {
        assert!(
            md.contains(&format!("## links[].model (kind = \"{kind}\")")),
            "{kind} has no reference section"
        );
        assert!(titles.iter().any(|t| t == kind), "{kind} is not in the schema's model alternatives");
    }
    let mut sc = udp_through(json!({"packets": 100}));
    sc["dumbbell"]["bottleneck"]["model"] = json!({"kind": "wavy"});
    let e = quicksim_scenario::validate(&sc.to_string()).unwrap_err().to_string();
    let kinds: Vec<String> = LinkModelConfig::KINDS.iter().map(|k| format!("`{k}`")).collect();
    assert_eq!(
        e,
        format!(
            "dumbbell.bottleneck.model.kind: unknown variant `wavy`, expected one of {}",
            kinds.join(", ")
        )
    );
}
