//! CUBIC (RFC 9438) on the transport's window rules.
//!
//! Slow start, the recovery period and persistent congestion are those of RFC 9002 §7 (HyStart++,
//! RFC 9406, with `hystart = true`: [`crate::hystart`]); the initial, minimum and loss windows come from the transport
//! ([`crate::WindowRules`]). The recovery test is RFC 9002's `sent_time <= recovery_start`
//! (NewReno here uses INET's `<` to match that model). An ECN-CE mark is a congestion event like
//! a loss (RFC 9438 §4.6); after an RTO the window collapses to the loss window and the next
//! stage starts with K = 0 (RFC 9438 §4.8).
//!
//! Everything is integer arithmetic: the cubic curve is evaluated with time in microseconds and
//! windows in bytes, K comes from an integer cube root, and beta and C are exact fractions (0.7 =
//! 7/10, 0.4 = 2/5), so results do not depend on the platform's `libm`. The curve is exact to
//! 1 µs in t and 1 byte in W.
//!
//! Simplifications: t is not frozen during application-limited periods (RFC 9438 §5.8 only
//! asks that cwnd not grow then, which holds: app-limited ACKs are ignored); no spurious-loss
//! undo (§4.9, optional); the window is reduced from cwnd, not flight size (§4.6 allows it, and
//! RFC 9002 does the same).

use quicksim_engine::{SimDuration, SimTime, PS_PER_US};
use serde::{Deserialize, Serialize};

use crate::registry::{check, ratio, Algorithm};
use crate::{
    AckEvent, AckSummary, CcCtx, HyStart, CcMetrics, CongestionCause, CongestionController, CongestionEvent, InitCtx, Phase,
};

/// Microseconds per second cubed: (t in us)^3 / US3_PER_S3 = t^3 in s^3.
const US3_PER_S3: i128 = 1_000_000_000_000_000_000;

/// CUBIC settings (`cc = { algo = "cubic", beta = 0.7, c = 0.4 }`). `Config::default()` is
/// RFC 9438's recommendation.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// RFC 9438 §4.7 fast convergence (default on): release bandwidth when W_max shrinks.
    pub fast_convergence: bool,
    /// RFC 9438 §4.3 Reno-friendly region (default on): never grow slower than an
    /// AIMD(3(1-beta)/(1+beta), beta) flow, which matters at small RTTs and small BDPs.
    pub reno_friendly: bool,
    /// beta_cubic, the window reduction factor in (0, 1) (RFC 9438 §4.6, §5.1: 0.7). Used to
    /// 6 decimals.
    #[serde(deserialize_with = "check::open_unit")]
    pub beta: f64,
    /// C in segments per second cubed (RFC 9438 §5.1: 0.4), in [1e-6, 1000]. Used to 6 decimals.
    #[serde(deserialize_with = "check::positive_up_to_1000")]
    pub c: f64,
    /// HyStart++ (RFC 9406, RFC 9438 §4.10) in slow start (default off).
    pub hystart: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config { fast_convergence: true, reno_friendly: true, beta: 0.7, c: 0.4, hystart: false }
    }
}

/// A `Config` as the controller uses it: beta and C as reduced fractions. Encoded (idle
/// connections) as 2 bytes with RFC 9438's beta and C, as a `Config` of two flags was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Params {
    fast_convergence: bool,
    reno_friendly: bool,
    beta_num: u32,
    beta_den: u32,
    c_num: u32,
    c_den: u32,
}

/// RFC 9438 §5.1: beta_cubic = 0.7 = 7/10, C = 0.4 = 2/5.
const RFC_BETA: (u32, u32) = (7, 10);
const RFC_C: (u32, u32) = (2, 5);

impl Params {
    fn new(c: &Config) -> Params {
        let ((beta_num, beta_den), (c_num, c_den)) = (ratio(c.beta), ratio(c.c));
        assert!(beta_num < beta_den, "CUBIC beta {} is not below 1", c.beta);
        Params { fast_convergence: c.fast_convergence, reno_friendly: c.reno_friendly, beta_num, beta_den, c_num, c_den }
    }

    /// RFC 9438 §4.3: alpha_cubic = 3 (1 - beta) / (1 + beta), as (num, den) (9/17 for 0.7).
    fn alpha(&self) -> (u64, u64) {
        (3 * u64::from(self.beta_den - self.beta_num), u64::from(self.beta_den + self.beta_num))
    }

    /// `v * beta`, floored.
    fn times_beta(&self, v: u64) -> u64 {
        (u128::from(v) * u128::from(self.beta_num) / u128::from(self.beta_den)) as u64
    }
}

impl Serialize for Params {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let flags = u8::from(self.fast_convergence) | u8::from(self.reno_friendly) << 1;
        let ratios = [self.beta_num, self.beta_den, self.c_num, self.c_den];
        if ratios == [RFC_BETA.0, RFC_BETA.1, RFC_C.0, RFC_C.1] {
            (flags, None::<[u32; 4]>).serialize(s)
        } else {
            (flags, Some(ratios)).serialize(s)
        }
    }
}

