//! Run one scenario (JSON, as the Python side hands it to the core) without Python, for
//! profiling: `cargo run --release --example run_json -- scenario.json [reps] [out_dir]`.
//! Prints events, wall time, events/s and sim-s per wall-s of each rep, and the trace hash.
//! `out_dir` is where files the run writes go (`run.capture`'s capture.pcapng).

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: run_json SCENARIO.json [REPS]");
    let reps: usize = args.next().map(|s| s.parse().expect("REPS is a number")).unwrap_or(1);
    let mut plugins = quicksim_scenario::plugins::Plugins::default();
    if let Some(dir) = args.next() {
        plugins.set_out_dir(dir);
    }
    let text = std::fs::read_to_string(&path).expect("readable scenario");
    for _ in 0..reps {
        let o = quicksim_scenario::run_with(&text, None, &mut |_, _| true, &plugins)
            .unwrap_or_else(|e| panic!("{e}"));
        let m = &o.meta;
        println!(
            "events {} wall_s {:.3} ev/s {:.3e} sim_s/wall_s {:.3} trace {} peak_rss_run_kib {}",
            m["events"],
            m["wall_s"].as_f64().unwrap(),
            m["events_per_s"].as_f64().unwrap(),
            m["sim_s_per_wall_s"].as_f64().unwrap(),
            m["trace_hash"].as_str().unwrap(),
            m["peak_rss_run_kib"]
        );
    }
}
