//! Accurate ECN feedback for TCP, RFC 9768 (published from draft-ietf-tcpm-accurate-ecn-34;
//! Linux's implementation cites -28, whose rules used here are the same): negotiation with the
//! AE, CWR and ECE flags in the SYN and SYN-ACK (§3.1, Tables 2 and 3), the 3-bit ACE field
//! that carries the receiver's count of CE-marked packets (r.cep, initially 5, §3.2.2), and the
//! sender's count s.cep with its wrap-around inference (§3.2.2.5 and Appendix A.2.1's safety
//! rule for lost ACKs).
//!
//! Left out: the AccECN TCP option (byte counters of ECT(0), ECT(1) and CE, §3.2.3); the ACE
//! field alone gives packet counts, which is what DCTCP and Prague here use. The handshake's
//! fallback on lost or bleached SYNs (§3.2.3.2.2, §3.2.2.3) and the mangling checks of the IP-ECN
//! field are not modelled either: a simulated path does not bleach.

use serde::{Deserialize, Serialize};

use crate::endpoint::EcnCodepoint;

/// The ECN feedback an end offers (TcpConfig `ecn`, `accurate_ecn`, and the controller).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EcnMode {
    Off,
    /// RFC 3168: ECE latched until CWR.
    Classic,
    /// RFC 9768, falling back to RFC 3168 when the peer offers only that.
    Accurate,
}

/// What two ends agreed in the handshake.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Agreed {
    Off,
    Classic,
    Accurate,
}

/// The three header bits (AE, CWR, ECE) as one number, AE the most significant (§3.2.2: the
/// ACE field; in a SYN and SYN-ACK the same bits negotiate).
pub type Ace = u8;
pub const AE_BIT: Ace = 0b100;
pub const CWR_BIT: Ace = 0b010;
pub const ECE_BIT: Ace = 0b001;

/// The flags of a SYN (§3.1.1 Table 2, first column): AccECN (1,1,1), RFC 3168 (0,1,1).
pub fn syn_bits(own: EcnMode) -> Ace {
    match own {
        EcnMode::Off => 0,
        EcnMode::Classic => CWR_BIT | ECE_BIT,
        EcnMode::Accurate => AE_BIT | CWR_BIT | ECE_BIT,
    }
}

/// A server's agreement and SYN-ACK flags for a SYN with flags `syn` that arrived with IP-ECN
/// `ip` (§3.1.1 Table 2). An AccECN server answers an AccECN SYN with the SYN's IP-ECN field
/// encoded: Not-ECT (0,1,0), ECT(1) (0,1,1), ECT(0) (1,0,0), CE (1,1,0) (§3.1.1 Table 2); an
/// RFC 3168 SYN with (0,0,1). An RFC 3168 server ignores AE (it was the historic NS bit).
/// Reserved SYN combinations (AE or one of CWR/ECE alone) are taken as no ECN.
pub fn server_negotiate(own: EcnMode, syn: Ace, ip: EcnCodepoint) -> (Agreed, Ace) {
    let classic_syn = syn & (CWR_BIT | ECE_BIT) == CWR_BIT | ECE_BIT;
    match own {
        EcnMode::Accurate if syn == AE_BIT | CWR_BIT | ECE_BIT => (Agreed::Accurate, handshake_ace(ip)),
        EcnMode::Accurate | EcnMode::Classic if classic_syn => (Agreed::Classic, ECE_BIT),
        _ => (Agreed::Off, 0),
    }
}

/// A client's agreement from the SYN-ACK's flags (§3.1.1 Table 3). An AccECN client: (0,0,0)
/// no ECN, (0,0,1) RFC 3168, (1,0,1) RFC 3168 (an RFC 3540 nonce server, historic), any other
/// AccECN. An RFC 3168 client: exactly ECE (AE ignored).
pub fn client_negotiate(own: EcnMode, synack: Ace) -> Agreed {
    match own {
        EcnMode::Off => Agreed::Off,
        EcnMode::Classic if synack & (CWR_BIT | ECE_BIT) == ECE_BIT => Agreed::Classic,
        EcnMode::Classic => Agreed::Off,
        EcnMode::Accurate => match synack {
            0 => Agreed::Off,
            ECE_BIT => Agreed::Classic,
            x if x == AE_BIT | ECE_BIT => Agreed::Classic,
            _ => Agreed::Accurate,
        },
    }
}

