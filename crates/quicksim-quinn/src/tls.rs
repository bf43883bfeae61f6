//! Deterministic cryptography for quinn flows: rustls (with ring) whose every random byte comes
//! from the run's seed, a self-signed Ed25519 certificate derived from the seed, a client that
//! trusts exactly that certificate (no clock, no root store), and the optional null packet
//! protection (`encryption = false`) that keeps the wire sizes but skips the AEAD and header
//! protection work.
//!
//! rustls takes its randomness from a `&'static` provider, not per connection. The provider
//! here reads a thread-local generator that each quinn endpoint installs for the duration of
//! every call into quinn-proto ([`with_rng`]): the simulation is single-threaded per run, and the
//! generator is part of the endpoint's state, so a run's TLS bytes depend only on its seed.
//!
//! Both ends log their TLS 1.3 secrets ([`TlsKeyLog`], NSS key-log lines) so that a packet
//! capture can carry them for Wireshark.

use bytes::BytesMut;
use quicksim_engine::Rng;
use quinn_proto::crypto::{
    self, CryptoError, ExportKeyingMaterialError, HeaderKey, KeyPair, Keys, PacketKey, Session,
    UnsupportedVersion,
};
use quinn_proto::transport_parameters::TransportParameters;
use quinn_proto::{ConnectError, ConnectionId, Side, TransportError};
use ring::agreement;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{
    ActiveKeyExchange, CryptoProvider, GetRandomFailed, SecureRandom, SharedSecret, SupportedKxGroup,
    WebPkiSupportedAlgorithms,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, NamedGroup, SignatureScheme};
use std::any::Any;
use std::cell::RefCell;
use std::sync::{Arc, Mutex};

thread_local! {
    /// The generator of the endpoint whose quinn-proto call is running on this thread.
    static CURRENT: RefCell<Option<Rng>> = const { RefCell::new(None) };
}

/// Runs `f` with `rng` as the source of every random byte rustls asks for, and stores the
/// advanced generator back in `rng`.
pub(crate) fn with_rng<R>(rng: &mut Rng, f: impl FnOnce() -> R) -> R {
    let prev = CURRENT.with(|c| c.replace(Some(rng.clone())));
    let r = f();
    let used = CURRENT.with(|c| c.replace(prev));
    if let Some(used) = used {
        *rng = used;
    }
    r
}

/// Fills `dest` from the installed generator; fails (rustls then fails the handshake, no panic)
/// if rustls asks outside an endpoint call.
fn fill(dest: &mut [u8]) -> Result<(), GetRandomFailed> {
    CURRENT.with(|c| {
        let mut c = c.borrow_mut();
        let rng = c.as_mut().ok_or(GetRandomFailed)?;
        for chunk in dest.chunks_mut(8) {
            let v = rng.next_u64().to_le_bytes();
            chunk.copy_from_slice(&v[..chunk.len()]);
        }
        Ok(())
    })
}

#[derive(Debug)]
struct SeededRandom;

impl SecureRandom for SeededRandom {
    fn fill(&self, buf: &mut [u8]) -> Result<(), GetRandomFailed> {
        fill(buf)
    }
}

/// ring's X25519 with the ephemeral key drawn from the seeded generator (ring's own
/// `SystemRandom` would make every handshake different).
#[derive(Debug)]
struct SeededX25519;

struct ActiveX25519 {
    key: agreement::EphemeralPrivateKey,
    public: Vec<u8>,
}

/// A ring `SecureRandom` that yields `bytes` once: how ring takes a chosen private key. ring
/// keeps its deterministic generators in a hidden, deprecated module (pinned to ring 0.17).
#[allow(deprecated)]
fn fixed(bytes: &[u8]) -> ring::test::rand::FixedSliceRandom<'_> {
    ring::test::rand::FixedSliceRandom { bytes }
}

impl SupportedKxGroup for SeededX25519 {
    fn start(&self) -> Result<Box<dyn ActiveKeyExchange>, rustls::Error> {
        let mut seed = [0u8; 32];
        fill(&mut seed).map_err(|_| rustls::Error::FailedToGetRandomBytes)?;
        let key = agreement::EphemeralPrivateKey::generate(&agreement::X25519, &fixed(&seed))
            .map_err(|_| rustls::Error::FailedToGetRandomBytes)?;
        let public = key
            .compute_public_key()
            .map_err(|_| rustls::Error::General("X25519 public key".into()))?
            .as_ref()
            .to_vec();
        Ok(Box::new(ActiveX25519 { key, public }))
    }
    fn name(&self) -> NamedGroup {
        NamedGroup::X25519
    }
}

