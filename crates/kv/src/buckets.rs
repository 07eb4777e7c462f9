//! [`KeyBuckets`]: where inside a split's key range one interval's load fell.
//!
//! A split's [`IntervalStat`](crate::IntervalStat) says how much load the
//! split served in a minute, but not where in its range: a split that takes
//! every insert of a timestamp-first table covers the whole table, while the
//! inserts of any one minute land in a thin slice at its end. The key
//! visualizer needs that slice to draw Spanner's bright diagonal, so every
//! interval row also carries a few *key buckets*: contiguous sub-ranges of
//! the split, in key order, each with the share of the split's load that
//! fell in it.
//!
//! The buckets come from a reservoir sample of the keys the split's
//! [`LoadTracker`](crate::LoadTracker) saw during the interval (see
//! [`LoadTracker::take_interval_buckets`](crate::LoadTracker::take_interval_buckets)):
//! the sampled keys, with the interval's smallest and largest key, cut the
//! range into buckets that each hold an equal number of samples (a key
//! sampled many times, a hot row, becomes a one-key bucket with a big
//! share). Rolling minutes up into 10-minute and hour rows merges their
//! buckets ([`KeyBuckets::merge`]) and cuts the result again into buckets
//! of about equal load.
//!
//! Everything is bounded: at most [`MAX_BUCKETS`] buckets per split and
//! interval, keys cut to [`MAX_BOUND_LEN`] bytes (a prefix still sorts where
//! the key does, near enough for a heatmap row), and the history caps the
//! keys of a whole interval (see [`LoadHistory`](crate::LoadHistory)).
//! Keys are serialised as hex strings, to keep the persisted history small.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The most buckets of one split in one interval.
pub const MAX_BUCKETS: usize = 8;

/// Bucket boundaries are cut to this many bytes.
pub const MAX_BOUND_LEN: usize = 48;

/// Contiguous sub-ranges of a split's key range with their share of one
/// interval's load. See the module docs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct KeyBuckets {
    /// `n + 1` strictly increasing keys: bucket `i` is `[bounds[i], bounds[i + 1])`.
    /// Empty when nothing is known (the load is then spread over the whole range).
    #[serde(with = "hex_keys", default, skip_serializing_if = "Vec::is_empty")]
    pub bounds: Vec<Vec<u8>>,
    /// `n` shares of the load, summing to 1.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shares: Vec<f32>,
}

impl KeyBuckets {
    /// No buckets.
    pub fn is_empty(&self) -> bool {
        self.shares.is_empty()
    }

    /// The number of buckets.
    pub fn len(&self) -> usize {
        self.shares.len()
    }

    /// Bucket `i` as (start, limit, share).
    pub fn bucket(&self, i: usize) -> (&[u8], &[u8], f32) {
        (&self.bounds[i], &self.bounds[i + 1], self.shares[i])
    }

