//! Binding the expressions a schema holds: DEFAULT values, generated
//! columns and CHECK constraints.
//!
//! Each is bound by [`rowtree_expr::bind`] against a [`TableScope`]: slot `i`
//! of the row is column `i` of the table. On top of the binder's own typing
//! rules, the schema enforces Spanner's rules for where each kind of
//! expression may be used:
//!
//! | | may read columns | non-deterministic functions | type |
//! |---|---|---|---|
//! | `DEFAULT` | no | yes (`GENERATE_UUID()`, `CURRENT_TIMESTAMP()`, sequences) | assignable to the column |
//! | generated column | yes, of its own table | no | assignable to the column |
//! | `CHECK` | yes, at least one non-generated | no | `BOOL` |
//!
//! Errors are wrapped the way Spanner wraps them (`Error parsing the default
//! value of column `T`.`C`: ...`) and keep the binder's position.

use rowtree_expr::{bind, BindOptions, BoundExpr, Scope};
use rowtree_parser::ast::{self, Expr, Ident, Literal};
use rowtree_types::Type;

use crate::error::{Result, SchemaError};
use crate::table::ColumnExpr;

/// Resolves column names of one table to their positions.
pub(crate) struct TableScope<'a> {
    pub table: &'a str,
    /// `(name, type)` of every column, by position.
    pub columns: Vec<(String, Type)>,
    /// The proto descriptors, for expressions on PROTO and ENUM columns.
    pub protos: Option<std::sync::Arc<rowtree_types::ProtoBundle>>,
    /// Whether NUMERIC literals and casts must be exact (a PostgreSQL-dialect
    /// database; see `rowtree_expr::BindOptions::exact_numeric`).
    pub exact_numeric: bool,
}

impl Scope for TableScope<'_> {
    fn resolve(&self, path: &[Ident]) -> Option<(usize, Type)> {
        let name = match path {
            [column] => column,
            [table, column] if table.matches(self.table) => column,
            _ => return None,
        };
        self.columns
            .iter()
            .position(|(n, _)| name.matches(n))
            .map(|i| (i, self.columns[i].1.clone()))
    }
}

/// Functions whose result is not a function of their arguments.
const NON_DETERMINISTIC: &[&str] = &[
    "CURRENT_TIMESTAMP",
    "CURRENT_DATE",
    "CURRENT_DATETIME",
    "CURRENT_TIME",
    "GENERATE_UUID",
    "RAND",
    "PENDING_COMMIT_TIMESTAMP",
    "GET_NEXT_SEQUENCE_VALUE",
    "GET_INTERNAL_SEQUENCE_STATE",
];

/// The direct sub-expressions of `expr`.
fn children(expr: &Expr) -> Vec<&Expr> {
    match expr {
        Expr::Literal { .. }
        | Expr::Column { .. }
        | Expr::Parameter { .. }
        | Expr::Sequence { .. } => {
            vec![]
        }
        Expr::Unary { expr, .. }
        | Expr::Cast { expr, .. }
        | Expr::Is { expr, .. }
        | Expr::Field { expr, .. } => vec![expr],
        Expr::Interval { value, .. } => vec![value],
        Expr::Binary { left, right, .. } => vec![left, right],
        Expr::Function { args, .. } => args.iter().collect(),
        Expr::InList { expr, list, .. } => std::iter::once(expr.as_ref()).chain(list).collect(),
        Expr::Between {
            expr, low, high, ..
        } => vec![expr, low, high],
        Expr::Like { expr, pattern, .. } => vec![expr, pattern],
        Expr::Case {
            operand,
            branches,
            else_expr,
            ..
        } => operand
            .iter()
            .map(|e| e.as_ref())
            .chain(branches.iter().flat_map(|(w, t)| [w, t]))
            .chain(else_expr.iter().map(|e| e.as_ref()))
            .collect(),
        Expr::Array { items, .. } => items.iter().collect(),
        Expr::Struct { fields, .. } => fields.iter().map(|(_, e)| e).collect(),
        Expr::Subscript { expr, index, .. } => vec![expr, index],
        Expr::Star { .. } | Expr::Default { .. } => vec![],
        // Subqueries are refused by the binder; their insides are not
        // part of this expression.
        Expr::Subquery { .. } | Expr::Exists { .. } | Expr::ArraySubquery { .. } => vec![],
        Expr::InSubquery { expr, .. } => vec![expr],
        Expr::InUnnest { expr, array, .. } => vec![expr, array],
        Expr::Extract {
            expr, time_zone, ..
        } => std::iter::once(expr.as_ref())
            .chain(time_zone.iter().map(|e| e.as_ref()))
            .collect(),
    }
}

