//! The UUID type end to end over gRPC: a UUID-keyed table written by
//! mutation (values in any accepted text form), read back in the canonical
//! form with type code 17, found with a UUID-typed query parameter, filled
//! by `DEFAULT (NEW_UUID())`, and printed by GetDatabaseDdl.

use std::collections::HashMap;

use crate::*;

const THINGS: &str = "CREATE TABLE Things (Id UUID NOT NULL DEFAULT (NEW_UUID()), \
                      Name STRING(MAX), Tags ARRAY<UUID>) PRIMARY KEY (Id)";
const LOW: &str = "0fffffff-ffff-ffff-ffff-ffffffffffff";
const HIGH: &str = "80000000-0000-0000-0000-000000000000";

fn uuid_type() -> pb::Type {
    pb::Type {
        code: pb::TypeCode::Uuid as i32,
        ..Default::default()
    }
}

fn list(values: Vec<prost_types::Value>) -> prost_types::Value {
    prost_types::Value {
        kind: Some(Kind::ListValue(prost_types::ListValue { values })),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn uuid_columns_over_the_wire() {
    let env = start().await;
    let inst = env.instance("inst").await;
    let db = env.database(&inst, "things", &[THINGS]).await;
    let s = env.session(&db).await;

    // Mutations carry UUIDs as strings, in any form CAST(s AS UUID) takes.
    let write = pb::Mutation {
        operation: Some(pb::mutation::Operation::Insert(pb::mutation::Write {
            table: "Things".into(),
            columns: vec!["Id".into(), "Name".into(), "Tags".into()],
            values: vec![
                prost_types::ListValue {
                    values: vec![
                        val(HIGH.to_uppercase()),
                        val("high".to_string()),
                        list(vec![val(format!("{{{LOW}}}")), val(None)]),
                    ],
                },
                prost_types::ListValue {
                    values: vec![val(LOW.replace('-', "")), val("low".to_string()), val(None)],
                },
            ],
        })),
    };
    env.write(&s, vec![write]).await;

    // Read back: canonical text, type code 17, unsigned key order.
    let rs = env
        .spanner()
        .read(read_all(&s, "Things", "", &["Id", "Name", "Tags"]))
        .await
        .unwrap()
        .into_inner();
    let fields = rs
        .metadata
        .as_ref()
        .unwrap()
        .row_type
        .as_ref()
        .unwrap()
        .fields
        .clone();
    assert_eq!(fields[0].r#type.as_ref().unwrap().code, 17);
    let tags = fields[2].r#type.as_ref().unwrap();
    assert_eq!(tags.code, pb::TypeCode::Array as i32);
    assert_eq!(tags.array_element_type.as_ref().unwrap().code, 17);
    assert_eq!(
        rows(&rs),
        vec![
            format!("{LOW}|low|NULL"),
            format!("{HIGH}|high|[{LOW},NULL]")
        ]
    );

    // A point read by a key in another accepted form.
    let rs = env
        .spanner()
        .read(pb::ReadRequest {
            session: s.clone(),
            table: "Things".into(),
            columns: vec!["Name".into()],
            key_set: Some(pb::KeySet {
                keys: vec![prost_types::ListValue {
                    values: vec![val(format!("{{{}}}", HIGH.to_uppercase()))],
                }],
                ..Default::default()
            }),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(rows(&rs), vec!["high"]);

    // A query with UUID-typed parameters, scalar and array.
    let mut params = std::collections::BTreeMap::new();
    params.insert("id".to_string(), val(HIGH.to_string()));
    params.insert(
        "ids".to_string(),
        list(vec![val(LOW.to_string()), val(None)]),
    );
    let mut param_types = HashMap::new();
    param_types.insert("id".to_string(), uuid_type());
    param_types.insert(
        "ids".to_string(),
        pb::Type {
            code: pb::TypeCode::Array as i32,
            array_element_type: Some(Box::new(uuid_type())),
            ..Default::default()
        },
    );
    let rs = env
        .spanner()
        .execute_sql(pb::ExecuteSqlRequest {
            session: s.clone(),
            sql: "SELECT Name, @id FROM Things WHERE Id = @id OR Id IN UNNEST(@ids) ORDER BY Id"
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
        vec![format!("low|{HIGH}"), format!("high|{HIGH}")]
    );
    let fields = &rs
        .metadata
        .as_ref()
        .unwrap()
        .row_type
        .as_ref()
        .unwrap()
        .fields;
    assert_eq!(fields[1].r#type.as_ref().unwrap().code, 17);

    // A malformed UUID in a mutation is refused, naming the column
    // (FAILED_PRECONDITION, as for any value of the wrong type there).
    let bad = upsert("Things", &["Id", "Name"], vec![row!["12345", "bad"]]);
    let t = pb::commit_request::Transaction::SingleUseTransaction(read_write());
    let err = env.commit(&s, t, vec![bad], false).await.unwrap_err();
    assert_eq!(err.code(), Code::FailedPrecondition, "{err:?}");
    assert!(
        err.message().contains("Id") && err.message().contains("as UUID"),
        "{}",
        err.message()
    );

    // DEFAULT (NEW_UUID()) fills a key the DML leaves out.
    let rs = env
        .execute(
            &s,
            "INSERT INTO Things (Name) VALUES ('generated') THEN RETURN Id",
            Some(begin_with(read_write())),
        )
        .await
        .unwrap();
    let id = begun_id(&rs);
    let generated = rows(&rs).remove(0);
    env.commit_id(&s, &id, vec![]).await.unwrap();
    assert_eq!(generated.len(), 36);
    assert_eq!(&generated[14..15], "4", "version 4: {generated}");
    assert_eq!(
        env.query(
            &s,
            &format!("SELECT Name FROM Things WHERE Id = '{generated}'")
        )
        .await,
        vec!["generated"]
    );

    // The schema prints the type as it was declared.
    let ddl = env.ddl_of(&db).await;
    assert!(
        ddl[0].contains("Id UUID NOT NULL DEFAULT (NEW_UUID())")
            && ddl[0].contains("Tags ARRAY<UUID>"),
        "{ddl:?}"
    );
    env.stop().await;
}
