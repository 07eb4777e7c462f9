//! The data and queries of the SQL benchmarks (`benches/sql.rs`), kept apart
//! from the timing code.
//!
//! One durable database holds every table, each loaded with `db.write`
//! mutations in batches (not SQL INSERTs, so loading stays quick):
//!
//! ```text
//! T        (Id, Col, Tag, Payload)    100,000 rows, as in the core benchmarks
//!   TByCol (Col) STORING (Tag)        10 entries per Col value
//! Singers  (SingerId, Name)           2,000 singers ...
//!   Albums (SingerId, AlbumId, Title) ... 50 albums each, INTERLEAVE IN PARENT Singers
//! RSingers / RAlbums                  the same data in two root tables
//! Big      (Id, X, Y)                 1,000,000 small rows for a full scan
//! EventsDesc (UserId, Ts DESC, Kind)  1,000 users x 200 events, newest first
//! EventsAsc  (UserId, Ts, Kind)       the same events, oldest first
//! ```
//!
//! Everything is deterministic: values are derived from the keys.

use rowtree_db::{Database, Mutation, Result, Value};

use crate::workload;

/// Singers in `Singers` (and `RSingers`).
pub const SINGERS: i64 = 2_000;
/// Albums per singer.
pub const ALBUMS_PER_SINGER: i64 = 50;
/// Rows of `Big`.
pub const BIG_ROWS: i64 = 1_000_000;
/// Users in the events tables.
pub const USERS: i64 = 1_000;
/// Events per user.
pub const EVENTS_PER_USER: i64 = 200;
/// Rows per commit while loading: at most 4 columns a row, so at most
/// 40,000 cells per commit, under Spanner's 80,000 mutations.
const LOAD_BATCH: i64 = 10_000;

/// The schema of the SQL benchmark database: the core schema (`T` and
/// `TByCol`) plus the tables above.
pub const SCHEMA: &[&str] = &[
    "CREATE TABLE Singers (SingerId INT64 NOT NULL, Name STRING(MAX)) PRIMARY KEY (SingerId)",
    "CREATE TABLE Albums (SingerId INT64 NOT NULL, AlbumId INT64 NOT NULL, Title STRING(MAX)) PRIMARY KEY (SingerId, AlbumId), INTERLEAVE IN PARENT Singers ON DELETE CASCADE",
    "CREATE TABLE RSingers (SingerId INT64 NOT NULL, Name STRING(MAX)) PRIMARY KEY (SingerId)",
    "CREATE TABLE RAlbums (SingerId INT64 NOT NULL, AlbumId INT64 NOT NULL, Title STRING(MAX)) PRIMARY KEY (SingerId, AlbumId)",
    "CREATE TABLE Big (Id INT64 NOT NULL, X INT64, Y INT64) PRIMARY KEY (Id)",
    "CREATE TABLE EventsDesc (UserId INT64 NOT NULL, Ts INT64 NOT NULL, Kind STRING(MAX)) PRIMARY KEY (UserId, Ts DESC)",
    "CREATE TABLE EventsAsc (UserId INT64 NOT NULL, Ts INT64 NOT NULL, Kind STRING(MAX)) PRIMARY KEY (UserId, Ts)",
];

/// Point SELECT by primary key.
pub const POINT_SELECT: &str = "SELECT Payload FROM T WHERE Id = @id";
/// SELECT through `TByCol`, answered by the index alone.
pub const INDEX_COVERING: &str = "SELECT Id, Tag FROM T WHERE Col = @c";
/// SELECT through `TByCol` that fetches each base row (`Payload`).
pub const INDEX_BACK_JOIN: &str = "SELECT Payload FROM T WHERE Col = @c";
/// One singer and the albums interleaved in it.
pub const JOIN_INTERLEAVED: &str = "SELECT s.Name, a.Title FROM Singers s JOIN Albums a ON a.SingerId = s.SingerId WHERE s.SingerId = @id";
/// The same over two root tables, as a hash join.
pub const JOIN_ROOT_HASH: &str = "SELECT s.Name, a.Title FROM RSingers s JOIN@{JOIN_METHOD=HASH_JOIN} RAlbums a ON a.SingerId = s.SingerId WHERE s.SingerId = @id";
/// The same over two root tables with the planner's own choice.
pub const JOIN_ROOT_DEFAULT: &str = "SELECT s.Name, a.Title FROM RSingers s JOIN RAlbums a ON a.SingerId = s.SingerId WHERE s.SingerId = @id";
/// The hash join with the key predicate written on both sides, so each
/// side reads one key range.
pub const JOIN_ROOT_HASH_BOTH_KEYED: &str = "SELECT s.Name, a.Title FROM RSingers s JOIN@{JOIN_METHOD=HASH_JOIN} RAlbums a ON a.SingerId = s.SingerId WHERE s.SingerId = @id AND a.SingerId = @id";
/// A full scan of `Big` with aggregates.
pub const SCAN_AGGREGATE: &str = "SELECT COUNT(*), SUM(X), MAX(Y) FROM Big";
/// The latest 10 events of a user, on the DESC key.
pub const LATEST_10_DESC: &str =
    "SELECT Ts, Kind FROM EventsDesc WHERE UserId = @u ORDER BY Ts DESC LIMIT 10";
/// The same on the ASC key.
pub const LATEST_10_ASC: &str =
    "SELECT Ts, Kind FROM EventsAsc WHERE UserId = @u ORDER BY Ts DESC LIMIT 10";

/// Applies the core schema and [`SCHEMA`].
pub fn create_schema(db: &Database) -> Result<()> {
    workload::create_schema(db)?;
    db.apply_ddl(SCHEMA).map(|_| ()).map_err(|e| e.error)
}

