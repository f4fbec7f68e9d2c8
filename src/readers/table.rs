//! What every reader hands out: a [`Table`] of named columns in plain engine types, which the
//! bindings turn into a Polars frame with one generic conversion. A reader owns its column layout
//! (its batch type converts itself into a `Table`), so a new reader needs no binding code.

use crate::sparse::SparseMatrix;

/// The type of one column of a [`Table`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColumnKind {
    Float64,
    /// Float64 with nulls.
    NullableFloat64,
    Int64,
    /// Text with nulls.
    NullableText,
    /// A sparse column: `List(Struct({"index": UInt32, "value": Float64}))`.
    Sparse,
    /// A list of bytes per row (UInt8), e.g. the namespace letter of each feature.
    ByteList,
}

/// The values of one column of a [`Table`].
#[derive(Clone, Debug, PartialEq)]
pub enum ColumnData {
    Float64(Vec<f64>),
    NullableFloat64(Vec<Option<f64>>),
    Int64(Vec<i64>),
    NullableText(Vec<Option<String>>),
    Sparse(SparseMatrix<u32, f64>),
    /// Row `r` owns `values[offsets[r]..offsets[r + 1]]`.
    ByteList {
        offsets: Vec<i64>,
        values: Vec<u8>,
    },
}

impl ColumnData {
    pub fn kind(&self) -> ColumnKind {
        match self {
            ColumnData::Float64(_) => ColumnKind::Float64,
            ColumnData::NullableFloat64(_) => ColumnKind::NullableFloat64,
            ColumnData::Int64(_) => ColumnKind::Int64,
            ColumnData::NullableText(_) => ColumnKind::NullableText,
            ColumnData::Sparse(_) => ColumnKind::Sparse,
            ColumnData::ByteList { .. } => ColumnKind::ByteList,
        }
    }

    /// A column of `kind` without rows.
    pub fn empty(kind: ColumnKind) -> Self {
        match kind {
            ColumnKind::Float64 => ColumnData::Float64(Vec::new()),
            ColumnKind::NullableFloat64 => ColumnData::NullableFloat64(Vec::new()),
            ColumnKind::Int64 => ColumnData::Int64(Vec::new()),
            ColumnKind::NullableText => ColumnData::NullableText(Vec::new()),
            ColumnKind::Sparse => ColumnData::Sparse(SparseMatrix {
                offsets: vec![0],
                indices: Vec::new(),
                values: Vec::new(),
            }),
            ColumnKind::ByteList => ColumnData::ByteList { offsets: vec![0], values: Vec::new() },
        }
    }

    /// The number of rows.
    pub fn len(&self) -> usize {
        match self {
            ColumnData::Float64(values) => values.len(),
            ColumnData::NullableFloat64(values) => values.len(),
            ColumnData::Int64(values) => values.len(),
            ColumnData::NullableText(values) => values.len(),
            ColumnData::Sparse(matrix) => matrix.offsets.len().saturating_sub(1),
            ColumnData::ByteList { offsets, .. } => offsets.len().saturating_sub(1),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Named columns of equal length, in order.
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    pub columns: Vec<(String, ColumnData)>,
    /// What the reader accepted but the caller should be told of (a warning each).
    pub notes: Vec<String>,
}

impl Table {
    /// A table of `schema`'s columns without rows.
    pub fn empty(schema: &[(String, ColumnKind)]) -> Self {
        let columns =
            schema.iter().map(|(name, kind)| (name.clone(), ColumnData::empty(*kind))).collect();
        Table { columns, notes: Vec::new() }
    }

    /// The number of rows (0 for a table without columns).
    pub fn n_rows(&self) -> usize {
        self.columns.first().map_or(0, |(_, column)| column.len())
    }

    /// The column called `name`.
    pub fn column(&self, name: &str) -> Option<&ColumnData> {
        self.columns.iter().find(|(own, _)| own == name).map(|(_, column)| column)
    }

    /// The names and kinds of the columns.
    pub fn schema(&self) -> Vec<(String, ColumnKind)> {
        self.columns.iter().map(|(name, column)| (name.clone(), column.kind())).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_table_has_the_schema_it_was_made_from_and_no_rows() {
        let schema = vec![
            ("a".to_owned(), ColumnKind::Float64),
            ("b".to_owned(), ColumnKind::NullableFloat64),
            ("c".to_owned(), ColumnKind::Int64),
            ("d".to_owned(), ColumnKind::NullableText),
            ("e".to_owned(), ColumnKind::Sparse),
            ("f".to_owned(), ColumnKind::ByteList),
        ];
        let table = Table::empty(&schema);
        assert_eq!(table.schema(), schema);
        assert_eq!(table.n_rows(), 0);
        assert!(table.columns.iter().all(|(_, column)| column.is_empty()));
        assert_eq!(Table { columns: Vec::new(), notes: Vec::new() }.n_rows(), 0);
    }

    #[test]
    fn row_counts_follow_offsets_for_list_columns() {
        let sparse = ColumnData::Sparse(SparseMatrix {
            offsets: vec![0, 2, 2, 3],
            indices: vec![1, 4, 0],
            values: vec![1.0, 2.0, 3.0],
        });
        assert_eq!(sparse.len(), 3);
        let bytes = ColumnData::ByteList { offsets: vec![0, 1], values: vec![b'a'] };
        assert_eq!(bytes.len(), 1);
        let table =
            Table { columns: vec![("s".into(), sparse), ("b".into(), bytes)], notes: Vec::new() };
        assert!(table.column("s").is_some() && table.column("x").is_none());
    }
}
