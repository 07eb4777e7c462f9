//! PostgreSQL-dialect databases over gRPC (steps 1 and 2 of
//! `docs/design/postgresql.md`): CreateDatabase with POSTGRESQL and
//! PostgreSQL DDL, the dialect reported, GetDatabaseDdl in PostgreSQL form,
//! UpdateDatabaseDdl, mutations and reads, queries with `$n` parameters and
//! DML with RETURNING (step 3), and all of it after a restart.

use super::*;

const SCHEMA: &[&str] = &[
    "CREATE TABLE Singers (singer_id bigint PRIMARY KEY, \"FirstName\" varchar(100), \
     tags text[], active boolean DEFAULT true NOT NULL)",
    "CREATE TABLE albums (singer_id bigint NOT NULL, album_id bigint NOT NULL, \
     title character varying, PRIMARY KEY (singer_id, album_id)) \
     INTERLEAVE IN PARENT singers ON DELETE CASCADE",
];

async fn create_pg(
    env: &Env,
    instance: &str,
    id: &str,
    ddl: &[&str],
) -> Result<lro::Operation, Status> {
    env.dbs()
        .create_database(dpb::CreateDatabaseRequest {
            parent: instance.into(),
            create_statement: format!("CREATE DATABASE \"{id}\""),
            extra_statements: ddl.iter().map(|s| s.to_string()).collect(),
            database_dialect: dpb::DatabaseDialect::Postgresql as i32,
            ..Default::default()
        })
        .await
        .map(|r| r.into_inner())
}

