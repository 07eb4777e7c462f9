//! Query plans in the PLAN and PROFILE query modes: `QueryPlan` nodes
//! linked parent to child, with Spanner's display names, the operators'
//! metadata and, when profiled, their execution stats.

use pb::execute_sql_request::QueryMode;
use prost_types::value::Kind;

use crate::*;

async fn singers() -> (Env, String) {
    let env = start().await;
    let inst = env.instance("inst").await;
    let db = env
        .database(
            &inst,
            "db",
            &["CREATE TABLE Singers (Id INT64 NOT NULL, Name STRING(MAX)) PRIMARY KEY (Id)"],
        )
        .await;
    let s = env.session(&db).await;
    let rows = (1..=5).map(|i| row![i, format!("s{i}")]).collect();
    env.write(&s, vec![upsert("Singers", &["Id", "Name"], rows)])
        .await;
    (env, s)
}

async fn run(
    env: &Env,
    session: &str,
    sql: &str,
    mode: QueryMode,
    transaction: Option<pb::TransactionSelector>,
) -> pb::ResultSet {
    env.spanner()
        .execute_sql(pb::ExecuteSqlRequest {
            session: session.into(),
            sql: sql.into(),
            query_mode: mode as i32,
            transaction,
            seqno: 1,
            ..Default::default()
        })
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e:?}"))
        .into_inner()
}

fn plan(rs: &pb::ResultSet) -> &pb::QueryPlan {
    rs.stats
        .as_ref()
        .and_then(|s| s.query_plan.as_ref())
        .expect("a query plan")
}

/// The string at `path` in a struct of nested structs.
fn field(s: &prost_types::Struct, path: &[&str]) -> Option<String> {
    let (last, init) = path.split_last()?;
    let mut s = s;
    for key in init {
        match &s.fields.get(*key)?.kind {
            Some(Kind::StructValue(inner)) => s = inner,
            _ => return None,
        }
    }
    match &s.fields.get(*last)?.kind {
        Some(Kind::StringValue(v)) => Some(v.clone()),
        _ => None,
    }
}

/// `(display name, child indexes)` of each node.
fn shape(plan: &pb::QueryPlan) -> Vec<(String, Vec<i32>)> {
    plan.plan_nodes
        .iter()
        .map(|n| {
            (
                n.display_name.clone(),
                n.child_links.iter().map(|l| l.child_index).collect(),
            )
        })
        .collect()
}

fn by_name<'a>(plan: &'a pb::QueryPlan, name: &str) -> &'a pb::PlanNode {
    plan.plan_nodes
        .iter()
        .find(|n| n.display_name == name)
        .unwrap_or_else(|| panic!("no {name} in {:?}", shape(plan)))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn plan_mode_describes_the_plan_without_running_it() {
    let (env, s) = singers().await;
    let sql = "SELECT Name FROM Singers WHERE Id > 2 ORDER BY Name";
    let rs = run(&env, &s, sql, QueryMode::Plan, None).await;
    assert!(rs.rows.is_empty());
    let plan = plan(&rs);
    assert_eq!(
        shape(plan),
        [
            ("Sort".to_string(), vec![1]),
            ("Project".to_string(), vec![2]),
            ("TableScan".to_string(), vec![]),
        ]
    );
    let scan = by_name(plan, "TableScan");
    let metadata = scan.metadata.as_ref().unwrap();
    assert_eq!(field(metadata, &["table"]).as_deref(), Some("Singers"));
    assert!(field(metadata, &["ranges"]).is_some(), "{metadata:?}");
    assert!(scan
        .short_representation
        .as_ref()
        .unwrap()
        .description
        .starts_with("TableScan Singers: "));
    assert!(plan.plan_nodes.iter().all(|n| n.execution_stats.is_none()));
    assert!(rs.stats.as_ref().unwrap().query_stats.is_none());
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn profile_mode_adds_each_operators_counters() {
    let (env, s) = singers().await;
    let sql = "SELECT Name FROM Singers WHERE Id > 2 ORDER BY Name";
    let rs = run(&env, &s, sql, QueryMode::Profile, None).await;
    assert_eq!(rows(&rs), ["s3", "s4", "s5"]);
    let plan = plan(&rs);
    let scan = by_name(plan, "TableScan");
    let stats = scan.execution_stats.as_ref().expect("profiled");
    assert_eq!(field(stats, &["rows", "total"]).as_deref(), Some("3"));
    assert_eq!(field(stats, &["rows", "unit"]).as_deref(), Some("rows"));
    assert!(
        field(stats, &["scanned_rows", "total"]).is_some(),
        "{stats:?}"
    );
    assert!(
        field(stats, &["splits_touched", "total"]).is_some(),
        "{stats:?}"
    );
    let project = by_name(plan, "Project").execution_stats.as_ref().unwrap();
    assert_eq!(field(project, &["rows", "total"]).as_deref(), Some("3"));
    assert!(field(project, &["scanned_rows", "total"]).is_none());
    // The description carries no counters: they are in the stats.
    assert!(!scan
        .short_representation
        .as_ref()
        .unwrap()
        .description
        .contains("[rows="));
    let query_stats = rs.stats.as_ref().unwrap().query_stats.as_ref().unwrap();
    assert_eq!(field(query_stats, &["rows_returned"]).as_deref(), Some("3"));
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_dml_plan_has_the_statement_at_its_root() {
    let (env, s) = singers().await;
    let id = env.begin_rw(&s).await;
    let rs = run(
        &env,
        &s,
        "UPDATE Singers SET Name = 'x' WHERE Id = 1",
        QueryMode::Plan,
        Some(use_id(&id)),
    )
    .await;
    let plan = plan(&rs);
    let root = &plan.plan_nodes[0];
    assert_eq!(root.display_name, "Update");
    assert_eq!(
        root.short_representation.as_ref().unwrap().description,
        "Update Singers: set Name"
    );
    let children: Vec<&str> = root
        .child_links
        .iter()
        .map(|l| {
            plan.plan_nodes[l.child_index as usize]
                .display_name
                .as_str()
        })
        .collect();
    assert_eq!(children, ["TableScan"]);
    // Planning changed nothing.
    assert_eq!(
        env.query(&s, "SELECT Name FROM Singers WHERE Id = 1").await,
        ["s1"]
    );
    env.stop().await;
}
