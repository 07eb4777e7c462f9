//! YCSB's core workloads: which operations a client issues, on which keys.
//!
//! The data is YCSB's `usertable`: a string key and ten 100-byte fields, so
//! a record is about 1 KB. Keys are `user` followed by a 64-bit FNV-1a hash
//! of the record number (YCSB's "hashed" insert order), so record numbers
//! that are close are far apart in key order and a load spreads over the
//! whole key space; the monotonic insert workload uses the record number
//! itself, zero-padded, so that every insert lands at the end of the table.
//!
//! | workload | operations | keys chosen |
//! |---|---|---|
//! | A | 50% read, 50% update | zipfian |
//! | B | 95% read, 5% update | zipfian |
//! | C | 100% read | zipfian |
//! | D | 95% read, 5% insert | the latest records most often |
//! | E | 95% scan of 1..=100 records, 5% insert | zipfian start key |
//! | F | 50% read, 50% read-modify-write | zipfian |
//! | insert-monotonic | 100% insert, increasing keys | - |
//! | insert-random | 100% insert, hashed keys | - |
//!
//! "Zipfian" is YCSB's scrambled zipfian with constant 0.99: a few records
//! are very popular, and which ones is scattered over the key space by a
//! hash. The generator follows the method of Gray et al., "Quickly
//! generating billion-record synthetic databases" (SIGMOD 1994), which
//! draws a zipfian rank in constant time after computing the harmonic
//! number zeta(n) once.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use rand::Rng;

/// Fields per record.
pub const FIELDS: usize = 10;
/// Bytes per field.
pub const FIELD_BYTES: usize = 100;
/// Longest scan of workload E.
pub const MAX_SCAN: usize = 100;
/// YCSB's zipfian constant.
pub const ZIPF_THETA: f64 = 0.99;

/// One of the workloads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Workload {
    A,
    B,
    C,
    D,
    E,
    F,
    InsertMonotonic,
    InsertRandom,
}

impl Workload {
    /// Every workload, in the order the matrix runs them.
    pub const ALL: [Workload; 8] = [
        Workload::A,
        Workload::B,
        Workload::C,
        Workload::D,
        Workload::E,
        Workload::F,
        Workload::InsertMonotonic,
        Workload::InsertRandom,
    ];

    /// The name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Workload::A => "a",
            Workload::B => "b",
            Workload::C => "c",
            Workload::D => "d",
            Workload::E => "e",
            Workload::F => "f",
            Workload::InsertMonotonic => "insert-monotonic",
            Workload::InsertRandom => "insert-random",
        }
    }

    /// What the workload does, for reports.
    pub fn describe(self) -> &'static str {
        match self {
            Workload::A => "50% read, 50% update (zipfian)",
            Workload::B => "95% read, 5% update (zipfian)",
            Workload::C => "100% read (zipfian)",
            Workload::D => "95% read of the latest, 5% insert",
            Workload::E => "95% scan of 1-100 rows, 5% insert",
            Workload::F => "50% read, 50% read-modify-write (zipfian)",
            Workload::InsertMonotonic => "100% insert, increasing keys",
            Workload::InsertRandom => "100% insert, hashed keys",
        }
    }

    /// Parses [`Workload::name`] (case-insensitive).
    pub fn parse(s: &str) -> Option<Workload> {
        let s = s.to_ascii_lowercase();
        Workload::ALL.into_iter().find(|w| w.name() == s)
    }
}

/// One operation a client performs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// Read every field of one record.
    Read(String),
    /// Overwrite one field of one record.
    Update { key: String, field: usize },
    /// Insert a new record; `number` goes back to
    /// [`Keyspace::finished`] once the insert is done.
    Insert { key: String, number: u64 },
    /// Read up to `count` records in key order from `start`.
    Scan { start: String, count: usize },
    /// Read a record, then overwrite one field, in one transaction.
    ReadModifyWrite { key: String, field: usize },
}