/// The handshake encoding of an IP-ECN field (§3.1.1 Table 2 for the SYN-ACK; §3.2.2.1
/// Table 4 for the ACE of the client's first ACK, which echoes the SYN-ACK's field the same way).
pub fn handshake_ace(ip: EcnCodepoint) -> Ace {
    match ip {
        EcnCodepoint::NotEct => CWR_BIT,
        EcnCodepoint::Ect1 => CWR_BIT | ECE_BIT,
        EcnCodepoint::Ect0 => AE_BIT,
        EcnCodepoint::Ce => AE_BIT | CWR_BIT,
    }
}

/// The ACE field's modulus (§3.2.2.5, DIVACE).
const DIVACE: u64 = 8;
/// Initial value of r.cep and s.cep (§3.2.2.2: 5, so that a zeroed ACE field is detectable).
pub const CEP_INIT: u64 = 5;

/// One connection's AccECN state, both halves (present only once AccECN is agreed).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccEcn {
    /// Receiver: CE-marked packets received (r.cep).
    pub r_cep: u64,
    /// Receiver: the last data packet was CE-marked (for change-triggered ACKs, §3.2.2.5.1).
    pub last_ce: bool,
    /// The client's first ACK-bearing segment echoes the SYN-ACK's IP-ECN field instead of
    /// r.cep; the server's SYN-ACK carries `synack` (its echo of the SYN's field).
    pub handshake_ack: Option<Ace>,
    pub synack: Ace,
    /// Sender: CE-marked packets the peer reported (s.cep).
    pub s_cep: u64,
    /// Sender: the ACE field of the ACK being processed (set by the connection, taken by the
    /// sender once it knows how many segments the ACK delivered).
    pub ace_in: Option<Ace>,
    /// Sender: marks inferred and not yet passed to a scalable controller
    /// (`AckSummary::ce_packets`), or, for a classic one, not yet answered as RFC 3168 answers
    /// an ECE (the connection does, once per window).
    pub ce_pending: u64,
    /// Sender: the controller counts marks itself (`EcnResponse::Scalable`).
    pub scalable: bool,
    /// Sender: new data carries ECT(1) (an L4S controller), else ECT(0).
    pub ect1: bool,
}

impl Default for AccEcn {
    fn default() -> Self {
        AccEcn {
            r_cep: CEP_INIT,
            last_ce: false,
            handshake_ack: None,
            synack: 0,
            s_cep: CEP_INIT,
            ace_in: None,
            ce_pending: 0,
            scalable: false,
            ect1: false,
        }
    }
}

impl AccEcn {
    /// Receiver: a packet with IP-ECN field `ip` arrived; `data`: it carries payload. Returns
    /// true if an ACK should go at once: a data packet whose CE state differs from the previous
    /// one's (§3.2.2.5.1 change-triggered ACK), so each run of marks is reported promptly.
    pub fn on_received(&mut self, ip: EcnCodepoint, data: bool) -> bool {
        let ce = ip == EcnCodepoint::Ce;
        if ce {
            self.r_cep += 1;
        }
        if !data {
            return false;
        }
        let changed = ce != self.last_ce;
        self.last_ce = ce;
        changed
    }

    /// The ACE field r.cep mod 8 as it stands (without the handshake's encoding).
    pub fn ace_now(&self) -> Ace {
        (self.r_cep % DIVACE) as Ace
    }

    /// The ACE field of the next ACK-bearing segment: r.cep mod 8 (§3.2.2.2), or the handshake
    /// encoding on the client's first one (§3.2.2.1).
    pub fn ace_out(&mut self) -> Ace {
        self.handshake_ack.take().unwrap_or((self.r_cep % DIVACE) as Ace)
    }

