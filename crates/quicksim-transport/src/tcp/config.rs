//! TCP configuration. `TcpConfig::default()` is a current Linux stack (6.x sysctl defaults)
//! unless a field says otherwise; each field names its default and where it comes from.
//!
//! The one definition of every TCP setting: a scenario's `[tcp]` table (and a flow's own `tcp`
//! table) deserializes into `TcpConfig`, every field optional (`#[serde(default)]`), unknown keys
//! rejected; `scenario.json` writes it back, and the JSON Schema and the scenario reference are
//! generated from it. Durations are strings with a unit ("40ms", "1s"), sizes a number of bytes
//! or a string with a unit ("64MiB", "4500B").

use quicksim_cc::CcSpec;
use quicksim_engine::SimDuration;
use serde::{Deserialize, Serialize};

/// Linux's default controller, CUBIC (RFC 9438), with its default settings.
fn default_cc() -> CcSpec {
    CcSpec::named("cubic").expect("cubic is registered")
}

/// TLS on top of TCP.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub enum TlsVersion {
    /// Plain TCP: the application's bytes are the stream's bytes.
    #[default]
    #[serde(rename = "none")]
    None,
    /// TLS 1.2 full handshake (RFC 5246): two round trips after TCP's, AES-GCM records.
    #[serde(rename = "1.2")]
    Tls12,
    /// TLS 1.3 (RFC 8446): one round trip after TCP's.
    #[serde(rename = "1.3")]
    Tls13,
}

/// A preset of the settings that name it: each such setting left unset takes the profile's
/// value, and one set explicitly wins (so a profile's option can be switched off alone).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub enum TcpProfile {
    /// This model's own defaults, as each setting documents them (what the ns-3 and INET
    /// validations pin).
    #[default]
    #[serde(rename = "default")]
    Default,
    /// Linux 6.x where the model otherwise differs (docs/tcp.md lists each option and its
    /// source): `initial_window` 10, `rto_estimator` "linux", `delayed_ack` "linux",
    /// `loss_detection` "rack", `recovery` "linux", NewReno's growth as Linux's
    /// `tcp_reno_cong_avoid` (`quicksim_cc::Growth::Linux`), and without `cc`, Linux's CUBIC
    /// ([`linux_cc`]).
    #[serde(rename = "linux")]
    Linux,
}

impl TcpProfile {
    fn is_default(&self) -> bool {
        *self == TcpProfile::Default
    }
}

/// How the retransmission timeout follows the RTT samples.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub enum RtoEstimator {
    /// RFC 6298 §2: SRTT + max(G, 4·RTTVAR), then at least `min_rto` (the floor on the sum).
    #[serde(rename = "rfc6298")]
    Rfc6298,
    /// Linux's `tcp_rtt_estimator` and `__tcp_set_rto` (net/ipv4/tcp_input.c, include/net/tcp.h):
    /// SRTT + RTTVAR where RTTVAR is the largest 4·mdev of the last round trip, at least
    /// `min_rto` (the floor on the variance term), decaying by a quarter per round trip; mdev
    /// falls with a gain of 1/32 instead of 1/4 when a sample is below SRTT.
    #[serde(rename = "linux")]
    Linux,
}

/// When the receiver acknowledges data that does not need an ACK at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub enum DelayedAck {
    /// Every `ack_every`-th segment, else after `delack_timeout` (RFC 5681 §4.2).
    #[serde(rename = "fixed")]
    Fixed,
    /// Linux's (net/ipv4/tcp_input.c `tcp_event_data_recv`, `__tcp_ack_snd_check`,
    /// net/ipv4/tcp_output.c `tcp_send_delayed_ack`, net/ipv4/tcp_timer.c
    /// `tcp_delack_timer_handler`): quick-ACK mode (every segment acknowledged) for the first
    /// min(16, max(2, window / 2·MSS)) ACKs of the connection and after an idle gap longer than
    /// the RTO or a duplicate segment; then every `ack_every`-th segment, else after the ATO,
    /// which starts at `delack_timeout` (`TCP_ATO_MIN`), follows the arrival gaps, doubles when
    /// the timer fires, and is capped by max(SRTT, `delack_timeout`), 500 ms and 200 ms
    /// (`TCP_DELACK_MAX`).
    #[serde(rename = "linux")]
    Linux,
}

