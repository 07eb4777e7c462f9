//! The dispatch: which binding job each kind of [`Expr`] node is. The
//! jobs themselves are in the sibling modules, as methods of [`Binder`].

use rowtree_parser::ast::Expr;

use super::{invalid_at, Binder, SubqueryKind};
use crate::bound::BoundExpr;
use crate::Result;

impl Binder<'_> {
    /// Binds `e`, checking first that the stack has room (binding recurses
    /// once per nesting level of the expression).
    pub(super) fn bind(&self, e: &Expr) -> Result<BoundExpr> {
        rowtree_types::stack::guarded(|| self.bind_node(e))
    }

    fn bind_node(&self, e: &Expr) -> Result<BoundExpr> {
        match e {
            Expr::Literal { value, span } => self.bind_literal(value, *span),
            Expr::Column { path, span } => self.bind_path(path, *span),
            Expr::Parameter { name, span } => self.bind_parameter(name, *span),
            Expr::Unary { op, expr, span } => self.bind_unary(*op, expr, *span),
            Expr::Binary {
                op,
                left,
                right,
                span,
            } => self.bind_binary(*op, left, right, *span),
            Expr::Function {
                name,
                args,
                safe,
                distinct,
                modifiers,
                span,
            } => self.bind_call(e, name, args, *safe, *distinct, modifiers.as_deref(), *span),
            Expr::Sequence { span, .. } => Err(invalid_at(
                *span,
                "SEQUENCE arguments are only allowed in sequence functions",
            )),
            Expr::Cast {
                expr,
                to,
                safe,
                span,
            } => self.bind_cast(expr, to, *safe, *span),
            Expr::Is {
                expr,
                test,
                negated,
                span,
            } => self.bind_is(expr, *test, *negated, *span),
            Expr::InList {
                expr,
                list,
                negated,
                span,
            } => self.bind_in_list(expr, list, *negated, *span),
            Expr::Between {
                expr,
                low,
                high,
                negated,
                span,
            } => self.bind_between(expr, low, high, *negated, *span),
            Expr::Like {
                expr,
                pattern,
                negated,
                span,
            } => self.bind_like(expr, pattern, *negated, *span),
            Expr::Case {
                operand,
                branches,
                else_expr,
                span,
            } => self.bind_case(operand.as_deref(), branches, else_expr.as_deref(), *span),
            Expr::Array {
                element_type,
                items,
                span,
            } => self.bind_array(element_type.as_ref(), items, *span),
            Expr::Struct {
                fields,
                field_types,
                span,
            } => self.bind_struct(fields, field_types.as_deref(), *span),
            Expr::Subscript {
                expr,
                index,
                mode,
                span,
            } => self.bind_subscript(expr, index, *mode, *span),
            Expr::Field { expr, field, span } => self.bind_field(expr, field, *span),
            Expr::Interval { span, .. } => Err(invalid_at(
                *span,
                "INTERVAL is only allowed as an argument of date and timestamp functions",
            )),
            Expr::Star { span } => Err(invalid_at(*span, "* is only allowed in COUNT(*)")),
            Expr::Default { span } => Err(invalid_at(
                *span,
                "DEFAULT is only allowed as a value in INSERT and UPDATE",
            )),
            Expr::Subquery { query, span } => {
                self.bind_subquery(e, query, SubqueryKind::Scalar, *span)
            }
            Expr::Exists { query, span } => {
                self.bind_subquery(e, query, SubqueryKind::Exists, *span)
            }
            Expr::ArraySubquery { query, span } => {
                self.bind_subquery(e, query, SubqueryKind::Array, *span)
            }
            Expr::InSubquery {
                expr,
                query,
                negated,
                span,
            } => self.bind_in_subquery(e, expr, query, *negated, *span),
            Expr::InUnnest {
                expr,
                array,
                negated,
                span,
            } => self.bind_in_unnest(expr, array, *negated, *span),
            Expr::Extract {
                part,
                expr,
                time_zone,
                span,
            } => self.bind_extract(part, expr, time_zone.as_deref(), *span),
        }
    }
}
