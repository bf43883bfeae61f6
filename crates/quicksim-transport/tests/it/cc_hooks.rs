//! The congestion-controller calls QUIC's recovery makes, seen by a run-time controller that
//! records them (and decides as NewReno): one `on_ack_end` per ACK that acknowledged in-flight
//! packets, causes that match the counters, spurious losses reported, delivery-rate samples
//! bounded by the bottleneck; and such a connection is never encodable.

use super::harness::Sim;
use super::{ms, pair_no_hs, secs};
use quicksim_cc::algos::newreno::{self, NewReno};
use quicksim_cc::{
    AckEvent, AckSummary, Algorithm, CcCtx, CcMetrics, CcSpec, CongestionCause, CongestionController,
    CongestionEvent, InitCtx,
};
use quicksim_engine::{Rate, SimDuration};
use quicksim_transport::QuicConfig;
use std::sync::{Arc, Mutex};

#[derive(Debug, Default, Clone)]
struct Calls {
    acks: u64,
    acked_bytes: u64,
    ack_ends: u64,
    ack_end_bytes: u64,
    ack_end_packets: u64,
    losses: u64,
    persistent: u64,
    other_causes: u64,
    spurious: u64,
    rate_samples: u64,
    max_rate_bps: u64,
    sampled_lost: u64,
}

struct Recording {
    inner: NewReno,
    calls: Arc<Mutex<Calls>>,
}

impl CongestionController for Recording {
    fn on_ack(&mut self, cx: &mut CcCtx, ack: &AckEvent) {
        let mut c = self.calls.lock().unwrap();
        c.acks += 1;
        c.acked_bytes += ack.bytes;
        self.inner.on_ack(cx, ack);
    }
    fn on_ack_end(&mut self, cx: &mut CcCtx, ack: &AckSummary) {
        let mut c = self.calls.lock().unwrap();
        c.ack_ends += 1;
        c.ack_end_bytes += ack.acked_bytes;
        c.ack_end_packets += ack.acked_packets;
        assert!(ack.acked_packets > 0);
        if let Some(r) = ack.rate {
            c.rate_samples += 1;
            c.max_rate_bps = c.max_rate_bps.max(r.rate.bits_per_s);
            c.sampled_lost += r.newly_lost;
            assert!(r.delivered > 0 && r.interval >= cx.rtt.min(), "{r:?}");
        }
        self.inner.on_ack_end(cx, ack);
    }
    fn on_congestion_event(&mut self, cx: &mut CcCtx, ev: &CongestionEvent) {
        let mut c = self.calls.lock().unwrap();
        match ev.cause {
            CongestionCause::Loss => c.losses += 1,
            CongestionCause::PersistentCongestion => c.persistent += 1,
            CongestionCause::Ecn | CongestionCause::Rto => c.other_causes += 1,
        }
        self.inner.on_congestion_event(cx, ev);
    }
    fn on_spurious_congestion(&mut self, _cx: &mut CcCtx) {
        self.calls.lock().unwrap().spurious += 1;
    }
    fn cwnd_bytes(&self) -> u64 {
        self.inner.cwnd_bytes()
    }
    fn metrics(&self) -> CcMetrics {
        self.inner.metrics()
    }
}

#[test]
fn recovery_reports_every_hook_consistently() {
    let calls = Arc::new(Mutex::new(Calls::default()));
    let shared = Arc::clone(&calls);
    let factory = Arc::new(move |cx: &InitCtx| {
        let inner = NewReno::new(&newreno::Config::default(), cx);
        Box::new(Recording { inner, calls: Arc::clone(&shared) }) as Box<dyn CongestionController>
    });
    let cc = CcSpec::Factory { name: "recording".into(), factory };
    let (c, s) = pair_no_hs(QuicConfig { cc, ..Default::default() }, QuicConfig::default());
    let mut sim = Sim::new_with_drop(
        c,
        s,
        ms(10),
        Some(Rate::mbps(20)),
        Box::new(|dir, idx, _| dir == 0 && idx % 97 == 11),
    );
    // Every 23rd data packet is 4 ms late: overtaken by ~10 packets, it is declared lost
    // (packet threshold 3) before it arrives and is acknowledged (a spurious loss).
    sim.jitter = Box::new(|dir, idx| if dir == 0 && idx % 23 == 5 { ms(4) } else { SimDuration::ZERO });
    sim.write(0, 0, 2_000_000);
    let done = sim.run_transfer(2_000_000, secs(30)).expect("completes");
    let st = sim.conns[0].stats();
    let c = calls.lock().unwrap().clone();
    println!("{c:?}\n{st:?}");
    assert_eq!(c.acks, st.packets_acked);
    assert!(c.ack_ends > 0 && c.ack_ends <= st.ack_frames_received);
    assert_eq!((c.ack_end_packets, c.ack_end_bytes), (c.acks, c.acked_bytes));
    assert_eq!(c.losses + c.persistent, st.congestion_events);
    assert_eq!(c.persistent, st.persistent_congestion_events);
    assert_eq!(c.other_causes, 0, "QUIC reports neither ECN nor RTO");
    assert!(st.spurious_losses > 0, "the reordering made no spurious loss");
    // Delivery-rate samples (draft-cheng): most ACKs give one; none exceeds the 20 Mbit/s
    // bottleneck (QUIC bytes are fewer than the link's IP bytes, so even less is possible, but
    // a sample of the whole window may include packets queued before the interval: 5 %
    // margin), and the largest is at least the transfer's mean rate (the loss pattern keeps the
    // window, and so the rate, well below the bottleneck: Mathis ≈ 6 Mbit/s). Lost bytes are reported
    // once each: at most one full packet per lost packet.
    assert!(c.rate_samples * 2 > c.ack_ends, "{c:?}");
    let mean_bps = c.acked_bytes as f64 * 8.0 / done.as_secs_f64();
    assert!(c.max_rate_bps <= 21_000_000 && c.max_rate_bps as f64 >= mean_bps, "{c:?} mean {mean_bps}");
    let mps = QuicConfig::default().max_packet_size;
    assert!(c.sampled_lost > 0 && c.sampled_lost <= st.packets_lost * mps, "{c:?}");
    assert!(c.spurious > 0 && c.spurious <= st.spurious_losses);
    // The run-time controller cannot be encoded: the connection never reports itself quiet.
    assert!(!sim.conns[0].can_park() && !sim.conns[0].is_quiet());
    assert!(sim.conns[1].can_park() && sim.conns[1].is_quiet());
}
