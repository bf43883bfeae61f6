//! Congestion controllers written in Python (`quicksim.cc.Controller` subclasses), plugged into a
//! run as `quicksim_scenario::plugins::Plugins` controllers: the glue only. A `PyController`
//! forwards the `CongestionController` callbacks to the Python object and reads back its window;
//! the GIL is taken only for those calls (the run itself releases it).
//!
//! Cost: the per-packet `on_ack` calls of one ACK are held and handed to Python together when the
//! ACK ends (`on_ack_end`), so the GIL is taken once per ACK, not once per packet; both
//! transports call `on_ack` for each packet of an ACK and then `on_ack_end` with nothing in
//! between that reads the window. The context object is one per controller, updated in place;
//! callbacks the class does not override are never called; the window, pacing rate, ssthresh
//! and state are read once after each batch and cached for the transport's many reads.
//!
//! Errors in the Python code (an exception, a window that is not a positive integer) never
//! panic: the first one is kept in the run's [`FailureSlot`] with the controller's name, the
//! callback and the simulated time, the controller stops calling Python and keeps its last
//! window, and the caller stops the run at its next progress report and raises it.

use std::sync::{Arc, Mutex};

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyTuple};
use quicksim_cc::{
    AckEvent, AckSummary, CcCtx, CcMetrics, CcState, CeChangeAck, CongestionCause, CongestionController,
    CongestionEvent, ControllerFactory, EcnResponse, InitCtx, SentPacket,
};
use quicksim_engine::{Rate, SimTime};

/// The first error of a Python controller in a run: one line, and the Python exception it came
/// from (chained as the cause of the error Python sees).
pub struct Failure {
    pub message: String,
    pub cause: Option<PyErr>,
    /// The "failure" was Ctrl-C arriving while Python code ran: re-raise it as it is.
    pub interrupt: bool,
}

/// Shared by the controllers of one run and the run's progress callback.
pub type FailureSlot = Arc<Mutex<Option<Failure>>>;

/// What the transport tells a controller at each call (`cx` of every callback). One object per
/// controller, updated before each call: read it during the call, copy what you keep.
#[pyclass(module = "quicksim._core", name = "CcContext", get_all)]
pub struct PyCtx {
    /// Simulated time of the call, in integer picoseconds.
    now_ps: u64,
    /// Maximum datagram size (QUIC) / SMSS (TCP), bytes.
    mds: u64,
    /// Bytes in flight after the event was accounted for.
    bytes_in_flight: u64,
    /// The transport's RTT estimator (RFC 9002 §5 / RFC 6298), picoseconds; latest and min are
    /// 0 before the first sample.
    latest_rtt_ps: u64,
    smoothed_rtt_ps: u64,
    min_rtt_ps: u64,
    rttvar_ps: u64,
    has_rtt_sample: bool,
    /// The transport's window rules for the current `mds`, bytes.
    initial_window: u64,
    minimum_window: u64,
    loss_window: u64,
}

#[pymethods]
impl PyCtx {
    /// `now_ps` in seconds (float).
    #[getter]
    fn now_s(&self) -> f64 {
        self.now_ps as f64 * 1e-12
    }
    fn __repr__(&self) -> String {
        format!(
            "CcContext(now_ps={}, mds={}, bytes_in_flight={}, smoothed_rtt_ps={})",
            self.now_ps, self.mds, self.bytes_in_flight, self.smoothed_rtt_ps
        )
    }
}

impl PyCtx {
    fn set(&mut self, cx: &CcCtx) {
        self.now_ps = cx.now.0;
        self.mds = cx.mds;
        self.bytes_in_flight = cx.bytes_in_flight;
        self.latest_rtt_ps = cx.rtt.latest().0;
        self.smoothed_rtt_ps = cx.rtt.smoothed().0;
        self.min_rtt_ps = cx.rtt.min().0;
        self.rttvar_ps = cx.rtt.rttvar().0;
        self.has_rtt_sample = cx.rtt.has_sample();
        self.initial_window = cx.window.initial_window(cx.mds);
        self.minimum_window = cx.window.minimum_window(cx.mds);
        self.loss_window = cx.window.loss_window(cx.mds);
    }
}