/// How the sender decides that a segment is lost (with SACK; without it RFC 6582's duplicate
/// ACKs and partial ACKs either way).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub enum LossDetection {
    /// RFC 6675 §4 `IsLost`: `dupthresh` segments SACKed above a hole; a lost retransmission
    /// or a lost tail waits for the RTO.
    #[serde(rename = "rfc6675")]
    Rfc6675,
    /// RACK-TLP (RFC 8985) as Linux runs it (net/ipv4/tcp_recovery.c, tcp_output.c
    /// `tcp_schedule_loss_probe`): a segment is lost once a segment sent after it was delivered
    /// and a reordering window has passed (`rack.rs`), so lost retransmissions are found
    /// too; a tail loss probe two SRTTs after the last send instead of waiting for the RTO.
    #[serde(rename = "rack")]
    Rack,
}

/// The fast-recovery state machine with SACK: how PRR (RFC 6937) paces what recovery sends,
/// and what ends a recovery.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub enum Recovery {
    /// RFC 6675 §5 with RFC 6937 §3's PRR-SSRB: once `pipe` is at or below ssthresh, up to
    /// MAX(prr_delivered − prr_out, DeliveredData) + 1 SMSS per ACK (so `pipe` slow-starts
    /// back to ssthresh); RecoverFS is the flight size (SND.NXT − SND.UNA). The ACK that
    /// ends a recovery opens the window to ssthresh; a loss found meanwhile starts the next
    /// recovery on a later ACK.
    #[serde(rename = "rfc6675")]
    Rfc6675,
    /// Linux's (net/ipv4/tcp_input.c): PRR as `tcp_cwnd_reduction` and
    /// `tcp_init_cwnd_reduction` run it since Linux 5.10 ("tcp: PRR uses CRB mode by default
    /// and SS mode conditionally", as RFC 6937bis): packet conservation, MAX(prr_delivered −
    /// prr_out, DeliveredData), plus 1 SMSS only on an ACK that advances SND.UNA and marks
    /// nothing newly lost, RecoverFS the window before the cut (`prior_cwnd`); and an ACK
    /// that ends a recovery while segments are marked lost starts the next one at once
    /// (`tcp_fastretrans_alert`: the recovery ends, then `tcp_time_to_recover` sees `lost_out`),
    /// so the window never opens to the old ssthresh between the two.
    #[serde(rename = "linux")]
    Linux,
}

