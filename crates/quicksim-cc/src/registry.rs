//! The registry of congestion controllers: how an algorithm is listed, configured and built.
//!
//! A built-in algorithm is one file in `algos/` implementing [`CongestionController`] and
//! [`Algorithm`], plus its `module::Type` in the `controllers!` line of `algos/mod.rs`. That
//! line generates (smoltcp's `AnyController` pattern):
//! - `AnyController`: one variant per algorithm, dispatched by a `match` (no `dyn` call on the
//!   per-ACK path), plus `Dyn` for a controller made at run time (a plugin);
//! - `BuiltinConfig`: one variant per algorithm's `Config`, deserialized by name from a
//!   scenario's `cc = { algo = "cubic", beta = 0.7 }`;
//! - `NAMES`: the registered names, which the scenario checks against.
//!
//! Idle connections are stored encoded (serde, postcard): built-in controllers are encoded with
//! them; a `Dyn` one cannot be, and `AnyController::can_park` says so. What a transport holds
//! (`CcSpec`) and the generated enum's shared methods are in `spec.rs`.

use serde::de::DeserializeOwned;
use std::fmt;
use std::sync::Arc;

use crate::{CongestionController, InitCtx};

/// What the registry needs from an algorithm besides the controller itself. A built-in one is
/// also serde `Serialize + Deserialize` (its state is encoded with idle connections); a plugin
/// need not be.
pub trait Algorithm: CongestionController + Sized + 'static {
    /// Registry name, as a scenario writes it (`cc = "cubic"`).
    const NAME: &'static str;
    /// The algorithm's settings: `Default` is its recommended configuration; deserialized from
    /// the scenario's `cc` table (unknown fields must be rejected: `#[serde(deny_unknown_fields)]`,
    /// and invalid values too, naming the value: see [`check`]).
    type Config: DeserializeOwned + Default + Clone + PartialEq + fmt::Debug + Send + Sync + 'static;
    /// A fresh controller.
    fn new(cfg: &Self::Config, cx: &InitCtx) -> Self;
}

/// Makes controllers that are not built in (a plugin: a test's toy, a Python class). Any
/// `Fn(&InitCtx) -> Box<dyn CongestionController> + Send + Sync` is one.
pub trait ControllerFactory: Send + Sync {
    fn build(&self, cx: &InitCtx) -> Box<dyn CongestionController>;
}

impl<F> ControllerFactory for F
where
    F: Fn(&InitCtx) -> Box<dyn CongestionController> + Send + Sync,
{
    fn build(&self, cx: &InitCtx) -> Box<dyn CongestionController> {
        self(cx)
    }
}

/// A controller made by a [`ControllerFactory`], with its registered name.
pub struct DynController {
    pub name: Arc<str>,
    pub cc: Box<dyn CongestionController>,
}

/// serde `deserialize_with` checks for configuration fields: a bad value is an error naming the
/// value (the scenario adds the field path).
pub mod check {
    use serde::de::Error;
    use serde::{Deserialize, Deserializer};

    /// A number in the open interval (0, 1), used to 6 decimals: [0.000001, 0.999999].
    pub fn open_unit<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        let v = f64::deserialize(d)?;
        if (1e-6..=0.999_999).contains(&v) {
            Ok(v)
        } else {
            Err(D::Error::custom(format!("{v} is not in (0, 1) (6 decimals: 0.000001 to 0.999999)")))
        }
    }

    /// A number in the closed interval [0, 1].
    pub fn unit<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        let v = f64::deserialize(d)?;
        if (0.0..=1.0).contains(&v) {
            Ok(v)
        } else {
            Err(D::Error::custom(format!("{v} is not in [0, 1]")))
        }
    }

    /// A number in (0, 1000], with at least 1e-6 resolution (a ratio of integers, see
    /// [`super::ratio`]).
    pub fn positive_up_to_1000<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        let v = f64::deserialize(d)?;
        if (1e-6..=1000.0).contains(&v) {
            Ok(v)
        } else {
            Err(D::Error::custom(format!("{v} is not in [1e-6, 1000]")))
        }
    }
}

