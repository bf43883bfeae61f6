//! Client ports of the capture's flows: no two flows between the same ends share a 4-tuple in
//! one capture, so Wireshark and tshark see one conversation per flow and analyse each alone.
//!
//! The first 16 384 flows (in flow order) keep the port they always had, 49152 + flow index: the
//! captures of scenarios with fewer flows stay byte for byte what they were, and those ports are
//! all different. Each later flow gets, at its first captured frame, the lowest port of the IANA
//! dynamic range (RFC 6335 §6) that no other flow of its family (same client host, server host,
//! protocol and server port) has: the first 16 384 hold theirs from the start (also before
//! they start), the later ones from their first frame.
//!
//! A port is never given twice in a family, not even after its flow is over, unlike a host's
//! ephemeral ports: Wireshark merges every reuse of a UDP 4-tuple, and it separates two TCP
//! connections on one 4-tuple only if the second SYN's sequence number differs or the first
//! closed with FIN or RST (packet-tcp.c, tshark 4.0); the model's TCP starts every connection at
//! sequence number 0 and ends none with FIN, so a reused TCP 4-tuple merges too.
//! When a family has used all 16 384 ports, a further flow takes 49152 + index mod 16 384 (a
//! port another flow of the family has) and is counted: the capture's summary block then carries
//! a warning, which `quicksim run` prints.

/// Lowest client port (the IANA dynamic range, RFC 6335 §6).
pub(super) const BASE: u32 = 49_152;
/// Ports in the range.
pub(super) const RANGE: u32 = 65_536 - BASE;

/// A captured flow's client port and family.
#[derive(Clone, Copy)]
pub(super) struct Hold {
    /// The client port; 0 until given (only flows after the first 16 384 wait for it).
    pub port: u16,
    /// Index of the flow's family (same client, server, protocol and server port).
    pub family: u32,
}

/// The port a flow gets at its start: `None` if it waits for its first frame.
pub(super) fn fixed(flow: usize) -> Option<u16> {
    (flow < RANGE as usize).then(|| (BASE + flow as u32) as u16)
}

/// A family's flows and the ports they hold, for the flows after the first 16 384. Ports are
/// never given back, so the lowest free one only moves up: each is found once, by a cursor.
#[derive(Default)]
pub(super) struct Family {
    /// The family's flows, until its first late flow asks for a port.
    members: Vec<u32>,
    /// Per port of the range: held by a flow of the family (built at the first late flow).
    taken: Vec<bool>,
    /// Every port below this one is taken.
    next: usize,
}

impl Family {
    /// Flow `flow` belongs to the family (at the capture's start, in flow order).
    pub fn add(&mut self, flow: u32) {
        self.members.push(flow);
    }

    /// The lowest port of the range that no flow of the family has, now held for good; `None`
    /// when all are taken.
    pub fn take_lowest(&mut self, holds: &[Option<Hold>]) -> Option<u16> {
        if self.taken.is_empty() {
            // The first late flow: only the first 16 384 hold a port yet.
            self.taken = vec![false; RANGE as usize];
            for k in std::mem::take(&mut self.members) {
                if let Some(h) = holds[k as usize].as_ref().filter(|h| h.port != 0) {
                    self.taken[(u32::from(h.port) - BASE) as usize] = true;
                }
            }
        }
        while self.taken.get(self.next) == Some(&true) {
            self.next += 1;
        }
        let slot = self.taken.get_mut(self.next)?;
        *slot = true;
        Some((BASE + self.next as u32) as u16)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held(port: u16, family: u32) -> Option<Hold> {
        Some(Hold { port, family })
    }

    #[test]
    fn the_first_16384_flows_keep_49152_plus_index() {
        assert_eq!(fixed(0), Some(49_152));
        assert_eq!(fixed(16_383), Some(65_535));
        assert_eq!(fixed(16_384), None);
    }

    #[test]
    fn a_late_flow_gets_the_lowest_port_its_family_has_not_used() {
        let holds = vec![held(49_152, 0), held(49_153, 1), held(49_155, 0), held(0, 0)];
        let (mut f0, mut f1) = (Family::default(), Family::default());
        for k in [0, 2, 3] {
            f0.add(k);
        }
        f1.add(1);
        assert_eq!(f0.take_lowest(&holds), Some(49_153));
        // Held for good: the next late flow gets the next free one, past 49 155.
        assert_eq!(f0.take_lowest(&holds), Some(49_154));
        assert_eq!(f0.take_lowest(&holds), Some(49_156));
        assert_eq!(f1.take_lowest(&holds), Some(49_152));
        // Every port taken: none.
        let all: Vec<Option<Hold>> =
            (0..RANGE).map(|i| held((BASE + i) as u16, 0)).chain([held(0, 0)]).collect();
        let mut full = Family::default();
        for k in 0..=RANGE {
            full.add(k);
        }
        assert_eq!(full.take_lowest(&all), None);
        assert_eq!(full.take_lowest(&all), None);
    }
}