/// Everything a TCP connection can be configured with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct TcpConfig {
    /// A preset for the settings that name it: "default" (the model as documented) or "linux"
    /// (Linux 6.x; docs/tcp.md). A setting given explicitly wins over the profile.
    #[serde(skip_serializing_if = "TcpProfile::is_default")]
    pub profile: TcpProfile,
    /// IP MTU of the path in bytes; the simulator sets it from the path. Default 1500 (Ethernet).
    #[serde(with = "units::bytes")]
    #[schemars(with = "units::schema::Size")]
    pub mtu: u64,
    /// MSS advertised in the SYN. Default None = MTU − 40 (IPv4 and TCP headers without
    /// options, RFC 9293 §3.7.1; 1460 B at MTU 1500). Data segments carry MSS − option bytes.
    #[serde(with = "units::opt_bytes", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<units::schema::Size>")]
    pub mss: Option<u64>,
    /// RFC 7323 timestamps (12 B on every segment). Default true (Linux `tcp_timestamps = 1`).
    pub timestamps: bool,
    /// RFC 7323 window scaling. Default true (Linux `tcp_window_scaling = 1`).
    pub window_scaling: bool,
    /// ECN (RFC 3168): offer it in the SYN (ECE and CWR) or accept it in the SYN-ACK (ECE);
    /// once both ends agreed, new data goes out with ECT(0), the receiver echoes a CE mark with
    /// ECE on its ACKs until a segment with CWR arrives, and the sender reduces its window once
    /// per window of data and sets CWR. Default false (Linux `tcp_ecn = 2`: it accepts ECN
    /// but never asks for it, so between two Linux defaults ECN stays off).
    pub ecn: bool,
    /// Accurate ECN feedback (RFC 9768, without its TCP option): offer it in the SYN (AE, CWR
    /// and ECE) and accept it; agreed, every ACK carries the count of CE-marked packets received
    /// (the ACE field) and the sender passes the marks to its controller, which DCTCP and Prague
    /// need. A peer offering only RFC 3168 ECN gets RFC 3168 ECN (`ecn` need not be set).
    /// Default false. A controller that counts marks itself (`dctcp`, `prague`) turns it on.
    pub accurate_ecn: bool,
    /// SACK (RFC 2018) and SACK-based loss recovery (RFC 6675). Default true (Linux `tcp_sack`).
    pub sack: bool,
    /// Proportional Rate Reduction (RFC 6937) during SACK recovery, else RFC 6675's
    /// `cwnd = ssthresh` at once. Default true (Linux since 3.2; ns-3's default recovery).
    pub prr: bool,
    /// The fast-recovery state machine with SACK: "rfc6675" (RFC 6675 §5, PRR-SSRB) or
    /// "linux" (Linux's PRR bound, and back-to-back recoveries while losses are marked).
    /// Default None = the profile's: "rfc6675", or "linux" with profile "linux".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recovery: Option<Recovery>,
    /// The congestion controller (quicksim-cc) and its settings. Default CUBIC (Linux); with
    /// profile "linux" and no `cc` in the table, Linux's CUBIC ([`linux_cc`]). Not read
    /// from the `[tcp]` table by serde: the scenario resolves `cc = "name"` or
    /// `cc = { algo = "name", ... }` against the registry and the run's plugins, as for QUIC.
    #[serde(skip, default = "default_cc")]
    pub cc: CcSpec,
    /// Initial congestion window in segments (SMSS). Default None = RFC 6928's
    /// min(10·SMSS, max(2·SMSS, 14600)); Some(n) = exactly n segments (at least 1). Profile
    /// "linux": 10 segments whatever the MSS (`TCP_INIT_CWND`, include/net/tcp.h, read by
    /// `tcp_init_cwnd`; the same as RFC 6928's up to an SMSS of 1460 B).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub initial_window: Option<u64>,
    /// Duplicate-ACK threshold (RFC 5681 §3.2, RFC 6675 DupThresh). Default 3.
    pub dupthresh: u64,
    /// Loss detection with SACK: "rfc6675" (`dupthresh` SACKed segments above a hole) or "rack"
    /// (RACK-TLP, RFC 8985, as Linux's `tcp_recovery = 1`). Default None = the profile's:
    /// "rfc6675", or "rack" with profile "linux".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loss_detection: Option<LossDetection>,
    /// RTO before the first RTT sample, also the SYN timeout. Default 1 s (RFC 6298 §2.1).
    #[serde(with = "units::duration")]
    #[schemars(with = "units::schema::Duration")]
    pub initial_rto: SimDuration,
    /// Lower bound of the RTO. Default 200 ms (Linux `TCP_RTO_MIN`; RFC 6298 §2.4 says 1 s).
    #[serde(with = "units::duration")]
    #[schemars(with = "units::schema::Duration")]
    pub min_rto: SimDuration,
    /// Upper bound of the RTO and of its backoff. Default 120 s (Linux `TCP_RTO_MAX`; RFC 6298
    /// §2.5 allows any value of at least 60 s).
    #[serde(with = "units::duration")]
    #[schemars(with = "units::schema::Duration")]
    pub max_rto: SimDuration,
    /// How the RTO follows the RTT samples: "rfc6298" (RFC 6298 §2, `min_rto` floors the
    /// whole timeout) or "linux" (`tcp_rtt_estimator`/`__tcp_set_rto`: `min_rto` floors the
    /// variance term, so the RTO is at least SRTT + `min_rto`). Default None = the profile's:
    /// "rfc6298", or "linux" with profile "linux".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rto_estimator: Option<RtoEstimator>,
    /// Clock granularity G of RFC 6298 §2.3 (RTO = SRTT + max(G, 4·RTTVAR)). Default 1 ms.
    #[serde(with = "units::duration")]
    #[schemars(with = "units::schema::Duration")]
    pub clock_granularity: SimDuration,
    /// SYN (and SYN-ACK) retransmissions before giving up. Default 6 (Linux `tcp_syn_retries`).
    pub syn_retries: u32,
    /// Consecutive RTOs before the connection is aborted. Default 15 (Linux `tcp_retries2`).
    pub max_retries: u32,
    /// Delayed-ACK timer. Default 40 ms (Linux `TCP_DELACK_MIN`; RFC 5681 §4.2 allows ≤ 500 ms).
    #[serde(with = "units::duration")]
    #[schemars(with = "units::schema::Duration")]
    pub delack_timeout: SimDuration,
    /// ACK at once after this many data segments (RFC 5681 §4.2: every second full-sized
    /// segment). Default 2; 1 turns delayed ACKs off.
    pub ack_every: u64,
    /// The delayed-ACK policy: "fixed" (`ack_every`, `delack_timeout`) or "linux" (quick-ACK
    /// mode at the start, an adaptive ACK timeout from `delack_timeout` up). Default None = the
    /// profile's: "fixed", or "linux" with profile "linux".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delayed_ack: Option<DelayedAck>,
    /// Receive buffer in bytes: the advertised window is its free space. Default 6 MiB
    /// (6291456 B), Linux's `net.ipv4.tcp_rmem` maximum ("4096 131072 6291456" on a machine
    /// with enough memory; `Documentation/networking/ip-sysctl.rst` up to Linux 6.15, which
    /// Debian 13 and Ubuntu 24.04 ship; Linux 6.16 raised it to 32 MiB, commit "tcp: increase
    /// tcp_rmem[2] to 32 MB"). Linux autotunes the buffer up to that maximum; this model does
    /// not autotune: the buffer is fixed at this size from the start. A window of 6 MiB caps a
    /// flow at 6 MiB per round trip (~500 Mbit/s at 100 ms): a path with a larger
    /// bandwidth-delay product needs a larger buffer set here.
    #[serde(with = "units::bytes")]
    #[schemars(with = "units::schema::Size")]
    pub recv_buffer: u64,
    /// Send buffer in bytes (unacknowledged plus unsent, TLS framing included). Default 4 MiB
    /// (4194304 B), Linux's `net.ipv4.tcp_wmem` maximum ("4096 16384 4194304";
    /// `Documentation/networking/ip-sysctl.rst`), fixed at that size (no autotuning). Linux
    /// counts the buffers' memory overhead in it too; this model counts the bytes.
    #[serde(with = "units::bytes")]
    #[schemars(with = "units::schema::Size")]
    pub send_buffer: u64,
    /// `SendQueueLow` fires when an ACK brings the send buffer below this fraction. Default 0.4
    /// (QUIC's `send_queue_low_water`).
    pub send_buffer_low_water: f64,
    /// Nagle's algorithm (RFC 9293 §3.7.4): hold a short segment while data is unacknowledged.
    /// Default false (`TCP_NODELAY`, as latency-sensitive applications set it).
    pub nagle: bool,
    /// Pace data segments at Linux's 2·cwnd/srtt in slow start and 1.2·cwnd/srtt after
    /// (`tcp_pacing_ss_ratio`, `tcp_pacing_ca_ratio`) when the controller gives no rate.
    /// Default false. A controller's own rate (BBR) is always honoured.
    pub pacing: bool,
    /// The application reads only when told (`Connection::read`), so tests can model a slow
    /// reader that fills the receive buffer. Default false: the application reads at once.
    pub manual_read: bool,
    /// TLS on top: "none" (default), "1.2" or "1.3".
    pub tls: TlsVersion,
    /// Largest TLS record payload. Default 16384 B (RFC 8446 §5.1, RFC 5246 §6.2.1: 2^14).
    #[serde(with = "units::bytes")]
    #[schemars(with = "units::schema::Size")]
    pub tls_record_size: u64,
    /// ClientHello flight on the wire (record header included). Default 517 B (Chrome and
    /// Firefox pad it to 512 B of handshake message, RFC 7685).
    #[serde(with = "units::bytes")]
    #[schemars(with = "units::schema::Size")]
    pub tls_client_hello: u64,
    /// Server's first flight: 1.3 ServerHello..Finished, 1.2 ServerHello..ServerHelloDone. The
    /// certificate chain dominates. Default 4500 B (a two-certificate RSA-2048 chain).
    #[serde(with = "units::bytes")]
    #[schemars(with = "units::schema::Size")]
    pub tls_server_flight: u64,
    /// TLS 1.3 client Finished flight. Default 64 B (ChangeCipherSpec 6 B + Finished record
    /// 58 B: 5 header + 36 message + 1 type + 16 tag).
    #[serde(with = "units::bytes")]
    #[schemars(with = "units::schema::Size")]
    pub tls13_client_finished: u64,
    /// TLS 1.2 client flight ClientKeyExchange (X25519), ChangeCipherSpec, Finished. Default
    /// 93 B (42 + 6 + 45).
    #[serde(with = "units::bytes")]
    #[schemars(with = "units::schema::Size")]
    pub tls12_client_flight: u64,
    /// TLS 1.2 server ChangeCipherSpec and Finished. Default 51 B (6 + 45).
    #[serde(with = "units::bytes")]
    #[schemars(with = "units::schema::Size")]
    pub tls12_server_finished: u64,
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            profile: TcpProfile::Default,
            mtu: 1500,
            mss: None,
            timestamps: true,
            window_scaling: true,
            ecn: false,
            accurate_ecn: false,
            sack: true,
            prr: true,
            cc: default_cc(),
            initial_window: None,
            dupthresh: 3,
            loss_detection: None,
            initial_rto: SimDuration::from_secs(1),
            min_rto: SimDuration::from_millis(200),
            max_rto: SimDuration::from_secs(120),
            rto_estimator: None,
            clock_granularity: SimDuration::from_millis(1),
            syn_retries: 6,
            max_retries: 15,
            delack_timeout: SimDuration::from_millis(40),
            ack_every: 2,
            delayed_ack: None,
            recovery: None,
            recv_buffer: LINUX_TCP_RMEM_MAX,
            send_buffer: LINUX_TCP_WMEM_MAX,
            send_buffer_low_water: 0.4,
            nagle: false,
            pacing: false,
            manual_read: false,
            tls: TlsVersion::None,
            tls_record_size: 16_384,
            tls_client_hello: 517,
            tls_server_flight: 4_500,
            tls13_client_finished: 64,
            tls12_client_flight: 93,
            tls12_server_finished: 51,
        }
    }
}

