//! A toy output sink, written in this one file and added through `Plugins::add_sink`: the proof
//! that an output (a pcap or qlog writer, a custom table) attaches to every run without touching
//! the run loop. It counts what it is told and writes one table; the counts are checked against
//! a hand computation and against the built-in tables of the same run.

use quicksim_scenario::output::{ConnCounters, ConnSample, PacketInfo, RunInfo, Sink, TransportEvent};
use quicksim_scenario::plugins::Plugins;
use quicksim_scenario::{run_with, Column, RunOutput, Table};
use serde_json::json;

/// Per flow: packets leaving the source, packets reaching the destination, application bytes
/// handed over, transport packets sent by the client, conn samples.
struct Counter {
    sent: Vec<i64>,
    received: Vec<i64>,
    app_bytes: Vec<i64>,
    client_packets: Vec<i64>,
    samples: Vec<i64>,
}

impl Sink for Counter {
    fn wants_transport_events(&self) -> bool {
        true
    }
    fn packet_sent(&mut self, _now: quicksim_engine::SimTime, _n: quicksim_net::NodeId, p: &PacketInfo) {
        self.sent[p.flow as usize] += p.forward as i64;
    }
    fn packet_received(&mut self, _now: quicksim_engine::SimTime, p: &PacketInfo) {
        self.received[p.flow as usize] += p.forward as i64;
    }
    fn app_sent(&mut self, _now: quicksim_engine::SimTime, flow: u32, bytes: u64) {
        self.app_bytes[flow as usize] += bytes as i64;
    }
    fn conn_sample(&mut self, _now: quicksim_engine::SimTime, flow: u32, _s: &ConnSample, _c: &ConnCounters) {
        self.samples[flow as usize] += 1;
    }
    fn transport_event(
        &mut self,
        _now: quicksim_engine::SimTime,
        flow: u32,
        side: u8,
        ev: TransportEvent<'_>,
    ) {
        if side == 0 && matches!(ev, TransportEvent::PacketSent { .. }) {
            self.client_packets[flow as usize] += 1;
        }
    }
    fn finish(&mut self, info: &RunInfo<'_>) -> Vec<(String, Table)> {
        let col = |v: &Vec<i64>| Column::I64(v.clone());
        vec![(
            "toy".to_string(),
            vec![
                ("flow".to_string(), Column::Str(info.flow_names.to_vec())),
                ("sent".to_string(), col(&self.sent)),
                ("received".to_string(), col(&self.received)),
                ("app_bytes".to_string(), col(&self.app_bytes)),
                ("client_packets".to_string(), col(&self.client_packets)),
                ("samples".to_string(), col(&self.samples)),
            ],
        )]
    }
}

fn toy(o: &RunOutput, c: &str) -> Vec<i64> {
    match o.column("toy", c) {
        Some(Column::I64(v)) => v.clone(),
        other => panic!("toy.{c}: {other:?}"),
    }
}

#[test]
fn a_sink_added_in_one_file_sees_the_run() {
    let mut plugins = Plugins::default();
    plugins.add_sink("toy", |n: usize| -> Box<dyn Sink> {
        Box::new(Counter {
            sent: vec![0; n],
            received: vec![0; n],
            app_bytes: vec![0; n],
            client_packets: vec![0; n],
            samples: vec![0; n],
        })
    });
    let sc = json!({
        "run": {"duration": "1s"},
        "dumbbell": {"pairs": 2, "mtu": "1500B",
                     "bottleneck": {"rate": "10Mbps", "delay": "10ms"},
                     "access": {"rate": "1Gbps", "delay": "1ms"}},
        "flows": [
            {"name": "cbr", "kind": "udp", "src": "sender1", "dst": "receiver1", "size": "1000B", "rate": "1Mbps"},
            {"name": "bulk", "kind": "quic", "app": "bulk", "bytes": "200kB", "src": "sender2", "dst": "receiver2"}
        ]
    });
    let o = run_with(&sc.to_string(), None, &mut |_, _| true, &plugins).expect("runs");
    // The UDP source: 1000 B every 1000*8/1e6 s = 8 ms from t = 0 to 1 s: 125 datagrams
    // (t = 0, 8, ..., 992 ms), all under the 10 Mbit/s bottleneck's rate, so each arrives
    // ~11 ms later: the last one, sent at 992 ms, after the end (1 s); the one at 984 ms in time
    // (984 + ~11.9 ms < 1 s): 124 received.
    assert_eq!(toy(&o, "sent")[0], 125);
    assert_eq!(toy(&o, "received")[0], 124);
    assert_eq!(toy(&o, "app_bytes")[0], 125_000);
    // The sink saw what the built-in totals count, for both flows.
    let totals = &o.totals["flows"];
    for (i, name) in ["cbr", "bulk"].iter().enumerate() {
        assert_eq!(toy(&o, "sent")[i] as u64, totals[name]["packets_sent"].as_u64().unwrap(), "{name}");
        assert_eq!(
            toy(&o, "received")[i] as u64,
            totals[name]["packets_delivered"].as_u64().unwrap(),
            "{name}"
        );
        assert_eq!(
            toy(&o, "app_bytes")[i] as u64,
            totals[name]["app_sent_bytes"].as_u64().unwrap(),
            "{name}"
        );
    }
    // The transport events: one PacketSent per QUIC packet of the client; none for UDP.
    assert_eq!(toy(&o, "client_packets")[0], 0);
    assert_eq!(toy(&o, "client_packets")[1] as u64, totals["bulk"]["quic"]["packets_sent"].as_u64().unwrap());
    assert!(toy(&o, "samples")[1] > 10, "a sink gets the senders' state samples");
    assert_eq!(totals["bulk"]["app_sent_bytes"].as_u64(), Some(200_000));
    // The toy's table comes after the built-in ones, which are unchanged by it.
    let names: Vec<&str> = o.tables.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names.last(), Some(&"toy"));
    let plain = quicksim_scenario::run(&sc.to_string(), None, &mut |_, _| true).expect("runs");
    assert_eq!(plain.meta["trace_hash"], o.meta["trace_hash"]);
    assert_eq!(plain.totals, o.totals);
}
