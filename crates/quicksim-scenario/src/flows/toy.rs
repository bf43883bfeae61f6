//! A toy transport, compiled for the tests only: the proof that adding a transport is this one
//! file (here the protocol and its attachment together; a real one puts the protocol in its own
//! folder of `quicksim-transport`) plus one line in `transports!`. Nothing else of the crate
//! names it: the flow kind `toy`, its `[toy]` table, the checks, `scenario.json`, the JSON Schema
//! and the run all come from the registry.
//!
//! The protocol: a fixed window of `window` packets of `packet_size` bytes, each acknowledged by
//! the receiver with a cumulative ACK (8 B header each way); no loss recovery, so the tests run
//! it over lossless paths only.

use super::settings::{ConfigureCx, SettingsTable};
use super::transport::Transport;
use crate::ScenarioError;
use quicksim_engine::{Rng, SimTime};
use quicksim_transport::{AppEvent, Endpoint, Role, TransportCounters, TransportMetrics, WirePacket};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::sync::Arc;

/// The toy's settings (the `[toy]` table).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub(crate) struct ToySettings {
    /// Packets in flight at most. Default 10.
    pub window: u64,
    /// Payload bytes per packet. Default 1000.
    pub packet_size: u64,
}

impl Default for ToySettings {
    fn default() -> Self {
        ToySettings { window: 10, packet_size: 1000 }
    }
}

/// Header bytes of a toy packet.
const HEADER: u64 = 8;
/// The send buffer the application fills.
const SEND_BUFFER: u64 = 1 << 20;

#[derive(Clone, Debug)]
pub(crate) struct ToyPacket {
    /// Data: the packet's number; an ACK: the next number expected.
    seq: u64,
    len: u64,
    ack: bool,
}

impl WirePacket for ToyPacket {
    fn size_bytes(&self) -> u64 {
        HEADER + self.len
    }
}

pub(crate) struct ToyEnd {
    cfg: Arc<ToySettings>,
    role: Role,
    events: VecDeque<AppEvent>,
    // Sender.
    unsent: u64,
    next_seq: u64,
    in_flight: VecDeque<u64>,
    // Receiver.
    expected: u64,
    delivered: u64,
    acks_due: u64,
    counters: TransportCounters,
}

impl Endpoint for ToyEnd {
    type Packet = ToyPacket;
    const ENCAP_BYTES: u64 = 8; // UDP

    fn handle_packet(&mut self, _now: SimTime, p: &ToyPacket) {
        if p.ack {
            while self.in_flight.len() as u64 > self.next_seq - p.seq {
                self.in_flight.pop_front();
                self.counters.packets_acked += 1;
            }
            if self.unsent < SEND_BUFFER / 2 {
                self.events.push_back(AppEvent::SendQueueLow);
            }
        } else if p.seq == self.expected {
            self.events.push_back(AppEvent::StreamData { stream_id: 0, offset: self.delivered, len: p.len });
            self.expected += 1;
            self.delivered += p.len;
            self.acks_due += 1;
        }
    }

    fn handle_timeout(&mut self, _now: SimTime) {}

    fn poll_transmit(&mut self, _now: SimTime) -> Option<ToyPacket> {
        if self.acks_due > 0 {
            self.acks_due -= 1;
            self.counters.acks_sent += 1;
            return Some(ToyPacket { seq: self.expected, len: 0, ack: true });
        }
        if self.unsent == 0 || self.in_flight.len() as u64 >= self.cfg.window {
            return None;
        }
        let len = self.unsent.min(self.cfg.packet_size);
        self.unsent -= len;
        self.in_flight.push_back(len);
        self.next_seq += 1;
        self.counters.packets_sent += 1;
        Some(ToyPacket { seq: self.next_seq - 1, len, ack: false })
    }

    fn poll_timeout(&self) -> Option<SimTime> {
        None
    }

    fn poll_event(&mut self) -> Option<AppEvent> {
        self.events.pop_front()
    }

    fn send_space(&self) -> u64 {
        SEND_BUFFER - self.unsent
    }

    fn write(&mut self, _now: SimTime, _stream: u64, len: u64) -> u64 {
        let n = len.min(self.send_space());
        self.unsent += n;
        n
    }

    fn write_whole(&mut self, now: SimTime, stream: u64, len: u64) -> u64 {
        self.write(now, stream, len)
    }

    fn close(&mut self, _now: SimTime) {}

    fn metrics(&self) -> TransportMetrics {
        let sent: u64 = self.in_flight.iter().sum();
        TransportMetrics {
            cwnd_bytes: self.cfg.window * self.cfg.packet_size,
            bytes_in_flight: sent,
            send_queue_bytes: self.unsent,
            ..Default::default()
        }
    }

    fn counters(&self) -> TransportCounters {
        self.counters
    }

    fn is_established(&self) -> bool {
        true
    }

    fn is_closed(&self) -> bool {
        false
    }
}

impl Transport for ToyEnd {
    const KIND: &'static str = "toy";
    const NAME: &'static str = "toy";
    type Shared = Arc<ToySettings>;
    type Settings = ToySettings;

