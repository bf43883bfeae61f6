//! CUBIC (RFC 9438) on the transport's window rules.
//!
//! Slow start, the recovery period and persistent congestion are those of RFC 9002 §7 (HyStart++,
//! RFC 9406, with `hystart = true`: [`crate::hystart`]; Linux's HyStart with `hystart_linux =
//! true`: [`crate::hystart_linux`]); the initial, minimum and loss windows come from the transport
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

use crate::hystart_linux::LinuxHyStart;
use crate::registry::{check, ratio, Algorithm};
use crate::{
    AckEvent, AckSummary, CcCtx, HyStart, CcMetrics, CongestionCause, CongestionController, CongestionEvent, InitCtx, Phase,
};

/// Microseconds per second cubed: (t in us)^3 / US3_PER_S3 = t^3 in s^3.
const US3_PER_S3: i128 = 1_000_000_000_000_000_000;

/// CUBIC settings (`cc = { algo = "cubic", beta = 0.7, c = 0.4 }`). `Config::default()` is
/// RFC 9438's recommendation.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawConfig")]
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
    /// Linux's HyStart (net/ipv4/tcp_cubic.c: ACK-train and delay detection,
    /// [`crate::hystart_linux`]) in slow start (default off; not with `hystart`).
    pub hystart_linux: bool,
    /// Congestion avoidance as Linux's `bictcp_update` (net/ipv4/tcp_cubic.c) where it differs
    /// from RFC 9438 (default off): the curve's target one minimum RTT ahead (`delay_min`, not
    /// SRTT); at least one segment per 20 acknowledged while no W_max is known
    /// (`last_max_cwnd == 0`: after a timeout, or slow start left without a loss); the
    /// Reno-friendly estimate growing 8/`beta_scale` segments per window acknowledged
    /// (`beta_scale` = 8 (1 + beta) / 3 / (1 - beta) in Linux's integers: 15 for both 717/1024
    /// and 0.7), never RFC 9438's 1 once it passes the window before the last reduction.
    /// Linux's own constants are beta 717/1024 and C 410/1024 (`beta`, `bic_scale`), set
    /// with `beta` and `c`.
    pub linux: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            fast_convergence: true,
            reno_friendly: true,
            beta: 0.7,
            c: 0.4,
            hystart: false,
            hystart_linux: false,
            linux: false,
        }
    }
}

/// `Config` as read, before the check across its fields.
#[derive(Deserialize)]
#[serde(default, deny_unknown_fields)]
struct RawConfig {
    fast_convergence: bool,
    reno_friendly: bool,
    #[serde(deserialize_with = "check::open_unit")]
    beta: f64,
    #[serde(deserialize_with = "check::positive_up_to_1000")]
    c: f64,
    hystart: bool,
    hystart_linux: bool,
    linux: bool,
}

impl Default for RawConfig {
    fn default() -> Self {
        let Config { fast_convergence, reno_friendly, beta, c, hystart, hystart_linux, linux } = Config::default();
        RawConfig { fast_convergence, reno_friendly, beta, c, hystart, hystart_linux, linux }
    }
}

impl TryFrom<RawConfig> for Config {
    type Error = String;
    fn try_from(r: RawConfig) -> Result<Config, String> {
        if r.hystart && r.hystart_linux {
            return Err("hystart and hystart_linux are two slow-start exits; choose one".into());
        }
        let RawConfig { fast_convergence, reno_friendly, beta, c, hystart, hystart_linux, linux } = r;
        Ok(Config { fast_convergence, reno_friendly, beta, c, hystart, hystart_linux, linux })
    }
}

/// A `Config` as the controller uses it: beta and C as reduced fractions. Encoded (idle
/// connections) as 2 bytes with RFC 9438's beta and C, as a `Config` of two flags was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Params {
    fast_convergence: bool,
    reno_friendly: bool,
    linux: bool,
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
        Params {
            fast_convergence: c.fast_convergence,
            reno_friendly: c.reno_friendly,
            linux: c.linux,
            beta_num,
            beta_den,
            c_num,
            c_den,
        }
    }

    /// RFC 9438 §4.3: alpha_cubic = 3 (1 - beta) / (1 + beta), as (num, den) (9/17 for 0.7).
    fn alpha(&self) -> (u64, u64) {
        (3 * u64::from(self.beta_den - self.beta_num), u64::from(self.beta_den + self.beta_num))
    }

    /// Linux's Reno-friendly growth per window acknowledged, 8 / `beta_scale` (`cubictcp_register`:
    /// `beta_scale = 8 * (BICTCP_BETA_SCALE + beta) / 3 / (BICTCP_BETA_SCALE - beta)`, integers).
    fn linux_alpha(&self) -> (u64, u64) {
        let (n, d) = (u64::from(self.beta_num), u64::from(self.beta_den));
        (8, (8 * (d + n) / 3 / (d - n)).max(1))
    }

    /// `v * beta`, floored.
    fn times_beta(&self, v: u64) -> u64 {
        (u128::from(v) * u128::from(self.beta_num) / u128::from(self.beta_den)) as u64
    }
}

impl Serialize for Params {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let flags =
            u8::from(self.fast_convergence) | u8::from(self.reno_friendly) << 1 | u8::from(self.linux) << 2;
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
            linux: flags & 4 != 0,
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
    /// Linux HyStart state while `config.hystart_linux`.
    hystart_linux: Option<Box<LinuxHyStart>>,
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
            hystart_linux: config.hystart_linux.then(Box::default),
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
        let ahead = if self.params.linux { cx.rtt.min() } else { cx.rtt.smoothed() };
        let mut target = self.curve(t + ahead, &e, mds).clamp(cwnd, cwnd + cwnd / 2);
        if self.params.linux && self.w_max == 0 {
            // `bictcp_update` caps its ACKs-per-segment count at 20 while `last_max_cwnd` is 0.
            target = target.max(cwnd + cwnd / 20);
        }
        let n = (target - cwnd) as u128 * ack.bytes as u128 + e.cubic_rem;
        e.cubic_rem = n % cwnd as u128;
        let mut new_cwnd = cwnd + (n / cwnd as u128) as u64;

        if self.params.reno_friendly {
            // RFC 9438 §4.3: W_est += alpha * segments_acked / cwnd; alpha = 1 once W_est has
            // reached cwnd_prior.
            let (a_num, a_den) = if self.params.linux {
                self.params.linux_alpha()
            } else if e.w_est >= self.cwnd_prior {
                (1, 1)
            } else {
                self.params.alpha()
            };
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
        if let Some(h) = self.hystart_linux.as_mut() {
            // `cubictcp_acked`: every ACK with a sample; ssthresh = cwnd once an exit is found.
            let tx = crate::hystart_linux::Sender {
                cwnd_segments: self.cwnd / cx.mds,
                slow_start: self.cwnd < self.ssthresh,
                paced: cx.window.paced,
                ack_delay: crate::hystart_linux::ack_delay(self.cwnd, cx.rtt.smoothed()),
            };
            if h.on_ack(cx.now, ack.largest_acked_sent_time, tx).is_some() {
                self.ssthresh = self.cwnd;
            }
        }
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
        if let (Some(h), CongestionCause::Rto | CongestionCause::PersistentCongestion) =
            (self.hystart_linux.as_mut(), ev.cause)
        {
            h.on_timeout(); // `cubictcp_state(TCP_CA_Loss)`: `bictcp_reset`, `bictcp_hystart_reset`
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
#[path = "cubic_tests.rs"]
mod tests;
