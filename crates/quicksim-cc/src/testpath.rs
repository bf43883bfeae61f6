//! A one-flow bottleneck for controller unit tests (no network crate): packets of `mds` bytes
//! leave the sender when the window and the controller's pacing rate allow, queue at a FIFO
//! of `buffer` bytes served at `rate`, and are acknowledged one by one `base_rtt` after they
//! leave the queue; a packet the queue cannot hold (or every `loss_every`-th) is reported lost
//! when the ACK of the packet behind it would arrive. Delivery-rate samples come from
//! [`crate::rate`], as a transport makes them. And, for exact transitions, [`rate_ack`]: one
//! synthetic ACK carrying the delivery-rate sample a test chooses.

use std::collections::VecDeque;

use quicksim_engine::{Rate, SimDuration, SimTime};

use crate::rate::{AckSampler, DeliveryRate, PacketRate};
use crate::{
    AckEvent, AckSummary, CcCtx, CongestionCause, CongestionController, CongestionEvent, RateSample,
    RttEstimator, SentPacket, WindowRules,
};

/// An RTT estimator whose only sample (min, latest, smoothed) is `ms`.
pub fn fixed_rtt(ms: u64) -> RttEstimator {
    let mut rtt = RttEstimator::new(SimDuration::from_millis(333));
    rtt.update(SimDuration::from_millis(ms), SimDuration::ZERO, SimDuration::ZERO, true);
    rtt
}

/// One ACK of one `mds`-byte packet at `now` whose rate sample measures `bw_bps` and starts a
/// new round (the packet was sent when `delivered` bytes were delivered, all the controller has
/// seen), with `inflight` bytes left in flight, `lost` bytes newly declared lost; sent 40 ms
/// before.
pub fn rate_ack(
    cc: &mut impl CongestionController,
    mds: u64,
    delivered: u64,
    rtt: &RttEstimator,
    now: SimTime,
    (bw_bps, inflight, lost): (u64, u64, u64),
) {
    let rs = RateSample {
        delivered: mds,
        prior_delivered: delivered,
        delivered_time: now,
        first_sent_time: now,
        is_app_limited: false,
        interval: SimDuration::from_millis(40),
        rate: Rate::bps(bw_bps),
        tx_in_flight: inflight,
        lost,
        newly_lost: lost,
    };
    let summary = AckSummary {
        acked_bytes: mds,
        acked_packets: 1,
        largest_acked_sent_time: now - SimDuration::from_millis(40),
        app_limited: false,
        rate: Some(rs),
        ce_packets: 0,
    };
    let mut cx = CcCtx { now, mds, rtt, bytes_in_flight: inflight, window: &WindowRules::RFC5681 };
    cc.on_ack_end(&mut cx, &summary);
}

pub struct Path {
    pub rate: Rate,
    pub base_rtt: SimDuration,
    pub mds: u64,
    pub buffer: u64,
    /// Drop every n-th packet (0: none).
    pub loss_every: u64,
}

struct Flight {
    sent: SimTime,
    at: SimTime,
    rec: PacketRate,
    lost: bool,
}

impl Path {
    /// Runs `cc` for `duration`, calling `observe(now, cc, in_flight)` after every ACK.
    pub fn run<C: CongestionController>(
        &self,
        cc: &mut C,
        duration: SimDuration,
        mut observe: impl FnMut(SimTime, &C, u64),
    ) {
        let rules = WindowRules::RFC5681;
        let mut rtt = RttEstimator::new(SimDuration::from_millis(333));
        let mut dr = DeliveryRate::default();
        let mut flights: VecDeque<Flight> = VecDeque::new();
        let (mut now, end) = (SimTime::ZERO, SimTime::ZERO + duration);
        let (mut in_flight, mut link_free, mut next_send, mut n_sent) =
            (0u64, SimTime::ZERO, SimTime::ZERO, 0u64);
        let mds = self.mds;
        loop {
            let can_send = in_flight + mds <= cc.cwnd_bytes();
            let t_send = if can_send { Some(next_send.max(now)) } else { None };
            let t_ack = flights.front().map(|f| f.at);
            let (t, send) = match (t_send, t_ack) {
                (Some(s), Some(a)) if s < a => (s, true),
                (Some(s), None) => (s, true),
                (_, Some(a)) => (a, false),
                (None, None) => break,
            };
            if t >= end {
                break;
            }
            now = t;
            if send {
                let rec = dr.on_sent(now, in_flight, mds);
                in_flight += mds;
                n_sent += 1;
                let mut cx = CcCtx { now, mds, rtt: &rtt, bytes_in_flight: in_flight, window: &rules };
                cc.on_packet_sent(&mut cx, &SentPacket { bytes: mds, app_limited: false });
                if let Some(r) = cc.pacing_rate(&cx) {
                    next_send = next_send.max(now) + r.tx_time(mds);
                }
                let start = link_free.max(now);
                let queued = self.rate.bytes_in(start - now);
                let dropped =
                    queued + mds > self.buffer || (self.loss_every > 0 && n_sent % self.loss_every == 0);
                if dropped {
                    let at = link_free.max(now) + self.rate.tx_time(mds) + self.base_rtt;
                    flights.push_back(Flight { sent: now, at, rec, lost: true });
                } else {
                    link_free = start + self.rate.tx_time(mds);
                    flights.push_back(Flight { sent: now, at: link_free + self.base_rtt, rec, lost: false });
                }
                continue;
            }
            let f = flights.pop_front().expect("an ACK is due");
            in_flight -= mds;
            if f.lost {
                let mut cx = CcCtx { now, mds, rtt: &rtt, bytes_in_flight: in_flight, window: &rules };
                dr.on_lost(mds);
                let ev = CongestionEvent { cause: CongestionCause::Loss, sent_time: f.sent, lost_bytes: mds };
                cc.on_congestion_event(&mut cx, &ev);
                continue;
            }
            rtt.update(now - f.sent, SimDuration::ZERO, SimDuration::ZERO, true);
            let mut cx = CcCtx { now, mds, rtt: &rtt, bytes_in_flight: in_flight, window: &rules };
            cc.on_ack(&mut cx, &AckEvent { sent_time: f.sent, bytes: mds, app_limited: false });
            let mut ak = AckSampler::default();
            dr.on_acked(&mut ak, now, f.sent, &f.rec, mds);
            let rate = dr.sample(ak, rtt.min());
            let summary = AckSummary {
                acked_bytes: mds,
                acked_packets: 1,
                largest_acked_sent_time: f.sent,
                app_limited: false,
                rate,
                ce_packets: 0,
            };
            cc.on_ack_end(&mut cx, &summary);
            observe(now, cc, in_flight);
        }
    }
}
