//! Packet capture (`run.capture`): every frame delivered on a captured link direction, of a
//! captured flow, written to `capture.pcapng` with real IPv4, UDP and TCP headers, for
//! Wireshark and tshark.
//!
//! An output sink like any other ([`Sink`]): it is told of frames through
//! [`Sink::link_frame`], which carries the transport packet ([`Contents`]) besides the packet's
//! description; the run loop makes that call only when a capture (or another sink that asks
//! for contents) exists. Each node gets an IPv4 address (10.0.0.0/8, in node order), each flow a
//! client port (49152 + flow index for the first 16 384 flows, then one no other flow between
//! the same ends has: [`ports`]) and a server port (443 for QUIC, 9 for TCP and UDP: RFC 863
//! "discard", whose payload Wireshark does not dissect), listed in `summary.json` under
//! `capture`. A frame is recorded when it has arrived at the far end of
//! its link (the time the `links` table counts it), with its TTL as it crossed that link (64
//! minus the routers before it). Payload bytes are zeros: the model has none.
//!
//! A quinn flow's frames carry the UDP payload quinn-proto sent, byte for byte (protected with
//! its TLS 1.3 keys); before the first frame that needs a secret, a Decryption Secrets Block
//! holds the connection's secrets as NSS key-log lines, so Wireshark decrypts the packets.

pub(crate) mod headers;
mod pcapng;
mod ports;
mod quic;

use super::sinks::{PacketInfo, Sink};
use crate::payload::{Contents, Payload};
use crate::schema::CaptureCfg;
use crate::ScenarioError;
use headers::{PPP_HEADER, PROTO_EXPERIMENTAL, PROTO_TCP, PROTO_UDP};
use quicksim_engine::SimTime;
use quicksim_net::{ChanId, Network, NodeId};
use serde_json::json;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The capture's file name inside the run's output folder.
pub const FILE_NAME: &str = "capture.pcapng";
/// Write buffer: large enough that a write call per frame is a copy into memory.
const BUFFER_BYTES: usize = 1 << 20;
const NO_IFACE: u32 = u32::MAX;

/// What the capture needs to know of a flow.
pub struct FlowInfo<'a> {
    pub name: &'a str,
    /// "udp", "onoff", "quic", "tcp", ...
    pub kind: &'static str,
    pub src: NodeId,
    pub dst: NodeId,
    /// Connection id length of a QUIC flow with the `rfc9000` header profile.
    pub dcid_len: Option<u8>,
    /// The TLS secrets of a quinn flow's connection (written into the capture).
    pub tls_keylog: Option<Arc<quicksim_quinn::TlsKeyLog>>,
}

/// One captured flow.
struct FlowCap {
    /// Server port (the client's is in `Capture::holds`).
    server: u16,
    dcid_len: Option<u8>,
    /// The channels of the route from the client (0) and from the server (1), in order: a
    /// frame on the i-th has crossed i routers.
    path: [Vec<u32>; 2],
    /// Window scale each end offered in its SYN (RFC 7323 §2), as seen in the capture.
    wscale: [Option<u8>; 2],
    /// A quinn flow's TLS secrets and how many of its lines the file holds already.
    keylog: Option<(Arc<quicksim_quinn::TlsKeyLog>, usize)>,
}

/// The sink that writes `capture.pcapng`.
pub struct Capture {
    w: Option<pcapng::Writer<BufWriter<File>>>,
    error: Option<String>,
    file: PathBuf,
    ppp: bool,
    snaplen: u32,
    /// Interface index per channel, `NO_IFACE` if not captured.
    iface: Vec<u32>,
    /// Per interface: channel name, packets and original bytes written.
    counts: Vec<(String, u64, u64)>,
    /// Per flow; None if not captured.
    flows: Vec<Option<Box<FlowCap>>>,
    /// Per flow: its client port and family; None if not captured.
    holds: Vec<Option<ports::Hold>>,
    /// Per family (client, server, protocol, server port): its flows and the ports they hold.
    families: Vec<ports::Family>,
    /// Flows that found every port of their family taken and share one (see [`ports`]).
    collided: u64,
    /// The flows after the first 16 384: index, name and client address, for the listing.
    late: Vec<(u32, String, String)>,
    /// The summary block's node and flow lists (built once, at the start).
    listing: serde_json::Value,
    scratch: Vec<u8>,
}

/// The IPv4 address of node `n`: 10.0.0.1 for the first, in node order.
fn addr(n: NodeId) -> [u8; 4] {
    let v = n.0 + 1;
    [10, (v >> 16) as u8, (v >> 8) as u8, v as u8]
}

fn addr_str(n: NodeId) -> String {
    let a = addr(n);
    format!("{}.{}.{}.{}", a[0], a[1], a[2], a[3])
}

