//! Evaluation of a bound tree against one row.
//!
//! The binder has already chosen every operator's operand type, so each arm
//! here only handles the value kinds its node was bound for; anything else
//! is an internal error, never a panic. NULL follows three-valued logic:
//! most operators return NULL for a NULL operand, `AND`/`OR` only when the
//! other side does not decide (`FALSE AND NULL` is FALSE), and lazy forms
//! (`CASE`, `IF`, `COALESCE`) evaluate only what they need.

use std::rc::Rc;

use rowtree_parser::ast::SubscriptMode;
use rowtree_types::{format_f64, Value};

use crate::bound::{BoundExpr, Node};
use crate::cast::{cast, coerce_value};
use crate::compare::sql_compare;
use crate::like::{like, like_str};
use crate::membership::{InSet, SetId};
use crate::operator::{ArithOp, CmpOp};
use crate::{Error, EvalContext, Result};

impl BoundExpr {
    /// Evaluates against `row` (indexed by the slots [`crate::Scope`] handed
    /// out). Errors carry the span of the innermost node that failed.
    pub fn eval(&self, row: &[Value], ctx: &mut dyn EvalContext) -> Result<Value> {
        // One stack check for the whole tree; nodes deeper than
        // `eval::UNGUARDED_DEPTH` check again as they go.
        rowtree_types::stack::guarded(|| eval(self, row, ctx))
    }
}

/// Subtrees at most this deep are evaluated without checking the stack at
/// each node: [`BoundExpr::eval`] checked once that a red zone of stack is
/// left, and this many levels fit in it many times over. Deeper nodes check
/// for themselves, so a tree nested to the parser's limit still runs on any
/// thread, while ordinary expressions pay nothing per node.
pub(crate) const UNGUARDED_DEPTH: u32 = 64;

#[inline(always)]
pub(crate) fn eval(e: &BoundExpr, row: &[Value], ctx: &mut dyn EvalContext) -> Result<Value> {
    let result = if e.depth <= UNGUARDED_DEPTH {
        eval_node(e, row, ctx)
    } else {
        eval_deep(e, row, ctx)
    };
    result.map_err(|err| err.at(e.span))
}

/// [`eval_node`] behind a stack check, for the rare deep node.
#[cold]
#[inline(never)]
fn eval_deep(e: &BoundExpr, row: &[Value], ctx: &mut dyn EvalContext) -> Result<Value> {
    rowtree_types::stack::guarded(|| eval_node(e, row, ctx))
}

fn internal(what: &str) -> Error {
    Error::invalid(format!("internal error: unexpected operand for {what}"))
}

fn truth(v: &Value) -> Result<Option<bool>> {
    match v {
        Value::Null => Ok(None),
        Value::Bool(b) => Ok(Some(*b)),
        _ => Err(internal("a boolean operator")),
    }
}

fn from_truth(t: Option<bool>) -> Value {
    t.map_or(Value::Null, Value::Bool)
}