/// What a controller is built with: `Class(init, **settings)`.
#[pyclass(module = "quicksim._core", name = "InitInfo", frozen, get_all)]
pub struct PyInit {
    /// Maximum datagram size (QUIC) / SMSS (TCP), bytes.
    mds: u64,
    /// The transport's initial, minimum (after a loss) and loss (after an RTO or persistent
    /// congestion) windows, bytes.
    initial_window: u64,
    minimum_window: u64,
    loss_window: u64,
    /// A 64-bit seed from the controller's own random stream (`InitCtx::rng`, derived from the
    /// run's seed): `random.Random(init.seed)` draws the same numbers in every run of the
    /// scenario and seed, and other numbers for each connection end.
    seed: u64,
}

/// A packet that was just sent and counts toward bytes in flight.
#[pyclass(module = "quicksim._core", name = "SentPacket", frozen, get_all)]
pub struct PySent {
    bytes: u64,
    app_limited: bool,
}

/// One newly acknowledged in-flight packet.
#[pyclass(module = "quicksim._core", name = "AckEvent", frozen, get_all)]
pub struct PyAck {
    sent_time_ps: u64,
    bytes: u64,
    app_limited: bool,
}

/// A delivery-rate sample (draft-cheng-iccrg-delivery-rate-estimation §3).
#[pyclass(module = "quicksim._core", name = "RateSample", frozen, get_all)]
pub struct PyRate {
    delivered: u64,
    prior_delivered: u64,
    delivered_time_ps: u64,
    first_sent_time_ps: u64,
    is_app_limited: bool,
    interval_ps: u64,
    rate_bps: u64,
}

/// The end of one ACK, after its packets' `on_ack` calls.
#[pyclass(module = "quicksim._core", name = "AckSummary", frozen, get_all)]
pub struct PySummary {
    acked_bytes: u64,
    acked_packets: u64,
    largest_acked_sent_time_ps: u64,
    app_limited: bool,
    /// The delivery-rate sample, where the transport provides one (else None).
    rate: Option<Py<PyRate>>,
    /// CE-marked packets this ACK newly reported, for a controller whose `ecn_response` is
    /// "scalable" (QUIC ACK_ECN counts, TCP AccECN); 0 for a classic one.
    ce_packets: u64,
}

/// A loss, an ECN-CE mark or a timeout.
#[pyclass(module = "quicksim._core", name = "CongestionEvent", frozen, get_all)]
pub struct PyCong {
    /// "loss", "ecn", "rto" or "persistent_congestion".
    cause: &'static str,
    sent_time_ps: u64,
    lost_bytes: u64,
}

/// The Python callbacks, each None when the class keeps `Controller`'s no-op.
struct Hooks {
    on_packet_sent: Option<Py<PyAny>>,
    on_ack: Option<Py<PyAny>>,
    on_ack_end: Option<Py<PyAny>>,
    on_congestion_event: Option<Py<PyAny>>,
    on_spurious_congestion: Option<Py<PyAny>>,
}

/// A Python controller as the transport sees it.
pub struct PyController {
    /// The scenario's name for it (`py:pkg.mod:Class` or a registered name).
    name: Arc<str>,
    obj: Py<PyAny>,
    hooks: Hooks,
    ctx: Py<PyCtx>,
    /// `on_ack` calls of the current ACK, with the bytes in flight after each.
    pending: Vec<(AckEvent, u64)>,
    cwnd: u64,
    ssthresh: u64,
    state: CcState,
    pacing: Option<Rate>,
    /// The class's `ecn_response`, `ect1`, `spreads_ecn_reduction` and `ce_change_ack`, read
    /// once at creation.
    ecn: EcnResponse,
    spreads_ecn: bool,
    ce_ack: CeChangeAck,
    failed: bool,
    slot: FailureSlot,
}

