//! The public key API (`keys::write_keys`, `keys::RowKeys`, `keys::Aligner`)
//! produces exactly the keys the database stores.

use rowtree_db::keys::{describe, write_keys, Aligner};
use rowtree_db::{Database, Mutation, Timestamp, Value};

#[test]
fn write_keys_match_the_stored_keys_with_a_generated_shard_and_an_index() {
    let db = Database::in_memory();
    db.apply_ddl(&[
        "CREATE TABLE Logs (
           ShardId INT64 NOT NULL AS (MOD(FARM_FINGERPRINT(CAST(LastAccess AS STRING)), 2048)) STORED,
           LastAccess TIMESTAMP NOT NULL,
           UserId INT64 NOT NULL,
         ) PRIMARY KEY (ShardId, LastAccess, UserId)",
        "CREATE INDEX LogsByUser ON Logs(UserId)",
    ])
    .expect("schema");
    let ts = Value::Timestamp(Timestamp::from_nanos(1_767_225_600_123_456_000).unwrap());
    db.write(vec![Mutation::insert(
        "Logs",
        &["LastAccess", "UserId"],
        vec![vec![ts.clone(), Value::Int64(42)]],
    )])
    .expect("insert");
    let mut stored: Vec<Vec<u8>> = db
        .dump()
        .expect("dump")
        .into_iter()
        .map(|(k, _, _)| k)
        .collect();
    stored.sort();
    let catalog = db.catalog();
    let mut keys =
        write_keys(&catalog, "Logs", &[Value::Null, ts, Value::Int64(42)]).expect("keys");
    assert_eq!(keys.len(), 2, "row key and one index entry");
    let row_key = keys[0].clone();
    keys.sort();
    assert_eq!(keys, stored);
    assert!(describe(&catalog, &row_key).starts_with("Logs("));

    let aligner = Aligner::new(&catalog);
    let root = aligner.root_row(&row_key).expect("a row");
    assert!(row_key.starts_with(&root) && root.len() == row_key.len() - 1);
    assert_eq!(aligner.row(&row_key), Some(root));
}
