//! Tests of the growing tables' row caps (`RowCaps`): apart from `record.rs`, which is near
//! the 800-line limit.

use super::*;

fn sample() -> ConnSample {
    ConnSample {
        cwnd: 1,
        ssthresh: 2,
        inflight: 3,
        srtt: SimDuration(4),
        latest_rtt: SimDuration(5),
        min_rtt: SimDuration(6),
        rttvar: None,
        rto: None,
    }
}

/// Any caps, any `max_samples`, any sequence of rows (10^4 random cases of a xorshift
/// stream): each growing table holds exactly the rows a model of the rules keeps (the series
/// cap `max_samples` first, then the table's cap), and a table that reached its cap is noted
/// once, with its cap and the time of the first row it left out.
#[test]
fn growing_tables_stop_at_their_caps() {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = |n: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n
    };
    for case in 0..10_000 {
        let caps = [next(20), next(20), next(20), next(20)].map(|c| c as usize);
        let max_samples = next(30);
        let mut r = Recorder::new(
            SimDuration::from_millis(1),
            2,
            true,
            vec![true],
            vec![true],
            true,
            vec![true, true],
            vec![true, false],
            max_samples,
        );
        r.caps = RowCaps { drops: caps[0], queues: caps[1], conn: caps[2], packets: caps[3] };
        r.set_horizon(SimTime::from_millis(100));
        // The model: rows kept per table, per series (queue 0; conn flows 0 and 1), and the
        // time of the first row each table left out at its cap.
        let (mut rows, mut series, mut first_cut) = ([0usize; 4], [0u64; 3], [None; 4]);
        for i in 0..next(60) {
            let t = SimTime(i * 1_000_000);
            let k = next(4) as usize;
            let flow = (i % 2) as usize;
            match k {
                0 => r.on_dropped(t, ChanId(0), flow as u32, 100, DropReason::Overflow),
                1 => r.queue_changed(t, ChanId(0), i as usize, 100 * i),
                2 => r.conn_sample(t, flow as u32, &sample(), &ConnCounters::default()),
                _ => r.trace(t, 0, NodeId(0), i, 100, false),
            }
            let s = match k {
                1 => Some(0),
                2 => Some(1 + flow),
                _ => None,
            };
            if s.is_some_and(|s| series[s] >= max_samples) {
                continue; // the series' own cap: not the table's
            }
            if rows[k] >= caps[k] {
                first_cut[k].get_or_insert(t.0);
                continue;
            }
            rows[k] += 1;
            if let Some(s) = s {
                series[s] += 1;
            }
        }
        let got = [r.drops.t_ps.len(), r.queues.t_ps.len(), r.conn_t.len(), r.trace.t_ps.len()];
        assert_eq!(got, rows, "case {case}: caps {caps:?}, max_samples {max_samples}");
        let names = ["drops", "queues", "conn", "packets"];
        let expected: Vec<TableCut> = {
            let mut v: Vec<(u64, usize)> =
                first_cut.iter().enumerate().filter_map(|(k, t)| t.map(|t| (t, k))).collect();
            v.sort_unstable(); // noted in the order the tables reached their caps
            v.into_iter().map(|(t_ps, k)| TableCut { table: names[k], t_ps, rows: caps[k] as u64 }).collect()
        };
        assert_eq!(r.truncated_tables(), expected, "case {case}");
    }
}