/// The first call (in source order) for which `pred` holds on the upper-cased
/// function name: its name and span.
fn find_call(expr: &Expr, pred: &dyn Fn(&str) -> bool) -> Option<(String, ast::Span)> {
    if let Expr::Function { name, span, .. } = expr {
        let upper = name.value.to_ascii_uppercase();
        if pred(&upper) {
            return Some((upper, *span));
        }
    }
    children(expr).into_iter().find_map(|c| find_call(c, pred))
}

/// Whether `expr` calls the function `name` (upper case) anywhere.
pub(crate) fn calls(expr: &Expr, name: &str) -> bool {
    find_call(expr, &|f| f == name).is_some()
}

fn is_null_literal(expr: &Expr) -> bool {
    matches!(
        expr,
        Expr::Literal {
            value: Literal::Null,
            ..
        }
    )
}

fn is_literal(expr: &Expr) -> bool {
    match expr {
        Expr::Literal { .. } => true,
        Expr::Unary { expr, .. } => is_literal(expr),
        _ => false,
    }
}

/// Whether a value of type `from`, computed by `expr`, may be stored in a
/// column of type `to` (GoogleSQL assignment: implicit widening, and literal
/// coercion of NULL, integers and strings).
pub(crate) fn assignable(from: &Type, expr: &Expr, to: &Type) -> bool {
    if from == to || is_null_literal(expr) {
        return true;
    }
    match (from, to) {
        (Type::Int64, Type::Numeric | Type::Float64) => true,
        (Type::Numeric | Type::Float32, Type::Float64) => true,
        (Type::Int64 | Type::Float64, Type::Float32) => is_literal(expr),
        (Type::String, Type::Date | Type::Timestamp | Type::Uuid) => is_literal(expr),
        (Type::Array(a), Type::Array(b)) => match expr {
            Expr::Array { items, .. } if !items.is_empty() => {
                items.iter().all(|item| assignable(a, item, b))
            }
            // An empty array literal adopts the column's element type.
            Expr::Array { items, .. } => items.is_empty(),
            other => assignable(a, other, b) && !is_literal(other),
        },
        _ => false,
    }
}

fn bind_with(expr: &Expr, scope: &TableScope<'_>, context: &str) -> Result<BoundExpr> {
    let options = BindOptions {
        protos: scope.protos.clone(),
        exact_numeric: scope.exact_numeric,
        ..BindOptions::default()
    };
    bind(expr, scope, &options).map_err(|e| SchemaError::from_expr(context, &e))
}

fn non_deterministic_error(context: &str, expr: &Expr, what: &str) -> Option<SchemaError> {
    find_call(expr, &|f| NON_DETERMINISTIC.contains(&f)).map(|(name, span)| {
        SchemaError::invalid(
            format!(
                "{context}Expression is non-deterministic due to the use of non-determinstic \
                 function `{name}`. Expression of {what} must yield the same value for the same \
                 dependent column values. Non-deterministic functions inside the expressions are \
                 not allowed."
            ),
            span,
        )
    })
}

fn type_error(context: &str, expected: &Type, found: &Type, span: ast::Span) -> SchemaError {
    SchemaError::invalid(
        format!("{context}Expected type {expected}; found {found}"),
        span,
    )
}

/// What a column expression is checked against.
pub(crate) struct ColumnTarget<'a> {
    pub table: &'a str,
    pub column: &'a str,
    pub ty: &'a Type,
    pub allow_commit_timestamp: bool,
}

/// Binds and checks `DEFAULT (source)` of a column.
pub(crate) fn bind_default(
    source: &ast::SourceExpr,
    scope: &TableScope<'_>,
    target: &ColumnTarget<'_>,
) -> Result<ColumnExpr> {
    let context = format!(
        "Error parsing the default value of column `{}`.`{}`: ",
        target.table, target.column
    );
    let mut bound = bind_with(&source.expr, scope, &context)?;
    // A PostgreSQL decimal literal is a numeric: as a numeric column's
    // DEFAULT it is one, exactly (or refused if numeric cannot hold it).
    if scope.exact_numeric && *target.ty == Type::Numeric {
        bound = bound
            .coerce_literal_for_assignment_with(target.ty, None, true)
            .map_err(|e| SchemaError::from_expr(&context, &e))?;
    }
    if !bound.columns().is_empty() {
        return Err(SchemaError::invalid(
            format!(
                "Default value expression of column `{}` has a reference to another column. \
                 Default expressions referencing other columns are not supported.",
                target.column
            ),
            source.expr.span(),
        ));
    }
    if !assignable(bound.ty(), &source.expr, target.ty) {
        return Err(type_error(
            &context,
            target.ty,
            bound.ty(),
            source.expr.span(),
        ));
    }
    let pending = calls(&source.expr, "PENDING_COMMIT_TIMESTAMP");
    if target.allow_commit_timestamp && !pending {
        return Err(SchemaError::precondition(
            format!(
                "The only default value expression permitted for commit timestamp column `{}` is \
                 PENDING_COMMIT_TIMESTAMP().",
                target.column
            ),
            source.expr.span(),
        ));
    }
    if !target.allow_commit_timestamp && pending {
        return Err(SchemaError::precondition(
            format!(
                "Cannot use default value expression PENDING_COMMIT_TIMESTAMP() on column `{}` \
                 without the allow_commit_timestamp column option.",
                target.column
            ),
            source.expr.span(),
        ));
    }
    Ok(ColumnExpr {
        text: source.text.clone(),
        expr: bound,
        source: source.expr.clone(),
    })
}

