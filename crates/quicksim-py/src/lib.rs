//! `quicksim._core`: the compiled module. It converts between Python and the scenario crate
//! and maps every error to a quicksim exception; no simulation logic lives here. Controllers
//! written in Python reach the run through `pycc`.

mod columns;
mod emu;
mod pycc;
mod pysched;

use std::sync::{Arc, Mutex};

use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use quicksim_scenario::RunOutput;

create_exception!(
    _core,
    ScenarioError,
    PyValueError,
    "A scenario field has a bad value; the message names the field."
);
create_exception!(_core, SimulationError, PyRuntimeError, "A run failed inside the simulator.");
create_exception!(
    _core,
    ControllerError,
    SimulationError,
    "A congestion controller written in Python failed; the message names it, the callback and the time."
);

/// Converts a JSON value, consuming it so that the Rust tree is freed as the Python one grows
/// (with many flows the per-flow totals are the largest output). Object keys are interned: every
/// flow's totals have the same ~35 keys, and one Python string per key and flow cost ~2 kB per flow.
pub(crate) fn json_to_py(py: Python<'_>, v: serde_json::Value) -> PyResult<Bound<'_, PyAny>> {
    use serde_json::Value as V;
    Ok(match v {
        V::Null => py.None().into_bound(py),
        V::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
        V::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.into_pyobject(py)?.into_any()
            } else if let Some(u) = n.as_u64() {
                u.into_pyobject(py)?.into_any()
            } else {
                n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any()
            }
        }
        V::String(s) => s.into_pyobject(py)?.into_any(),
        V::Array(a) => {
            let l = PyList::empty(py);
            for x in a {
                l.append(json_to_py(py, x)?)?;
            }
            l.into_any()
        }
        V::Object(o) => {
            let d = PyDict::new(py);
            for (k, x) in o {
                d.set_item(pyo3::types::PyString::intern(py, &k), json_to_py(py, x)?)?;
            }
            d.into_any()
        }
    })
}

fn output_to_py<'py>(py: Python<'py>, out: RunOutput) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("meta", json_to_py(py, out.meta)?)?;
    d.set_item("totals", json_to_py(py, out.totals)?)?;
    // Each column moves into Python as it is (`columns`): no value is copied or converted here.
    let tables = PyDict::new(py);
    for (name, cols) in out.tables {
        let t = PyDict::new(py);
        for (cname, col) in cols {
            t.set_item(cname, columns::to_py(py, col)?)?;
        }
        tables.set_item(name, t)?;
    }
    d.set_item("tables", tables)?;
    Ok(d)
}

/// Run a scenario given as JSON. `progress(sim_time_s, events)` is called periodically;
/// returning False stops the run early. The GIL is held only while calling back.
/// `controllers` maps the scenario's names of Python controllers to their classes
/// (`quicksim.cc.Controller` subclasses); a failure in one stops the run and raises
/// `ControllerError`. Files a run writes itself (`run.capture`) go to `out_dir`.
#[pyfunction]
#[pyo3(signature = (scenario_json, seed=None, progress=None, controllers=None, out_dir=None))]
fn run<'py>(
    py: Python<'py>,
    scenario_json: &str,
    seed: Option<u64>,
    progress: Option<PyObject>,
    controllers: Option<Bound<'py, PyDict>>,
    out_dir: Option<std::path::PathBuf>,
) -> PyResult<Bound<'py, PyDict>> {
    let slot: pycc::FailureSlot = Arc::new(Mutex::new(None));
    let mut plugins = plugins_of(controllers.as_ref(), &slot)?;
    if let Some(d) = out_dir {
        plugins.set_out_dir(d);
    }
    let mut cb_err: Option<PyErr> = None;
    let result = py.allow_threads(|| {
        let mut cb = |t: f64, n: u64| -> bool {
            // A Python controller failed: stop at once (it has gone inert, keeping its window).
            if slot.lock().map(|s| s.is_some()).unwrap_or(true) {
                return false;
            }
            let Some(p) = &progress else {
                // No callback: still let Ctrl-C (SIGINT -> KeyboardInterrupt) stop the run.
                return Python::with_gil(|py| match py.check_signals() {
                    Ok(()) => true,
                    Err(e) => {
                        cb_err = Some(e);
                        false
                    }
                });
            };
            Python::with_gil(|py| match p.call1(py, (t, n)) {
                Ok(r) => !r.bind(py).is(&pyo3::types::PyBool::new(py, false).to_owned()),
                Err(e) => {
                    cb_err = Some(e);
                    false
                }
            })
        };
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            quicksim_scenario::run_with(scenario_json, seed, &mut cb, &plugins)
        }))
    });
    if let Some(f) = slot.lock().unwrap_or_else(|p| p.into_inner()).take() {
        if let (true, Some(e)) = (f.interrupt, &f.cause) {
            // Ctrl-C while a Python controller ran: an interrupt, not the controller's fault.
            return Err(e.clone_ref(py));
        }
        let err = ControllerError::new_err(f.message);
        err.set_cause(py, f.cause);
        return Err(err);
    }
    if let Some(e) = cb_err {
        // KeyboardInterrupt and errors raised by the callback propagate unchanged.
        return Err(e);
    }
    match result {
        Ok(Ok(out)) => output_to_py(py, out),
        Ok(Err(e)) => Err(ScenarioError::new_err(e.to_string())),
        Err(panic) => {
            let msg = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown panic".into());
            Err(SimulationError::new_err(format!("internal error in the simulator (please report): {msg}")))
        }
    }
}

