//! Property test: secondary indexes and interleaved row trees stay exactly
//! what the table rows say they should be, under random mutations.
//!
//! A small schema with every kind of index entry:
//!
//! ```text
//! P(Id) A, B, C              root table
//!   PByA(A) STORING (B)       non-unique index with a stored column
//!   PByBC(B, C DESC)          NULL_FILTERED index, mixed directions
//! K(Id, Sub) V               interleaved in P, ON DELETE CASCADE
//!   KByV(V)                   global index on the child
//!   KByIdV(Id, V DESC)        index interleaved in P (NULLs sort last in DESC)
//! ```
//!
//! Random commits of insert / update / insert_or_update / replace / delete
//! (keys, ranges, all) are applied to the database and to a `BTreeMap` model
//! that implements Spanner's mutation semantics. After each commit:
//!
//! * the commit succeeds exactly when the model says it should, and fails
//!   with the error code the model predicts (ALREADY_EXISTS, NOT_FOUND);
//! * both tables read back as the model;
//! * every index read with `KeySet::all()` equals the index recomputed from
//!   the model rows, in the index's order;
//! * the store holds no other keys (no orphan index entries or child rows).
//!
//! At the end, every earlier commit's snapshot is read again at its commit
//! timestamp and must still match.

use std::cmp::Reverse;
use std::collections::BTreeMap;

use proptest::prelude::*;
use proptest::test_runner::Config;
use rowtree_db::{
    Bound, Code, Database, KeyRange, KeySet, Mutation, ReadRequest, Value, WriteKind,
};

const SCHEMA: &[&str] = &[
    "CREATE TABLE P (Id INT64 NOT NULL, A INT64, B STRING(MAX), C INT64) PRIMARY KEY (Id)",
    "CREATE INDEX PByA ON P(A) STORING (B)",
    "CREATE NULL_FILTERED INDEX PByBC ON P(B, C DESC)",
    "CREATE TABLE K (Id INT64 NOT NULL, Sub INT64 NOT NULL, V INT64) PRIMARY KEY (Id, Sub), INTERLEAVE IN PARENT P ON DELETE CASCADE",
    "CREATE INDEX KByV ON K(V)",
    "CREATE INDEX KByIdV ON K(Id, V DESC), INTERLEAVE IN P",
];

// ---------------------------------------------------------------------------
// The model
// ---------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq, Default)]
struct PRow {
    a: Option<i64>,
    b: Option<String>,
    c: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Default)]
struct Model {
    p: BTreeMap<i64, PRow>,
    k: BTreeMap<(i64, i64), Option<i64>>,
}

/// A P write: which of A, B, C are named, and each row's values.
#[derive(Debug, Clone)]
struct PWrite {
    kind: WriteKind,
    named: [bool; 3],
    rows: Vec<(i64, PRow)>,
}

#[derive(Debug, Clone)]
struct KWrite {
    kind: WriteKind,
    with_v: bool,
    rows: Vec<(i64, i64, Option<i64>)>,
}

#[derive(Debug, Clone)]
enum Op {
    WriteP(PWrite),
    DeletePKeys(Vec<i64>),
    /// `(start, start_open, end, end_open)`.
    DeletePRange(i64, bool, i64, bool),
    DeletePAll,
    WriteK(KWrite),
    DeleteKKeys(Vec<(i64, i64)>),
    DeleteKPrefix(i64),
}

impl Model {
    fn delete_p(&mut self, id: i64) {
        self.p.remove(&id);
        // ON DELETE CASCADE.
        self.k.retain(|(pid, _), _| *pid != id);
    }

