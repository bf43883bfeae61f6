//! The recorder's hooks for the `queues` table's sub-queue columns (`sub_queue_rows`), present
//! only in a run that records a dual-queue discipline (DualPI2): apart from `record.rs` (one file
//! per concern). A run without one has the table exactly as before.

use super::record::Recorder;
use super::Table;
use quicksim_engine::SimTime;
use quicksim_net::{ChanId, SubQueues};

impl Recorder {
    /// Adds the sub-queue columns to `queues`: some recorded channel (`queue_sel`) has a
    /// discipline with sub-queues (`has`, per channel).
    pub(crate) fn record_sub_queues(&mut self, has: &[bool]) {
        if has.iter().zip(&self.queue_sel).any(|(&h, &sel)| h && sel) {
            self.sub_queues = Some(Box::default());
        }
    }

    /// `queue_changed` wrote a row (`wrote`) or not: a row of sub-queue state to come.
    #[inline]
    pub(super) fn sub_queue_row(&mut self, wrote: bool) {
        if let Some(s) = &mut self.sub_queues {
            s.pending = wrote;
            if wrote {
                s.rows.push(None);
            }
        }
    }

    /// The sub-queues of `chan` after the change `queue_changed` just reported.
    pub(crate) fn sub_queues_changed(&mut self, _now: SimTime, _chan: ChanId, sub: &SubQueues) {
        if let Some(s) = &mut self.sub_queues {
            if std::mem::take(&mut s.pending) {
                *s.rows.last_mut().expect("a row was written") = Some(*sub);
            }
        }
    }

    /// The sub-queue columns at the end of the `queues` table (a run recording DualPI2).
    pub(crate) fn add_sub_queue_columns(&self, tables: &mut [(String, Table)]) {
        if let Some(s) = &self.sub_queues {
            s.add_to(tables);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::sinks::Sink;
    use crate::output::{Column, SUB_QUEUE_COLUMNS};
    use quicksim_engine::SimDuration;
    use quicksim_net::QueueLen;
    use quicksim_net::SubQueue;

    /// Channel 0 is a DualPI2, channel 1 a single queue, channel 2 a DualPI2 not recorded.
    #[test]
    fn rows_of_other_queues_hold_no_value_and_unrecorded_changes_no_row() {
        let bin = SimDuration::from_millis(500);
        let sel = vec![true, true, false];
        let mut r = Recorder::new(bin, 1, true, vec![false; 3], sel, false, vec![false], vec![false], 10);
        r.record_sub_queues(&[true, false, true]);
        let sub = SubQueues {
            l: SubQueue {
                len: QueueLen { packets: 1, bytes: 100 },
                sojourn: SimDuration::from_micros(250),
                marks: 3,
                drops: 0,
            },
            c: SubQueue {
                len: QueueLen { packets: 2, bytes: 300 },
                sojourn: SimDuration::ZERO,
                marks: 0,
                drops: 4,
            },
        };
        let t = SimTime::from_millis(1);
        r.queue_changed(t, ChanId(0), 3, 400);
        r.sub_queues_changed(t, ChanId(0), &sub);
        r.queue_changed(t, ChanId(1), 5, 500);
        r.queue_changed(t, ChanId(2), 1, 10);
        r.sub_queues_changed(t, ChanId(2), &sub);
        let mut tables = vec![("queues".to_string(), Table::new())];
        r.add_sub_queue_columns(&mut tables);
        let col = |n: &str| tables[0].1.iter().find(|(c, _)| c == n).map(|(_, v)| v.clone()).unwrap();
        assert_eq!(col("l_packets"), Column::I64(vec![1, -1]));
        assert_eq!(col("c_bytes"), Column::I64(vec![300, -1]));
        assert_eq!(col("l_marks"), Column::I64(vec![3, -1]));
        assert_eq!(col("c_drops"), Column::I64(vec![4, -1]));
        match col("l_sojourn_s") {
            Column::F64(v) => assert!(v[0] == 250e-6 && v[1].is_nan(), "{v:?}"),
            c => panic!("{c:?}"),
        }
        let names: Vec<&str> = tables[0].1.iter().map(|(c, _)| c.as_str()).collect();
        assert_eq!(names, SUB_QUEUE_COLUMNS.iter().map(|(n, _)| *n).collect::<Vec<_>>());
    }

    #[test]
    fn no_dual_queue_recorded_no_columns() {
        let bin = SimDuration::from_millis(500);
        let mut r = Recorder::new(
            bin,
            1,
            true,
            vec![false; 2],
            vec![false, true],
            false,
            vec![false],
            vec![false],
            10,
        );
        r.record_sub_queues(&[true, false]);
        assert!(r.sub_queues.is_none());
    }
}
