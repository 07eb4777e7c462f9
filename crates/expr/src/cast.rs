//! CAST and assignment coercion.

use rowtree_types::{Type, Value};

use crate::Result;

/// `CAST(value AS to)`.
pub fn cast(value: Value, to: &Type) -> Result<Value> {
    let _ = (value, to);
    todo!()
}

/// Assignment coercion.
pub fn coerce_value(value: Value, to: &Type) -> Result<Value> {
    let _ = (value, to);
    todo!()
}
