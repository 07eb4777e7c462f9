//! Unit tests of parser details the parse goldenscripts (`tests/scripts/parse/`)
//! show less directly: spans, the source text of expressions, and the exact
//! AST shape.

use super::*;
use crate::ast::*;

fn create_table(text: &str) -> CreateTable {
    match parse_statement(text).expect("parses").kind {
        StatementKind::CreateTable(t) => t,
        other => panic!("not CREATE TABLE: {other:?}"),
    }
}

#[test]
fn statement_span_excludes_the_semicolon_and_surrounding_trivia() {
    let text = "  -- c\n DROP TABLE t ; ";
    let statement = parse_statement(text).expect("parses");
    assert_eq!(
        &text[statement.span.start..statement.span.end],
        "DROP TABLE t"
    );
}

#[test]
fn spans_point_at_names_and_types() {
    let text = "CREATE TABLE Users (Name STRING(10) NOT NULL) PRIMARY KEY (Name)";
    let t = create_table(text);
    let column = &t.columns[0];
    assert_eq!(&text[t.name.span.start..t.name.span.end], "Users");
    assert_eq!(&text[column.name.span.start..column.name.span.end], "Name");
    assert_eq!(
        &text[column.type_span.start..column.type_span.end],
        "STRING(10)"
    );
    assert_eq!(column.data_type, DataType::String(Length::Limit(10)));
    assert!(column.not_null);
}

#[test]
fn source_expr_keeps_the_exact_text_between_the_parentheses() {
    let text = "CREATE TABLE t (a INT64 DEFAULT ( 1  +  /* two */ 2 ), b INT64 AS ((a)) STORED, CHECK(a>0)) PRIMARY KEY (a)";
    let t = create_table(text);
    let default = t.columns[0].default.as_ref().expect("default");
    assert_eq!(default.text, "1  +  /* two */ 2");
    let generated = t.columns[1].generated.as_ref().expect("generated");
    assert_eq!(generated.expr.text, "(a)");
    assert!(generated.stored);
    let TableConstraint::Check(check) = &t.constraints[0] else {
        panic!("expected a check");
    };
    assert_eq!(check.expr.text, "a>0");
    assert_eq!(&text[check.span.start..check.span.end], "CHECK(a>0)");
}

#[test]
fn expression_spans_cover_operands_and_parentheses() {
    let text = "(a + 1) * f(b)";
    let expr = parse_expr(text).expect("parses");
    let Expr::Binary {
        op: BinaryOp::Mul,
        left,
        right,
        span,
    } = &expr
    else {
        panic!("expected a product: {expr:?}");
    };
    assert_eq!((span.start, span.end), (0, text.len()));
    assert_eq!(&text[left.span().start..left.span().end], "(a + 1)");
    assert_eq!(&text[right.span().start..right.span().end], "f(b)");
}

#[test]
fn sequence_arguments_and_safe_calls() {
    let expr = parse_expr("SAFE.GET_NEXT_SEQUENCE_VALUE(SEQUENCE s)").expect("parses");
    let Expr::Function {
        name, args, safe, ..
    } = expr
    else {
        panic!("expected a call");
    };
    assert!(safe);
    assert!(name.matches("get_next_sequence_value"));
    assert!(matches!(&args[..], [Expr::Sequence { name, .. }] if name.value == "s"));
    // `sequence` alone is an ordinary column argument.
    let expr = parse_expr("f(sequence)").expect("parses");
    let Expr::Function { args, .. } = expr else {
        panic!("expected a call");
    };
    assert!(matches!(&args[..], [Expr::Column { .. }]));
}

#[test]
fn typed_literals_carry_their_type() {
    let expr = parse_expr("DATE '2024-02-29'").expect("parses");
    assert!(matches!(
        expr,
        Expr::Literal { value: Literal::Typed(rowtree_types::Type::Date, ref s), .. } if s == "2024-02-29"
    ));
    // Without a string after it, DATE is a column name.
    assert!(matches!(
        parse_expr("date").expect("parses"),
        Expr::Column { .. }
    ));
}

