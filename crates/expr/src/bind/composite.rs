//! Composite values: ARRAY and STRUCT constructors, array subscripts
//! (`a[OFFSET(i)]`), STRUCT field access (`s.f`) and the JSON forms of both
//! (`json['a']`, `json[0]`, `json.a`).

use rowtree_parser::ast::{self, DataType, Expr, Ident, Span};
use rowtree_types::{Type, Value};

use super::coerce::{supertype, type_names};
use super::{invalid_at, Binder};
use crate::bound::{BoundExpr, Node};
use crate::functions;
use crate::Result;

impl Binder<'_> {
    /// `[a, b]` or `ARRAY<T>[a, b]`: the elements coerced to their common (or the declared) type.
    pub(super) fn bind_array(
        &self,
        element_type: Option<&DataType>,
        items: &[Expr],
        span: Span,
    ) -> Result<BoundExpr> {
        let items = items
            .iter()
            .map(|i| self.bind(i))
            .collect::<Result<Vec<_>>>()?;
        let elem = match element_type {
            Some(t) => t.value_type(),
            None => {
                let refs: Vec<&BoundExpr> = items.iter().collect();
                supertype(&refs).ok_or_else(|| {
                    invalid_at(
                        span,
                        format!(
                            "Array elements of types {{{}}} do not have a common supertype",
                            type_names(&items)
                        ),
                    )
                })?
            }
        };
        if matches!(elem, Type::Array(_)) {
            return Err(invalid_at(
                span,
                "Cannot construct array with element type ARRAY",
            ));
        }
        let items = items
            .into_iter()
            .map(|i| {
                let span = i.span;
                let ty = i.ty.clone();
                self.coerce(i, &elem).map_err(|_| {
                    invalid_at(
                        span,
                        format!("Array element type {ty} does not coerce to {elem}"),
                    )
                })
            })
            .collect::<Result<_>>()?;
        Ok(BoundExpr::new(
            Node::Array(items),
            Type::Array(Box::new(elem)),
            span,
        ))
    }

    /// `STRUCT(a, b AS name)` or `STRUCT<x T, y U>(a, b)`.
    pub(super) fn bind_struct(
        &self,
        fields: &[(Option<Ident>, Expr)],
        field_types: Option<&[DataType]>,
        span: Span,
    ) -> Result<BoundExpr> {
        let mut types = Vec::new();
        let mut items = Vec::new();
        for (i, (name, f)) in fields.iter().enumerate() {
            let mut b = self.bind(f)?;
            // A typed constructor coerces each value to its field's type.
            if let Some(ty) = field_types.and_then(|t| t.get(i)) {
                let to = ty.value_type();
                let found = b.type_name();
                let value_span = b.span;
                b = self.coerce(b, &to).map_err(|_| {
                    invalid_at(
                        value_span,
                        format!(
                            "STRUCT field {} expects type {to} but the value has type {found}",
                            i + 1
                        ),
                    )
                })?;
            }
            types.push((
                name.as_ref().map(|n| n.value.clone()).unwrap_or_default(),
                b.ty.clone(),
            ));
            items.push(b);
        }
        Ok(BoundExpr::new(
            Node::Struct(items),
            Type::Struct(types),
            span,
        ))
    }

    /// `array[i]`, `array[OFFSET(i)]`, ... or `json[key]`.
    pub(super) fn bind_subscript(
        &self,
        expr: &Expr,
        index: &Expr,
        mode: ast::SubscriptMode,
        span: Span,
    ) -> Result<BoundExpr> {
        let array = self.bind(expr)?;
        if array.ty == Type::Json {
            return self.json_subscript(array, index, mode, span);
        }
        let elem = match &array.ty {
            Type::Array(elem) => (**elem).clone(),
            other => {
                return Err(invalid_at(
                    span,
                    format!("Element access is not supported for values of type {other}"),
                ))
            }
        };
        let index = self.bind(index)?;
        if !(index.ty == Type::Int64 || index.is_null_literal()) {
            return Err(invalid_at(
                index.span,
                format!("Array position must be INT64, but was {}", index.ty),
            ));
        }
        let index = self.coerce(index, &Type::Int64)?;
        Ok(BoundExpr::new(
            Node::Subscript {
                expr: Box::new(array),
                index: Box::new(index),
                mode,
            },
            elem,
            span,
        ))
    }

    /// `expr.field`.
    pub(super) fn bind_field(&self, expr: &Expr, field: &Ident, span: Span) -> Result<BoundExpr> {
        let base = self.bind(expr)?;
        field_access(base, field, span, self.options.protos.as_deref())
    }

    /// The JSON subscript `json[key]`: a member by STRING name or an array
    /// element by INT64 position (from 0); NULL when there is none.
    pub(super) fn json_subscript(
        &self,
        json: BoundExpr,
        index: &Expr,
        mode: ast::SubscriptMode,
        span: Span,
    ) -> Result<BoundExpr> {
        if mode != ast::SubscriptMode::Bare {
            return Err(invalid_at(
                span,
                "Subscript access using OFFSET, ORDINAL or SAFE_ forms is not supported for values of type JSON",
            ));
        }
        let key = self.bind(index)?;
        let key = if key.is_null_literal() || key.ty == Type::Int64 {
            self.coerce(key, &Type::Int64)?
        } else if key.ty == Type::String {
            key
        } else {
            return Err(invalid_at(
                key.span,
                format!(
                    "JSON subscript must be STRING or INT64, but was {}",
                    key.type_name()
                ),
            ));
        };
        Ok(json_subscript_call(json, key, span))
    }
}

