//! The query engine's hooks: aggregates and subqueries bound through the
//! scope, evaluated through the context.

use std::cell::RefCell;

use rowtree_expr::{bind, BindOptions, BoundExpr, Error, EvalContext, Scope, SubqueryKind};
use rowtree_parser::ast::{self, Ident};
use rowtree_types::{Timestamp, Type, Value};

/// Column `a` (slot 0, INT64); aggregates go to slots 10, 11, ...;
/// subqueries get ids 0, 1, ... with a column type of INT64.
struct Engine {
    aggregates_allowed: bool,
    aggregates: RefCell<Vec<String>>,
    subqueries: RefCell<Vec<SubqueryKind>>,
}

impl Engine {
    fn new(aggregates_allowed: bool) -> Engine {
        Engine {
            aggregates_allowed,
            aggregates: RefCell::new(Vec::new()),
            subqueries: RefCell::new(Vec::new()),
        }
    }
}

impl Scope for Engine {
    fn resolve(&self, path: &[Ident]) -> Option<(usize, Type)> {
        match path {
            [c] if c.matches("a") => Some((0, Type::Int64)),
            _ => None,
        }
    }

    fn bind_aggregate(&self, call: &ast::Expr) -> Option<rowtree_expr::Result<(usize, Type)>> {
        if !self.aggregates_allowed {
            return None;
        }
        let ast::Expr::Function { name, .. } = call else {
            panic!("not a call")
        };
        let mut aggs = self.aggregates.borrow_mut();
        aggs.push(name.value.to_ascii_uppercase());
        Some(Ok((9 + aggs.len(), Type::Int64)))
    }

    fn aggregate_context_name(&self) -> Option<&str> {
        Some("WHERE clause")
    }

    fn bind_subquery(
        &self,
        _expr: &ast::Expr,
        _query: &ast::Query,
        kind: SubqueryKind,
    ) -> Option<rowtree_expr::Result<(usize, Type)>> {
        let mut subs = self.subqueries.borrow_mut();
        subs.push(kind);
        let ty = match kind {
            SubqueryKind::Scalar => Type::Int64,
            SubqueryKind::Exists => Type::Bool,
            SubqueryKind::Array | SubqueryKind::In => Type::Array(Box::new(Type::Int64)),
        };
        Some(Ok((subs.len() - 1, ty)))
    }
}

/// Subquery 0 yields `a * 10`, 1 yields `[1, 2, NULL]`, others `[]`.
struct Ctx;

impl EvalContext for Ctx {
    fn now(&self) -> Timestamp {
        Timestamp::UNIX_EPOCH
    }
    fn next_sequence_value(&mut self, _: &str) -> Result<i64, Error> {
        Ok(0)
    }
    fn sequence_state(&mut self, _: &str) -> Result<Option<i64>, Error> {
        Ok(None)
    }
    fn pending_commit_timestamp(&mut self) -> Result<Value, Error> {
        Ok(Value::Null)
    }
    fn subquery(&mut self, id: usize, row: &[Value]) -> Result<Value, Error> {
        Ok(match (id, &row[0]) {
            (0, Value::Int64(a)) => Value::Int64(a * 10),
            (1, _) => Value::Array(vec![Value::Int64(1), Value::Int64(2), Value::Null]),
            _ => Value::Array(vec![]),
        })
    }
}

// The parser does not yet read `COUNT(*)`, `DISTINCT`, subqueries,
// `EXTRACT` or `IN UNNEST`, so those nodes are built by hand here.

fn span() -> ast::Span {
    ast::Span::default()
}