impl<'de> Deserialize<'de> for Params {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Params, D::Error> {
        let (flags, ratios) = <(u8, Option<[u32; 4]>)>::deserialize(d)?;
        let [beta_num, beta_den, c_num, c_den] =
            ratios.unwrap_or([RFC_BETA.0, RFC_BETA.1, RFC_C.0, RFC_C.1]);
        Ok(Params {
            fast_convergence: flags & 1 != 0,
            reno_friendly: flags & 2 != 0,
            beta_num,
            beta_den,
            c_num,
            c_den,
        })
    }
}

/// State of the current congestion avoidance stage ("epoch", RFC 9438 §4.2).
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
struct Epoch {
    start: SimTime,
    /// K in microseconds (RFC 9438 §4.2 eq. 2).
    k_us: u64,
    /// The curve's plateau W_max in bytes (RFC 9438 §4.8: cwnd_epoch after a timeout).
    origin: u64,
    /// Reno-friendly estimate W_est in bytes (RFC 9438 §4.3).
    w_est: u64,
    /// Integer carries of the cubic increase and of W_est.
    cubic_rem: u128,
    est_rem: u128,
}

/// CUBIC state for one path.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Cubic {
    params: Params,
    cwnd: u64,
    #[serde(with = "crate::serde_max_u64")]
    ssthresh: u64,
    /// W_max in bytes: cwnd just before the last reduction (after fast convergence).
    /// Zero when unset (no loss yet, or reset by persistent congestion, RFC 9438 §4.8).
    w_max: u64,
    /// cwnd before the last reduction (RFC 9438 §4.3: alpha becomes 1 once W_est reaches it).
    cwnd_prior: u64,
    epoch: Option<Epoch>,
    /// Packets sent at or before this time belong to the recovery period (RFC 9002 §7.3.2).
    recovery_start: Option<SimTime>,
    phase: Phase,
    /// HyStart++ state while `config.hystart` (boxed: 8 bytes when off).
    hystart: Option<Box<HyStart>>,
}

impl Algorithm for Cubic {
    const NAME: &'static str = "cubic";
    type Config = Config;

    /// A controller with the transport's initial window for `cx.mds`.
    fn new(config: &Config, cx: &InitCtx) -> Self {
        assert!(cx.mds > 0, "CUBIC needs a positive MDS");
        Cubic {
            params: Params::new(config),
            cwnd: cx.window.initial_window(cx.mds),
            ssthresh: u64::MAX,
            w_max: 0,
            cwnd_prior: 0,
            epoch: None,
            recovery_start: None,
            phase: Phase::Open,
            hystart: config.hystart.then(Box::default),
        }
    }
}

impl Cubic {
    fn sent_in_recovery(&self, sent_time: SimTime) -> bool {
        self.recovery_start.is_some_and(|start| sent_time <= start)
    }

    /// Starts a congestion avoidance stage at `now` (RFC 9438 §4.2, §4.3, §4.8).
    fn start_epoch(&mut self, now: SimTime, mds: u64) -> Epoch {
        let cwnd_epoch = self.cwnd;
        let (k_us, origin) = if self.w_max > cwnd_epoch {
            (k_micros(self.w_max - cwnd_epoch, mds, self.params.c_num, self.params.c_den), self.w_max)
        } else {
            // No W_max above us (after persistent congestion, RFC 9438 §4.8): K = 0 and the
            // curve starts at the current window, growing convexly.
            (0, cwnd_epoch)
        };
        Epoch { start: now, k_us, origin, w_est: cwnd_epoch, cubic_rem: 0, est_rem: 0 }
    }

    /// W_cubic(t) of the current parameters (see [`w_cubic`]).
    fn curve(&self, t: SimDuration, e: &Epoch, mds: u64) -> u64 {
        w_cubic(t, e.k_us, e.origin, mds, self.params.c_num, self.params.c_den)
    }
}

/// Floor of the cube root of `x`.
fn icbrt(x: u128) -> u128 {
    // (2^43)^3 > u128::MAX, so the root is below 2^43.
    let (mut lo, mut hi) = (0u128, 1u128 << 43);
    while lo + 1 < hi {
        let mid = (lo + hi) / 2;
        match mid.checked_mul(mid).and_then(|m| m.checked_mul(mid)) {
            Some(c) if c <= x => lo = mid,
            _ => hi = mid,
        }
    }
    lo
}

/// K = cbrt((W_max - cwnd_epoch) / C) with windows in segments (RFC 9438 §4.2 eq. 2), in µs,
/// for C = c_num/c_den: K_us^3 = delta_bytes / MDS / C * 1e18.
fn k_micros(delta_bytes: u64, mds: u64, c_num: u32, c_den: u32) -> u64 {
    let k3 = (delta_bytes as u128).saturating_mul(US3_PER_S3 as u128 * c_den as u128)
        / (mds as u128 * c_num as u128);
    icbrt(k3) as u64
}