/// Linux's `net.ipv4.tcp_rmem[2]` and `tcp_wmem[2]` defaults (Linux 4.x to 6.15, a machine
/// with enough memory): the default receive and send buffers.
pub const LINUX_TCP_RMEM_MAX: u64 = 6 << 20;
pub const LINUX_TCP_WMEM_MAX: u64 = 4 << 20;

/// IPv4 (RFC 791) plus TCP (RFC 9293) headers without options.
pub const IP_TCP_HEADERS: u64 = 40;
/// Smallest MSS accepted: the largest option block (40 B) plus Linux's `tcp_min_snd_mss` (48 B).
pub const MIN_MSS: u64 = 88;
/// Largest receive buffer with window scaling: 65535 · 2^14 (RFC 7323 §2.3).
const MAX_SCALED_WINDOW: u64 = 65_535 << 14;

/// The controller of profile "linux" for a connection whose `cc` is not set: CUBIC as Linux's
/// net/ipv4/tcp_cubic.c runs it, `cc = { algo = "cubic", hystart_linux = true, linux = true,
/// beta = 0.7001953125, c = 0.400390625 }` (its HyStart, its congestion avoidance, beta
/// 717/1024 and C = `bic_scale` 41 · 10 / 1024; fast convergence and TCP friendliness on, as
/// Linux's module defaults).
pub fn linux_cc() -> CcSpec {
    use quicksim_cc::{algos::cubic, BuiltinConfig};
    CcSpec::Builtin(BuiltinConfig::Cubic(cubic::Config {
        hystart_linux: true,
        linux: true,
        beta: LINUX_CUBIC_BETA,
        c: LINUX_CUBIC_C,
        ..Default::default()
    }))
}