    fn write_p(&mut self, w: &PWrite) -> Result<(), Code> {
        for (id, values) in &w.rows {
            let exists = self.p.contains_key(id);
            let named = |row: &mut PRow| {
                if w.named[0] {
                    row.a = values.a;
                }
                if w.named[1] {
                    row.b = values.b.clone();
                }
                if w.named[2] {
                    row.c = values.c;
                }
            };
            match (w.kind, exists) {
                (WriteKind::Insert, true) => return Err(Code::AlreadyExists),
                (WriteKind::Update, false) => return Err(Code::NotFound),
                (WriteKind::InsertOrIgnore, true) => {}
                (WriteKind::Update | WriteKind::InsertOrUpdate, true) => {
                    named(self.p.get_mut(id).expect("exists"));
                }
                (
                    WriteKind::Insert
                    | WriteKind::InsertOrUpdate
                    | WriteKind::Replace
                    | WriteKind::InsertOrIgnore,
                    _,
                ) => {
                    if exists {
                        // Replace deletes the row (and its cascading children) first.
                        self.delete_p(*id);
                    }
                    let mut row = PRow::default();
                    named(&mut row);
                    self.p.insert(*id, row);
                }
            }
        }
        Ok(())
    }

    fn write_k(&mut self, w: &KWrite) -> Result<(), Code> {
        for &(id, sub, v) in &w.rows {
            let exists = self.k.contains_key(&(id, sub));
            match (w.kind, exists) {
                (WriteKind::Insert, true) => return Err(Code::AlreadyExists),
                (WriteKind::Update, false) => return Err(Code::NotFound),
                (WriteKind::InsertOrIgnore, true) => continue,
                _ => {}
            }
            if !self.p.contains_key(&id) {
                return Err(Code::NotFound);
            }
            let keep = match w.kind {
                WriteKind::Update | WriteKind::InsertOrUpdate if !w.with_v => {
                    self.k.get(&(id, sub)).copied().flatten()
                }
                _ => None,
            };
            self.k.insert((id, sub), if w.with_v { v } else { keep });
        }
        Ok(())
    }

    /// Applies one commit's operations; on error the model is left as it was.
    fn apply(&mut self, ops: &[Op]) -> Result<(), Code> {
        let mut next = self.clone();
        for op in ops {
            match op {
                Op::WriteP(w) => next.write_p(w)?,
                Op::DeletePKeys(ids) => ids.iter().for_each(|id| next.delete_p(*id)),
                Op::DeletePRange(lo, lo_open, hi, hi_open) => {
                    let doomed: Vec<i64> = next
                        .p
                        .keys()
                        .copied()
                        .filter(|id| {
                            (if *lo_open { id > lo } else { id >= lo })
                                && (if *hi_open { id < hi } else { id <= hi })
                        })
                        .collect();
                    doomed.into_iter().for_each(|id| next.delete_p(id));
                }
                Op::DeletePAll => {
                    next.p.clear();
                    next.k.clear();
                }
                Op::WriteK(w) => next.write_k(w)?,
                Op::DeleteKKeys(keys) => keys.iter().for_each(|k| {
                    next.k.remove(k);
                }),
                Op::DeleteKPrefix(id) => next.k.retain(|(pid, _), _| pid != id),
            }
        }
        *self = next;
        Ok(())
    }

    // What each read must return, in order.

    fn p_rows(&self) -> Vec<Vec<Value>> {
        self.p
            .iter()
            .map(|(id, r)| vec![int(*id), opt_int(r.a), opt_str(&r.b), opt_int(r.c)])
            .collect()
    }

    fn k_rows(&self) -> Vec<Vec<Value>> {
        self.k
            .iter()
            .map(|((id, sub), v)| vec![int(*id), int(*sub), opt_int(*v)])
            .collect()
    }

    /// PByA(A) STORING (B): (A, Id, B), ASC with NULLs first.
    fn p_by_a(&self) -> Vec<Vec<Value>> {
        let mut e: Vec<_> = self.p.iter().map(|(id, r)| (r.a, *id, &r.b)).collect();
        e.sort_by_key(|(a, id, _)| (*a, *id));
        e.into_iter()
            .map(|(a, id, b)| vec![opt_int(a), int(id), opt_str(b)])
            .collect()
    }

