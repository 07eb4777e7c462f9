//! Tree scans: a table's key ranges read once as whole row trees, returning
//! the table's rows and its included descendants' rows, tagged, in key order.

use rowtree_db::{
    Database, KeyRange, KeySet, Mutation, TaggedRow, TimestampBound, TreeScanRequest, Value,
};

fn int(i: i64) -> Value {
    Value::Int64(i)
}

/// Users 1..=3; user u has `events(u)` Events, 2 Notes (a sibling table),
/// an interleaved index entry per event, and user 2's first event has 2 Tags
/// (a grandchild). Orphans (INTERLEAVE IN, no parent row needed) has a row
/// under the missing user 9.
fn db() -> Database {
    let db = Database::in_memory();
    db.apply_ddl(&[
        "CREATE TABLE Users (UserId INT64 NOT NULL, Name STRING(MAX)) PRIMARY KEY (UserId)",
        "CREATE TABLE Events (UserId INT64 NOT NULL, Ts INT64 NOT NULL, Kind STRING(MAX)) PRIMARY KEY (UserId, Ts DESC), INTERLEAVE IN PARENT Users ON DELETE CASCADE",
        "CREATE TABLE Notes (UserId INT64 NOT NULL, NoteId INT64 NOT NULL) PRIMARY KEY (UserId, NoteId), INTERLEAVE IN PARENT Users ON DELETE CASCADE",
        "CREATE TABLE Tags (UserId INT64 NOT NULL, Ts INT64 NOT NULL, Tag STRING(MAX) NOT NULL) PRIMARY KEY (UserId, Ts DESC, Tag), INTERLEAVE IN PARENT Events ON DELETE CASCADE",
        "CREATE TABLE Orphans (UserId INT64 NOT NULL, X INT64 NOT NULL) PRIMARY KEY (UserId, X), INTERLEAVE IN Users",
        "CREATE INDEX EventsByKind ON Events(UserId, Kind), INTERLEAVE IN Users",
    ])
    .expect("schema");
    let mut muts = vec![Mutation::insert(
        "Users",
        &["UserId", "Name"],
        (1..=3)
            .map(|u| vec![int(u), Value::String(format!("u{u}"))])
            .collect(),
    )];
    for u in 1..=3 {
        muts.push(Mutation::insert(
            "Events",
            &["UserId", "Ts", "Kind"],
            (1..=events(u))
                .map(|t| vec![int(u), int(t), Value::String(format!("k{t}"))])
                .collect(),
        ));
        muts.push(Mutation::insert(
            "Notes",
            &["UserId", "NoteId"],
            vec![vec![int(u), int(1)], vec![int(u), int(2)]],
        ));
    }
    muts.push(Mutation::insert(
        "Tags",
        &["UserId", "Ts", "Tag"],
        vec![
            vec![int(2), int(1), Value::String("a".into())],
            vec![int(2), int(1), Value::String("b".into())],
        ],
    ));
    muts.push(Mutation::insert(
        "Orphans",
        &["UserId", "X"],
        vec![vec![int(9), int(1)]],
    ));
    db.write(muts).expect("seed");
    db
}

fn events(u: i64) -> i64 {
    match u {
        1 => 3,
        2 => 5,
        _ => 2,
    }
}

/// Keys in user u's row tree: the user, events, index entries, notes, tags.
fn tree_keys(u: i64) -> u64 {
    (1 + 2 * events(u) + 2 + if u == 2 { 2 } else { 0 }) as u64
}

/// (source, first two key values) of each row.
fn shape(rows: &[TaggedRow]) -> Vec<(usize, i64, i64)> {
    rows.iter()
        .map(|r| {
            let a = match r.row[0] {
                Value::Int64(i) => i,
                ref o => panic!("{o:?}"),
            };
            let b = match r.row.get(1) {
                Some(Value::Int64(i)) => *i,
                _ => -1,
            };
            (r.source, a, b)
        })
        .collect()
}

fn collect(stream: rowtree_db::TreeStream) -> (Vec<TaggedRow>, rowtree_db::ScanStats) {
    let mut stream = stream;
    let rows: Vec<TaggedRow> = stream.by_ref().map(|r| r.expect("row")).collect();
    (rows, stream.stats())
}

#[test]
fn one_row_tree_is_read_once_parent_first() {
    let db = db();
    let ro = db.read_only(TimestampBound::Strong).expect("ro");
    let req = TreeScanRequest::new("Users", &["Events"], KeySet::key(vec![int(2)]));
    let (rows, stats) = collect(ro.scan_tree(&req).expect("scan"));
    // The user, then its events in key order (Ts DESC).
    assert_eq!(
        shape(&rows),
        vec![
            (0, 2, -1),
            (1, 2, 5),
            (1, 2, 4),
            (1, 2, 3),
            (1, 2, 2),
            (1, 2, 1)
        ]
    );
    let catalog = db.catalog();
    assert_eq!(rows[0].table_id, catalog.table("Users").expect("t").id);
    assert_eq!(rows[1].table_id, catalog.table("Events").expect("t").id);
    // Every key of the tree once (notes, tags and index entries skipped), nothing else.
    assert_eq!(stats.rows_scanned, tree_keys(2));
    assert_eq!(stats.rows_returned, 6);
    assert_eq!(stats.splits_touched, 1);
}

