//! SQL ordering of values.

use std::cmp::Ordering;

use rowtree_types::Value;

/// SQL ordering.
pub fn compare(a: &Value, b: &Value) -> Option<Ordering> {
    let _ = (a, b);
    todo!()
}
