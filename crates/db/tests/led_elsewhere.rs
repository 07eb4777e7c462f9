//! A database whose replication serves only part of its key space here
//! (a cluster node leading some of its splits): the checks the database
//! makes before it reads a split and before it queues a commit
//! (`Replication::check_range`, `Replication::check_writes`), and what a
//! client is told when another node serves the keys.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock, Weak};

use parking_lot::Mutex;
use rowtree_db::{Code, Database, KeySet, Mutation, Options, ReadRequest, Value};
use rowtree_kv::{CommitGroup, Replication, Router};
use rowtree_storage::mvcc::split_version_key;
use rowtree_storage::{Durability, WriteBatch};

const DDL: [&str; 2] = [
    "CREATE TABLE A (K INT64 NOT NULL, V INT64) PRIMARY KEY (K)",
    "CREATE TABLE B (K INT64 NOT NULL, V INT64) PRIMARY KEY (K)",
];

/// A replication that writes to the router's own engine, and refuses the
/// keys from `fence` on as a node refuses the splits another node leads:
/// reads under locks and writes always, reads at a timestamp while
/// `fence_snapshots` is set.
#[derive(Default)]
struct Fenced {
    router: OnceLock<Weak<Router>>,
    fence: Mutex<Option<Vec<u8>>>,
    fence_snapshots: AtomicBool,
    /// Reads under locks of fenced keys are let through (a check of the
    /// writes alone).
    open_locked_reads: AtomicBool,
    /// Every range asked about under locks, and every write set.
    asked: Mutex<Vec<String>>,
    /// The keys of the latest question of where to commit, and of the
    /// latest commit checked.
    placed: Mutex<Vec<Vec<u8>>>,
    written: Mutex<Vec<Vec<u8>>>,
}

impl Fenced {
    fn fenced(&self, start: &[u8], end: Option<&[u8]>) -> bool {
        match &*self.fence.lock() {
            None => false,
            Some(fence) => {
                end.is_none_or(|end| end > fence.as_slice()) || start >= fence.as_slice()
            }
        }
    }

    fn refusal() -> rowtree_kv::Error {
        rowtree_kv::Error::LedElsewhere("split-2 is led by node 2".into())
    }
}

impl Replication for Fenced {
    fn replicate(&self, group: CommitGroup) -> rowtree_kv::Result<()> {
        let router = self.router.get().and_then(Weak::upgrade).expect("router");
        let mut batch = WriteBatch::new();
        for commit in group.commits {
            router.stage_writes(&mut batch, commit.ts, commit.writes);
        }
        for (key, value) in group.meta {
            router.stage_meta(&mut batch, key, value);
        }
        router.write(batch, Durability::Sync)
    }

    fn ready_to_commit(&self) -> rowtree_kv::Result<()> {
        Ok(())
    }

    fn check_read(&self, _ts: Option<u64>) -> rowtree_kv::Result<()> {
        Ok(())
    }

    fn check_range(
        &self,
        ts: Option<u64>,
        start: &[u8],
        end: Option<&[u8]>,
    ) -> rowtree_kv::Result<()> {
        if ts.is_none() {
            self.asked.lock().push("read under locks".into());
        }
        let refused = match ts {
            None => !self.open_locked_reads.load(Ordering::Relaxed),
            Some(_) => self.fence_snapshots.load(Ordering::Relaxed),
        } && self.fenced(start, end);
        if refused {
            return Err(Fenced::refusal());
        }
        Ok(())
    }

    /// Node 2 leads the fenced keys, node 1 the others.
    fn leader_of_keys(&self, keys: &mut dyn Iterator<Item = &[u8]>) -> Option<u64> {
        let keys: Vec<Vec<u8>> = keys.map(<[u8]>::to_vec).collect();
        let fenced: Vec<bool> = keys
            .iter()
            .map(|k| self.fenced(k, Some(&[k.as_slice(), &[0]].concat())))
            .collect();
        *self.placed.lock() = keys;
        match (fenced.iter().all(|f| *f), fenced.iter().any(|f| *f)) {
            _ if fenced.is_empty() => None,
            (true, _) => Some(2),
            (false, false) => Some(1),
            (false, true) => None,
        }
    }