/// Builds `PyController`s of one class with one set of settings.
pub struct PyFactory {
    pub name: Arc<str>,
    pub cls: Py<PyAny>,
    pub params: Py<PyDict>,
    pub slot: FailureSlot,
}

impl ControllerFactory for PyFactory {
    fn build(&self, cx: &InitCtx) -> Box<dyn CongestionController> {
        let (initial, minimum, loss) = (
            cx.window.initial_window(cx.mds),
            cx.window.minimum_window(cx.mds),
            cx.window.loss_window(cx.mds),
        );
        Python::with_gil(|py| {
            let blank = PyCtx {
                now_ps: 0,
                mds: cx.mds,
                bytes_in_flight: 0,
                latest_rtt_ps: 0,
                smoothed_rtt_ps: 0,
                min_rtt_ps: 0,
                rttvar_ps: 0,
                has_rtt_sample: false,
                initial_window: initial,
                minimum_window: minimum,
                loss_window: loss,
            };
            let mut c = PyController {
                name: Arc::clone(&self.name),
                obj: py.None(),
                hooks: Hooks {
                    on_packet_sent: None,
                    on_ack: None,
                    on_ack_end: None,
                    on_congestion_event: None,
                    on_spurious_congestion: None,
                },
                ctx: Py::new(py, blank).expect("allocating a small object"),
                pending: Vec::new(),
                cwnd: initial,
                ssthresh: u64::MAX,
                state: CcState::SlowStart,
                pacing: None,
                ecn: EcnResponse::Classic,
                spreads_ecn: false,
                ce_ack: CeChangeAck::Together,
                failed: false,
                slot: Arc::clone(&self.slot),
            };
            let seed = cx.rng.clone().next_u64();
            let init = PyInit {
                mds: cx.mds,
                initial_window: initial,
                minimum_window: minimum,
                loss_window: loss,
                seed,
            };
            match make(py, &self.cls, init, self.params.bind(py)) {
                Ok((obj, hooks)) => {
                    c.obj = obj;
                    c.hooks = hooks;
                    match read_ecn(c.obj.bind(py)) {
                        Ok((ecn, spreads, ce_ack)) => {
                            (c.ecn, c.spreads_ecn, c.ce_ack) = (ecn, spreads, ce_ack)
                        }
                        Err(what) => c.fail(py, "__init__", SimTime::ZERO, what, None),
                    }
                    c.refresh(py, "__init__", SimTime::ZERO);
                }
                Err(e) => c.fail(py, "__init__", SimTime::ZERO, describe(py, &e), Some(e)),
            }
            Box::new(c) as Box<dyn CongestionController>
        })
    }
}

/// `quicksim.cc._instantiate(cls, init, params)`: the object and its overridden callbacks.
fn make(
    py: Python<'_>,
    cls: &Py<PyAny>,
    init: PyInit,
    params: &Bound<'_, PyDict>,
) -> PyResult<(Py<PyAny>, Hooks)> {
    let f = py.import("quicksim.cc")?.getattr("_instantiate")?;
    let out = f.call1((cls.bind(py), Py::new(py, init)?, params))?;
    let t = out.downcast::<PyTuple>()?;
    let hook = |i: usize| -> PyResult<Option<Py<PyAny>>> {
        let h = t.get_item(i)?;
        Ok(if h.is_none() { None } else { Some(h.unbind()) })
    };
    let hooks = Hooks {
        on_packet_sent: hook(1)?,
        on_ack: hook(2)?,
        on_ack_end: hook(3)?,
        on_congestion_event: hook(4)?,
        on_spurious_congestion: hook(5)?,
    };
    Ok((t.get_item(0)?.unbind(), hooks))
}

/// `TypeError: message` of an exception, on one line.
pub(crate) fn describe(py: Python<'_>, e: &PyErr) -> String {
    let ty = e.get_type(py).name().map(|n| n.to_string()).unwrap_or_else(|_| "Exception".into());
    let text = e.value(py).str().map(|s| s.to_string()).unwrap_or_default();
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if text.is_empty() {
        ty
    } else {
        format!("{ty}: {text}")
    }
}

