//! The run's totals and metadata (`summary.json`): per-flow totals (the common counters, then the
//! flow's own: completion time, its transport's block), per-queue and per-link totals, and what
//! made the run (seed, hashes, version, build, the network as built: `facts`).

use super::facts::FlowEnds;
use super::{Stop, World};
use crate::output::{RunInfo, RunOutput};
use crate::schema::Scenario;
use serde_json::json;

/// Takes the world apart into the run's output.
pub(crate) fn finish(
    mut w: World,
    sc: &Scenario,
    scenario_hash: String,
    seed: u64,
    stop: Stop,
    wall_s: f64,
) -> RunOutput {
    let end = w.end;
    let end_s = end.as_secs_f64();
    // The network as built (static: read before the flows' state is dropped below).
    let ends: Vec<FlowEnds> = w
        .flows
        .iter()
        .zip(&w.cx.flow_names)
        .map(|(f, name)| FlowEnds { name, src: f.spec.src, dst: f.spec.dst })
        .collect();
    let network = super::facts::network(&w.cx.net, &ends);
    drop(ends);
    // Each flow's state (connections, send queues) is dropped as soon as its totals are taken,
    // so the outputs do not add to the peak memory of the run on top of the state.
    let mut flows = serde_json::Map::new();
    let mut unfinished = serde_json::Map::new();
    let flow_states = std::mem::take(&mut w.flows);
    for (i, mut f) in flow_states.into_iter().enumerate() {
        f.app.make_live();
        f.app.flush_qlog(&mut w.cx, end, i as u32);
        let t = &w.cx.out.rec.tables.flow_total(i);
        let mut o = json!({
            "kind": f.spec.kind,
            "src": w.cx.net.node_name(f.spec.src),
            "dst": w.cx.net.node_name(f.spec.dst),
            "start_s": f.spec.start.as_secs_f64(),
            "stop_s": f.spec.stop.as_secs_f64(),
            "app_sent_bytes": t.app_sent_bytes,
            "wire_sent_bytes": t.wire_sent_bytes,
            "wire_recv_bytes": t.wire_recv_bytes,
            "delivered_bytes": t.delivered_bytes,
            "packets_sent": t.sent_packets,
            "packets_delivered": t.recv_packets,
            "packets_dropped": w.cx.out.rec.tables.flow_dropped[i],
            "completion_time_s": serde_json::Value::Null,
        });
        merge(&mut o, w.cx.out.rec.delays.flow_totals(i));
        f.app.totals(&f.spec, &mut o);
        // Why a transfer did not finish goes to meta (the summary), not into the flow's totals,
        // whose contents the determinism pins fix.
        if let Some(why) = o.as_object_mut().and_then(|m| m.remove("unfinished")) {
            unfinished.insert(w.cx.flow_names[i].clone(), why);
        }
        flows.insert(w.cx.flow_names[i].clone(), o);
    }
    let rates: Vec<u64> = w.cx.net.chans.iter().map(|c| c.cfg.rate.bits_per_s).collect();
    let info = RunInfo {
        end,
        flow_names: &w.cx.flow_names,
        chan_names: &w.cx.net.chan_names,
        node_names: &w.cx.net.names,
        chan_rate_bps: &rates,
    };
    // Before `finish` moves the recorded series out: each cut series' last sample time.
    let truncated = w.cx.out.rec.tables.truncated(&w.cx.flow_names, &w.cx.net.chan_names);
    let note = &w.cx.out.rec.budget_note;
    let cut: Vec<serde_json::Value> =
        w.cx.out
            .rec
            .truncated_tables()
            .iter()
            .map(|c| {
                let what = if c.table == "qlog" { "bytes of text" } else { "rows" };
                json!({
                    "table": c.table,
                    "cut_at_s": c.t_ps as f64 * 1e-12,
                    "rows": c.rows,
                    "why": format!(
                        "the {} table stopped growing at t = {} s with {} {what}: it reached {note}; \
                         record less (run.record) or give the process more memory",
                        c.table,
                        c.t_ps as f64 * 1e-12,
                        c.rows
                    ),
                })
            })
            .collect();
    let tables = w.cx.out.rec.finish(&info);
    let mut queues = serde_json::Map::new();
    let mut links = serde_json::Map::new();
    let mut held = 0u64;
    for (ci, c) in w.cx.net.chans.iter().enumerate() {
        let name = &w.cx.net.chan_names[ci];
        held += c.held_packets();
        let st = &c.stats;
        let mean = if end.0 > 0 { st.queue_packet_ps as f64 / end.0 as f64 } else { 0.0 };
        let mut q = json!({
                "enqueued_packets": st.enqueued_packets,
                "dropped_packets": st.dropped_packets,
                "dropped_bytes": st.dropped_bytes,
                "aqm_dropped_packets": st.aqm_dropped_packets,
                "overflow_dropped_packets": st.overflow_dropped_packets,
                "ecn_marked_packets": st.ecn_marked_packets,
                // Little's law: the total time packets waited over the packets sent (a packet
                // that found the link idle waited 0; one dropped from inside the queue, as
                // CoDel does, counts its wait against the packets sent).
                "mean_sojourn_s": if st.sent_packets > 0 { st.queue_wait_ps as f64 / 1e12 / st.sent_packets as f64 } else { 0.0 },
                "max_packets": st.max_queue_packets,
                "max_bytes": st.max_queue_bytes,
                "mean_packets": mean,
                "queued_packets_at_end": c.held_packets(),
        });
        merge(&mut q, w.cx.out.rec.delays.chan_totals(ci));
        queues.insert(name.clone(), q);
        links.insert(
            name.clone(),
            json!({
                "bytes": st.delivered_frame_bytes,
                "ip_bytes": st.delivered_bytes,
                "packets": st.delivered_packets,
                "frames_serialized": st.sent_packets,
                "utilization": if end_s > 0.0 { st.delivered_frame_bytes as f64 * 8.0 / (c.cfg.rate.bits_per_s as f64 * end_s) } else { 0.0 },
            }),
        );
    }
    let events = w.cx.q.events_processed();
    let meta = json!({
        "seed": seed,
        "duration_s": sc.run.duration.0.as_secs_f64(),
        "sim_end_s": end_s,
        "events": events,
        "wall_s": wall_s,
        "events_per_s": if wall_s > 0.0 { events as f64 / wall_s } else { 0.0 },
        "sim_s_per_wall_s": if wall_s > 0.0 { end_s / wall_s } else { 0.0 },
        "scenario_hash": scenario_hash,
        "trace_hash": format!("{:016x}", w.trace_hash),
        "version": crate::VERSION,
        "build_profile": if cfg!(debug_assertions) { "debug" } else { "release" },
        // Optimised with the profile pgo/quicksim.profdata (scripts/rustc-pgo sets the cfg).
        "pgo": cfg!(quicksim_pgo),
        "stopped_early": stop != Stop::Finished,
        "stop_reason": match stop { Stop::Finished => "finished", Stop::EventBudget => "event budget", Stop::Cancelled => "cancelled" },
        "record_interval_s": w.cx.out.rec.tables.bin.as_secs_f64(),
        "packets_in_network_at_end": held,
        "truncated_series": truncated,
        "truncated_tables": cut,
        "name": sc.name,
    });
    let mut meta = meta;
    meta["network"] = network;
    if !unfinished.is_empty() {
        meta["unfinished_flows"] = serde_json::Value::Object(unfinished);
    }
    // The values drawn for flows with random start, stop or size (only then: the summaries of
    // scenarios without them stay as they were).
    if !w.drawn.is_empty() {
        meta["drawn"] = serde_json::Value::Object(std::mem::take(&mut w.drawn));
    }
    // Move the maps in: `json!` would serialize a deep copy of them first, which doubled the
    // peak memory of runs with many flows.
    let mut totals = serde_json::Map::new();
    totals.insert("flows".into(), serde_json::Value::Object(flows));
    totals.insert("queues".into(), serde_json::Value::Object(queues));
    totals.insert("links".into(), serde_json::Value::Object(links));
    // The delay statistics over all recorded flows' packets together (`run.record.delays`).
    if let Some(d) = w.cx.out.rec.delays.all_flows_totals() {
        totals.insert("delays".into(), d);
    }
    // Their counts, for any other quantile (a sweep metric's `owd_s:p90`); beside the flows'
    // and queues' totals, whose contents the determinism pins fix.
    if let Some(s) = w.cx.out.rec.delays.sketches(&w.cx.flow_names, &w.cx.net.chan_names) {
        totals.insert("delay_sketches".into(), s);
    }
    RunOutput { meta, tables, totals: serde_json::Value::Object(totals) }
}

/// Adds the keys of `extra` (an object) to `o`.
fn merge(o: &mut serde_json::Value, extra: Option<serde_json::Value>) {
    if let (Some(m), Some(serde_json::Value::Object(x))) = (o.as_object_mut(), extra) {
        m.extend(x);
    }
}
