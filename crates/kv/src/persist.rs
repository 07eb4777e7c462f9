//! [`SplitsRecord`]: the durable form of the split map.
//!
//! The split map is a serving structure: which node serves which key range,
//! and where the ranges are cut. None of it decides what a read returns, so
//! losing it loses no data; but its boundaries are work (load splits took
//! minutes of hot traffic to find, manual split points were asked for), so a
//! database keeps them across a restart, as Spanner keeps its splits.
//!
//! A record holds everything of the map that is state rather than a cache:
//!
//! * every split's id, key range, node and creation time (load counters and
//!   key samples are not kept: they describe the last minute, and start
//!   again from zero);
//! * the next split id, so ids handed out after a reopen never repeat one
//!   the load history (or anyone else) remembers;
//! * the split manager's live manual split points with their expiry, and the
//!   boundaries it may merge away (the ones it made itself, and expired
//!   manual points): without them a reopened manager would treat every
//!   boundary as permanent.
//!
//! The record is written whole, as one value (the caller writes it with one
//! atomic batch), so a crash leaves the old record or the new one, never a
//! mix. It is JSON with a `version` field ([`SPLITS_RECORD_VERSION`]); keys
//! are lowercase hex. [`SplitsRecord::from_bytes`] refuses another version
//! and anything that is not a valid map ([`SplitsRecord::validate`]): the
//! splits, in order, must cover the key space exactly once.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// The encoding version of a [`SplitsRecord`] this build writes and reads.
pub const SPLITS_RECORD_VERSION: u32 = 1;

/// One split of a [`SplitsRecord`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SplitRecord {
    /// The split's id.
    pub id: u64,
    /// First key (inclusive), hex.
    #[serde(with = "hex_key")]
    pub start: Vec<u8>,
    /// First key after the split (exclusive), hex; `None` for the last split.
    #[serde(with = "hex_opt_key")]
    pub limit: Option<Vec<u8>>,
    /// The node serving it.
    pub node: u32,
    /// When it was created (nanoseconds since the epoch).
    pub created_at: u64,
}

/// A live manual split point: a boundary kept until `expires_at`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManualPoint {
    /// The boundary, hex.
    #[serde(with = "hex_key")]
    pub key: Vec<u8>,
    /// Until when it is never merged away (nanoseconds since the epoch).
    pub expires_at: u64,
}

/// The split map and the split manager's boundary state, as stored. See the
/// module docs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SplitsRecord {
    /// The encoding version ([`SPLITS_RECORD_VERSION`]).
    pub version: u32,
    /// The id the next new split gets.
    pub next_id: u64,
    /// The splits in key order.
    pub splits: Vec<SplitRecord>,
    /// Live manual split points, in key order.
    pub manual: Vec<ManualPoint>,
    /// Boundaries the split manager may merge away, in key order (hex).
    #[serde(with = "hex_keys")]
    pub mergeable: Vec<Vec<u8>>,
}

/// Just the version, read before the rest so another version is reported
/// as such rather than as whatever field it lacks.
#[derive(Deserialize)]
struct Version {
    version: u32,
}

impl SplitsRecord {
    /// One split `first_id` on node 0 covering the whole key space: the map
    /// of a new database whose ids start at `first_id`.
    pub fn whole(first_id: u64, created_at: u64) -> SplitsRecord {
        SplitsRecord {
            version: SPLITS_RECORD_VERSION,
            next_id: first_id + 1,
            splits: vec![SplitRecord {
                id: first_id,
                start: Vec::new(),
                limit: None,
                node: 0,
                created_at,
            }],
            manual: Vec::new(),
            mergeable: Vec::new(),
        }
    }

