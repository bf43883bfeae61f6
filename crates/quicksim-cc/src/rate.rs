//! Delivery-rate estimation (draft-cheng-iccrg-delivery-rate-estimation-02; Linux
//! `tcp_rate.c`, ns-3 `TcpRateLinux`), shared by every transport.
//!
//! A transport keeps one [`DeliveryRate`] per connection and stores the [`PacketRate`] that
//! [`DeliveryRate::on_sent`] returns with each sent packet (in its sent-packet map). When an ACK
//! arrives it calls [`DeliveryRate::on_acked`] (with one [`AckSampler`] per ACK) for every newly delivered packet (acked or
//! SACKed), [`DeliveryRate::on_lost`] for bytes declared lost, then [`DeliveryRate::sample`]
//! once: the [`RateSample`] goes to the controller in [`crate::AckSummary::rate`]. The
//! estimator only observes; it changes nothing a transport decides.

use quicksim_engine::{Rate, SimDuration, SimTime, PS_PER_S};
use serde::{Deserialize, Serialize};

use crate::RateSample;

/// What a packet remembers of the connection's delivery state when it was sent (the draft's
/// `P.delivered`, `P.delivered_time`, `P.first_sent_time`, `P.is_app_limited`, plus BBR's
/// `P.tx_in_flight` and `P.lost`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PacketRate {
    /// Bytes delivered before the packet was sent.
    pub delivered: u64,
    /// When `delivered` was last updated before the packet was sent.
    pub delivered_time: SimTime,
    /// Send time of the first packet of the flight the packet belongs to.
    pub first_sent_time: SimTime,
    /// Bytes declared lost before the packet was sent.
    pub lost: u64,
    /// Bytes in flight once the packet was sent (the packet included).
    pub tx_in_flight: u64,
    /// Sent while the connection was application-limited.
    pub is_app_limited: bool,
}

/// The sample being assembled from the packets one ACK delivers (the newest of them counts):
/// a local of the transport's ACK processing, so connections do not carry it between ACKs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckSampler(Option<(PacketRate, SimTime)>);

/// The connection's delivery state (the draft's `C.*`) and the sample of the current ACK.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeliveryRate {
    /// Bytes delivered so far (C.delivered).
    delivered: u64,
    /// When `delivered` was last updated (C.delivered_time).
    delivered_time: SimTime,
    /// Send time of the newest packet delivered so far (C.first_sent_time).
    first_sent_time: SimTime,
    /// Bytes declared lost so far (BBR's C.lost).
    lost: u64,
    /// Bytes lost at the previous sample, for `RateSample::newly_lost`.
    lost_at_sample: u64,
    /// The delivered count that ends the current application-limited phase; 0 when none
    /// (C.app_limited).
    app_limited_until: u64,
}

impl DeliveryRate {
    /// Bytes delivered so far.
    pub fn delivered(&self) -> u64 {
        self.delivered
    }

    /// A packet of `bytes` was sent at `now` with `in_flight_before` bytes already in flight
    /// (draft §3.2 `SendPacket`): its record for the sent-packet map.
    pub fn on_sent(&mut self, now: SimTime, in_flight_before: u64, bytes: u64) -> PacketRate {
        if in_flight_before == 0 {
            // A new flight starts: the intervals restart at this packet.
            self.first_sent_time = now;
            self.delivered_time = now;
        }
        PacketRate {
            delivered: self.delivered,
            delivered_time: self.delivered_time,
            first_sent_time: self.first_sent_time,
            lost: self.lost,
            tx_in_flight: in_flight_before + bytes,
            is_app_limited: self.app_limited_until != 0,
        }
    }

    /// The sender ran out of data with `in_flight` bytes outstanding (draft §3.4
    /// `CheckIfApplicationLimited`): samples until those are delivered are marked app-limited.
    pub fn on_app_limited(&mut self, in_flight: u64) {
        self.app_limited_until = (self.delivered + in_flight).max(1);
    }

    /// A packet sent at `sent` with record `p` was newly delivered (`bytes`) at `now` (draft
    /// §3.3 `UpdateRateSample`).
    pub fn on_acked(&mut self, s: &mut AckSampler, now: SimTime, sent: SimTime, p: &PacketRate, bytes: u64) {
        self.delivered += bytes;
        self.delivered_time = now;
        let newer = s.0.is_none_or(|(q, q_sent)| {
            p.delivered > q.delivered || (p.delivered == q.delivered && sent >= q_sent)
        });
        if newer {
            s.0 = Some((*p, sent));
            self.first_sent_time = sent;
        }
    }

    /// `bytes` were declared lost.
    pub fn on_lost(&mut self, bytes: u64) {
        self.lost += bytes;
    }

    /// The end of an ACK whose sample nobody reads (a controller without
    /// `wants_rate_samples`): the same state changes as [`Self::sample`] (the app-limited
    /// mark, the loss count at the sample), without computing the rate.
    pub fn skip_sample(&mut self) {
        self.end_ack();
    }

