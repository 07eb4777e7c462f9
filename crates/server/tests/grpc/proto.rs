//! PROTO and ENUM end to end over gRPC: a database created with proto
//! descriptors and columns of a message and an enum, written by mutation,
//! read through an index on the enum, queried with a message field and a
//! PROTO-typed parameter; the types carry `proto_type_fqn`.

use std::collections::HashMap;

use base64::Engine as _;
use rowtree_testkit::protos::{music, singer_info};

use crate::*;

const INFO: &str = "examples.spanner.music.SingerInfo";
const GENRE: &str = "examples.spanner.music.Genre";

fn proto_type(code: pb::TypeCode, name: &str) -> pb::Type {
    pb::Type {
        code: code as i32,
        proto_type_fqn: name.into(),
        ..Default::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn proto_and_enum_columns_over_the_wire() {
    let env = start().await;
    let inst = env.instance("inst").await;
    let bundle = format!("CREATE PROTO BUNDLE ({INFO}, {GENRE})");
    let table = format!(
        "CREATE TABLE Singers (Id INT64 NOT NULL, Info {INFO}, Genre {GENRE}) PRIMARY KEY (Id)"
    );
    let index = "CREATE INDEX ByGenre ON Singers (Genre)".to_string();
    let op = env
        .dbs()
        .create_database(dpb::CreateDatabaseRequest {
            parent: inst.clone(),
            create_statement: "CREATE DATABASE `music`".into(),
            extra_statements: vec![bundle, table, index],
            proto_descriptors: music(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let op = env.finish(op).await;
    assert!(op_error(&op).is_none(), "{op:?}");
    let db = format!("{inst}/databases/music");
    let s = env.session(&db).await;

    let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
    let info = singer_info(Some(1), Some("FR"), Some(3));
    env.write(
        &s,
        vec![upsert(
            "Singers",
            &["Id", "Info", "Genre"],
            vec![
                vec!["1".into(), b64(&info), "3".into()],
                vec![
                    "2".into(),
                    b64(&singer_info(Some(2), None, None)),
                    "1".into(),
                ],
            ],
        )],
    )
    .await;

    // A read through the index on the enum, by an enum key.
    let rs = env
        .spanner()
        .read(pb::ReadRequest {
            session: s.clone(),
            table: "Singers".into(),
            index: "ByGenre".into(),
            columns: vec!["Id".into(), "Genre".into()],
            key_set: Some(pb::KeySet {
                keys: vec![prost_types::ListValue {
                    values: vec![val("3".to_string())],
                }],
                ..Default::default()
            }),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(rows(&rs), vec!["1|3"]);
    let fields = &rs
        .metadata
        .as_ref()
        .unwrap()
        .row_type
        .as_ref()
        .unwrap()
        .fields;
    assert_eq!(
        fields[1].r#type,
        Some(proto_type(pb::TypeCode::Enum, GENRE))
    );

    // A query: a message field, enum names, and a PROTO parameter echoed.
    let mut params = std::collections::BTreeMap::new();
    params.insert("p".to_string(), val(b64(&info)));
    let mut param_types = HashMap::new();
    param_types.insert("p".to_string(), proto_type(pb::TypeCode::Proto, INFO));
    let rs = env
        .spanner()
        .execute_sql(pb::ExecuteSqlRequest {
            session: s.clone(),
            sql: "SELECT Info.nationality, CAST(Genre AS STRING), Info, @p FROM Singers \
                  WHERE Id = 1"
                .into(),
            params: Some(prost_types::Struct { fields: params }),
            param_types,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        rows(&rs),
        vec![format!("FR|ROCK|{}|{}", b64(&info), b64(&info))]
    );
    let fields = &rs
        .metadata
        .as_ref()
        .unwrap()
        .row_type
        .as_ref()
        .unwrap()
        .fields;
    assert_eq!(
        fields[2].r#type,
        Some(proto_type(pb::TypeCode::Proto, INFO))
    );
    assert_eq!(
        fields[3].r#type,
        Some(proto_type(pb::TypeCode::Proto, INFO))
    );

    // GetDatabaseDdl gives the columns' types and the descriptors back.
    let ddl = env
        .dbs()
        .get_database_ddl(dpb::GetDatabaseDdlRequest {
            database: db.clone(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(ddl.proto_descriptors, music());
    assert!(
        ddl.statements
            .iter()
            .any(|t| t.contains(&format!("Info {INFO}"))),
        "{:?}",
        ddl.statements
    );

    // A type the bundle lacks is refused.
    let op = env
        .ddl(
            &db,
            &["ALTER TABLE Singers ADD COLUMN X examples.spanner.music.Nope"],
            "",
        )
        .await
        .unwrap();
    let err = op_error(&op).expect("refused");
    assert!(err.message.contains("Type not found"), "{}", err.message);
    env.stop().await;
}