/// Linux CUBIC's beta (`beta` = 717 of `BICTCP_BETA_SCALE` 1024) and C (`bic_scale` 41,
/// `cube_rtt_scale` = 41 · 10, over 1024), net/ipv4/tcp_cubic.c.
pub const LINUX_CUBIC_BETA: f64 = 717.0 / 1024.0;
pub const LINUX_CUBIC_C: f64 = 410.0 / 1024.0;

/// Linux's initial window in segments (`TCP_INIT_CWND`, include/net/tcp.h; RFC 6928).
pub const LINUX_INIT_CWND: u64 = 10;

impl TcpConfig {
    /// Profile "linux" with its controller ([`linux_cc`]), as a scenario's `profile = "linux"`
    /// without `cc` gives.
    pub fn linux() -> TcpConfig {
        TcpConfig { profile: TcpProfile::Linux, cc: linux_cc(), ..Default::default() }
    }

    /// The initial window in segments in force: the setting, else the profile's (None: RFC
    /// 6928's formula of the SMSS).
    pub fn initial_window_segments(&self) -> Option<u64> {
        match (self.initial_window, self.profile) {
            (Some(n), _) => Some(n),
            (None, TcpProfile::Linux) => Some(LINUX_INIT_CWND),
            (None, TcpProfile::Default) => None,
        }
    }