/// Binds and checks the expression of a generated column.
pub(crate) fn bind_generated(
    source: &ast::SourceExpr,
    stored: bool,
    scope: &TableScope<'_>,
    target: &ColumnTarget<'_>,
) -> Result<ColumnExpr> {
    let context = format!(
        "Error parsing the definition of generated column `{}`.`{}`: ",
        target.table, target.column
    );
    let what = if stored {
        "stored generated columns"
    } else {
        "generated columns"
    };
    if let Some(err) = non_deterministic_error(&context, &source.expr, what) {
        return Err(err);
    }
    let bound = bind_with(&source.expr, scope, &context)?;
    if !assignable(bound.ty(), &source.expr, target.ty) {
        return Err(type_error(
            &context,
            target.ty,
            bound.ty(),
            source.expr.span(),
        ));
    }
    Ok(ColumnExpr {
        text: source.text.clone(),
        expr: bound,
        source: source.expr.clone(),
    })
}

/// Binds and checks the expression of a CHECK constraint named `name`.
pub(crate) fn bind_check(
    source: &ast::SourceExpr,
    name: &str,
    scope: &TableScope<'_>,
) -> Result<ColumnExpr> {
    let context = format!(
        "Error parsing expression '{}' from check constraint '{}' in table '{}': ",
        source.text, name, scope.table
    );
    if let Some(err) = non_deterministic_error(&context, &source.expr, "check constraints") {
        return Err(err);
    }
    let bound = bind_with(&source.expr, scope, &context)?;
    if bound.ty() != &Type::Bool {
        return Err(type_error(
            &context,
            &Type::Bool,
            bound.ty(),
            source.expr.span(),
        ));
    }
    Ok(ColumnExpr {
        text: source.text.clone(),
        expr: bound,
        source: source.expr.clone(),
    })
}

/// Binds an already validated expression again, after column positions of
/// its table changed.
pub(crate) fn rebind(expr: &ColumnExpr, scope: &TableScope<'_>) -> Result<ColumnExpr> {
    let bound = bind_with(&expr.source, scope, "")?;
    Ok(ColumnExpr {
        text: expr.text.clone(),
        expr: bound,
        source: expr.source.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lit(value: Literal) -> Expr {
        Expr::Literal {
            value,
            span: ast::Span::default(),
        }
    }

    #[test]
    fn assignment_widens_and_coerces_literals() {
        let one = lit(Literal::Integer("1".into()));
        assert!(assignable(&Type::Int64, &one, &Type::Float64));
        assert!(assignable(&Type::Int64, &one, &Type::Float32));
        assert!(assignable(&Type::Int64, &lit(Literal::Null), &Type::Json));
        assert!(!assignable(
            &Type::String,
            &lit(Literal::String("x".into())),
            &Type::Int64
        ));
        assert!(assignable(
            &Type::String,
            &lit(Literal::String("2024-01-01".into())),
            &Type::Date
        ));
    }

    #[test]
    fn finds_non_deterministic_calls_in_nested_expressions() {
        let call = |name: &str, args: Vec<Expr>| Expr::Function {
            name: Ident {
                value: name.into(),
                span: ast::Span::default(),
            },
            args,
            safe: false,
            distinct: false,
            modifiers: None,
            span: ast::Span::default(),
        };
        let expr = call(
            "MOD",
            vec![
                call("current_timestamp", vec![]),
                lit(Literal::Integer("2".into())),
            ],
        );
        assert!(calls(&expr, "CURRENT_TIMESTAMP"));
        let err = non_deterministic_error("", &expr, "generated columns").unwrap();
        assert!(
            err.message().contains("`CURRENT_TIMESTAMP`"),
            "{}",
            err.message()
        );
    }
}