impl PyController {
    /// Records the first failure of the run and makes this controller inert.
    fn fail(&mut self, py: Python<'_>, callback: &str, now: SimTime, what: String, cause: Option<PyErr>) {
        self.failed = true;
        self.pending.clear();
        let message = format!(
            "congestion controller {:?}: {callback} at t = {:.6} s: {what}",
            &*self.name,
            now.as_secs_f64()
        );
        let interrupt =
            cause.as_ref().is_some_and(|e| e.is_instance_of::<pyo3::exceptions::PyKeyboardInterrupt>(py));
        let mut slot = self.slot.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_none() {
            *slot = Some(Failure { message, cause, interrupt });
        }
    }

    /// Reads the window, ssthresh, state and pacing rate after `callback` ran.
    fn refresh(&mut self, py: Python<'_>, callback: &str, now: SimTime) {
        match read_state(self.obj.bind(py)) {
            Ok((cwnd, ssthresh, state, pacing)) => {
                self.cwnd = cwnd;
                self.ssthresh = ssthresh;
                self.state = state.unwrap_or(if cwnd < ssthresh {
                    CcState::SlowStart
                } else {
                    CcState::CongestionAvoidance
                });
                self.pacing = pacing;
            }
            Err(what) => self.fail(py, callback, now, what, None),
        }
    }

    /// Calls `hook(cx, ev)` and, if it raised, records the failure. Returns false on failure.
    fn call(
        &mut self,
        py: Python<'_>,
        callback: &str,
        hook: &Py<PyAny>,
        now: SimTime,
        ev: Option<PyObject>,
    ) -> bool {
        let cx = self.ctx.clone_ref(py);
        let r = match ev {
            Some(ev) => hook.call1(py, (cx, ev)),
            None => hook.call1(py, (cx,)),
        };
        match r {
            Ok(_) => true,
            Err(e) => {
                let what = describe(py, &e);
                self.fail(py, callback, now, what, Some(e));
                false
            }
        }
    }

    fn set_ctx(&self, py: Python<'_>, cx: &CcCtx) {
        self.ctx.bind(py).borrow_mut().set(cx);
    }
}

/// cwnd (a positive integer), ssthresh (None or a positive integer), state (None or a name),
/// pacing_rate (None or a positive number of bit/s) of the Python object; an error says which
/// attribute and what was wrong with its value.
type State = (u64, u64, Option<CcState>, Option<Rate>);
fn read_state<'py>(obj: &Bound<'py, PyAny>) -> Result<State, String> {
    let py = obj.py();
    // Interned names: four lookups after every batch of callbacks, no string made per call.
    fn attr<'py>(
        obj: &Bound<'py, PyAny>,
        name: &Bound<'py, pyo3::types::PyString>,
    ) -> Result<Bound<'py, PyAny>, String> {
        obj.getattr(name).map_err(|e| describe(obj.py(), &e))
    }
    let get = |name: &Bound<'py, pyo3::types::PyString>| attr(obj, name);
    let cwnd = bytes(&get(pyo3::intern!(py, "cwnd"))?, "cwnd")?;
    let ss = get(pyo3::intern!(py, "ssthresh"))?;
    let ssthresh = if ss.is_none() { u64::MAX } else { bytes(&ss, "ssthresh")? };
    let st = get(pyo3::intern!(py, "state"))?;
    let state = if st.is_none() {
        None
    } else {
        let s: String = st.extract().map_err(|_| format!("state = {} is not a string", short(&st)))?;
        Some(match s.as_str() {
            "slow_start" => CcState::SlowStart,
            "congestion_avoidance" => CcState::CongestionAvoidance,
            "recovery" => CcState::Recovery,
            "app_limited" => CcState::AppLimited,
            _ => {
                return Err(format!(
                    "state = {s:?} is not one of \"slow_start\", \"congestion_avoidance\", \"recovery\", \
                     \"app_limited\" (or None)"
                ))
            }
        })
    };
    let pr = get(pyo3::intern!(py, "pacing_rate"))?;
    let pacing = if pr.is_none() {
        None
    } else {
        let v: f64 = if pr.is_instance_of::<PyBool>() { f64::NAN } else { pr.extract().unwrap_or(f64::NAN) };
        if !(1.0..1.8e19).contains(&v) {
            return Err(format!("pacing_rate = {} is not None or a number of bit/s >= 1", short(&pr)));
        }
        Some(Rate::bps(v as u64))
    };
    Ok((cwnd, ssthresh, state, pacing))
}

