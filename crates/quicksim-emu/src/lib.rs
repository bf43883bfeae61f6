//! quicksim-emu: the operating-system edge of real-time runs (`run.clock = "real"`,
//! docs/emulation.md). [`TunWire`] is the run loop's `Wire` over TUN devices (IFF_TUN |
//! IFF_NO_PI: each read or write is one IPv4 packet), one per emulated host: it waits on them
//! with `ppoll(2)` until the next event's wall time, reads what the programs sent and writes
//! what reaches their hosts. The devices, namespaces and programs are set up by the Python
//! front end (`quicksim.emulate`), which hands over the open descriptors.
//!
//! The only crate of the workspace with `unsafe`: the system calls, each in a function that
//! says why it is sound.

use quicksim_scenario::Wire;
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, RawFd};
use std::time::{Duration, Instant};

/// Below this much time to wait, the loop polls without sleeping: a sleeping thread wakes
/// tens of microseconds late on a loaded machine, a spinning one does not.
const SPIN: Duration = Duration::from_micros(50);
/// Packets read from one device per wait, so one busy program cannot starve the others or
/// the event loop.
const READ_BATCH: usize = 64;
/// The largest packet a TUN device hands over (its MTU is at most 64 KiB).
const MAX_PACKET: usize = 65_536;

/// The TUN devices of a real-time run, in the order of the run's hosts.
pub struct TunWire {
    files: Vec<File>,
    buf: Vec<u8>,
    fds: Vec<libc::pollfd>,
    /// The loop's thread runs under SCHED_FIFO (until the wire is dropped).
    pub fifo: bool,
}

/// The real-time priority of the loop's thread (SCHED_FIFO, 1-99): above every normal task,
/// below the kernel's own threaded interrupts (50), so a busy loop cannot hold them off.
const FIFO_PRIORITY: libc::c_int = 10;

impl TunWire {
    /// Takes its own copy (`dup`) of each open TUN descriptor, made non-blocking, and sets the
    /// calling thread's timer slack to 1 ns (the default 50 µs would delay every wake-up) and,
    /// where allowed (root), its scheduling to SCHED_FIFO: on a loaded machine a normal thread
    /// waits for a time slice for milliseconds, a real-time one does not. Children started
    /// from the thread get normal scheduling back (SCHED_RESET_ON_FORK), and so does the thread
    /// when the wire is dropped. Call it from the thread that runs the loop.
    pub fn from_fds(fds: &[RawFd]) -> io::Result<TunWire> {
        let files = fds.iter().map(|&fd| dup_nonblocking(fd)).collect::<io::Result<Vec<File>>>()?;
        set_timer_slack_1ns();
        // QUICKSIM_EMU_FIFO=0 keeps normal scheduling (to measure what FIFO gives).
        let fifo = std::env::var("QUICKSIM_EMU_FIFO").as_deref() != Ok("0")
            && set_scheduler(libc::SCHED_FIFO | libc::SCHED_RESET_ON_FORK, FIFO_PRIORITY);
        let fds = files
            .iter()
            .map(|f| libc::pollfd { fd: f.as_raw_fd(), events: libc::POLLIN, revents: 0 })
            .collect();
        Ok(TunWire { files, buf: vec![0; MAX_PACKET], fds, fifo })
    }

    /// Reads what is waiting on each device whose poll entry says so; true if any packet was read.
    fn drain(&mut self, got: &mut dyn FnMut(usize, &[u8])) -> io::Result<bool> {
        let mut any = false;
        for i in 0..self.files.len() {
            if self.fds[i].revents == 0 {
                continue;
            }
            if self.fds[i].revents & (libc::POLLERR | libc::POLLHUP | libc::POLLNVAL) != 0 {
                return Err(io::Error::other(format!("interface {i} closed or failed")));
            }
            for _ in 0..READ_BATCH {
                match self.files[i].read(&mut self.buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        any = true;
                        got(i, &self.buf[..n]);
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(e),
                }
            }
        }
        Ok(any)
    }
}

impl Wire for TunWire {
    fn wait(&mut self, deadline: Instant, got: &mut dyn FnMut(usize, &[u8])) -> io::Result<()> {
        loop {
            let now = Instant::now();
            let left = deadline.saturating_duration_since(now);
            let timeout = if left > SPIN { left - SPIN / 2 } else { Duration::ZERO };
            let ready = ppoll(&mut self.fds, timeout)?;
            if ready > 0 && self.drain(got)? {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Ok(());
            }
        }
    }