/// W_cubic(t) = C (t - K)^3 + W_max in bytes (RFC 9438 §4.2 eq. 1) for C = c_num/c_den,
/// floored, clamped to u64.
fn w_cubic(t: SimDuration, k_us: u64, origin: u64, mds: u64, c_num: u32, c_den: u32) -> u64 {
    let dt = (t.ps() / PS_PER_US) as i128 - k_us as i128;
    let delta = dt
        .saturating_mul(dt)
        .saturating_mul(dt)
        .saturating_mul(c_num as i128 * mds as i128)
        .div_euclid(c_den as i128 * US3_PER_S3);
    (origin as i128).saturating_add(delta).clamp(0, u64::MAX as i128) as u64
}

impl CongestionController for Cubic {
    fn on_ack(&mut self, cx: &mut CcCtx, ack: &AckEvent) {
        let mds = cx.mds;
        if self.sent_in_recovery(ack.sent_time) {
            // RFC 9002 §7.3.2: no increase during the recovery period.
            return;
        }
        if ack.app_limited {
            // RFC 9438 §5.8 / RFC 9002 §7.8: do not grow when not window-limited.
            self.phase = Phase::AppLimited;
            return;
        }
        self.phase = Phase::Open;
        if self.cwnd < self.ssthresh {
            // RFC 9438 §4.10 / RFC 9002 §7.3.1: slow start (RFC 9406: a quarter of the acked
            // bytes in HyStart++'s conservative slow start).
            self.cwnd += self.hystart.as_mut().map_or(ack.bytes, |h| h.increase(ack.bytes));
            return;
        }
        let cwnd = self.cwnd;
        let mut e = match self.epoch {
            Some(e) => e,
            None => self.start_epoch(cx.now, mds),
        };
        let t = cx.now.saturating_sub(e.start);

        // RFC 9438 §4.2: target = W_cubic(t + RTT) bounded to [cwnd, 1.5 cwnd]; every ACK
        // adds (target - cwnd) / cwnd segments per segment acked (here: bytes, with carry).
        let target = self.curve(t + cx.rtt.smoothed(), &e, mds).clamp(cwnd, cwnd + cwnd / 2);
        let n = (target - cwnd) as u128 * ack.bytes as u128 + e.cubic_rem;
        e.cubic_rem = n % cwnd as u128;
        let mut new_cwnd = cwnd + (n / cwnd as u128) as u64;

        if self.params.reno_friendly {
            // RFC 9438 §4.3: W_est += alpha * segments_acked / cwnd; alpha = 1 once W_est has
            // reached cwnd_prior.
            let (a_num, a_den) = if e.w_est >= self.cwnd_prior { (1, 1) } else { self.params.alpha() };
            let n = a_num as u128 * mds as u128 * ack.bytes as u128 + e.est_rem;
            let d = a_den as u128 * cwnd as u128;
            e.est_rem = n % d;
            e.w_est = e.w_est.saturating_add((n / d) as u64);
            // RFC 9438 §4.3: in the Reno-friendly region (W_cubic(t) < W_est) cwnd = W_est.
            // We never let that lower a window the cubic step already raised.
            if self.curve(t, &e, mds) < e.w_est {
                new_cwnd = new_cwnd.max(e.w_est);
            }
        }
        self.cwnd = new_cwnd;
        self.epoch = Some(e);
    }

    fn on_ack_end(&mut self, cx: &mut CcCtx, ack: &AckSummary) {
        // An ACK counts once the path has an RTT sample (latest() is zero before).
        let open = self.phase == Phase::Open && !ack.app_limited && cx.rtt.has_sample();
        let in_slow_start = self.cwnd < self.ssthresh && !self.sent_in_recovery(ack.largest_acked_sent_time);
        if let Some(h) = self.hystart.as_mut() {
            // RFC 9406 §4.2: CSS_ROUNDS rounds of CSS end slow start: ssthresh = cwnd, and the
            // first congestion avoidance stage starts with K = 0 (no W_max yet).
            if open && in_slow_start && h.on_ack_end(cx.now, cx.rtt.latest(), ack.largest_acked_sent_time) {
                self.ssthresh = self.cwnd;
            }
        }
    }