#[test]
fn sequence_options_are_filled_from_both_syntaxes() {
    let clause = "CREATE SEQUENCE s BIT_REVERSED_POSITIVE SKIP RANGE 1, 1000 START COUNTER WITH 7";
    let options = "CREATE SEQUENCE s OPTIONS (sequence_kind = 'bit_reversed_positive', skip_range_min = 1, skip_range_max = 1000, start_with_counter = 7)";
    let get = |text| match parse_statement(text).expect("parses").kind {
        StatementKind::CreateSequence(s) => s.options,
        other => panic!("not CREATE SEQUENCE: {other:?}"),
    };
    let (a, b) = (get(clause), get(options));
    assert_eq!(a.skip_range, Some((1, 1000)));
    assert_eq!(a.skip_range, b.skip_range);
    assert_eq!(a.start_with_counter, Some(7));
    assert_eq!(a.start_with_counter, b.start_with_counter);
    assert!(a
        .kind
        .is_some_and(|k| k.eq_ignore_ascii_case("bit_reversed_positive")));
    assert!(a.raw_options.is_empty());
    assert_eq!(b.raw_options.len(), 4);
}

#[test]
fn errors_carry_byte_offsets() {
    let err = parse_statement("CREATE TABLE t (a INT32) PRIMARY KEY (a)").unwrap_err();
    assert_eq!(err.offset, 18);
    assert_eq!(err.to_string(), err.message);
    let err = parse_statement("DROP TABLE").unwrap_err();
    assert_eq!(err.message, "Syntax error: Unexpected end of statement");
    assert_eq!(err.offset, 10);
}

fn text_of(text: &str, span: Span) -> &str {
    &text[span.start..span.end]
}

fn select_of(query: &Query) -> &Select {
    match &query.body {
        SetExpr::Select(s) => s,
        other => panic!("not a SELECT: {other:?}"),
    }
}

#[test]
fn parse_query_accepts_one_query_only() {
    let text = "SELECT a FROM t ORDER BY a LIMIT 1;";
    let query = parse_query(text).expect("parses");
    assert_eq!(
        text_of(text, query.span),
        "SELECT a FROM t ORDER BY a LIMIT 1"
    );
    assert_eq!(text_of(text, select_of(&query).span), "SELECT a FROM t");
    let err = parse_query("DELETE FROM t WHERE TRUE").unwrap_err();
    assert_eq!(
        err.message,
        "Syntax error: Expected \"(\" or keyword SELECT but got keyword DELETE"
    );
    assert_eq!(err.offset, 0);
    assert!(parse_query("SELECT 1 UNION ALL SELECT 2 x y").is_err());
}

#[test]
fn query_spans_cover_their_text() {
    let text = "WITH c AS (SELECT 1 AS x) SELECT s.x FROM (SELECT x FROM c) AS s JOIN u ON s.x = u.x, u.arr AS e WHERE EXISTS (SELECT 1)";
    let query = parse_query(text).expect("parses");
    assert_eq!(text_of(text, query.span), text);
    assert_eq!(text_of(text, query.with[0].query.span), "SELECT 1 AS x");
    let select = select_of(&query);
    let Some(TableExpr::Join {
        kind: JoinKind::Cross,
        left,
        right,
        span,
        ..
    }) = &select.from
    else {
        panic!("expected a comma join: {:?}", select.from);
    };
    assert_eq!(
        text_of(text, *span),
        "(SELECT x FROM c) AS s JOIN u ON s.x = u.x, u.arr AS e"
    );
    let TableExpr::Join {
        kind: JoinKind::Inner,
        left: sub,
        condition: JoinCondition::On(on),
        ..
    } = left.as_ref()
    else {
        panic!("expected an inner join: {left:?}");
    };
    assert!(
        matches!(sub.as_ref(), TableExpr::Subquery { span, .. } if text_of(text, *span) == "(SELECT x FROM c) AS s")
    );
    assert_eq!(text_of(text, on.span()), "s.x = u.x");
    // The array path after the comma is a two-part table path.
    let TableExpr::Table { path, alias, .. } = right.as_ref() else {
        panic!("expected a table path: {right:?}");
    };
    assert_eq!(path.len(), 2);
    assert!(alias.as_ref().is_some_and(|a| a.matches("E")));
    let where_clause = select.where_clause.as_ref().expect("where");
    assert_eq!(text_of(text, where_clause.span()), "EXISTS (SELECT 1)");
}