    fn configure(t: &SettingsTable, cx: &mut ConfigureCx) -> Result<Arc<ToySettings>, ScenarioError> {
        let s: ToySettings = t.decode(t.table.clone())?;
        if s.window == 0 {
            return Err(t.invalid("window: 0: at least 1 packet".into()));
        }
        let largest = cx.path_mtu - 28 - HEADER;
        if s.packet_size == 0 || s.packet_size > largest {
            return Err(t.invalid(format!("packet_size: {} B is outside 1..={largest} B", s.packet_size)));
        }
        Ok(Arc::new(s))
    }

    fn pair(cfg: &Arc<ToySettings>, _now: SimTime, _cc_rng: [Rng; 2]) -> [ToyEnd; 2] {
        let end = |role| ToyEnd {
            cfg: Arc::clone(cfg),
            role,
            events: VecDeque::from([AppEvent::Established]),
            unsent: 0,
            next_seq: 0,
            in_flight: VecDeque::new(),
            expected: 0,
            delivered: 0,
            acks_due: 0,
            counters: TransportCounters::default(),
        };
        [end(Role::Client), end(Role::Server)]
    }

    fn totals(ends: &[ToyEnd; 2], _close_error: &Option<String>) -> serde_json::Value {
        debug_assert_eq!(ends[1].role, Role::Server);
        serde_json::json!({
            "packets_sent": ends[0].counters.packets_sent,
            "acks_sent": ends[1].counters.acks_sent,
            "established": true,
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    /// One toy flow over `rate` and a `delay` each way, its own table `own`.
    fn scenario(toy: serde_json::Value, own: Option<serde_json::Value>) -> serde_json::Value {
        let mut flow = json!({"name": "t", "kind": "toy", "src": "sender1", "dst": "receiver1",
                              "app": "bulk", "bytes": "1MB"});
        if let Some(o) = own {
            flow["toy"] = o;
        }
        json!({
            "run": {"duration": "30s"},
            "dumbbell": {"pairs": 1, "bottleneck": {"rate": "10Mbps", "delay": "50ms"}},
            "toy": toy,
            "flows": [flow],
        })
    }

    /// Window-limited: `window` packets per round trip. A round trip is 100 ms of propagation,
    /// plus each packet's serialization on the three links forward (1043 B with IPv4, UDP and
    /// PPP at 1 Gbit/s, 10 Mbit/s, 1 Gbit/s) and its ACK's back (43 B): 100.85 ms; 1000 packets
    /// of 1000 B in windows of 10 take 100 of them. Within 1 %: the first window queues at the
    /// bottleneck (9 x 0.83 ms) and the last packet arrives a one-way trip after it is sent, not
    /// a round trip (together 0.4 % of the 10 s).
    #[test]
    fn a_toy_transport_runs_from_a_scenario_at_its_window_rate() {
        let sc = scenario(json!({"window": 10}), None);
        let out = crate::run(&sc.to_string(), None, &mut |_, _| true).unwrap();
        let t = out.totals["flows"]["t"]["completion_time_s"].as_f64().unwrap();
        let ser = |bytes: f64, bps: f64| bytes * 8.0 / bps;
        let data = 1043.0;
        let rtt = 0.1 + 2.0 * ser(data, 1e9) + ser(data, 1e7) + 2.0 * ser(43.0, 1e9) + ser(43.0, 1e7);
        let want = 100.0 * rtt;
        assert!((t - want).abs() / want < 0.01, "completion {t} s, window model {want} s");
        assert_eq!(out.totals["flows"]["t"]["toy"]["packets_sent"], 1000);
    }

    /// The registry makes the rest: a flow's own table over the scenario's, its errors with the
    /// path of the key, another kind's table refused, the JSON Schema, scenario.json.
    #[test]
    fn the_registry_gives_the_toy_its_tables_checks_schema_and_defaults() {
        let sc = scenario(json!({"window": 10}), Some(json!({"window": 0})));
        let e = crate::validate(&sc.to_string()).unwrap_err();
        assert_eq!(e.to_string(), "flows[0].toy.window: 0: at least 1 packet");
        let e = crate::validate(&scenario(json!({"widnow": 3}), None).to_string()).unwrap_err();
        assert!(
            e.to_string().starts_with("toy.widnow: unknown field `widnow`, expected one of `window`"),
            "{e}"
        );
        let mut sc = scenario(json!({}), None);
        sc["flows"][0]["tcp"] = json!({"sack": false});
        let e = crate::validate(&sc.to_string()).unwrap_err();
        assert_eq!(e.to_string(), "flows[0].tcp: does not apply to a toy flow");
        let n = crate::normalize(&scenario(json!({}), None).to_string()).unwrap();
        assert_eq!(n["toy"], json!({"window": 10, "packet_size": 1000}));
        let schema = crate::format::reference::json_schema();
        assert!(schema["$defs"]["toy_settings"]["properties"]["packet_size"].is_object());
        assert!(crate::format::reference::markdown().contains("## flows[] (kind = \"toy\")"));
    }
}
