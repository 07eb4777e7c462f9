//! What real clients send, end to end over gRPC: NUMERIC values with more
//! than 9 decimals are refused (mutation and parameter alike) instead of
//! being rounded on write.

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
