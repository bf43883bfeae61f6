//! The output tables' schema, written once: every built-in table with its columns and types in
//! order. The recorder's tables are checked against it (debug builds) and the Python side reads
//! it (`_core.table_schema()`) instead of repeating it.

use super::{Column, Table};

/// The type of a column, as [`Column`] holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnType {
    F64,
    I64,
    Str,
}

impl ColumnType {
    pub fn of(c: &Column) -> ColumnType {
        match c {
            Column::F64(_) => ColumnType::F64,
            Column::I64(_) => ColumnType::I64,
            Column::Str(_) | Column::Dict { .. } => ColumnType::Str,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            ColumnType::F64 => "f64",
            ColumnType::I64 => "i64",
            ColumnType::Str => "str",
        }
    }
}

use ColumnType::{Str, F64, I64};

/// Every table a run writes, with its columns in order: the one description of the output that
/// the recorder's tables are checked against and the Python side reads (`table_schema`).
/// Units are in the column names (`t_s`, `cwnd_bytes`); `ssthresh_bytes` is -1 while unset.
pub const TABLES: &[(&str, &[(&str, ColumnType)])] = &[
    (
        "flows",
        &[
            ("t_s", F64),
            ("flow", Str),
            ("app_sent_bytes", I64),
            ("wire_sent_bytes", I64),
            ("sent_packets", I64),
            ("wire_recv_bytes", I64),
            ("recv_packets", I64),
            ("delivered_bytes", I64),
            // The delay statistics (`output/delay/`): NaN where the bin had no delivery.
            ("owd_mean_s", F64),
            ("owd_p50_s", F64),
            ("owd_p95_s", F64),
            ("owd_p99_s", F64),
            ("queueing_mean_s", F64),
            ("queueing_p95_s", F64),
        ],
    ),
    (
        "links",
        &[
            ("t_s", F64),
            ("link", Str),
            ("bytes", I64),
            ("utilization", F64),
            ("queueing_mean_s", F64),
            ("queueing_p95_s", F64),
            ("queueing_p99_s", F64),
        ],
    ),
    ("queues", &[("t_s", F64), ("queue", Str), ("packets", I64), ("bytes", I64)]),
    ("drops", &[("t_s", F64), ("queue", Str), ("flow", Str), ("bytes", I64), ("reason", Str)]),
    (
        "conn",
        &[
            ("t_s", F64),
            ("flow", Str),
            ("cwnd_bytes", I64),
            ("ssthresh_bytes", I64),
            ("inflight_bytes", I64),
            ("srtt_s", F64),
            ("latest_rtt_s", F64),
            ("min_rtt_s", F64),
            // NaN for quinn flows (not exposed); `rto_s` is QUIC's PTO period.
            ("rttvar_s", F64),
            ("rto_s", F64),
            ("packets_sent", I64),
            ("packets_acked", I64),
            ("packets_lost", I64),
            ("retransmitted_bytes", I64),
            ("timeouts", I64),
            ("ack_frames_sent", I64),
            ("ce_marks", I64),
            ("ecn_events", I64),
        ],
    ),
    ("streams", &[("t_s", F64), ("flow", Str), ("stream", I64), ("delivered_bytes", I64)]),
    (
        "packets",
        &[
            ("t_ps", I64),
            ("t_s", F64),
            ("flow", Str),
            ("node", Str),
            ("uid", I64),
            ("bytes", I64),
            ("event", Str),
        ],
    ),
];

/// The column a run with multipath flows adds at the end of `flows` and `conn`
/// (`output::path_rows`): -1 on the rows of whole connections, the path id on a path's rows.
/// Runs without multipath flows do not have it.
pub const PATH_COLUMN: (&str, ColumnType) = ("path", I64);

/// The tables that get [`PATH_COLUMN`] in a run with multipath flows.
pub const PATH_TABLES: &[&str] = &["flows", "conn"];