    /// The record as JSON.
    pub fn to_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("a splits record serialises")
    }

    /// Decodes [`SplitsRecord::to_bytes`] and validates it: an unknown
    /// version, bytes that do not decode, and a record that is not a valid
    /// map are all [`Error::CorruptSplitMap`].
    pub fn from_bytes(b: &[u8]) -> Result<SplitsRecord> {
        let corrupt = |e: serde_json::Error| Error::CorruptSplitMap(e.to_string());
        let Version { version } = serde_json::from_slice(b).map_err(corrupt)?;
        if version != SPLITS_RECORD_VERSION {
            return Err(Error::CorruptSplitMap(format!(
                "encoding version {version}, this build reads {SPLITS_RECORD_VERSION}"
            )));
        }
        let record: SplitsRecord = serde_json::from_slice(b).map_err(corrupt)?;
        record.validate()?;
        Ok(record)
    }

    /// Checks that the record is a valid map: at least one split; the first
    /// starts at the empty key; each split's limit is the next one's start
    /// and lies after its own start; only the last has no limit; ids are
    /// unique and below `next_id`; manual points and mergeable boundaries
    /// are sorted, unique, and boundaries of the map.
    pub fn validate(&self) -> Result<()> {
        let bad = |what: String| Err(Error::CorruptSplitMap(what));
        let Some(first) = self.splits.first() else {
            return bad("no splits".into());
        };
        if !first.start.is_empty() {
            return bad("the first split does not start at the empty key".into());
        }
        let mut ids = HashSet::with_capacity(self.splits.len());
        for (i, split) in self.splits.iter().enumerate() {
            if !ids.insert(split.id) {
                return bad(format!("split id {} appears twice", split.id));
            }
            if split.id >= self.next_id {
                return bad(format!(
                    "split id {} is not below the next id {}",
                    split.id, self.next_id
                ));
            }
            let next = self.splits.get(i + 1);
            match (&split.limit, next) {
                (None, None) => {}
                (None, Some(_)) => {
                    return bad(format!(
                        "split {} has no limit but is not the last",
                        split.id
                    ))
                }
                (Some(_), None) => {
                    return bad(format!(
                        "the last split {} has a limit: the key space is not covered",
                        split.id
                    ))
                }
                (Some(limit), Some(next)) => {
                    if *limit <= split.start {
                        return bad(format!("split {} ends before it starts", split.id));
                    }
                    if *limit != next.start {
                        return bad(format!(
                            "split {} does not end where split {} starts (gap or overlap)",
                            split.id, next.id
                        ));
                    }
                }
            }
        }
        let is_boundary = |key: &[u8]| {
            !key.is_empty()
                && self
                    .splits
                    .binary_search_by(|s| s.start.as_slice().cmp(key))
                    .is_ok()
        };
        let manual = self.manual.iter().map(|m| &m.key);
        for (what, keys) in [
            ("manual split point", manual.collect::<Vec<_>>()),
            ("mergeable boundary", self.mergeable.iter().collect()),
        ] {
            if keys.windows(2).any(|w| w[0] >= w[1]) {
                return bad(format!("{what}s are not sorted and unique"));
            }
            if let Some(k) = keys.iter().find(|k| !is_boundary(k)) {
                return bad(format!("{what} {} is not a split boundary", hex(k)));
            }
        }
        Ok(())
    }
}

