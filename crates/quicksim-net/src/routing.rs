//! Static shortest-path (hop count) routing computed once from the topology. Only routers
//! forward: a path may pass through routers, never through another host.

use crate::{ChanId, NodeId};
use std::collections::VecDeque;

/// next_hop[node][dst] = channel to send on (or none when unreachable).
#[derive(Clone, Debug)]
pub struct RoutingTable {
    n: usize,
    next: Vec<u32>,
}

const NONE: u32 = u32::MAX;

impl RoutingTable {
    /// `adj[v]` lists (neighbor, channel from v to neighbor) in link declaration order, which
    /// makes ties deterministic. `forwards[v]` tells whether v may forward (routers).
    pub fn compute(adj: &[Vec<(NodeId, ChanId)>], forwards: &[bool]) -> RoutingTable {
        let n = adj.len();
        let mut next = vec![NONE; n * n];
        // Reverse adjacency: who can send to v, and on which channel.
        let mut radj: Vec<Vec<(usize, ChanId)>> = vec![Vec::new(); n];
        for (u, l) in adj.iter().enumerate() {
            for &(v, c) in l {
                radj[v.0 as usize].push((u, c));
            }
        }
        let mut dist = vec![u32::MAX; n];
        let mut q = VecDeque::new();
        for dst in 0..n {
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
                        next[u * n + dst] = c.0;
                        q.push_back(u);
                    }
                }
            }
        }
        RoutingTable { n, next }
    }

    pub fn next_hop(&self, from: NodeId, dst: NodeId) -> Option<ChanId> {
        let c = self.next[from.0 as usize * self.n + dst.0 as usize];
        (c != NONE).then_some(ChanId(c))
    }
}