/// Checks `run.capture` against the network and flows (names, link type, snap length).
/// Returns the captured channels and flows.
fn select(
    cfg: &CaptureCfg,
    net: &Network<Payload>,
    flows: &[FlowInfo<'_>],
) -> Result<(Vec<bool>, Vec<bool>), ScenarioError> {
    let e = |f: &str, m: String| ScenarioError::new(format!("run.capture.{f}"), m);
    if !matches!(cfg.linktype.as_str(), "raw" | "ppp") {
        return Err(e("linktype", format!("{:?} is not a link type; use \"raw\" or \"ppp\"", cfg.linktype)));
    }
    if cfg.snaplen < 20 {
        return Err(e("snaplen", format!("{}: keep at least the 20 B IPv4 header", cfg.snaplen)));
    }
    let link_of = |c: usize| net.chan_names[c].split(':').next().unwrap_or("");
    let chans: Vec<bool> = match &cfg.links {
        None => vec![true; net.chans.len()],
        Some(names) => {
            for n in names {
                if !(0..net.chans.len()).any(|c| link_of(c) == n) {
                    return Err(e("links", format!("{n:?} is not a link")));
                }
            }
            (0..net.chans.len()).map(|c| names.iter().any(|n| n == link_of(c))).collect()
        }
    };
    let sel: Vec<bool> = match &cfg.flows {
        None => vec![true; flows.len()],
        Some(names) => {
            for n in names {
                if !flows.iter().any(|f| f.name == n) {
                    return Err(e("flows", format!("{n:?} is not a flow")));
                }
            }
            flows.iter().map(|f| names.iter().any(|n| n == f.name)).collect()
        }
    };
    Ok((chans, sel))
}

impl Capture {
    /// Checks `run.capture`; with an output folder, also opens `capture.pcapng` there and
    /// writes its header and interfaces (without one, only checks: `validate`).
    pub fn new(
        cfg: &CaptureCfg,
        dir: Option<&Path>,
        net: &Network<Payload>,
        flows: &[FlowInfo<'_>],
    ) -> Result<Option<Capture>, ScenarioError> {
        let (chans, sel) = select(cfg, net, flows)?;
        let Some(dir) = dir else { return Ok(None) };
        let file = dir.join(FILE_NAME);
        let io =
            |e: std::io::Error| ScenarioError::new("run.capture".into(), format!("{}: {e}", file.display()));
        std::fs::create_dir_all(dir).map_err(io)?;
        let f = File::create(&file).map_err(io)?;
        let ppp = cfg.linktype == "ppp";
        let comment = format!(
            "quicksim {}: simulated frames; payload bytes are zeros and the model's QUIC is \
             unencrypted; quinn flows carry quinn-proto's real datagrams, their TLS secrets in \
             Decryption Secrets Blocks",
            crate::VERSION
        );
        let mut w = pcapng::Writer::new(BufWriter::with_capacity(BUFFER_BYTES, f), "quicksim", &comment)
            .map_err(io)?;
        let linktype = if ppp { pcapng::LINKTYPE_PPP } else { pcapng::LINKTYPE_RAW };
        let mut iface = vec![NO_IFACE; net.chans.len()];
        let mut counts = Vec::new();
        for (c, ch) in net.chans.iter().enumerate() {
            if !chans[c] {
                continue;
            }
            let descr = format!(
                "{}, {} B link-layer overhead per frame{}",
                quicksim_engine::units::format_rate(ch.cfg.rate),
                ch.cfg.overhead,
                if ppp { " (the capture holds 6 of PPP's 7: not the flag)" } else { " (not in the capture)" }
            );
            w.interface(linktype, cfg.snaplen, &net.chan_names[c], &descr).map_err(io)?;
            iface[c] = counts.len() as u32;
            counts.push((net.chan_names[c].clone(), 0, 0));
        }
        let mut flow_caps = Vec::with_capacity(flows.len());
        let mut holds = Vec::with_capacity(flows.len());
        let mut families: Vec<ports::Family> = Vec::new();
        let mut family_of = std::collections::HashMap::new();
        let mut flow_list = serde_json::Map::new();
        let mut late = Vec::new();
        for (i, f) in flows.iter().enumerate() {
            if !sel[i] {
                flow_caps.push(None);
                holds.push(None);
                continue;
            }
            let client = ports::fixed(i).unwrap_or(0);
            let server = if matches!(f.kind, "quic" | "quinn") { 443 } else { 9 };
            let proto = match f.kind {
                "quic" | "quinn" | "udp" | "onoff" => "udp",
                "tcp" => "tcp",
                // A program's packets are written as they are: whatever protocol it spoke.
                "program" => "ip",
                _ => "253",
            };
            let next = families.len() as u32;
            let family = *family_of.entry((f.src, f.dst, proto, server)).or_insert(next);
            if family == next {
                families.push(ports::Family::default());
            }
            families[family as usize].add(i as u32);
            holds.push(Some(ports::Hold { port: client, family }));
            if client == 0 {
                late.push((i as u32, f.name.to_string(), addr_str(f.src)));
            }
            let chans_of = |a, b| net.path(a, b).iter().map(|c| c.0).collect::<Vec<u32>>();
            flow_list.insert(
                f.name.to_string(),
                json!({
                    "protocol": proto,
                    "client": format!("{}:{client}", addr_str(f.src)),
                    "server": format!("{}:{server}", addr_str(f.dst)),
                }),
            );
            flow_caps.push(Some(Box::new(FlowCap {
                server,
                dcid_len: f.dcid_len,
                path: [chans_of(f.src, f.dst), chans_of(f.dst, f.src)],
                wscale: [None, None],
                keylog: f.tls_keylog.as_ref().map(|k| (Arc::clone(k), 0)),
            })));
        }
        let nodes: serde_json::Map<String, serde_json::Value> =
            (0..net.names.len()).map(|n| (net.names[n].clone(), json!(addr_str(NodeId(n as u32))))).collect();
        Ok(Some(Capture {
            w: Some(w),
            error: None,
            file,
            ppp,
            snaplen: cfg.snaplen,
            iface,
            counts,
            flows: flow_caps,
            holds,
            families,
            collided: 0,
            late,
            listing: json!({ "nodes": nodes, "flows": flow_list }),
            scratch: Vec::with_capacity(256),
        }))
    }

    /// Flushes the file: the capture's block of `summary.json`, or the first write error.
    pub fn close(&mut self) -> Result<serde_json::Value, String> {
        if let Some(w) = self.w.take() {
            if let Err(e) = w.finish() {
                self.error.get_or_insert_with(|| e.to_string());
            }
        }
        if let Some(e) = &self.error {
            return Err(format!("{}: {e}", self.file.display()));
        }
        let interfaces: serde_json::Map<String, serde_json::Value> =
            self.counts.iter().map(|(n, p, b)| (n.clone(), json!({ "packets": p, "bytes": b }))).collect();
        let mut o = json!({
            "file": FILE_NAME,
            "linktype": if self.ppp { "ppp" } else { "raw" },
            "snaplen": self.snaplen,
            "packets": self.counts.iter().map(|c| c.1).sum::<u64>(),
            "interfaces": interfaces,
        });
        o["nodes"] = self.listing["nodes"].take();
        o["flows"] = self.listing["flows"].take();
        // The ports given during the run; a flow without a captured frame got none.
        for (flow, name, host) in &self.late {
            if let Some(h) = self.holds[*flow as usize].as_ref().filter(|h| h.port != 0) {
                o["flows"][name]["client"] = json!(format!("{host}:{}", h.port));
            } else {
                o["flows"][name]["client"] = json!(host);
            }
        }
        if self.collided > 0 {
            o["port_collisions"] = json!(self.collided);
            o["warning"] = json!(format!(
                "{}: {} flows found all {} client ports taken by other flows between the same hosts \
                 and share one with another flow: Wireshark merges those conversations (capture fewer \
                 flows: run.capture.flows, or spread them over more hosts)",
                self.file.display(),
                self.collided,
                ports::RANGE
            ));
        }
        Ok(o)
    }

    /// Builds the frame of `p` (link header, IPv4, transport header and the written part of
    /// the payload) into `scratch`; returns the zero bytes that follow it.
    fn build(&mut self, chan: ChanId, p: &PacketInfo, c: Contents<'_>) -> Option<usize> {
        let from = u8::from(!p.forward);
        let client = self.client_port(p.flow)?;
        let f = self.flows.get_mut(p.flow as usize)?.as_deref_mut()?;
        let hop = f.path[from as usize].iter().position(|&x| x == chan.0).unwrap_or(0);
        let ttl = headers::DEFAULT_TTL.saturating_sub(hop as u8);
        let (src, dst) = (addr(p.src), addr(p.dst));
        let [sport, dport] = if from == 0 { [client, f.server] } else { [f.server, client] };
        let b = &mut self.scratch;
        b.clear();
        if self.ppp {
            b.extend_from_slice(&PPP_HEADER);
        }
        let ip = b.len();
        if let Contents::Ip(bytes) = c {
            // A program's packet: its own bytes, with the codepoint it has on this link.
            b.extend_from_slice(bytes);
            headers::set_ipv4_ecn(&mut b[ip..], p.ecn);
            return Some(0);
        }
        let proto = match c {
            Contents::Udp | Contents::Quic(_) | Contents::Datagram(_) => PROTO_UDP,
            Contents::Tcp(_) => PROTO_TCP,
            Contents::Opaque | Contents::Ip(_) => PROTO_EXPERIMENTAL,
        };
        let ip_len = p.ip_bytes;
        headers::ipv4(b, ip_len as u16, p.uid as u16, ttl, proto, p.ecn, src, dst);
        let seg = b.len();
        let l4_len = ip_len - 20;
        let pseudo = headers::pseudo_sum(src, dst, proto, l4_len);
        let zeros = match c {
            Contents::Udp | Contents::Quic(_) => {
                headers::udp(b, sport, dport, l4_len as u16);
                if let Contents::Quic(q) = c {
                    quic::packet(b, q, p.flow, from, f.dcid_len);
                }
                headers::finish_checksum(b, seg, 6, pseudo, true);
                (ip + ip_len as usize).saturating_sub(b.len())
            }
            Contents::Datagram(d) => {
                headers::udp(b, sport, dport, l4_len as u16);
                b.extend_from_slice(d);
                headers::finish_checksum(b, seg, 6, pseudo, true);
                (ip + ip_len as usize).saturating_sub(b.len())
            }
            Contents::Tcp(s) => {
                if let Some(o) = &s.syn_opts {
                    f.wscale[from as usize] = o.wscale;
                }
                let shift = match f.wscale {
                    [Some(a), Some(b)] => [a, b][from as usize],
                    _ => 0,
                };
                headers::tcp(b, s, sport, dport, shift);
                headers::finish_checksum(b, seg, 16, pseudo, false);
                (ip + ip_len as usize).saturating_sub(b.len())
            }
            Contents::Opaque | Contents::Ip(_) => ip_len as usize - 20,
        };
        Some(zeros)
    }
}

impl Capture {
    /// Flow `flow`'s client port, given at its first frame to the flows after the first 16 384
    /// ([`ports`]).
    fn client_port(&mut self, flow: u32) -> Option<u16> {
        let h = self.holds.get(flow as usize)?.as_ref()?;
        if h.port != 0 {
            return Some(h.port);
        }
        let family = h.family as usize;
        let port = self.families[family].take_lowest(&self.holds).unwrap_or_else(|| {
            self.collided += 1;
            (ports::BASE + flow % ports::RANGE) as u16
        });
        self.holds[flow as usize].as_mut()?.port = port;
        Some(port)
    }

    /// The TLS secrets flow `flow`'s connection derived since the last frame of it that was
    /// written, as a Decryption Secrets Block: a packet is sent only after the secrets that
    /// protect it were derived (by one of the two ends), and it is captured after it was sent,
    /// so the block comes before the first frame that needs it.
    fn write_secrets(&mut self, flow: u32) {
        let Some(Some(f)) = self.flows.get_mut(flow as usize) else { return };
        let Some((log, done)) = &mut f.keylog else { return };
        if log.len() == *done {
            return;
        }
        let lines = log.lines_from(*done);
        *done += lines.len();
        let Some(w) = self.w.as_mut() else { return };
        if let Err(e) = w.secrets(pcapng::SECRETS_TLS_KEYLOG, lines.concat().as_bytes()) {
            self.error = Some(e.to_string());
            self.w = None;
        }
    }
}

impl Sink for Capture {
    fn wants_contents(&self) -> bool {
        true
    }

    fn link_frame(&mut self, now: SimTime, chan: ChanId, p: &PacketInfo, _frame_bytes: u64, c: Contents<'_>) {
        let ifc = self.iface[chan.0 as usize];
        if ifc == NO_IFACE {
            return;
        }
        if let Contents::Datagram(_) = c {
            self.write_secrets(p.flow);
        }
        if self.w.is_none() {
            return;
        }
        let Some(zeros) = self.build(chan, p, c) else { return };
        // PPP's FCS-16 (RFC 1662 §C.2) covers address to payload, complemented, low byte first.
        let fcs = if self.ppp {
            (!headers::fcs16_zeros(headers::fcs16(0xffff, &self.scratch), zeros)).to_le_bytes()
        } else {
            [0; 2]
        };
        let tail: &[u8] = if self.ppp { &fcs } else { &[] };
        let orig = self.scratch.len() + zeros + tail.len();
        let captured = orig.min(self.snaplen as usize);
        let w = self.w.as_mut().expect("checked above");
        if let Err(e) = w.packet(ifc, now.0 / 1000, &self.scratch, zeros, tail, captured) {
            self.error = Some(e.to_string());
            self.w = None;
            return;
        }
        let n = &mut self.counts[ifc as usize];
        n.1 += 1;
        n.2 += orig as u64;
    }
}
