//! A session on a PostgreSQL-dialect database: its DDL is parsed as
//! PostgreSQL (views bound by the SQL layer's analyzer as for GoogleSQL),
//! and its queries are refused with the parser's "not supported yet"
//! rather than read as GoogleSQL.

use rowtree_db::{Database, Dialect};
use rowtree_sql::{database_options, ExecuteResult, Params, Session};

#[test]
fn postgresql_ddl_runs_and_queries_are_refused() {
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
    let err = session
        .execute("SELECT name FROM singers", &params)
        .unwrap_err();
    assert!(err.message.contains("not supported yet"), "{}", err.message);
    assert!(session
        .database()
        .ddl()
        .iter()
        .any(|s| s.starts_with("CREATE VIEW names SQL SECURITY INVOKER AS SELECT s.name")));
}
