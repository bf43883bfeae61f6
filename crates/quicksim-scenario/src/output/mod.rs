//! What a run writes: output sinks fed by the run loop, and the result they build (columnar
//! tables plus totals and metadata, ready for the Python side, which turns them into pandas
//! DataFrames and Parquet files).
//!
//! Every sink implements [`Sink`]: hooks for what happens in the network (queues, drops, link
//! deliveries, packets leaving and reaching hosts), for what the applications see (bytes sent
//! and delivered), for the senders' sampled state, and for transport events at the endpoint
//! boundary (for qlog-like writers), then `finish` to add tables. The built-in tables
//! ([`record::Recorder`]) are always there and called statically; further sinks (a test's toy)
//! are added through `plugins::Plugins` and called dynamically only when present; the packet
//! capture (`pcap`, selected by `run.capture`) is a sink called statically when present.

pub(crate) mod delay;
mod fanout;
mod path_rows;
pub(crate) mod pcap;
pub mod qlog;
pub(crate) mod record;
mod record_paths;
mod record_sub_queues;
mod schema;
mod sinks;
mod sub_queue_rows;

pub use crate::payload::Contents;
pub(crate) use fanout::Sinks;
pub use schema::{check_schema, table_schema, ColumnType, SUB_QUEUE_COLUMNS, TABLES};
pub use sinks::{ConnCounters, ConnSample};
pub use sinks::{PacketInfo, RunInfo, Sink, SinkFactory, TableCut, TransportEvent};

/// One column of a table.
#[derive(Debug, Clone, PartialEq)]
pub enum Column {
    F64(Vec<f64>),
    I64(Vec<i64>),
    Str(Vec<String>),
    /// Strings as indexes into `labels` (Arrow's dictionary encoding): the built-in tables'
    /// names (flows, queues, links, nodes) repeat on every row, so each is stored once and a
    /// row costs 4 bytes instead of a `String`. Row i is `labels[codes[i]]`; the column's
    /// type is `str`, as [`Column::Str`]'s.
    Dict {
        codes: Vec<u32>,
        labels: Vec<String>,
    },
}

impl Column {
    pub fn len(&self) -> usize {
        match self {
            Column::F64(v) => v.len(),
            Column::I64(v) => v.len(),
            Column::Str(v) => v.len(),
            Column::Dict { codes, .. } => codes.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The rows of a string column ([`Column::Str`] or [`Column::Dict`]), `None` for a number
    /// column.
    pub fn strings(&self) -> Option<Vec<&str>> {
        match self {
            Column::Str(v) => Some(v.iter().map(String::as_str).collect()),
            Column::Dict { codes, labels } => {
                Some(codes.iter().map(|&c| labels[c as usize].as_str()).collect())
            }
            Column::F64(_) | Column::I64(_) => None,
        }
    }
}

/// Named columns of equal length.
pub type Table = Vec<(String, Column)>;

/// Everything a run produces.
#[derive(Debug, Clone)]
pub struct RunOutput {
    pub meta: serde_json::Value,
    pub tables: Vec<(String, Table)>,
    pub totals: serde_json::Value,
}

impl RunOutput {
    pub fn table(&self, name: &str) -> Option<&Table> {
        self.tables.iter().find(|(n, _)| n == name).map(|(_, t)| t)
    }
    pub fn column(&self, table: &str, col: &str) -> Option<&Column> {
        self.table(table)?.iter().find(|(n, _)| n == col).map(|(_, c)| c)
    }
}
