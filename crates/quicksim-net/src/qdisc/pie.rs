//! PIE, Proportional Integral controller Enhanced (RFC 8033): every `tupdate` a PI controller
//! moves a drop probability by `alpha * (qdelay - target) + beta * (qdelay - qdelay_old)`,
//! scaled down while the probability is small (the auto-tuning of section 4.2); arriving
//! packets are dropped (or marked CE, while the probability is at most `ecn_threshold`) with
//! that probability, except during the burst allowance and while the queue is short.
//!
//! The queueing delay is the sojourn time of the packet last dequeued (0 once the queue has
//! emptied), the timestamp method of RFC 8033 section 5.2 that Linux and ns-3 use by default,
//! instead of estimating the departure rate. No de-randomization (optional in the RFC, off in
//! ns-3).

use super::codel::{CodelQueue, TimedFifo};
use super::{ConfigError, KindConfig, Qdisc, QdiscCtx, Queued, Verdict};
use crate::{DropReason, Packet};
use quicksim_engine::units::{Bytes, Dur};
use quicksim_engine::{SimDuration, SimTime};
use serde::Deserialize;

/// RFC 8033 section 4.1: QDELAY_REF = 15 ms, T_UPDATE = 15 ms, alpha = 0.125 Hz,
/// beta = 1.25 Hz, MAX_BURST = 150 ms; Linux's `pie` limit of 1000 packets.
pub const DEFAULT_TARGET_MS: u64 = 15;
pub const DEFAULT_TUPDATE_MS: u64 = 15;
pub const DEFAULT_ALPHA: f64 = 0.125;
pub const DEFAULT_BETA: f64 = 1.25;
pub const DEFAULT_MAX_BURST_MS: u64 = 150;
pub const DEFAULT_PACKETS: u64 = 1000;

/// `queue = { kind = "pie", target = "15ms", tupdate = "15ms", alpha = 0.125, beta = 1.25,
/// max_burst = "150ms", packets = 1000, ecn = false, ecn_threshold = 0.1, mean_packet =
/// "1500B" }`.
#[derive(Clone, Debug, Deserialize, schemars::JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// QDELAY_REF: the queueing delay PIE steers to.
    #[serde(default = "default_target")]
    pub target: Dur,
    /// T_UPDATE: how often the drop probability is recomputed.
    #[serde(default = "default_tupdate")]
    pub tupdate: Dur,
    /// Weight of the delay's distance from target, per second.
    #[serde(default = "default_alpha")]
    pub alpha: f64,
    /// Weight of the delay's change since the last update, per second.
    #[serde(default = "default_beta")]
    pub beta: f64,
    /// MAX_BURST: how long a burst passes undropped after an idle spell.
    #[serde(default = "default_max_burst")]
    pub max_burst: Dur,
    /// Capacity in packets (a packet beyond it is tail-dropped, reason `overflow`).
    #[serde(default = "default_packets")]
    pub packets: u64,
    /// Mark ECN-capable packets CE instead of dropping them while the drop probability is at
    /// most `ecn_threshold` (RFC 8033 section 5.1).
    #[serde(default)]
    pub ecn: bool,
    /// With `ecn`: mark only while the drop probability is below this; above it, drop even
    /// ECN-capable packets (RFC 8033 §5.1's 10 %).
    #[serde(default = "default_ecn_threshold")]
    pub ecn_threshold: f64,
    /// MEAN_PKTSIZE: a queue of at most two of these is never dropped from.
    #[serde(default = "default_mean_packet")]
    pub mean_packet: Bytes,
}

fn default_target() -> Dur {
    Dur(SimDuration::from_millis(DEFAULT_TARGET_MS))
}
fn default_tupdate() -> Dur {
    Dur(SimDuration::from_millis(DEFAULT_TUPDATE_MS))
}
fn default_alpha() -> f64 {
    DEFAULT_ALPHA
}
fn default_beta() -> f64 {
    DEFAULT_BETA
}
fn default_max_burst() -> Dur {
    Dur(SimDuration::from_millis(DEFAULT_MAX_BURST_MS))
}
fn default_packets() -> u64 {
    DEFAULT_PACKETS
}
fn default_ecn_threshold() -> f64 {
    0.1
}
fn default_mean_packet() -> Bytes {
    Bytes(1500)
}