fn eval_node(e: &BoundExpr, row: &[Value], ctx: &mut dyn EvalContext) -> Result<Value> {
    Ok(match &e.node {
        Node::Literal(v) => v.clone(),
        Node::Column(slot) => row
            .get(*slot)
            .cloned()
            .ok_or_else(|| Error::invalid(format!("internal error: row has no slot {slot}")))?,
        Node::Param(name) => {
            let v = ctx
                .param(name)
                .ok_or_else(|| Error::invalid(format!("No parameter found for binding: {name}")))?;
            coerce_value(v, &e.ty)?
        }
        Node::SequenceName(name) => Value::String(name.clone()),
        Node::Not(x) => from_truth(truth(&eval(x, row, ctx)?)?.map(|b| !b)),
        Node::And(a, b) => {
            let left = truth(&eval(a, row, ctx)?)?;
            if left == Some(false) {
                return Ok(Value::Bool(false));
            }
            match (left, truth(&eval(b, row, ctx)?)?) {
                (_, Some(false)) => Value::Bool(false),
                (Some(true), Some(true)) => Value::Bool(true),
                _ => Value::Null,
            }
        }
        Node::Or(a, b) => {
            let left = truth(&eval(a, row, ctx)?)?;
            if left == Some(true) {
                return Ok(Value::Bool(true));
            }
            match (left, truth(&eval(b, row, ctx)?)?) {
                (_, Some(true)) => Value::Bool(true),
                (Some(false), Some(false)) => Value::Bool(false),
                _ => Value::Null,
            }
        }
        Node::Neg(x) => match eval(x, row, ctx)? {
            Value::Null => Value::Null,
            Value::Int64(v) => Value::Int64(
                v.checked_neg()
                    .ok_or_else(|| Error::out_of_range(format!("int64 overflow: -({v})")))?,
            ),
            Value::Float64(f) => Value::Float64(-f),
            Value::Float32(f) => Value::Float32(-f),
            Value::Numeric(n) => Value::Numeric(-n),
            _ => return Err(internal("unary -")),
        },
        Node::BitNot(x) => match eval(x, row, ctx)? {
            Value::Null => Value::Null,
            Value::Int64(v) => Value::Int64(!v),
            Value::Bytes(b) => Value::Bytes(b.iter().map(|x| !x).collect()),
            _ => return Err(internal("~")),
        },
        Node::Arith(op, a, b) => {
            let (x, y) = (eval(a, row, ctx)?, eval(b, row, ctx)?);
            if x.is_null() || y.is_null() {
                return Ok(Value::Null);
            }
            arith(*op, x, y)?
        }
        Node::Compare(op, a, b) => {
            let (x, y) = (eval(a, row, ctx)?, eval(b, row, ctx)?);
            from_truth(sql_compare(*op, &x, &y))
        }
        Node::Concat(a, b) => match (eval(a, row, ctx)?, eval(b, row, ctx)?) {
            (Value::Null, _) | (_, Value::Null) => Value::Null,
            (Value::String(x), Value::String(y)) => {
                crate::check_output("||", x.len() + y.len(), 0)?;
                Value::String(x + &y)
            }
            (Value::Bytes(mut x), Value::Bytes(y)) => {
                crate::check_output("||", x.len() + y.len(), 0)?;
                x.extend_from_slice(&y);
                Value::Bytes(x)
            }
            (Value::Array(mut x), Value::Array(y)) => {
                crate::check_output("||", 0, x.len() + y.len())?;
                x.extend(y);
                Value::Array(x)
            }
            _ => return Err(internal("||")),
        },
        Node::Call {
            function,
            args,
            safe,
        } => {
            let mut values = Vec::with_capacity(args.len());
            for a in args {
                match eval(a, row, ctx) {
                    Ok(v) => values.push(v),
                    Err(_) if *safe => return Ok(Value::Null),
                    Err(err) => return Err(err),
                }
            }
            if !function.handles_null && values.iter().any(Value::is_null) {
                return Ok(Value::Null);
            }
            match (function.eval)(&values, ctx) {
                Ok(v) => v,
                Err(_) if *safe => Value::Null,
                Err(err) => return Err(err),
            }
        }
        Node::Cast { expr, safe } => {
            let v = eval(expr, row, ctx)?;
            match cast(v, &e.ty) {
                Ok(v) => v,
                Err(_) if *safe => Value::Null,
                Err(err) => return Err(err),
            }
        }
        Node::IsNull(x) => Value::Bool(eval(x, row, ctx)?.is_null()),
        Node::IsBool(x, want) => Value::Bool(truth(&eval(x, row, ctx)?)? == Some(*want)),
        Node::InList {
            expr,
            list,
            negated,
            set,
        } => {
            let needle = eval(expr, row, ctx)?;
            let kept = match set {
                Some(id) => kept_set(*id, ctx, |ctx| {
                    list.iter().map(|i| eval(i, row, ctx)).collect()
                })?,
                None => None,
            };
            let found = match kept {
                Some(s) => s.contains(&needle),
                None => in_list(&needle, list, row, ctx)?,
            };
            from_truth(found.map(|f| f != *negated))
        }
        Node::Between {
            expr,
            low,
            high,
            negated,
        } => {
            let v = eval(expr, row, ctx)?;
            let lo = sql_compare(CmpOp::GtEq, &v, &eval(low, row, ctx)?);
            let hi = sql_compare(CmpOp::LtEq, &v, &eval(high, row, ctx)?);
            let inside = match (lo, hi) {
                (Some(false), _) | (_, Some(false)) => Some(false),
                (Some(true), Some(true)) => Some(true),
                _ => None,
            };
            from_truth(inside.map(|i| i != *negated))
        }
        Node::Like {
            expr,
            pattern,
            negated,
        } => {
            let matched = match (eval(expr, row, ctx)?, eval(pattern, row, ctx)?) {
                (Value::Null, _) | (_, Value::Null) => None,
                (Value::String(t), Value::String(p)) => Some(like_str(&t, &p)?),
                (Value::Bytes(t), Value::Bytes(p)) => Some(like(&t, &p)?),
                _ => return Err(internal("LIKE")),
            };
            from_truth(matched.map(|m| m != *negated))
        }
        Node::Case {
            operand,
            branches,
            else_expr,
        } => {
            let subject = match operand {
                Some(o) => Some(eval(o, row, ctx)?),
                None => None,
            };
            for (when, then) in branches {
                let w = eval(when, row, ctx)?;
                let hit = match &subject {
                    Some(s) => sql_compare(CmpOp::Eq, s, &w) == Some(true),
                    None => truth(&w)? == Some(true),
                };
                if hit {
                    return eval(then, row, ctx);
                }
            }
            match else_expr {
                Some(x) => eval(x, row, ctx)?,
                None => Value::Null,
            }
        }
        Node::Coalesce(items) => {
            for item in items {
                let v = eval(item, row, ctx)?;
                if !v.is_null() {
                    return Ok(v);
                }
            }
            Value::Null
        }
        Node::NullIf(a, b) => {
            let x = eval(a, row, ctx)?;
            let y = eval(b, row, ctx)?;
            if sql_compare(CmpOp::Eq, &x, &y) == Some(true) {
                Value::Null
            } else {
                x
            }
        }
        Node::Array(items) => Value::Array(
            items
                .iter()
                .map(|i| eval(i, row, ctx))
                .collect::<Result<_>>()?,
        ),
        Node::Struct(items) => Value::Struct(
            items
                .iter()
                .map(|i| eval(i, row, ctx))
                .collect::<Result<_>>()?,
        ),
        Node::Subscript { expr, index, mode } => {
            let (array, index) = (eval(expr, row, ctx)?, eval(index, row, ctx)?);
            subscript(array, index, *mode)?
        }
        Node::Proto { op, expr, safe } => {
            let v = eval(expr, row, ctx)?;
            match proto_op(op, v) {
                Ok(v) => v,
                Err(_) if *safe => Value::Null,
                Err(err) => return Err(err),
            }
        }
        Node::Field { expr, index } => match eval(expr, row, ctx)? {
            Value::Null => Value::Null,
            Value::Struct(mut fields) if *index < fields.len() => fields.swap_remove(*index),
            _ => return Err(internal("field access")),
        },
        Node::Subquery { id, kind } => match ctx.subquery(*id, row)? {
            Value::Null if *kind == crate::SubqueryKind::Exists => Value::Bool(false),
            v => v,
        },
        Node::InSubquery { expr, id, negated } => {
            let needle = eval(expr, row, ctx)?;
            let candidates = ctx.subquery(*id, row)?;
            from_truth(in_values(&needle, &candidates)?.map(|f| f != *negated))
        }
        Node::InUnnest {
            expr,
            array,
            negated,
            set,
        } => {
            let needle = eval(expr, row, ctx)?;
            let kept = match set {
                Some(id) => kept_set(*id, ctx, |ctx| match eval(array, row, ctx)? {
                    Value::Null => Ok(Vec::new()),
                    Value::Array(items) => Ok(items),
                    _ => Err(internal("IN")),
                })?,
                None => None,
            };
            let found = match kept {
                Some(s) => s.contains(&needle),
                None => in_values(&needle, &eval(array, row, ctx)?)?,
            };
            from_truth(found.map(|f| f != *negated))
        }
        Node::ToJson { expr, string, safe } => {
            let v = match eval(expr, row, ctx) {
                Ok(v) => v,
                Err(_) if *safe => return Ok(Value::Null),
                Err(err) => return Err(err),
            };
            match crate::functions::to_json(&v, Some(&expr.ty)) {
                Ok(j) if *string => Value::String(j.to_string()),
                Ok(j) => Value::Json(j),
                Err(_) if *safe => Value::Null,
                Err(err) => return Err(err),
            }
        }
        Node::Extract {
            part,
            expr,
            time_zone,
        } => {
            let v = eval(expr, row, ctx)?;
            let tz = match time_zone {
                Some(tz) => eval(tz, row, ctx)?,
                None => Value::String(String::new()),
            };
            if v.is_null() || tz.is_null() {
                return Ok(Value::Null);
            }
            crate::datetime::extract(*part, &v, &tz)?
        }
    })
}

