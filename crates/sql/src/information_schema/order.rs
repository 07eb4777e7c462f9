//! Rows come in the order of each table's primary key, strings by bytes,
//! as Spanner stores them.

use std::cmp::Ordering;

use rowtree_types::Value;

use super::defs::Def;

pub(super) fn sort_by_key(def: &Def, rows: &mut [Vec<Value>]) {
    let key: Vec<usize> = def
        .key
        .iter()
        .filter_map(|k| def.columns.iter().position(|c| c.name == *k))
        .collect();
    rows.sort_by(|a, b| {
        key.iter()
            .map(|&i| compare(&a[i], &b[i]))
            .find(|o| o.is_ne())
            .unwrap_or(Ordering::Equal)
    });
}

/// Key order for the few value kinds these tables hold: NULL first, strings
/// by bytes.
pub(super) fn compare(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::Null, Value::Null) => Ordering::Equal,
        (Value::Null, _) => Ordering::Less,
        (_, Value::Null) => Ordering::Greater,
        (Value::String(x), Value::String(y)) => x.as_bytes().cmp(y.as_bytes()),
        (Value::Int64(x), Value::Int64(y)) => x.cmp(y),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        _ => Ordering::Equal,
    }
}