impl ActiveKeyExchange for ActiveX25519 {
    fn complete(self: Box<Self>, peer: &[u8]) -> Result<SharedSecret, rustls::Error> {
        let peer = agreement::UnparsedPublicKey::new(&agreement::X25519, peer);
        agreement::agree_ephemeral(self.key, &peer, |s| SharedSecret::from(s))
            .map_err(|_| rustls::Error::PeerMisbehaved(rustls::PeerMisbehaved::InvalidKeyShare))
    }
    fn pub_key(&self) -> &[u8] {
        &self.public
    }
    fn group(&self) -> NamedGroup {
        NamedGroup::X25519
    }
}

static KX: SeededX25519 = SeededX25519;
static RANDOM: SeededRandom = SeededRandom;

/// ring's provider with the seeded generator and key exchange.
fn provider() -> Arc<CryptoProvider> {
    let mut p = rustls::crypto::ring::default_provider();
    p.kx_groups = vec![&KX];
    p.secure_random = &RANDOM;
    Arc::new(p)
}

/// The server's certificate and key: Ed25519 (deterministic signatures) from a seed.
struct Identity {
    cert: CertificateDer<'static>,
    key: PrivatePkcs8KeyDer<'static>,
}

const SERVER_NAME: &str = "quicksim.invalid";

fn identity(seed: [u8; 32]) -> Result<Identity, String> {
    let pkcs8 = ring::signature::Ed25519KeyPair::generate_pkcs8(&fixed(&seed))
        .map_err(|_| "Ed25519 key generation failed".to_string())?;
    let der = PrivatePkcs8KeyDer::from(pkcs8.as_ref().to_vec());
    let kp = rcgen::KeyPair::from_pkcs8_der_and_sign_algo(&der, &rcgen::PKCS_ED25519)
        .map_err(|e| format!("certificate key: {e}"))?;
    let params = rcgen::CertificateParams::new(vec![SERVER_NAME.to_string()])
        .map_err(|e| format!("certificate: {e}"))?;
    let cert = params.self_signed(&kp).map_err(|e| format!("certificate: {e}"))?;
    Ok(Identity { cert: cert.der().clone(), key: der })
}

/// Trusts exactly the server certificate of this flow (checked byte for byte, signatures
/// verified with ring): no root store and no clock, so nothing outside the run matters.
#[derive(Debug)]
struct PinnedCert {
    der: CertificateDer<'static>,
    algs: WebPkiSupportedAlgorithms,
}

impl ServerCertVerifier for PinnedCert {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        if end_entity.as_ref() == self.der.as_ref() {
            Ok(ServerCertVerified::assertion())
        } else {
            Err(rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer))
        }
    }
    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algs)
    }
    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algs)
    }
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algs.supported_schemes()
    }
}

/// The TLS secrets of one flow's connection as NSS key-log lines (`LABEL <client random>
/// <secret>`, hex; the format Wireshark reads), in the order rustls derived them. Both ends
/// log into it; a line both ends derive is kept once. A run is single-threaded: the lock is
/// never contended (rustls requires `Sync`).
#[derive(Debug, Default)]
pub struct TlsKeyLog {
    lines: Mutex<Vec<String>>,
}