    /// PByBC(B, C DESC), NULL_FILTERED: (B, C, Id).
    fn p_by_bc(&self) -> Vec<Vec<Value>> {
        let mut e: Vec<(&String, i64, i64)> = self
            .p
            .iter()
            .filter_map(|(id, r)| Some((r.b.as_ref()?, r.c?, *id)))
            .collect();
        e.sort_by_key(|(b, c, id)| (*b, Reverse(*c), *id));
        e.into_iter()
            .map(|(b, c, id)| vec![Value::String(b.clone()), int(c), int(id)])
            .collect()
    }

    /// KByV(V): (V, Id, Sub), NULLs first.
    fn k_by_v(&self) -> Vec<Vec<Value>> {
        let mut e: Vec<_> = self.k.iter().map(|(&(id, sub), &v)| (v, id, sub)).collect();
        e.sort();
        e.into_iter()
            .map(|(v, id, sub)| vec![opt_int(v), int(id), int(sub)])
            .collect()
    }

    /// KByIdV(Id, V DESC) interleaved in P: (Id, V, Sub), NULLs last.
    fn k_by_id_v(&self) -> Vec<Vec<Value>> {
        let mut e: Vec<_> = self.k.iter().map(|(&(id, sub), &v)| (id, v, sub)).collect();
        e.sort_by_key(|(id, v, sub)| (*id, Reverse(*v), *sub));
        e.into_iter()
            .map(|(id, v, sub)| vec![int(id), opt_int(v), int(sub)])
            .collect()
    }

    /// Every read the check makes, with its expected rows.
    fn expected(&self) -> Vec<(ReadRequest, Vec<Vec<Value>>)> {
        vec![
            (read("P", None, &["Id", "A", "B", "C"]), self.p_rows()),
            (read("K", None, &["Id", "Sub", "V"]), self.k_rows()),
            (read("P", Some("PByA"), &["A", "Id", "B"]), self.p_by_a()),
            (read("P", Some("PByBC"), &["B", "C", "Id"]), self.p_by_bc()),
            (read("K", Some("KByV"), &["V", "Id", "Sub"]), self.k_by_v()),
            (
                read("K", Some("KByIdV"), &["Id", "V", "Sub"]),
                self.k_by_id_v(),
            ),
        ]
    }

    /// How many keys the store must hold: rows plus index entries.
    fn key_count(&self) -> usize {
        self.p.len() * 2 + self.p_by_bc().len() + self.k.len() * 3
    }
}

fn int(v: i64) -> Value {
    Value::Int64(v)
}

fn opt_int(v: Option<i64>) -> Value {
    v.map_or(Value::Null, Value::Int64)
}

fn opt_str(v: &Option<String>) -> Value {
    v.clone().map_or(Value::Null, Value::String)
}

fn read(table: &str, index: Option<&str>, columns: &[&str]) -> ReadRequest {
    let r = ReadRequest::new(table, columns, KeySet::all());
    match index {
        Some(ix) => r.with_index(ix),
        None => r,
    }
}

// ---------------------------------------------------------------------------
// Operations as mutations
// ---------------------------------------------------------------------------