    fn on_congestion_event(&mut self, cx: &mut CcCtx, ev: &CongestionEvent) {
        if let Some(h) = self.hystart.as_mut() {
            h.on_congestion();
        }
        let min_window = cx.window.minimum_window(cx.mds);
        // RFC 9002 §7.3.2: one reduction per recovery period.
        if !self.sent_in_recovery(ev.sent_time) {
            self.recovery_start = Some(cx.now);
            self.phase = Phase::Recovery;
            // RFC 9438 §4.7 fast convergence: W_max = cwnd (1 + beta) / 2 if we lost below it.
            // "Below" means by at least one segment (RFC 9438 §4.1.2 counts cwnd and W_max in
            // segments; Linux's integer cwnd reaches W_max exactly at the plateau). Byte
            // counting approaches the flat plateau asymptotically, so at a loss there the window
            // is W_max less a few bytes, and a byte-exact test turned that into a 15 % cut of
            // W_max, after which the flat curve takes tens of epochs to climb back (the CUBIC-
            // region gap of the RFC 9438 §5 table under periodic loss).
            let p = self.params;
            self.w_max = if p.fast_convergence && self.cwnd + cx.mds <= self.w_max {
                (u128::from(self.cwnd) * u128::from(p.beta_den + p.beta_num) / (2 * u128::from(p.beta_den)))
                    as u64
            } else {
                self.cwnd
            };
            self.cwnd_prior = self.cwnd;
            // RFC 9438 §4.6: ssthresh = cwnd * beta_cubic; cwnd = max(ssthresh, minimum window).
            // After an RTO too (§4.8: "sets ssthresh using beta_cubic").
            self.ssthresh = p.times_beta(self.cwnd).max(min_window);
            self.cwnd = self.ssthresh;
            self.epoch = None;
        }
        match ev.cause {
            CongestionCause::PersistentCongestion => {
                // RFC 9002 §7.6.2: minimum window, recovery forgotten. RFC 9438 §4.8: ssthresh as
                // after a loss (done above), and the next stage uses K = 0, W_max = cwnd_epoch.
                self.cwnd = cx.window.loss_window(cx.mds);
                self.recovery_start = None;
                self.phase = Phase::Open;
                self.w_max = 0;
                self.epoch = None;
            }
            CongestionCause::Rto => {
                // RFC 9438 §4.8: the window as Reno after a timeout (RFC 5681 §3.1: LW), then
                // K = 0, W_max = cwnd_epoch. Packets sent before the timeout stay in the
                // recovery period (no second reduction for their losses).
                self.cwnd = cx.window.loss_window(cx.mds);
                self.recovery_start = Some(cx.now);
                self.phase = Phase::Recovery;
                self.w_max = 0;
                self.epoch = None;
            }
            CongestionCause::Loss | CongestionCause::Ecn => {}
        }
    }

    /// CUBIC never reads the delivery-rate sample.
    fn wants_rate_samples(&self) -> bool {
        false
    }

    fn cwnd_bytes(&self) -> u64 {
        self.cwnd
    }