    /// Sender: an ACK with ACE field `ace` that newly delivered `d_pkts` segments. Returns the
    /// CE marks it reports (d.cep) and advances s.cep. §3.2.2.5: d.cep = (ACE − s.cep) mod 8;
    /// Appendix A.2.1's safety rule: when the ACK delivered more segments than d.cep, the count
    /// may have wrapped (ACKs lost), and the sender assumes the largest d.cep ≤ d_pkts with the
    /// same residue, d.cep + 8·⌊(d_pkts − d.cep)/8⌋ (every ACK of a run of 8 lost: all marked).
    pub fn on_ace(&mut self, ace: Ace, d_pkts: u64) -> u64 {
        let d = (u64::from(ace) + DIVACE - self.s_cep % DIVACE) % DIVACE;
        let d = if d_pkts > d { d + DIVACE * ((d_pkts - d) / DIVACE) } else { d };
        self.s_cep += d;
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use EcnCodepoint::*;

    /// §3.1.1 Tables 2 and 3: every pairing of the ends' modes.
    #[test]
    fn negotiation_table() {
        let modes = [EcnMode::Off, EcnMode::Classic, EcnMode::Accurate];
        // (client, server) -> agreed at both ends.
        let want = |c, s| match (c, s) {
            (EcnMode::Off, _) | (_, EcnMode::Off) => Agreed::Off,
            (EcnMode::Accurate, EcnMode::Accurate) => Agreed::Accurate,
            _ => Agreed::Classic,
        };
        for c in modes {
            for s in modes {
                let (server, synack) = server_negotiate(s, syn_bits(c), NotEct);
                let client = client_negotiate(c, synack);
                assert_eq!((client, server), (want(c, s), want(c, s)), "client {c:?}, server {s:?}");
            }
        }
        // The AccECN SYN-ACK echoes the SYN's IP-ECN field (Table 2).
        let syn = syn_bits(EcnMode::Accurate);
        assert_eq!(syn, 0b111);
        assert_eq!(server_negotiate(EcnMode::Accurate, syn, NotEct).1, 0b010);
        assert_eq!(server_negotiate(EcnMode::Accurate, syn, Ect1).1, 0b011);
        assert_eq!(server_negotiate(EcnMode::Accurate, syn, Ect0).1, 0b100);
        assert_eq!(server_negotiate(EcnMode::Accurate, syn, Ce).1, 0b110);
        // Table 3: each of those (and the reserved (1,1,1)) is AccECN to the client; (1,0,1)
        // (an ECN-nonce server) is RFC 3168.
        for b in [0b010, 0b011, 0b100, 0b110, 0b111] {
            assert_eq!(client_negotiate(EcnMode::Accurate, b), Agreed::Accurate, "{b:03b}");
        }
        assert_eq!(client_negotiate(EcnMode::Accurate, 0b101), Agreed::Classic);
        // Reserved SYN flags: no ECN.
        assert_eq!(server_negotiate(EcnMode::Accurate, 0b100, NotEct), (Agreed::Off, 0));
        assert_eq!(server_negotiate(EcnMode::Classic, 0b001, NotEct), (Agreed::Off, 0));
    }

    #[test]
    fn receiver_counts_from_five_and_acks_on_change() {
        let mut r = AccEcn { handshake_ack: Some(handshake_ace(NotEct)), ..AccEcn::default() };
        // The client's first ACK echoes the SYN-ACK's Not-ECT: (0,1,0); then r.cep = 5 = 0b101.
        assert_eq!((r.ace_out(), r.ace_out()), (0b010, 0b101));
        assert!(!r.on_received(Ect1, true));
        assert!(r.on_received(Ce, true)); // change: ACK now
        assert!(!r.on_received(Ce, true));
        assert!(r.on_received(Ect1, true));
        assert!(!r.on_received(Ce, false)); // a marked pure ACK counts, triggers nothing
        assert_eq!(r.r_cep, 8);
        assert_eq!(r.ace_out(), 0); // 8 mod 8
    }

    /// §3.2.2.5: deltas modulo 8 across the wrap, and Appendix A.2.1's safety rule.
    #[test]
    fn sender_infers_marks_across_the_wrap_and_lost_acks() {
        let mut s = AccEcn::default();
        // r.cep went 5 -> 7 -> 10 (ACE 2) -> 10: deltas 2, 3 (wrapped), 0.
        assert_eq!(s.on_ace(7, 2), 2);
        assert_eq!(s.on_ace(2, 2), 3);
        assert_eq!(s.on_ace(2, 2), 0);
        assert_eq!(s.s_cep, 10);
        // An ACK reporting more marks than it delivered (marks on segments delivered by
        // earlier ACKs, reordering): the residue is taken as it is.
        assert_eq!(s.on_ace(5, 1), 3);
        // ACKs lost: one ACK delivers 20 segments and ACE moved by 3 (13 -> 16 mod 8 = 0):
        // 3, 11 or 19 marks are possible; the safety rule assumes 19 = 3 + 8·⌊17/8⌋.
        assert_eq!(s.on_ace(0, 20), 19);
        assert_eq!(s.s_cep, 13 + 19);
        // Exactly 8 delivered, no change of ACE: 0 or 8 marks; safety says 8.
        assert_eq!(s.on_ace(0, 8), 8);
        // 7 delivered, no change: 0 (a wrap needs at least 8).
        assert_eq!(s.on_ace(0, 7), 0);
    }
}