fn to_mutation(op: &Op) -> Mutation {
    match op {
        Op::WriteP(w) => {
            let mut columns = vec!["Id"];
            for (i, name) in ["A", "B", "C"].into_iter().enumerate() {
                if w.named[i] {
                    columns.push(name);
                }
            }
            let rows = w
                .rows
                .iter()
                .map(|(id, r)| {
                    let mut row = vec![int(*id)];
                    if w.named[0] {
                        row.push(opt_int(r.a));
                    }
                    if w.named[1] {
                        row.push(opt_str(&r.b));
                    }
                    if w.named[2] {
                        row.push(opt_int(r.c));
                    }
                    row
                })
                .collect();
            write(w.kind, "P", &columns, rows)
        }
        Op::DeletePKeys(ids) => {
            Mutation::delete("P", KeySet::keys(ids.iter().map(|id| vec![int(*id)])))
        }
        Op::DeletePRange(lo, lo_open, hi, hi_open) => {
            let bound = |v: i64, open: bool| {
                if open {
                    Bound::Open(vec![int(v)])
                } else {
                    Bound::Closed(vec![int(v)])
                }
            };
            Mutation::delete(
                "P",
                KeySet::range(KeyRange {
                    start: bound(*lo, *lo_open),
                    end: bound(*hi, *hi_open),
                }),
            )
        }
        Op::DeletePAll => Mutation::delete("P", KeySet::all()),
        Op::WriteK(w) => {
            let columns: &[&str] = if w.with_v {
                &["Id", "Sub", "V"]
            } else {
                &["Id", "Sub"]
            };
            let rows = w
                .rows
                .iter()
                .map(|&(id, sub, v)| {
                    let mut row = vec![int(id), int(sub)];
                    if w.with_v {
                        row.push(opt_int(v));
                    }
                    row
                })
                .collect();
            write(w.kind, "K", columns, rows)
        }
        Op::DeleteKKeys(keys) => Mutation::delete(
            "K",
            KeySet::keys(keys.iter().map(|&(id, sub)| vec![int(id), int(sub)])),
        ),
        Op::DeleteKPrefix(id) => {
            Mutation::delete("K", KeySet::range(KeyRange::prefix(vec![int(*id)])))
        }
    }
}

fn write(kind: WriteKind, table: &str, columns: &[&str], rows: Vec<Vec<Value>>) -> Mutation {
    match kind {
        WriteKind::Insert => Mutation::insert(table, columns, rows),
        WriteKind::Update => Mutation::update(table, columns, rows),
        WriteKind::InsertOrUpdate => Mutation::insert_or_update(table, columns, rows),
        WriteKind::Replace => Mutation::replace(table, columns, rows),
        WriteKind::InsertOrIgnore => Mutation::insert_or_ignore(table, columns, rows),
    }
}

// ---------------------------------------------------------------------------
// Strategies: few keys and values, so operations collide often
// ---------------------------------------------------------------------------

fn kind() -> impl Strategy<Value = WriteKind> {
    prop_oneof![
        2 => Just(WriteKind::Insert),
        2 => Just(WriteKind::Update),
        3 => Just(WriteKind::InsertOrUpdate),
        2 => Just(WriteKind::Replace),
        1 => Just(WriteKind::InsertOrIgnore),
    ]
}

fn small_int() -> impl Strategy<Value = Option<i64>> {
    prop::option::weighted(0.8, -1i64..3)
}

fn small_str() -> impl Strategy<Value = Option<String>> {
    // "" and prefixes of each other, to exercise string key ordering.
    prop::option::weighted(
        0.8,
        prop::sample::select(vec!["", "a", "ab", "b"]).prop_map(String::from),
    )
}

fn p_row() -> impl Strategy<Value = (i64, PRow)> {
    (0i64..6, small_int(), small_str(), small_int())
        .prop_map(|(id, a, b, c)| (id, PRow { a, b, c }))
}

fn op() -> impl Strategy<Value = Op> {
    // Writes dominate and deleting everything is rare, so tables fill up.
    prop_oneof![
        10 => (kind(), any::<[bool; 3]>(), prop::collection::vec(p_row(), 1..3))
            .prop_map(|(kind, named, rows)| Op::WriteP(PWrite { kind, named, rows })),
        2 => prop::collection::vec(0i64..6, 1..3).prop_map(Op::DeletePKeys),
        2 => (0i64..6, any::<bool>(), 0i64..6, any::<bool>())
            .prop_map(|(lo, lo_open, hi, hi_open)| Op::DeletePRange(lo, lo_open, hi, hi_open)),
        1 => Just(Op::DeletePAll),
        10 => (
            kind(),
            any::<bool>(),
            prop::collection::vec((0i64..6, 0i64..3, small_int()), 1..3)
        )
            .prop_map(|(kind, with_v, rows)| Op::WriteK(KWrite { kind, with_v, rows })),
        2 => prop::collection::vec((0i64..6, 0i64..3), 1..3).prop_map(Op::DeleteKKeys),
        2 => (0i64..6).prop_map(Op::DeleteKPrefix),
    ]
}

