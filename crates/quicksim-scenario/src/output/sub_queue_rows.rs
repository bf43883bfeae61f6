//! The `queues` table's sub-queue columns (`SUB_QUEUE_COLUMNS`): the state of each row of a
//! run that records a dual-queue discipline (DualPI2), and the columns made of it. Filled by the
//! recorder (`record_sub_queues`).

use super::schema::SUB_QUEUE_COLUMNS;
use super::{Column, Table};
use quicksim_net::{SubQueue, SubQueues};

/// The sub-queue state of each `queues` row: None on the rows of a queue without sub-queues.
#[derive(Default)]
pub(crate) struct SubQueueRows {
    pub(super) rows: Vec<Option<SubQueues>>,
    /// The last `queue_changed` wrote a row (so the `sub_queues_changed` after it fills it).
    pub(super) pending: bool,
}

impl SubQueueRows {
    /// The columns of [`SUB_QUEUE_COLUMNS`], at the end of the `queues` table.
    pub(super) fn add_to(&self, tables: &mut [(String, Table)]) {
        let Some((_, t)) = tables.iter_mut().find(|(n, _)| n == "queues") else { return };
        type Get = fn(&SubQueues) -> &SubQueue;
        let sides: [Get; 2] = [|q| &q.l, |q| &q.c];
        let rows = &self.rows;
        let ints = |side: Get, f: fn(&SubQueue) -> u64| {
            Column::I64(rows.iter().map(|r| r.as_ref().map_or(-1, |q| f(side(q)) as i64)).collect())
        };
        let mut cols = Vec::with_capacity(SUB_QUEUE_COLUMNS.len());
        for side in sides {
            cols.push(ints(side, |q| q.len.packets as u64));
            cols.push(ints(side, |q| q.len.bytes));
            cols.push(Column::F64(
                rows.iter().map(|r| r.as_ref().map_or(f64::NAN, |q| side(q).sojourn.as_secs_f64())).collect(),
            ));
            cols.push(ints(side, |q| q.marks));
            cols.push(ints(side, |q| q.drops));
        }
        t.extend(SUB_QUEUE_COLUMNS.iter().zip(cols).map(|((n, _), c)| (n.to_string(), c)));
    }
}