impl Default for Config {
    fn default() -> Self {
        Config {
            target: default_target(),
            tupdate: default_tupdate(),
            alpha: DEFAULT_ALPHA,
            beta: DEFAULT_BETA,
            max_burst: default_max_burst(),
            packets: DEFAULT_PACKETS,
            ecn: false,
            ecn_threshold: 0.1,
            mean_packet: default_mean_packet(),
        }
    }
}

impl KindConfig for Config {
    const KIND: &'static str = "pie";
    fn validate(&self) -> Result<(), ConfigError> {
        if self.target.0 .0 == 0 {
            return Err(ConfigError::new("target", "\"0s\": the target delay must be positive"));
        }
        if self.tupdate.0 .0 == 0 {
            return Err(ConfigError::new("tupdate", "\"0s\": the update interval must be positive"));
        }
        for (f, v) in [("alpha", self.alpha), ("beta", self.beta)] {
            if !v.is_finite() || v < 0.0 {
                return Err(ConfigError::new(f, format!("{v}: a gain must be a number >= 0")));
            }
        }
        if !(0.0..=1.0).contains(&self.ecn_threshold) {
            return Err(ConfigError::new(
                "ecn_threshold",
                format!("{}: not a probability in [0, 1]", self.ecn_threshold),
            ));
        }
        if self.packets == 0 {
            return Err(ConfigError::new("packets", "0: a queue must hold at least 1 packet"));
        }
        Ok(())
    }
    fn capacity(&self) -> (Option<u64>, Option<u64>) {
        (Some(self.packets), None)
    }
}

/// The PIE queue.
#[derive(Debug)]
pub struct Pie<P> {
    fifo: TimedFifo<P>,
    cfg: Config,
    drop_prob: f64,
    /// The current queueing delay estimate and the one at the last update.
    qdelay: SimDuration,
    qdelay_old: SimDuration,
    burst_allowance: SimDuration,
    /// The next update (None until the first packet).
    next_update: Option<SimTime>,
}

impl<P> Pie<P> {
    pub fn new(cfg: &Config) -> Self {
        Pie {
            fifo: TimedFifo::default(),
            cfg: cfg.clone(),
            drop_prob: 0.0,
            qdelay: SimDuration::ZERO,
            qdelay_old: SimDuration::ZERO,
            burst_allowance: cfg.max_burst.0,
            next_update: None,
        }
    }

    /// The drop probability in force.
    pub fn drop_prob(&self) -> f64 {
        self.drop_prob
    }

    fn start_timer(&mut self, now: SimTime) {
        if self.next_update.is_none() {
            self.next_update = Some(now + self.cfg.tupdate.0);
        }
    }

    /// RFC 8033 `drop_early`: whether an arriving packet should be dropped (or marked).
    fn drop_early(&self, cx: &mut QdiscCtx<'_, P>) -> bool {
        if self.burst_allowance > SimDuration::ZERO {
            return false;
        }
        let half = SimDuration(self.cfg.target.0 .0 / 2);
        if self.qdelay_old < half && self.drop_prob < 0.2 {
            return false;
        }
        if self.fifo.bytes <= 2 * self.cfg.mean_packet.0 {
            return false;
        }
        cx.rng.uniform01() < self.drop_prob
    }

