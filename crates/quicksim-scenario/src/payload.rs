//! What an IP packet carries through the network: a UDP datagram, or a transport packet held in
//! the world's packet pools at a slot. The network sees only this word ([`Payload`]); the
//! transport packet itself stays put in its pool until it is delivered or dropped.

use quicksim_transport::quic::QuicPacket;
use quicksim_transport::tcp::TcpSegment;
use std::fmt;

/// The transport packet inside an IP packet, for sinks that write packet contents (a capture:
/// `output::Sink::link_frame`). Borrowed from the pool it travels in.
#[derive(Clone, Copy, Debug)]
pub enum Contents<'a> {
    /// A datagram of a UDP or ON/OFF source (its payload is not modelled).
    Udp,
    Quic(&'a QuicPacket),
    Tcp(&'a TcpSegment),
    /// A UDP payload as a real stack wrote it (quinn-proto's QUIC datagrams: real, protected
    /// bytes).
    Datagram(&'a [u8]),
    /// A transport without a wire encoding: only its size is known.
    Opaque,
    /// A whole IPv4 packet as a real program sent it (real-time runs: `world::realtime`), its
    /// header included.
    Ip(&'a [u8]),
}

/// A UDP datagram of a UDP or ON/OFF source, or a transport packet: the pool it is in (the
/// transport's tag, `flows::transports!`), its slot there, and its direction (`to_server` = the
/// flow's forward, data direction).
///
/// One 64-bit word rather than an enum: an enum's tag, flag and slot are written as separate
/// 1-, 1- and 4-byte stores and copied as 8- or 16-byte words when the packet moves on (into
/// the channel, the event queue), and such a load cannot be forwarded from the narrower
/// stores: a stall at every hop. Bit 0: direction; bits 1-7: transport tag; bits 8-39: slot.
pub struct Payload(u64);

impl Payload {
    pub(crate) const UDP: Payload = Payload(u64::MAX);

    /// The tag of a real IP packet (`Payload::raw`): above every transport's (`transport`
    /// asserts tag < 0x7f), so the registry's pools and this one never share a tag.
    pub(crate) const RAW_TAG: u8 = 0x7f;

    /// A real IP packet held in the raw pool (`flows::Pools::raw`) at `slot`: a real-time run's
    /// packet from a program. Virtual-time runs never make one.
    #[inline]
    pub(crate) fn raw(forward: bool, slot: u32) -> Payload {
        Payload((slot as u64) << 8 | (Self::RAW_TAG as u64) << 1 | forward as u64)
    }

    #[inline]
    pub(crate) fn transport(tag: u8, to_server: bool, slot: u32) -> Payload {
        debug_assert!(tag < 0x7f);
        Payload((slot as u64) << 8 | (tag as u64) << 1 | to_server as u64)
    }

    /// `(tag, to_server, slot)` of a transport packet, None for UDP.
    #[inline]
    pub(crate) fn as_transport(&self) -> Option<(u8, bool, u32)> {
        (self.0 != u64::MAX).then_some(((self.0 >> 1 & 0x7f) as u8, self.0 & 1 != 0, (self.0 >> 8) as u32))
    }

    /// True for packets in the flow's forward direction (source to destination).
    #[inline]
    pub fn forward(&self) -> bool {
        self.as_transport().is_none_or(|(_, to_server, _)| to_server)
    }
}

impl fmt::Debug for Payload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.as_transport() {
            None => write!(f, "Udp"),
            Some((tag, to_server, slot)) => write!(f, "Transport({tag}, {to_server}, {slot})"),
        }
    }
}

/// The transports' packet pools as the network's observer sees them: it frees the slot of a
/// dropped packet by the transport tag in its payload (`flows::Pools` implements it).
pub(crate) trait PoolSet {
    fn release(&mut self, tag: u8, slot: u32);
    /// The transport packet of a packet in flight (its payload word).
    fn contents(&self, p: &Payload) -> Contents<'_>;
}

/// The packets of one transport travelling through the network. Events carry a slot number
/// instead of the packet: a `QuicPacket` keeps its frames inline (no allocation per packet) and
/// is large, and every event is moved several times between the queue, the network and the
/// handlers, so small events cost less than big ones. A slot is freed when its packet is
/// delivered or dropped; its value stays until the slot is reused.
pub(crate) struct PacketPool<T> {
    pub(crate) slots: Vec<T>,
    free: Vec<u32>,
}

impl<T> Default for PacketPool<T> {
    fn default() -> Self {
        PacketPool { slots: Vec::new(), free: Vec::new() }
    }
}

impl<T> PacketPool<T> {
    #[inline]
    pub(crate) fn put(&mut self, p: T) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = p;
                i
            }
            None => {
                self.slots.push(p);
                (self.slots.len() - 1) as u32
            }
        }
    }

    /// A freed slot to write the next packet over (`Endpoint::poll_transmit_into`), if there
    /// is one; it must be `release`d again if nothing is written. Taking it and giving it back
    /// leaves the pool as it was, so slots are assigned exactly as `put` assigns them.
    #[inline]
    pub(crate) fn vacant(&mut self) -> Option<u32> {
        self.free.pop()
    }

    #[inline]
    pub(crate) fn release(&mut self, slot: u32) {
        self.free.push(slot);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_payload_gives_back_what_it_was_made_of() {
        for (tag, dir, slot) in [(0u8, true, 0u32), (1, false, 7), (0x7e, true, u32::MAX)] {
            let p = Payload::transport(tag, dir, slot);
            assert_eq!(p.as_transport(), Some((tag, dir, slot)));
            assert_eq!(p.forward(), dir);
        }
        assert_eq!(Payload::UDP.as_transport(), None);
        assert_eq!(Payload::raw(true, 5).as_transport(), Some((Payload::RAW_TAG, true, 5)));
        assert_eq!(Payload::raw(false, u32::MAX).as_transport(), Some((Payload::RAW_TAG, false, u32::MAX)));
        assert!(Payload::UDP.forward());
    }
}