    /// The RTO estimator in force: the setting, else the profile's.
    pub fn rto_estimator(&self) -> RtoEstimator {
        self.rto_estimator.unwrap_or(match self.profile {
            TcpProfile::Default => RtoEstimator::Rfc6298,
            TcpProfile::Linux => RtoEstimator::Linux,
        })
    }

    /// The loss detection in force: the setting, else the profile's.
    pub fn loss_detection(&self) -> LossDetection {
        self.loss_detection.unwrap_or(match self.profile {
            TcpProfile::Default => LossDetection::Rfc6675,
            TcpProfile::Linux => LossDetection::Rack,
        })
    }

    /// The delayed-ACK policy in force: the setting, else the profile's.
    pub fn delayed_ack(&self) -> DelayedAck {
        self.delayed_ack.unwrap_or(match self.profile {
            TcpProfile::Default => DelayedAck::Fixed,
            TcpProfile::Linux => DelayedAck::Linux,
        })
    }

    /// The recovery state machine in force: the setting, else the profile's.
    pub fn recovery(&self) -> Recovery {
        self.recovery.unwrap_or(match self.profile {
            TcpProfile::Default => Recovery::Rfc6675,
            TcpProfile::Linux => Recovery::Linux,
        })
    }

    /// The MSS this end advertises.
    pub fn local_mss(&self) -> u64 {
        self.mss.unwrap_or(self.mtu.saturating_sub(IP_TCP_HEADERS))
    }

