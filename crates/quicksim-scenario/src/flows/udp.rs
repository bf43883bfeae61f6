//! UDP sources: constant-rate or interval datagrams (`kind = "udp"`) and ON/OFF sources
//! (`kind = "onoff"`, datagrams only during ON periods). No transport: the receiver counts what
//! arrives. Each source has its own event kinds (`Ev::UdpSend`, `Ev::OnOffToggle`).

use super::{Ctx, FlowSpec};
use crate::apps::{draw_size, draw_time};
use crate::event::Ev;
use crate::payload::Payload;
use crate::schema::{SizeDist, TimeDist};
use quicksim_engine::{Rate, Rng, SimTime};
use quicksim_net::{IPV4_HEADER, UDP_HEADER};

/// IP + UDP header bytes of every datagram.
pub(crate) const UDP_IP: u64 = (IPV4_HEADER + UDP_HEADER) as u64;

#[derive(Clone, Debug)]
pub struct UdpSpec {
    pub size: SizeDist,
    pub interval: Option<TimeDist>,
    pub rate: Option<Rate>,
    pub onoff: Option<(TimeDist, TimeDist)>,
    /// The ECN field every datagram carries.
    pub ecn: quicksim_net::Ecn,
}

pub(crate) struct UdpFlow {
    pub spec: UdpSpec,
    pub rng: Rng,
    pub on: bool,
    /// Counts ON periods and stops: a send event of an earlier generation is void.
    pub gen: u32,
}

impl UdpFlow {
    pub(crate) fn start(&mut self, cx: &mut Ctx, now: SimTime, f: u32) {
        self.on = true;
        // ON/OFF sources start with an ON period.
        if let Some((on, _)) = &self.spec.onoff {
            let d = draw_time(on, &mut self.rng);
            cx.q.push(now + d, Ev::OnOffToggle(f));
        }
        cx.q.push(now, Ev::UdpSend(f, self.gen));
    }

    pub(crate) fn stop(&mut self) {
        self.on = false;
        self.gen += 1;
    }

    /// The next datagram of generation `g`.
    pub(crate) fn send(&mut self, cx: &mut Ctx, now: SimTime, f: u32, spec: &FlowSpec, g: u32) {
        if !self.on || self.gen != g || now >= spec.stop {
            return;
        }
        let size = draw_size(&self.spec.size, &mut self.rng);
        let gap = match (&self.spec.rate, &self.spec.interval) {
            (Some(r), _) => r.tx_time(size),
            (None, Some(d)) => draw_time(d, &mut self.rng),
            (None, None) => unreachable!("validated: udp needs rate or interval"),
        };
        cx.q.push(now + gap, Ev::UdpSend(f, g));
        cx.out.rec.app_sent(now, f, size);
        cx.send_packet(now, spec.src, spec.dst, f, size + UDP_IP, Payload::UDP, self.spec.ecn);
    }

    /// The end of an ON or OFF period.
    pub(crate) fn toggle(&mut self, cx: &mut Ctx, now: SimTime, f: u32, spec: &FlowSpec) {
        if now >= spec.stop {
            return;
        }
        let (on, off) = self.spec.onoff.clone().expect("onoff flow");
        self.on = !self.on;
        self.gen += 1;
        let d = draw_time(if self.on { &on } else { &off }, &mut self.rng);
        cx.q.push(now + d, Ev::OnOffToggle(f));
        if self.on {
            cx.q.push(now, Ev::UdpSend(f, self.gen));
        }
    }
}
