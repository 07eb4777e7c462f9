//! Spanner's schema limits (the quotas page), enforced at DDL time.
//!
//! Limits on data (8 KiB keys, 10 MiB cells, mutation counts) are checked by
//! the db layer when rows are written; the ones here depend only on the schema.

/// Longest table, column, index, constraint or sequence name.
pub const MAX_IDENTIFIER_LENGTH: usize = 128;
/// Columns per table.
pub const MAX_COLUMNS_PER_TABLE: usize = 1024;
/// Tables per database.
pub const MAX_TABLES_PER_DATABASE: usize = 5000;
/// Secondary indexes per table.
pub const MAX_INDEXES_PER_TABLE: usize = 128;
/// Secondary indexes per database.
pub const MAX_INDEXES_PER_DATABASE: usize = 10_000;
/// Key columns of a table (counting those inherited from the parent) or of an
/// index (counting the table key columns it carries).
pub const MAX_KEY_COLUMNS: usize = 16;
/// Tables in one interleave chain: a root plus six levels.
pub const MAX_INTERLEAVE_DEPTH: usize = 7;
/// Longest `STRING(n)`, in characters.
pub const MAX_STRING_LENGTH: u64 = 2_621_440;
/// Longest `BYTES(n)`, in bytes.
pub const MAX_BYTES_LENGTH: u64 = 10_485_760;
/// Largest encoded key, in bytes (checked by the db layer on write).
pub const MAX_KEY_SIZE_BYTES: usize = 8 * 1024;