/// `needle IN UNNEST(candidates)` (an array, or NULL for none): TRUE on a
/// match, else NULL if the needle or any candidate is NULL, else FALSE. A
/// NULL needle against no candidates is FALSE.
fn in_values(needle: &Value, candidates: &Value) -> Result<Option<bool>> {
    let items = match candidates {
        Value::Null => return Ok(Some(false)),
        Value::Array(items) => items,
        _ => return Err(internal("IN")),
    };
    Ok(crate::membership::search(needle, items))
}

/// The set kept for the row-independent `IN` `id`, built from `candidates`
/// on first use; `None` when the context keeps no sets, or the candidates
/// failed to evaluate (then `IN` is evaluated as without a set, and fails
/// where it would).
fn kept_set(
    id: SetId,
    ctx: &mut dyn EvalContext,
    candidates: impl FnOnce(&mut dyn EvalContext) -> Result<Vec<Value>>,
) -> Result<Option<Rc<InSet>>> {
    if let Some(set) = ctx.in_set(id) {
        return Ok(set.usable().then_some(set));
    }
    if !ctx.keeps_in_sets() {
        return Ok(None);
    }
    let set = Rc::new(match candidates(ctx) {
        Ok(items) => InSet::new(items),
        Err(_) => InSet::unusable(),
    });
    ctx.keep_in_set(id, set.clone())?;
    Ok(set.usable().then_some(set))
}

