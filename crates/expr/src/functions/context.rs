//! Functions that read the statement's [`EvalContext`] rather than their
//! arguments: the clock, random UUIDs, sequences and the commit timestamp
//! placeholder. None of them is deterministic (see
//! [`Volatility`](super::Volatility)), so the binder keeps them out of
//! places that must be (CHECK constraints, generated columns).

use rowtree_types::Value;

use super::args::internal;
use crate::{EvalContext, Result};

fn sequence_name(args: &[Value]) -> Result<&str> {
    match args.first() {
        Some(Value::String(name)) => Ok(name),
        _ => Err(internal("sequence function")),
    }
}

pub(super) fn eval_generate_uuid(_: &[Value], ctx: &mut dyn EvalContext) -> Result<Value> {
    Ok(Value::String(ctx.generate_uuid()))
}

pub(super) fn eval_new_uuid(_: &[Value], ctx: &mut dyn EvalContext) -> Result<Value> {
    Ok(Value::Uuid(ctx.new_uuid()))
}

pub(super) fn eval_current_timestamp(_: &[Value], ctx: &mut dyn EvalContext) -> Result<Value> {
    Ok(Value::Timestamp(ctx.now()))
}

pub(super) fn eval_pending_commit_timestamp(
    _: &[Value],
    ctx: &mut dyn EvalContext,
) -> Result<Value> {
    ctx.pending_commit_timestamp()
}

pub(super) fn eval_get_next_sequence_value(
    args: &[Value],
    ctx: &mut dyn EvalContext,
) -> Result<Value> {
    Ok(Value::Int64(ctx.next_sequence_value(sequence_name(args)?)?))
}

pub(super) fn eval_get_internal_sequence_state(
    args: &[Value],
    ctx: &mut dyn EvalContext,
) -> Result<Value> {
    Ok(match ctx.sequence_state(sequence_name(args)?)? {
        Some(v) => Value::Int64(v),
        None => Value::Null,
    })
}
