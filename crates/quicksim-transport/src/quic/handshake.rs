//! The handshake, modelled by packet sizes and flights only (as INET: no TLS bytes exist).
//!
//! Flights (RFC 9001 §4.1, INET report §2.6): client Initial (CRYPTO with the transport
//! parameters, padded to 1200 B); server Initial (CRYPTO) and Handshake (CRYPTO with the
//! transport parameters); client Handshake (CRYPTO "Finished"); server HANDSHAKE_DONE in a
//! 1-RTT packet. Each flight is one CRYPTO frame that is re-sent until acknowledged (INET never
//! re-sends CRYPTO, so a lost handshake packet killed its connections; here it is recovered).

use super::packet::{CryptoFrame, SpaceId, TransportParams};
use serde::{Deserialize, Serialize};

/// Our outgoing flight and the peer's incoming flight in one packet number space.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct CryptoSpace {
    /// The flight we send in this space, once it exists.
    pub out: Option<CryptoFrame>,
    /// The flight must be (re)sent.
    pub pending: bool,
    /// The peer acknowledged a packet carrying the flight.
    pub acked: bool,
    /// The peer's flight arrived.
    pub received: bool,
}

impl CryptoSpace {
    /// Queues our flight.
    pub fn queue(&mut self, len: u64, params: Option<TransportParams>) {
        self.out = Some(CryptoFrame { offset: 0, len, params: params.map(Box::new) });
        self.pending = true;
        self.acked = false;
    }

    /// Our flight is still unacknowledged.
    pub fn unacked(&self) -> bool {
        self.out.is_some() && !self.acked
    }

    /// The frame to put into a packet now, if the flight is pending.
    pub fn take_pending(&mut self) -> Option<CryptoFrame> {
        if self.pending && !self.acked {
            self.pending = false;
            self.out.clone()
        } else {
            None
        }
    }

    pub fn on_lost(&mut self) {
        if self.unacked() {
            self.pending = true;
        }
    }
}

/// Handshake progress of one endpoint (RFC 9001 §4.1.1/§4.1.2).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Handshake {
    /// Initial and Handshake CRYPTO streams; `None` once both spaces are discarded.
    crypto: Option<Box<[CryptoSpace; 2]>>,
    /// Keys available for [Initial, Handshake, 1-RTT].
    pub keys: [bool; 3],
    pub complete: bool,
    pub confirmed: bool,
    /// Client: a Handshake-space ACK arrived (RFC 9002 PeerCompletedAddressValidation).
    pub handshake_acked: bool,
    /// Client: the server's connection id is known (the Initial DCID is no longer the random 8 B one).
    pub server_cid_known: bool,
}

impl Handshake {
    /// Both ends start established (the 2020 model): only 1-RTT keys exist.
    pub fn established() -> Self {
        Handshake {
            crypto: None,
            keys: [false, false, true],
            complete: true,
            confirmed: true,
            handshake_acked: true,
            server_cid_known: true,
        }
    }

    /// Start of a handshake: Initial keys only.
    pub fn start() -> Self {
        Handshake {
            crypto: Some(Default::default()),
            keys: [true, false, false],
            complete: false,
            confirmed: false,
            handshake_acked: false,
            server_cid_known: false,
        }
    }

    /// The CRYPTO stream of `space`; `None` for 1-RTT and after the early spaces are discarded.
    pub fn crypto(&mut self, space: SpaceId) -> Option<&mut CryptoSpace> {
        let c = self.crypto.as_mut()?;
        match space {
            SpaceId::Initial => Some(&mut c[0]),
            SpaceId::Handshake => Some(&mut c[1]),
            SpaceId::Data => None,
        }
    }

    /// Every CRYPTO stream still held.
    pub fn crypto_all(&mut self) -> impl Iterator<Item = &mut CryptoSpace> {
        self.crypto.iter_mut().flat_map(|c| c.iter_mut())
    }

    /// Frees the CRYPTO streams once the Initial and Handshake spaces are both discarded.
    pub fn discard_crypto(&mut self) {
        self.crypto = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flight_is_resent_until_acked() {
        let mut c = CryptoSpace::default();
        c.queue(0, None);
        assert!(c.take_pending().is_some());
        assert!(c.take_pending().is_none());
        c.on_lost();
        assert!(c.take_pending().is_some());
        c.acked = true;
        c.on_lost();
        assert!(c.take_pending().is_none());
        assert!(!c.unacked());
    }
}
