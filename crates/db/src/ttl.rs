//! Row deletion policies at work (Spanner's TTL): the background pass that
//! deletes expired rows.
//!
//! A table's policy (`ROW DELETION POLICY (OLDER_THAN(col, INTERVAL n
//! DAY))`, PostgreSQL `TTL INTERVAL 'n days' ON col`, see
//! [`rowtree_schema::RowDeletionPolicy`]) makes a row expire once `col` is
//! more than `n` days before now; a NULL `col` never expires. Expiry is
//! eventually consistent, as in Spanner (which deletes within about three
//! days): an expired row stays readable until a pass deletes it, and a row
//! may be inserted already expired.
//!
//! [`Database::delete_expired_rows`] is one pass over every table with a
//! policy. It reads the table in chunks of [`TTL_BATCH`] rows from a strong
//! snapshot, and for each chunk's expired keys runs one small read-write
//! transaction that reads those rows again under locks (a row updated in
//! between may no longer be expired) and deletes the ones still expired
//! with an ordinary delete mutation: interleaved children go with ON
//! DELETE CASCADE and indexes are maintained exactly as a DELETE would. A
//! batch that fails (a child with ON DELETE NO ACTION, a lock conflict) is
//! retried row by row, and a row that still cannot be deleted is left for a
//! later pass. Small transactions keep the pass from holding many locks or
//! writing a huge commit, which is why it does not use one big DELETE.
//!
//! The database runs a pass every [`crate::Options::ttl_interval`] (a minute by
//! default) on a background thread, like garbage collection.

use rowtree_types::{Timestamp, Value};

use crate::error::Result;
use crate::mutation::{Key, KeySet, Mutation};
use crate::read::ReadRequest;
use crate::stream::ScanRequest;
use crate::transaction::TimestampBound;
use crate::Database;

/// Rows read per chunk, and so the most rows one TTL transaction deletes
/// (not counting interleaved children deleted with them).
pub const TTL_BATCH: usize = 1000;

const NANOS_PER_DAY: i128 = 86_400 * 1_000_000_000;

/// What one TTL pass did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TtlStats {
    /// Expired rows deleted (interleaved children deleted with them are
    /// not counted).
    pub rows_deleted: u64,
    /// Read-write transactions committed.
    pub transactions: u64,
    /// Expired rows that could not be deleted this pass (left for the next).
    pub rows_failed: u64,
}

impl Database {
    /// Runs one TTL pass now: deletes the rows of every table with a row
    /// deletion policy whose timestamp column is older than the policy
    /// allows at the clock's current time. See the [module docs](self).
    ///
    /// Each pass logs its end (target `rowtree_db::ttl`, at info level when
    /// it deleted something, else debug). An error reading a table ends
    /// that table's part of the pass and is returned after the other tables
    /// were processed.
    pub fn delete_expired_rows(&self) -> Result<TtlStats> {
        let catalog = self.catalog();
        let now = self.inner.options.clock.now_nanos() as i128;
        let mut stats = TtlStats::default();
        let mut first_error = None;
        for table in catalog.tables() {
            let Some(policy) = table.row_deletion_policy else {
                continue;
            };
            let cutoff = now.saturating_sub(policy.days as i128 * NANOS_PER_DAY);
            if let Err(e) = self.expire_table(&table.name, cutoff, &mut stats) {
                tracing::warn!(target: "rowtree_db::ttl", table = %table.name, "ttl pass failed: {e}");
                first_error.get_or_insert(e);
            }
        }
        if stats.rows_deleted > 0 || stats.rows_failed > 0 {
            tracing::info!(
                target: "rowtree_db::ttl",
                deleted = stats.rows_deleted,
                failed = stats.rows_failed,
                transactions = stats.transactions,
                "ttl pass ended"
            );
        } else {
            tracing::debug!(target: "rowtree_db::ttl", "ttl pass ended");
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(stats),
        }
    }

    /// One table's part of a pass: chunk by chunk from the start of the
    /// table, each chunk's expired rows deleted before the next is read.
    fn expire_table(&self, name: &str, cutoff: i128, stats: &mut TtlStats) -> Result<()> {
        let mut after: Option<Key> = None;
        loop {
            let snapshot = self.read_only(TimestampBound::Strong)?;
            let catalog = snapshot.catalog();
            // The table or its policy may have gone since the pass began.
            let Some(table) = catalog.table(name) else {
                return Ok(());
            };
            let Some((ts_pos, _)) = table.row_deletion_column() else {
                return Ok(());
            };
            let key_positions = table.key_column_positions();
            let mut request = ScanRequest::table(name, KeySet::all());
            request.limit = TTL_BATCH;
            request.after = after.take();
            let mut seen = 0;
            let mut expired = Vec::new();
            let mut last = None;
            for row in snapshot.scan(&request)? {
                let row = row?;
                seen += 1;
                let key: Key = key_positions.iter().map(|&p| row[p].clone()).collect();
                if is_expired(&row[ts_pos], cutoff) {
                    expired.push(key.clone());
                }
                last = Some(key);
            }
            drop(snapshot);
            if !expired.is_empty() {
                self.delete_batch(name, expired, cutoff, stats);
            }
            if seen < TTL_BATCH {
                return Ok(());
            }
            after = last;
        }
    }

    /// Deletes the rows of `keys` that are still expired, in one
    /// transaction, or one by one if that fails.
    fn delete_batch(&self, name: &str, keys: Vec<Key>, cutoff: i128, stats: &mut TtlStats) {
        match self.delete_if_expired(name, keys.clone(), cutoff) {
            Ok(0) => {}
            Ok(deleted) => {
                stats.rows_deleted += deleted;
                stats.transactions += 1;
            }
            Err(_) if keys.len() > 1 => {
                for key in keys {
                    self.delete_batch(name, vec![key], cutoff, stats);
                }
            }
            Err(e) => {
                tracing::debug!(target: "rowtree_db::ttl", table = name, "expired row not deleted: {e}");
                stats.rows_failed += 1;
            }
        }
    }

    /// One read-write transaction (retried while aborted, like any
    /// single-use transaction): reads `keys` under locks and deletes those
    /// whose timestamp is still before `cutoff`. Returns how many.
    fn delete_if_expired(&self, name: &str, keys: Vec<Key>, cutoff: i128) -> Result<u64> {
        let mut deleted = 0;
        self.run_in_transaction(|txn| {
            deleted = 0;
            let catalog = txn.catalog();
            let Some(table) = catalog.table(name) else {
                return Ok(());
            };
            let Some((_, ts_column)) = table.row_deletion_column() else {
                return Ok(());
            };
            let mut columns: Vec<&str> = table
                .key_column_positions()
                .iter()
                .map(|&p| table.columns[p].name.as_str())
                .collect();
            let key_len = columns.len();
            columns.push(ts_column.name.as_str());
            let rows = txn.read(&ReadRequest::new(
                name,
                &columns,
                KeySet::keys(keys.clone()),
            ))?;
            let still: Vec<Key> = rows
                .into_iter()
                .filter(|row| is_expired(&row[key_len], cutoff))
                .map(|mut row| {
                    row.truncate(key_len);
                    row
                })
                .collect();
            if still.is_empty() {
                return Ok(());
            }
            deleted = still.len() as u64;
            txn.buffer(Mutation::delete(name, KeySet::keys(still)))
        })?;
        Ok(deleted)
    }
}

/// Whether a policy column's value is before the cutoff (NULL never is).
fn is_expired(value: &Value, cutoff: i128) -> bool {
    matches!(value, Value::Timestamp(ts) if Timestamp::nanos(*ts) < cutoff)
}