    /// What every ACK's end changes, sampled or not; returns the bytes newly lost since the
    /// last one.
    #[inline]
    fn end_ack(&mut self) -> u64 {
        if self.app_limited_until != 0 && self.delivered > self.app_limited_until {
            self.app_limited_until = 0;
        }
        let newly_lost = self.lost - self.lost_at_sample;
        self.lost_at_sample = self.lost;
        newly_lost
    }

    /// The sample of this ACK, after its `on_acked` calls (draft §3.3 `GenerateRateSample`).
    /// None if it delivered nothing, or (draft §3.3) its interval is shorter than `min_rtt`,
    /// which only an ACK compression or a stretched ACK can cause.
    pub fn sample(&mut self, s: AckSampler, min_rtt: SimDuration) -> Option<RateSample> {
        let newly_lost = self.end_ack();
        let (p, sent) = s.0?;
        let send_elapsed = sent - p.first_sent_time;
        let ack_elapsed = self.delivered_time - p.delivered_time;
        let interval = send_elapsed.max(ack_elapsed);
        if interval < min_rtt || interval.ps() == 0 {
            return None;
        }
        let delivered = self.delivered - p.delivered;
        let bps = (u128::from(delivered) * 8 * u128::from(PS_PER_S) / u128::from(interval.ps()))
            .min(u128::from(u64::MAX)) as u64;
        Some(RateSample {
            delivered,
            prior_delivered: p.delivered,
            delivered_time: p.delivered_time,
            first_sent_time: p.first_sent_time,
            is_app_limited: p.is_app_limited,
            interval,
            rate: Rate::bps(bps),
            tx_in_flight: p.tx_in_flight,
            lost: self.lost - p.lost,
            newly_lost,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> SimTime {
        SimTime::from_millis(v)
    }

    /// A window of 10 packets of 1000 B sent back to back at t = 0, acked one per ms from
    /// t = 100 ms: the first ACK's interval is the 100 ms RTT (1000 B / 100 ms = 80 kbit/s);
    /// the tenth's is 109 ms for 10 000 B (80 Mbit/s / 109 = 733 945 bit/s); a packet sent
    /// with nothing in flight starts a new flight: 1000 B over its own 100 ms, 80 kbit/s again.
    #[test]
    fn a_window_sent_at_once_is_measured_over_the_ack_interval() {
        let mut d = DeliveryRate::default();
        let mut ak = AckSampler::default();
        let recs: Vec<_> = (0..10).map(|i| d.on_sent(ms(0), i * 1000, 1000)).collect();
        assert_eq!(recs[9].tx_in_flight, 10_000);
        d.on_acked(&mut ak, ms(100), ms(0), &recs[0], 1000);
        let s = d.sample(std::mem::take(&mut ak), SimDuration::from_millis(100)).unwrap();
        assert_eq!((s.delivered, s.interval), (1000, SimDuration::from_millis(100)));
        assert_eq!(s.rate, Rate::bps(80_000));
        for (i, r) in recs.iter().enumerate().skip(1) {
            d.on_acked(&mut ak, ms(100 + i as u64), ms(0), r, 1000);
        }
        let s = d.sample(std::mem::take(&mut ak), SimDuration::from_millis(100)).unwrap();
        // The newest packet (recs[9]) was sent with delivered = 0 at delivered_time 0.
        assert_eq!((s.delivered, s.interval), (10_000, SimDuration::from_millis(109)));
        assert_eq!(s.rate.bits_per_s, 80_000_000 / 109);
        // Sent at 109 ms with nothing in flight: a new flight, acked at 209 ms.
        let r = d.on_sent(ms(109), 0, 1000);
        assert_eq!((r.delivered, r.delivered_time), (10_000, ms(109)));
        d.on_acked(&mut ak, ms(209), ms(109), &r, 1000);
        assert_eq!(
            d.sample(std::mem::take(&mut ak), SimDuration::from_millis(100)).unwrap().rate,
            Rate::bps(80_000)
        );
    }

    #[test]
    fn short_intervals_app_limited_marks_and_losses() {
        let mut d = DeliveryRate::default();
        let mut ak = AckSampler::default();
        d.on_app_limited(0);
        let a = d.on_sent(ms(0), 0, 1000);
        assert!(a.is_app_limited);
        d.on_lost(500);
        let b = d.on_sent(ms(1), 1000, 1000);
        assert_eq!(b.lost, 500);
        // Acked after 50 ms, shorter than the 60 ms min RTT: no sample.
        d.on_acked(&mut ak, ms(50), ms(0), &a, 1000);
        assert!(d.sample(std::mem::take(&mut ak), SimDuration::from_millis(60)).is_none());
        d.on_lost(700);
        d.on_acked(&mut ak, ms(70), ms(1), &b, 1000);
        let s = d.sample(std::mem::take(&mut ak), SimDuration::from_millis(60)).unwrap();
        // delivered > app_limited_until (1): the phase ended, but b was sent inside it.
        assert!(s.is_app_limited);
        assert_eq!((s.lost, s.newly_lost), (700, 700));
        let c = d.on_sent(ms(70), 0, 1000);
        assert!(!c.is_app_limited);
        assert!(
            d.sample(std::mem::take(&mut ak), SimDuration::ZERO).is_none(),
            "nothing delivered, no sample"
        );
    }
}
