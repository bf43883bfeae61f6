//! Path schedulers of multipath QUIC: which path new data goes on. The draft leaves the choice
//! to the implementation (draft-ietf-quic-multipath-21 §5.5); these are the classic ones of the
//! MPTCP and MPQUIC literature. A scheduler only orders the paths that may carry data now; the
//! connection then sends on the first that has congestion window to spare.
//!
//! Adding one: a type implementing [`PathScheduler`] and a line in [`SCHEDULERS`]; or, at run
//! time, a [`SchedulerFactory`] under a name of its own (a Python class: `quicksim.schedulers`).

use std::sync::Arc;

use quicksim_engine::SimDuration;

/// What a scheduler sees of one path when new data is to be sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PathView {
    pub id: u8,
    /// Validated, not abandoned and not suspected of having failed (its PTO fired while
    /// another path worked): may carry new data.
    pub usable: bool,
    /// Marked backup (PATH_STATUS_BACKUP, by either end): used only while no other is usable.
    pub backup: bool,
    /// Smoothed RTT (the initial RTT before a sample).
    pub srtt: SimDuration,
    /// Congestion window minus bytes in flight.
    pub room_bytes: u64,
    pub cwnd_bytes: u64,
    pub bytes_in_flight: u64,
}

/// Orders the paths for new data.
pub trait PathScheduler: std::fmt::Debug + Send {
    /// The registry name.
    fn name(&self) -> &'static str;
    /// Appends to `out` the ids of the paths to try for the next packet of new data, best
    /// first; a path left out gets no new data now. `paths` are in id order.
    fn order(&mut self, paths: &[PathView], out: &mut Vec<u8>);
    /// Sends each packet's new data on every usable path (the others get copies).
    fn redundant(&self) -> bool {
        false
    }
}

/// The usable paths: those not marked backup, or, when none of those is usable, the backup ones
/// (draft-21 §3.3: "use backup paths only if no available path is usable").
fn candidates(paths: &[PathView]) -> impl Iterator<Item = &PathView> {
    let any_available = paths.iter().any(|p| p.usable && !p.backup);
    paths.iter().filter(move |p| p.usable && p.backup != any_available)
}

/// Lowest smoothed RTT first (ties: lower id): fills the fastest path's window, then the
/// next (the Linux MPTCP default, Paasch et al. 2014).
#[derive(Debug, Default)]
pub struct MinRtt;
impl PathScheduler for MinRtt {
    fn name(&self) -> &'static str {
        "minrtt"
    }
    fn order(&mut self, paths: &[PathView], out: &mut Vec<u8>) {
        let start = out.len();
        out.extend(candidates(paths).map(|p| p.id));
        out[start..].sort_by_key(|&id| (paths.iter().find(|p| p.id == id).map(|p| p.srtt), id));
    }
}

/// Each packet on the next usable path in turn.
#[derive(Debug, Default)]
pub struct RoundRobin {
    next: u8,
}
impl PathScheduler for RoundRobin {
    fn name(&self) -> &'static str {
        "roundrobin"
    }
    fn order(&mut self, paths: &[PathView], out: &mut Vec<u8>) {
        let c: Vec<u8> = candidates(paths).map(|p| p.id).collect();
        let Some(first) = c.iter().position(|&id| id >= self.next).or((!c.is_empty()).then_some(0)) else {
            return;
        };
        out.extend(c[first..].iter().chain(&c[..first]));
        self.next = c[first].wrapping_add(1);
    }
}

/// Every packet on every usable path: the lowest-RTT path first, copies on the others.
#[derive(Debug, Default)]
pub struct Redundant;
impl PathScheduler for Redundant {
    fn name(&self) -> &'static str {
        "redundant"
    }
    fn order(&mut self, paths: &[PathView], out: &mut Vec<u8>) {
        MinRtt.order(paths, out)
    }
    fn redundant(&self) -> bool {
        true
    }
}

/// Active-standby: only the lowest-id usable path carries data; the others wait until it fails.
#[derive(Debug, Default)]
pub struct BackupOnly;
impl PathScheduler for BackupOnly {
    fn name(&self) -> &'static str {
        "backup"
    }
    fn order(&mut self, paths: &[PathView], out: &mut Vec<u8>) {
        out.extend(candidates(paths).map(|p| p.id).next());
    }
}

