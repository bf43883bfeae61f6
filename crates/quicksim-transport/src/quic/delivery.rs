//! Delivery-rate state of a connection whose controller reads rate samples
//! (`CongestionController::wants_rate_samples`: BBR, run-time controllers): the connection's
//! [`DeliveryRate`] and the [`PacketRate`] record of each packet in flight.
//!
//! The records are kept beside the sent-packet map rather than in each `SentPacket`, so that a
//! connection whose controller never reads a sample (NewReno, CUBIC) carries none of it: 48 B
//! less per packet sent, moved and stored. Packet numbers are dense and increasing, so the
//! records of a space are a ring indexed by `pn - base`, as the sent packets are.

use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

use quicksim_cc::{AckSampler, DeliveryRate, PacketRate};
use quicksim_engine::SimTime;

use super::packet::SpaceId;

/// The `PacketRate` records of one packet number space, by packet number from `base` (a number
/// without a record, an ACK-only packet, holds the default).
#[derive(Debug, Default, Serialize, Deserialize)]
struct RateLog {
    base: u64,
    recs: VecDeque<PacketRate>,
}

/// The connection's delivery-rate estimator and its per-packet records.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(super) struct Delivery {
    pub rate: DeliveryRate,
    logs: [RateLog; 3],
}

impl Delivery {
    /// In-flight packet `pn` of `bytes` was sent at `now` with `in_flight_before` bytes already
    /// in flight (draft-cheng §3.2); `app_limited`: the sender has nothing more to send.
    pub fn on_sent(
        &mut self,
        space: SpaceId,
        pn: u64,
        now: SimTime,
        in_flight_before: u64,
        bytes: u64,
        app_limited: bool,
    ) {
        let rec = self.rate.on_sent(now, in_flight_before, bytes);
        if app_limited {
            self.rate.on_app_limited(in_flight_before + bytes);
        }
        let log = &mut self.logs[space.index()];
        if log.recs.is_empty() {
            log.base = pn;
        }
        let idx = pn.checked_sub(log.base).expect("packet numbers increase") as usize;
        debug_assert!(idx >= log.recs.len(), "packet {pn} recorded twice");
        log.recs.resize(idx, PacketRate::default());
        log.recs.push_back(rec);
    }

    /// In-flight packet `pn`, sent at `sent`, of `bytes`, was acknowledged at `now`.
    pub fn on_acked(
        &mut self,
        s: &mut AckSampler,
        space: SpaceId,
        pn: u64,
        now: SimTime,
        sent: SimTime,
        bytes: u64,
    ) {
        let log = &self.logs[space.index()];
        let rec = pn
            .checked_sub(log.base)
            .and_then(|i| log.recs.get(usize::try_from(i).ok()?))
            .expect("an in-flight packet has a record");
        self.rate.on_acked(s, now, sent, rec, bytes);
    }

    /// Forgets the records below `first`, the lowest packet number still tracked in `space`
    /// (all of them if none is).
    pub fn forget_below(&mut self, space: SpaceId, first: Option<u64>) {
        let log = &mut self.logs[space.index()];
        match first {
            Some(first) => {
                while log.base < first && log.recs.pop_front().is_some() {
                    log.base += 1;
                }
            }
            None if log.recs.capacity() > 0 => log.recs = VecDeque::new(),
            None => log.recs.clear(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records are found by packet number across gaps, and forgotten from the front.
    #[test]
    fn records_by_packet_number() {
        let mut d = Delivery::default();
        let sp = SpaceId::Data;
        d.on_sent(sp, 5, SimTime(0), 0, 1000, false);
        d.on_sent(sp, 8, SimTime(1), 1000, 1000, false); // 6 and 7: ACK-only, no record
        assert_eq!(d.logs[2].recs.len(), 4);
        assert_eq!(d.logs[2].recs[3].tx_in_flight, 2000);
        let mut s = AckSampler::default();
        d.on_acked(&mut s, sp, 8, SimTime(10), SimTime(1), 1000);
        assert_eq!(d.rate.delivered(), 1000);
        d.forget_below(sp, Some(8));
        assert_eq!((d.logs[2].base, d.logs[2].recs.len()), (8, 1));
        d.forget_below(sp, None);
        assert_eq!(d.logs[2].recs.capacity(), 0);
        d.on_sent(sp, 9, SimTime(20), 0, 1000, false);
        assert_eq!((d.logs[2].base, d.logs[2].recs.len()), (9, 1));
    }
}
