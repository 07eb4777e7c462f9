//! The database's split manager, driven by an injected clock: a hot table
//! is split by load after `hot_for`, the load history survives a reopen,
//! manual split points carry an expiry, and the split map (boundaries,
//! nodes, manual split points) survives a reopen, while a bad stored map
//! only costs the boundaries.

use std::sync::Arc;
use std::time::Duration;

use rowtree_db::{Database, KeySet, Mutation, Options, ReadRequest, Value};
use rowtree_kv::{
    Granularity, NodeId, SplitEvent, SplitId, SplitPolicy, SplitReason, SplitsRecord,
};
use rowtree_storage::{Durability, WriteBatch};
use rowtree_txn::{Clock, ManualClock};

/// A whole minute, so minute roll-ups fall on round numbers.
const T0: u64 = 1_800_000_000 * 1_000_000_000;
const SECOND: u64 = 1_000_000_000;
const USERS: &str = "CREATE TABLE Users (Id INT64 NOT NULL, Name STRING(MAX)) PRIMARY KEY (Id)";

/// Options with `clock`, a low split threshold (a test cannot spend
/// 30 CPU-seconds a minute: each written row is charged 10 µs, so 5 rows a
/// second score about 0.005), and no background ticks (the test ticks).
fn options(clock: &Arc<ManualClock>) -> Options {
    Options {
        clock: clock.clone(),
        split_policy: SplitPolicy {
            split_threshold: 0.002,
            ..SplitPolicy::default()
        },
        split_interval: Duration::from_secs(3600),
        ..Options::default()
    }
}

/// Writes one row with a pseudo-random id in `0..10_000` every 200 ms for
/// `seconds`, ticking the split manager every second; returns the events.
fn uniform_writes(
    db: &Database,
    clock: &ManualClock,
    seconds: u64,
    seed: &mut u64,
) -> Vec<SplitEvent> {
    let mut events = Vec::new();
    for _ in 0..seconds {
        for _ in 0..5 {
            *seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let id = ((*seed >> 33) % 10_000) as i64;
            db.write(vec![Mutation::insert_or_update(
                "Users",
                &["Id", "Name"],
                vec![vec![Value::Int64(id), Value::String(format!("user {id}"))]],
            )])
            .expect("write");
            clock.advance(SECOND / 5);
        }
        events.extend(db.tick_splits());
    }
    events
}

#[test]
fn a_hot_uniform_table_is_split_by_load_after_hot_for() {
    let clock = Arc::new(ManualClock::new(T0));
    let db = Database::in_memory_with(options(&clock));
    db.apply_ddl(&[USERS]).unwrap();
    let before = db.split_stats().len();
    let mut seed = 7;

    // Hot, but not for long enough yet.
    let early = uniform_writes(&db, &clock, 100, &mut seed);
    assert!(
        !early.iter().any(|e| matches!(e, SplitEvent::Split { .. })),
        "{early:?}"
    );

    let events = uniform_writes(&db, &clock, 80, &mut seed);
    let (at, key) = events
        .iter()
        .find_map(|e| match e {
            SplitEvent::Split {
                at,
                key,
                reason: SplitReason::Load,
                ..
            } => Some((*at, key.clone())),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no load split: {events:?}"));
    assert!(
        at >= T0 + 120 * SECOND,
        "split too early: {}",
        (at - T0) / SECOND
    );
    assert!(db.split_stats().len() > before);
    // The boundary is a root-row boundary of Users, well inside the table.
    let described = rowtree_db::keys::describe(&db.catalog(), &key);
    let id: i64 = described
        .strip_prefix("Users(")
        .and_then(|s| s.strip_suffix(')'))
        .unwrap_or_else(|| panic!("not a Users row boundary: {described}"))
        .parse()
        .unwrap();
    assert!(
        (2_000..8_000).contains(&id),
        "unbalanced split at {described}"
    );
    assert_eq!(
        db.split_events()
            .iter()
            .filter(|e| **e == events[0])
            .count(),
        1
    );

    // The minute roll-ups saw the hot split.
    let minutes = db.split_history().intervals(Granularity::Minute);
    assert!(minutes.len() >= 2, "{}", minutes.len());
    assert!(minutes
        .iter()
        .flat_map(|(_, stats)| stats)
        .any(|s| s.cpu_score > 0.002 && s.rows_written > 0));
}

/// `a` and `b` hold the same rows (CPU scores equal up to JSON's float
/// round trip: serde_json's default float parsing may be off by an ulp).
fn same_history(a: &rowtree_kv::LoadHistory, b: &rowtree_kv::LoadHistory) {
    for g in [
        Granularity::Minute,
        Granularity::TenMinutes,
        Granularity::Hour,
    ] {
        let (a, b) = (a.intervals(g), b.intervals(g));
        assert_eq!(a.len(), b.len(), "{g:?}");
        for ((end_a, rows_a), (end_b, rows_b)) in a.iter().zip(&b) {
            assert_eq!(end_a, end_b);
            assert_eq!(rows_a.len(), rows_b.len());
            for (x, y) in rows_a.iter().zip(rows_b) {
                assert!((x.cpu_score - y.cpu_score).abs() <= 1e-9 * x.cpu_score.abs().max(1.0));
                let mut y = y.clone();
                y.cpu_score = x.cpu_score;
                assert_eq!(x, &y);
            }
        }
    }
}

#[test]
fn the_load_history_survives_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(T0));
    let history = {
        let db = Database::open_with(dir.path(), options(&clock)).unwrap();
        db.apply_ddl(&[USERS]).unwrap();
        uniform_writes(&db, &clock, 150, &mut 11);
        let history = db.split_history();
        assert!(history.intervals(Granularity::Minute).len() >= 2);
        history
    };
    let db = Database::open_with(dir.path(), options(&clock)).unwrap();
    same_history(&db.split_history(), &history);
    // It keeps growing after the reopen.
    uniform_writes(&db, &clock, 61, &mut 12);
    assert!(
        db.split_history().intervals(Granularity::Minute).len()
            > history.intervals(Granularity::Minute).len()
    );
}

