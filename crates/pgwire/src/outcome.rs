//! What running a statement produced, as the connection turns it into
//! messages: rows with their columns and command tag, a command's tag, the
//! start of a COPY, or nothing (an empty statement). The session
//! (`crate::backend`), `SET`/`SHOW` (`crate::settings`) and psql's describe
//! answers (`crate::catalog`) all produce these.

use rowtree_types::{Type, Value};

/// What a statement produced.
#[derive(Debug)]
pub enum Outcome {
    /// Rows (a query, `SHOW`, DML with `RETURNING`) and the command tag.
    Rows {
        columns: Vec<(String, Type)>,
        rows: Vec<Vec<Value>>,
        tag: String,
    },
    /// A command without rows, and its tag (`INSERT 0 3`, `CREATE TABLE`).
    Command(String),
    /// `COPY ... FROM STDIN`: the client now sends CopyData.
    CopyIn { columns: usize },
    /// An empty statement.
    Empty,
}