/// Makes a scheduler.
pub type MakeScheduler = fn() -> Box<dyn PathScheduler>;

/// The registry: name, one line of documentation, constructor. The first is the default.
pub const SCHEDULERS: &[(&str, &str, MakeScheduler)] = &[
    ("minrtt", "lowest smoothed RTT first, the next path when its window is full", || Box::new(MinRtt)),
    ("roundrobin", "each packet on the next usable path in turn", || Box::<RoundRobin>::default()),
    ("redundant", "every packet on every usable path", || Box::new(Redundant)),
    ("backup", "only the first usable path; the others are standby", || Box::new(BackupOnly)),
];

/// A scheduler by registry name.
pub fn scheduler(name: &str) -> Option<Box<dyn PathScheduler>> {
    SCHEDULERS.iter().find(|(n, _, _)| *n == name).map(|(_, _, make)| make())
}

/// A scheduler made at run time (a plugin: a Python class), under the name the scenario gives
/// it; one per connection end.
#[derive(Clone)]
pub struct SchedulerFactory {
    pub name: Arc<str>,
    pub make: Arc<dyn Fn() -> Box<dyn PathScheduler> + Send + Sync>,
}

impl std::fmt::Debug for SchedulerFactory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SchedulerFactory({:?})", self.name)
    }
}

impl PartialEq for SchedulerFactory {
    /// The same factory object.
    fn eq(&self, other: &SchedulerFactory) -> bool {
        self.name == other.name && Arc::ptr_eq(&self.make, &other.make)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(id: u8, srtt_ms: u64, backup: bool, usable: bool) -> PathView {
        let srtt = SimDuration::from_millis(srtt_ms);
        PathView { id, usable, backup, srtt, room_bytes: 10_000, cwnd_bytes: 12_000, bytes_in_flight: 2_000 }
    }

    fn order(s: &mut dyn PathScheduler, paths: &[PathView]) -> Vec<u8> {
        let mut v = Vec::new();
        s.order(paths, &mut v);
        v
    }

    #[test]
    fn every_registered_scheduler_builds_under_its_name() {
        for (name, _, _) in SCHEDULERS {
            assert_eq!(scheduler(name).unwrap().name(), *name);
        }
        assert!(scheduler("fastest").is_none());
    }

    #[test]
    fn minrtt_prefers_the_lowest_rtt_and_skips_unusable_and_backup_paths() {
        let p = [view(0, 50, false, true), view(1, 20, false, true), view(2, 5, true, true)];
        assert_eq!(order(&mut MinRtt, &p), [1, 0]);
        // Path 1 failed: path 0 alone; both failed: the backup path.
        let p2 = [p[0], view(1, 20, false, false), p[2]];
        assert_eq!(order(&mut MinRtt, &p2), [0]);
        let p3 = [view(0, 50, false, false), view(1, 20, false, false), p[2]];
        assert_eq!(order(&mut MinRtt, &p3), [2]);
        // Equal RTTs: the lower id first.
        assert_eq!(order(&mut MinRtt, &[view(0, 20, false, true), view(1, 20, false, true)]), [0, 1]);
    }

    #[test]
    fn round_robin_rotates_over_the_usable_paths() {
        let mut rr = RoundRobin::default();
        let p = [view(0, 50, false, true), view(1, 20, false, false), view(2, 20, false, true)];
        assert_eq!(order(&mut rr, &p), [0, 2]);
        assert_eq!(order(&mut rr, &p), [2, 0]);
        assert_eq!(order(&mut rr, &p), [0, 2]);
    }

    #[test]
    fn backup_only_uses_the_first_usable_path_and_redundant_all() {
        let p = [view(0, 50, false, false), view(1, 20, false, true), view(2, 10, false, true)];
        assert_eq!(order(&mut BackupOnly, &p), [1]);
        assert_eq!(order(&mut Redundant, &p), [2, 1]);
        assert!(Redundant.redundant() && !MinRtt.redundant());
    }
}