/// The ECN response a Python class declares: `ecn_response` "classic" (default) or "scalable"
/// (it counts CE marks itself from `AckSummary.ce_packets`, as DCTCP and Prague), `ect1`
/// (scalable only: send ECT(1), the L4S identifier) and `spreads_ecn_reduction` (TCP spreads its
/// window cut on marks over a round with PRR, as Linux does for DCTCP) and `ce_change_ack`
/// ("together", "apart" or "apart-delayed": [`CeChangeAck`]).
fn read_ecn<'py>(obj: &Bound<'py, PyAny>) -> Result<(EcnResponse, bool, CeChangeAck), String> {
    let py = obj.py();
    let get = |name: &Bound<'py, pyo3::types::PyString>| obj.getattr(name).map_err(|e| describe(py, &e));
    let flag = |v: Bound<'py, PyAny>, what: &str| -> Result<bool, String> {
        if v.is_instance_of::<PyBool>() {
            Ok(v.extract().expect("a bool"))
        } else {
            Err(format!("{what} = {} is not True or False", short(&v)))
        }
    };
    let ect1 = flag(get(pyo3::intern!(py, "ect1"))?, "ect1")?;
    let spreads = flag(get(pyo3::intern!(py, "spreads_ecn_reduction"))?, "spreads_ecn_reduction")?;
    let r = get(pyo3::intern!(py, "ecn_response"))?;
    let response = match r.extract::<String>().as_deref() {
        Ok("classic") if ect1 => return Err("ect1 = True needs ecn_response = \"scalable\"".into()),
        Ok("classic") => EcnResponse::Classic,
        Ok("scalable") => EcnResponse::Scalable { ect1 },
        _ => return Err(format!("ecn_response = {} is not \"classic\" or \"scalable\"", short(&r))),
    };
    let a = get(pyo3::intern!(py, "ce_change_ack"))?;
    let ce_ack = match a.extract::<String>().as_deref() {
        Ok("together") => CeChangeAck::Together,
        Ok("apart") => CeChangeAck::Apart,
        Ok("apart-delayed") => CeChangeAck::ApartDelayed,
        _ => {
            return Err(format!(
                "ce_change_ack = {} is not \"together\", \"apart\" or \"apart-delayed\"",
                short(&a)
            ))
        }
    };
    Ok((response, spreads, ce_ack))
}

/// A window attribute: a positive integer number of bytes below 2**64.
fn bytes(v: &Bound<'_, PyAny>, what: &str) -> Result<u64, String> {
    let shown = short(v);
    if v.is_instance_of::<PyBool>() {
        return Err(format!("{what} = {shown} is a bool, not an integer number of bytes"));
    }
    match v.extract::<u64>() {
        Ok(0) => Err(format!("{what} = 0: the window must be a positive integer number of bytes")),
        Ok(n) => Ok(n),
        Err(_) => match v.extract::<i128>() {
            Ok(n) if n < 0 => Err(format!("{what} = {shown} is negative")),
            Ok(_) => Err(format!("{what} = {shown} does not fit in 64 bits")),
            Err(_) => {
                let ty = v.get_type().name().map(|n| n.to_string()).unwrap_or_default();
                Err(format!("{what} = {shown} is a {ty}, not an integer number of bytes"))
            }
        },
    }
}

