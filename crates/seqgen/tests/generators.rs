//! The generators' guarantees, under many threads, injected aborts and a
//! simulated crash of an instance holding a batch.
//!
//! [`Faulty`] wraps a store and aborts transaction attempts at random
//! points (before the body, between its reads and writes, and after the
//! body has buffered its writes but before commit), as a lost lock conflict
//! would; [`Store::run`] must retry them without losing or repeating a
//! value.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use rand::Rng;
use rowtree_db::Database;
use rowtree_seqgen::{
    create_sequence, Async, AsyncBatch, Batch, Committed, Error, Generator, Result, Store, Sync,
    Txn,
};

/// A store whose transaction attempts abort with probability `p` at each
/// of several points.
struct Faulty<S> {
    inner: S,
    p: f64,
    injected: AtomicU64,
}

impl<S: Store> Faulty<S> {
    fn new(inner: S, p: f64) -> Faulty<S> {
        Faulty {
            inner,
            p,
            injected: AtomicU64::new(0),
        }
    }

    fn maybe_abort(&self, at: &str) -> Result<()> {
        if rand::thread_rng().gen_bool(self.p) {
            self.injected.fetch_add(1, Ordering::Relaxed);
            return Err(Error::aborted(format!("injected abort {at}")));
        }
        Ok(())
    }
}

struct FaultyTxn<'a, S> {
    txn: &'a mut dyn Txn,
    faults: &'a Faulty<S>,
}

impl<S: Store> Txn for FaultyTxn<'_, S> {
    fn read_next_value(&mut self, name: &str) -> Result<Option<i64>> {
        self.faults.maybe_abort("before a read")?;
        self.txn.read_next_value(name)
    }
    fn write_next_value(&mut self, name: &str, next_value: i64) -> Result<()> {
        self.txn.write_next_value(name, next_value)?;
        self.faults.maybe_abort("after a buffered write")
    }
    fn next_bit_reversed_value(&mut self, sequence: &str) -> Result<i64> {
        self.txn.next_bit_reversed_value(sequence)
    }
}

impl<S: Store> Store for Faulty<S> {
    fn run<T>(&self, body: &mut dyn FnMut(&mut dyn Txn) -> Result<T>) -> Result<Committed<T>> {
        self.inner.run(&mut |txn| {
            self.maybe_abort("at the start")?;
            let value = body(&mut FaultyTxn { txn, faults: self })?;
            self.maybe_abort("just before commit")?;
            Ok(value)
        })
    }
    fn apply_ddl(&self, statements: &[&str]) -> Result<()> {
        self.inner.apply_ddl(statements)
    }
    fn has_table(&self, table: &str) -> Result<bool> {
        self.inner.has_table(table)
    }
}

fn next_value_in_table(db: &Database, name: &str) -> i64 {
    db.run(&mut |t| t.read_next_value(name))
        .unwrap()
        .value
        .unwrap()
}

#[test]
fn sync_values_are_unique_gapless_and_ordered_by_commit_under_aborts() {
    let db = Database::in_memory();
    let store = Arc::new(Faulty::new(db.clone(), 0.15));
    create_sequence(&*store, "invoice", 100).unwrap();
    let sync = Sync::new("invoice");
    let failed_on_purpose = AtomicU64::new(0);
    let committed: Vec<(u64, i64)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..8)
            .map(|_| {
                let (store, sync, failed) = (&store, &sync, &failed_on_purpose);
                s.spawn(move || {
                    let mut mine = Vec::new();
                    for _ in 0..25 {
                        // One transaction in five fails for an application
                        // reason after taking a value: its value must not
                        // be lost (gapless), because the increment rolls
                        // back with it.
                        let fail = rand::thread_rng().gen_bool(0.2);
                        let outcome = store.run(&mut |t| {
                            let mut values = sync.in_transaction();
                            let v = values.next(t)?;
                            if fail {
                                return Err(Error::Config("the application gave up".into()));
                            }
                            Ok(v)
                        });
                        match outcome {
                            Ok(c) => mine.push((c.commit_timestamp.nanos() as u64, c.value)),
                            Err(Error::Config(_)) => {
                                failed.fetch_add(1, Ordering::Relaxed);
                            }
                            Err(e) => panic!("unexpected error: {e}"),
                        }
                    }
                    mine
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap())
            .collect()
    });
    assert!(
        store.injected.load(Ordering::Relaxed) > 0,
        "no abort was injected"
    );
    let mut by_commit = committed.clone();
    by_commit.sort();
    let values: Vec<i64> = by_commit.iter().map(|(_, v)| *v).collect();
    let n = values.len() as i64;
    assert_eq!(n + failed_on_purpose.load(Ordering::Relaxed) as i64, 200);
    // Gapless and ordered: in commit order the values are exactly 100, 101, ...
    assert_eq!(values, (100..100 + n).collect::<Vec<_>>());
    assert_eq!(next_value_in_table(&db, "invoice"), 100 + n);
}