/// `v` as a reduced fraction num/den, rounded to 6 decimals (0.7 = 7/10, 0.4 = 2/5), so that
/// controllers can work in exact integer arithmetic; a multiple of 1/1024 exactly (Linux's
/// fixed-point constants: CUBIC's beta 717/1024 = 0.7001953125, its C 410/1024), which gives
/// the same fraction as 6 decimals whenever those are exact. `v` must be in [1e-6, 4294].
pub fn ratio(v: f64) -> (u32, u32) {
    const DEN: u64 = 1_000_000;
    const BINARY_DEN: u64 = 1024;
    let k = v * BINARY_DEN as f64;
    let (num, den) = if k.fract() == 0.0 && k >= 1.0 {
        (k as u64, BINARY_DEN)
    } else {
        ((v * DEN as f64).round() as u64, DEN)
    };
    assert!(num > 0 && num <= u64::from(u32::MAX), "ratio of {v} is out of range");
    let (mut a, mut b) = (num, den);
    while b != 0 {
        (a, b) = (b, a % b);
    }
    ((num / a) as u32, (den / a) as u32)
}

/// Generates the registry from the list of built-in algorithms (`module::Type`, each in
/// `algos/<module>.rs`): the modules, `AnyController`, `BuiltinConfig` and `NAMES`.
macro_rules! controllers {
    ($($module:ident :: $ty:ident),+ $(,)?) => {
        $(pub mod $module;)+

        use $crate::registry::Algorithm as _;

        /// Every built-in algorithm's registry name, in registration order.
        pub const NAMES: &[&str] = &[$(<$module::$ty as $crate::registry::Algorithm>::NAME),+];

        /// A congestion controller: a built-in algorithm (a `match` per call) or a run-time
        /// one (`Dyn`). Boxed variants keep it at 16 B in a connection, as a `Box<dyn>` was.
        #[derive(::serde::Serialize, ::serde::Deserialize)]
        pub enum AnyController {
            $($ty(Box<$module::$ty>),)+
            /// Cannot be encoded: serializing it is an error (check `can_park` first).
            #[serde(skip)]
            Dyn(Box<$crate::registry::DynController>),
        }

        /// A built-in algorithm and its settings.
        #[derive(Clone, Debug, PartialEq)]
        pub enum BuiltinConfig {
            $($ty(<$module::$ty as $crate::registry::Algorithm>::Config),)+
        }

        impl BuiltinConfig {
            /// Deserializes the settings of the built-in algorithm `name` from `d` (a table
            /// without the name). `Ok(None)`: no built-in algorithm has that name.
            pub fn parse<'de, D: ::serde::Deserializer<'de>>(
                name: &str,
                d: D,
            ) -> Result<Option<BuiltinConfig>, D::Error> {
                $(
                    if name == $module::$ty::NAME {
                        let c = <<$module::$ty as $crate::registry::Algorithm>::Config
                            as ::serde::Deserialize>::deserialize(d)?;
                        return Ok(Some(BuiltinConfig::$ty(c)));
                    }
                )+
                Ok(None)
            }

            /// The built-in algorithm `name` with its default settings.
            pub fn default_for(name: &str) -> Option<BuiltinConfig> {
                $(
                    if name == $module::$ty::NAME {
                        return Some(BuiltinConfig::$ty(Default::default()));
                    }
                )+
                None
            }

            pub fn name(&self) -> &'static str {
                match self {
                    $(BuiltinConfig::$ty(_) => $module::$ty::NAME,)+
                }
            }

            /// A fresh controller.
            pub fn build(&self, cx: &$crate::InitCtx) -> AnyController {
                match self {
                    $(BuiltinConfig::$ty(c) => AnyController::$ty(Box::new($module::$ty::new(c, cx))),)+
                }
            }
        }

        impl AnyController {
            /// The registry name.
            pub fn name(&self) -> &str {
                match self {
                    $(AnyController::$ty(_) => $module::$ty::NAME,)+
                    AnyController::Dyn(d) => &d.name,
                }
            }
        }

        impl $crate::CongestionController for AnyController {
            #[inline]
            fn on_packet_sent(&mut self, cx: &mut $crate::CcCtx, p: &$crate::SentPacket) {
                match self {
                    $(AnyController::$ty(c) => c.on_packet_sent(cx, p),)+
                    AnyController::Dyn(d) => d.cc.on_packet_sent(cx, p),
                }
            }
            #[inline]
            fn on_ack(&mut self, cx: &mut $crate::CcCtx, a: &$crate::AckEvent) {
                match self {
                    $(AnyController::$ty(c) => c.on_ack(cx, a),)+
                    AnyController::Dyn(d) => d.cc.on_ack(cx, a),
                }
            }
            #[inline]
            fn on_ack_end(&mut self, cx: &mut $crate::CcCtx, a: &$crate::AckSummary) {
                match self {
                    $(AnyController::$ty(c) => c.on_ack_end(cx, a),)+
                    AnyController::Dyn(d) => d.cc.on_ack_end(cx, a),
                }
            }
            #[inline]
            fn on_congestion_event(&mut self, cx: &mut $crate::CcCtx, ev: &$crate::CongestionEvent) {
                match self {
                    $(AnyController::$ty(c) => c.on_congestion_event(cx, ev),)+
                    AnyController::Dyn(d) => d.cc.on_congestion_event(cx, ev),
                }
            }
            #[inline]
            fn on_spurious_congestion(&mut self, cx: &mut $crate::CcCtx) {
                match self {
                    $(AnyController::$ty(c) => c.on_spurious_congestion(cx),)+
                    AnyController::Dyn(d) => d.cc.on_spurious_congestion(cx),
                }
            }
            #[inline]
            fn cwnd_bytes(&self) -> u64 {
                match self {
                    $(AnyController::$ty(c) => c.cwnd_bytes(),)+
                    AnyController::Dyn(d) => d.cc.cwnd_bytes(),
                }
            }
            #[inline]
            fn owns_recovery_window(&self) -> bool {
                match self {
                    $(AnyController::$ty(c) => c.owns_recovery_window(),)+
                    AnyController::Dyn(d) => d.cc.owns_recovery_window(),
                }
            }
            #[inline]
            fn pacing_rate(&self, cx: &$crate::CcCtx) -> Option<::quicksim_engine::Rate> {
                match self {
                    $(AnyController::$ty(c) => c.pacing_rate(cx),)+
                    AnyController::Dyn(d) => d.cc.pacing_rate(cx),
                }
            }
            #[inline]
            fn wants_rate_samples(&self) -> bool {
                match self {
                    $(AnyController::$ty(c) => c.wants_rate_samples(),)+
                    AnyController::Dyn(d) => d.cc.wants_rate_samples(),
                }
            }
            fn ecn_response(&self) -> $crate::api::EcnResponse {
                match self {
                    $(AnyController::$ty(c) => c.ecn_response(),)+
                    AnyController::Dyn(d) => d.cc.ecn_response(),
                }
            }
            fn spreads_ecn_reduction(&self) -> bool {
                match self {
                    $(AnyController::$ty(c) => c.spreads_ecn_reduction(),)+
                    AnyController::Dyn(d) => d.cc.spreads_ecn_reduction(),
                }
            }
            fn ce_change_ack(&self) -> $crate::api::CeChangeAck {
                match self {
                    $(AnyController::$ty(c) => c.ce_change_ack(),)+
                    AnyController::Dyn(d) => d.cc.ce_change_ack(),
                }
            }
            #[inline]
            fn metrics(&self) -> $crate::CcMetrics {
                match self {
                    $(AnyController::$ty(c) => c.metrics(),)+
                    AnyController::Dyn(d) => d.cc.metrics(),
                }
            }
        }
    };
}
pub(crate) use controllers;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algos::{cubic, newreno, AnyController, BuiltinConfig, NAMES};
    use crate::CcSpec;
    use crate::{
        AckEvent, AckSummary, CcCtx, CongestionCause, CongestionEvent, RateSample, RttEstimator, SentPacket,
        WindowRules,
    };
    use proptest::prelude::*;
    use quicksim_engine::Rate;
    use quicksim_engine::{SimDuration, SimTime};

    const MDS: u64 = 1252;

    /// Every controller of these tests starts from the same stream.
    const RNG: quicksim_engine::Rng = quicksim_engine::Rng::from_seed(1);

    fn init(window: &WindowRules) -> InitCtx<'_> {
        InitCtx { mds: MDS, window, rng: &RNG }
    }

    /// Every registered algorithm with its default settings, and the non-default settings that
    /// change a code path.
    fn configs() -> Vec<BuiltinConfig> {
        let mut v: Vec<_> = NAMES.iter().map(|n| BuiltinConfig::default_for(n).unwrap()).collect();
        v.push(BuiltinConfig::NewReno(newreno::Config {
            exact_increase: false,
            per_ack_increase: Some(false),
            ..Default::default()
        }));
        v.push(BuiltinConfig::Cubic(cubic::Config {
            fast_convergence: false,
            reno_friendly: false,
            beta: 0.5,
            c: 0.8,
            hystart: true,
            hystart_linux: false,
            linux: false,
        }));
        v.push(BuiltinConfig::NewReno(newreno::Config { hystart: true, ..Default::default() }));
        v.push(BuiltinConfig::Cubic(cubic::Config {
            hystart_linux: true,
            linux: true,
            beta: 717.0 / 1024.0,
            c: 410.0 / 1024.0,
            ..Default::default()
        }));
        v
    }

    #[test]
    fn every_name_builds_parks_and_round_trips() {
        assert!(NAMES.len() >= 3);
        for (i, n) in NAMES.iter().enumerate() {
            assert!(!NAMES[..i].contains(n), "{n} registered twice");
        }
        for cfg in configs() {
            let cc = cfg.build(&init(&WindowRules::RFC9002));
            assert_eq!(cc.name(), cfg.name());
            assert_eq!(CcSpec::named(cfg.name()).unwrap().name(), cfg.name());
            assert_eq!(cc.metrics().cwnd_bytes, cc.cwnd_bytes());
            assert!(cc.can_park());
            // Encoded and decoded (an idle connection's controller), it is the same state.
            let bytes = postcard::to_allocvec(&cc).unwrap();
            let back: AnyController = postcard::from_bytes(&bytes).unwrap();
            assert_eq!(back.name(), cc.name());
            assert_eq!(postcard::to_allocvec(&back).unwrap(), bytes);
        }
    }

    /// Budget: a connection holds its controller inline; boxed variants keep that at 16 B (the
    /// `Box<dyn CongestionController>` it replaced), whatever the largest algorithm's state.
    #[test]
    fn a_controller_handle_is_16_bytes() {
        assert_eq!(std::mem::size_of::<AnyController>(), 16);
    }

    #[test]
    fn unknown_name_lists_the_valid_ones() {
        let err = CcSpec::named("vegas").unwrap_err();
        assert!(err.contains("\"vegas\""), "{err}");
        for name in NAMES {
            assert!(err.contains(name), "{err}");
        }
        // Names are exact: INET's spelling is not an alias.
        assert!(CcSpec::named("NewReno").is_err());
        assert!(BuiltinConfig::parse("NewReno", serde_json::json!({})).unwrap().is_none());
    }

    /// `BuiltinConfig::parse` of a JSON table, with the error as text.
    fn parse(name: &str, v: serde_json::Value) -> Result<BuiltinConfig, String> {
        BuiltinConfig::parse(name, v).map(|c| c.expect("registered")).map_err(|e| e.to_string())
    }

    #[test]
    fn configs_parse_with_defaults_and_errors_name_field_and_value() {
        // Missing fields take the algorithm's defaults.
        assert_eq!(
            parse("cubic", serde_json::json!({})).unwrap(),
            BuiltinConfig::Cubic(cubic::Config::default())
        );
        assert_eq!(
            parse("cubic", serde_json::json!({"beta": 0.8, "fast_convergence": false})).unwrap(),
            BuiltinConfig::Cubic(cubic::Config { beta: 0.8, fast_convergence: false, ..Default::default() })
        );
        assert_eq!(
            parse("newreno", serde_json::json!({"exact_increase": false})).unwrap(),
            BuiltinConfig::NewReno(newreno::Config { exact_increase: false, ..Default::default() })
        );
        assert_eq!(parse("none", serde_json::json!({})).unwrap(), BuiltinConfig::NoCc(Default::default()));
        // Unknown fields are rejected with their name.
        let e = parse("cubic", serde_json::json!({"bta": 0.7})).unwrap_err();
        assert!(e.starts_with("unknown field `bta`"), "{e}");
        let e = parse("none", serde_json::json!({"exact_increase": true})).unwrap_err();
        assert!(e.contains("unknown field `exact_increase`"), "{e}");
        // Values out of range name the value.
        let e = parse("cubic", serde_json::json!({"beta": 1.5})).unwrap_err();
        assert!(e.contains("1.5 is not in (0, 1)"), "{e}");
        let e = parse("cubic", serde_json::json!({"c": 0})).unwrap_err();
        assert!(e.contains("0 is not in [1e-6, 1000]"), "{e}");
        let e = parse("newreno", serde_json::json!({"exact_increase": "yes"})).unwrap_err();
        assert!(e.contains("invalid type: string \"yes\", expected a boolean"), "{e}");
    }

    #[test]
    fn ratios_are_exact_reduced_fractions() {
        assert_eq!(ratio(0.7), (7, 10));
        assert_eq!(ratio(0.4), (2, 5));
        assert_eq!(ratio(0.5), (1, 2));
        assert_eq!(ratio(1e-6), (1, 1_000_000));
        // 123456 / 10^6, both divided by their gcd 64.
        assert_eq!(ratio(0.123456), (1_929, 15_625));
        assert_eq!(ratio(1000.0), (1000, 1));
        // Rounded to 6 decimals.
        assert_eq!(ratio(0.7000004), (7, 10));
        // Multiples of 1/1024 exactly: Linux CUBIC's beta and C; the same as 6 decimals when
        // those are exact (0.0625 = 1/16 either way).
        assert_eq!(ratio(717.0 / 1024.0), (717, 1024));
        assert_eq!(ratio(410.0 / 1024.0), (205, 512));
        assert_eq!(ratio(0.0625), (1, 16));
        assert_eq!(ratio(1000.0), (1000, 1));
    }

    /// A toy run-time controller: a fixed window of 4 MDS.
    struct Fixed(u64);
    impl CongestionController for Fixed {
        fn on_ack(&mut self, _cx: &mut CcCtx, _ack: &AckEvent) {}
        fn on_congestion_event(&mut self, _cx: &mut CcCtx, _ev: &CongestionEvent) {}
        fn cwnd_bytes(&self) -> u64 {
            self.0
        }
        fn metrics(&self) -> crate::CcMetrics {
            crate::CcMetrics { cwnd_bytes: self.0, ssthresh_bytes: u64::MAX, state: Default::default() }
        }
    }

    #[test]
    fn a_factory_builds_a_dyn_controller_that_does_not_park() {
        let factory: Arc<dyn ControllerFactory> =
            Arc::new(|cx: &InitCtx| Box::new(Fixed(4 * cx.mds)) as Box<dyn CongestionController>);
        let spec = CcSpec::Factory { name: "fixed".into(), factory: Arc::clone(&factory) };
        let cc = spec.build(&init(&WindowRules::RFC9002));
        assert_eq!((cc.name(), cc.cwnd_bytes()), ("fixed", 4 * MDS));
        assert!(!cc.can_park());
        // Serializing it is an error, not a silent loss of state.
        assert!(postcard::to_allocvec(&cc).is_err());
        // Specs compare by factory object.
        assert_eq!(spec, CcSpec::Factory { name: "fixed".into(), factory });
        assert_ne!(spec, CcSpec::default());
        assert_eq!(CcSpec::default(), CcSpec::named("newreno").unwrap());
    }

    /// Runs `f` with a context (one RTT sample of 20 ms, as a transport has by its first ACK)
    /// at `now`.
    fn call<R>(window: &WindowRules, now: SimTime, in_flight: u64, f: impl FnOnce(&mut CcCtx) -> R) -> R {
        let mut rtt = RttEstimator::new(SimDuration::from_millis(20));
        rtt.update(SimDuration::from_millis(20), SimDuration::ZERO, SimDuration::ZERO, true);
        let mut cx = CcCtx { now, mds: MDS, rtt: &rtt, bytes_in_flight: in_flight, window };
        f(&mut cx)
    }

    #[test]
    fn every_algorithm_grows_on_acks_and_backs_off_on_loss() {
        let w = &WindowRules::RFC9002;
        for cfg in configs() {
            let name = cfg.name();
            let mut cc = cfg.build(&init(w));
            let start = cc.cwnd_bytes();
            let (mut now, mut delivered) = (SimTime::ZERO, 0);
            // Ten rounds of a full window, one packet per ack.
            for round in 0..10u64 {
                let sent = SimTime::from_millis(20 * round);
                now = sent + SimDuration::from_millis(20);
                let n = (cc.cwnd_bytes() / MDS).min(1_000);
                for i in 0..n {
                    let p = SentPacket { bytes: MDS, app_limited: false };
                    call(w, sent, (i + 1) * MDS, |cx| cc.on_packet_sent(cx, &p));
                }
                for i in 0..n {
                    let a = AckEvent { sent_time: sent, bytes: MDS, app_limited: false };
                    call(w, now, (n - 1 - i) * MDS, |cx| cc.on_ack(cx, &a));
                }
                // The transport's end of the ACKs (one ACK for the round), as QUIC and TCP call
                // it, with the round's delivery-rate sample: the window over the 20 ms RTT.
                let interval = SimDuration::from_millis(20);
                let rate = RateSample {
                    delivered: n * MDS,
                    prior_delivered: delivered,
                    delivered_time: sent,
                    first_sent_time: sent,
                    is_app_limited: false,
                    interval,
                    rate: Rate::bps(n * MDS * 8 * 50),
                    tx_in_flight: n * MDS,
                    lost: 0,
                    newly_lost: 0,
                };
                delivered += n * MDS;
                let summary = AckSummary {
                    acked_bytes: n * MDS,
                    acked_packets: n,
                    largest_acked_sent_time: sent,
                    app_limited: false,
                    rate: Some(rate),
                    ce_packets: 0,
                };
                call(w, now, 0, |cx| cc.on_ack_end(cx, &summary));
            }
            let grown = cc.cwnd_bytes();
            assert!(grown >= start, "{name}: {start} -> {grown}");
            let ev = CongestionEvent { cause: CongestionCause::Loss, sent_time: now, lost_bytes: MDS };
            call(w, now + SimDuration::from_millis(1), 0, |cx| cc.on_congestion_event(cx, &ev));
            let m = cc.metrics();
            assert_eq!(m.cwnd_bytes, cc.cwnd_bytes(), "{name}");
            if name == "none" {
                assert_eq!(cc.cwnd_bytes(), u64::MAX);
            } else if name == "bbr" {
                // draft-ietf-ccwg-bbr §5.6.4.4: entering fast recovery only saves the window;
                // the model's bounds cut it at the end of the round (`bbr_tests.rs`).
                assert!(grown > start, "{name}: no growth in slow start");
                assert_eq!(cc.cwnd_bytes(), grown, "{name}: BBRv3 keeps the window on entering recovery");
                assert!(m.in_recovery(), "{name}");
            } else {
                assert!(grown > start, "{name}: no growth in slow start");
                assert!(cc.cwnd_bytes() < grown, "{name}: no back-off");
                assert!(m.in_recovery(), "{name}");
            }
            if cc.owns_recovery_window() {
                // Model-based (BBR): no slow-start threshold, and it paces.
                call(w, now, 0, |cx| assert!(cc.pacing_rate(cx).is_some(), "{name}"));
            } else {
                assert!(name == "none" || m.ssthresh_bytes < u64::MAX, "{name}");
                // Window-based controllers do not pace, except Prague (draft §2.5).
                call(w, now, 0, |cx| assert!(name == "prague" || cc.pacing_rate(cx).is_none(), "{name}"));
            }
        }
    }

    #[derive(Clone, Debug)]
    enum Step {
        Ack { bytes: u64, age_ms: u64, app_limited: bool, empty: bool },
        Congestion { age_ms: u64, cause: CongestionCause },
        Wait { ms: u64 },
    }

    fn step() -> impl Strategy<Value = Step> {
        let cause = prop_oneof![
            6 => Just(CongestionCause::Loss),
            1 => Just(CongestionCause::Ecn),
            1 => Just(CongestionCause::Rto),
            1 => Just(CongestionCause::PersistentCongestion),
        ];
        prop_oneof![
            6 => (1..=3 * MDS, 0..200u64, any::<bool>(), any::<bool>()).prop_map(
                |(bytes, age_ms, app_limited, empty)| Step::Ack { bytes, age_ms, app_limited, empty }
            ),
            1 => (0..200u64, cause).prop_map(|(age_ms, cause)| Step::Congestion { age_ms, cause }),
            2 => (0..500u64).prop_map(|ms| Step::Wait { ms }),
        ]
    }

    proptest! {
        /// Whatever the sequence of acks and congestion events, a window never drops below the
        /// transport's loss window (2 MDS for QUIC, RFC 9002 §7.2; 1 SMSS after an RTO for TCP,
        /// RFC 5681 §3.1), metrics agree with `cwnd_bytes`, runs are deterministic, and an
        /// encoded and decoded controller continues identically.
        #[test]
        fn window_invariants(steps in prop::collection::vec(step(), 1..300)) {
            for w in [&WindowRules::RFC9002, &WindowRules::RFC5681] {
                for cfg in configs() {
                    let run = |reencode: bool| {
                        let mut cc = cfg.build(&init(w));
                        let mut now = SimTime::from_secs(1);
                        let mut trace = Vec::new();
                        for s in &steps {
                            match *s {
                                Step::Ack { bytes, age_ms, app_limited, empty } => {
                                    let sent_time = now - SimDuration::from_millis(age_ms);
                                    let a = AckEvent { sent_time, bytes, app_limited };
                                    let flight = if empty { 0 } else { 10 * MDS };
                                    call(w, now, flight, |cx| cc.on_ack(cx, &a));
                                }
                                Step::Congestion { age_ms, cause } => {
                                    let sent_time = now - SimDuration::from_millis(age_ms);
                                    let ev = CongestionEvent { cause, sent_time, lost_bytes: 4 * MDS };
                                    call(w, now, 0, |cx| cc.on_congestion_event(cx, &ev));
                                }
                                Step::Wait { ms } => now += SimDuration::from_millis(ms),
                            }
                            let m = cc.metrics();
                            assert_eq!(m.cwnd_bytes, cc.cwnd_bytes());
                            assert!(cc.cwnd_bytes() >= w.loss_window(MDS), "{}: {}", cfg.name(), cc.cwnd_bytes());
                            trace.push(m);
                            if reencode {
                                cc = postcard::from_bytes(&postcard::to_allocvec(&cc).unwrap()).unwrap();
                            }
                        }
                        trace
                    };
                    prop_assert_eq!(run(false), run(true));
                }
            }
        }
    }
}