/// A first commit that fills both tables, so later operations find rows.
fn seed() -> impl Strategy<Value = Vec<Op>> {
    (
        prop::collection::vec(p_row(), 2..6),
        prop::collection::vec((0i64..3, small_int()), 0..6),
    )
        .prop_map(|(p_rows, k_rows)| {
            let ids: Vec<i64> = p_rows.iter().map(|(id, _)| *id).collect();
            let k_rows = k_rows
                .into_iter()
                .enumerate()
                .map(|(i, (sub, v))| (ids[i % ids.len()], sub, v))
                .collect();
            vec![
                Op::WriteP(PWrite {
                    kind: WriteKind::InsertOrUpdate,
                    named: [true; 3],
                    rows: p_rows,
                }),
                Op::WriteK(KWrite {
                    kind: WriteKind::InsertOrUpdate,
                    with_v: true,
                    rows: k_rows,
                }),
            ]
        })
}

fn commits() -> impl Strategy<Value = Vec<Vec<Op>>> {
    (
        seed(),
        prop::collection::vec(prop::collection::vec(op(), 1..3), 1..24),
    )
        .prop_map(|(seed, mut rest)| {
            rest.insert(0, seed);
            rest
        })
}

// ---------------------------------------------------------------------------
// The property
// ---------------------------------------------------------------------------

fn check(db: &Database, model: &Model, at: &str) -> Result<(), TestCaseError> {
    for (request, expected) in model.expected() {
        let actual = db
            .read(&request)
            .map_err(|e| TestCaseError::fail(format!("{at}: read {request:?}: {e}")))?;
        prop_assert_eq!(
            &actual,
            &expected,
            "{}: {}{}",
            at,
            request.table,
            request
                .index
                .as_deref()
                .map(|i| format!("@{i}"))
                .unwrap_or_default()
        );
    }
    let keys = db.dump().map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(
        keys.len(),
        model.key_count(),
        "{}: stray keys: {:?}",
        at,
        keys
    );
    Ok(())
}

proptest! {
    #![proptest_config(Config {
        cases: 64,
        failure_persistence: None,
        ..Config::default()
    })]

    #[test]
    fn indexes_and_row_trees_follow_the_rows(commits in commits()) {
        let db = Database::in_memory();
        db.apply_ddl(SCHEMA).expect("schema");
        let mut model = Model::default();
        let mut history = Vec::new();
        for (i, ops) in commits.iter().enumerate() {
            let mutations: Vec<Mutation> = ops.iter().map(to_mutation).collect();
            let predicted = model.apply(ops);
            let actual = db.write(mutations);
            match (&predicted, &actual) {
                (Ok(()), Ok(c)) => history.push((c.commit_timestamp, model.clone())),
                (Err(code), Err(e)) => prop_assert_eq!(*code, e.code(), "commit {}: {}", i, e),
                _ => prop_assert!(
                    false,
                    "commit {} {:?}: model says {:?}, database says {:?}",
                    i, ops, predicted, actual.map(|_| ())
                ),
            }
            check(&db, &model, &format!("after commit {i} {ops:?}"))?;
        }
        // Every earlier state is still readable at its commit timestamp.
        for (ts, snapshot) in &history {
            let ro = db
                .read_only(rowtree_db::TimestampBound::ReadTimestamp(*ts))
                .expect("read-only");
            for (request, expected) in snapshot.expected() {
                let actual = ro.read(&request).expect("historical read");
                prop_assert_eq!(&actual, &expected, "at {}: {:?}", ts, request);
            }
        }
        // Dropping a database waits for its garbage collector's next tick
        // (up to 100 ms); let that happen off the test's thread.
        std::thread::spawn(move || drop(db));
    }
}
