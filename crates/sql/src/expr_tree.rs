//! Walking, comparing, rewriting and printing AST expressions.
//!
//! The binder needs to look at expressions before typing them: which column
//! references a WHERE conjunct makes (to push it to a scan), whether a
//! SELECT item is the same expression as a GROUP BY key (to read the group
//! value instead), and a short text for EXPLAIN. Subqueries are opaque here:
//! their names belong to their own scopes.

use rowtree_parser::ast::{BinaryOp, Expr, Ident, Literal, UnaryOp};

/// The direct sub-expressions of `e` (not those inside subqueries).
pub(crate) fn children(e: &Expr) -> Vec<&Expr> {
    match e {
        Expr::Literal { .. }
        | Expr::Column { .. }
        | Expr::Parameter { .. }
        | Expr::Star { .. }
        | Expr::Default { .. }
        | Expr::Sequence { .. }
        | Expr::Subquery { .. }
        | Expr::Exists { .. }
        | Expr::ArraySubquery { .. } => vec![],
        Expr::InSubquery { expr, .. } => vec![expr],
        Expr::Unary { expr, .. } | Expr::Cast { expr, .. } | Expr::Is { expr, .. } => vec![expr],
        Expr::Field { expr, .. } => vec![expr],
        Expr::Binary { left, right, .. } => vec![left, right],
        Expr::Function {
            args, modifiers, ..
        } => {
            let mut out: Vec<&Expr> = args.iter().collect();
            if let Some(m) = modifiers {
                out.extend(m.order_by.iter().map(|o| &o.expr));
                out.extend(m.limit.iter());
                if let Some(w) = &m.over {
                    out.extend(w.partition_by.iter());
                    out.extend(w.order_by.iter().map(|o| &o.expr));
                }
            }
            out
        }
        Expr::InUnnest { expr, array, .. } => vec![expr, array],
        Expr::Extract {
            expr, time_zone, ..
        } => {
            let mut out = vec![&**expr];
            out.extend(time_zone.iter().map(|t| &**t));
            out
        }
        Expr::InList { expr, list, .. } => std::iter::once(&**expr).chain(list.iter()).collect(),
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
            .map(|e| &**e)
            .chain(branches.iter().flat_map(|(w, t)| [w, t]))
            .chain(else_expr.iter().map(|e| &**e))
            .collect(),
        Expr::Array { items, .. } => items.iter().collect(),
        Expr::Struct { fields, .. } => fields.iter().map(|(_, e)| e).collect(),
        Expr::Subscript { expr, index, .. } => vec![expr, index],
        Expr::Interval { value, .. } => vec![value],
    }
}

/// Whether `e` contains a subquery (outside nested subqueries, which count too).
pub(crate) fn has_subquery(e: &Expr) -> bool {
    matches!(
        e,
        Expr::Subquery { .. }
            | Expr::Exists { .. }
            | Expr::ArraySubquery { .. }
            | Expr::InSubquery { .. }
    ) || children(e).into_iter().any(has_subquery)
}

/// Whether `e` calls an aggregate function outside subqueries.
pub(crate) fn has_aggregate(e: &Expr) -> bool {
    if let Expr::Function { name, .. } = e {
        if rowtree_expr::is_aggregate_function(&name.value) && window_spec(e).is_none() {
            return true;
        }
    }
    children(e).into_iter().any(has_aggregate)
}

/// The `OVER (...)` of `e` when `e` is a window (analytic) function call.
pub(crate) fn window_spec(e: &Expr) -> Option<&rowtree_parser::ast::WindowSpec> {
    match e {
        Expr::Function {
            modifiers: Some(m), ..
        } => m.over.as_ref(),
        _ => None,
    }
}

/// The column paths `e` references (outside subqueries and aggregate calls
/// when `skip_aggregates`).
pub(crate) fn column_paths<'e>(e: &'e Expr, out: &mut Vec<&'e [Ident]>) {
    if let Expr::Column { path, .. } = e {
        out.push(path);
    }
    for c in children(e) {
        column_paths(c, out);
    }
}