#[test]
fn aggregate_calls_keep_star_distinct_and_modifiers() {
    let Expr::Function {
        args,
        distinct,
        modifiers,
        ..
    } = parse_expr("COUNT(*)").expect("parses")
    else {
        panic!("expected a call");
    };
    assert!(matches!(&args[..], [Expr::Star { span }] if (span.start, span.end) == (6, 7)));
    assert!(!distinct);
    assert!(modifiers.is_none());
    let Expr::Function {
        distinct,
        modifiers,
        ..
    } = parse_expr("ARRAY_AGG(DISTINCT x IGNORE NULLS ORDER BY y DESC LIMIT 3)").expect("parses")
    else {
        panic!("expected a call");
    };
    assert!(distinct);
    let modifiers = modifiers.expect("modifiers");
    assert_eq!(modifiers.ignore_nulls, Some(true));
    assert!(modifiers.order_by[0].desc);
    assert!(matches!(
        modifiers.limit,
        Some(Expr::Literal { value: Literal::Integer(ref n), .. }) if n == "3"
    ));
}

#[test]
fn subquery_expression_spans_include_their_parentheses() {
    let text = "((SELECT 1) + x) IN (SELECT 2)";
    let expr = parse_expr(text).expect("parses");
    let Expr::InSubquery {
        expr: left,
        query,
        negated: false,
        span,
    } = &expr
    else {
        panic!("expected IN subquery: {expr:?}");
    };
    assert_eq!(text_of(text, *span), text);
    assert_eq!(text_of(text, query.span), "SELECT 2");
    let Expr::Binary { left: sub, .. } = left.as_ref() else {
        panic!("expected a sum: {left:?}");
    };
    assert!(
        matches!(sub.as_ref(), Expr::Subquery { span, .. } if text_of(text, *span) == "(SELECT 1)")
    );
}

#[test]
fn dml_values_may_be_default() {
    let text = "INSERT t (a, b) VALUES (DEFAULT, 1)";
    let StatementKind::Insert(insert) = parse_statement(text).expect("parses").kind else {
        panic!("expected INSERT");
    };
    assert_eq!(insert.mode, InsertMode::Plain);
    let InsertSource::Values(rows) = &insert.source else {
        panic!("expected VALUES");
    };
    assert!(matches!(&rows[0][0], Expr::Default { span } if text_of(text, *span) == "DEFAULT"));
    assert_eq!(text_of(text, insert.span), text);
    let text = "UPDATE t SET a = DEFAULT WHERE TRUE THEN RETURN a";
    let StatementKind::Update(update) = parse_statement(text).expect("parses").kind else {
        panic!("expected UPDATE");
    };
    assert!(matches!(update.assignments[0].1, Expr::Default { .. }));
    assert_eq!(update.returning.as_ref().map(Vec::len), Some(1));
}

#[test]
fn explain_wraps_the_inner_statement_with_its_own_span() {
    let text = "EXPLAIN ANALYZE SELECT 1";
    let statement = parse_statement(text).expect("parses");
    let StatementKind::Explain {
        analyze,
        statement: inner,
    } = statement.kind
    else {
        panic!("expected EXPLAIN");
    };
    assert!(analyze);
    assert_eq!(text_of(text, inner.span), "SELECT 1");
    assert!(matches!(inner.kind, StatementKind::Query(_)));
}

