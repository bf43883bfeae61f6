//! Path schedulers of multipath QUIC written in Python (`quicksim.schedulers.Scheduler`
//! subclasses), plugged into a run as `quicksim_scenario::plugins::Plugins` schedulers: the
//! glue only. One Python object per connection end, made as `Class()`; each time the connection
//! has new data to place it calls `order(paths)` with one `PathInfo` per path (in id order) and
//! reads back the ids of the paths to try, best first (`PathScheduler::order`). The class's
//! `redundant` is read once, when the object is made.
//!
//! Errors (an exception, a return that is not a sequence of the connection's path ids) never
//! panic: the first is kept in the run's `FailureSlot` with the scheduler's name, the scheduler
//! goes inert (it orders no path, so no new data is sent) and the run stops at its next progress
//! report, raising it, as for a Python congestion controller (`pycc`).

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyList};
use quicksim_transport::quic::path_sched::{PathScheduler, PathView};

use crate::pycc::{describe, short, Failure, FailureSlot};

/// What a scheduler sees of one path (`order(paths)`): valid during the call only.
#[pyclass(module = "quicksim._core", name = "PathInfo", frozen, get_all)]
pub struct PyPathInfo {
    /// The path's id (0: the flow's own addresses, the handshake's path).
    path_id: u8,
    /// Validated, not abandoned and not suspected of having failed: may carry new data.
    usable: bool,
    /// Marked backup (by either end): by the draft, used only while no other path is usable.
    backup: bool,
    /// Smoothed RTT in integer picoseconds (the initial RTT before a sample).
    srtt_ps: u64,
    cwnd_bytes: u64,
    bytes_in_flight: u64,
    /// cwnd_bytes - bytes_in_flight (0 when the window is full).
    room_bytes: u64,
}

#[pymethods]
impl PyPathInfo {
    fn __repr__(&self) -> String {
        format!(
            "PathInfo(path_id={}, usable={}, backup={}, srtt_ps={}, cwnd_bytes={}, bytes_in_flight={})",
            self.path_id, self.usable, self.backup, self.srtt_ps, self.cwnd_bytes, self.bytes_in_flight
        )
    }
}

/// A Python scheduler as the connection sees it.
pub struct PyScheduler {
    /// The scenario's name for it (`py:pkg.mod:Class` or a registered name).
    name: Arc<str>,
    obj: Py<PyAny>,
    redundant: bool,
    failed: bool,
    slot: FailureSlot,
}

impl std::fmt::Debug for PyScheduler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PyScheduler({:?})", &*self.name)
    }
}

impl PyScheduler {
    /// `cls()` and its `redundant`; an error makes an inert scheduler and fills the slot.
    pub fn new(name: Arc<str>, cls: &Py<PyAny>, slot: FailureSlot) -> PyScheduler {
        Python::with_gil(|py| {
            let mut s = PyScheduler { name, obj: py.None(), redundant: false, failed: false, slot };
            match cls.call0(py) {
                Ok(obj) => {
                    match obj.getattr(py, pyo3::intern!(py, "redundant")) {
                        Ok(r) if r.bind(py).is_instance_of::<PyBool>() => {
                            s.redundant = r.extract(py).unwrap_or(false)
                        }
                        Ok(r) => s.fail(
                            py,
                            "__init__",
                            format!("redundant = {} is not True or False", short(r.bind(py))),
                            None,
                        ),
                        Err(e) => s.fail(py, "__init__", describe(py, &e), Some(e)),
                    }
                    s.obj = obj;
                }
                Err(e) => s.fail(py, "__init__", describe(py, &e), Some(e)),
            }
            s
        })
    }

    /// Records the first failure of the run and makes this scheduler inert.
    fn fail(&mut self, py: Python<'_>, callback: &str, what: String, cause: Option<PyErr>) {
        self.failed = true;
        let message = format!("path scheduler {:?}: {callback}: {what}", &*self.name);
        let interrupt =
            cause.as_ref().is_some_and(|e| e.is_instance_of::<pyo3::exceptions::PyKeyboardInterrupt>(py));
        let mut slot = self.slot.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_none() {
            *slot = Some(Failure { message, cause, interrupt });
        }
    }
}