/// The field columns, comma-separated, for the SQL systems' statements.
pub fn field_list() -> String {
    (0..FIELDS)
        .map(|f| format!("field{f}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// 64-bit FNV-1a of the record number's little-endian bytes.
pub fn fnv1a(n: u64) -> u64 {
    fnv1a_bytes(&n.to_le_bytes())
}

fn fnv1a_bytes(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The key of record `n` in hashed order (`user` + 20 decimal digits, so
/// that string order is numeric order of the hash).
pub fn hashed_key(n: u64) -> String {
    key_of_hash(fnv1a(n))
}

/// The key whose hash is `hash`: sorting hashes sorts their keys.
pub fn key_of_hash(hash: u64) -> String {
    format!("user{hash:020}")
}

/// The key of record `n` in insertion order.
pub fn ordered_key(n: u64) -> String {
    format!("user{n:020}")
}

/// The value of field `field` of a record, `version` times written: 100
/// printable bytes derived from the three, so a reader can tell a field
/// from garbage.
pub fn field_value(key: &str, field: usize, version: u64) -> String {
    let seed = fnv1a_bytes(key.as_bytes()) ^ fnv1a(((field as u64) << 48) ^ version);
    let mut s = String::with_capacity(FIELD_BYTES);
    let mut x = seed;
    while s.len() < FIELD_BYTES {
        s.push((b'a' + (x % 26) as u8) as char);
        x = x.rotate_left(5) ^ 0x9e37_79b9_7f4a_7c15;
    }
    s
}

/// Draws zipfian ranks in `0..n` (0 the most popular).
#[derive(Debug, Clone)]
pub struct Zipfian {
    n: u64,
    alpha: f64,
    zeta_n: f64,
    eta: f64,
    half_pow_theta: f64,
}

impl Zipfian {
    /// Ranks over `n` items with YCSB's constant. Computing zeta(n) costs
    /// n powers: about 20 ms for a million items.
    pub fn new(n: u64) -> Zipfian {
        let n = n.max(1);
        let theta = ZIPF_THETA;
        let zeta = |count: u64| {
            (1..=count)
                .map(|i| 1.0 / (i as f64).powf(theta))
                .sum::<f64>()
        };
        let zeta_n = zeta(n);
        let zeta_2 = zeta(2.min(n));
        let eta = if n <= 2 {
            0.0
        } else {
            (1.0 - (2.0 / n as f64).powf(1.0 - theta)) / (1.0 - zeta_2 / zeta_n)
        };
        Zipfian {
            n,
            alpha: 1.0 / (1.0 - theta),
            zeta_n,
            eta,
            half_pow_theta: 0.5f64.powf(theta),
        }
    }

    /// The number of items.
    pub fn items(&self) -> u64 {
        self.n
    }

    /// One rank.
    pub fn next(&self, rng: &mut impl Rng) -> u64 {
        let u: f64 = rng.gen();
        let uz = u * self.zeta_n;
        if uz < 1.0 {
            return 0;
        }
        if uz < 1.0 + self.half_pow_theta || self.n <= 2 {
            return 1.min(self.n - 1);
        }
        let rank = (self.n as f64 * (self.eta * u - self.eta + 1.0).powf(self.alpha)) as u64;
        rank.min(self.n - 1)
    }

    /// A rank scrambled over `0..n` by a hash: the popular items are
    /// spread over the key space instead of being the first ones.
    pub fn next_scrambled(&self, rng: &mut impl Rng) -> u64 {
        fnv1a(self.next(rng)) % self.n
    }
}

/// One system's key space over a matrix run: the records loaded, the
/// counter new records take their numbers from, and which inserted records
/// are known to be committed.
#[derive(Debug)]
pub struct Keyspace {
    /// Records loaded before the run (numbers `0..loaded`).
    pub loaded: u64,
    /// Added to the number of an inserted record before it becomes a key,
    /// so that two systems sharing one database never insert the same key.
    base: u64,
    next: AtomicU64,
    /// Every number below `committed.0` has been inserted (or its insert
    /// failed); numbers that finished out of order wait in `committed.1`.
    committed: Mutex<(u64, BTreeSet<u64>)>,
    zipf: Zipfian,
}

impl Keyspace {
    /// The key space of the `system`-th system of a run, over `loaded`
    /// records.
    pub fn new(loaded: u64, system: usize) -> Keyspace {
        Keyspace {
            loaded,
            base: (system as u64) << 40,
            next: AtomicU64::new(loaded),
            committed: Mutex::new((loaded, BTreeSet::new())),
            zipf: Zipfian::new(loaded),
        }
    }

    /// The key of record `n` in hashed order.
    fn key(&self, n: u64) -> String {
        if n < self.loaded {
            hashed_key(n)
        } else {
            hashed_key(n + self.base)
        }
    }

    /// Records an insert as finished (committed or failed), so that reads
    /// of the latest records may pick it.
    pub fn finished(&self, number: u64) {
        let mut c = self.committed.lock().expect("keyspace lock");
        if number == c.0 {
            c.0 += 1;
            loop {
                let next = c.0;
                if !c.1.remove(&next) {
                    break;
                }
                c.0 += 1;
            }
        } else if number > c.0 {
            c.1.insert(number);
        }
    }

    /// The next operation of `workload`.
    pub fn next_op(&self, workload: Workload, rng: &mut impl Rng) -> Op {
        let field = rng.gen_range(0..FIELDS);
        let p: f64 = rng.gen();
        let zipf_key = |rng: &mut _| hashed_key(self.zipf.next_scrambled(rng));
        match workload {
            Workload::A | Workload::B => {
                let update = if workload == Workload::A { 0.5 } else { 0.05 };
                let key = zipf_key(rng);
                if p < update {
                    Op::Update { key, field }
                } else {
                    Op::Read(key)
                }
            }
            Workload::C => Op::Read(zipf_key(rng)),
            Workload::D => {
                if p < 0.05 {
                    self.new_record(false)
                } else {
                    // The latest committed record is the most popular one.
                    let below = self.committed.lock().expect("keyspace lock").0;
                    let back = self.zipf.next(rng);
                    Op::Read(self.key(below.saturating_sub(1 + back)))
                }
            }
            Workload::E => {
                if p < 0.05 {
                    self.new_record(false)
                } else {
                    Op::Scan {
                        start: zipf_key(rng),
                        count: rng.gen_range(1..=MAX_SCAN),
                    }
                }
            }
            Workload::F => {
                let key = zipf_key(rng);
                if p < 0.5 {
                    Op::ReadModifyWrite { key, field }
                } else {
                    Op::Read(key)
                }
            }
            Workload::InsertMonotonic => self.new_record(true),
            Workload::InsertRandom => self.new_record(false),
        }
    }

    fn new_record(&self, ordered: bool) -> Op {
        let number = self.next.fetch_add(1, Ordering::Relaxed);
        let key = if ordered {
            ordered_key(number + self.base)
        } else {
            self.key(number)
        };
        Op::Insert { key, number }
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;

    #[test]
    fn zipfian_favours_low_ranks_and_stays_in_range() {
        let z = Zipfian::new(1000);
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        let mut counts = vec![0u32; 1000];
        for _ in 0..200_000 {
            counts[z.next(&mut rng) as usize] += 1;
        }
        // With theta 0.99 over 1000 items, rank 0 has about 1/zeta(1000) of
        // the mass (about 13%), rank 1 about half of that.
        let share0 = counts[0] as f64 / 200_000.0;
        assert!((0.10..0.17).contains(&share0), "rank 0 share {share0}");
        assert!(counts[0] > counts[1] && counts[1] > counts[10]);
        assert!(
            counts[10] > counts[900],
            "{} vs {}",
            counts[10],
            counts[900]
        );
        let scrambled = z.next_scrambled(&mut rng);
        assert!(scrambled < 1000);
    }

    #[test]
    fn keys_sort_by_hash_or_by_number() {
        assert_eq!(hashed_key(1).len(), 24);
        assert!(ordered_key(9) < ordered_key(10));
        assert_ne!(hashed_key(1), hashed_key(2));
        // Sorting the hashes sorts the keys (the SQLite loader relies on it).
        let mut hashes: Vec<u64> = (0..1000).map(fnv1a).collect();
        hashes.sort_unstable();
        let keys: Vec<String> = hashes.into_iter().map(key_of_hash).collect();
        assert!(keys.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(key_of_hash(fnv1a(7)), hashed_key(7));
        assert_eq!(field_value("user1", 3, 0).len(), FIELD_BYTES);
        assert_ne!(field_value("user1", 3, 0), field_value("user1", 3, 1));
    }

    #[test]
    fn workload_mixes_match_their_definitions() {
        let ks = Keyspace::new(10_000, 0);
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        let mut updates = 0;
        for _ in 0..10_000 {
            if matches!(ks.next_op(Workload::B, &mut rng), Op::Update { .. }) {
                updates += 1;
            }
        }
        assert!((300..700).contains(&updates), "B updates {updates}");
        match ks.next_op(Workload::InsertMonotonic, &mut rng) {
            Op::Insert { key, number } => {
                assert_eq!(key, ordered_key(10_000));
                assert_eq!(number, 10_000);
            }
            other => panic!("{other:?}"),
        }
        for _ in 0..1000 {
            if let Op::Scan { count, .. } = ks.next_op(Workload::E, &mut rng) {
                assert!((1..=MAX_SCAN).contains(&count));
            }
        }
        assert_eq!(
            Workload::parse("Insert-Random"),
            Some(Workload::InsertRandom)
        );
    }

    #[test]
    fn reads_of_the_latest_wait_for_inserts_to_finish() {
        let ks = Keyspace::new(100, 1);
        let mut rng = rand::rngs::StdRng::seed_from_u64(3);
        let numbers: Vec<u64> = (0..3)
            .map(|_| match ks.next_op(Workload::InsertRandom, &mut rng) {
                Op::Insert { number, key } => {
                    assert_eq!(key, hashed_key(number + (1 << 40)));
                    number
                }
                other => panic!("{other:?}"),
            })
            .collect();
        // 101 and 102 finish before 100: none is readable yet.
        ks.finished(numbers[1]);
        ks.finished(numbers[2]);
        assert_eq!(ks.committed.lock().unwrap().0, 100);
        ks.finished(numbers[0]);
        assert_eq!(ks.committed.lock().unwrap().0, 103);
        // The most popular read of the latest is record 102.
        let mut latest = 0;
        for _ in 0..1000 {
            if let Op::Read(k) = ks.next_op(Workload::D, &mut rng) {
                if k == ks.key(102) {
                    latest += 1;
                }
            }
        }
        assert!(latest > 50, "the latest record read {latest} times in 1000");
    }
}
