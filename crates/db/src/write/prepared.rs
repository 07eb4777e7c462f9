//! Prepared writes: the key/value pairs a resolved commit stores.
//!
//! Most writes are final when the resolver produces them. A write that holds
//! [`PENDING_COMMIT_TIMESTAMP`] (in a key column or a value) cannot be
//! encoded until the commit pipeline has given the commit its timestamp, so
//! it waits as key levels and values and is encoded by
//! [`PreparedWrite::finish`], inside the pipeline, with the timestamp
//! substituted. In a cluster, such a row of a split another node leads is
//! sent there with the columns to set listed apart
//! ([`PreparedWrite::for_elsewhere`]), and that node's replicas set them at
//! the commit ([`stamp_row`]).

use std::borrow::Cow;

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

    /// The encoded key, if it is final: always, but for a write holding the
    /// commit timestamp in a key column (`Ok(None)`). Borrowed from a ready
    /// write; encoded for one waiting for the commit timestamp in a value.
    pub fn final_key(&self) -> Result<Option<Cow<'_, [u8]>>> {
        match self {
            PreparedWrite::Ready(k, _) => Ok(Some(Cow::Borrowed(k))),
            PreparedWrite::Pending { key, .. } if key.iter().any(is_pending) => Ok(None),
            PreparedWrite::Pending { levels, key, .. } => {
                keys::encode_full(levels, key).map(|k| Some(Cow::Owned(k)))
            }
        }
    }

    /// The write as another node prepares it ([`rowtree_kv::ElsewhereWrite`]):
    /// the key, and the value with the commit timestamp's columns listed
    /// apart and set to the Unix epoch in the row, to be set to the commit
    /// timestamp by that node's replica when the transaction commits
    /// ([`stamp_row`]). `Ok(None)` when the key itself holds the commit
    /// timestamp: its split, and so the node, is unknown until the commit.
    pub fn for_elsewhere(self) -> Result<Option<rowtree_kv::ElsewhereWrite>> {
        match self {
            PreparedWrite::Ready(key, value) => Ok(Some(rowtree_kv::ElsewhereWrite {
                key,
                value,
                stamp: Vec::new(),
            })),
            PreparedWrite::Pending { key, .. } if key.iter().any(is_pending) => Ok(None),
            PreparedWrite::Pending { levels, key, value } => {
                let key = keys::encode_full(&levels, &key)?;
                let mut stamp = Vec::new();
                let value = value
                    .map(|cols| {
                        let cols: Vec<(u32, Value)> = cols
                            .into_iter()
                            .map(|(id, v)| {
                                if is_pending(&v) {
                                    stamp.push(id);
                                    (id, Value::Timestamp(Timestamp::UNIX_EPOCH))
                                } else {
                                    (id, v)
                                }
                            })
                            .collect();
                        encode_row(cols.iter().map(|(id, v)| (*id, v)))
                    })
                    .transpose()?;
                Ok(Some(rowtree_kv::ElsewhereWrite { key, value, stamp }))
            }
        }
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

/// The stored row `row` with its columns `columns` set to the commit
/// timestamp `ts` (nanoseconds since the Unix epoch): how a node that
/// prepared another node's write of `PENDING_COMMIT_TIMESTAMP()` finishes
/// it at the commit (the writing node listed the columns apart and put a
/// stand-in in the row). Needs no schema.
pub fn stamp_row(row: &[u8], columns: &[u32], ts: u64) -> Result<Vec<u8>> {
    let stamp = Timestamp::from_nanos(ts as i128)
        .ok_or_else(|| Error::internal("commit timestamp out of range"))?;
    let mut cols = rowtree_encoding::decode_row(row)?;
    for (id, value) in &mut cols {
        if columns.contains(id) {
            *value = Value::Timestamp(stamp);
        }
    }
    Ok(encode_row(cols.iter().map(|(id, v)| (*id, v)))?)
}