/// `repr(v)`, cut to 40 characters.
pub(crate) fn short(v: &Bound<'_, PyAny>) -> String {
    let r = v.repr().map(|s| s.to_string()).unwrap_or_else(|_| "?".into());
    if r.chars().count() > 40 {
        format!("{}...", r.chars().take(40).collect::<String>())
    } else {
        r
    }
}

fn cause_name(c: CongestionCause) -> &'static str {
    match c {
        CongestionCause::Loss => "loss",
        CongestionCause::Ecn => "ecn",
        CongestionCause::Rto => "rto",
        CongestionCause::PersistentCongestion => "persistent_congestion",
    }
}

impl CongestionController for PyController {
    fn on_packet_sent(&mut self, cx: &mut CcCtx, p: &SentPacket) {
        if self.failed {
            return;
        }
        if self.hooks.on_packet_sent.is_none() {
            return;
        }
        Python::with_gil(|py| {
            let hook = self.hooks.on_packet_sent.as_ref().expect("checked").clone_ref(py);
            self.set_ctx(py, cx);
            let ev = Py::new(py, PySent { bytes: p.bytes, app_limited: p.app_limited }).map(|e| e.into_any());
            if let Ok(ev) = ev {
                if self.call(py, "on_packet_sent", &hook, cx.now, Some(ev)) {
                    self.refresh(py, "on_packet_sent", cx.now);
                }
            }
        });
    }

    fn on_ack(&mut self, cx: &mut CcCtx, ack: &AckEvent) {
        if !self.failed && self.hooks.on_ack.is_some() {
            self.pending.push((*ack, cx.bytes_in_flight));
        }
    }

    fn on_ack_end(&mut self, cx: &mut CcCtx, ack: &AckSummary) {
        if self.failed || (self.pending.is_empty() && self.hooks.on_ack_end.is_none()) {
            return;
        }
        Python::with_gil(|py| {
            let pending = std::mem::take(&mut self.pending);
            if let Some(hook) = self.hooks.on_ack.as_ref().map(|h| h.clone_ref(py)) {
                self.set_ctx(py, cx);
                for (a, in_flight) in &pending {
                    self.ctx.bind(py).borrow_mut().bytes_in_flight = *in_flight;
                    let ev =
                        PyAck { sent_time_ps: a.sent_time.0, bytes: a.bytes, app_limited: a.app_limited };
                    let Ok(ev) = Py::new(py, ev) else { return };
                    if !self.call(py, "on_ack", &hook, cx.now, Some(ev.into_any())) {
                        return;
                    }
                }
            }
            self.pending = pending;
            self.pending.clear();
            if let Some(hook) = self.hooks.on_ack_end.as_ref().map(|h| h.clone_ref(py)) {
                self.set_ctx(py, cx);
                let rate = ack.rate.map(|r| {
                    Py::new(
                        py,
                        PyRate {
                            delivered: r.delivered,
                            prior_delivered: r.prior_delivered,
                            delivered_time_ps: r.delivered_time.0,
                            first_sent_time_ps: r.first_sent_time.0,
                            is_app_limited: r.is_app_limited,
                            interval_ps: r.interval.0,
                            rate_bps: r.rate.bits_per_s,
                        },
                    )
                });
                let rate = match rate {
                    Some(Ok(r)) => Some(r),
                    Some(Err(_)) => return,
                    None => None,
                };
                let ev = PySummary {
                    acked_bytes: ack.acked_bytes,
                    acked_packets: ack.acked_packets,
                    largest_acked_sent_time_ps: ack.largest_acked_sent_time.0,
                    app_limited: ack.app_limited,
                    rate,
                    ce_packets: ack.ce_packets,
                };
                let Ok(ev) = Py::new(py, ev) else { return };
                if !self.call(py, "on_ack_end", &hook, cx.now, Some(ev.into_any())) {
                    return;
                }
            }
            self.refresh(py, "on_ack_end", cx.now);
        });
    }

