//! Static shortest-path (hop count) routing computed once from the topology. Only routers
//! forward: a path may pass through routers, never through another host.
//!
//! The routes are those of one breadth-first search per destination over the reversed links
//! (ties broken by link declaration order), but stored in memory linear in the topology for the
//! common case, hosts hanging off routers: a dense column (next hop of every node) is kept only for
//! destinations that forward (routers) and for hosts attached to more than one router. A host `d`
//! whose in-neighbours include exactly one router `R` (a dumbbell's senders and receivers) gets
//! no column: the search from `d` first reaches its in-neighbours (each told to send straight to
//! `d`), then expands only `R` (hosts do not forward), and from there on visits nodes exactly as
//! the search from `R` does. So every other node's next hop towards `d` is its next hop towards
//! `R`; the table stores `d`'s in-neighbours as overrides and points `d` at `R`'s column.
//!
//! A router, which looks a route up for every packet it forwards, also gets a dense row (its
//! next hop to every destination, copied from the lookup above): one load instead of the
//! destination's record, its overrides and the column. The routers' rows take as much memory as
//! their columns. In a small topology (up to `ALL_ROWS` nodes, 4 MB) every node gets a row.

use crate::{ChanId, NodeId};
use std::collections::VecDeque;

const NONE: u32 = u32::MAX;
/// Up to this many nodes every node gets a dense row (at most 4 MB), not only the routers.
const ALL_ROWS: usize = 1024;

/// How to find the next hop towards one destination.
#[derive(Clone, Copy, Debug)]
struct Dest {
    /// Range in `overrides` checked first (the destination itself, then its in-neighbours).
    lo: u32,
    hi: u32,
    /// Column consulted for every other node, or `NONE`: unreachable from everyone else.
    col: u32,
}

/// next hop (channel) from any node to any destination, or none when unreachable.
#[derive(Clone, Debug)]
pub struct RoutingTable {
    n: usize,
    dests: Vec<Dest>,
    overrides: Vec<(u32, u32)>,
    /// Dense columns, column-major: `columns[col * n + from]`.
    columns: Vec<u32>,
    /// Row of each node in `rows` (routers; every node in a small topology), else `NONE`.
    row_of: Vec<u32>,
    /// The routers' next hops, row-major: `rows[row_of[from] * n + dst]`.
    rows: Vec<u32>,
}

impl RoutingTable {
    /// Bytes the table for this topology will occupy, computed without building it (for the
    /// pre-run allocation estimate). `adj` and `forwards` as for [`RoutingTable::compute`].
    pub fn estimate_bytes(adj: &[Vec<(NodeId, ChanId)>], forwards: &[bool]) -> u64 {
        let n = adj.len() as u64;
        let cols = plan(&reverse(adj), forwards).iter().filter(|p| matches!(p, Plan::Dense)).count() as u64;
        let routers = if adj.len() <= ALL_ROWS { n } else { forwards.iter().filter(|&&f| f).count() as u64 };
        let edges: u64 = adj.iter().map(|l| l.len() as u64).sum();
        (cols + routers) * n * 4 + n * 16 + (n + edges) * 8
    }

