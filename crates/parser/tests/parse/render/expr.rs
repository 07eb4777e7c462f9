//! Expressions on one line, every operation parenthesized and every
//! column reference marked `col:`.

use std::fmt::Write as _;

use rowtree_parser::ast::*;

use super::ddl::type_str;
use super::query::{order_by_str, query_inline};
use super::{flag, idents, list};

/// Expressions print fully parenthesised where precedence matters, so the
/// tree shape is visible: `a + b * c` prints as `(a + (b * c))`.
/// An expression on one line, fully parenthesized.
pub fn expr_str(e: &Expr) -> String {
    match e {
        Expr::Literal { value, .. } => match value {
            Literal::Null => "NULL".into(),
            Literal::Bool(b) => if *b { "TRUE" } else { "FALSE" }.into(),
            Literal::Integer(t) | Literal::Float(t) => t.clone(),
            Literal::String(s) => format!("{s:?}"),
            Literal::Bytes(b) => format!("b\"{}\"", b.escape_ascii()),
            Literal::Typed(ty, s) => format!("{ty:?} {s:?}"),
        },
        Expr::Column { path, .. } => format!("col:{}", idents(path).replace(", ", ".")),
        Expr::Parameter { name, .. } => format!("@{name}"),
        Expr::Unary { op, expr, .. } => {
            let op = match op {
                UnaryOp::Not => "NOT ",
                UnaryOp::Neg => "-",
                UnaryOp::Plus => "+",
                UnaryOp::BitNot => "~",
            };
            format!("({op}{})", expr_str(expr))
        }
        Expr::Binary {
            op, left, right, ..
        } => {
            let op = op.symbol();
            format!("({} {op} {})", expr_str(left), expr_str(right))
        }
        Expr::Function {
            name,
            args,
            safe,
            distinct,
            modifiers,
            ..
        } => {
            let mut inner = format!("{}{}", flag(*distinct, "DISTINCT "), list(args));
            if let Some(m) = modifiers {
                match m.ignore_nulls {
                    Some(true) => inner.push_str(" IGNORE NULLS"),
                    Some(false) => inner.push_str(" RESPECT NULLS"),
                    None => {}
                }
                if !m.order_by.is_empty() {
                    let _ = write!(inner, " ORDER BY {}", order_by_str(&m.order_by));
                }
                if let Some(l) = &m.limit {
                    let _ = write!(inner, " LIMIT {}", expr_str(l));
                }
            }
            let mut call = format!("{}{}({inner})", flag(*safe, "SAFE."), name.value);
            if let Some(w) = modifiers.as_ref().and_then(|m| m.over.as_ref()) {
                let mut spec = Vec::new();
                if !w.partition_by.is_empty() {
                    spec.push(format!("PARTITION BY {}", list(&w.partition_by)));
                }
                if !w.order_by.is_empty() {
                    spec.push(format!("ORDER BY {}", order_by_str(&w.order_by)));
                }
                let _ = write!(call, " OVER({})", spec.join(" "));
            }
            call
        }
        Expr::Star { .. } => "*".into(),
        Expr::Default { .. } => "DEFAULT".into(),
        Expr::Subquery { query, .. } => format!("SUBQUERY{{{}}}", query_inline(query)),
        Expr::Exists { query, .. } => format!("EXISTS{{{}}}", query_inline(query)),
        Expr::ArraySubquery { query, .. } => format!("ARRAY{{{}}}", query_inline(query)),
        Expr::InSubquery {
            expr,
            query,
            negated,
            ..
        } => format!(
            "({} {}IN {{{}}})",
            expr_str(expr),
            flag(*negated, "NOT "),
            query_inline(query)
        ),
        Expr::InUnnest {
            expr,
            array,
            negated,
            ..
        } => format!(
            "({} {}IN UNNEST({}))",
            expr_str(expr),
            flag(*negated, "NOT "),
            expr_str(array)
        ),
        Expr::Extract {
            part,
            expr,
            time_zone,
            ..
        } => format!(
            "EXTRACT({} FROM {}{})",
            part.value,
            expr_str(expr),
            time_zone
                .as_ref()
                .map(|tz| format!(" AT TIME ZONE {}", expr_str(tz)))
                .unwrap_or_default()
        ),
        Expr::Sequence { name, .. } => format!("SEQUENCE {}", name.value),
        Expr::Cast { expr, to, safe, .. } => format!(
            "{}CAST({} AS {})",
            flag(*safe, "SAFE_"),
            expr_str(expr),
            type_str(to)
        ),
        Expr::Is {
            expr,
            test,
            negated,
            ..
        } => format!(
            "({} IS {}{})",
            expr_str(expr),
            flag(*negated, "NOT "),
            format!("{test:?}").to_uppercase()
        ),
        Expr::InList {
            expr,
            list: items,
            negated,
            ..
        } => format!(
            "({} {}IN ({}))",
            expr_str(expr),
            flag(*negated, "NOT "),
            list(items)
        ),
        Expr::Between {
            expr,
            low,
            high,
            negated,
            ..
        } => format!(
            "({} {}BETWEEN {} AND {})",
            expr_str(expr),
            flag(*negated, "NOT "),
            expr_str(low),
            expr_str(high)
        ),
        Expr::Like {
            expr,
            pattern,
            negated,
            ..
        } => format!(
            "({} {}LIKE {})",
            expr_str(expr),
            flag(*negated, "NOT "),
            expr_str(pattern)
        ),
        Expr::Case {
            operand,
            branches,
            else_expr,
            ..
        } => {
            let mut s = "CASE".to_string();
            if let Some(o) = operand {
                let _ = write!(s, " {}", expr_str(o));
            }
            for (w, t) in branches {
                let _ = write!(s, " WHEN {} THEN {}", expr_str(w), expr_str(t));
            }
            if let Some(e) = else_expr {
                let _ = write!(s, " ELSE {}", expr_str(e));
            }
            s + " END"
        }
        Expr::Array {
            element_type,
            items,
            ..
        } => format!(
            "ARRAY{}[{}]",
            element_type
                .as_ref()
                .map(|t| format!("<{}>", type_str(t)))
                .unwrap_or_default(),
            list(items)
        ),
        Expr::Struct {
            fields,
            field_types: Some(types),
            ..
        } => format!(
            "STRUCT<{}>({})",
            fields
                .iter()
                .zip(types)
                .map(|((n, _), t)| match n {
                    Some(n) => format!("{} {}", n.value, type_str(t)),
                    None => type_str(t),
                })
                .collect::<Vec<_>>()
                .join(", "),
            fields
                .iter()
                .map(|(_, e)| expr_str(e))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Expr::Struct { fields, .. } => format!(
            "STRUCT({})",
            fields
                .iter()
                .map(|(n, e)| match n {
                    Some(n) => format!("{} AS {}", expr_str(e), n.value),
                    None => expr_str(e),
                })
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Expr::Subscript {
            expr, index, mode, ..
        } => format!("{}[{mode:?}({})]", expr_str(expr), expr_str(index)),
        Expr::Field { expr, field, .. } => format!("({}).{}", expr_str(expr), field.value),
        Expr::Interval { value, unit, .. } => {
            format!("INTERVAL {} {}", expr_str(value), unit.value)
        }
    }
}
