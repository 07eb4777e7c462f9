//! Reads of key ranges this node holds no replica of: the router reads
//! those pieces from another node through its replication
//! ([`Replication::held_elsewhere`], [`Replication::read_elsewhere`]), and
//! the rows come back as if every key were held here.

use std::ops::Bound;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use proptest::prelude::*;
use rowtree_kv::{CommitGroup, KeySpan, RemoteBatch, RemoteRead, Replication, Router, SplitMap};
use rowtree_storage::{Durability, MemoryEngine, Mvcc};

fn key(i: u8) -> Vec<u8> {
    vec![i, 0]
}

fn value(i: u8) -> Vec<u8> {
    vec![i; 3]
}

/// A router over rows `0..100` at ts 10 (those for which `keep` holds), in
/// splits `[.., 25) [25, 50) [50, 75) [75, ..)`.
fn router_with(keep: impl Fn(u8) -> bool) -> Router {
    let splits = SplitMap::with_split_points([[25u8], [50], [75]]);
    let router = Router::new(Mvcc::new(Arc::new(MemoryEngine::new())), splits);
    let writes: Vec<(Vec<u8>, Option<Vec<u8>>)> = (0..100)
        .filter(|i| keep(*i))
        .map(|i| (key(i), Some(value(i))))
        .collect();
    router.commit(10, &writes, Durability::Buffered).unwrap();
    router
}

/// The other node: holds every row, and answers remote reads in batches no
/// larger than `batch_cap`, stopping at key 60 as a node whose replica
/// ends there would (the reader then resumes at 60).
struct OtherNode {
    full: Router,
    batch_cap: usize,
    calls: AtomicUsize,
}

impl OtherNode {
    fn serve(&self, read: &RemoteRead) -> RemoteBatch {
        self.calls.fetch_add(1, Ordering::Relaxed);
        let stop = key(60);
        // The part of the read up to the replica's edge at 60, in the
        // read's direction.
        let crosses = |lo: &Bound<Vec<u8>>, hi: &Bound<Vec<u8>>| {
            let above_lo = match lo {
                Bound::Included(k) => k.as_slice() < stop.as_slice(),
                Bound::Excluded(k) => k.as_slice() < stop.as_slice(),
                Bound::Unbounded => true,
            };
            let below_hi = match hi {
                Bound::Included(k) | Bound::Excluded(k) => k.as_slice() > stop.as_slice(),
                Bound::Unbounded => true,
            };
            above_lo && below_hi
        };
        let (start, end, edge) = if crosses(&read.start, &read.end) {
            if read.reverse {
                (
                    Bound::Included(stop.clone()),
                    read.end.clone(),
                    Some(Bound::Excluded(stop.clone())),
                )
            } else {
                (
                    read.start.clone(),
                    Bound::Excluded(stop.clone()),
                    Some(Bound::Included(stop.clone())),
                )
            }
        } else {
            (read.start.clone(), read.end.clone(), None)
        };
        let wanted = read.max_rows.min(self.batch_cap);
        let rows: Vec<_> = self
            .full
            .scan_bounds(
                start.as_ref().map(Vec::as_slice),
                end.as_ref().map(Vec::as_slice),
                read.ts,
                read.reverse,
            )
            .limit(wanted)
            .map(Result::unwrap)
            .collect();
        let resume = if rows.len() == wanted {
            rows.last().map(|(k, _)| Bound::Excluded(k.clone()))
        } else {
            edge
        };
        RemoteBatch { rows, resume }
    }
}

/// This node's replication: the keys in `spans` are held by the other node
/// (which, `lies`, answers every read with row 99 and nothing more).
struct Partial {
    spans: Vec<KeySpan>,
    other: Arc<OtherNode>,
    lies: bool,
}

impl Replication for Partial {
    fn replicate(&self, _group: CommitGroup) -> rowtree_kv::Result<()> {
        Ok(())
    }

    fn ready_to_commit(&self) -> rowtree_kv::Result<()> {
        Ok(())
    }

    fn check_read(&self, _ts: Option<u64>) -> rowtree_kv::Result<()> {
        Ok(())
    }

    fn held_elsewhere(&self, start: &[u8], end: Option<&[u8]>) -> Vec<KeySpan> {
        self.spans
            .iter()
            .filter(|(s, l)| {
                end.is_none_or(|e| s.as_slice() < e) && l.as_deref().is_none_or(|l| l > start)
            })
            .map(|(s, l)| {
                let s = s.as_slice().max(start).to_vec();
                let l = match (l.as_deref(), end) {
                    (Some(l), Some(e)) => Some(l.min(e).to_vec()),
                    (Some(l), None) => Some(l.to_vec()),
                    (None, e) => e.map(<[u8]>::to_vec),
                };
                (s, l)
            })
            .collect()
    }

    fn read_elsewhere(&self, read: &RemoteRead) -> rowtree_kv::Result<RemoteBatch> {
        if self.lies {
            return Ok(RemoteBatch {
                rows: vec![(key(99), value(99))],
                resume: None,
            });
        }
        Ok(self.other.serve(read))
    }
}