    fn send(&mut self, host: usize, packet: &[u8]) -> io::Result<()> {
        // A full receive queue at the program (WouldBlock) loses the packet there, as on a
        // real host; the loop counts it (`write_errors`).
        self.files[host].write(packet).map(|_| ())
    }

    fn scheduling(&self) -> &'static str {
        if self.fifo {
            "fifo"
        } else {
            "normal"
        }
    }
}

impl Drop for TunWire {
    fn drop(&mut self) {
        if self.fifo {
            set_scheduler(libc::SCHED_OTHER, 0);
        }
    }
}

/// Sets the calling thread's scheduling policy; false if not allowed.
#[allow(unsafe_code)]
fn set_scheduler(policy: libc::c_int, priority: libc::c_int) -> bool {
    let param = libc::sched_param { sched_priority: priority };
    // SAFETY: pid 0 is the calling thread; `param` lives across the call and is only read.
    unsafe { libc::sched_setscheduler(0, policy, &param) == 0 }
}

/// A non-blocking duplicate of `fd`, owned.
#[allow(unsafe_code)]
fn dup_nonblocking(fd: RawFd) -> io::Result<File> {
    // SAFETY: F_DUPFD_CLOEXEC makes a new descriptor (or fails): nothing else owns it, so the
    // File may close it. The caller's descriptor is only read, never closed here.
    let new = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0) };
    if new < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `new` is a fresh descriptor owned by nobody else (above).
    let file = unsafe { File::from_raw_fd(new) };
    // SAFETY: fcntl on a descriptor we own; no memory is passed.
    let flags = unsafe { libc::fcntl(new, libc::F_GETFL) };
    // SAFETY: as above.
    if flags < 0 || unsafe { libc::fcntl(new, libc::F_SETFL, flags | libc::O_NONBLOCK) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(file)
}

/// The calling thread's timer slack: 1 ns, so `ppoll` wakes when asked (prctl(2)).
#[allow(unsafe_code)]
fn set_timer_slack_1ns() {
    // SAFETY: PR_SET_TIMERSLACK takes an integer; no memory is passed. Failure only leaves
    // the default slack (50 µs), which the measured lateness then shows.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0);
    }
}

/// `ppoll(2)` on `fds` for at most `timeout`; the number of ready entries (0 on a signal).
#[allow(unsafe_code)]
fn ppoll(fds: &mut [libc::pollfd], timeout: Duration) -> io::Result<usize> {
    let ts =
        libc::timespec { tv_sec: timeout.as_secs() as libc::time_t, tv_nsec: timeout.subsec_nanos() as _ };
    // SAFETY: `fds` is a valid, exclusively borrowed slice of pollfd for its length; `ts`
    // lives across the call; a null signal mask keeps the thread's own.
    let n = unsafe { libc::ppoll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, &ts, std::ptr::null()) };
    if n < 0 {
        let e = io::Error::last_os_error();
        if e.kind() == io::ErrorKind::Interrupted {
            return Ok(0);
        }
        return Err(e);
    }
    Ok(n as usize)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::net::UnixDatagram;

    /// A datagram socket pair stands in for a TUN device (one packet per read and write): a
    /// packet written at one end is read by `wait` before its deadline, and a wait with
    /// nothing to read lasts until the deadline and not much longer.
    #[test]
    fn wait_reads_packets_and_otherwise_sleeps_until_the_deadline() {
        let (a, b) = UnixDatagram::pair().unwrap();
        let mut w = TunWire::from_fds(&[b.as_raw_fd()]).unwrap();
        let start = Instant::now();
        let mut got = Vec::new();
        w.wait(start + Duration::from_millis(20), &mut |h, p| got.push((h, p.to_vec()))).unwrap();
        let slept = start.elapsed();
        assert!(got.is_empty());
        assert!(slept >= Duration::from_millis(20), "woke early: {slept:?}");
        assert!(slept < Duration::from_millis(200), "woke late: {slept:?}");
        a.send(b"\x45packet").unwrap();
        let start = Instant::now();
        w.wait(start + Duration::from_secs(5), &mut |h, p| got.push((h, p.to_vec()))).unwrap();
        assert!(start.elapsed() < Duration::from_secs(1));
        assert_eq!(got, vec![(0, b"\x45packet".to_vec())]);
        w.send(0, b"back").unwrap();
        let mut buf = [0u8; 16];
        assert_eq!(a.recv(&mut buf).unwrap(), 4);
        assert_eq!(&buf[..4], b"back");
    }
}