/// `base.field` on a STRUCT value, a JSON object's member (`NULL`
/// when the value is not an object or has no such member), or a PROTO
/// message's field (read with the proto bundle's descriptors `protos`).
pub(super) fn field_access(
    base: BoundExpr,
    field: &Ident,
    span: Span,
    protos: Option<&rowtree_types::ProtoBundle>,
) -> Result<BoundExpr> {
    if base.ty == Type::Json {
        let key = BoundExpr::literal(Value::String(field.value.clone()), Type::String, field.span);
        return Ok(json_subscript_call(base, key, span));
    }
    if let Type::Proto(message) = &base.ty {
        let descriptor = protos
            .and_then(|p| p.message(message))
            .ok_or_else(|| invalid_at(base.span, format!("Type not found: {message}")))?;
        // Field names are case-sensitive in protocol buffers; GoogleSQL
        // matches them case-insensitively.
        let found = descriptor.get_field_by_name(&field.value).or_else(|| {
            descriptor
                .fields()
                .find(|f| f.name().eq_ignore_ascii_case(&field.value))
        });
        let Some(found) = found else {
            return Err(invalid_at(
                field.span,
                format!("Field name {} does not exist in {message}", field.value),
            ));
        };
        let ty = rowtree_types::proto::field_type(&found).ok_or_else(|| {
            invalid_at(
                field.span,
                format!(
                    "Field {} of {message} is a map, which is not supported",
                    field.value
                ),
            )
        })?;
        return Ok(BoundExpr::new(
            Node::Proto {
                op: crate::bound::ProtoOp::Field(found),
                expr: Box::new(base),
                safe: false,
            },
            ty,
            span,
        ));
    }
    let found = match &base.ty {
        Type::Struct(fields) => fields
            .iter()
            .position(|(n, _)| field.matches(n))
            .map(|i| (i, fields[i].1.clone())),
        _ => None,
    };
    match found {
        Some((index, ty)) => Ok(BoundExpr::new(
            Node::Field {
                expr: Box::new(base),
                index,
            },
            ty,
            span,
        )),
        None => Err(invalid_at(
            field.span,
            format!("Field name {} does not exist in {}", field.value, base.ty),
        )),
    }
}

/// `json[key]` (a STRING member name or an INT64 array position) once the
/// key has its type.
fn json_subscript_call(json: BoundExpr, key: BoundExpr, span: Span) -> BoundExpr {
    BoundExpr::new(
        Node::Call {
            function: &functions::JSON_SUBSCRIPT,
            args: vec![json, key],
            safe: false,
        },
        Type::Json,
        span,
    )
}