#[test]
fn nested_parentheses_around_subqueries_do_not_backtrack_exponentially() {
    // Every level first tries the query reading, fails at `+`, and re-reads
    // as an expression; each failed attempt is linear, so this stays fast.
    let depth = 60;
    let text = format!(
        "SELECT {}SELECT 1{} FROM t WHERE x IN {}SELECT 2{}",
        "(".repeat(depth),
        ") + 1".repeat(depth),
        "(".repeat(depth),
        ")".repeat(depth)
    );
    let started = std::time::Instant::now();
    parse_query(&text).expect("parses");
    let text = format!(
        "SELECT * FROM {}SELECT 1) AS s JOIN t ON TRUE{}",
        "(".repeat(depth),
        ")".repeat(depth - 1)
    );
    parse_query(&text).expect("parses");
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
}

#[test]
fn typed_struct_constructors_keep_names_and_types() {
    let e = parse_expr("STRUCT<x INT64, STRING, a ARRAY<INT64>>(1, 'b', [2])").expect("parses");
    let Expr::Struct {
        fields,
        field_types,
        ..
    } = e
    else {
        panic!("not a struct: {e:?}");
    };
    let names: Vec<Option<&str>> = fields
        .iter()
        .map(|(n, _)| n.as_ref().map(|n| n.value.as_str()))
        .collect();
    assert_eq!(names, [Some("x"), None, Some("a")]);
    assert_eq!(
        field_types,
        Some(vec![
            DataType::Int64,
            DataType::String(Length::Max),
            DataType::Array(Box::new(DataType::Int64)),
        ])
    );
    let untyped = parse_expr("STRUCT(1 AS x)").expect("parses");
    assert!(matches!(
        untyped,
        Expr::Struct {
            field_types: None,
            ..
        }
    ));
}

#[test]
fn typed_struct_constructors_need_one_value_per_field() {
    let error = parse_expr("STRUCT<x INT64, y STRING>(5)").unwrap_err();
    assert!(
        error.to_string().contains("STRUCT type has 2 fields"),
        "{error}"
    );
}

/// Hostile nesting: every shape that builds a deep tree stops at
/// [`MAX_NESTING`] with GoogleSQL's "Out of stack space" wording, quickly,
/// instead of overflowing the stack.
mod nesting {
    use super::super::MAX_NESTING;
    use crate::parse_statement;

    fn too_deep(text: &str) {
        let started = std::time::Instant::now();
        let err = parse_statement(text).expect_err("too deep");
        assert!(
            err.message
                .starts_with("Out of stack space due to deeply nested query expression"),
            "{}",
            err.message
        );
        assert!(err.offset <= text.len());
        // Microseconds per level, not a crawl through the whole input.
        assert!(started.elapsed() < std::time::Duration::from_secs(30));
    }

    fn parses(text: &str) {
        parse_statement(text).unwrap_or_else(|e| panic!("{}: {}", e.message, &text[..60]));
    }

    fn repeat(s: &str, n: usize) -> String {
        s.repeat(n)
    }

    #[test]
    fn parentheses() {
        let n = 2_000;
        too_deep(&format!("SELECT {}1{}", repeat("(", n), repeat(")", n)));
        parses(&format!("SELECT {}1{}", repeat("(", 400), repeat(")", 400)));
    }

    #[test]
    fn operator_chains() {
        too_deep(&format!("SELECT 1{}", repeat("+1", 100_000)));
        too_deep(&format!("SELECT 1{}", repeat(" * 2", MAX_NESTING + 1)));
        too_deep(&format!("SELECT TRUE{}", repeat(" OR FALSE", 50_000)));
        too_deep(&format!("SELECT TRUE{}", repeat(" AND TRUE", 50_000)));
        parses(&format!("SELECT 1{}", repeat("+1", MAX_NESTING - 10)));
    }

    #[test]
    fn prefix_operators() {
        too_deep(&format!("SELECT {}TRUE", repeat("NOT ", 50_000)));
        too_deep(&format!("SELECT {}1", repeat("- ", 50_000)));
        too_deep(&format!("SELECT {}1", repeat("~", 50_000)));
        parses(&format!("SELECT {}TRUE", repeat("NOT ", 300)));
    }