#[test]
fn the_history_is_saved_every_minute_while_open() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(T0));
    let db = Database::open_with(dir.path(), options(&clock)).unwrap();
    db.apply_ddl(&[USERS]).unwrap();
    uniform_writes(&db, &clock, 130, &mut 3);
    // A second handle on the same engine is not possible, but the saved
    // copy is what a crash would leave: read it through the Meta space.
    let stored = db
        .router()
        .meta_get(b"splits/history")
        .unwrap()
        .expect("history saved while open");
    let stored = rowtree_kv::LoadHistory::from_bytes(&stored).unwrap();
    assert!(!stored.intervals(Granularity::Minute).is_empty());
}

#[test]
fn manual_split_points_expire_within_thirty_days() {
    let clock = Arc::new(ManualClock::new(T0));
    let db = Database::in_memory_with(options(&clock));
    db.apply_ddl(&[USERS]).unwrap();
    assert!(db.add_split_point("Users", &[Value::Int64(100)]).unwrap());
    assert!(matches!(
        db.split_events().last(),
        Some(SplitEvent::Split {
            reason: SplitReason::Manual,
            ..
        })
    ));
    // Already a boundary: no new one, but accepted.
    assert!(!db
        .add_split_point_until("Users", &[Value::Int64(100)], T0 + SECOND)
        .unwrap());
    // An expiry in the past is refused.
    assert!(db
        .add_split_point_until("Users", &[Value::Int64(200)], clock.now_nanos() - 1)
        .is_err());
    assert!(db
        .add_split_point_until("Users", &[Value::Int64(200)], u64::MAX)
        .unwrap());
}

#[test]
fn nodes_get_a_gate_only_when_capacity_matters() {
    let one = Database::in_memory();
    assert!(one.router().gate().is_none());
    assert_eq!(one.split_manager().config().nodes, 1);
    let several = Database::in_memory_with(Options {
        nodes: 3,
        ..Options::default()
    });
    let gate = several.router().gate().expect("a gate with several nodes");
    assert_eq!(gate.reads_per_second(), 22_500.0);
    assert_eq!(several.split_manager().config().nodes, 3);
    let capped = Database::in_memory_with(Options {
        node_capacity: Some(500.0),
        ..Options::default()
    });
    assert_eq!(capped.router().gate().unwrap().reads_per_second(), 500.0);
}

