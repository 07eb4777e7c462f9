//! The server-wide memory budget: queries that each fit their own limit
//! but not together, run at the same time, and many queries ending every
//! way (done, failed, cancelled) leaving the pool empty.
//!
//! Each test makes its own [`MemoryPool`] and gives it to its sessions
//! (`Session::with_memory_pool`), so nothing here changes process-wide
//! state: the per-query limit stays at its default (1 GiB) and the tests run
//! in parallel with each other.

use std::sync::mpsc;
use std::sync::Arc;
use std::thread;

use rowtree_db::Database;
use rowtree_sql::limits::MemoryPool;
use rowtree_sql::{ExecuteResult, Params, Session, SqlError};
use rowtree_types::{Code, Type, Value};

/// A sort of every row: it holds all of them before it emits the first.
const SORT: &str = "SELECT Id, Pad FROM T ORDER BY Pad, Id";

/// A database with `rows` rows of ~200 bytes in `T`.
fn database(rows: i64) -> Database {
    let db = Database::in_memory_with(rowtree_sql::database_options());
    let mut s = Session::new(db.clone());
    run(
        &mut s,
        "CREATE TABLE T (Id INT64 NOT NULL, G INT64, Pad STRING(MAX)) PRIMARY KEY (Id)",
    );
    for start in (0..rows).step_by(1000) {
        let values: Vec<String> = (start..(start + 1000).min(rows))
            .map(|id| format!("({id}, {}, '{}')", id % 7, "x".repeat(200)))
            .collect();
        run(
            &mut s,
            &format!("INSERT INTO T (Id, G, Pad) VALUES {}", values.join(", ")),
        );
    }
    db
}

fn run(s: &mut Session, sql: &str) -> ExecuteResult {
    s.execute(sql, &Params::new())
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

/// Streams `sql`, calling `each` on every row until it says stop; the
/// number of rows seen.
fn stream(
    s: &mut Session,
    sql: &str,
    mut each: impl FnMut(usize) -> bool,
) -> Result<usize, SqlError> {
    let mut n = 0;
    let mut sink = |_: &[(String, Type)], _: Vec<Value>| {
        n += 1;
        each(n)
    };
    s.execute_streaming(sql, &Params::new(), &mut sink)?;
    Ok(n)
}

/// Whether `e` is the server-wide budget's refusal, with `limit_mib` as the
/// limit it names.
fn is_server_exhausted(e: &SqlError, limit_mib: usize) -> bool {
    e.code == Code::ResourceExhausted
        && e.message
            .contains("all queries in flight on this server together hold")
        && e.message.contains(&format!(
            "the server's limit is {limit_mib} MiB (rowtree serve --server-query-memory)"
        ))
        && !e.message.contains("its memory limit")
}

/// The bytes [`SORT`] holds while it emits its rows, measured with a pool
/// of its own.
fn sort_holds(db: &Database) -> usize {
    let pool = MemoryPool::new(usize::MAX);
    let mut s = Session::with_memory_pool(db.clone(), pool.clone());
    let mut holds = 0;
    stream(&mut s, SORT, |_| {
        holds = pool.reserved();
        false
    })
    .unwrap();
    assert_eq!(pool.reserved(), 0);
    holds
}

#[test]
fn two_queries_that_fit_alone_do_not_fit_together() {
    let db = database(20_000);
    let holds = sort_holds(&db);
    assert!(holds > 4 << 20, "the sort holds {holds} bytes");
    // Room for one sort and a half.
    let pool = MemoryPool::new(holds + holds / 2);
    let limit_mib = pool.size() >> 20;

    // The first sort runs on its own thread and stops at its first row,
    // every row still held, until the second has run.
    let (holding_tx, holding) = mpsc::channel();
    let (go, go_rx) = mpsc::channel::<()>();
    let first = {
        let (db, pool) = (db.clone(), pool.clone());
        thread::spawn(move || {
            let mut s = Session::with_memory_pool(db, pool);
            stream(&mut s, SORT, |n| {
                if n == 1 {
                    holding_tx.send(()).unwrap();
                    go_rx.recv().unwrap();
                }
                true
            })
        })
    };
    holding.recv().unwrap();
    assert!(pool.reserved() >= holds, "{} < {holds}", pool.reserved());

    let second = {
        let (db, pool) = (db.clone(), pool.clone());
        thread::spawn(move || {
            let mut s = Session::with_memory_pool(db, pool);
            let refused = stream(&mut s, SORT, |_| true).expect_err("no room for two sorts");
            // The session goes on: what streams holds nothing.
            let rows = stream(&mut s, "SELECT Id FROM T WHERE G = 0", |_| true).unwrap();
            (refused, rows, s)
        })
    };
    let (refused, rows, mut s) = second.join().unwrap();
    assert!(is_server_exhausted(&refused, limit_mib), "{refused}");
    assert_eq!(rows, 2858);
    // The refused sort gave back what it had drawn; the first one still holds.
    assert!(pool.reserved() <= holds + (64 << 10), "{}", pool.reserved());

    go.send(()).unwrap();
    assert_eq!(first.join().unwrap().unwrap(), 20_000);
    assert_eq!(pool.reserved(), 0);
    // Alone, the second session's sort fits.
    assert_eq!(stream(&mut s, SORT, |_| true).unwrap(), 20_000);
    assert_eq!(pool.reserved(), 0);
}

#[test]
fn queries_that_fit_together_all_run() {
    let db = database(5_000);
    let holds = sort_holds(&db);
    let pool = MemoryPool::new(4 * holds + (1 << 20));
    let (ready_tx, ready) = mpsc::channel();
    let mut gos = Vec::new();
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let (db, pool, ready_tx) = (db.clone(), pool.clone(), ready_tx.clone());
            let (go, go_rx) = mpsc::channel::<()>();
            gos.push(go);
            thread::spawn(move || {
                let mut s = Session::with_memory_pool(db, pool);
                stream(&mut s, SORT, |n| {
                    if n == 1 {
                        ready_tx.send(()).unwrap();
                        go_rx.recv().unwrap();
                    }
                    true
                })
            })
        })
        .collect();
    // All four hold their rows at once.
    for _ in 0..4 {
        ready.recv().unwrap();
    }
    assert!(pool.reserved() >= 4 * holds);
    for go in gos {
        go.send(()).unwrap();
    }
    for t in threads {
        assert_eq!(t.join().unwrap().unwrap(), 5_000);
    }
    assert_eq!(pool.reserved(), 0);
}