/// `needle IN (list)`: TRUE on a match, else NULL if the needle or any
/// element is NULL, else FALSE.
fn in_list(
    needle: &Value,
    list: &[BoundExpr],
    row: &[Value],
    ctx: &mut dyn EvalContext,
) -> Result<Option<bool>> {
    if needle.is_null() {
        return Ok(if list.is_empty() { Some(false) } else { None });
    }
    let mut unknown = false;
    for item in list {
        match sql_compare(CmpOp::Eq, needle, &eval(item, row, ctx)?) {
            Some(true) => return Ok(Some(true)),
            None => unknown = true,
            Some(false) => {}
        }
    }
    Ok(if unknown { None } else { Some(false) })
}

fn subscript(array: Value, index: Value, mode: SubscriptMode) -> Result<Value> {
    let (items, i) = match (array, index) {
        (Value::Null, _) | (_, Value::Null) => return Ok(Value::Null),
        (Value::Array(items), Value::Int64(i)) => (items, i),
        _ => return Err(internal("array subscript")),
    };
    let (position, safe) = match mode {
        SubscriptMode::Offset | SubscriptMode::Bare => (Some(i), false),
        SubscriptMode::SafeOffset => (Some(i), true),
        SubscriptMode::Ordinal => (i.checked_sub(1), false),
        SubscriptMode::SafeOrdinal => (i.checked_sub(1), true),
    };
    match position
        .and_then(|p| usize::try_from(p).ok())
        .filter(|p| *p < items.len())
    {
        Some(p) => Ok(items.into_iter().nth(p).unwrap_or(Value::Null)),
        None if safe => Ok(Value::Null),
        None => Err(Error::out_of_range(format!(
            "Array index {i} is out of bounds"
        ))),
    }
}