/// Inserts `rows` rows into `table`, `LOAD_BATCH` to a commit, each built
/// from its index by `row`.
fn load(
    db: &Database,
    table: &str,
    columns: &[&str],
    rows: i64,
    row: impl Fn(i64) -> Vec<Value>,
) -> Result<()> {
    let mut start = 0;
    while start < rows {
        let end = (start + LOAD_BATCH).min(rows);
        db.write(vec![Mutation::insert(
            table,
            columns,
            (start..end).map(&row).collect(),
        )])?;
        start = end;
    }
    Ok(())
}

/// `Singers`/`Albums` and `RSingers`/`RAlbums`, the same rows in both.
pub fn load_singers(db: &Database) -> Result<()> {
    let singer = |id: i64| vec![Value::Int64(id), Value::String(format!("singer {id:05}"))];
    let album = |i: i64| {
        let (s, a) = (i / ALBUMS_PER_SINGER, i % ALBUMS_PER_SINGER);
        vec![
            Value::Int64(s),
            Value::Int64(a),
            Value::String(format!("album {s:05}/{a:03} ---------------")),
        ]
    };
    let albums = SINGERS * ALBUMS_PER_SINGER;
    for (parent, child) in [("Singers", "Albums"), ("RSingers", "RAlbums")] {
        load(db, parent, &["SingerId", "Name"], SINGERS, singer)?;
        load(db, child, &["SingerId", "AlbumId", "Title"], albums, album)?;
    }
    Ok(())
}

/// Row `id` of `Big`.
pub fn big_row(id: i64) -> Vec<Value> {
    vec![
        Value::Int64(id),
        Value::Int64(id % 1_000),
        Value::Int64((id * 7_919) % 1_000_003),
    ]
}

/// `Big`'s expected `COUNT(*), SUM(X), MAX(Y)`.
pub fn big_expected() -> (i64, i64, i64) {
    let (mut sum, mut max) = (0, i64::MIN);
    for id in 0..BIG_ROWS {
        let r = big_row(id);
        if let (Value::Int64(x), Value::Int64(y)) = (&r[1], &r[2]) {
            sum += x;
            max = max.max(*y);
        }
    }
    (BIG_ROWS, sum, max)
}

/// `BIG_ROWS` rows of `Big`.
pub fn load_big(db: &Database) -> Result<()> {
    load(db, "Big", &["Id", "X", "Y"], BIG_ROWS, big_row)
}

/// Timestamp of event `e` (0-based) of a user: later events are larger.
pub fn event_ts(e: i64) -> i64 {
    1_000_000 + e * 1_000
}

/// `EventsDesc` and `EventsAsc`, the same rows in both.
pub fn load_events(db: &Database) -> Result<()> {
    let event = |i: i64| {
        let (u, e) = (i / EVENTS_PER_USER, i % EVENTS_PER_USER);
        vec![
            Value::Int64(u),
            Value::Int64(event_ts(e)),
            Value::String(format!("kind{}", e % 7)),
        ]
    };
    for table in ["EventsDesc", "EventsAsc"] {
        load(
            db,
            table,
            &["UserId", "Ts", "Kind"],
            USERS * EVENTS_PER_USER,
            event,
        )?;
    }
    Ok(())
}

/// Rows of `Items`, the table of the batched-lookup benchmarks
/// (`benches/in_unnest.rs`).
pub const LOOKUP_ROWS: i64 = 12_000;

/// The schema of the batched-lookup benchmarks: `Items (Id, Val, Payload)`
/// keyed by `Id`, and `ItemsByVal` on `Val` (not covering `Payload`).
pub const LOOKUP_SCHEMA: &[&str] = &[
    "CREATE TABLE Items (Id INT64 NOT NULL, Val INT64, Payload STRING(MAX)) PRIMARY KEY (Id)",
    "CREATE INDEX ItemsByVal ON Items (Val)",
];

/// Batched lookups by primary key: how clients read many rows by key.
pub const LOOKUP_BY_KEY: &str = "SELECT Id, Payload FROM Items WHERE Id IN UNNEST(@ids)";
/// The same on a non-key column, with the planner's choice (the covering
/// index `ItemsByVal`, read by key set).
pub const LOOKUP_BY_VALUE: &str = "SELECT COUNT(*) FROM Items WHERE Val IN UNNEST(@ids)";
/// The same forced to a full scan testing each row's `Val` (the plan
/// `LOOKUP_BY_VALUE` had before IN UNNEST became a key-set read).
pub const LOOKUP_BY_VALUE_SCAN: &str =
    "SELECT COUNT(*) FROM Items@{FORCE_INDEX=_BASE_TABLE} WHERE Val IN UNNEST(@ids)";
/// The same through the index on `Val`.
pub const LOOKUP_BY_INDEX: &str =
    "SELECT Id, Payload FROM Items@{FORCE_INDEX=ItemsByVal} WHERE Val IN UNNEST(@ids)";

/// Row `id` of `Items`: `Val` is a permutation of the ids, times 3.
pub fn lookup_row(id: i64) -> Vec<Value> {
    vec![
        Value::Int64(id),
        Value::Int64((id * 7_919) % LOOKUP_ROWS * 3),
        Value::String(format!("payload {id:06} ----------------")),
    ]
}

/// Applies [`LOOKUP_SCHEMA`] and loads [`LOOKUP_ROWS`] rows of `Items`.
pub fn load_lookup(db: &Database) -> Result<()> {
    db.apply_ddl(LOOKUP_SCHEMA).map_err(|e| e.error)?;
    load(
        db,
        "Items",
        &["Id", "Val", "Payload"],
        LOOKUP_ROWS,
        lookup_row,
    )
}
