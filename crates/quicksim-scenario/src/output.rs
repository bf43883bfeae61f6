//! The result of a run: columnar tables plus totals and metadata, ready for the Python side
//! (which turns them into pandas DataFrames and Parquet files).

/// One column of a table.
#[derive(Debug, Clone, PartialEq)]
pub enum Column {
    F64(Vec<f64>),
    I64(Vec<i64>),
    Str(Vec<String>),
}

impl Column {
    pub fn len(&self) -> usize {
        match self {
            Column::F64(v) => v.len(),
            Column::I64(v) => v.len(),
            Column::Str(v) => v.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
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