    /// Buckets from keys sampled from an interval's accesses, `sorted`
    /// ascending (duplicates kept: each counts once), the interval's largest
    /// key `max`, inside the range `[start, limit)`. Each distinct key owns
    /// the range up to the next one (the last, up to just after `max`), with
    /// a share proportional to how often it was sampled; the result is cut
    /// to at most `max_buckets` buckets of about equal share.
    pub fn from_sample(
        sorted: &[&[u8]],
        max: &[u8],
        start: &[u8],
        limit: Option<&[u8]>,
        max_buckets: usize,
    ) -> KeyBuckets {
        if sorted.is_empty() {
            return KeyBuckets::default();
        }
        // Cut to MAX_BOUND_LEN, raised to the range's start.
        let clip = |k: &[u8]| -> Vec<u8> {
            let k = &k[..k.len().min(MAX_BOUND_LEN)];
            k.max(start).to_vec()
        };
        // Just after the largest key (a cut key: after every key with its
        // prefix), at most the range's limit.
        let after_max = if max.len() <= MAX_BOUND_LEN {
            let mut e = max.to_vec();
            e.push(0);
            Some(e)
        } else {
            prefix_successor(&max[..MAX_BOUND_LEN])
        };
        let end = match (after_max, limit) {
            (Some(e), Some(l)) if e.as_slice() > l => l.to_vec(),
            (Some(e), _) => e,
            (None, Some(l)) => l.to_vec(),
            (None, None) => vec![0xff; MAX_BOUND_LEN + 1],
        };
        let mut bounds: Vec<Vec<u8>> = Vec::new();
        let mut counts: Vec<f64> = Vec::new();
        for k in sorted {
            let k = clip(k);
            if k >= end {
                continue;
            }
            if bounds.last() == Some(&k) {
                *counts.last_mut().expect("a count per bound") += 1.0;
            } else if bounds.last().is_none_or(|b| *b < k) {
                bounds.push(k);
                counts.push(1.0);
            } else {
                // Out of order after clipping: count it where we are.
                *counts.last_mut().expect("a count per bound") += 1.0;
            }
        }
        if bounds.is_empty() {
            return KeyBuckets::default();
        }
        bounds.push(end);
        let total: f64 = counts.iter().sum();
        let b = KeyBuckets {
            bounds,
            shares: counts.iter().map(|c| (c / total) as f32).collect(),
        };
        KeyBuckets::merge(&[(1.0, &b)], max_buckets)
    }

    /// Merges buckets of the same range (minutes rolled up into 10 minutes,
    /// say), `parts` weighted by each one's load, into at most
    /// `max_buckets` buckets of about equal share. Where parts overlap, a
    /// bucket's share is spread evenly over the pieces the other parts' bounds
    /// cut it into. Parts without buckets are ignored.
    pub fn merge(parts: &[(f64, &KeyBuckets)], max_buckets: usize) -> KeyBuckets {
        let max_buckets = max_buckets.max(1);
        let mut edges: Vec<&[u8]> = parts
            .iter()
            .filter(|(w, b)| *w > 0.0 && !b.is_empty())
            .flat_map(|(_, b)| b.bounds.iter().map(Vec::as_slice))
            .collect();
        edges.sort_unstable();
        edges.dedup();
        if edges.len() < 2 {
            return KeyBuckets::default();
        }
        let index = |k: &[u8]| edges.binary_search(&k).expect("every bound is an edge");
        let mut weight = vec![0.0f64; edges.len() - 1];
        for (w, b) in parts {
            if *w <= 0.0 || b.is_empty() {
                continue;
            }
            for i in 0..b.len() {
                let (from, to, share) = b.bucket(i);
                let (lo, hi) = (index(from), index(to));
                if hi <= lo || share.is_nan() || share <= 0.0 {
                    continue;
                }
                let each = w * share as f64 / (hi - lo) as f64;
                for x in &mut weight[lo..hi] {
                    *x += each;
                }
            }
        }
        let total: f64 = weight.iter().sum();
        if total.is_nan() || total <= 0.0 {
            return KeyBuckets::default();
        }
        // Greedy cut at the equal-share quantiles.
        let mut bounds = vec![edges[0].to_vec()];
        let mut shares = Vec::new();
        let mut acc = 0.0;
        let mut group = 0.0;
        for (j, w) in weight.iter().enumerate() {
            // A range heavy enough to be a bucket of its own (a hot key)
            // starts one, so it is not blurred into its left neighbours.
            let share = total / max_buckets as f64;
            if group > 0.0 && *w >= share && shares.len() + 1 < max_buckets {
                bounds.push(edges[j].to_vec());
                shares.push((group / total) as f32);
                group = 0.0;
            }
            acc += w;
            group += w;
            let target = total * (shares.len() + 1) as f64 / max_buckets as f64;
            let last = j + 1 == weight.len();
            if last || (acc >= target * (1.0 - 1e-9) && shares.len() + 1 < max_buckets) {
                bounds.push(edges[j + 1].to_vec());
                shares.push((group / total) as f32);
                group = 0.0;
            }
        }
        KeyBuckets { bounds, shares }
    }

