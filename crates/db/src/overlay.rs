//! The overlay: what a read-write transaction has written and not yet
//! committed.
//!
//! A transaction's DML is applied at once, statement by statement, but its
//! writes reach storage only when it commits. Until then they live here, as
//! one [`RowChange`] per touched row: the row as committed before the
//! transaction (loaded once, under an exclusive lock) and the row as the
//! transaction leaves it. Two readers consult it:
//!
//! * the commit resolver ([`crate::write`]) applies later mutations on top
//!   of it (so a statement sees the statements before it) and, at commit,
//!   turns every change into row and index writes;
//! * the transaction's scans ([`crate::stream`]) merge it with what storage
//!   holds, rows and the index entries they imply.
//!
//! It is plain data with no behaviour of its own, so both can depend on it
//! without depending on each other.

use std::collections::{BTreeMap, HashSet};

use rowtree_schema::TableId;
use rowtree_types::Value;

/// The state of one table row during resolution.
#[derive(Debug, Clone)]
pub(crate) struct RowChange {
    pub table: TableId,
    pub key: Vec<Value>,
    /// The row as committed before this transaction (loaded once).
    pub old: Option<Vec<Value>>,
    /// The row as this transaction leaves it.
    pub new: Option<Vec<Value>>,
}

/// What a read-write transaction has written so far (its DML, applied
/// statement by statement) and the keys it holds exclusively. Buffered
/// mutations join it at commit.
#[derive(Debug, Clone, Default)]
pub(crate) struct TxnWrites {
    /// Every row the transaction touched, by row key.
    pub rows: BTreeMap<Vec<u8>, RowChange>,
    /// Keys already locked exclusively.
    pub locked: HashSet<Vec<u8>>,
    /// Mutations applied so far, for the 80,000 limit.
    pub mutation_count: usize,
}
