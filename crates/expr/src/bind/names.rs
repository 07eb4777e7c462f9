//! Name resolution: column paths (`c`, `t.c`, `s.field`), query
//! parameters (`@p`), and the "Did you mean" suggestion for a name that
//! does not resolve.

use rowtree_parser::ast::{Ident, Span};
use rowtree_types::{Type, Value};

use super::composite::field_access;
use super::{invalid_at, Binder};
use crate::bound::{BoundExpr, Node};
use crate::Result;

impl Binder<'_> {
    /// A column reference `c`, `t.c`, or a column (or range variable)
    /// followed by STRUCT field names: `s.a`, `t.s.a`. The longest prefix
    /// that names a column wins; the rest are field accesses.
    pub(super) fn bind_path(&self, path: &[Ident], span: Span) -> Result<BoundExpr> {
        if let Some((slot, ty)) = self.scope.resolve(path) {
            return Ok(BoundExpr::new(Node::Column(slot), ty, span));
        }
        for k in (1..path.len()).rev() {
            if let Some((slot, ty)) = self.scope.resolve(&path[..k]) {
                let prefix_span = Span {
                    start: span.start,
                    end: path[k - 1].span.end,
                };
                let mut e = BoundExpr::new(Node::Column(slot), ty, prefix_span);
                for field in &path[k..] {
                    let span = Span {
                        start: span.start,
                        end: field.span.end,
                    };
                    e = field_access(e, field, span, self.options.protos.as_deref())?;
                }
                return Ok(e);
            }
        }
        // GoogleSQL names the first part of a path none of which resolved.
        let name = path.first().map(|i| i.value.as_str()).unwrap_or_default();
        let mut message = format!("Unrecognized name: {name}");
        if let Some(suggestion) = self.scope.suggest(name) {
            message.push_str(&format!("; Did you mean {suggestion}?"));
        }
        Err(invalid_at(span, message))
    }

    /// A query parameter `@name`: its type comes from [`super::BindOptions::params`];
    /// one of [`super::BindOptions::untyped_null_params`] is an untyped NULL
    /// literal (typed by its context, INT64 where nothing asks).
    pub(super) fn bind_parameter(&self, name: &str, span: Span) -> Result<BoundExpr> {
        let ty = self.options.params.get(name).cloned().or_else(|| {
            self.options
                .params
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, t)| t.clone())
        });
        let untyped_null = || {
            self.options
                .untyped_null_params
                .iter()
                .any(|k| k.eq_ignore_ascii_case(name))
        };
        match ty {
            Some(ty) => Ok(BoundExpr::new(Node::Param(name.to_string()), ty, span)),
            None if untyped_null() => Ok(BoundExpr::literal(Value::Null, Type::Int64, span)),
            None => Err(invalid_at(
                span,
                format!("Query parameter '{name}' not found"),
            )),
        }
    }
}

/// Levenshtein distance between `a` and `b`, ignoring ASCII case.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().map(|c| c.to_ascii_lowercase()).collect();
    let b: Vec<char> = b.chars().map(|c| c.to_ascii_lowercase()).collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitute = prev[j] + usize::from(ca != cb);
            cur[j + 1] = substitute.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The candidate closest to the mistyped `name`, when it is within about a
/// fifth of the name's length in edits (at least one). Internal names (`$...`)
/// and empty names are never suggested; ties go to the first candidate.
pub fn closest_name<'n>(
    name: &str,
    candidates: impl IntoIterator<Item = &'n str>,
) -> Option<&'n str> {
    let limit = (name.chars().count() / 5).max(1);
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        if c.is_empty() || c.starts_with('$') || c.eq_ignore_ascii_case(name) {
            continue;
        }
        let d = edit_distance(name, c);
        if d <= limit && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}