    /// RFC 8033 `calculate_drop_prob` and the burst allowance's update.
    fn update(&mut self) {
        let target = self.cfg.target.0.as_secs_f64();
        let (q, q_old) = (self.qdelay.as_secs_f64(), self.qdelay_old.as_secs_f64());
        let mut p = self.cfg.alpha * (q - target) + self.cfg.beta * (q - q_old);
        // Auto-tuning (section 4.2): small probabilities move in small steps.
        let scale = match self.drop_prob {
            d if d < 0.000_001 => 1.0 / 2048.0,
            d if d < 0.000_01 => 1.0 / 512.0,
            d if d < 0.000_1 => 1.0 / 128.0,
            d if d < 0.001 => 1.0 / 32.0,
            d if d < 0.01 => 1.0 / 8.0,
            d if d < 0.1 => 1.0 / 2.0,
            _ => 1.0,
        };
        p *= scale;
        // No jump of more than 2 % once the probability is 10 % or more (section 4.2) ...
        if self.drop_prob >= 0.1 && p > 0.02 {
            p = 0.02;
        }
        // ... but 2 % more whenever the delay passes 250 ms (Linux's `pie`).
        if q > 0.25 {
            p += 0.02;
        }
        self.drop_prob = (self.drop_prob + p).clamp(0.0, 1.0);
        // Exponential decay once the queue has stayed empty (section 4.2).
        if self.qdelay == SimDuration::ZERO && self.qdelay_old == SimDuration::ZERO {
            self.drop_prob *= 0.98;
        }
        self.burst_allowance = self.burst_allowance.saturating_sub(self.cfg.tupdate.0);
        let half = SimDuration(self.cfg.target.0 .0 / 2);
        // Back to the inactive state (section 4.4): a fresh burst allowance.
        if self.drop_prob == 0.0 && self.qdelay < half && self.qdelay_old < half {
            self.burst_allowance = self.cfg.max_burst.0;
        }
        self.qdelay_old = self.qdelay;
    }
}

impl<P> Qdisc<P> for Pie<P> {
    fn enqueue(&mut self, cx: &mut QdiscCtx<'_, P>, mut q: Queued<P>) -> Verdict<P> {
        self.start_timer(cx.now);
        if self.fifo.q.len() as u64 >= self.cfg.packets {
            return Verdict::Dropped(q.pkt, DropReason::Overflow);
        }
        if self.drop_early(cx) {
            let may_mark = self.cfg.ecn && self.drop_prob <= self.cfg.ecn_threshold;
            if !(may_mark && cx.mark(&mut q.pkt)) {
                return Verdict::Dropped(q.pkt, DropReason::Aqm);
            }
        }
        self.fifo.push(q);
        Verdict::Queued
    }
    fn dequeue(&mut self, cx: &mut QdiscCtx<'_, P>) -> Option<Packet<P>> {
        self.start_timer(cx.now);
        let e = self.fifo.pop()?;
        self.qdelay = if self.fifo.q.is_empty() { SimDuration::ZERO } else { cx.now - e.enqueued_at };
        Some(e.pkt)
    }
    fn len_packets(&self) -> usize {
        self.fifo.q.len()
    }
    fn len_bytes(&self) -> u64 {
        self.fifo.bytes
    }
    fn next_timer(&self) -> Option<SimTime> {
        self.next_update
    }
    fn on_timer(&mut self, cx: &mut QdiscCtx<'_, P>) {
        self.update();
        self.next_update = Some(cx.now + self.cfg.tupdate.0);
    }
}

#[cfg(test)]
mod tests {
    use super::super::codel::tests::{pkt, Log};
    use super::*;
    use crate::Ecn;
    use quicksim_engine::Rng;

    /// Drives PIE's controller with a queue whose packets all wait exactly `d` (each one is
    /// dequeued one update after it was put in, stamped so that its sojourn time is `d`; put
    /// in directly, past `drop_early`) for `n` updates; returns the drop probability after each.
    fn probs_at(d: SimDuration, n: usize) -> Vec<f64> {
        let mut q: Pie<()> = Pie::new(&Config::default());
        let (mut rng, mut log) = (Rng::from_seed(1), Log::default());
        let step = SimDuration::from_millis(15);
        let mut now = SimTime::from_millis(1000);
        q.fifo.push(Queued { pkt: pkt(0, 0, 1500, Ecn::NotEct), enqueued_at: now - d });
        let mut out = Vec::new();
        for k in 1..=n as u64 {
            let mut cx = QdiscCtx::new(now, &mut rng, &mut log);
            q.fifo.push(Queued { pkt: pkt(k, 0, 1500, Ecn::NotEct), enqueued_at: now + step - d });
            q.dequeue(&mut cx);
            assert_eq!(q.qdelay, d);
            q.on_timer(&mut cx);
            out.push(q.drop_prob());
            now += step;
        }
        out
    }

