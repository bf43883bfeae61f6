//! Real-time runs from Python (`run.clock = "real"`): the emulation plan and the run over the
//! TUN devices the Python side opened (`quicksim.emulate`). Glue only: the loop is
//! `quicksim_scenario::run_real`, the devices `quicksim_emu::TunWire`.

use crate::{output_to_py, ScenarioError, SimulationError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// The hosts and program flows of a real-time scenario (JSON text): `quicksim_scenario::emulation_plan`.
#[pyfunction]
pub(crate) fn emulation_plan(scenario_json: &str) -> PyResult<String> {
    quicksim_scenario::emulation_plan(scenario_json)
        .map(|v| v.to_string())
        .map_err(|e| ScenarioError::new_err(e.to_string()))
}

/// Runs a real-time scenario over the open TUN descriptors `fds` of the hosts `hosts` (same
/// order, as `emulation_plan` lists them). `progress(wall_s, events)` is called every 20 ms
/// (False stops the run); `warn(line)` when the loop falls behind the clock. The GIL is
/// released except during the callbacks.
#[pyfunction]
#[pyo3(signature = (scenario_json, fds, hosts, seed=None, progress=None, warn=None, out_dir=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn run_real<'py>(
    py: Python<'py>,
    scenario_json: &str,
    fds: Vec<i32>,
    hosts: Vec<String>,
    seed: Option<u64>,
    progress: Option<PyObject>,
    warn: Option<PyObject>,
    out_dir: Option<std::path::PathBuf>,
) -> PyResult<Bound<'py, PyDict>> {
    if fds.len() != hosts.len() {
        return Err(ScenarioError::new_err(format!("{} descriptors for {} hosts", fds.len(), hosts.len())));
    }
    let mut plugins = quicksim_scenario::plugins::Plugins::default();
    if let Some(d) = out_dir {
        plugins.set_out_dir(d);
    }
    let mut cb_err: Option<PyErr> = None;
    let result = py.allow_threads(|| {
        // Made on this thread: the loop runs here, and the timer slack is per thread.
        let mut wire = quicksim_emu::TunWire::from_fds(&fds).map_err(|e| {
            quicksim_scenario::ScenarioError::new("emulation".into(), format!("the TUN devices: {e}"))
        })?;
        let mut cb = |t: f64, n: u64| -> bool {
            if cb_err.is_some() {
                return false;
            }
            Python::with_gil(|py| {
                let r = match &progress {
                    Some(p) => p
                        .call1(py, (t, n))
                        .map(|r| !r.bind(py).is(&pyo3::types::PyBool::new(py, false).to_owned())),
                    None => py.check_signals().map(|()| true),
                };
                r.unwrap_or_else(|e| {
                    cb_err = Some(e);
                    false
                })
            })
        };
        let mut warn_cb = |line: &str| {
            Python::with_gil(|py| match &warn {
                Some(w) => {
                    let _ = w.call1(py, (line,));
                }
                None => eprintln!("quicksim: {line}"),
            })
        };
        quicksim_scenario::run_real(scenario_json, seed, &plugins, &mut wire, &hosts, &mut cb, &mut warn_cb)
    });
    if let Some(e) = cb_err {
        // KeyboardInterrupt and errors raised by the callback propagate unchanged.
        return Err(e);
    }
    match result {
        Ok(out) => output_to_py(py, out),
        Err(e) if e.path == "emulation" => Err(SimulationError::new_err(e.to_string())),
        Err(e) => Err(ScenarioError::new_err(e.to_string())),
    }
}