/// The columns, in order, that a run recording a DualPI2 queue adds at the end of `queues`:
/// per sub-queue (L4S, then Classic) its length, the sojourn time of the packet it served last
/// (enqueue to dequeue, what DualPI2's step marks on), and its marks and drops so far. On the
/// rows of other queues the integers are -1 and the sojourn NaN.
pub const SUB_QUEUE_COLUMNS: &[(&str, ColumnType)] = &[
    ("l_packets", I64),
    ("l_bytes", I64),
    ("l_sojourn_s", F64),
    ("l_marks", I64),
    ("l_drops", I64),
    ("c_packets", I64),
    ("c_bytes", I64),
    ("c_sojourn_s", F64),
    ("c_marks", I64),
    ("c_drops", I64),
];

/// `TABLES` as JSON: `[{"table": name, "columns": [{"name": ..., "type": "f64" | "i64" | "str"}]}]`
/// (a list, so the order survives).
pub fn table_schema() -> serde_json::Value {
    TABLES
        .iter()
        .map(|(table, cols)| {
            let cols: Vec<_> = cols
                .iter()
                .map(|(name, ty)| serde_json::json!({"name": name, "type": ty.as_str()}))
                .collect();
            serde_json::json!({"table": table, "columns": cols})
        })
        .collect()
}

/// Whether `tables` are exactly the tables of `TABLES`: the same names, columns and types, in
/// order, every column of a table equally long. The error names the first difference.
pub fn check_schema(tables: &[(String, Table)]) -> Result<(), String> {
    let got: Vec<&str> = tables.iter().map(|(n, _)| n.as_str()).collect();
    let want: Vec<&str> = TABLES.iter().map(|(n, _)| *n).collect();
    if got != want {
        return Err(format!("tables {got:?}, expected {want:?}"));
    }
    for ((name, table), (_, cols)) in tables.iter().zip(TABLES) {
        let mut got: Vec<(&str, ColumnType)> =
            table.iter().map(|(c, v)| (c.as_str(), ColumnType::of(v))).collect();
        if PATH_TABLES.contains(&name.as_str()) && got.last() == Some(&PATH_COLUMN) {
            got.pop();
        }
        if name == "queues" && got.ends_with(SUB_QUEUE_COLUMNS) {
            got.truncate(got.len() - SUB_QUEUE_COLUMNS.len());
        }
        if got != *cols {
            return Err(format!("table {name}: columns {got:?}, expected {cols:?}"));
        }
        if let Some((c, v)) = table.iter().find(|(_, v)| v.len() != table[0].1.len()) {
            return Err(format!(
                "table {name}: column {c} has {} rows, {} has {}",
                v.len(),
                table[0].0,
                table[0].1.len()
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_that_differs_from_the_schema_is_named() {
        let mut tables: Vec<(String, Table)> = TABLES
            .iter()
            .map(|(n, cols)| {
                let t = cols
                    .iter()
                    .map(|(c, ty)| {
                        let col = match ty {
                            F64 => Column::F64(vec![0.5]),
                            I64 => Column::I64(vec![1]),
                            Str => Column::Str(vec!["a".into()]),
                        };
                        (c.to_string(), col)
                    })
                    .collect();
                (n.to_string(), t)
            })
            .collect();
        assert_eq!(check_schema(&tables), Ok(()));
        tables[1].1[3].1 = Column::I64(vec![0]); // links.utilization is f64
        assert!(check_schema(&tables).unwrap_err().starts_with("table links: columns"));
        tables[1].1[3].1 = Column::F64(vec![0.0, 1.0]);
        assert!(check_schema(&tables).unwrap_err().contains("column utilization has 2 rows"));
        tables.pop();
        assert!(check_schema(&tables).unwrap_err().starts_with("tables ["));
    }

    #[test]
    fn the_json_form_keeps_the_order() {
        let s = table_schema();
        assert_eq!(s[0]["table"], "flows");
        assert_eq!(s[0]["columns"][0], serde_json::json!({"name": "t_s", "type": "f64"}));
        assert_eq!(s[6]["columns"][0], serde_json::json!({"name": "t_ps", "type": "i64"}));
        assert_eq!(s.as_array().unwrap().len(), TABLES.len());
    }
}