#[test]
fn several_trees_siblings_and_grandchildren() {
    let db = db();
    let ro = db.read_only(TimestampBound::Strong).expect("ro");
    let req = TreeScanRequest::new("Users", &["Tags", "Notes"], KeySet::all());
    let (rows, stats) = collect(ro.scan_tree(&req).expect("scan"));
    let mut want = Vec::new();
    for u in 1..=3 {
        want.push((0, u, -1));
        if u == 2 {
            // Tags (source 1) sort under their event, before the Notes.
            want.push((1, 2, 1));
            want.push((1, 2, 1));
        }
        want.push((2, u, 1));
        want.push((2, u, 2));
    }
    assert_eq!(shape(&rows), want);
    // The whole key space of Users once, orphans included.
    assert_eq!(stats.rows_scanned, (1..=3).map(tree_keys).sum::<u64>() + 1);
}

#[test]
fn overlapping_keys_and_ranges_read_each_key_once() {
    let db = db();
    let ro = db.read_only(TimestampBound::Strong).expect("ro");
    let mut ks = KeySet::keys(vec![vec![int(1)], vec![int(3)], vec![int(1)]]);
    ks.ranges.push(KeyRange::closed(vec![int(1)], vec![int(2)]));
    let req = TreeScanRequest::new("Users", &["Events"], ks);
    let (rows, stats) = collect(ro.scan_tree(&req).expect("scan"));
    let parents: Vec<i64> = shape(&rows)
        .into_iter()
        .filter(|r| r.0 == 0)
        .map(|r| r.1)
        .collect();
    assert_eq!(parents, vec![1, 2, 3]);
    assert_eq!(rows.len(), 3 + 3 + 5 + 2);
    assert_eq!(
        stats.rows_scanned,
        tree_keys(1) + tree_keys(2) + tree_keys(3)
    );
    // An open range start skips its key's whole tree.
    let ks = KeySet::range(KeyRange {
        start: rowtree_db::Bound::Open(vec![int(1)]),
        end: rowtree_db::Bound::Open(vec![int(3)]),
    });
    let (rows, stats) = collect(
        ro.scan_tree(&TreeScanRequest::new("Users", &["Events"], ks))
            .expect("scan"),
    );
    assert_eq!(rows.len(), 6);
    assert_eq!(stats.rows_scanned, tree_keys(2));
}

#[test]
fn reverse_and_limit() {
    let db = db();
    let ro = db.read_only(TimestampBound::Strong).expect("ro");
    let req = TreeScanRequest {
        reverse: true,
        ..TreeScanRequest::new("Users", &["Events"], KeySet::key(vec![int(3)]))
    };
    let (rows, _) = collect(ro.scan_tree(&req).expect("scan"));
    assert_eq!(shape(&rows), vec![(1, 3, 1), (1, 3, 2), (0, 3, -1)]);
    let req = TreeScanRequest {
        limit: 2,
        ..TreeScanRequest::new("Users", &["Events"], KeySet::all())
    };
    let (rows, _) = collect(ro.scan_tree(&req).expect("scan"));
    assert_eq!(shape(&rows), vec![(0, 1, -1), (1, 1, 3)]);
}

#[test]
fn own_dml_is_merged() {
    let db = db();
    let mut txn = db.begin();
    txn.apply_dml(vec![
        Mutation::insert(
            "Events",
            &["UserId", "Ts", "Kind"],
            vec![vec![int(3), int(7), Value::String("new".into())]],
        ),
        Mutation::delete("Events", KeySet::key(vec![int(3), int(1)])),
        Mutation::update(
            "Users",
            &["UserId", "Name"],
            vec![vec![int(3), Value::String("renamed".into())]],
        ),
        // A sibling row written by the transaction is not returned either.
        Mutation::insert("Notes", &["UserId", "NoteId"], vec![vec![int(3), int(9)]]),
    ])
    .expect("dml");
    let req = TreeScanRequest::new("Users", &["Events"], KeySet::key(vec![int(3)]));
    let (rows, _) = collect(txn.scan_tree(&req).expect("scan"));
    assert_eq!(shape(&rows), vec![(0, 3, -1), (1, 3, 7), (1, 3, 2)]);
    assert_eq!(rows[0].row[1], Value::String("renamed".into()));
    assert_eq!(rows[1].row[2], Value::String("new".into()));
    txn.commit().expect("commit");
}

#[test]
fn only_descendants_may_be_included() {
    let db = db();
    let ro = db.read_only(TimestampBound::Strong).expect("ro");
    let err = ro
        .scan_tree(&TreeScanRequest::new("Events", &["Users"], KeySet::all()))
        .unwrap_err();
    assert!(err.to_string().contains("not interleaved"), "{err}");
    let err = ro
        .scan_tree(&TreeScanRequest::new("Users", &["Nope"], KeySet::all()))
        .unwrap_err();
    assert!(err.to_string().contains("Nope"), "{err}");
    // Nothing included: the table's own rows, still reading whole trees.
    let (rows, stats) = collect(
        ro.scan_tree(&TreeScanRequest::new(
            "Users",
            &[],
            KeySet::key(vec![int(1)]),
        ))
        .expect("scan"),
    );
    assert_eq!(shape(&rows), vec![(0, 1, -1)]);
    assert_eq!(stats.rows_scanned, tree_keys(1));
}
