//! The memory this process may still allocate: the smallest of every limit it really has, each
//! read before the run (never during it), so that the budget in `budget` is measured against
//! the limit that would abort the process first, and an error can say which one that is.
//!
//! Read from files, not system calls: the workspace forbids `unsafe` (which `getrlimit` needs),
//! and Linux reports the same numbers in `/proc/self/limits` (RLIMIT_AS, the soft limit),
//! `/proc/self/status` (VmSize, the address space already in use), `/proc/meminfo`
//! (MemAvailable) and the cgroup files of `/proc/self/cgroup`'s groups, found through
//! `/proc/self/mountinfo` (cgroup v2 `memory.max` − `memory.current`; v1
//! `memory.limit_in_bytes` − `memory.usage_in_bytes`; of the process's group and each group
//! above it, since a parent's limit binds its children).

use crate::units::parse_bytes;
use crate::ScenarioError;
use std::path::{Path, PathBuf};

/// Where a limit comes from, as an error names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    Env,
    MemAvailable,
    AddressSpace,
    CgroupV2,
    CgroupV1,
    Default,
}

impl Source {
    pub fn describe(self) -> &'static str {
        match self {
            Source::Env => "QUICKSIM_MEMORY_LIMIT",
            Source::MemAvailable => "MemAvailable of /proc/meminfo",
            Source::AddressSpace => "RLIMIT_AS (ulimit -v) minus the address space in use",
            Source::CgroupV2 => "the cgroup's memory.max minus memory.current",
            Source::CgroupV1 => "the cgroup's memory.limit_in_bytes minus memory.usage_in_bytes",
            Source::Default => "the default of 16 GB (no limit could be read)",
        }
    }
}

/// The bytes this process may still allocate, and the limit that says so.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limit {
    pub bytes: u64,
    pub source: Source,
}

impl Limit {
    /// "4.0 GB available (RLIMIT_AS ...)": what errors and truncation notes say.
    pub fn describe(&self) -> String {
        format!("{} available ({})", super::gb(self.bytes), self.source.describe())
    }
}

/// The smallest of the limits that apply (`QUICKSIM_MEMORY_LIMIT` can only lower it).
pub(crate) fn memory_limit() -> Result<Limit, ScenarioError> {
    let mut found = Vec::new();
    if let Ok(v) = std::env::var("QUICKSIM_MEMORY_LIMIT") {
        let bytes = parse_bytes(v.trim())
            .map_err(|e| ScenarioError::new("QUICKSIM_MEMORY_LIMIT".into(), format!("{v:?}: {e}")))?;
        found.push(Limit { bytes, source: Source::Env });
    }
    let proc = Path::new("/proc/self");
    let read = |p: &Path| std::fs::read_to_string(p).ok();
    if let Some(b) = read(Path::new("/proc/meminfo")).as_deref().and_then(|t| kib_field(t, "MemAvailable:")) {
        found.push(Limit { bytes: b, source: Source::MemAvailable });
    }
    if let (Some(lim), Some(st)) = (read(&proc.join("limits")), read(&proc.join("status"))) {
        if let Some(b) = address_space_left(&lim, &st) {
            found.push(Limit { bytes: b, source: Source::AddressSpace });
        }
    }
    if let (Some(cg), Some(mi)) = (read(&proc.join("cgroup")), read(&proc.join("mountinfo"))) {
        found.extend(cgroup_left(&cg, &mi, Path::new("/")));
    }
    Ok(smallest(&found))
}

/// The smallest limit of `found` (the first of equals), or the default.
pub(crate) fn smallest(found: &[Limit]) -> Limit {
    let default = Limit { bytes: 16_000_000_000, source: Source::Default };
    found
        .iter()
        .copied()
        .fold(None, |m: Option<Limit>, l| match m {
            Some(m) if m.bytes <= l.bytes => Some(m),
            _ => Some(l),
        })
        .unwrap_or(default)
}

/// A "Key:  123 kB" field of /proc/meminfo or /proc/self/status, in bytes.
fn kib_field(text: &str, key: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(key))?;
    let kib: u64 = line[key.len()..].split_whitespace().next()?.parse().ok()?;
    Some(kib.saturating_mul(1024))
}

/// RLIMIT_AS's soft limit (from /proc/self/limits) minus VmSize (from /proc/self/status);
/// None when unlimited.
pub(crate) fn address_space_left(limits: &str, status: &str) -> Option<u64> {
    let line = limits.lines().find(|l| l.starts_with("Max address space"))?;
    let soft = line["Max address space".len()..].split_whitespace().next()?;
    let soft: u64 = soft.parse().ok()?; // "unlimited" does not parse: no limit
    let used = kib_field(status, "VmSize:").unwrap_or(0);
    Some(soft.saturating_sub(used))
}