/// Many sessions on several databases sharing one tight pool, each running
/// queries that finish, fail (out of the pool, or on an error half way),
/// are cancelled, return their result whole, or are DML reading through a
/// sort: every one is done with its memory when it returns, so the pool
/// ends empty.
#[test]
fn the_pool_is_empty_after_queries_ending_every_way() {
    let dbs: Vec<Database> = (0..3).map(|_| database(5_000)).collect();
    let holds = sort_holds(&dbs[0]);
    let pool = MemoryPool::new(2 * holds);
    let limit_mib = pool.size() >> 20;
    let threads: Vec<_> = (0..6)
        .map(|i| {
            let (db, pool) = (dbs[i % dbs.len()].clone(), pool.clone());
            thread::spawn(move || {
                let mut s = Session::with_memory_pool(db, pool.clone());
                let mut refused = 0;
                for round in 0..8 {
                    let outcomes = [
                        // Done.
                        stream(&mut s, SORT, |_| true).map(|_| ()),
                        // Cancelled by its reader after a few rows.
                        stream(&mut s, SORT, |n| n < 3).map(|_| ()),
                        // Failed half way through buffering.
                        stream(
                            &mut s,
                            "SELECT Id, Pad FROM T ORDER BY Pad, 1 / (Id - 2500)",
                            |_| true,
                        )
                        .map(|_| ()),
                        // The whole result held at once.
                        s.execute("SELECT Id, Pad FROM T WHERE Id < 2000", &Params::new())
                            .map(|_| ()),
                        // DML that sorts (in the session's transaction,
                        // rolled back: the sessions sharing a database would
                        // otherwise keep wounding each other).
                        s.execute("BEGIN", &Params::new()).and_then(|_| {
                            let r = s.execute(
                                "UPDATE T SET G = G + 1 WHERE Id IN \
                                 (SELECT Id FROM T ORDER BY Pad DESC, Id LIMIT 3)",
                                &Params::new(),
                            );
                            // An aborted transaction is over already.
                            let _ = s.execute("ROLLBACK", &Params::new());
                            r.map(|_| ())
                        }),
                    ];
                    for (kind, outcome) in outcomes.into_iter().enumerate() {
                        match outcome {
                            Ok(()) => assert_ne!(kind, 2, "round {round}: no error"),
                            Err(e) if is_server_exhausted(&e, limit_mib) => refused += 1,
                            Err(e) if kind == 2 => {
                                assert_eq!(e.code, Code::OutOfRange, "{e}")
                            }
                            Err(e) if e.code == Code::Aborted => {}
                            Err(e) => panic!("round {round}, query {kind}: {e}"),
                        }
                    }
                }
                refused
            })
        })
        .collect();
    let refused: usize = threads.into_iter().map(|t| t.join().unwrap()).sum();
    assert_eq!(pool.reserved(), 0, "{refused} queries were refused");
    // The sessions are done and their databases still open: nothing holds
    // the pool's bytes but running queries.
    drop(dbs);
    assert_eq!(pool.reserved(), 0);
}

#[test]
fn sessions_share_the_server_pool_by_default() {
    let db = Database::in_memory_with(rowtree_sql::database_options());
    let a = Session::new(db.clone());
    let b = Session::new(db);
    assert!(Arc::ptr_eq(a.memory_pool(), b.memory_pool()));
    assert!(Arc::ptr_eq(
        a.memory_pool(),
        rowtree_sql::limits::server_memory_pool()
    ));
    assert_eq!(
        rowtree_sql::limits::server_query_memory(),
        rowtree_sql::limits::default_server_query_memory()
    );
}