#[tokio::test]
async fn postgresql_databases_take_postgresql_ddl_and_mutations() {
    let dir = tempfile::tempdir().unwrap();
    let env = start_in(dir.path()).await;
    let inst = env.instance("inst").await;
    let op = create_pg(&env, &inst, "pg-db", SCHEMA).await.unwrap();
    let op = env.finish(op).await;
    assert!(op_error(&op).is_none(), "{op:?}");
    let db = format!("{inst}/databases/pg-db");

    let got = env
        .dbs()
        .get_database(dpb::GetDatabaseRequest { name: db.clone() })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        got.database_dialect,
        dpb::DatabaseDialect::Postgresql as i32
    );

    // GetDatabaseDdl prints PostgreSQL, with names folded.
    let ddl = env.ddl_of(&db).await;
    assert_eq!(
        ddl,
        vec![
            "CREATE TABLE singers (\n  singer_id bigint NOT NULL,\n  \
             \"FirstName\" character varying(100),\n  tags character varying[],\n  \
             active boolean NOT NULL DEFAULT true,\n  PRIMARY KEY(singer_id)\n)"
                .to_string(),
            "CREATE TABLE albums (\n  singer_id bigint NOT NULL,\n  album_id bigint NOT NULL,\n  \
             title character varying,\n  PRIMARY KEY(singer_id, album_id)\n) \
             INTERLEAVE IN PARENT singers ON DELETE CASCADE"
                .to_string(),
        ]
    );

    // UpdateDatabaseDdl parses PostgreSQL; GoogleSQL syntax is an error
    // with its position.
    let op = env
        .ddl(
            &db,
            &["CREATE INDEX albums_by_title ON albums (title) INCLUDE (album_id)"],
            "",
        )
        .await
        .unwrap();
    let e = op_error(&op).expect("a key column cannot be included");
    assert_eq!(e.code, Code::FailedPrecondition as i32, "{e:?}");
    let op = env
        .ddl(
            &db,
            &[
                "ALTER TABLE albums ADD COLUMN released date",
                "CREATE INDEX albums_by_title ON albums (title) INCLUDE (released)",
            ],
            "",
        )
        .await
        .unwrap();
    assert!(op_error(&op).is_none(), "{op:?}");
    let op = env
        .ddl(&db, &["CREATE TABLE t (k INT64) PRIMARY KEY (k)"], "")
        .await
        .unwrap();
    let e = op_error(&op).expect("GoogleSQL DDL is refused");
    assert_eq!(e.code, Code::InvalidArgument as i32);
    assert!(e.message.contains("[at 1:19]"), "{}", e.message);
    let ddl = env.ddl_of(&db).await;
    assert_eq!(
        ddl.last().unwrap(),
        "CREATE INDEX albums_by_title ON albums (title) INCLUDE (released)"
    );

    // Mutations and reads need no SQL: they work.
    let s = env.session(&db).await;
    env.write(
        &s,
        vec![upsert(
            "singers",
            &["singer_id", "FirstName"],
            vec![
                vec!["1".into(), "Marc".into()],
                vec!["2".into(), "Ann".into()],
            ],
        )],
    )
    .await;
    let rs = env
        .spanner()
        .read(pb::ReadRequest {
            session: s.clone(),
            table: "singers".into(),
            columns: vec!["singer_id".into(), "FirstName".into(), "active".into()],
            key_set: Some(pb::KeySet {
                all: true,
                ..Default::default()
            }),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(rows(&rs), vec!["1|Marc|true", "2|Ann|true"]);

    // Queries are parsed as PostgreSQL: `$1` is the request's `p1`.
    let mut params = std::collections::BTreeMap::new();
    params.insert(
        "p1".to_string(),
        prost_types::Value {
            kind: Some(Kind::StringValue("2".into())),
        },
    );
    let mut param_types = std::collections::HashMap::new();
    param_types.insert(
        "p1".to_string(),
        pb::Type {
            code: pb::TypeCode::Int64 as i32,
            ..Default::default()
        },
    );
    let rs = env
        .spanner()
        .execute_sql(pb::ExecuteSqlRequest {
            session: s.clone(),
            sql: "SELECT singer_id, \"FirstName\" FROM Singers WHERE singer_id = $1".into(),
            params: Some(prost_types::Struct {
                fields: params.into_iter().collect(),
            }),
            param_types,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(rows(&rs), vec!["2|Ann"]);
    // GoogleSQL text is PostgreSQL's syntax error, not read as GoogleSQL.
    let err = env
        .execute(&s, "SELECT `singer_id` FROM singers", None)
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(err.message().contains("syntax error"), "{}", err.message());

    // DML with RETURNING (GoogleSQL's THEN RETURN) in a read-write transaction.
    let id = env.begin_rw(&s).await;
    let rs = env
        .execute(
            &s,
            "UPDATE singers SET \"FirstName\" = 'Anna' WHERE singer_id = 2 RETURNING singer_id, \"FirstName\"",
            Some(use_id(&id)),
        )
        .await
        .unwrap();
    assert_eq!(rows(&rs), vec!["2|Anna"]);
    assert_eq!(row_count(&rs), 1);
    env.commit_id(&s, &id, Vec::new()).await.unwrap();
    env.write(
        &s,
        vec![upsert(
            "singers",
            &["singer_id", "FirstName"],
            vec![vec!["2".into(), "Ann".into()]],
        )],
    )
    .await;

    // After a restart: still PostgreSQL, same schema, same rows.
    env.stop().await;
    let env = start_in(dir.path()).await;
    let got = env
        .dbs()
        .get_database(dpb::GetDatabaseRequest { name: db.clone() })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        got.database_dialect,
        dpb::DatabaseDialect::Postgresql as i32
    );
    assert_eq!(env.ddl_of(&db).await, ddl);
    let s = env.session(&db).await;
    let rs = env
        .spanner()
        .read(pb::ReadRequest {
            session: s,
            table: "singers".into(),
            columns: vec!["FirstName".into()],
            key_set: Some(pb::KeySet {
                all: true,
                ..Default::default()
            }),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(rows(&rs), vec!["Marc", "Ann"]);
    env.stop().await;
}

#[tokio::test]
async fn create_database_checks_postgresql_statements_first() {
    let env = start().await;
    let inst = env.instance("inst").await;
    // A bad extra statement fails the request and leaves no database.
    let err = create_pg(
        &env,
        &inst,
        "bad",
        &[
            "create table t (k bigint primary key)",
            "create table u (k int64 primary key)",
        ],
    )
    .await
    .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(
        err.message().contains("type \"int64\" is not supported"),
        "{}",
        err.message()
    );
    let err = env
        .dbs()
        .get_database(dpb::GetDatabaseRequest {
            name: format!("{inst}/databases/bad"),
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    // GoogleSQL quoting is not PostgreSQL's.
    let err = env
        .dbs()
        .create_database(dpb::CreateDatabaseRequest {
            parent: inst.clone(),
            create_statement: "CREATE DATABASE `x`".into(),
            database_dialect: dpb::DatabaseDialect::Postgresql as i32,
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    // A GoogleSQL database is reported as before.
    let db = env.database(&inst, "gsql", &[]).await;
    let got = env
        .dbs()
        .get_database(dpb::GetDatabaseRequest { name: db })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        got.database_dialect,
        dpb::DatabaseDialect::GoogleStandardSql as i32
    );
    env.stop().await;
}

/// The annotation of each column of a result's row type.
fn annotations(metadata: Option<&pb::ResultSetMetadata>) -> Vec<i32> {
    metadata
        .and_then(|m| m.row_type.as_ref())
        .expect("a row type")
        .fields
        .iter()
        .map(|f| {
            let t = f.r#type.as_ref().unwrap();
            t.array_element_type
                .as_ref()
                .map_or(t.type_annotation, |e| e.type_annotation)
        })
        .collect()
}

#[tokio::test]
async fn postgresql_results_carry_type_annotations() {
    use pb::TypeAnnotationCode as A;
    let env = start().await;
    let inst = env.instance("inst").await;
    let ddl = ["CREATE TABLE t (k int PRIMARY KEY, n numeric, j jsonb, ns numeric[])"];
    let op = env
        .finish(create_pg(&env, &inst, "pg-ann", &ddl).await.unwrap())
        .await;
    assert!(op_error(&op).is_none(), "{op:?}");
    let s = env.session(&format!("{inst}/databases/pg-ann")).await;
    env.write(
        &s,
        vec![upsert(
            "t",
            &["k", "n"],
            vec![vec!["1".into(), "2.5".into()]],
        )],
    )
    .await;
    let want = vec![
        A::Unspecified as i32,
        A::PgNumeric as i32,
        A::PgJsonb as i32,
        A::PgNumeric as i32,
    ];
    let sql = "SELECT k, n, j, ns FROM t";
    let rs = env.execute(&s, sql, None).await.unwrap();
    assert_eq!(annotations(rs.metadata.as_ref()), want);
    let parts = env
        .stream(pb::ExecuteSqlRequest {
            session: s.clone(),
            sql: sql.into(),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(annotations(parts[0].metadata.as_ref()), want);
    let rs = env
        .spanner()
        .read(pb::ReadRequest {
            session: s.clone(),
            table: "t".into(),
            columns: vec!["k".into(), "n".into(), "j".into(), "ns".into()],
            key_set: Some(pb::KeySet {
                all: true,
                ..Default::default()
            }),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(annotations(rs.metadata.as_ref()), want);

    // Parameters typed with the annotations the client libraries send.
    let typed = |code: pb::TypeCode, a: A| pb::Type {
        code: code as i32,
        type_annotation: a as i32,
        ..Default::default()
    };
    let value = |v: &str| prost_types::Value {
        kind: Some(Kind::StringValue(v.into())),
    };
    let rs = env
        .spanner()
        .execute_sql(pb::ExecuteSqlRequest {
            session: s.clone(),
            sql: "SELECT $1 AS column, $2, $3".into(),
            params: Some(prost_types::Struct {
                fields: [
                    ("p1".to_string(), value("1.25")),
                    ("p2".to_string(), value("{\"a\": 1}")),
                    ("p3".to_string(), value("123")),
                ]
                .into_iter()
                .collect(),
            }),
            param_types: [
                ("p1".to_string(), typed(pb::TypeCode::Numeric, A::PgNumeric)),
                ("p2".to_string(), typed(pb::TypeCode::Json, A::PgJsonb)),
                ("p3".to_string(), typed(pb::TypeCode::Int64, A::PgOid)),
            ]
            .into_iter()
            .collect(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(rows(&rs), vec!["1.25|{\"a\":1}|123"]);
    assert_eq!(
        annotations(rs.metadata.as_ref())[..2],
        [A::PgNumeric as i32, A::PgJsonb as i32]
    );
    env.stop().await;
}

/// Spanner's PostgreSQL `numeric` is arbitrary precision; Rowtree's holds 9
/// digits after the point. A value with more (a mutation, or a `PG_NUMERIC`
/// parameter) is refused with INVALID_ARGUMENT, as in GoogleSQL
/// (`client_gaps.rs`), never stored rounded.
#[tokio::test]
async fn postgresql_numeric_values_are_never_rounded_on_write() {
    use pb::TypeAnnotationCode as A;
    let env = start().await;
    let inst = env.instance("inst").await;
    let ddl = ["CREATE TABLE t (k bigint PRIMARY KEY, n numeric)"];
    let op = env
        .finish(create_pg(&env, &inst, "pg-num", &ddl).await.unwrap())
        .await;
    assert!(op_error(&op).is_none(), "{op:?}");
    let s = env.session(&format!("{inst}/databases/pg-num")).await;

    let bad = upsert(
        "t",
        &["k", "n"],
        vec![vec!["1".into(), "3.1415926535".into()]],
    );
    let t = pb::commit_request::Transaction::SingleUseTransaction(read_write());
    let err = env.commit(&s, t, vec![bad], false).await.unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err:?}");
    assert!(err.message().contains("column n"), "{}", err.message());

    env.write(
        &s,
        vec![upsert(
            "t",
            &["k", "n"],
            vec![vec!["1".into(), "2.50000000000".into()]],
        )],
    )
    .await;
    assert_eq!(env.query(&s, "SELECT n FROM t").await, vec!["2.5"]);

    let err = env
        .spanner()
        .execute_sql(pb::ExecuteSqlRequest {
            session: s.clone(),
            sql: "SELECT k FROM t WHERE n = $1".into(),
            params: Some(prost_types::Struct {
                fields: [(
                    "p1".to_string(),
                    prost_types::Value {
                        kind: Some(Kind::StringValue("3.1415926535".into())),
                    },
                )]
                .into_iter()
                .collect(),
            }),
            param_types: [(
                "p1".to_string(),
                pb::Type {
                    code: pb::TypeCode::Numeric as i32,
                    type_annotation: A::PgNumeric as i32,
                    ..Default::default()
                },
            )]
            .into_iter()
            .collect(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err:?}");
    assert_eq!(env.query(&s, "SELECT n FROM t").await, vec!["2.5"]);
    env.stop().await;
}

/// A NULL parameter sent without a type takes its type from where the
/// PostgreSQL statement uses it, as in GoogleSQL (`client_gaps.rs`).
#[tokio::test]
async fn postgresql_untyped_null_parameters_take_their_type_from_the_statement() {
    let env = start().await;
    let inst = env.instance("inst").await;
    let ddl = ["CREATE TABLE t (k bigint PRIMARY KEY, d date, n numeric)"];
    let op = env
        .finish(create_pg(&env, &inst, "pg-null", &ddl).await.unwrap())
        .await;
    assert!(op_error(&op).is_none(), "{op:?}");
    let s = env.session(&format!("{inst}/databases/pg-null")).await;
    let null = || prost_types::Value {
        kind: Some(Kind::NullValue(0)),
    };
    let params = |names: &[&str]| prost_types::Struct {
        fields: names.iter().map(|n| (n.to_string(), null())).collect(),
    };
    let rs = env
        .spanner()
        .execute_sql(pb::ExecuteSqlRequest {
            session: s.clone(),
            sql: "INSERT INTO t (k, d, n) VALUES (1, $1, $2)".into(),
            params: Some(params(&["p1", "p2"])),
            transaction: Some(pb::TransactionSelector {
                selector: Some(pb::transaction_selector::Selector::Begin(read_write())),
            }),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let id = rs.metadata.unwrap().transaction.unwrap().id;
    env.spanner()
        .commit(pb::CommitRequest {
            session: s.clone(),
            transaction: Some(pb::commit_request::Transaction::TransactionId(id)),
            ..Default::default()
        })
        .await
        .unwrap();
    let rs = env
        .spanner()
        .execute_sql(pb::ExecuteSqlRequest {
            session: s.clone(),
            sql: "SELECT coalesce($1, d), k FROM t WHERE n IS NOT DISTINCT FROM $1".into(),
            params: Some(params(&["p1"])),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(rows(&rs), vec!["NULL|1"]);
    let row_type = rs.metadata.unwrap().row_type.unwrap();
    assert_eq!(
        row_type.fields[0].r#type.as_ref().unwrap().code,
        pb::TypeCode::Date as i32
    );
    env.stop().await;
}