    /// The number of boundary keys held.
    pub fn keys(&self) -> usize {
        self.bounds.len()
    }
}

/// The smallest key greater than every key starting with `prefix` (`None`:
/// the prefix is all `0xff`).
fn prefix_successor(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut k = prefix.to_vec();
    while let Some(last) = k.pop() {
        if last < 0xff {
            k.push(last + 1);
            return Some(k);
        }
    }
    None
}

mod hex_keys {
    use super::*;

    pub fn serialize<S: Serializer>(keys: &[Vec<u8>], s: S) -> Result<S::Ok, S::Error> {
        let hex: Vec<String> = keys
            .iter()
            .map(|k| k.iter().map(|b| format!("{b:02x}")).collect())
            .collect();
        hex.serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Vec<u8>>, D::Error> {
        let hex: Vec<String> = Vec::deserialize(d)?;
        hex.iter()
            .map(|h| {
                if h.len() % 2 != 0 {
                    return Err(serde::de::Error::custom("odd hex length"));
                }
                (0..h.len())
                    .step_by(2)
                    .map(|i| {
                        u8::from_str_radix(&h[i..i + 2], 16)
                            .map_err(|_| serde::de::Error::custom("bad hex key"))
                    })
                    .collect()
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(b: &KeyBuckets) -> Vec<&[u8]> {
        b.bounds.iter().map(Vec::as_slice).collect()
    }

    #[test]
    fn sample_becomes_equal_share_buckets() {
        let sample: Vec<&[u8]> = vec![b"b", b"d", b"f", b"h"];
        let b = KeyBuckets::from_sample(&sample, b"i", b"a", Some(b"z"), 16);
        assert_eq!(keys(&b), vec![&b"b"[..], b"d", b"f", b"h", b"i\0"]);
        assert!(b.shares.iter().all(|s| (s - 0.25).abs() < 1e-6), "{b:?}");
        // At most two buckets: halves.
        let b = KeyBuckets::from_sample(&sample, b"i", b"a", Some(b"z"), 2);
        assert_eq!(keys(&b), vec![&b"b"[..], b"f", b"i\0"]);
    }

    #[test]
    fn a_hot_key_is_a_bucket_of_its_own() {
        let sample: Vec<&[u8]> = vec![b"b", b"k", b"k", b"k", b"k", b"k", b"k", b"x"];
        let b = KeyBuckets::from_sample(&sample, b"x", b"", None, 16);
        let i = b.bounds.iter().position(|k| k == b"k").unwrap();
        assert_eq!(b.bounds[i + 1], b"x");
        assert!((b.shares[i] - 0.75).abs() < 1e-6, "{b:?}");
    }

    #[test]
    fn keys_are_clipped_to_the_range_and_cut() {
        let long = vec![b'q'; 100];
        let sample: Vec<&[u8]> = vec![b"a", &long];
        let b = KeyBuckets::from_sample(&sample, &long, b"c", Some(b"s"), 16);
        assert_eq!(b.bounds[0], b"c");
        assert!(b.bounds.iter().all(|k| k.len() <= MAX_BOUND_LEN + 1));
        assert!(b.bounds.last().unwrap().as_slice() <= &b"s"[..]);
        assert!(b.bounds.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn merge_weights_parts_and_serialises_as_hex() {
        let a = KeyBuckets::from_sample(&[b"a"], b"a", b"", None, 16);
        let c = KeyBuckets::from_sample(&[b"c"], b"c", b"", None, 16);
        let m = KeyBuckets::merge(&[(3.0, &a), (1.0, &c)], 16);
        assert_eq!(keys(&m), vec![&b"a"[..], b"a\0", b"c", b"c\0"]);
        assert_eq!(m.shares, vec![0.75, 0.0, 0.25]);
        let json = serde_json::to_string(&m).unwrap();
        assert!(json.contains("\"61\""), "{json}");
        assert_eq!(serde_json::from_str::<KeyBuckets>(&json).unwrap(), m);
        assert_eq!(serde_json::to_string(&KeyBuckets::default()).unwrap(), "{}");
    }
}
