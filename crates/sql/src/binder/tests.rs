//! Unit tests of the binder's rules: name resolution, aggregation, where
//! analytic functions may appear, set operations. What plans it builds is
//! compared whole in the plan goldenscripts (`tests/scripts/plans/`, e.g.
//! `filters` for where WHERE conditions go, `windows` for the Window node).

use rowtree_parser::ast::StatementKind;
use rowtree_schema::Catalog;

use crate::{plan_query, Params};

fn catalog() -> Catalog {
    let mut c = Catalog::new();
    for ddl in [
        "CREATE TABLE A (Id INT64 NOT NULL, X INT64, S STRING(MAX)) PRIMARY KEY (Id)",
        "CREATE TABLE B (Id INT64 NOT NULL, X INT64) PRIMARY KEY (Id)",
    ] {
        c = c.apply_sql(ddl).expect("ddl").0;
    }
    c
}

fn plan(sql: &str) -> crate::Result<String> {
    let stmt = rowtree_parser::parse_statement(sql).expect("parses");
    let StatementKind::Query(q) = stmt.kind else {
        panic!("not a query")
    };
    plan_query(&catalog(), &q, &Params::new()).map(|p| p.explain())
}

fn error(sql: &str) -> String {
    let e = plan(sql).expect_err("should fail");
    e.render(sql).message
}

#[test]
fn names_resolve_with_and_without_qualifiers() {
    assert!(plan("SELECT a.X, S FROM A a").is_ok());
    assert_eq!(
        error("SELECT Nope FROM A"),
        "Unrecognized name: Nope [at 1:8]"
    );
    assert_eq!(
        error("SELECT X FROM A, B"),
        "Column name X is ambiguous [at 1:8]"
    );
    assert_eq!(
        error("SELECT a.Nope FROM A a"),
        "Name Nope not found inside a [at 1:10]"
    );
    assert_eq!(
        error("SELECT 1 FROM Missing"),
        "Table not found: Missing [at 1:15]"
    );
}

#[test]
fn analytic_functions_are_not_allowed_in_where() {
    assert_eq!(
        error("SELECT X FROM A WHERE IS_FIRST(1) OVER ()"),
        "Analytic function not allowed in WHERE clause [at 1:23]"
    );
}

#[test]
fn aggregation_rules() {
    assert_eq!(
        error("SELECT X, COUNT(*) FROM A"),
        "SELECT list expression references column X which is neither grouped nor aggregated [at 1:8]"
    );
    assert!(plan("SELECT X, COUNT(*) FROM A GROUP BY X").is_ok());
    assert!(plan("SELECT X + 1 AS y, COUNT(*) FROM A GROUP BY y").is_ok());
    assert!(error("SELECT 1 FROM A WHERE COUNT(*) > 1").contains("WHERE clause"));
}

#[test]
fn set_operations_check_column_counts() {
    assert_eq!(
        error("SELECT 1 UNION ALL SELECT 1, 2"),
        "Queries in UNION ALL have mismatched column count; query 1 has 1 column, query 2 has 2 columns [at 1:1]"
    );
    assert!(plan("SELECT 1 UNION ALL SELECT 2.5").is_ok());
}