fn parse(text: &str) -> ast::Expr {
    rowtree_parser::parse_expr(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn ident(name: &str) -> Ident {
    Ident {
        value: name.into(),
        span: span(),
    }
}

fn call(name: &str, args: Vec<ast::Expr>, distinct: bool) -> ast::Expr {
    ast::Expr::Function {
        name: ident(name),
        args,
        safe: false,
        distinct,
        modifiers: None,
        span: span(),
    }
}

fn star() -> ast::Expr {
    ast::Expr::Star { span: span() }
}

fn query() -> Box<ast::Query> {
    Box::new(ast::Query {
        hints: vec![],
        with: vec![],
        body: ast::SetExpr::Select(Box::new(ast::Select {
            distinct: false,
            as_struct: false,
            items: vec![],
            from: None,
            where_clause: None,
            group_by: vec![],
            having: None,
            span: span(),
        })),
        order_by: vec![],
        limit: None,
        offset: None,
        span: span(),
    })
}

fn binary(op: ast::BinaryOp, left: ast::Expr, right: ast::Expr) -> ast::Expr {
    ast::Expr::Binary {
        op,
        left: Box::new(left),
        right: Box::new(right),
        span: span(),
    }
}

fn in_subquery(needle: &str, negated: bool) -> ast::Expr {
    ast::Expr::InSubquery {
        expr: Box::new(parse(needle)),
        query: query(),
        negated,
        span: span(),
    }
}

fn bound_ast(expr: &ast::Expr, scope: &dyn Scope) -> Result<BoundExpr, Error> {
    bind(expr, scope, &BindOptions::default())
}

fn eval_ast(expr: &ast::Expr, scope: &dyn Scope, row: &[Value]) -> Value {
    let b = bound_ast(expr, scope).unwrap_or_else(|e| panic!("{expr:?}: {e}"));
    b.eval(row, &mut Ctx)
        .unwrap_or_else(|e| panic!("{expr:?}: {e}"))
}

#[test]
fn aggregates_read_their_slot() {
    let engine = Engine::new(true);
    let mut row = vec![Value::Int64(1); 12];
    row[10] = Value::Int64(40);
    row[11] = Value::Int64(2);
    let e = binary(
        ast::BinaryOp::Add,
        call("COUNT", vec![star()], false),
        call("sum", vec![parse("a")], true),
    );
    assert_eq!(eval_ast(&e, &engine, &row), Value::Int64(42));
    assert_eq!(*engine.aggregates.borrow(), vec!["COUNT", "SUM"]);
    let b = bound_ast(&parse("max(a) + 1"), &Engine::new(true)).unwrap();
    assert_eq!(b.columns(), vec![10]);
}

#[test]
fn aggregates_refused_where_not_allowed() {
    let err = bound_ast(&parse("SUM(a) > 1"), &Engine::new(false)).unwrap_err();
    assert_eq!(
        err.message(),
        "Aggregate function SUM not allowed in WHERE clause"
    );
    let err = bound_ast(&call("COUNT", vec![star()], false), &()).unwrap_err();
    assert_eq!(err.message(), "Aggregate function COUNT not allowed here");
    let err = bound_ast(&call("ABS", vec![parse("1")], true), &()).unwrap_err();
    assert!(err.message().contains("Non-aggregate function ABS"));
    let err = bound_ast(&call("ABS", vec![star()], false), &()).unwrap_err();
    assert!(err.message().contains("COUNT(*)"));
    assert!(rowtree_expr::is_aggregate_function("array_agg"));
    assert!(!rowtree_expr::is_aggregate_function("ABS"));
}

#[test]
fn subqueries_evaluate_through_the_context() {
    let engine = Engine::new(false);
    let row = [Value::Int64(4)];
    let scalar = ast::Expr::Subquery {
        query: query(),
        span: span(),
    };
    let e = binary(ast::BinaryOp::Add, scalar, parse("1"));
    assert_eq!(eval_ast(&e, &engine, &row), Value::Int64(41));
    // id 1 = [1, 2, NULL]: a match is TRUE, no match NULL.
    let e = binary(
        ast::BinaryOp::Or,
        in_subquery("1", false),
        in_subquery("a", false),
    );
    assert_eq!(eval_ast(&e, &engine, &row), Value::Bool(true));
    assert_eq!(
        *engine.subqueries.borrow(),
        vec![SubqueryKind::Scalar, SubqueryKind::In, SubqueryKind::In]
    );
    let engine = Engine::new(false);
    engine.subqueries.borrow_mut().push(SubqueryKind::Scalar);
    assert_eq!(
        eval_ast(&in_subquery("a", false), &engine, &row),
        Value::Null
    );
    let engine = Engine::new(false);
    engine.subqueries.borrow_mut().push(SubqueryKind::Scalar);
    assert_eq!(
        eval_ast(&in_subquery("2", true), &engine, &row),
        Value::Bool(false)
    );
    // An empty candidate list: FALSE, even for NULL.
    let engine = Engine::new(false);
    engine
        .subqueries
        .borrow_mut()
        .extend([SubqueryKind::Scalar; 2]);
    assert_eq!(
        eval_ast(&in_subquery("NULL", false), &engine, &row),
        Value::Bool(false)
    );
    let engine = Engine::new(false);
    let e = binary(
        ast::BinaryOp::And,
        ast::Expr::Exists {
            query: query(),
            span: span(),
        },
        ast::Expr::Is {
            expr: Box::new(ast::Expr::ArraySubquery {
                query: query(),
                span: span(),
            }),
            test: ast::IsTest::Null,
            negated: true,
            span: span(),
        },
    );
    let b = bound_ast(&e, &engine).unwrap();
    assert_eq!(b.ty(), &Type::Bool);
    assert_eq!(b.subqueries(), vec![0, 1]);
    let err = bound_ast(
        &ast::Expr::Subquery {
            query: query(),
            span: span(),
        },
        &(),
    )
    .unwrap_err();
    assert_eq!(err.message(), "Subqueries are not allowed here");
    let err = bound_ast(&in_subquery("'x'", false), &Engine::new(false)).unwrap_err();
    assert_eq!(
        err.message(),
        "No matching signature for operator IN for argument types: STRING, INT64"
    );
}

fn in_unnest(needle: &str, array: &str, negated: bool) -> ast::Expr {
    ast::Expr::InUnnest {
        expr: Box::new(parse(needle)),
        array: Box::new(parse(array)),
        negated,
        span: span(),
    }
}

#[test]
fn in_unnest_semantics() {
    let engine = Engine::new(false);
    let row = [Value::Int64(4)];
    let cases = [
        ("a", "[1, 4]", false, Value::Bool(true)),
        ("a", "[1, 2]", false, Value::Bool(false)),
        ("a", "[1, NULL]", false, Value::Null),
        ("a", "[1, NULL]", true, Value::Null),
        ("a", "[1, 2]", true, Value::Bool(true)),
        ("NULL", "[1]", false, Value::Null),
        ("NULL", "ARRAY<INT64>[]", false, Value::Bool(false)),
        ("a", "NULL", false, Value::Bool(false)),
        ("4.0", "[1, 4]", false, Value::Bool(true)),
        ("'b'", "['a', 'b']", false, Value::Bool(true)),
    ];
    for (needle, array, negated, want) in cases {
        let e = in_unnest(needle, array, negated);
        assert_eq!(
            eval_ast(&e, &engine, &row),
            want,
            "{needle} IN UNNEST({array})"
        );
    }
    let err = bound_ast(&in_unnest("'a'", "[1]", false), &engine).unwrap_err();
    assert!(err
        .message()
        .starts_with("No matching signature for operator IN"));
    let err = bound_ast(&in_unnest("1", "1", false), &engine).unwrap_err();
    assert_eq!(
        err.message(),
        "Second argument of IN UNNEST must be an array but was INT64"
    );
}

fn extract(part: &str, from: &str, tz: Option<&str>) -> Result<Value, Error> {
    let e = ast::Expr::Extract {
        part: ident(part),
        expr: Box::new(parse(from)),
        time_zone: tz.map(|t| Box::new(parse(t))),
        span: span(),
    };
    bound_ast(&e, &())?.eval(&[], &mut Ctx)
}

#[test]
fn extract_parts() {
    let ts = "TIMESTAMP '2024-03-10 01:02:03.123456789+00'";
    let int = |p: &str, tz: Option<&str>| extract(p, ts, tz).unwrap();
    assert_eq!(int("YEAR", None), Value::Int64(2024));
    assert_eq!(int("MONTH", Some("'UTC'")), Value::Int64(3));
    // 2024-03-10 01:02 UTC is 2024-03-09 17:02 in Los Angeles.
    assert_eq!(int("DAY", None), Value::Int64(9));
    assert_eq!(int("HOUR", None), Value::Int64(17));
    assert_eq!(int("HOUR", Some("'UTC'")), Value::Int64(1));
    assert_eq!(int("day", Some("'UTC'")), Value::Int64(10));
    assert_eq!(int("MINUTE", None), Value::Int64(2));
    assert_eq!(int("SECOND", None), Value::Int64(3));
    assert_eq!(int("MILLISECOND", None), Value::Int64(123));
    assert_eq!(int("MICROSECOND", None), Value::Int64(123_456));
    assert_eq!(int("NANOSECOND", None), Value::Int64(123_456_789));
    assert_eq!(int("QUARTER", None), Value::Int64(1));
    assert_eq!(int("DAYOFWEEK", Some("'UTC'")), Value::Int64(1));
    assert_eq!(int("DAYOFYEAR", Some("'UTC'")), Value::Int64(70));
    assert_eq!(int("WEEK", Some("'UTC'")), Value::Int64(10));
    assert_eq!(int("ISOWEEK", Some("'UTC'")), Value::Int64(10));
    assert_eq!(
        int("DATE", None),
        Value::Date(rowtree_types::Date::parse("2024-03-09").unwrap())
    );
    let d = "DATE '2023-01-01'";
    assert_eq!(extract("WEEK", d, None).unwrap(), Value::Int64(1));
    assert_eq!(extract("ISOWEEK", d, None).unwrap(), Value::Int64(52));
    assert_eq!(extract("ISOYEAR", d, None).unwrap(), Value::Int64(2022));
    assert_eq!(extract("DAYOFWEEK", d, None).unwrap(), Value::Int64(1));
    assert_eq!(
        extract("WEEK", "DATE '2022-01-01'", None).unwrap(),
        Value::Int64(0)
    );
    assert_eq!(extract("YEAR", "NULL", None).unwrap(), Value::Null);
    assert_eq!(extract("YEAR", ts, Some("NULL")).unwrap(), Value::Null);
    let err = extract("HOUR", d, None).unwrap_err();
    assert_eq!(
        err.message(),
        "EXTRACT from DATE does not support the HOUR date part"
    );
    let err = extract("FORTNIGHT", d, None).unwrap_err();
    assert!(err.message().contains("FORTNIGHT"));
    let err = extract("YEAR", "1", None).unwrap_err();
    assert!(err
        .message()
        .starts_with("No matching signature for function EXTRACT"));
    let err = extract("YEAR", ts, Some("'Mars/Base'")).unwrap_err();
    assert_eq!(err.message(), "Invalid time zone: Mars/Base");
}