/// Binary arithmetic on two non-NULL operands of the bound type.
fn arith(op: ArithOp, x: Value, y: Value) -> Result<Value> {
    let sym = op.symbol();
    Ok(match (x, y) {
        (Value::Int64(a), Value::Int64(b)) => {
            let overflow = || Error::out_of_range(format!("int64 overflow: {a} {sym} {b}"));
            Value::Int64(match op {
                ArithOp::Add => a.checked_add(b).ok_or_else(overflow)?,
                ArithOp::Sub => a.checked_sub(b).ok_or_else(overflow)?,
                ArithOp::Mul => a.checked_mul(b).ok_or_else(overflow)?,
                ArithOp::Div => return Err(internal("INT64 /")),
                ArithOp::BitAnd => a & b,
                ArithOp::BitOr => a | b,
                ArithOp::BitXor => a ^ b,
                ArithOp::ShiftLeft | ArithOp::ShiftRight if b < 0 => {
                    return Err(Error::out_of_range(format!(
                        "Bitwise shift by negative offset: {a} {sym} {b}"
                    )))
                }
                ArithOp::ShiftLeft if b >= 64 => 0,
                ArithOp::ShiftRight if b >= 64 => 0,
                ArithOp::ShiftLeft => ((a as u64) << b) as i64,
                // GoogleSQL's >> does not extend the sign.
                ArithOp::ShiftRight => ((a as u64) >> b) as i64,
            })
        }
        (Value::Float64(a), Value::Float64(b)) => {
            let r = match op {
                ArithOp::Add => a + b,
                ArithOp::Sub => a - b,
                ArithOp::Mul => a * b,
                ArithOp::Div if b == 0.0 => {
                    return Err(Error::out_of_range(format!(
                        "division by zero: {} / {}",
                        format_f64(a),
                        format_f64(b)
                    )))
                }
                ArithOp::Div => a / b,
                _ => return Err(internal(sym)),
            };
            if r.is_infinite() && a.is_finite() && b.is_finite() {
                return Err(Error::out_of_range(format!(
                    "double overflow: {} {sym} {}",
                    format_f64(a),
                    format_f64(b)
                )));
            }
            Value::Float64(r)
        }
        (Value::Numeric(a), Value::Numeric(b)) => Value::Numeric(match op {
            ArithOp::Add => a.checked_add(b)?,
            ArithOp::Sub => a.checked_sub(b)?,
            ArithOp::Mul => a.checked_mul(b)?,
            ArithOp::Div => a.checked_div(b)?,
            _ => return Err(internal(sym)),
        }),
        (Value::Bytes(a), Value::Bytes(b)) if a.len() == b.len() => Value::Bytes(
            a.iter()
                .zip(&b)
                .map(|(p, q)| match op {
                    ArithOp::BitAnd => Ok(p & q),
                    ArithOp::BitOr => Ok(p | q),
                    ArithOp::BitXor => Ok(p ^ q),
                    _ => Err(internal(sym)),
                })
                .collect::<Result<_>>()?,
        ),
        (Value::Bytes(_), Value::Bytes(_)) => {
            return Err(Error::out_of_range(format!(
                "Bitwise binary operator {sym} requires two BYTES arguments of the same length"
            )))
        }
        _ => return Err(internal(sym)),
    })
}

/// A [`Node::Proto`] operation on a (non-NULL or NULL) value.
fn proto_op(op: &crate::bound::ProtoOp, v: Value) -> Result<Value> {
    use crate::bound::ProtoOp;
    if v.is_null() {
        return Ok(Value::Null);
    }
    if let (
        ProtoOp::EnumName(_)
        | ProtoOp::EnumFromName(_)
        | ProtoOp::EnumFromNumber(_)
        | ProtoOp::CheckMessage(_),
        Value::Array(items),
    ) = (op, &v)
    {
        // A cast of an array applies to each element.
        return Ok(Value::Array(
            items
                .iter()
                .map(|item| proto_op(op, item.clone()))
                .collect::<Result<_>>()?,
        ));
    }
    Ok(match (op, v) {
        (ProtoOp::Field(field), Value::Bytes(bytes)) => {
            rowtree_types::proto::read_field(&bytes, field).map_err(Error::out_of_range)?
        }
        (ProtoOp::EnumName(e), Value::Int64(n)) => {
            match i32::try_from(n).ok().and_then(|n| e.get_value(n)) {
                Some(v) => Value::String(v.name().to_string()),
                None => {
                    return Err(Error::out_of_range(format!(
                        "Invalid value {n} for enum {}",
                        e.full_name()
                    )))
                }
            }
        }
        (ProtoOp::EnumFromName(e), Value::String(name)) => match e.get_value_by_name(&name) {
            Some(v) => Value::Int64(i64::from(v.number())),
            None => {
                return Err(Error::out_of_range(format!(
                    "Could not cast string {name:?} to enum {}",
                    e.full_name()
                )))
            }
        },
        (ProtoOp::CheckMessage(m), Value::Bytes(bytes)) => {
            if let Err(e) = rowtree_types::proto::prost_reflect::DynamicMessage::decode(
                m.clone(),
                bytes.as_slice(),
            ) {
                return Err(Error::out_of_range(format!(
                    "Invalid cast of BYTES to {}: {e}",
                    m.full_name()
                )));
            }
            Value::Bytes(bytes)
        }
        (ProtoOp::EnumFromNumber(e), Value::Int64(n)) => {
            if i32::try_from(n).ok().and_then(|n| e.get_value(n)).is_none() {
                return Err(Error::out_of_range(format!(
                    "Out of range cast of integer {n} to enum type {}",
                    e.full_name()
                )));
            }
            Value::Int64(n)
        }
        _ => return Err(internal("proto operation")),
    })
}