    fn check_writes(&self, keys: &mut dyn Iterator<Item = &[u8]>) -> rowtree_kv::Result<()> {
        self.asked.lock().push("writes".into());
        let keys: Vec<Vec<u8>> = keys.map(<[u8]>::to_vec).collect();
        *self.written.lock() = keys.clone();
        for key in keys.iter().map(Vec::as_slice) {
            if self.fenced(key, Some(&[key, &[0]].concat())) {
                return Err(Fenced::refusal());
            }
        }
        Ok(())
    }
}

/// A database on a [`Fenced`] replication, with [`DDL`]'s tables, and
/// where table B's keys begin.
fn database() -> (Database, Arc<Fenced>, Vec<u8>) {
    let fenced = Arc::new(Fenced::default());
    let db = Database::in_memory_with(Options {
        replication: Some(fenced.clone()),
        ..Options::default()
    });
    let set = fenced.router.set(Arc::downgrade(&db.shared_router()));
    assert!(set.is_ok(), "the router is set once");
    db.apply_ddl(&DDL).expect("schema");
    db.write(vec![put("B", 0)]).expect("a first B row");
    let first_b = db
        .shared_router()
        .scan_stored(b"", None)
        .map(|r| {
            split_version_key(&r.expect("stored").0)
                .expect("versioned")
                .0
                .to_vec()
        })
        .max()
        .expect("one row");
    (db, fenced, first_b)
}

fn put(table: &str, k: i64) -> Mutation {
    Mutation::insert_or_update(
        table,
        &["K", "V"],
        vec![vec![Value::Int64(k), Value::Int64(k)]],
    )
}

fn keys(db: &Database, table: &str) -> rowtree_db::Result<Vec<Value>> {
    Ok(db
        .read(&ReadRequest::new(table, &["K"], KeySet::all()))?
        .into_iter()
        .map(|row| row[0].clone())
        .collect())
}

#[test]
fn keys_served_elsewhere_are_neither_written_nor_read_under_locks_here() {
    let (db, fenced, first_b) = database();
    *fenced.fence.lock() = Some(first_b);

    // The keys still served here take writes and locking reads.
    db.write(vec![put("A", 1)]).expect("A is served here");
    let mut txn = db.begin();
    txn.read(&ReadRequest::new("A", &["K"], KeySet::all()))
        .expect("a locking read of A");
    txn.rollback();

    // A write to B is refused whole, naming the leader, and the commit
    // that writes both tables writes neither.
    let refused = db.write(vec![put("B", 1)]).unwrap_err();
    assert_eq!(refused.code(), Code::Unavailable, "{refused}");
    assert!(refused.to_string().contains("led by node 2"), "{refused}");
    let both = db.write(vec![put("A", 2), put("B", 2)]).unwrap_err();
    assert_eq!(both.code(), Code::Unavailable, "{both}");
    // A read of B under locks is refused too.
    let mut txn = db.begin();
    let locked = txn
        .read(&ReadRequest::new("B", &["K"], KeySet::all()))
        .unwrap_err();
    assert_eq!(locked.code(), Code::Unavailable, "{locked}");
    txn.rollback();
    // The writes are checked on their own, before the commit is queued:
    // with the reads under locks let through, the write is still refused.
    fenced.open_locked_reads.store(true, Ordering::Relaxed);
    let refused = db.write(vec![put("B", 3)]).unwrap_err();
    assert_eq!(refused.code(), Code::Unavailable, "{refused}");
    fenced.open_locked_reads.store(false, Ordering::Relaxed);
    let asked = fenced.asked.lock().clone();
    assert!(asked.iter().any(|a| a == "writes"), "{asked:?}");
    assert!(asked.iter().any(|a| a == "read under locks"), "{asked:?}");

    // A read at a timestamp is the replication's to allow: served while
    // it allows it, refused per split when it does not.
    assert_eq!(keys(&db, "B").unwrap(), vec![Value::Int64(0)]);
    fenced.fence_snapshots.store(true, Ordering::Relaxed);
    let stale = keys(&db, "B").unwrap_err();
    assert_eq!(stale.code(), Code::Unavailable, "{stale}");
    assert_eq!(keys(&db, "A").unwrap(), vec![Value::Int64(1)]);

    // Unfenced, nothing of the refused commits is there.
    *fenced.fence.lock() = None;
    assert_eq!(keys(&db, "A").unwrap(), vec![Value::Int64(1)]);
    assert_eq!(keys(&db, "B").unwrap(), vec![Value::Int64(0)]);
    db.write(vec![put("A", 2), put("B", 2)])
        .expect("served here again");
    assert_eq!(
        keys(&db, "B").unwrap(),
        vec![Value::Int64(0), Value::Int64(2)]
    );
}

