//! The data and requests the benchmarks run, kept apart from the timing
//! code so every benchmark loads the same schema the same way.
//!
//! The schema has three parts, one per kind of work measured:
//!
//! ```text
//! T     (Id, Col, Tag, Payload)  100,000 rows of ~100 bytes: point reads, scans
//!   TByCol (Col) STORING (Tag)   secondary index: 10 entries per Col value
//! W     (Id, Payload)            1 KB rows: single-row durable commits
//! Root  (RootId, Name)           row trees: one root ...
//!   Leaf (RootId, LeafId, ...)   ... and its interleaved children, ON DELETE CASCADE
//! ```
//!
//! Everything is deterministic: payloads are derived from the key and the
//! random keys come from [`KeyGen`], a seeded generator, so two runs read the
//! same keys in the same order.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Barrier;
use std::time::{Duration, Instant};

use rowtree_db::{Database, KeyRange, KeySet, Mutation, ReadRequest, Result, Value};

/// Rows preloaded into `T`.
pub const ROWS: i64 = 100_000;
/// Distinct values of `T.Col`; each is shared by `ROWS / COL_VALUES` rows.
pub const COL_VALUES: i64 = 10_000;
/// Rows in a range scan.
pub const SCAN_ROWS: i64 = 100;
/// Bytes of the `Payload` of a row of `W` (the committed row).
pub const COMMIT_ROW_BYTES: usize = 1024;
/// Children of a root in the cascade-delete tree.
pub const TREE_CHILDREN: i64 = 1_000;
/// Rows per commit while preloading `T` (well under Spanner's 80,000
/// mutations per commit: 4 cells a row).
const LOAD_BATCH: i64 = 1_000;

/// The schema every benchmark database gets.
pub const SCHEMA: &[&str] = &[
    "CREATE TABLE T (Id INT64 NOT NULL, Col INT64 NOT NULL, Tag STRING(16), Payload STRING(MAX)) PRIMARY KEY (Id)",
    "CREATE INDEX TByCol ON T(Col) STORING (Tag)",
    "CREATE TABLE W (Id INT64 NOT NULL, Payload BYTES(MAX)) PRIMARY KEY (Id)",
    "CREATE TABLE Root (RootId INT64 NOT NULL, Name STRING(MAX)) PRIMARY KEY (RootId)",
    "CREATE TABLE Leaf (RootId INT64 NOT NULL, LeafId INT64 NOT NULL, Payload STRING(MAX)) PRIMARY KEY (RootId, LeafId), INTERLEAVE IN PARENT Root ON DELETE CASCADE",
];

/// Applies [`SCHEMA`].
pub fn create_schema(db: &Database) -> Result<()> {
    db.apply_ddl(SCHEMA).map(|_| ()).map_err(|e| e.error)
}

/// The `Col` of row `id` of `T`: rows sharing a `Col` are spread over the
/// whole table, so an index prefix gathers keys from far apart.
pub fn col_of(id: i64) -> i64 {
    id % COL_VALUES
}

/// Row `id` of `T`: 8-byte key, 8-byte `Col`, 8-character `Tag` and a
/// 76-character `Payload`, about 100 bytes.
pub fn t_row(id: i64) -> Vec<Value> {
    vec![
        Value::Int64(id),
        Value::Int64(col_of(id)),
        Value::String(format!("tag{id:05}")),
        Value::String(format!("{id:012}").repeat(7)[..76].to_string()),
    ]
}

/// Inserts rows `0..rows` of `T` in commits of 1,000 rows.
pub fn load_t(db: &Database, rows: i64) -> Result<()> {
    let mut start = 0;
    while start < rows {
        let end = (start + LOAD_BATCH).min(rows);
        db.write(vec![Mutation::insert(
            "T",
            &["Id", "Col", "Tag", "Payload"],
            (start..end).map(t_row).collect(),
        )])?;
        start = end;
    }
    Ok(())
}

/// A strong read of one row of `T` by primary key.
pub fn point_read(id: i64) -> ReadRequest {
    ReadRequest::new("T", &["Id", "Payload"], KeySet::key(vec![Value::Int64(id)]))
}