    #[test]
    fn chains_inside_parentheses_add_up() {
        // 600 levels of parentheses around a 600-link chain: each is fine
        // alone, together they are 1,200 levels deep.
        let inner = format!("1{}", repeat("+1", 600));
        too_deep(&format!(
            "SELECT {}{inner}{}",
            repeat("(", 600),
            repeat(")", 600)
        ));
        // The chain first and the parentheses in its last operand: the
        // operand is not pushed down by the links before it.
        let inner = format!("{}1{}", repeat("(", 600), repeat(")", 600));
        parses(&format!("SELECT 1{}+{inner}", repeat("+1", 300)));
        // In the first operand it is: 600 + 600.
        too_deep(&format!("SELECT {inner}{}", repeat("+1", 600)));
    }

    #[test]
    fn postfix_chains() {
        // `a.b.c` is one flat path; after a parenthesis each `.b` is a node.
        parses(&format!("SELECT a{} FROM t", repeat(".b", 50_000)));
        too_deep(&format!("SELECT (a){} FROM t", repeat(".b", 50_000)));
        too_deep(&format!("SELECT a{} FROM t", repeat("[OFFSET(0)]", 50_000)));
    }

    #[test]
    fn function_calls_and_constructors() {
        too_deep(&format!(
            "SELECT {}1{}",
            repeat("ABS(", 5_000),
            repeat(")", 5_000)
        ));
        too_deep(&format!(
            "SELECT {}1{}",
            repeat("[", 5_000),
            repeat("]", 5_000)
        ));
        too_deep(&format!(
            "SELECT {}1{}",
            repeat("STRUCT(", 5_000),
            repeat(")", 5_000)
        ));
        too_deep(&format!(
            "SELECT {}1{}",
            repeat("CASE WHEN TRUE THEN ", 5_000),
            repeat(" END", 5_000)
        ));
        too_deep(&format!(
            "SELECT CAST(NULL AS {}INT64{})",
            repeat("STRUCT<a ", 5_000),
            repeat(">", 5_000)
        ));
        too_deep(&format!(
            "SELECT CAST(NULL AS {}INT64{})",
            repeat("ARRAY<STRUCT<a ", 3_000),
            repeat(">>", 3_000)
        ));
    }

    #[test]
    fn queries() {
        too_deep(&format!(
            "{}SELECT 1{}",
            repeat("(", 5_000),
            repeat(")", 5_000)
        ));
        too_deep(&format!(
            "SELECT {}SELECT 1{}",
            repeat("(SELECT ", 5_000),
            repeat(")", 5_000)
        ));
        too_deep(&format!("SELECT 1{}", repeat(" UNION ALL SELECT 1", 5_000)));
        too_deep(&format!(
            "SELECT * FROM t{}",
            repeat(" JOIN t USING (a)", 5_000)
        ));
        too_deep(&format!(
            "SELECT * FROM {}t{}",
            repeat("(", 5_000),
            repeat(")", 5_000)
        ));
        too_deep(&format!(
            "SELECT * FROM {}SELECT 1{}",
            repeat("(SELECT * FROM ", 5_000),
            repeat(")", 5_000)
        ));
        too_deep(&format!(
            "SELECT 1 WHERE {}1{}",
            repeat("EXISTS(SELECT ", 5_000),
            repeat(")", 5_000)
        ));
        parses(&format!("SELECT 1{}", repeat(" UNION ALL SELECT 1", 200)));
    }

    #[test]
    fn backtracking_stays_fast() {
        // `((SELECT 1) + 1) + 1 ...`: each level first tries a query, then
        // an expression; parsing stays polynomial.
        let mut text = String::from("(SELECT 1)");
        for _ in 0..300 {
            text = format!("({text} + 1)");
        }
        let started = std::time::Instant::now();
        parses(&format!("SELECT {text}"));
        assert!(started.elapsed() < std::time::Duration::from_secs(30));
    }
}

