//! What real clients send, end to end over gRPC: NUMERIC values with more
//! than 9 decimals are refused (mutation and parameter alike) instead of
//! being rounded on write, and NULL parameters sent without a type take
//! their type from where the query uses them.

use std::collections::BTreeMap;
use std::collections::HashMap;

use crate::*;

const ACCOUNTS: &str = "CREATE TABLE Accounts (Id INT64 NOT NULL, Balance NUMERIC, \
                        Opened DATE) PRIMARY KEY (Id)";

fn numeric_type() -> pb::Type {
    pb::Type {
        code: pb::TypeCode::Numeric as i32,
        ..Default::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn numeric_values_are_never_rounded_on_write() {
    let env = start().await;
    let inst = env.instance("inst").await;
    let db = env.database(&inst, "accounts", &[ACCOUNTS]).await;
    let s = env.session(&db).await;

    // A mutation: INVALID_ARGUMENT naming the column and the value.
    let bad = upsert(
        "Accounts",
        &["Id", "Balance"],
        vec![row!["1", "3.1415926535"]],
    );
    let t = pb::commit_request::Transaction::SingleUseTransaction(read_write());
    let err = env.commit(&s, t, vec![bad], false).await.unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err:?}");
    assert!(
        err.message().contains("column Balance")
            && err.message().contains("\"3.1415926535\"")
            && err.message().contains("9 digits of scale"),
        "{}",
        err.message()
    );
    // Nine decimals (and trailing zeros past them) are stored as sent.
    let good = upsert(
        "Accounts",
        &["Id", "Balance"],
        vec![row!["1", "3.141592653"], row!["2", "2.50000000000"]],
    );
    env.write(&s, vec![good]).await;
    assert_eq!(
        env.query(&s, "SELECT Balance FROM Accounts ORDER BY Id")
            .await,
        vec!["3.141592653", "2.5"]
    );

    // A NUMERIC parameter: INVALID_ARGUMENT naming the parameter.
    let mut params = BTreeMap::new();
    params.insert("b".to_string(), val("3.1415926535".to_string()));
    let mut param_types = HashMap::new();
    param_types.insert("b".to_string(), numeric_type());
    let err = env
        .spanner()
        .execute_sql(pb::ExecuteSqlRequest {
            session: s.clone(),
            sql: "SELECT Id FROM Accounts WHERE Balance = @b".into(),
            params: Some(prost_types::Struct { fields: params }),
            param_types,
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err:?}");
    assert!(
        err.message().contains("bind parameter b") && err.message().contains("NUMERIC"),
        "{}",
        err.message()
    );
    // The rows are unchanged.
    assert_eq!(
        env.query(&s, "SELECT Balance FROM Accounts ORDER BY Id")
            .await,
        vec!["3.141592653", "2.5"]
    );
    env.stop().await;
}

/// `sql` with parameters that are NULLs sent without a type (no
/// `param_types` entry), as drivers send them, in transaction `transaction`.
async fn with_untyped_nulls(
    env: &Env,
    session: &str,
    sql: &str,
    names: &[&str],
    transaction: Option<pb::TransactionSelector>,
) -> Result<pb::ResultSet, Status> {
    let params = names
        .iter()
        .map(|n| (n.to_string(), val(None)))
        .collect::<BTreeMap<_, _>>();
    env.spanner()
        .execute_sql(pb::ExecuteSqlRequest {
            session: session.into(),
            sql: sql.into(),
            params: Some(prost_types::Struct { fields: params }),
            transaction,
            ..Default::default()
        })
        .await
        .map(|r| r.into_inner())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn untyped_null_parameters_take_their_type_from_the_query() {
    let env = start().await;
    let inst = env.instance("inst").await;
    let db = env.database(&inst, "accounts", &[ACCOUNTS]).await;
    let s = env.session(&db).await;
    env.write(
        &s,
        vec![upsert(
            "Accounts",
            &["Id", "Opened"],
            vec![row!["1", "2020-01-02"]],
        )],
    )
    .await;

    // A CASE whose other branch is a DATE: the result is a DATE column.
    let rs = with_untyped_nulls(
        &env,
        &s,
        "SELECT CASE WHEN @a IS NOT NULL THEN @a ELSE Opened END FROM Accounts",
        &["a"],
        None,
    )
    .await
    .unwrap();
    assert_eq!(rows(&rs), vec!["2020-01-02"]);
    let fields = &rs
        .metadata
        .as_ref()
        .unwrap()
        .row_type
        .as_ref()
        .unwrap()
        .fields;
    assert_eq!(
        fields[0].r#type.as_ref().unwrap().code,
        pb::TypeCode::Date as i32
    );

    // Compared with a DATE and a NUMERIC column: no rows, no type error.
    let rs = with_untyped_nulls(
        &env,
        &s,
        "SELECT Id FROM Accounts WHERE Opened = @a OR Balance = @b",
        &["a", "b"],
        None,
    )
    .await
    .unwrap();
    assert!(rows(&rs).is_empty());

    // Written into DATE and NUMERIC columns by DML.
    let rs = with_untyped_nulls(
        &env,
        &s,
        "INSERT INTO Accounts (Id, Balance, Opened) VALUES (2, @a, @b)",
        &["a", "b"],
        Some(begin_with(read_write())),
    )
    .await
    .unwrap();
    assert_eq!(row_count(&rs), 1);
    let id = begun_id(&rs);
    env.commit_id(&s, &id, vec![]).await.unwrap();
    assert_eq!(
        env.query(&s, "SELECT Id, Balance, Opened FROM Accounts ORDER BY Id")
            .await,
        vec!["1|NULL|2020-01-02", "2|NULL|NULL"]
    );
    env.stop().await;
}