    fn on_congestion_event(&mut self, cx: &mut CcCtx, ev: &CongestionEvent) {
        if self.failed {
            return;
        }
        if self.hooks.on_congestion_event.is_none() {
            return;
        }
        Python::with_gil(|py| {
            let hook = self.hooks.on_congestion_event.as_ref().expect("checked").clone_ref(py);
            self.set_ctx(py, cx);
            let e = PyCong {
                cause: cause_name(ev.cause),
                sent_time_ps: ev.sent_time.0,
                lost_bytes: ev.lost_bytes,
            };
            let Ok(e) = Py::new(py, e) else { return };
            if self.call(py, "on_congestion_event", &hook, cx.now, Some(e.into_any())) {
                self.refresh(py, "on_congestion_event", cx.now);
            }
        });
    }

    fn on_spurious_congestion(&mut self, cx: &mut CcCtx) {
        if self.failed {
            return;
        }
        if self.hooks.on_spurious_congestion.is_none() {
            return;
        }
        Python::with_gil(|py| {
            let hook = self.hooks.on_spurious_congestion.as_ref().expect("checked").clone_ref(py);
            self.set_ctx(py, cx);
            if self.call(py, "on_spurious_congestion", &hook, cx.now, None) {
                self.refresh(py, "on_spurious_congestion", cx.now);
            }
        });
    }

    fn cwnd_bytes(&self) -> u64 {
        self.cwnd
    }

    fn pacing_rate(&self, _cx: &CcCtx) -> Option<Rate> {
        self.pacing
    }

    fn ecn_response(&self) -> EcnResponse {
        self.ecn
    }

    fn spreads_ecn_reduction(&self) -> bool {
        self.spreads_ecn
    }

    fn ce_change_ack(&self) -> CeChangeAck {
        self.ce_ack
    }

    fn metrics(&self) -> CcMetrics {
        CcMetrics { cwnd_bytes: self.cwnd, ssthresh_bytes: self.ssthresh, state: self.state }
    }
}

/// Registers the Python classes `controllers` (`{name: class}`) as plugin controllers of
/// `plugins`. A scenario's settings for one (`cc = { algo = NAME, .. }`) are checked against the
/// class's constructor here (`quicksim.cc._check_settings`), so a misspelled one is a scenario
/// error naming the field.
pub fn register(
    plugins: &mut quicksim_scenario::plugins::Plugins,
    controllers: &Bound<'_, PyDict>,
    slot: &FailureSlot,
) -> PyResult<()> {
    for (name, cls) in controllers.iter() {
        let name: String = name.extract()?;
        let cls = cls.unbind();
        let slot = Arc::clone(slot);
        let key: Arc<str> = name.as_str().into();
        plugins
            .register_controller(&name, move |params: &serde_json::Value| {
                Python::with_gil(|py| {
                    let settings = crate::json_to_py(py, params.clone())
                        .and_then(|d| Ok(d.downcast_into::<PyDict>()?))
                        .map_err(|e| {
                            quicksim_scenario::ScenarioError::new(String::new(), describe(py, &e))
                        })?;
                    let check = py
                        .import("quicksim.cc")
                        .and_then(|m| m.getattr("_check_settings"))
                        .and_then(|f| f.call1((cls.bind(py), &settings)));
                    match check {
                        Ok(v) if v.is_none() => {}
                        Ok(v) => {
                            let (field, msg): (String, String) = v.extract().unwrap_or_default();
                            return Err(quicksim_scenario::ScenarioError::new(field, msg));
                        }
                        Err(e) => {
                            return Err(quicksim_scenario::ScenarioError::new(
                                String::new(),
                                describe(py, &e),
                            ))
                        }
                    }
                    let f = PyFactory {
                        name: Arc::clone(&key),
                        cls: cls.clone_ref(py),
                        params: settings.unbind(),
                        slot: Arc::clone(&slot),
                    };
                    Ok(Arc::new(f) as Arc<dyn ControllerFactory>)
                })
            })
            .map_err(pyo3::exceptions::PyValueError::new_err)?;
    }
    Ok(())
}