    fn metrics(&self) -> CcMetrics {
        CcMetrics {
            cwnd_bytes: self.cwnd,
            ssthresh_bytes: self.ssthresh,
            state: self.phase.state(self.cwnd, self.ssthresh),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quicksim_engine::Rng;
    use crate::{CcState, RttEstimator, WindowRules};

    const MDS: u64 = 1000;

    /// Runs `f` with a context at `now` whose smoothed RTT is `rtt`.
    fn call<R>(rtt: SimDuration, now: SimTime, f: impl FnOnce(&mut CcCtx) -> R) -> R {
        let rtt = RttEstimator::new(rtt);
        let mut cx = CcCtx { now, mds: MDS, rtt: &rtt, bytes_in_flight: 50_000, window: &WindowRules::RFC9002 };
        f(&mut cx)
    }

    fn new_cc(config: Config) -> Cubic {
        Cubic::new(&config, &InitCtx { mds: MDS, window: &WindowRules::RFC9002, rng: &Rng::from_seed(1) })
    }

    /// The curve with RFC 9438's C = 0.4.
    fn w_rfc(t: SimDuration, k_us: u64, origin: u64) -> u64 {
        w_cubic(t, k_us, origin, MDS, 2, 5)
    }

    fn ms(v: u64) -> SimDuration {
        SimDuration::from_millis(v)
    }

    fn at(ms: u64) -> SimTime {
        SimTime::from_millis(ms)
    }

    fn ack(cc: &mut Cubic, rtt: SimDuration, bytes: u64, sent: SimTime, now: SimTime) {
        let a = AckEvent { sent_time: sent, bytes, app_limited: false };
        call(rtt, now, |cx| cc.on_ack(cx, &a));
    }

    fn event(cc: &mut Cubic, cause: CongestionCause, sent: SimTime, now: SimTime, lost_bytes: u64) {
        let ev = CongestionEvent { cause, sent_time: sent, lost_bytes };
        call(ms(100), now, |cx| cc.on_congestion_event(cx, &ev));
    }

    fn lose(cc: &mut Cubic, sent: SimTime, now: SimTime) {
        event(cc, CongestionCause::Loss, sent, now, MDS);
    }

    /// Slow start to 36 000 B (W_max = 36 segments), then a loss at 1 s: cwnd = 25 200 B and
    /// K = cbrt((36 - 25.2) / 0.4) = cbrt(27) = 3 s.
    fn after_first_loss(config: Config) -> Cubic {
        let mut cc = new_cc(config);
        assert_eq!(cc.cwnd_bytes(), 10_000);
        for _ in 0..26 {
            ack(&mut cc, ms(100), MDS, at(0), at(100));
        }
        assert_eq!(cc.cwnd_bytes(), 36_000);
        lose(&mut cc, at(900), at(1_000));
        cc
    }

    #[test]
    fn integer_cube_root_and_k() {
        assert_eq!(icbrt(0), 0);
        assert_eq!(icbrt(26), 2);
        assert_eq!(icbrt(27), 3);
        assert_eq!(icbrt(u128::MAX), 6_981_463_658_331);
        // (36 000 - 25 200) B at MDS 1000: K = cbrt(10.8 / 0.4) s = 3 s.
        assert_eq!(k_micros(10_800, 1000, 2, 5), 3_000_000);
        // cbrt(75) = 4.217163 s.
        assert_eq!(k_micros(30_000, 1000, 2, 5), 4_217_163);
    }

    #[test]
    fn cubic_curve_hand_values() {
        let (k, w_max) = (3_000_000, 36_000);
        // W(t) = 0.4 (t - 3)^3 + 36 segments of 1000 B.
        assert_eq!(w_rfc(SimDuration::ZERO, k, w_max), 25_200);
        assert_eq!(w_rfc(ms(1_000), k, w_max), 32_800);
        assert_eq!(w_rfc(ms(2_000), k, w_max), 35_600);
        assert_eq!(w_rfc(ms(3_000), k, w_max), 36_000);
        assert_eq!(w_rfc(ms(4_000), k, w_max), 36_400);
        assert_eq!(w_rfc(ms(5_000), k, w_max), 39_200);
        // 0.4 * (-1.1)^3 = -0.5324 segments -> floor(-532.4 B) = -533 B.
        assert_eq!(w_rfc(ms(1_900), k, w_max), 35_467);
    }

    #[test]
    fn loss_reduces_window_to_seven_tenths() {
        let cc = after_first_loss(Config::default());
        assert_eq!(cc.cwnd_bytes(), 25_200);
        let m = cc.metrics();
        assert_eq!(m.ssthresh_bytes, 25_200);
        assert!(m.in_recovery());
        assert_eq!(cc.w_max, 36_000);
        assert_eq!(cc.cwnd_prior, 36_000);
    }

    #[test]
    fn growth_follows_cubic_curve_near_k() {
        let mut cc = after_first_loss(Config::default());
        // First CA ack at 2 s starts the epoch (t = 0, RTT 0): W_cubic(0) = 25 200 = cwnd, so
        // no cubic step; W_est = 25 200 + 9/17 * 1000 * 1000 / 25 200 = 25 221 (carry 3600),
        // and W_cubic(0) < W_est puts us in the Reno-friendly region: cwnd = 25 221.
        ack(&mut cc, SimDuration::ZERO, MDS, at(1_500), at(2_000));
        assert_eq!(cc.cwnd_bytes(), 25_221);
        assert_eq!(cc.epoch.unwrap().k_us, 3_000_000);
        // t = 1.9 s, RTT 0.1 s: target = W_cubic(2 s) = 35 600.
        // step = (35 600 - 25 221) * 1000 / 25 221 = 411 (carry 13 169). W_cubic(1.9) = 35 467
        // is above W_est (25 241), so the cubic step stands: 25 632.
        ack(&mut cc, ms(100), MDS, at(2_500), at(3_900));
        assert_eq!(cc.cwnd_bytes(), 25_632);
        assert_eq!(cc.epoch.unwrap().w_est, 25_241);
        // t + RTT = K: target = W_max = 36 000.
        // step = ((36 000 - 25 632) * 1000 + 13 169) / 25 632 = 405.
        ack(&mut cc, ms(100), MDS, at(2_500), at(4_900));
        assert_eq!(cc.cwnd_bytes(), 26_037);
    }

    #[test]
    fn plateau_at_w_max_around_k_then_convex_growth() {
        // Ack clock with RTT 100 ms: each round acks one window in MDS packets. The
        // Reno-friendly region is off: at 36 segments and 100 ms it would dominate (AIMD
        // reaches W_max after about 20 RTTs, the curve after K = 3 s).
        let mut cc = after_first_loss(Config { reno_friendly: false, ..Config::default() });
        let rtt = ms(100);
        let mut now = at(1_100); // packets sent after the 1 s recovery start
        let mut cwnd_at = Vec::new();
        for _ in 0..60 {
            let sent = now;
            now += rtt;
            for _ in 0..cc.cwnd_bytes() / MDS {
                ack(&mut cc, rtt, MDS, sent, now);
            }
            cwnd_at.push(cc.cwnd_bytes());
        }
        // Epoch started at 1.2 s, so t = K = 3 s at 4.2 s, after round 31 (index 30). The
        // window is then within a few hundred bytes below W_max = 36 000 (concave approach).
        assert!((35_500..=36_000).contains(&cwnd_at[30]), "{}", cwnd_at[30]);
        // Around the plateau growth is tiny: less than 300 B over the five rounds around K
        // (about 3 800 B per five rounds right after the loss).
        assert!(cwnd_at[33] - cwnd_at[28] < 300, "{:?}", &cwnd_at[28..34]);
        assert!(cwnd_at[5] - cwnd_at[0] > 3_000, "{:?}", &cwnd_at[..6]);
        // Convex afterwards: at t = 5 s (index 50) W_cubic(5.1 s) = 36 000 + 0.4*2.1^3*1000 =
        // 39 704; the window lags the target by less than one round.
        assert!((38_800..=39_704).contains(&cwnd_at[50]), "{}", cwnd_at[50]);
        assert!(cwnd_at.windows(2).all(|w| w[0] <= w[1]));
    }

    #[test]
    fn target_capped_at_one_and_a_half_cwnd() {
        let mut cc = after_first_loss(Config::default());
        // RTT 20 s makes W_cubic(t + RTT) huge; target = 1.5 * 25 200 = 37 800, step =
        // 12 600 * 1000 / 25 200 = 500.
        ack(&mut cc, ms(20_000), MDS, at(1_500), at(2_000));
        assert_eq!(cc.cwnd_bytes(), 25_700);
    }

    #[test]
    fn reno_friendly_region_at_small_rtt() {
        let mut cc = after_first_loss(Config::default());
        let rtt = ms(1);
        let mut now = at(1_001);
        let start = now + rtt;
        let mut per_round = Vec::new();
        for _ in 0..40 {
            let sent = now;
            now += rtt;
            let before = cc.cwnd_bytes();
            for _ in 0..cc.cwnd_bytes() / MDS {
                ack(&mut cc, rtt, MDS, sent, now);
            }
            per_round.push(cc.cwnd_bytes() - before);
        }
        let e = cc.epoch.unwrap();
        // Reno-friendly: cwnd is W_est, far above the cubic curve (which after 40 ms has
        // grown by 0.4 * (3^3 - 2.96^3) segments, about 426 B).
        assert_eq!(cc.cwnd_bytes(), e.w_est);
        let t = now.saturating_sub(start);
        assert!(w_rfc(t + rtt, e.k_us, e.origin) < 25_700);
        // Below cwnd_prior (36 000), W_est grows by 9/17 of an MDS per window of acks
        // (529 B, a little less since a round acks only whole packets)...
        assert!(per_round[1..15].iter().all(|&g| (480..=530).contains(&g)), "{per_round:?}");
        // ... and by one MDS per window once it has reached cwnd_prior.
        assert!(per_round[30..].iter().all(|&g| (900..=1000).contains(&g)), "{per_round:?}");
        // Without the Reno-friendly region the window stays on the flat cubic curve.
        let mut pure = after_first_loss(Config { reno_friendly: false, ..Config::default() });
        let mut now = at(1_001);
        for _ in 0..40 {
            let sent = now;
            now += rtt;
            for _ in 0..pure.cwnd_bytes() / MDS {
                ack(&mut pure, rtt, MDS, sent, now);
            }
        }
        assert!(pure.cwnd_bytes() < 25_700, "{}", pure.cwnd_bytes());
    }

    #[test]
    fn fast_convergence_lowers_w_max() {
        for (fc, w_max) in [(true, 21_420), (false, 25_200)] {
            let mut cc = after_first_loss(Config { fast_convergence: fc, ..Config::default() });
            // A second loss of a packet sent after the recovery start, still below W_max.
            lose(&mut cc, at(1_100), at(1_200));
            assert_eq!(cc.w_max, w_max); // 25 200 * 0.85 = 21 420
            assert_eq!(cc.cwnd_bytes(), 17_640); // 25 200 * 0.7
        }
    }

    #[test]
    fn fast_convergence_ignores_a_shortfall_within_the_same_segment() {
        // W_max = 36 000 B = 36 segments of 1000 B. A loss at 35 000 B (a whole segment below):
        // fast convergence, W_max = 35 000 · 0.85 = 29 750. At 35 001 or 35 999 B (less than a
        // segment below, the byte-counted window creeping up the flat plateau) it must not fire:
        // the byte-exact test of earlier versions did.
        for (cwnd, w_max) in [(35_000, 29_750), (35_001, 35_001), (35_999, 35_999), (36_999, 36_999)] {
            let mut cc = after_first_loss(Config::default());
            cc.cwnd = cwnd;
            cc.phase = Phase::Open;
            lose(&mut cc, at(1_100), at(1_200));
            assert_eq!(cc.w_max, w_max, "cwnd {cwnd}");
            assert_eq!(cc.cwnd_bytes(), cwnd * 7 / 10);
        }
        // W_max = 36 500 B: 35 500 B is one segment below (fires: 30 175), 35 501 B is not.
        for (cwnd, w_max) in [(35_500, 30_175), (35_501, 35_501)] {
            let mut cc = after_first_loss(Config::default());
            cc.w_max = 36_500;
            cc.cwnd = cwnd;
            lose(&mut cc, at(1_100), at(1_200));
            assert_eq!(cc.w_max, w_max, "cwnd {cwnd}");
        }
    }

    #[test]
    fn recovery_period_and_minimum_window() {
        let mut cc = after_first_loss(Config::default());
        // RFC 9002: losses and acks of packets sent at or before the recovery start are ignored.
        lose(&mut cc, at(1_000), at(1_050));
        assert_eq!(cc.cwnd_bytes(), 25_200);
        ack(&mut cc, ms(100), MDS, at(1_000), at(1_100));
        assert_eq!(cc.cwnd_bytes(), 25_200);
        assert!(cc.metrics().in_recovery());
        // Repeated losses bottom out at 2 MDS.
        let mut t = 1_100;
        for _ in 0..10 {
            lose(&mut cc, at(t), at(t + 1));
            t += 10;
        }
        assert_eq!(cc.cwnd_bytes(), 2 * MDS);
    }

    #[test]
    fn persistent_congestion_restarts_with_k_zero() {
        let mut cc = after_first_loss(Config::default());
        event(&mut cc, CongestionCause::PersistentCongestion, at(1_500), at(2_000), 10 * MDS);
        assert_eq!(cc.cwnd_bytes(), 2 * MDS);
        assert_eq!(cc.metrics().ssthresh_bytes, 17_640);
        assert!(!cc.metrics().in_recovery());
        // Slow start back to ssthresh, then the first CA epoch has K = 0 and W_max = cwnd_epoch.
        while cc.cwnd_bytes() < 17_640 {
            ack(&mut cc, ms(100), MDS, at(1_500), at(2_100));
        }
        ack(&mut cc, ms(100), MDS, at(2_100), at(2_200));
        let e = cc.epoch.unwrap();
        assert_eq!(e.k_us, 0);
        assert_eq!(e.origin, 18_000);
    }

    #[test]
    fn app_limited_acks_do_not_grow_the_window() {
        let mut cc = new_cc(Config::default());
        let a = AckEvent { sent_time: at(0), bytes: MDS, app_limited: true };
        call(ms(100), at(100), |cx| cc.on_ack(cx, &a));
        assert_eq!(cc.cwnd_bytes(), 10_000);
        assert_eq!(cc.metrics().state, CcState::AppLimited);
        let mut ca = after_first_loss(Config::default());
        let a = AckEvent { sent_time: at(2_000), ..a };
        for _ in 0..100 {
            call(ms(100), at(5_000), |cx| ca.on_ack(cx, &a));
        }
        assert_eq!(ca.cwnd_bytes(), 25_200);
        assert!(ca.epoch.is_none());
    }

    #[test]
    fn beta_and_c_from_the_configuration() {
        // beta = 0.5 (1/2), C = 0.8 (4/5): a loss at 36 000 B halves the window, and
        // K = cbrt((36 - 18) / 0.8) s = cbrt(22.5) s = 2.823108 s.
        let cfg = Config { beta: 0.5, c: 0.8, ..Config::default() };
        let mut cc = after_first_loss(cfg);
        assert_eq!((cc.cwnd_bytes(), cc.metrics().ssthresh_bytes), (18_000, 18_000));
        assert_eq!(cc.w_max, 36_000);
        // alpha = 3 (1 - 0.5) / (1 + 0.5) = 1.
        assert_eq!(cc.params.alpha(), (3, 3));
        assert_eq!(k_micros(18_000, MDS, 4, 5), 2_823_108);
        // The first CA ack starts the epoch: W_cubic(0) = 18 000 = cwnd (no cubic step); W_est
        // += 1 · 1000 · 1000 / 18 000 = 55 (Reno-friendly region): cwnd = 18 055.
        ack(&mut cc, SimDuration::ZERO, MDS, at(1_500), at(2_000));
        assert_eq!(cc.cwnd_bytes(), 18_055);
        assert_eq!(cc.epoch.unwrap().k_us, 2_823_108);
        // W_cubic(1 s) = 36 000 + 0.8 · (1 - 2.823108)^3 · 1000 = 31 152.6 -> 31 152.
        let e = cc.epoch.unwrap();
        assert_eq!(cc.curve(ms(1_000), &e, MDS), 31_152);
        // Fast convergence with beta 0.5: W_max = 18 055 · (1 + 0.5) / 2 = 13 541.
        lose(&mut cc, at(1_900), at(2_100));
        assert_eq!(cc.w_max, 13_541);
        assert_eq!(cc.cwnd_bytes(), 9_027);
    }

    #[test]
    fn default_parameters_encode_in_two_bytes() {
        let default = Params::new(&Config::default());
        assert_eq!((default.beta_num, default.beta_den, default.c_num, default.c_den), (7, 10, 2, 5));
        let bytes = postcard::to_allocvec(&default).unwrap();
        assert_eq!(bytes, [3, 0]); // both flags, no ratios
        let custom = Params::new(&Config { fast_convergence: false, beta: 0.5, c: 0.8, ..Config::default() });
        let bytes = postcard::to_allocvec(&custom).unwrap();
        assert_eq!(bytes, [2, 1, 1, 2, 4, 5]);
        assert_eq!(postcard::from_bytes::<Params>(&bytes).unwrap(), custom);
    }

    #[test]
    fn ecn_mark_reduces_as_a_loss() {
        let mut cc = after_first_loss(Config::default());
        event(&mut cc, CongestionCause::Ecn, at(1_100), at(1_200), 0);
        assert_eq!(cc.cwnd_bytes(), 17_640); // 25 200 · 0.7
        assert_eq!(cc.metrics().state, CcState::Recovery);
    }

    #[test]
    fn rto_collapses_to_the_loss_window_then_k_zero() {
        let mut cc = after_first_loss(Config::default());
        let tcp = |now, f: &mut dyn FnMut(&mut CcCtx)| {
            let rtt = RttEstimator::new(ms(100));
            let mut cx = CcCtx { now, mds: MDS, rtt: &rtt, bytes_in_flight: 0, window: &WindowRules::RFC5681 };
            f(&mut cx)
        };
        let rto = CongestionEvent { cause: CongestionCause::Rto, sent_time: at(1_100), lost_bytes: 20 * MDS };
        tcp(at(2_000), &mut |cx| cc.on_congestion_event(cx, &rto));
        // ssthresh = 25 200 · 0.7 (RFC 9438 §4.8); cwnd = LW = 1 MSS (RFC 5681 §3.1).
        assert_eq!((cc.cwnd_bytes(), cc.metrics().ssthresh_bytes), (1_000, 17_640));
        assert_eq!(cc.metrics().state, CcState::Recovery);
        assert_eq!(cc.w_max, 0);
        // Packets sent at or before the timeout do not grow the window; later ones slow-start.
        let a = AckEvent { sent_time: at(2_000), bytes: MDS, app_limited: false };
        tcp(at(2_100), &mut |cx| cc.on_ack(cx, &a));
        assert_eq!(cc.cwnd_bytes(), 1_000);
        let a = AckEvent { sent_time: at(2_001), ..a };
        while cc.cwnd_bytes() < 17_640 {
            tcp(at(2_100), &mut |cx| cc.on_ack(cx, &a));
        }
        assert_eq!(cc.cwnd_bytes(), 18_000);
        // The first congestion avoidance stage has K = 0 and W_max = cwnd_epoch.
        tcp(at(2_200), &mut |cx| cc.on_ack(cx, &a));
        let e = cc.epoch.unwrap();
        assert_eq!((e.k_us, e.origin), (0, 18_000));
    }
    /// One ACK of one MDS-sized packet sent at `sent`, acked at `now`, RTT sample `rtt_ms`.
    fn hs_ack(cc: &mut Cubic, rtt_ms: u64, sent: SimTime, now: SimTime) {
        crate::hystart::testing::one_ack(cc, MDS, 50_000, rtt_ms, sent, now);
    }

    #[test]
    fn hystart_leaves_slow_start_through_css() {
        for hystart in [true, false] {
            let mut cc = new_cc(Config { hystart, ..Config::default() });
            // Round 1 (8 ACKs, RTT 100 ms): slow start, 10 000 -> 18 000 B. Round 2 (RTT 150 ms
            // >= 100 + 12.5): slow start to 26 000 B, and the 8th sample enters CSS.
            for _ in 0..8 {
                hs_ack(&mut cc, 100, at(0), at(100));
            }
            for _ in 0..8 {
                hs_ack(&mut cc, 150, at(100), at(250));
            }
            assert_eq!(cc.cwnd_bytes(), 26_000);
            // CSS rounds 1-4 (4 ACKs each, RTT still 150 ms: no return): 250 B per 1000 B acked.
            for r in 0..4 {
                for _ in 0..4 {
                    hs_ack(&mut cc, 150, at(250 + 150 * r), at(400 + 150 * r));
                }
            }
            // The first ACK of round 7 ends the 5th CSS round: ssthresh = cwnd = 30 250 B.
            hs_ack(&mut cc, 150, at(850), at(1_000));
            let m = cc.metrics();
            if hystart {
                assert_eq!((m.cwnd_bytes, m.ssthresh_bytes), (30_250, 30_250));
                assert_eq!(m.state, CcState::CongestionAvoidance);
                // Congestion avoidance starts with no W_max: K = 0 at the next ACK.
                hs_ack(&mut cc, 150, at(900), at(1_100));
                assert_eq!(cc.epoch.unwrap().k_us, 0);
            } else {
                // Plain slow start: every acked byte, no threshold.
                assert_eq!((m.cwnd_bytes, m.ssthresh_bytes), (43_000, u64::MAX));
            }
        }
    }

}