#[test]
fn several_sync_values_in_one_transaction_read_the_row_once() {
    let db = Arc::new(Database::in_memory());
    create_sequence(&*db, "s", 1).unwrap();
    let sync = Sync::new("s");
    let got = db
        .run(&mut |t| {
            let mut values = sync.in_transaction();
            Ok([values.next(t)?, values.next(t)?, values.next(t)?])
        })
        .unwrap()
        .value;
    assert_eq!(got, [1, 2, 3]);
    assert_eq!(next_value_in_table(&db, "s"), 4);
}

#[test]
fn async_values_are_unique_and_each_caller_sees_them_rise() {
    let db = Database::in_memory();
    let store = Arc::new(Faulty::new(db.clone(), 0.1));
    create_sequence(&*store, "s", 1).unwrap();
    let generator = Async::new(store.clone(), "s");
    let per_thread: Vec<Vec<i64>> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..8)
            .map(|_| {
                let g = &generator;
                s.spawn(move || (0..40).map(|_| g.next_value().unwrap()).collect())
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    for values in &per_thread {
        assert!(values.windows(2).all(|w| w[0] < w[1]), "{values:?}");
    }
    let all: BTreeSet<i64> = per_thread.iter().flatten().copied().collect();
    assert_eq!(all.len(), 320, "a value was handed out twice");
    // Nothing else took values, so here there is no gap either.
    assert_eq!(all, (1..=320).collect());
    assert_eq!(next_value_in_table(&db, "s"), 321);
}

/// Values from several instances of a batch generator, each used by
/// several threads, with aborts injected into every fetch.
fn batch_instances_hand_out_unique_values(
    make: impl Fn(Arc<Faulty<Database>>) -> Box<dyn Generator>,
) {
    let db = Database::in_memory();
    let store = Arc::new(Faulty::new(db.clone(), 0.2));
    create_sequence(&*store, "s", 1).unwrap();
    let instances: Vec<Box<dyn Generator>> = (0..3).map(|_| make(store.clone())).collect();
    let values: Vec<i64> = std::thread::scope(|s| {
        let workers: Vec<_> = instances
            .iter()
            .flat_map(|g| std::iter::repeat_n(g, 4))
            .map(|g| {
                s.spawn(move || {
                    (0..150)
                        .map(|_| g.next_value().unwrap())
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap())
            .collect()
    });
    let unique: BTreeSet<i64> = values.iter().copied().collect();
    assert_eq!(unique.len(), values.len(), "a value was handed out twice");
    assert_eq!(values.len(), 3 * 4 * 150);
    let next = next_value_in_table(&db, "s");
    assert!(
        *unique.last().unwrap() < next,
        "a value at or above next_value {next} was handed out"
    );
    assert!(*unique.first().unwrap() >= 1);
}

#[test]
fn batch_instances_never_repeat_a_value() {
    batch_instances_hand_out_unique_values(|store| Box::new(Batch::new(store, "s", 7).unwrap()));
}

#[test]
fn async_batch_instances_never_repeat_a_value() {
    batch_instances_hand_out_unique_values(|store| {
        Box::new(AsyncBatch::new(store, "s", 16, 5).unwrap())
    });
}

/// A store whose transactions wait for a permit: the test decides when a
/// background fetch may finish.
struct Gated {
    db: Database,
    permits: parking_lot::Mutex<u32>,
    granted: parking_lot::Condvar,
}

impl Gated {
    fn permit(&self, n: u32) {
        *self.permits.lock() += n;
        self.granted.notify_all();
    }
}

impl Store for Gated {
    fn run<T>(&self, body: &mut dyn FnMut(&mut dyn Txn) -> Result<T>) -> Result<Committed<T>> {
        let mut permits = self.permits.lock();
        while *permits == 0 {
            self.granted.wait(&mut permits);
        }
        *permits -= 1;
        drop(permits);
        self.db.run(body)
    }
    fn apply_ddl(&self, statements: &[&str]) -> Result<()> {
        Store::apply_ddl(&self.db, statements)
    }
    fn has_table(&self, table: &str) -> Result<bool> {
        self.db.has_table(table)
    }
}

#[test]
fn an_async_batch_caller_waits_only_when_the_batch_runs_dry() {
    let store = Arc::new(Gated {
        db: Database::in_memory(),
        permits: parking_lot::Mutex::new(1),
        granted: parking_lot::Condvar::new(),
    });
    create_sequence(&*store, "s", 1).unwrap();
    store.permit(1); // the first batch
    let generator = AsyncBatch::new(store.clone(), "s", 10, 5).unwrap();
    assert_eq!(generator.next_value().unwrap(), 1);
    // The first call may have waited for the first batch; none after it
    // waits while values remain, though the next fetch cannot finish.
    let waits = generator.waits();
    for expected in 2..=10 {
        assert_eq!(generator.next_value().unwrap(), expected);
    }
    assert_eq!(
        generator.waits(),
        waits,
        "a caller waited while values remained"
    );
    // The fetch started below the low-water mark (5 left) is still held.
    assert_eq!(generator.fetches(), 2);
    std::thread::scope(|s| {
        let taker = s.spawn(|| generator.next_value().unwrap());
        while generator.waits() == waits {
            std::thread::yield_now();
        }
        assert!(
            !taker.is_finished(),
            "the batch ran dry, so the caller must wait"
        );
        store.permit(1);
        assert_eq!(taker.join().unwrap(), 11);
    });
    assert_eq!(generator.waits(), waits + 1);
}

#[test]
fn bad_configurations_are_refused() {
    let db = Arc::new(Database::in_memory());
    assert!(matches!(
        Batch::new(db.clone(), "s", 0),
        Err(Error::Config(_))
    ));
    assert!(matches!(
        AsyncBatch::new(db.clone(), "s", 10, 10),
        Err(Error::Config(_))
    ));
    assert!(matches!(
        AsyncBatch::new(db.clone(), "s", 10, -1),
        Err(Error::Config(_))
    ));
    assert!(matches!(
        create_sequence(&*db, "", 1),
        Err(Error::Config(_))
    ));
    create_sequence(&*db, "exists", 1).unwrap();
    let missing = Async::new(db.clone(), "nope");
    assert!(matches!(
        missing.next_value(),
        Err(Error::NoSuchSequence { .. })
    ));
}

#[test]
fn a_sequence_at_the_end_of_int64_is_exhausted_not_wrapped() {
    let db = Arc::new(Database::in_memory());
    create_sequence(&*db, "s", i64::MAX - 2).unwrap();
    let generator = Batch::new(db.clone(), "s", 2).unwrap();
    assert_eq!(generator.next_value().unwrap(), i64::MAX - 2);
    assert_eq!(generator.next_value().unwrap(), i64::MAX - 1);
    assert!(matches!(
        generator.next_value(),
        Err(Error::Exhausted { .. })
    ));
}

/// An instance that stops (crashes) while holding a batch leaves its
/// unused values as a gap: after the database restarts, the next instance
/// starts above the whole batch, so no value is ever handed out twice.
#[test]
fn a_crashed_instance_holding_a_batch_leaves_a_gap_never_a_duplicate() {
    let dir = tempfile::tempdir().unwrap();
    let mut before = Vec::new();
    {
        let db = Arc::new(Database::open(dir.path()).unwrap());
        create_sequence(&*db, "s", 1).unwrap();
        let batch = Batch::new(db.clone(), "s", 100).unwrap();
        let async_batch = AsyncBatch::new(db.clone(), "s", 50, 10).unwrap();
        for _ in 0..10 {
            before.push(batch.next_value().unwrap());
            before.push(async_batch.next_value().unwrap());
        }
        // The "crash": both instances vanish with values left in their
        // batches, and so does the process's database handle.
        drop(batch);
        drop(async_batch);
        drop(db);
    }
    // A background fetch still in flight holds the database open a moment.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let db = loop {
        match Database::open(dir.path()) {
            Ok(db) => break Arc::new(db),
            Err(e) if std::time::Instant::now() < deadline => {
                let _ = e;
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            Err(e) => panic!("cannot reopen: {e}"),
        }
    };
    let next = next_value_in_table(&db, "s");
    assert!(next >= 151, "the row forgot a batch: next_value is {next}");
    let after = Batch::new(db.clone(), "s", 100).unwrap();
    let v = after.next_value().unwrap();
    assert_eq!(v, next);
    let max_before = *before.iter().max().unwrap();
    assert!(
        v > max_before,
        "{v} was possibly handed out before the crash"
    );
    let unique: BTreeSet<i64> = before.iter().copied().collect();
    assert_eq!(unique.len(), before.len());
}