    /// `adj[v]` lists (neighbor, channel from v to neighbor) in link declaration order, which
    /// makes ties deterministic. `forwards[v]` tells whether v may forward (routers).
    pub fn compute(adj: &[Vec<(NodeId, ChanId)>], forwards: &[bool]) -> RoutingTable {
        let n = adj.len();
        let radj = reverse(adj);
        // Which destinations get a dense column, and for the others the router they hang off.
        let plan = plan(&radj, forwards);
        let mut col_of = vec![NONE; n];
        let mut ncols = 0u32;
        for (d, p) in plan.iter().enumerate() {
            if matches!(p, Plan::Dense) {
                col_of[d] = ncols;
                ncols += 1;
            }
        }
        let mut columns = vec![NONE; ncols as usize * n];
        let mut dist = vec![u32::MAX; n];
        let mut q = VecDeque::new();
        for (dst, &col) in col_of.iter().enumerate() {
            if col == NONE {
                continue;
            }
            let next = &mut columns[col as usize * n..(col as usize + 1) * n];
            dist.iter_mut().for_each(|d| *d = u32::MAX);
            dist[dst] = 0;
            q.clear();
            q.push_back(dst);
            while let Some(v) = q.pop_front() {
                if v != dst && !forwards[v] {
                    continue;
                }
                for &(u, c) in &radj[v] {
                    if dist[u] == u32::MAX {
                        dist[u] = dist[v] + 1;
                        next[u] = c.0;
                        q.push_back(u);
                    }
                }
            }
        }
        let mut dests = Vec::with_capacity(n);
        let mut overrides = Vec::new();
        for (d, p) in plan.iter().enumerate() {
            let lo = overrides.len() as u32;
            let col = match *p {
                Plan::Dense => col_of[d],
                Plan::Via(r) => {
                    overrides.push((d as u32, NONE));
                    for &(u, c) in &radj[d] {
                        if !overrides[lo as usize..].iter().any(|&(o, _)| o == u as u32) {
                            overrides.push((u as u32, c.0));
                        }
                    }
                    r.map_or(NONE, |r| col_of[r])
                }
            };
            dests.push(Dest { lo, hi: overrides.len() as u32, col });
        }
        let mut t = RoutingTable { n, dests, overrides, columns, row_of: vec![NONE; n], rows: Vec::new() };
        let routers: Vec<usize> = (0..n).filter(|&v| n <= ALL_ROWS || forwards[v]).collect();
        let mut rows = vec![NONE; routers.len() * n];
        for (r, &v) in routers.iter().enumerate() {
            t.row_of[v] = r as u32;
            for (d, next) in rows[r * n..(r + 1) * n].iter_mut().enumerate() {
                *next = t.lookup(NodeId(v as u32), NodeId(d as u32)).map_or(NONE, |c| c.0);
            }
        }
        t.rows = rows;
        t
    }

    /// The channel `from` sends on towards `dst`, or None if `dst` is unreachable (or `from`).
    #[inline]
    pub fn next_hop(&self, from: NodeId, dst: NodeId) -> Option<ChanId> {
        let r = self.row_of[from.0 as usize];
        let c = if r != NONE {
            self.rows[r as usize * self.n + dst.0 as usize]
        } else {
            return self.lookup(from, dst);
        };
        (c != NONE).then_some(ChanId(c))
    }

    /// `next_hop` from the destination's record, overrides and column.
    #[inline(never)]
    fn lookup(&self, from: NodeId, dst: NodeId) -> Option<ChanId> {
        let d = self.dests[dst.0 as usize];
        for &(u, c) in &self.overrides[d.lo as usize..d.hi as usize] {
            if u == from.0 {
                return (c != NONE).then_some(ChanId(c));
            }
        }
        if d.col == NONE {
            return None;
        }
        let c = self.columns[d.col as usize * self.n + from.0 as usize];
        (c != NONE).then_some(ChanId(c))
    }

    /// Bytes held by the table.
    pub fn bytes(&self) -> usize {
        (self.columns.len() + self.row_of.len() + self.rows.len()) * 4
            + self.dests.len() * 12
            + self.overrides.len() * 8
    }
}

/// How one destination's routes are stored.
enum Plan {
    Dense,
    /// Routes of the given router's column (none: only the in-neighbours reach it).
    Via(Option<usize>),
}

/// Who can send to v, and on which channel, in the order the searches visit them.
fn reverse(adj: &[Vec<(NodeId, ChanId)>]) -> Vec<Vec<(usize, ChanId)>> {
    let mut radj: Vec<Vec<(usize, ChanId)>> = vec![Vec::new(); adj.len()];
    for (u, l) in adj.iter().enumerate() {
        for &(v, c) in l {
            radj[v.0 as usize].push((u, c));
        }
    }
    radj
}