/// A table that grows past the size limit is split by size, at a row
/// boundary near the middle of its bytes; a small table is never measured.
#[test]
fn a_table_past_the_size_limit_is_split_by_size() {
    let clock = Arc::new(ManualClock::new(T0));
    let db = Database::in_memory_with(Options {
        clock: clock.clone(),
        split_policy: SplitPolicy {
            size_limit: 64 << 10,
            ..SplitPolicy::default()
        },
        split_interval: Duration::from_secs(3600),
        ..Options::default()
    });
    db.apply_ddl(&[USERS]).unwrap();
    let row = |id: i64| vec![Value::Int64(id), Value::String("x".repeat(1000))];
    // 20 KB: under half the limit, nothing is measured or split.
    db.write(vec![Mutation::insert(
        "Users",
        &["Id", "Name"],
        (0..20).map(row).collect(),
    )])
    .unwrap();
    clock.advance(SECOND);
    assert!(db.tick_splits().is_empty());
    // 200 KB in all: split by size.
    for chunk in 0..9 {
        let ids = (20 + chunk * 20)..(40 + chunk * 20);
        db.write(vec![Mutation::insert(
            "Users",
            &["Id", "Name"],
            ids.map(row).collect(),
        )])
        .unwrap();
    }
    clock.advance(SECOND);
    let events = db.tick_splits();
    let cut = events
        .iter()
        .find_map(|e| match e {
            SplitEvent::Split {
                key,
                reason: SplitReason::Size,
                ..
            } => Some(key.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no size split: {events:?}"));
    let at = rowtree_db::keys::describe(&db.catalog(), &cut);
    // The cut is a Users row near the middle of ids 0..200.
    let id: i64 = at
        .trim_start_matches("Users(")
        .trim_end_matches(')')
        .parse()
        .unwrap_or_else(|_| panic!("not a Users row boundary: {at}"));
    assert!((60..=140).contains(&id), "{at}");
}

/// Every split's id, range and node.
type Layout = Vec<(SplitId, Vec<u8>, Option<Vec<u8>>, NodeId)>;

fn layout(db: &Database) -> Layout {
    db.router()
        .split_map()
        .splits()
        .iter()
        .map(|s| (s.id, s.start.clone(), s.limit.clone(), s.node()))
        .collect()
}

/// The split map as stored now (what a crash would leave).
fn stored_map(db: &Database) -> SplitsRecord {
    let bytes = db
        .router()
        .meta_get(b"splits/map")
        .unwrap()
        .expect("the split map is stored");
    SplitsRecord::from_bytes(&bytes).unwrap()
}

fn ids(db: &Database) -> Vec<i64> {
    db.read(&ReadRequest::new("Users", &["Id"], KeySet::all()))
        .unwrap()
        .into_iter()
        .map(|row| match row[0] {
            Value::Int64(id) => id,
            ref v => panic!("{v:?}"),
        })
        .collect()
}

/// Load splits, a manual split point and a move to another node, saved as
/// they happen: a reopened database has the same splits (ids, boundaries,
/// nodes) and still knows the manual point's expiry and which boundaries
/// it may merge away; new ids do not repeat old ones.
#[test]
fn split_boundaries_nodes_and_manual_points_survive_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(T0));
    let opts = || Options {
        nodes: 2,
        ..options(&clock)
    };
    let (before, record, rows) = {
        let db = Database::open_with(dir.path(), opts()).unwrap();
        db.apply_ddl(&[USERS]).unwrap();
        let tables_only = db.split_stats().len();
        let events = uniform_writes(&db, &clock, 190, &mut 5);
        assert!(
            events.iter().any(|e| matches!(
                e,
                SplitEvent::Split {
                    reason: SplitReason::Load,
                    ..
                }
            )),
            "{events:?}"
        );
        assert!(db
            .add_split_point("Users", &[Value::Int64(12_345)])
            .unwrap());
        // Saved at once, not only at close.
        assert_eq!(stored_map(&db), db.split_manager().to_record());
        let last = layout(&db).last().unwrap().0;
        assert!(db.router().splits().set_node(last, NodeId(1)));
        db.tick_splits();
        assert_eq!(stored_map(&db), db.split_manager().to_record());
        assert!(layout(&db).len() >= tables_only + 2);
        let record = db.split_manager().to_record();
        assert_eq!(record.manual.len(), 1);
        assert!(!record.mergeable.is_empty(), "the load split is mergeable");
        (layout(&db), record, ids(&db))
    };

    let db = Database::open_with(dir.path(), opts()).unwrap();
    assert_eq!(layout(&db), before);
    assert_eq!(layout(&db).last().unwrap().3, NodeId(1));
    let after = db.split_manager().to_record();
    assert_eq!(after.manual, record.manual);
    assert_eq!(after.mergeable, record.mergeable);
    assert_eq!(ids(&db), rows);
    // New splits get new ids.
    assert!(db
        .add_split_point("Users", &[Value::Int64(54_321)])
        .unwrap());
    let old: Vec<SplitId> = before.iter().map(|s| s.0).collect();
    for (id, ..) in layout(&db) {
        assert!(old.contains(&id) || id.0 >= record.next_id, "{id}");
    }
}

/// A stored map that does not decode, or that does not cover the key
/// space, is ignored: the database opens with the default map (one split
/// per table), its data intact, and stores a valid map again.
#[test]
fn a_bad_stored_split_map_opens_with_the_default_map() {
    let partial = |record: &SplitsRecord| {
        let mut r = record.clone();
        r.splits.pop();
        r.to_bytes()
    };
    let garbage = |_: &SplitsRecord| b"{\"version\":1,\"splits\":[{".to_vec();
    let other_version = |record: &SplitsRecord| {
        let mut r = record.clone();
        r.version = 99;
        r.to_bytes()
    };
    for (name, spoil) in [
        (
            "partial cover",
            &partial as &dyn Fn(&SplitsRecord) -> Vec<u8>,
        ),
        ("garbage", &garbage),
        ("another version", &other_version),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let clock = Arc::new(ManualClock::new(T0));
        let (default_starts, rows, history_max) = {
            let db = Database::open_with(dir.path(), options(&clock)).unwrap();
            db.apply_ddl(&[USERS]).unwrap();
            let default_starts: Vec<Vec<u8>> = layout(&db).into_iter().map(|s| s.1).collect();
            uniform_writes(&db, &clock, 70, &mut 9);
            for id in [100, 2_000, 7_000] {
                db.add_split_point("Users", &[Value::Int64(id)]).unwrap();
            }
            let mut batch = WriteBatch::new();
            let bad = spoil(&stored_map(&db));
            db.router()
                .stage_meta(&mut batch, b"splits/map".to_vec(), Some(bad));
            db.router().write(batch, Durability::Sync).unwrap();
            let history_max = db
                .split_history()
                .max_split_id()
                .expect("a minute of history");
            (default_starts, ids(&db), history_max)
        };

        let db = Database::open_with(dir.path(), options(&clock)).unwrap();
        let starts: Vec<Vec<u8>> = layout(&db).into_iter().map(|s| s.1).collect();
        assert_eq!(starts, default_starts, "{name}");
        assert_eq!(ids(&db), rows, "{name}");
        assert!(db.split_manager().to_record().manual.is_empty(), "{name}");
        // Ids start above those the load history names.
        assert!(
            layout(&db).iter().all(|s| s.0 > history_max),
            "{name}: {:?} vs {history_max}",
            layout(&db)
        );
        // A valid map is stored again.
        assert_eq!(stored_map(&db), db.split_manager().to_record(), "{name}");
    }
}

/// A database from before the split map was stored (no record) opens with
/// the default map and stores it.
#[test]
fn a_database_without_a_stored_map_opens_with_the_default_map() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(T0));
    let starts = {
        let db = Database::open_with(dir.path(), options(&clock)).unwrap();
        db.apply_ddl(&[USERS]).unwrap();
        let starts: Vec<Vec<u8>> = layout(&db).into_iter().map(|s| s.1).collect();
        db.add_split_point("Users", &[Value::Int64(100)]).unwrap();
        let mut batch = WriteBatch::new();
        db.router()
            .stage_meta(&mut batch, b"splits/map".to_vec(), None);
        db.router().write(batch, Durability::Sync).unwrap();
        starts
    };
    let db = Database::open_with(dir.path(), options(&clock)).unwrap();
    let now: Vec<Vec<u8>> = layout(&db).into_iter().map(|s| s.1).collect();
    assert_eq!(now, starts);
    assert_eq!(stored_map(&db), db.split_manager().to_record());
}