    #[test]
    fn the_first_update_moves_by_the_auto_tuned_step() {
        // qdelay 35 ms from 0: p = 0.125 * (0.035 - 0.015) + 1.25 * 0.035 = 0.04625, scaled by
        // 1/2048 as the probability is 0.
        let p = probs_at(SimDuration::from_millis(35), 1);
        assert!((p[0] - 0.04625 / 2048.0).abs() < 1e-15, "{}", p[0]);
    }

    #[test]
    fn probability_rises_while_the_delay_stays_above_target_and_decays_when_empty() {
        let p = probs_at(SimDuration::from_millis(30), 400);
        assert!(p.windows(2).all(|w| w[1] >= w[0]));
        assert!(p[399] > 0.1, "{}", p[399]);
        // Below target the probability falls back.
        let p = probs_at(SimDuration::from_millis(1), 50);
        assert!(p.iter().all(|&x| x == 0.0));
    }

    #[test]
    fn burst_allowance_lets_the_first_150ms_through() {
        let mut q: Pie<()> = Pie::new(&Config::default());
        q.drop_prob = 1.0;
        q.qdelay_old = SimDuration::from_millis(100);
        let (mut rng, mut log) = (Rng::from_seed(1), Log::default());
        let mut cx = QdiscCtx::new(SimTime::ZERO, &mut rng, &mut log);
        for u in 0..10 {
            assert!(matches!(
                q.enqueue(&mut cx, Queued { pkt: pkt(u, 0, 1500, Ecn::NotEct), enqueued_at: SimTime::ZERO }),
                Verdict::Queued
            ));
        }
        q.burst_allowance = SimDuration::ZERO;
        let v = q.enqueue(&mut cx, Queued { pkt: pkt(99, 0, 1500, Ecn::NotEct), enqueued_at: SimTime::ZERO });
        assert!(matches!(v, Verdict::Dropped(_, DropReason::Aqm)));
        // With ECN on, a probability above the threshold still drops; at or below, marks.
        q.cfg.ecn = true;
        let v = q.enqueue(&mut cx, Queued { pkt: pkt(100, 0, 1500, Ecn::Ect0), enqueued_at: SimTime::ZERO });
        assert!(matches!(v, Verdict::Dropped(_, DropReason::Aqm)));
        q.drop_prob = 0.1;
        for u in 0..200 {
            let v = q.enqueue(
                &mut cx,
                Queued { pkt: pkt(200 + u, 0, 1500, Ecn::Ect0), enqueued_at: SimTime::ZERO },
            );
            assert!(matches!(v, Verdict::Queued), "an ECT packet at p = 0.1 is marked, not dropped");
        }
        // 200 draws at p = 0.1: 20 expected, sd 4.2; 5..40 is beyond 3.5 sd either side.
        assert!((5..=40).contains(&log.marks.len()), "{} marks of 200 at p = 0.1", log.marks.len());
    }

    #[test]
    fn bad_parameters_name_the_field() {
        for (cfg, field) in [
            (Config { target: Dur(SimDuration(0)), ..Config::default() }, "target"),
            (Config { tupdate: Dur(SimDuration(0)), ..Config::default() }, "tupdate"),
            (Config { alpha: -1.0, ..Config::default() }, "alpha"),
            (Config { beta: f64::NAN, ..Config::default() }, "beta"),
            (Config { ecn_threshold: 1.5, ..Config::default() }, "ecn_threshold"),
            (Config { packets: 0, ..Config::default() }, "packets"),
        ] {
            assert_eq!(cfg.validate().unwrap_err().field, field);
        }
    }
}