    /// Checks every field; the error names the field and the value.
    pub fn validate(&self) -> Result<(), String> {
        if self.mtu < 68 || self.mtu > 65_535 {
            return Err(format!("mtu: {} B is outside 68..=65535 B (RFC 791)", self.mtu));
        }
        let mss = self.local_mss();
        if mss + IP_TCP_HEADERS > self.mtu {
            return Err(format!(
                "mss: {mss} B does not fit the MTU of {} B (mss + 40 B of IPv4 and TCP headers must \
                 be at most the MTU)",
                self.mtu
            ));
        }
        if mss < MIN_MSS {
            return Err(format!(
                "mss: {mss} B is below {MIN_MSS} B (40 B of options plus 48 B of data); raise the MTU \
                 (now {} B)",
                self.mtu
            ));
        }
        if self.initial_window == Some(0) {
            return Err("initial_window: 0 segments is invalid; at least 1".into());
        }
        if self.dupthresh == 0 {
            return Err("dupthresh: 0 is invalid; at least 1 duplicate ACK".into());
        }
        if self.ack_every == 0 {
            return Err("ack_every: 0 is invalid; 1 acknowledges every segment".into());
        }
        for (name, d) in [
            ("initial_rto", self.initial_rto),
            ("min_rto", self.min_rto),
            ("max_rto", self.max_rto),
            ("delack_timeout", self.delack_timeout),
        ] {
            if d.ps() == 0 {
                return Err(format!("{name}: must be positive, got 0"));
            }
        }
        if self.min_rto > self.max_rto {
            return Err(format!("min_rto: {} exceeds max_rto {}", self.min_rto, self.max_rto));
        }
        if self.initial_rto > self.max_rto {
            return Err(format!("initial_rto: {} exceeds max_rto {}", self.initial_rto, self.max_rto));
        }
        let max_buf = if self.window_scaling { MAX_SCALED_WINDOW } else { 65_535 };
        if self.recv_buffer < 2 * mss || self.recv_buffer > max_buf {
            return Err(format!(
                "recv_buffer: {} B is outside {}..={max_buf} B (two segments up to the largest \
                 window{})",
                self.recv_buffer,
                2 * mss,
                if self.window_scaling { ", RFC 7323 §2.3" } else { " without window scaling" }
            ));
        }
        if self.send_buffer == 0 {
            return Err("send_buffer: 0 B is invalid".into());
        }
        if !(0.0..=1.0).contains(&self.send_buffer_low_water) {
            return Err(format!(
                "send_buffer_low_water: {} is not a fraction in [0, 1]",
                self.send_buffer_low_water
            ));
        }
        if self.tls_record_size == 0 || self.tls_record_size > 16_384 {
            return Err(format!(
                "tls_record_size: {} B is outside 1..=16384 B (RFC 8446 §5.1)",
                self.tls_record_size
            ));
        }
        for (name, v) in [
            ("tls_client_hello", self.tls_client_hello),
            ("tls_server_flight", self.tls_server_flight),
            ("tls13_client_finished", self.tls13_client_finished),
            ("tls12_client_flight", self.tls12_client_flight),
            ("tls12_server_finished", self.tls12_server_finished),
        ] {
            if v == 0 || v > u32::MAX as u64 {
                return Err(format!("{name}: {v} B is outside 1..=4294967295 B"));
            }
        }
        Ok(())
    }
}

pub use crate::units;