/// A form of `e` that ignores source positions and the case of names, so
/// `SELECT upper(x) ... GROUP BY UPPER(X)` match.
pub(crate) fn canonical(e: &Expr) -> String {
    let text = format!("{e:?}");
    // Drop every `span: Span { start: N, end: M }` and lone `Span { .. }`.
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(i) = rest.find("Span {") {
        let head = &rest[..i];
        let head = head.strip_suffix("span: ").unwrap_or(head);
        out.push_str(head);
        match rest[i..].find('}') {
            Some(j) => rest = &rest[i + j + 1..],
            None => {
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// Whether two expressions are the same up to positions and name case.
pub(crate) fn same(a: &Expr, b: &Expr) -> bool {
    canonical(a).eq_ignore_ascii_case(&canonical(b))
}

/// A copy of `e` where every subtree for which `f` returns a replacement is
/// replaced (top-down: a replaced subtree is not visited further).
pub(crate) fn rewrite(e: &Expr, f: &dyn Fn(&Expr) -> Option<Expr>) -> Expr {
    if let Some(r) = f(e) {
        return r;
    }
    let b = |x: &Expr| Box::new(rewrite(x, f));
    let mut out = e.clone();
    match &mut out {
        Expr::Unary { expr, .. }
        | Expr::Cast { expr, .. }
        | Expr::Is { expr, .. }
        | Expr::Field { expr, .. } => *expr = b(expr),
        Expr::InSubquery { expr, .. } => *expr = b(expr),
        Expr::Binary { left, right, .. } => {
            *left = b(left);
            *right = b(right);
        }
        Expr::Function {
            args, modifiers, ..
        } => {
            for a in args.iter_mut() {
                *a = rewrite(a, f);
            }
            if let Some(m) = modifiers {
                for o in m.order_by.iter_mut() {
                    o.expr = rewrite(&o.expr, f);
                }
                if let Some(w) = &mut m.over {
                    for p in w.partition_by.iter_mut() {
                        *p = rewrite(p, f);
                    }
                    for o in w.order_by.iter_mut() {
                        o.expr = rewrite(&o.expr, f);
                    }
                }
            }
        }
        Expr::InUnnest { expr, array, .. } => {
            *expr = b(expr);
            *array = b(array);
        }
        Expr::Extract { expr, .. } => *expr = b(expr),
        Expr::InList { expr, list, .. } => {
            *expr = b(expr);
            for a in list.iter_mut() {
                *a = rewrite(a, f);
            }
        }
        Expr::Between {
            expr, low, high, ..
        } => {
            *expr = b(expr);
            *low = b(low);
            *high = b(high);
        }
        Expr::Like { expr, pattern, .. } => {
            *expr = b(expr);
            *pattern = b(pattern);
        }
        Expr::Case {
            operand,
            branches,
            else_expr,
            ..
        } => {
            if let Some(o) = operand {
                *o = b(o);
            }
            for (w, t) in branches.iter_mut() {
                *w = rewrite(w, f);
                *t = rewrite(t, f);
            }
            if let Some(x) = else_expr {
                *x = b(x);
            }
        }
        Expr::Array { items, .. } => {
            for a in items.iter_mut() {
                *a = rewrite(a, f);
            }
        }
        Expr::Struct { fields, .. } => {
            for (_, a) in fields.iter_mut() {
                *a = rewrite(a, f);
            }
        }
        Expr::Subscript { expr, index, .. } => {
            *expr = b(expr);
            *index = b(index);
        }
        Expr::Interval { value, .. } => *value = b(value),
        _ => {}
    }
    out
}

/// The conjuncts of `e` (`a AND b AND c` gives three).
pub(crate) fn conjuncts(e: &Expr) -> Vec<&Expr> {
    match e {
        Expr::Binary {
            op: BinaryOp::And,
            left,
            right,
            ..
        } => {
            let mut out = conjuncts(left);
            out.extend(conjuncts(right));
            out
        }
        other => vec![other],
    }
}

/// `a AND b AND ...` of several expressions (`None` for none).
pub(crate) fn and_all(exprs: Vec<Expr>) -> Option<Expr> {
    exprs.into_iter().reduce(|a, b| {
        let span = rowtree_parser::ast::Span {
            start: a.span().start,
            end: b.span().end,
        };
        Expr::Binary {
            op: BinaryOp::And,
            left: Box::new(a),
            right: Box::new(b),
            span,
        }
    })
}

/// A short SQL-like rendering of `e`, for EXPLAIN.
pub(crate) fn text(e: &Expr) -> String {
    match e {
        Expr::Literal { value, .. } => match value {
            Literal::Null => "NULL".into(),
            Literal::Bool(b) => if *b { "TRUE" } else { "FALSE" }.into(),
            Literal::Integer(s) | Literal::Float(s) => s.clone(),
            Literal::String(s) => format!("'{s}'"),
            Literal::Bytes(_) => "b'...'".into(),
            Literal::Typed(t, s) => format!("{t} '{s}'"),
        },
        Expr::Column { path, .. } => path
            .iter()
            .map(|i| i.value.as_str())
            .collect::<Vec<_>>()
            .join("."),
        Expr::Parameter { name, .. } => format!("@{name}"),
        Expr::Unary { op, expr, .. } => {
            let o = match op {
                UnaryOp::Not => "NOT ",
                UnaryOp::Neg => "-",
                UnaryOp::Plus => "+",
                UnaryOp::BitNot => "~",
            };
            format!("{o}{}", text(expr))
        }
        Expr::Binary {
            op, left, right, ..
        } => {
            let o = op.symbol();
            format!("{} {o} {}", text(left), text(right))
        }
        Expr::Function {
            name,
            args,
            distinct,
            ..
        } => {
            let args: Vec<String> = args.iter().map(text).collect();
            let d = if *distinct { "DISTINCT " } else { "" };
            let call = format!("{}({d}{})", name.value, args.join(", "));
            match window_spec(e) {
                Some(w) => format!("{call} OVER ({})", window_text(w)),
                None => call,
            }
        }
        Expr::Star { .. } => "*".into(),
        Expr::Default { .. } => "DEFAULT".into(),
        Expr::Subquery { .. } => "(subquery)".into(),
        Expr::Exists { .. } => "EXISTS(subquery)".into(),
        Expr::ArraySubquery { .. } => "ARRAY(subquery)".into(),
        Expr::InSubquery { expr, negated, .. } => {
            format!(
                "{} {}IN (subquery)",
                text(expr),
                if *negated { "NOT " } else { "" }
            )
        }
        Expr::InUnnest {
            expr,
            array,
            negated,
            ..
        } => {
            format!(
                "{} {}IN UNNEST({})",
                text(expr),
                if *negated { "NOT " } else { "" },
                text(array)
            )
        }
        Expr::InList {
            expr,
            list,
            negated,
            ..
        } => {
            let items: Vec<String> = list.iter().map(text).collect();
            format!(
                "{} {}IN ({})",
                text(expr),
                if *negated { "NOT " } else { "" },
                items.join(", ")
            )
        }
        Expr::Between {
            expr,
            low,
            high,
            negated,
            ..
        } => format!(
            "{} {}BETWEEN {} AND {}",
            text(expr),
            if *negated { "NOT " } else { "" },
            text(low),
            text(high)
        ),
        Expr::Like {
            expr,
            pattern,
            negated,
            ..
        } => {
            format!(
                "{} {}LIKE {}",
                text(expr),
                if *negated { "NOT " } else { "" },
                text(pattern)
            )
        }
        Expr::Is {
            expr,
            test,
            negated,
            ..
        } => format!(
            "{} IS {}{:?}",
            text(expr),
            if *negated { "NOT " } else { "" },
            test
        )
        .to_uppercase(),
        Expr::Cast { expr, to, safe, .. } => {
            format!(
                "{}({} AS {})",
                if *safe { "SAFE_CAST" } else { "CAST" },
                text(expr),
                to.value_type()
            )
        }
        Expr::Field { expr, field, .. } => format!("{}.{}", text(expr), field.value),
        Expr::Array {
            element_type,
            items,
            ..
        } => {
            // At most 8 elements: EXPLAIN of a long literal array stays short.
            let mut parts: Vec<String> = items.iter().take(8).map(text).collect();
            if items.len() > 8 {
                parts.push(format!("... ({} in all)", items.len()));
            }
            let ty = match element_type {
                Some(t) => format!("ARRAY<{}>", t.value_type()),
                None => String::new(),
            };
            format!("{ty}[{}]", parts.join(", "))
        }
        _ => "expr".into(),
    }
}

/// The inside of `OVER (...)`, for EXPLAIN.
pub(crate) fn window_text(w: &rowtree_parser::ast::WindowSpec) -> String {
    let mut parts = Vec::new();
    if !w.partition_by.is_empty() {
        let p: Vec<String> = w.partition_by.iter().map(text).collect();
        parts.push(format!("PARTITION BY {}", p.join(", ")));
    }
    if !w.order_by.is_empty() {
        let o: Vec<String> = w
            .order_by
            .iter()
            .map(|o| {
                let mut t = text(&o.expr);
                if o.desc {
                    t.push_str(" DESC");
                }
                match o.nulls_first {
                    Some(true) => t.push_str(" NULLS FIRST"),
                    Some(false) => t.push_str(" NULLS LAST"),
                    None => {}
                }
                t
            })
            .collect();
        parts.push(format!("ORDER BY {}", o.join(", ")));
    }
    parts.join(" ")
}