fn plan(radj: &[Vec<(usize, ChanId)>], forwards: &[bool]) -> Vec<Plan> {
    (0..radj.len())
        .map(|d| {
            if forwards[d] {
                return Plan::Dense;
            }
            let mut router = None;
            for &(u, _) in &radj[d] {
                if forwards[u] {
                    match router {
                        None => router = Some(u),
                        Some(r) if r == u => {}
                        Some(_) => return Plan::Dense,
                    }
                }
            }
            Plan::Via(router)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table as the original dense algorithm computed it: one search per destination.
    fn dense(adj: &[Vec<(NodeId, ChanId)>], forwards: &[bool]) -> Vec<u32> {
        let n = adj.len();
        let radj = reverse(adj);
        let mut next = vec![NONE; n * n];
        for dst in 0..n {
            let mut dist = vec![u32::MAX; n];
            dist[dst] = 0;
            let mut q = VecDeque::from([dst]);
            while let Some(v) = q.pop_front() {
                if v != dst && !forwards[v] {
                    continue;
                }
                for &(u, c) in &radj[v] {
                    if dist[u] == u32::MAX {
                        dist[u] = dist[v] + 1;
                        next[u * n + dst] = c.0;
                        q.push_back(u);
                    }
                }
            }
        }
        next
    }

    /// A deterministic pseudo-random topology: `n` nodes, `links` full-duplex links, a share of
    /// routers; parallel links and host-to-host links included.
    fn topo(seed: u64, n: usize, links: usize) -> (Vec<Vec<(NodeId, ChanId)>>, Vec<bool>) {
        let mut s = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let mut rnd = move |m: usize| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s % m as u64) as usize
        };
        let forwards: Vec<bool> = (0..n).map(|_| rnd(3) == 0).collect();
        let mut adj = vec![Vec::new(); n];
        let mut ch = 0u32;
        for _ in 0..links {
            let a = rnd(n);
            let b = rnd(n);
            if a == b {
                continue;
            }
            adj[a].push((NodeId(b as u32), ChanId(ch)));
            adj[b].push((NodeId(a as u32), ChanId(ch + 1)));
            ch += 2;
        }
        (adj, forwards)
    }

    #[test]
    fn same_routes_as_one_search_per_destination() {
        for seed in 0..400u64 {
            let n = 2 + (seed as usize % 23);
            let (adj, fw) = topo(seed, n, (seed as usize * 7) % (3 * n) + 1);
            let want = dense(&adj, &fw);
            let t = RoutingTable::compute(&adj, &fw);
            for from in 0..n {
                for dst in 0..n {
                    let got = t.next_hop(NodeId(from as u32), NodeId(dst as u32)).map_or(NONE, |c| c.0);
                    assert_eq!(got, want[from * n + dst], "seed {seed}: {from} -> {dst}");
                }
            }
            assert!(t.bytes() as u64 <= RoutingTable::estimate_bytes(&adj, &fw));
        }
    }

    #[test]
    fn dumbbell_memory_is_linear() {
        // 2 routers + 2 * pairs hosts, each host on one router: two columns only.
        let pairs = 50_000;
        let n = 2 + 2 * pairs;
        let mut adj = vec![Vec::new(); n];
        let mut ch = 0u32;
        let mut link = |adj: &mut Vec<Vec<(NodeId, ChanId)>>, a: usize, b: usize| {
            adj[a].push((NodeId(b as u32), ChanId(ch)));
            adj[b].push((NodeId(a as u32), ChanId(ch + 1)));
            ch += 2;
        };
        link(&mut adj, 0, 1);
        for i in 0..pairs {
            link(&mut adj, 2 + 2 * i, 0);
            link(&mut adj, 3 + 2 * i, 1);
        }
        let fw: Vec<bool> = (0..n).map(|v| v < 2).collect();
        let t = RoutingTable::compute(&adj, &fw);
        assert!(t.bytes() < 64 * n, "{} bytes for {n} nodes", t.bytes());
        // sender i -> receiver j: via router1 (channel of its access link), router1 -> router2,
        // router2 -> receiver j.
        let (s, r) = (NodeId(2 + 2 * 17), NodeId(3 + 2 * 4242));
        let c = t.next_hop(s, r).unwrap();
        assert_eq!(c, ChanId(2 + 4 * 17));
        assert_eq!(t.next_hop(NodeId(0), r), Some(ChanId(0)));
        assert_eq!(t.next_hop(NodeId(1), r), Some(ChanId(2 + 4 * 4242 + 2 + 1)));
        assert_eq!(t.next_hop(r, r), None);
    }
}
