//! The `quinn-peer` program: its error paths (bad arguments, no peer) and a transfer over the
//! loopback interface, each checked through the program's exit status and its one line of
//! output. (Through the emulator: tests/test_quinn_peer.py.)

use std::net::UdpSocket;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The `quinn-peer` program cargo built for these tests. Its path comes in
/// `CARGO_BIN_EXE_quinn-peer`, but a rustc wrapper run by POSIX sh (scripts/rustc-pgo, in every
/// build of this repository) loses that variable: sh passes on no variable whose name is not a
/// shell identifier. Cargo puts the program beside the folder of the test's own executable.
fn bin() -> std::path::PathBuf {
    if let Some(p) = option_env!("CARGO_BIN_EXE_quinn-peer") {
        return p.into();
    }
    let exe = std::env::current_exe().expect("the test's own path");
    let profile_dir = exe.parent().and_then(|deps| deps.parent()).expect("target/<profile>/deps");
    profile_dir.join(format!("quinn-peer{}", std::env::consts::EXE_SUFFIX))
}

fn run(args: &[&str]) -> Output {
    Command::new(bin()).args(args).output().expect("quinn-peer starts")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A UDP port on 127.0.0.1 that nothing listens on (bound, then released).
fn free_port() -> u16 {
    UdpSocket::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

#[test]
fn bad_arguments_exit_2_with_one_line_naming_what() {
    let cases: &[(&[&str], &str)] = &[
        (&[], "no role given"),
        (&["relay"], "\"relay\" is not a role"),
        (&["client", "--connect", "127.0.0.1:4433"], "-t SECONDS is required"),
        (&["client", "-t", "5"], "--connect ADDR:PORT is required"),
        (&["client", "--connect", "127.0.0.1:4433", "-t", "-1"], "-t: \"-1\" is not a positive number"),
        (&["client", "--connect", "nowhere", "-t", "1"], "--connect: \"nowhere\" is not ADDR:PORT"),
        (&["server", "--listen", "127.0.0.1:4433", "-t", "1"], "\"-t\" is not an option of the server role"),
        (
            &["server", "--listen", "127.0.0.1:4433", "--seed", "x"],
            "--seed: \"x\" is not a non-negative integer",
        ),
        (&["server", "--listen"], "--listen: needs a value"),
        (&["server", "--listen", "127.0.0.1:1", "--config", "{\"cc\":\"vegas\"}"], "--config"),
        (&["server", "--listen", "127.0.0.1:1", "--config", "{\"mtu\":\"1000B\"}"], "--config: mtu: 1000 B"),
        (&["server", "--listen", "127.0.0.1:1", "--config", "{\"bogus\":1}"], "unknown field `bogus`"),
    ];
    for (args, want) in cases {
        let o = run(args);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        assert!(e.starts_with("quinn-peer: ") && e.contains(want), "{args:?}: {e}");
        assert!(o.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn a_client_without_a_server_says_so() {
    let port = free_port();
    let t = Instant::now();
    let o = run(&["client", "--connect", &format!("127.0.0.1:{port}"), "-t", "5"]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert_eq!(e.trim(), format!("quinn-peer client: no server at 127.0.0.1:{port}: connection refused"));
    // The kernel's port-unreachable ends it, not the 10 s handshake timeout.
    assert!(t.elapsed() < Duration::from_secs(8), "{:?}", t.elapsed());
}

#[test]
fn a_server_without_a_client_says_so() {
    let port = free_port();
    let o = run(&["server", "--listen", &format!("127.0.0.1:{port}"), "--wait", "0.3"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stderr(&o).trim(), format!("quinn-peer server: no client within 0.3 s on 127.0.0.1:{port}"));
    let busy = UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = busy.local_addr().unwrap().to_string();
    let o = run(&["server", "--listen", &addr]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).starts_with(&format!("quinn-peer server: --listen {addr}: ")), "{}", stderr(&o));
}

fn report(out: &[u8]) -> serde_json::Value {
    let text = String::from_utf8_lossy(out);
    let line = text.lines().last().unwrap_or_else(|| panic!("no report in {text:?}"));
    serde_json::from_str(line).unwrap_or_else(|e| panic!("{line}: {e}"))
}

fn spawn(args: &[&str]) -> Child {
    Command::new(bin()).args(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap()
}

#[test]
fn a_transfer_over_loopback_ends_both_programs() {
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    let cfg = "{\"cc\":\"newreno\"}";
    let server = spawn(&["server", "--listen", &addr, "--config", cfg, "--seed", "7", "--wait", "20"]);
    std::thread::sleep(Duration::from_millis(300));
    let client = spawn(&["client", "--connect", &addr, "-t", "1", "--config", cfg, "--seed", "7"]);
    let c = client.wait_with_output().unwrap();
    let s = server.wait_with_output().unwrap();
    assert!(c.status.success(), "client: {}", stderr(&c));
    assert!(s.status.success(), "server: {}", stderr(&s));
    let (c, s) = (report(&c.stdout), report(&s.stdout));
    assert_eq!(c["role"], "client");
    assert_eq!(s["role"], "server");
    let (written, got) = (c["bytes_written"].as_u64().unwrap(), s["bytes_delivered"].as_u64().unwrap());
    // Something crossed, and no more than the client wrote (the unsent rest is dropped at close).
    assert!(got > 100_000 && got <= written, "delivered {got} of {written}");
    assert!((c["duration_s"].as_f64().unwrap() - 1.0).abs() < 0.05, "{c}");
    assert_eq!(c["quinn"]["udp_payload"], 1472);
    assert!(c["timing"]["timer_lateness"]["count"].as_u64().unwrap() > 0, "{c}");
    assert!(["close", "client reset", "client silent"].contains(&s["ended_by"].as_str().unwrap()), "{s}");
}

#[test]
fn different_seeds_do_not_connect() {
    // The client trusts exactly the certificate its seed derives: another seed's server fails
    // the handshake (one line, status 1), which is why both ends take the same --seed.
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    let server = spawn(&["server", "--listen", &addr, "--seed", "1", "--wait", "20"]);
    std::thread::sleep(Duration::from_millis(300));
    let c = spawn(&["client", "--connect", &addr, "-t", "1", "--seed", "2"]).wait_with_output().unwrap();
    let s = server.wait_with_output().unwrap();
    assert_eq!(c.status.code(), Some(1), "{}", stderr(&c));
    assert!(stderr(&c).starts_with("quinn-peer client: connection closed: "), "{}", stderr(&c));
    assert_eq!(s.status.code(), Some(1), "{}", stderr(&s));
}