/// A read of the [`SCAN_ROWS`] rows of `T` starting at `first`.
pub fn range_scan(first: i64) -> ReadRequest {
    ReadRequest::new(
        "T",
        &["Id", "Payload"],
        KeySet::range(KeyRange::closed_open(
            vec![Value::Int64(first)],
            vec![Value::Int64(first + SCAN_ROWS)],
        )),
    )
}

/// Every entry of index `TByCol` with `Col = col`: the index key and the
/// table key, or with `storing` also the STORING column `Tag`.
pub fn index_lookup(col: i64, storing: bool) -> ReadRequest {
    let columns: &[&str] = if storing {
        &["Col", "Id", "Tag"]
    } else {
        &["Col", "Id"]
    };
    ReadRequest::new(
        "T",
        columns,
        KeySet::range(KeyRange::prefix(vec![Value::Int64(col)])),
    )
    .with_index("TByCol")
}

/// An insert of one 1 KB row of `W`.
pub fn commit_row(id: i64) -> Mutation {
    let payload = (0..COMMIT_ROW_BYTES)
        .map(|i| (i as i64 ^ id) as u8)
        .collect();
    Mutation::insert(
        "W",
        &["Id", "Payload"],
        vec![vec![Value::Int64(id), Value::Bytes(payload)]],
    )
}

/// The mutations that build a row tree: root `root` of `Root` and its
/// [`TREE_CHILDREN`] interleaved `Leaf` rows.
pub fn tree(root: i64) -> Vec<Mutation> {
    vec![
        Mutation::insert(
            "Root",
            &["RootId", "Name"],
            vec![vec![
                Value::Int64(root),
                Value::String(format!("root {root}")),
            ]],
        ),
        Mutation::insert(
            "Leaf",
            &["RootId", "LeafId", "Payload"],
            (0..TREE_CHILDREN)
                .map(|leaf| {
                    vec![
                        Value::Int64(root),
                        Value::Int64(leaf),
                        Value::String(format!("leaf {root}/{leaf:04} ----------------")),
                    ]
                })
                .collect(),
        ),
    ]
}

/// Deletes root `root`, and with it (ON DELETE CASCADE) its whole tree.
pub fn delete_tree(root: i64) -> Mutation {
    Mutation::delete("Root", KeySet::key(vec![Value::Int64(root)]))
}

/// How many `Leaf` rows root `root` has.
pub fn count_leaves(db: &Database, root: i64) -> Result<usize> {
    let rows = db.read(&ReadRequest::new(
        "Leaf",
        &["LeafId"],
        KeySet::range(KeyRange::prefix(vec![Value::Int64(root)])),
    ))?;
    Ok(rows.len())
}

/// Runs `writers` threads that each commit `per_writer` single-row inserts
/// of `W` (ids drawn from `next_id`), and returns the wall time from the
/// moment all threads are ready to the last commit's return. Thread start-up
/// is not timed.
pub fn concurrent_commits(
    db: &Database,
    writers: usize,
    per_writer: u64,
    next_id: &AtomicI64,
) -> Result<Duration> {
    let ready = Barrier::new(writers + 1);
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..writers)
            .map(|_| {
                let ready = &ready;
                scope.spawn(move || -> Result<()> {
                    ready.wait();
                    for _ in 0..per_writer {
                        let id = next_id.fetch_add(1, Ordering::Relaxed);
                        db.write(vec![commit_row(id)])?;
                    }
                    Ok(())
                })
            })
            .collect();
        ready.wait();
        let start = Instant::now();
        for handle in handles {
            handle.join().expect("a writer thread panicked")?;
        }
        Ok(start.elapsed())
    })
}

/// A small seeded pseudo-random generator (xorshift64*) for benchmark keys:
/// deterministic, and cheap next to the work measured.
#[derive(Debug, Clone)]
pub struct KeyGen {
    state: u64,
}

impl KeyGen {
    /// A generator seeded with `seed` (any value; zero is remapped).
    pub fn new(seed: u64) -> KeyGen {
        KeyGen { state: seed.max(1) }
    }

    /// The next value in `0..bound` (`bound > 0`).
    pub fn below(&mut self, bound: i64) -> i64 {
        self.state ^= self.state >> 12;
        self.state ^= self.state << 25;
        self.state ^= self.state >> 27;
        let x = self.state.wrapping_mul(0x2545_F491_4F6C_DD1D);
        (x % bound as u64) as i64
    }
}