fn hex(key: &[u8]) -> String {
    key.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> std::result::Result<Vec<u8>, String> {
    let digit = |c: u8| match c {
        b'0'..=b'9' => Ok(c - b'0'),
        b'a'..=b'f' => Ok(c - b'a' + 10),
        _ => Err(format!("{:?} is not a lowercase hex digit", c as char)),
    };
    let bytes = text.as_bytes();
    if !bytes.len().is_multiple_of(2) {
        return Err("odd number of hex digits".into());
    }
    bytes
        .chunks(2)
        .map(|pair| Ok(digit(pair[0])? << 4 | digit(pair[1])?))
        .collect()
}

mod hex_key {
    use serde::{de::Error, Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(key: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&super::hex(key))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        super::unhex(&String::deserialize(d)?).map_err(D::Error::custom)
    }
}

mod hex_opt_key {
    use serde::{de::Error, Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(key: &Option<Vec<u8>>, s: S) -> Result<S::Ok, S::Error> {
        match key {
            Some(k) => s.serialize_some(&super::hex(k)),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<u8>>, D::Error> {
        Option::<String>::deserialize(d)?
            .map(|t| super::unhex(&t).map_err(D::Error::custom))
            .transpose()
    }
}

mod hex_keys {
    use serde::{de::Error, ser::SerializeSeq, Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(keys: &[Vec<u8>], s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(keys.len()))?;
        for k in keys {
            seq.serialize_element(&super::hex(k))?;
        }
        seq.end()
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Vec<u8>>, D::Error> {
        Vec::<String>::deserialize(d)?
            .iter()
            .map(|t| super::unhex(t).map_err(D::Error::custom))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(id: u64, start: &[u8], limit: Option<&[u8]>, node: u32) -> SplitRecord {
        SplitRecord {
            id,
            start: start.to_vec(),
            limit: limit.map(<[u8]>::to_vec),
            node,
            created_at: 7,
        }
    }

    fn three() -> SplitsRecord {
        SplitsRecord {
            version: SPLITS_RECORD_VERSION,
            next_id: 10,
            splits: vec![
                split(4, b"", Some(b"c"), 0),
                split(8, b"c", Some(b"m\x00\xff"), 2),
                split(9, b"m\x00\xff", None, 1),
            ],
            manual: vec![ManualPoint {
                key: b"c".to_vec(),
                expires_at: 99,
            }],
            mergeable: vec![b"m\x00\xff".to_vec()],
        }
    }

    #[test]
    fn a_record_round_trips_with_hex_keys() {
        let record = three();
        let bytes = record.to_bytes();
        let text = String::from_utf8(bytes.clone()).unwrap();
        assert!(text.contains("\"start\":\"6d00ff\""), "{text}");
        assert!(text.starts_with("{\"version\":1,"), "{text}");
        assert_eq!(SplitsRecord::from_bytes(&bytes).unwrap(), record);
        let whole = SplitsRecord::whole(5, 1);
        assert_eq!(SplitsRecord::from_bytes(&whole.to_bytes()).unwrap(), whole);
    }

    fn rejected(record: &SplitsRecord, why: &str) {
        match SplitsRecord::from_bytes(&record.to_bytes()) {
            Err(Error::CorruptSplitMap(msg)) => assert!(msg.contains(why), "{msg} vs {why}"),
            other => panic!("accepted ({why}): {other:?}"),
        }
    }

    #[test]
    fn maps_that_do_not_cover_the_key_space_once_are_rejected() {
        let mut r = three();
        r.splits.pop();
        rejected(&r, "not covered");
        let mut r = three();
        r.splits.remove(0);
        rejected(&r, "empty key");
        let mut r = three();
        r.splits.remove(1);
        rejected(&r, "gap or overlap");
        let mut r = three();
        r.splits[1].start = b"b".to_vec();
        rejected(&r, "gap or overlap");
        let mut r = three();
        r.splits[1].limit = None;
        rejected(&r, "no limit but is not the last");
        let mut r = three();
        r.splits.swap(1, 2);
        rejected(&r, "gap or overlap");
        let mut r = three();
        r.splits[1].limit = Some(b"c".to_vec());
        r.splits[2].start = b"c".to_vec();
        rejected(&r, "ends before it starts");
        let mut r = three();
        r.splits.clear();
        rejected(&r, "no splits");
        let mut r = three();
        r.splits[2].id = 4;
        rejected(&r, "appears twice");
        let mut r = three();
        r.next_id = 9;
        rejected(&r, "next id");
        let mut r = three();
        r.manual[0].key = b"d".to_vec();
        rejected(&r, "not a split boundary");
        let mut r = three();
        r.mergeable = vec![b"m\x00\xff".to_vec(), b"c".to_vec()];
        rejected(&r, "not sorted");
    }

    #[test]
    fn corrupt_bytes_and_other_versions_are_rejected() {
        let bytes = three().to_bytes();
        for bad in [
            &bytes[..bytes.len() / 2],
            b"".as_slice(),
            b"{\"version\":1}",
            b"not json",
        ] {
            assert!(matches!(
                SplitsRecord::from_bytes(bad),
                Err(Error::CorruptSplitMap(_))
            ));
        }
        let odd = String::from_utf8(bytes.clone())
            .unwrap()
            .replace("6d00ff", "6d00f");
        assert!(SplitsRecord::from_bytes(odd.as_bytes()).is_err());
        let upper = String::from_utf8(bytes.clone())
            .unwrap()
            .replace("6d00ff", "6d00FF");
        assert!(SplitsRecord::from_bytes(upper.as_bytes()).is_err());
        let mut v2 = three();
        v2.version = 2;
        rejected(&v2, "encoding version 2");
    }
}