/// This node: rows outside `spans` only, the rest read from the other node.
fn partial(spans: Vec<(u8, Option<u8>)>, batch_cap: usize) -> (Router, Arc<OtherNode>) {
    let held_here = {
        let spans = spans.clone();
        move |i: u8| {
            !spans
                .iter()
                .any(|(s, l)| i >= *s && l.is_none_or(|l| i < l))
        }
    };
    let other = Arc::new(OtherNode {
        full: router_with(|_| true),
        batch_cap,
        calls: AtomicUsize::new(0),
    });
    let spans = spans
        .into_iter()
        .map(|(s, l)| (key(s), l.map(key)))
        .collect();
    let router = router_with(held_here).with_replication(Arc::new(Partial {
        spans,
        other: other.clone(),
        lies: false,
    }));
    (router, other)
}

fn bound(b: Option<(u8, bool)>) -> Bound<Vec<u8>> {
    match b {
        Some((i, true)) => Bound::Included(key(i)),
        Some((i, false)) => Bound::Excluded(key(i)),
        None => Bound::Unbounded,
    }
}

#[test]
fn a_scan_reads_the_pieces_held_elsewhere_from_the_other_node() {
    let (router, other) = partial(vec![(10, Some(30)), (55, Some(70)), (90, None)], 256);
    let rows: Vec<_> = router
        .scan_bounds(Bound::Unbounded, Bound::Unbounded, 10, false)
        .map(Result::unwrap)
        .collect();
    let expected: Vec<_> = (0..100).map(|i| (key(i), value(i))).collect();
    assert_eq!(rows, expected);
    assert!(other.calls.load(Ordering::Relaxed) >= 3);
    // Only the rows held here are charged here: 100 rows less the 20 + 15
    // + 10 read elsewhere.
    let read_here: u64 = router
        .stats_snapshot()
        .iter()
        .map(|s| s.counters.rows_read)
        .sum();
    assert_eq!(read_here, 55);
    let reversed: Vec<_> = router
        .scan_bounds(Bound::Unbounded, Bound::Unbounded, 10, true)
        .map(Result::unwrap)
        .collect();
    assert_eq!(reversed, expected.into_iter().rev().collect::<Vec<_>>());
    // Gets: a key held elsewhere, one held here, one absent.
    assert_eq!(router.get(&key(20), 10).unwrap(), Some(value(20)));
    assert_eq!(router.get(&key(40), 10).unwrap(), Some(value(40)));
    assert_eq!(router.get(&[95, 1], 10).unwrap(), None);
    // At a timestamp before the rows were written, nothing anywhere.
    assert_eq!(router.get(&key(20), 5).unwrap(), None);
    assert_eq!(router.scan(&[], None, 5, false).count(), 0);
}

#[test]
fn a_limited_scan_asks_the_other_node_for_no_more_than_it_wants() {
    let (router, other) = partial(vec![(0, None)], 256);
    let rows: Vec<_> = router
        .scan(&key(3), None, 10, false)
        .limit(2)
        .map(Result::unwrap)
        .collect();
    assert_eq!(rows, vec![(key(3), value(3)), (key(4), value(4))]);
    assert_eq!(other.calls.load(Ordering::Relaxed), 1);
}

/// A node answering with a row outside the range asked for is caught.
#[test]
fn rows_outside_the_range_asked_for_are_an_error() {
    let other = Arc::new(OtherNode {
        full: router_with(|_| true),
        batch_cap: 256,
        calls: AtomicUsize::new(0),
    });
    let router = router_with(|_| false).with_replication(Arc::new(Partial {
        spans: vec![(Vec::new(), None)],
        other,
        lies: true,
    }));
    let first = router.scan(&key(1), Some(&key(5)), 10, false).next();
    assert!(matches!(first, Some(Err(_))), "{first:?}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Wherever the spans held elsewhere lie, whatever the bounds, the
    /// direction, the limit and the other node's batch size, a scan reads
    /// exactly what a node holding every row reads.
    #[test]
    fn a_partly_held_scan_reads_what_a_whole_one_does(
        cuts in proptest::collection::btree_set(0u8..110, 0..6),
        open_end in any::<bool>(),
        start in proptest::option::of((0u8..105, any::<bool>())),
        end in proptest::option::of((0u8..105, any::<bool>())),
        reverse in any::<bool>(),
        limit in 1usize..120,
        batch_cap in 1usize..20,
    ) {
        // Alternate spans between consecutive cuts are held elsewhere.
        let cuts: Vec<u8> = cuts.into_iter().collect();
        let mut spans: Vec<(u8, Option<u8>)> =
            cuts.chunks(2).filter(|c| c.len() == 2).map(|c| (c[0], Some(c[1]))).collect();
        if open_end && cuts.len() % 2 == 1 {
            spans.push((*cuts.last().unwrap(), None));
        }
        let (router, _) = partial(spans, batch_cap);
        let whole = router_with(|_| true);
        let (start, end) = (bound(start), bound(end));
        let read = |r: &Router| -> Vec<_> {
            r.scan_bounds(
                start.as_ref().map(Vec::as_slice),
                end.as_ref().map(Vec::as_slice),
                10,
                reverse,
            )
            .limit(limit)
            .map(Result::unwrap)
            .collect()
        };
        prop_assert_eq!(read(&router), read(&whole));
        for i in [0u8, 17, 42, 60, 99] {
            prop_assert_eq!(router.get(&key(i), 10).unwrap(), whole.get(&key(i), 10).unwrap());
        }
    }
}
