//! Setups several test files share: the one-flow dumbbell the transport tests run (tcp.rs,
//! quinn.rs) with its goodput per time window, and the parts of a run-time queue discipline
//! that are not its rule (ecn.rs, toy_qdisc.rs): the FIFO storage, the registration and the run.

use super::{col_f64, col_i64, col_str};
use quicksim_net::{Packet, Qdisc};
use quicksim_scenario::plugins::Plugins;
use quicksim_scenario::{Payload, RunOutput, ScenarioError};
use serde_json::json;
use std::collections::VecDeque;

/// One `kind` flow named `name` from sender1 to receiver1 over a 10 Mbit/s, 10 ms bottleneck
/// (100-packet queue) with 1 Gbit/s, 1 ms access links at `mtu` bytes, for `secs` seconds with
/// the `conn` table recorded: `table` is the scenario's `[kind]` table, `flow`'s keys are set
/// on the flow.
pub fn dumbbell_flow(
    kind: &str,
    name: &str,
    mtu: u64,
    secs: u64,
    table: serde_json::Value,
    flow: serde_json::Value,
) -> serde_json::Value {
    let mut f = json!({"name": name, "kind": kind, "src": "sender1", "dst": "receiver1"});
    for (k, v) in flow.as_object().unwrap() {
        f[k] = v.clone();
    }
    json!({
        "run": {"duration": format!("{secs}s"), "record": {"conn": true}},
        "dumbbell": {"pairs": 1, "mtu": format!("{mtu}B"),
                     "bottleneck": {"rate": "10Mbps", "delay": "10ms", "queue": {"packets": 100}},
                     "access": {"rate": "1Gbps", "delay": "1ms"}},
        kind: table,
        "flows": [f]
    })
}

/// Delivered bytes of flow `name` in the bins starting in [t0, t1) s, as bit/s.
pub fn goodput_bps(o: &RunOutput, name: &str, t0: f64, t1: f64) -> f64 {
    let (t, fl, d) =
        (col_f64(o, "flows", "t_s"), col_str(o, "flows", "flow"), col_i64(o, "flows", "delivered_bytes"));
    let bytes: i64 = (0..t.len()).filter(|&i| fl[i] == name && t[i] >= t0 && t[i] < t1).map(|i| d[i]).sum();
    bytes as f64 * 8.0 / (t1 - t0)
}

/// The packets a toy queue discipline holds, first in first out, with their IP bytes.
pub struct Fifo<P> {
    q: VecDeque<Packet<P>>,
    bytes: u64,
}

impl<P> Default for Fifo<P> {
    fn default() -> Self {
        Fifo { q: VecDeque::new(), bytes: 0 }
    }
}

impl<P> Fifo<P> {
    pub fn push(&mut self, p: Packet<P>) {
        self.bytes += p.ip_bytes as u64;
        self.q.push_back(p);
    }
    /// The packet at the head (the next to leave), taken out.
    pub fn pop(&mut self) -> Option<Packet<P>> {
        let p = self.q.pop_front()?;
        self.bytes -= p.ip_bytes as u64;
        Some(p)
    }
    pub fn packets(&self) -> usize {
        self.q.len()
    }
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

/// Plugins with one queue discipline, `make` from the scenario's queue table, as `kind`.
pub fn qdisc_plugins<Q, F>(kind: &str, make: F) -> Plugins
where
    Q: Qdisc<Payload> + 'static,
    F: Fn(&serde_json::Value) -> Result<Q, String> + Send + Sync + 'static,
{
    let mut p = Plugins::default();
    p.register_qdisc(kind, make).expect("a new name");
    p
}

/// Runs scenario `sc` with `plugins`.
pub fn run_plugins(sc: &serde_json::Value, plugins: &Plugins) -> Result<RunOutput, ScenarioError> {
    quicksim_scenario::run_with(&sc.to_string(), None, &mut |_, _| true, plugins)
}