/// What `Database::commit_leader` asks the replication: the keys the
/// mutations will write, computed as the commit computes them (a
/// generated hash-shard key column, index entries of a row written
/// whole), and no answer when a key is known only at commit.
#[test]
fn a_commit_is_placed_by_the_keys_it_will_write() {
    let (db, fenced, first_b) = database();
    db.apply_ddl(&[
        "CREATE TABLE C (Shard INT64 NOT NULL AS (MOD(FARM_FINGERPRINT(CAST(Ts AS STRING)), 16)) STORED, \
         Ts TIMESTAMP NOT NULL, V STRING(MAX)) PRIMARY KEY (Shard, Ts)",
        "CREATE INDEX CByV ON C (V)",
        "CREATE TABLE D (Id STRING(36) NOT NULL DEFAULT (GENERATE_UUID()), V INT64) PRIMARY KEY (Id)",
    ])
    .expect("more tables");
    let sorted = |mut keys: Vec<Vec<u8>>| {
        keys.sort();
        keys.dedup();
        keys
    };

    // A row with a generated key and an index entry: the keys asked about
    // are the keys the commit writes.
    let at =
        Value::Timestamp(rowtree_db::Timestamp::from_nanos(1_700_000_000_000_000_000).unwrap());
    let insert = Mutation::insert(
        "C",
        &["Ts", "V"],
        vec![vec![at.clone(), Value::String("x".into())]],
    );
    assert_eq!(db.commit_leader(std::slice::from_ref(&insert)), Some(1));
    let placed = sorted(fenced.placed.lock().clone());
    db.write(vec![insert]).expect("the C row");
    let written = sorted(fenced.written.lock().clone());
    assert_eq!(placed.len(), 2, "the row and its index entry");
    assert_eq!(placed, written, "the keys placed are the keys written");

    // An update of some columns: its row key (the old index entry is read
    // at commit, so it cannot be known before).
    let update = Mutation::update("C", &["Ts", "V"], vec![vec![at, Value::String("y".into())]]);
    db.commit_leader(std::slice::from_ref(&update));
    let placed = sorted(fenced.placed.lock().clone());
    db.write(vec![update]).expect("the update");
    let written = sorted(fenced.written.lock().clone());
    assert!(
        placed.iter().all(|k| written.contains(k)) && !placed.is_empty(),
        "{placed:?} within {written:?}"
    );

    // Fenced from B on: node 1 leads A, node 2 the rest.
    *fenced.fence.lock() = Some(first_b);
    assert_eq!(db.commit_leader(&[put("A", 1)]), Some(1));
    assert_eq!(db.commit_leader(&[put("B", 1)]), Some(2));
    assert_eq!(
        db.commit_leader(&[put("A", 1), put("B", 1)]),
        None,
        "split between leaders"
    );
    let point = Mutation::Delete {
        table: "A".into(),
        key_set: KeySet::keys([vec![Value::Int64(1)]]),
    };
    assert_eq!(db.commit_leader(&[point]), Some(1));
    let range = Mutation::Delete {
        table: "A".into(),
        key_set: KeySet::all(),
    };
    assert_eq!(
        db.commit_leader(&[range]),
        None,
        "a range's rows are found at commit"
    );
    let defaulted = Mutation::insert("D", &["V"], vec![vec![Value::Int64(1)]]);
    assert_eq!(
        db.commit_leader(&[defaulted]),
        None,
        "a DEFAULT key is made at commit"
    );
    let given = Mutation::insert(
        "D",
        &["Id", "V"],
        vec![vec![Value::String("a".into()), Value::Int64(1)]],
    );
    assert_eq!(db.commit_leader(&[given]), Some(2));
}
