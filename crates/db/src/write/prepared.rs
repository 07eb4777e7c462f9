//! Prepared writes: the key/value pairs a resolved commit stores.
//!
//! Most writes are final when the resolver produces them. A write that holds
//! [`PENDING_COMMIT_TIMESTAMP`] (in a key column or a value) cannot be
//! encoded until the commit pipeline has given the commit its timestamp, so
//! it waits as key levels and values and is encoded by
//! [`PreparedWrite::finish`], inside the pipeline, with the timestamp
//! substituted.

use rowtree_encoding::encode_row;
use rowtree_types::{Timestamp, Value};

use super::PENDING_COMMIT_TIMESTAMP;
use crate::error::{Error, Result};
use crate::keys::{self, Level};

/// One key/value write, ready or waiting for the commit timestamp.
#[derive(Debug, Clone)]
pub(crate) enum PreparedWrite {
    Ready(Vec<u8>, Option<Vec<u8>>),
    /// Holds [`PENDING_COMMIT_TIMESTAMP`] in its key or value.
    Pending {
        levels: Vec<Level>,
        key: Vec<Value>,
        value: Option<Vec<(u32, Value)>>,
    },
}

impl PreparedWrite {
    /// The bytes to store once the commit timestamp is known.
    pub fn finish(self, ts: u64) -> Result<(Vec<u8>, Option<Vec<u8>>)> {
        match self {
            PreparedWrite::Ready(k, v) => Ok((k, v)),
            PreparedWrite::Pending { levels, key, value } => {
                let stamp = Timestamp::from_nanos(ts as i128)
                    .ok_or_else(|| Error::internal("commit timestamp out of range"))?;
                let fix = |v: Value| match v {
                    Value::Timestamp(t) if t == PENDING_COMMIT_TIMESTAMP => Value::Timestamp(stamp),
                    other => other,
                };
                let key: Vec<Value> = key.into_iter().map(fix).collect();
                let k = keys::encode_full(&levels, &key)?;
                let v = value
                    .map(|cols| {
                        let cols: Vec<(u32, Value)> =
                            cols.into_iter().map(|(id, v)| (id, fix(v))).collect();
                        encode_row(cols.iter().map(|(id, v)| (*id, v)))
                    })
                    .transpose()?;
                Ok((k, v))
            }
        }
    }

    /// Whether the write waits for the commit timestamp.
    pub fn is_pending(&self) -> bool {
        matches!(self, PreparedWrite::Pending { .. })
    }

    /// The key and value for split accounting (a write whose key waits for
    /// the commit timestamp is charged where its prefix routes).
    pub fn for_accounting(&self) -> (&[u8], Option<&[u8]>) {
        match self {
            PreparedWrite::Ready(k, v) => (k, v.as_deref()),
            PreparedWrite::Pending { levels, .. } => (
                levels.first().map_or(&[][..], |l| l.prefix.as_slice()),
                None,
            ),
        }
    }
}

/// Whether `v` is the pending commit timestamp.
pub(super) fn is_pending(v: &Value) -> bool {
    matches!(v, Value::Timestamp(t) if *t == PENDING_COMMIT_TIMESTAMP)
}

/// The write of `value` (`None`: a delete) at the key `key` of `levels`:
/// encoded now, or left pending when it holds the commit timestamp.
pub(super) fn prepare(
    levels: Vec<Level>,
    key: Vec<Value>,
    value: Option<Vec<(u32, Value)>>,
) -> Result<PreparedWrite> {
    let pending = key.iter().any(is_pending)
        || value
            .as_ref()
            .is_some_and(|v| v.iter().any(|(_, v)| is_pending(v)));
    if pending {
        return Ok(PreparedWrite::Pending { levels, key, value });
    }
    let k = keys::encode_full(&levels, &key)?;
    let v = value
        .map(|cols| encode_row(cols.iter().map(|(id, v)| (*id, v))))
        .transpose()?;
    Ok(PreparedWrite::Ready(k, v))
}
