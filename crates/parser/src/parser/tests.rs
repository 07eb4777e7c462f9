//! Unit tests of parser details that scenario files show less directly:
//! spans, the source text of expressions, and the exact AST shape.

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