/// The configuration a state decoded by serde alone holds until its owner sets the real one
/// ([`Connection::decode`]): one shared default, so decoding allocates none. Serde `default` of
/// the skipped configuration field.
pub fn placeholder_config() -> std::sync::Arc<TcpConfig> {
    static UNSET: std::sync::LazyLock<std::sync::Arc<TcpConfig>> = std::sync::LazyLock::new(Default::default);
    std::sync::Arc::clone(&UNSET)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_linux_like() {
        let c = TcpConfig::default();
        c.validate().unwrap();
        assert_eq!(c.local_mss(), 1460);
        assert_eq!(c.cc.name(), "cubic");
        assert_eq!(c.min_rto, SimDuration::from_millis(200));
        // net.ipv4.tcp_rmem = "4096 131072 6291456", tcp_wmem = "4096 16384 4194304": the maxima.
        assert_eq!(c.recv_buffer, 6_291_456);
        assert_eq!(c.send_buffer, 4_194_304);
    }

    #[test]
    fn errors_name_the_field_and_value() {
        let c = TcpConfig { initial_window: Some(0), ..Default::default() };
        assert!(c.validate().unwrap_err().starts_with("initial_window: 0"));
        let c = TcpConfig { mss: Some(1461), ..Default::default() };
        let e = c.validate().unwrap_err();
        assert!(e.starts_with("mss: 1461 B does not fit the MTU of 1500 B"), "{e}");
        let c = TcpConfig { mtu: 100, ..Default::default() };
        assert!(c.validate().unwrap_err().starts_with("mss: 60 B is below 88 B"));
        let c = TcpConfig { ack_every: 0, ..Default::default() };
        assert!(c.validate().unwrap_err().starts_with("ack_every"));
        let c = TcpConfig { window_scaling: false, ..Default::default() };
        assert!(c.validate().unwrap_err().starts_with("recv_buffer: 6291456 B"));
        let c = TcpConfig { min_rto: SimDuration::from_secs(200), ..Default::default() };
        assert!(c.validate().unwrap_err().starts_with("min_rto"));
    }

    #[test]
    fn linux_initial_window_is_ten_segments_whatever_the_mss() {
        let rng = quicksim_engine::Rng::from_seed(1);
        use quicksim_cc::CongestionController;
        let iw = |cfg: &TcpConfig, smss| crate::tcp::cc_for(cfg, smss, &rng).unwrap().cwnd_bytes();
        let linux = TcpConfig { profile: TcpProfile::Linux, ..Default::default() };
        let model = TcpConfig::default();
        // SMSS 1448 (MTU 1500 with timestamps): RFC 6928 min(14 480, max(2896, 14 600)) =
        // 14 480 = 10 segments, as Linux's TCP_INIT_CWND.
        assert_eq!((iw(&model, 1448), iw(&linux, 1448)), (14_480, 14_480));
        // SMSS 8948 (a 9000 B MTU): RFC 6928 max(2·8948, 14 600) = 17 896 B, two segments;
        // Linux ten segments, 89 480 B.
        assert_eq!((iw(&model, 8948), iw(&linux, 8948)), (17_896, 89_480));
        // An explicit setting wins over the profile.
        let four = TcpConfig { initial_window: Some(4), ..linux };
        assert_eq!(iw(&four, 1448), 4 * 1448);
    }

    #[test]
    fn the_linux_profile_selects_linux_recovery_unless_set() {
        assert_eq!(TcpConfig::default().recovery(), Recovery::Rfc6675);
        assert_eq!(TcpConfig::linux().recovery(), Recovery::Linux);
        let off = TcpConfig { recovery: Some(Recovery::Rfc6675), ..TcpConfig::linux() };
        assert_eq!(off.recovery(), Recovery::Rfc6675);
        // Unset, it is not written back (scenarios without it keep their normalized form).
        let json = serde_json::to_value(TcpConfig::default()).unwrap();
        assert!(json.get("recovery").is_none());
        let c: TcpConfig = serde_json::from_value(serde_json::json!({"recovery": "linux"})).unwrap();
        assert_eq!(c.recovery, Some(Recovery::Linux));
    }

    #[test]
    fn units_parse_exactly() {
        assert_eq!(units::parse_duration("40ms").unwrap(), SimDuration::from_millis(40));
        assert_eq!(units::parse_duration("1.5s").unwrap(), SimDuration::from_millis(1500));
        assert!(units::parse_duration("40").unwrap_err().contains("needs a unit"));
        assert_eq!(units::parse_bytes("64MiB").unwrap(), 64 << 20);
        assert_eq!(units::parse_bytes("4500").unwrap(), 4500);
        assert!(units::parse_bytes("1.5B").is_err());
    }
}