/// What every memory cgroup the process is in (and each one above it) still allows, one entry
/// per hierarchy (the tightest level of each). `root` prefixes the mount points (tests).
pub(crate) fn cgroup_left(cgroup: &str, mountinfo: &str, root: &Path) -> Vec<Limit> {
    let mut out = Vec::new();
    for line in cgroup.lines() {
        // "0::/path" (v2) or "4:memory:/path" (v1).
        let mut parts = line.splitn(3, ':');
        let (Some(_), Some(ctrls), Some(path)) = (parts.next(), parts.next(), parts.next()) else { continue };
        let v2 = ctrls.is_empty();
        if !v2 && !ctrls.split(',').any(|c| c == "memory") {
            continue;
        }
        let Some((mount_root, mount_point)) = mount_of(mountinfo, v2) else { continue };
        // The group's folder: its path below the mount's root (a container sees its own group
        // mounted as the root).
        let rel = path.strip_prefix(mount_root.as_str()).unwrap_or(path).trim_start_matches('/');
        let base = root.join(mount_point.trim_start_matches('/'));
        let (limit, usage, source) = if v2 {
            ("memory.max", "memory.current", Source::CgroupV2)
        } else {
            ("memory.limit_in_bytes", "memory.usage_in_bytes", Source::CgroupV1)
        };
        let mut dir: PathBuf = base.join(rel);
        let mut best: Option<u64> = None;
        loop {
            let num = |f: &str| std::fs::read_to_string(dir.join(f)).ok()?.trim().parse::<u64>().ok();
            // "max" (v2) does not parse; v1's "unlimited" is a number near 2^63.
            if let (Some(l), Some(u)) = (num(limit), num(usage)) {
                if l < 1 << 62 {
                    let left = l.saturating_sub(u);
                    best = Some(best.map_or(left, |b| b.min(left)));
                }
            }
            if dir == base || !dir.pop() || !dir.starts_with(&base) {
                break;
            }
        }
        if let Some(bytes) = best {
            out.push(Limit { bytes, source });
        }
    }
    out
}

/// The (root within the hierarchy, mount point) of the cgroup v2 mount, or of the v1 mount
/// with the memory controller, from /proc/self/mountinfo.
fn mount_of(mountinfo: &str, v2: bool) -> Option<(String, String)> {
    for line in mountinfo.lines() {
        let Some((pre, post)) = line.split_once(" - ") else { continue };
        let f: Vec<&str> = pre.split_whitespace().collect();
        let g: Vec<&str> = post.split_whitespace().collect();
        if f.len() < 5 || g.len() < 3 {
            continue;
        }
        let wanted =
            if v2 { g[0] == "cgroup2" } else { g[0] == "cgroup" && g[2].split(',').any(|o| o == "memory") };
        if wanted {
            return Some((f[3].to_string(), f[4].to_string()));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn address_space_is_the_soft_limit_minus_what_is_mapped() {
        let limits = "Limit                     Soft Limit           Hard Limit           Units\n\
                      Max address space         4294967296           unlimited            bytes\n";
        let status = "Name:\tpython3\nVmSize:\t  1048576 kB\n";
        assert_eq!(address_space_left(limits, status), Some(4_294_967_296 - 1_073_741_824));
        let none = "Max address space         unlimited            unlimited            bytes\n";
        assert_eq!(address_space_left(none, status), None);
    }

    #[test]
    fn the_smallest_limit_wins_and_is_named() {
        let l = |bytes, source| Limit { bytes, source };
        let found = [l(8, Source::MemAvailable), l(4, Source::AddressSpace), l(6, Source::CgroupV2)];
        assert_eq!(smallest(&found), l(4, Source::AddressSpace));
        assert_eq!(smallest(&[]).source, Source::Default);
    }

    fn fake_group(dir: &Path, files: &[(&str, &str)]) {
        std::fs::create_dir_all(dir).unwrap();
        for (f, v) in files {
            std::fs::write(dir.join(f), v).unwrap();
        }
    }

    #[test]
    fn cgroups_v1_and_v2_count_every_level_above_the_process() {
        let root = std::env::temp_dir().join(format!("quicksim-cgroup-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        // v2: the parent allows 3 GB of which 2 GB used; the group itself is unlimited.
        fake_group(
            &root.join("sys/fs/cgroup/a"),
            &[("memory.max", "3000000000\n"), ("memory.current", "2000000000\n")],
        );
        fake_group(&root.join("sys/fs/cgroup/a/b"), &[("memory.max", "max\n"), ("memory.current", "100\n")]);
        // v1, mounted with a container's own group as its root: 500 MB, 100 MB used.
        fake_group(
            &root.join("sys/fs/cgroup/memory"),
            &[("memory.limit_in_bytes", "500000000\n"), ("memory.usage_in_bytes", "100000000\n")],
        );
        let cgroup = "4:memory:/docker/x\n1:cpu:/other\n0::/a/b\n";
        let mountinfo = "31 23 0:28 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n\
                         35 31 0:32 /docker/x /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n\
                         32 31 0:29 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n\
                         41 31 0:38 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n";
        let got = cgroup_left(cgroup, mountinfo, &root);
        assert_eq!(
            got,
            vec![
                Limit { bytes: 400_000_000, source: Source::CgroupV1 },
                Limit { bytes: 1_000_000_000, source: Source::CgroupV2 },
            ]
        );
        std::fs::remove_dir_all(&root).unwrap();
    }
}
