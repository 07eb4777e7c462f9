//! `Options::schema_observer` is told of every DDL batch that changed the
//! schema, with the schema before and after, and of nothing else.

use std::sync::{Arc, Mutex};

use rowtree_db::{Database, Options, SchemaObserver};
use rowtree_schema::Catalog;

#[derive(Default)]
struct Recorder {
    /// (tables before, tables after) per call.
    calls: Mutex<Vec<(Vec<String>, Vec<String>)>>,
}

fn tables(catalog: &Catalog) -> Vec<String> {
    let mut names: Vec<String> = catalog.tables().map(|t| t.name.clone()).collect();
    names.sort();
    names
}

impl SchemaObserver for Recorder {
    fn schema_changed(&self, before: &Catalog, after: &Catalog) {
        self.calls
            .lock()
            .unwrap()
            .push((tables(before), tables(after)));
    }
}

#[test]
fn the_observer_sees_each_changing_batch_once() {
    let recorder = Arc::new(Recorder::default());
    let db = Database::in_memory_with(Options {
        schema_observer: Some(recorder.clone()),
        ..Options::default()
    });
    db.apply_ddl(&[
        "CREATE TABLE A (K INT64) PRIMARY KEY (K)",
        "CREATE TABLE B (K INT64) PRIMARY KEY (K)",
    ])
    .unwrap();
    // Nothing to do: no call.
    db.apply_ddl(&["CREATE TABLE IF NOT EXISTS A (K INT64) PRIMARY KEY (K)"])
        .unwrap();
    // A batch failing at its second statement still changed the schema.
    assert!(db
        .apply_ddl(&[
            "CREATE TABLE C (K INT64) PRIMARY KEY (K)",
            "CREATE TABLE C (K INT64) PRIMARY KEY (K)",
        ])
        .is_err());
    // A batch failing at once changed nothing: no call.
    assert!(db.apply_ddl(&["DROP TABLE Missing"]).is_err());
    // All-or-nothing batches are seen too.
    db.apply_ddl_all_or_nothing(&["DROP TABLE B"]).unwrap();

    let calls = recorder.calls.lock().unwrap().clone();
    let s = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<Vec<_>>();
    assert_eq!(
        calls,
        vec![
            (s(&[]), s(&["A", "B"])),
            (s(&["A", "B"]), s(&["A", "B", "C"])),
            (s(&["A", "B", "C"]), s(&["A", "C"])),
        ]
    );
}
