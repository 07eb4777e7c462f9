//! A session on a PostgreSQL-dialect database: its DDL is parsed as
//! PostgreSQL (views bound by the SQL layer's analyzer as for GoogleSQL),
//! and so are its queries and DML, with `$n` parameters named `pn`.

use rowtree_db::{Database, Dialect};
use rowtree_sql::{database_options, ExecuteResult, Params, Session};

#[test]
fn postgresql_ddl_queries_and_dml_run() {
    let db = Database::in_memory_with(rowtree_db::Options {
        dialect: Dialect::PostgreSql,
        ..database_options()
    });
    let mut session = Session::new(db);
    let params = Params::new();
    for ddl in [
        "CREATE TABLE Singers (singer_id bigint PRIMARY KEY, name varchar(10))",
        "CREATE VIEW names SQL SECURITY INVOKER AS SELECT s.name FROM singers s",
    ] {
        assert_eq!(
            session.execute(ddl, &params).expect(ddl),
            ExecuteResult::Ddl,
            "{ddl}"
        );
    }
    // The analyzer binds the view's query: a missing column is an error.
    let err = session
        .execute(
            "CREATE VIEW bad SQL SECURITY INVOKER AS SELECT nope FROM singers",
            &params,
        )
        .unwrap_err();
    assert!(err.message.contains("nope"), "{}", err.message);
    session
        .execute(
            "INSERT INTO singers (singer_id, name) VALUES ($1, 'Ann')",
            &{
                let mut p = Params::new();
                p.insert(
                    "p1".into(),
                    (rowtree_types::Type::Int64, rowtree_types::Value::Int64(7)),
                );
                p
            },
        )
        .expect("insert");
    match session
        .execute("SELECT name FROM Names", &params)
        .expect("query")
    {
        ExecuteResult::Query(q) => assert_eq!(q.rows.len(), 1),
        other => panic!("{other:?}"),
    }
    assert!(session
        .database()
        .ddl()
        .iter()
        .any(|s| s.starts_with("CREATE VIEW names SQL SECURITY INVOKER AS SELECT s.name")));
}