impl TlsKeyLog {
    /// The number of lines logged so far.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The lines from the `from`-th on, each ending with a newline.
    pub fn lines_from(&self, from: usize) -> Vec<String> {
        self.lock().get(from..).map(<[String]>::to_vec).unwrap_or_default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<String>> {
        // A panic while holding the lock cannot leave a half-written line: push is the only
        // write.
        self.lines.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

fn hex(out: &mut String, bytes: &[u8]) {
    for b in bytes {
        out.push(char::from(b"0123456789abcdef"[usize::from(b >> 4)]));
        out.push(char::from(b"0123456789abcdef"[usize::from(b & 15)]));
    }
}

/// rustls's hook; shared by the client and server configs of a flow.
#[derive(Debug)]
struct KeyLogHook(Arc<TlsKeyLog>);

impl rustls::KeyLog for KeyLogHook {
    fn log(&self, label: &str, client_random: &[u8], secret: &[u8]) {
        let mut line = String::with_capacity(label.len() + 2 * (client_random.len() + secret.len()) + 3);
        line.push_str(label);
        line.push(' ');
        hex(&mut line, client_random);
        line.push(' ');
        hex(&mut line, secret);
        line.push('\n');
        let mut lines = self.0.lock();
        if !lines.contains(&line) {
            lines.push(line);
        }
    }
}

/// The crypto configurations of one flow's client and server.
pub(crate) struct Crypto {
    pub client: Arc<dyn crypto::ClientConfig>,
    pub server: Arc<dyn crypto::ServerConfig>,
}

/// TLS 1.3 through rustls for a flow whose certificate comes from `seed`, both ends logging
/// their secrets into `keylog`; `encryption = false` wraps both in the null packet protection.
pub(crate) fn crypto(seed: [u8; 32], encryption: bool, keylog: &Arc<TlsKeyLog>) -> Result<Crypto, String> {
    let id = identity(seed)?;
    let p = provider();
    let algs = p.signature_verification_algorithms;
    let mut client = rustls::ClientConfig::builder_with_provider(Arc::clone(&p))
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(|e| format!("rustls: {e}"))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(PinnedCert { der: id.cert.clone(), algs }))
        .with_no_client_auth();
    // Each flow is a first contact: no session resumption across flows.
    client.resumption = rustls::client::Resumption::disabled();
    client.key_log = Arc::new(KeyLogHook(Arc::clone(keylog)));
    let mut server = rustls::ServerConfig::builder_with_provider(p)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(|e| format!("rustls: {e}"))?
        .with_no_client_auth()
        .with_single_cert(vec![id.cert], PrivateKeyDer::Pkcs8(id.key))
        .map_err(|e| format!("rustls: {e}"))?;
    server.send_tls13_tickets = 0;
    server.key_log = Arc::new(KeyLogHook(Arc::clone(keylog)));
    let client = quinn_proto::crypto::rustls::QuicClientConfig::try_from(client)
        .map_err(|e| format!("quinn-proto: {e}"))?;
    let server = quinn_proto::crypto::rustls::QuicServerConfig::try_from(server)
        .map_err(|e| format!("quinn-proto: {e}"))?;
    Ok(if encryption {
        Crypto { client: Arc::new(client), server: Arc::new(server) }
    } else {
        Crypto {
            client: Arc::new(NullClient(Arc::new(client))),
            server: Arc::new(NullServer(Arc::new(server))),
        }
    })
}

pub(crate) fn server_name() -> &'static str {
    SERVER_NAME
}

// ---- null packet protection (encryption = false) ----
//
// The TLS handshake runs as usual (the transport parameters travel in it), but the keys it
// yields are replaced by keys that leave payload and header as they are. The AEAD tag's bytes
// are still reserved, so packets have the same sizes as with encryption and only the CPU work
// differs.

struct NullClient(Arc<dyn crypto::ClientConfig>);
struct NullServer(Arc<dyn crypto::ServerConfig>);
struct NullSession(Box<dyn Session>);

struct NullPacketKey {
    tag_len: usize,
    confidentiality: u64,
    integrity: u64,
}

struct NullHeaderKey {
    sample: usize,
}

impl PacketKey for NullPacketKey {
    fn encrypt(&self, _packet: u64, _buf: &mut [u8], _header_len: usize) {}
    fn decrypt(&self, _packet: u64, _header: &[u8], payload: &mut BytesMut) -> Result<(), CryptoError> {
        let n = payload.len().checked_sub(self.tag_len).ok_or(CryptoError)?;
        payload.truncate(n);
        Ok(())
    }
    fn tag_len(&self) -> usize {
        self.tag_len
    }
    fn confidentiality_limit(&self) -> u64 {
        self.confidentiality
    }
    fn integrity_limit(&self) -> u64 {
        self.integrity
    }
}

impl HeaderKey for NullHeaderKey {
    fn decrypt(&self, _pn_offset: usize, _packet: &mut [u8]) {}
    fn encrypt(&self, _pn_offset: usize, _packet: &mut [u8]) {}
    fn sample_size(&self) -> usize {
        self.sample
    }
}

fn null_packet(k: Box<dyn PacketKey>) -> Box<dyn PacketKey> {
    Box::new(NullPacketKey {
        tag_len: k.tag_len(),
        confidentiality: k.confidentiality_limit(),
        integrity: k.integrity_limit(),
    })
}

fn null_header(k: Box<dyn HeaderKey>) -> Box<dyn HeaderKey> {
    Box::new(NullHeaderKey { sample: k.sample_size() })
}

fn null_pair(p: KeyPair<Box<dyn PacketKey>>) -> KeyPair<Box<dyn PacketKey>> {
    KeyPair { local: null_packet(p.local), remote: null_packet(p.remote) }
}

fn null_keys(k: Keys) -> Keys {
    Keys {
        header: KeyPair { local: null_header(k.header.local), remote: null_header(k.header.remote) },
        packet: null_pair(k.packet),
    }
}

impl crypto::ClientConfig for NullClient {
    fn start_session(
        self: Arc<Self>,
        version: u32,
        server_name: &str,
        params: &TransportParameters,
    ) -> Result<Box<dyn Session>, ConnectError> {
        let inner = Arc::clone(&self.0).start_session(version, server_name, params)?;
        Ok(Box::new(NullSession(inner)))
    }
}

impl crypto::ServerConfig for NullServer {
    fn initial_keys(&self, version: u32, dst_cid: &ConnectionId) -> Result<Keys, UnsupportedVersion> {
        self.0.initial_keys(version, dst_cid).map(null_keys)
    }
    fn retry_tag(&self, version: u32, orig_dst_cid: &ConnectionId, packet: &[u8]) -> [u8; 16] {
        self.0.retry_tag(version, orig_dst_cid, packet)
    }
    fn start_session(self: Arc<Self>, version: u32, params: &TransportParameters) -> Box<dyn Session> {
        Box::new(NullSession(Arc::clone(&self.0).start_session(version, params)))
    }
}

impl Session for NullSession {
    fn initial_keys(&self, dst_cid: &ConnectionId, side: Side) -> Keys {
        null_keys(self.0.initial_keys(dst_cid, side))
    }
    fn handshake_data(&self) -> Option<Box<dyn Any>> {
        self.0.handshake_data()
    }
    fn peer_identity(&self) -> Option<Box<dyn Any>> {
        self.0.peer_identity()
    }
    fn early_crypto(&self) -> Option<(Box<dyn HeaderKey>, Box<dyn PacketKey>)> {
        self.0.early_crypto().map(|(h, p)| (null_header(h), null_packet(p)))
    }
    fn early_data_accepted(&self) -> Option<bool> {
        self.0.early_data_accepted()
    }
    fn is_handshaking(&self) -> bool {
        self.0.is_handshaking()
    }
    fn read_handshake(&mut self, buf: &[u8]) -> Result<bool, TransportError> {
        self.0.read_handshake(buf)
    }
    fn transport_parameters(&self) -> Result<Option<TransportParameters>, TransportError> {
        self.0.transport_parameters()
    }
    fn write_handshake(&mut self, buf: &mut Vec<u8>) -> Option<Keys> {
        self.0.write_handshake(buf).map(null_keys)
    }
    fn next_1rtt_keys(&mut self) -> Option<KeyPair<Box<dyn PacketKey>>> {
        self.0.next_1rtt_keys().map(null_pair)
    }
    fn is_valid_retry(&self, orig_dst_cid: &ConnectionId, header: &[u8], payload: &[u8]) -> bool {
        self.0.is_valid_retry(orig_dst_cid, header, payload)
    }
    fn export_keying_material(
        &self,
        output: &mut [u8],
        label: &[u8],
        context: &[u8],
    ) -> Result<(), ExportKeyingMaterialError> {
        self.0.export_keying_material(output, label, context)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_certificate_follows_the_seed() {
        let (a, b, c) = (identity([7; 32]).unwrap(), identity([7; 32]).unwrap(), identity([8; 32]).unwrap());
        assert_eq!(a.cert, b.cert);
        assert_eq!(a.key.secret_pkcs8_der(), b.key.secret_pkcs8_der());
        assert_ne!(a.cert, c.cert);
    }

    #[test]
    fn random_bytes_come_only_from_the_installed_generator() {
        let mut buf = [0u8; 12];
        // Outside an endpoint call rustls gets an error (a failed handshake), never OS bytes.
        assert!(fill(&mut buf).is_err());
        let draw = |seed| {
            let mut rng = Rng::from_seed(seed);
            let mut out = [0u8; 12];
            with_rng(&mut rng, || fill(&mut out)).unwrap();
            // The generator advanced and was handed back.
            (out, rng.next_u64())
        };
        assert_eq!(draw(1), draw(1));
        assert_ne!(draw(1).0, draw(2).0);
        assert_ne!(draw(1).1, Rng::from_seed(1).next_u64());
    }

    #[test]
    fn null_keys_keep_the_tag_room_and_strip_it() {
        let k = NullPacketKey { tag_len: 16, confidentiality: 1, integrity: 1 };
        let mut payload = BytesMut::from(&[1u8; 40][..]);
        k.decrypt(0, &[], &mut payload).unwrap();
        assert_eq!(payload.len(), 24);
        assert!(k.decrypt(0, &[], &mut BytesMut::from(&[0u8; 8][..])).is_err());
    }
}