#[test]
fn select_lists_allow_one_trailing_comma() {
    for text in [
        "SELECT a, b, FROM t",
        "SELECT 1,",
        "SELECT 1, ;",
        "SELECT x FROM (SELECT 1 AS x,)",
        "SELECT a, WHERE TRUE",
        "SELECT a, UNION ALL SELECT b,",
        "SELECT *, FROM t ORDER BY a",
    ] {
        parse_query(text).unwrap_or_else(|e| panic!("{text}: {e:?}"));
    }
    let query = parse_query("SELECT a, b, FROM t").expect("parses");
    assert_eq!(select_of(&query).items.len(), 2);
    // One comma only, and never a list of no items.
    let err = parse_query("SELECT a,, FROM t").unwrap_err();
    assert_eq!(err.offset, 9);
    assert!(parse_query("SELECT , FROM t").is_err());
    assert!(parse_statement("DELETE FROM t WHERE TRUE THEN RETURN a, b,").is_ok());
}

#[test]
fn row_deletion_policy_after_the_primary_key_and_in_alter_table() {
    let t = create_table(
        "CREATE TABLE T (K INT64, Ts TIMESTAMP) PRIMARY KEY (K), \
         ROW DELETION POLICY (OLDER_THAN(Ts, INTERVAL 30 DAY))",
    );
    let policy = t.row_deletion_policy.expect("a policy");
    assert_eq!((policy.column.value.as_str(), policy.days), ("Ts", 30));
    // With the interleave clause, in either order.
    for text in [
        "CREATE TABLE C (K INT64, J INT64, Ts TIMESTAMP) PRIMARY KEY (K, J), \
         INTERLEAVE IN PARENT P ON DELETE CASCADE, row deletion policy (older_than(Ts, interval 0 day))",
        "CREATE TABLE C (K INT64, J INT64, Ts TIMESTAMP) PRIMARY KEY (K, J), \
         ROW DELETION POLICY (OLDER_THAN(Ts, INTERVAL 0 DAY)), INTERLEAVE IN PARENT P",
    ] {
        let t = create_table(text);
        assert!(t.interleave.is_some(), "{text}");
        assert_eq!(t.row_deletion_policy.expect("a policy").days, 0, "{text}");
    }
    let alter = |text: &str| match parse_statement(text).expect("parses").kind {
        StatementKind::AlterTable(a) => a.action,
        other => panic!("{other:?}"),
    };
    assert!(matches!(
        alter("ALTER TABLE T ADD ROW DELETION POLICY (OLDER_THAN(Ts, INTERVAL 7 DAY))"),
        AlterTableAction::AddRowDeletionPolicy(RowDeletionPolicy { days: 7, .. })
    ));
    assert!(matches!(
        alter("ALTER TABLE T REPLACE ROW DELETION POLICY (OLDER_THAN(Ts, INTERVAL -1 DAY))"),
        AlterTableAction::ReplaceRowDeletionPolicy(RowDeletionPolicy { days: -1, .. })
    ));
    assert_eq!(
        alter("ALTER TABLE T DROP ROW DELETION POLICY"),
        AlterTableAction::DropRowDeletionPolicy
    );
    for bad in [
        "CREATE TABLE T (K INT64, Ts TIMESTAMP) PRIMARY KEY (K), ROW DELETION POLICY (OLDER_THAN(Ts, INTERVAL 1 HOUR))",
        "CREATE TABLE T (K INT64, Ts TIMESTAMP) PRIMARY KEY (K), ROW DELETION POLICY (OLDER_THAN(Ts, 1))",
        "CREATE TABLE T (K INT64, Ts TIMESTAMP) PRIMARY KEY (K), ROW DELETION POLICY (OLDER_THAN(Ts, INTERVAL 1 DAY)), ROW DELETION POLICY (OLDER_THAN(Ts, INTERVAL 1 DAY))",
        "CREATE TABLE T (K INT64, Ts TIMESTAMP) PRIMARY KEY (K),",
        "ALTER TABLE T DROP ROW DELETION",
    ] {
        assert!(parse_statement(bad).is_err(), "{bad}");
    }
}