/// The path ids `order` returned: each an int naming one of the `n` paths.
fn path_ids(r: &Bound<'_, PyAny>, n: usize, out: &mut Vec<u8>) -> Result<(), String> {
    let items = r.try_iter().map_err(|_| format!("returned {}, not a sequence of path ids", short(r)))?;
    for item in items {
        let item = item.map_err(|e| describe(r.py(), &e))?;
        let id = if item.is_instance_of::<PyBool>() { None } else { item.extract::<u64>().ok() };
        match id {
            Some(id) if (id as usize) < n => out.push(id as u8),
            _ => {
                return Err(format!(
                    "returned {} among the path ids, which are 0 to {}",
                    short(&item),
                    n.saturating_sub(1)
                ))
            }
        }
    }
    Ok(())
}

impl PathScheduler for PyScheduler {
    fn name(&self) -> &'static str {
        "python"
    }

    fn order(&mut self, paths: &[PathView], out: &mut Vec<u8>) {
        if self.failed {
            return;
        }
        Python::with_gil(|py| {
            let infos = paths.iter().map(|p| PyPathInfo {
                path_id: p.id,
                usable: p.usable,
                backup: p.backup,
                srtt_ps: p.srtt.0,
                cwnd_bytes: p.cwnd_bytes,
                bytes_in_flight: p.bytes_in_flight,
                room_bytes: p.room_bytes,
            });
            let list =
                infos.map(|i| Py::new(py, i)).collect::<PyResult<Vec<_>>>().and_then(|v| PyList::new(py, v));
            let start = out.len();
            let r = list.and_then(|l| self.obj.call_method1(py, pyo3::intern!(py, "order"), (l,)));
            match r {
                Ok(r) => {
                    if let Err(what) = path_ids(r.bind(py), paths.len(), out) {
                        out.truncate(start);
                        self.fail(py, "order", what, None);
                    }
                }
                Err(e) => self.fail(py, "order", describe(py, &e), Some(e)),
            }
        })
    }

    fn redundant(&self) -> bool {
        self.redundant
    }
}

/// Registers the path schedulers among `plugins_dict` (`{name: class}`, the classes that
/// subclass `quicksim.schedulers.Scheduler`) and returns the rest (the controllers).
pub fn register<'py>(
    plugins: &mut quicksim_scenario::plugins::Plugins,
    plugins_dict: &Bound<'py, pyo3::types::PyDict>,
    slot: &FailureSlot,
) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
    let py = plugins_dict.py();
    let base = py.import("quicksim.schedulers")?.getattr("Scheduler")?;
    let rest = pyo3::types::PyDict::new(py);
    for (name, cls) in plugins_dict.iter() {
        let is_scheduler =
            cls.downcast::<pyo3::types::PyType>().is_ok_and(|t| t.is_subclass(&base).unwrap_or(false));
        if is_scheduler {
            register_one(plugins, &name.extract::<String>()?, cls.unbind(), slot)?;
        } else {
            rest.set_item(name, cls)?;
        }
    }
    Ok(rest)
}

/// Registers the Python scheduler class `cls` under `name`.
fn register_one(
    plugins: &mut quicksim_scenario::plugins::Plugins,
    name: &str,
    cls: Py<PyAny>,
    slot: &FailureSlot,
) -> PyResult<()> {
    let key: Arc<str> = name.into();
    let slot = Arc::clone(slot);
    plugins
        .register_scheduler(name, move || {
            Box::new(PyScheduler::new(Arc::clone(&key), &cls, Arc::clone(&slot))) as Box<dyn PathScheduler>
        })
        .map_err(pyo3::exceptions::PyValueError::new_err)?;
    Ok(())
}
