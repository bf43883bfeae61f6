//! `run.capture`: the pcapng file read back by a small reader here (the Python tests read it
//! with a third-party library and tshark), its per-interface counts against the `links` totals,
//! its headers' checksums, and a capture changing nothing of the run's results.

use super::*;
use quicksim_scenario::output::{Column, Table};
use quicksim_scenario::plugins::Plugins;
use quicksim_scenario::run_with;
use serde_json::json;
use std::path::PathBuf;

/// A TCP, a QUIC and a UDP flow over a lossy 10 Mbit/s dumbbell.
fn scenario(capture: Option<serde_json::Value>) -> serde_json::Value {
    let mut sc = json!({
        "run": {"duration": "2s"},
        "dumbbell": {"pairs": 3, "bottleneck": {"rate": "10Mbps", "delay": "10ms", "loss": {"kind": "bernoulli", "p": 0.01},
                     "queue": {"packets": 30}}},
        "quic": {"header": "rfc9000"},
        "flows": [
            {"name": "t", "kind": "tcp", "src": "sender1", "dst": "receiver1"},
            {"name": "q", "kind": "quic", "src": "sender2", "dst": "receiver2"},
            {"name": "u", "kind": "udp", "src": "sender3", "dst": "receiver3", "size": "1000B", "interval": "5ms"}
        ]
    });
    if let Some(c) = capture {
        sc["run"]["capture"] = c;
    }
    sc
}

fn out_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("quicksim-capture-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn run_in(sc: &serde_json::Value, dir: &std::path::Path) -> Result<RunOutput, String> {
    let mut p = Plugins::default();
    p.set_out_dir(dir);
    run_with(&sc.to_string(), None, &mut |_, _| true, &p).map_err(|e| e.to_string())
}

/// One Enhanced Packet Block: interface, timestamp (ns), original length, captured bytes.
struct Rec {
    iface: u32,
    ts_ns: u64,
    orig: u32,
    data: Vec<u8>,
}

/// Reads a little-endian pcapng file: interface names and link types, and the packets.
fn read(bytes: &[u8]) -> (Vec<(String, u16)>, Vec<Rec>) {
    let u32_at = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().unwrap());
    let u16_at = |i: usize| u16::from_le_bytes(bytes[i..i + 2].try_into().unwrap());
    let (mut ifaces, mut recs) = (Vec::new(), Vec::new());
    let mut i = 0;
    assert_eq!(u32_at(0), 0x0a0d_0d0a, "a pcapng file starts with a Section Header Block");
    while i < bytes.len() {
        let (kind, total) = (u32_at(i), u32_at(i + 4) as usize);
        assert_eq!(u32_at(i + total - 4) as usize, total);
        if kind == 1 {
            // Options from offset 16: find if_name (2) and if_tsresol (9).
            let (mut o, mut name, mut tsresol) = (i + 16, String::new(), 0);
            while u16_at(o) != 0 {
                let (code, len) = (u16_at(o), u16_at(o + 2) as usize);
                if code == 2 {
                    name = String::from_utf8(bytes[o + 4..o + 4 + len].to_vec()).unwrap();
                }
                if code == 9 {
                    tsresol = bytes[o + 4];
                }
                o += 4 + len + (4 - len % 4) % 4;
            }
            assert_eq!(tsresol, 9, "nanosecond timestamps");
            ifaces.push((name, u16_at(i + 8)));
        } else if kind == 6 {
            let cap = u32_at(i + 20) as usize;
            recs.push(Rec {
                iface: u32_at(i + 8),
                ts_ns: (u64::from(u32_at(i + 12)) << 32) | u64::from(u32_at(i + 16)),
                orig: u32_at(i + 24),
                data: bytes[i + 28..i + 28 + cap].to_vec(),
            });
        }
        i += total;
    }
    (ifaces, recs)
}

/// RFC 1071 sum over `b`, folded, not complemented.
fn sum(mut acc: u32, b: &[u8]) -> u32 {
    for c in b.chunks(2) {
        acc += u32::from(c[0]) << 8 | u32::from(*c.get(1).unwrap_or(&0));
    }
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    acc
}