/// The plugins of a run: the Python controllers and path schedulers `controllers`
/// (`{name: class}`) if any.
fn plugins_of(
    controllers: Option<&Bound<'_, PyDict>>,
    slot: &pycc::FailureSlot,
) -> PyResult<quicksim_scenario::plugins::Plugins> {
    let mut plugins = quicksim_scenario::plugins::Plugins::default();
    if let Some(c) = controllers {
        // Path schedulers (`quicksim.schedulers` subclasses) come in the same dict.
        let controllers = pysched::register(&mut plugins, c, slot)?;
        pycc::register(&mut plugins, &controllers, slot)?;
    }
    Ok(plugins)
}

/// Validate a scenario (schema and semantics); returns it as JSON with the defaults filled in.
/// `controllers` as for `run`.
#[pyfunction]
#[pyo3(signature = (scenario_json, controllers=None))]
fn validate(py: Python<'_>, scenario_json: &str, controllers: Option<Bound<'_, PyDict>>) -> PyResult<String> {
    let slot: pycc::FailureSlot = Arc::new(Mutex::new(None));
    let plugins = plugins_of(controllers.as_ref(), &slot)?;
    py.allow_threads(|| {
        checked(
            std::panic::AssertUnwindSafe(|| quicksim_scenario::validate_with(scenario_json, &plugins)),
            "validating",
        )
    })
}

/// The scenario as JSON with the defaults filled in, checking the schema only (no build): for a
/// scenario that has just been run.
#[pyfunction]
fn normalize(scenario_json: &str) -> PyResult<String> {
    checked(|| quicksim_scenario::normalize(scenario_json), "normalizing")
}

fn checked(
    f: impl FnOnce() -> Result<serde_json::Value, quicksim_scenario::ScenarioError> + std::panic::UnwindSafe,
    what: &str,
) -> PyResult<String> {
    match std::panic::catch_unwind(f) {
        Ok(Ok(v)) => Ok(v.to_string()),
        Ok(Err(e)) => Err(ScenarioError::new_err(e.to_string())),
        Err(_) => Err(SimulationError::new_err(format!("internal error while {what} (please report)"))),
    }
}

/// The output tables and their columns in order: `[{"table", "columns": [{"name", "type"}]}]`,
/// type "f64", "i64" or "str".
#[pyfunction]
fn table_schema(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    json_to_py(py, quicksim_scenario::table_schema())
}

/// Parse a duration with units ("10ms") into seconds (exact to the picosecond before the
/// conversion to float). The same parser the scenario schema uses.
#[pyfunction]
fn parse_duration(text: &str) -> PyResult<f64> {
    quicksim_scenario::units::parse_duration(text).map(|d| d.as_secs_f64()).map_err(ScenarioError::new_err)
}

/// Parse a rate with units ("10Mbps") into bits per second.
#[pyfunction]
fn parse_rate(text: &str) -> PyResult<u64> {
    quicksim_scenario::units::parse_rate(text).map(|r| r.bits_per_s).map_err(ScenarioError::new_err)
}

/// Parse a size with units ("25kB", "200kb") into bytes.
#[pyfunction]
fn parse_bytes(text: &str) -> PyResult<u64> {
    quicksim_scenario::units::parse_bytes(text).map_err(ScenarioError::new_err)
}

/// The JSON Schema (draft 2020-12) of the scenario format, as JSON text.
#[pyfunction]
fn scenario_schema() -> String {
    serde_json::to_string_pretty(&quicksim_scenario::format::reference::json_schema())
        .expect("a schema serializes")
}

/// `docs/scenario-reference.md`: the scenario format's reference in Markdown, generated from the
/// same schema.
#[pyfunction]
fn scenario_reference() -> String {
    quicksim_scenario::format::reference::markdown()
}

/// The names of the built-in congestion controllers (`cc = "name"`).
#[pyfunction]
fn builtin_controllers() -> Vec<&'static str> {
    quicksim_cc::NAMES.to_vec()
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(emu::run_real, m)?)?;
    m.add_function(wrap_pyfunction!(emu::emulation_plan, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(normalize, m)?)?;
    m.add_function(wrap_pyfunction!(table_schema, m)?)?;
    m.add_function(wrap_pyfunction!(parse_duration, m)?)?;
    m.add_function(wrap_pyfunction!(parse_rate, m)?)?;
    m.add_function(wrap_pyfunction!(parse_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(builtin_controllers, m)?)?;
    m.add_function(wrap_pyfunction!(scenario_schema, m)?)?;
    m.add_function(wrap_pyfunction!(scenario_reference, m)?)?;
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add("SimulationError", m.py().get_type::<SimulationError>())?;
    m.add("ControllerError", m.py().get_type::<ControllerError>())?;
    m.add_class::<columns::PyColumn>()?;
    m.add_class::<columns::PyStrings>()?;
    m.add_class::<pycc::PyCtx>()?;
    m.add_class::<pycc::PyInit>()?;
    m.add_class::<pycc::PySent>()?;
    m.add_class::<pycc::PyAck>()?;
    m.add_class::<pycc::PySummary>()?;
    m.add_class::<pycc::PyRate>()?;
    m.add_class::<pycc::PyCong>()?;
    m.add_class::<pysched::PyPathInfo>()?;
    m.add("__version__", quicksim_scenario::VERSION)?;
    Ok(())
}