/// The tables are the same, floats compared by their bits.
fn same_bits(a: &[(String, Table)], b: &[(String, Table)]) -> bool {
    let bits = |c: &Column| -> Vec<u64> {
        match c {
            Column::F64(v) => v.iter().map(|x| x.to_bits()).collect(),
            Column::I64(v) => v.iter().map(|&x| x as u64).collect(),
            Column::Str(_) | Column::Dict { .. } => Vec::new(),
        }
    };
    a.len() == b.len()
        && a.iter().zip(b).all(|((na, ta), (nb, tb))| {
            na == nb
                && ta.len() == tb.len()
                && ta.iter().zip(tb).all(|((ca, xa), (cb, xb))| {
                    ca == cb && bits(xa) == bits(xb) && format!("{xa:?}") == format!("{xb:?}")
                })
        })
}

#[test]
fn every_delivered_frame_is_captured_with_valid_headers_and_the_run_is_unchanged() {
    let dir = out_dir("raw");
    let o = run_in(&scenario(Some(json!({}))), &dir).unwrap();
    let plain = go(&scenario(None), None);
    // A capture changes no result: same events, same tables, same totals besides its own block.
    assert_eq!(o.meta["trace_hash"], plain.meta["trace_hash"]);
    assert_eq!(o.meta["scenario_hash"], plain.meta["scenario_hash"]);
    // Compared bit for bit: the delay statistics' columns are NaN when off, and NaN != NaN.
    assert!(same_bits(&o.tables, &plain.tables), "the capture changed a table");
    let mut totals = o.totals.clone();
    totals.as_object_mut().unwrap().remove("capture");
    assert_eq!(totals, plain.totals);

    let (ifaces, recs) = read(&std::fs::read(dir.join("capture.pcapng")).unwrap());
    let links = o.totals["links"].as_object().unwrap();
    assert_eq!(ifaces.len(), links.len(), "every link direction by default");
    for (k, (name, linktype)) in ifaces.iter().enumerate() {
        assert_eq!(*linktype, 101, "LINKTYPE_RAW");
        let mine: Vec<&Rec> = recs.iter().filter(|r| r.iface == k as u32).collect();
        let l = &links[name];
        assert_eq!(mine.len() as u64, l["packets"].as_u64().unwrap(), "{name}");
        let ip: u64 = mine.iter().map(|r| u64::from(r.orig)).sum();
        assert_eq!(ip, l["ip_bytes"].as_u64().unwrap(), "{name}");
        // The frame bytes the links table counts are these plus PPP's 7 B per frame.
        assert_eq!(ip + 7 * mine.len() as u64, l["bytes"].as_u64().unwrap(), "{name}");
        assert!(mine.windows(2).all(|w| w[0].ts_ns <= w[1].ts_ns), "{name}: time-ordered");
    }
    let ip = |s: &str| -> [u8; 4] {
        let v: Vec<u8> = s.split('.').map(|x| x.parse().unwrap()).collect();
        [v[0], v[1], v[2], v[3]]
    };
    let nodes = o.totals["capture"]["nodes"].as_object().unwrap();
    let senders: Vec<[u8; 4]> =
        nodes.iter().filter(|(n, _)| n.starts_with("sender")).map(|(_, a)| ip(a.as_str().unwrap())).collect();
    assert_eq!(senders.len(), 3);
    let (mut tcp, mut udp) = (0, 0);
    for r in &recs {
        let d = &r.data;
        assert_eq!(d[0], 0x45);
        assert_eq!(u16::from_be_bytes([d[2], d[3]]) as u32, r.orig, "IP total length");
        assert_eq!(sum(0, &d[..20]), 0xffff, "IPv4 header checksum");
        // TTL: 64 from the host, one less after each router (access, bottleneck, egress link).
        let link = ifaces[r.iface as usize].0.split(':').next().unwrap();
        let from_sender = senders.contains(&[d[12], d[13], d[14], d[15]]);
        let routers_before = if link.starts_with("access") == from_sender { 0 } else { 2 };
        let want = if link == "bottleneck" { 63 } else { 64 - routers_before };
        assert_eq!(d[8], want, "TTL on {link}");
        // The transport checksum over pseudo-header and segment (the payload beyond the
        // snap length is zeros, which add nothing).
        let len = r.orig - 20;
        let pseudo = sum(u32::from(d[9]) + (len >> 16) + (len & 0xffff), &d[12..20]);
        assert_eq!(sum(pseudo, &d[20..]), 0xffff, "protocol {} checksum", d[9]);
        match d[9] {
            6 => tcp += 1,
            17 => udp += 1,
            p => panic!("protocol {p}"),
        }
    }
    assert!(tcp > 100 && udp > 100, "{tcp} TCP and {udp} UDP frames");
    let cap = &o.totals["capture"];
    assert_eq!(cap["packets"].as_u64().unwrap(), recs.len() as u64);
    let receiver = cap["nodes"]["receiver1"].as_str().unwrap();
    assert_eq!(cap["flows"]["t"]["server"], format!("{receiver}:9"));
    assert!(receiver.starts_with("10.0."), "{receiver}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn ppp_frames_carry_hdlc_framing_and_a_good_fcs() {
    let dir = out_dir("ppp");
    let c = json!({"links": ["bottleneck"], "flows": ["t"], "linktype": "ppp", "snaplen": 96});
    let o = run_in(&scenario(Some(c)), &dir).unwrap();
    let (ifaces, recs) = read(&std::fs::read(dir.join("capture.pcapng")).unwrap());
    assert_eq!(ifaces.len(), 2, "both directions of the bottleneck");
    assert!(ifaces.iter().all(|(n, t)| n.starts_with("bottleneck:") && *t == 9), "{ifaces:?}");
    assert!(!recs.is_empty());
    for r in &recs {
        assert_eq!(&r.data[..4], &[0xff, 0x03, 0x00, 0x21]);
        assert_eq!(r.data.len(), (r.orig as usize).min(96), "snap length");
        assert_eq!(r.data[4 + 9], 6, "only the TCP flow");
    }
    // A whole frame (a pure ACK is short enough): the FCS of RFC 1662 §C.2 checks out.
    let ack = recs.iter().find(|r| r.data.len() == r.orig as usize).expect("an uncut frame");
    let mut fcs: u16 = 0xffff;
    for &b in &ack.data {
        fcs ^= u16::from(b);
        for _ in 0..8 {
            fcs = if fcs & 1 != 0 { (fcs >> 1) ^ 0x8408 } else { fcs >> 1 };
        }
    }
    assert_eq!(fcs, 0xf0b8, "good FCS");
    let n = o.totals["capture"]["packets"].as_u64().unwrap();
    assert_eq!(n, recs.len() as u64);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_capture_settings_are_refused_naming_the_field() {
    let dir = out_dir("bad");
    for (c, want) in [
        (json!({"links": ["nope"]}), "run.capture.links: \"nope\" is not a link"),
        (json!({"flows": ["x"]}), "run.capture.flows: \"x\" is not a flow"),
        (json!({"linktype": "eth"}), "run.capture.linktype: \"eth\" is not a link type"),
        (json!({"snaplen": 10}), "run.capture.snaplen: 10"),
        (json!({"links": "bottleneck"}), "run.capture.links"),
        (json!({"colour": 1}), "run.capture.colour"),
    ] {
        let e = run_in(&scenario(Some(c.clone())), &dir).unwrap_err();
        assert!(e.starts_with(want), "{c}: {e}");
    }
    let e = err_of(scenario(Some(json!({}))));
    assert!(e.starts_with("run.capture: a capture is written to a file"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A sink added at run time that asks for frame contents (`wants_contents`) is told of every
/// delivered frame with its transport packet, as the capture is.
#[test]
fn an_added_sink_gets_every_frame_with_its_contents() {
    use quicksim_scenario::output::{Contents, PacketInfo, Sink};
    struct Frames(std::sync::Arc<std::sync::Mutex<[u64; 3]>>);
    impl Sink for Frames {
        fn wants_contents(&self) -> bool {
            true
        }
        fn link_frame(
            &mut self,
            _t: quicksim_engine::SimTime,
            _c: quicksim_net::ChanId,
            _p: &PacketInfo,
            _f: u64,
            c: Contents<'_>,
        ) {
            let i = match c {
                Contents::Tcp(_) => 0,
                Contents::Quic(_) => 1,
                _ => 2,
            };
            self.0.lock().unwrap()[i] += 1;
        }
    }
    let counts = std::sync::Arc::new(std::sync::Mutex::new([0u64; 3]));
    let mut p = Plugins::default();
    let c2 = std::sync::Arc::clone(&counts);
    p.add_sink("frames", move |_n: usize| -> Box<dyn Sink> { Box::new(Frames(std::sync::Arc::clone(&c2))) });
    let o = run_with(&scenario(None).to_string(), None, &mut |_, _| true, &p).unwrap();
    let links: u64 =
        o.totals["links"].as_object().unwrap().values().map(|l| l["packets"].as_u64().unwrap()).sum();
    let c = *counts.lock().unwrap();
    assert_eq!(c.iter().sum::<u64>(), links);
    assert!(c.iter().all(|&n| n > 100), "TCP, QUIC and UDP frames: {c:?}");
}
