//! Transactions that reach splits led by other nodes (design §6, step 2).
//!
//! A split's keys are locked only in the lock table of the node leading
//! it. A transaction run here (its session lives on the leader of the
//! database's first split) that touches a split led by another node
//! therefore asks that node, over the peer port (`node::participant`
//! serves the calls there):
//!
//! 1. **Lock.** Every lock it takes here is also taken, for the part of
//!    its keys led elsewhere ([`Replication::locked_elsewhere`](rowtree_kv::Replication::locked_elsewhere)), at the
//!    leader of each such split (`LockKeys`), which keeps it under a
//!    handle of the transaction's own priority, so wound-wait orders the
//!    transaction alike on every node. Its reads of those keys are served
//!    there too, at the latest, after the lock
//!    ([`SplitGroups::read_led`]). What it locked where is remembered
//!    here, by transaction ([`Spanning`]).
//! 2. **Prepare.** At commit, the writes to keys it locked elsewhere are
//!    sent to the node holding their locks (`PrepareKeys`), which checks
//!    that the locks are still the transaction's (not wounded, the
//!    split's leader the same, in the same term), marks them committing,
//!    and makes a `Prepare` entry in each split's log at a prepare
//!    timestamp above every read it served there; it answers once the
//!    entries are applied. This node then observes the highest prepare
//!    timestamp, so the commit timestamp its pipeline gives is above it.
//!    A participant that cannot prepare makes the transaction abort.
//! 3. **Decide.** The coordinator is the database's first split, which
//!    this node leads: the commit of the transaction's own writes goes
//!    through the usual two-phase commit among this node's groups, with
//!    the first split's `Decide { Commit }` as the commit point
//!    ([`SplitGroups::commit_elsewhere`]).
//! 4. **Resolve.** Once the client has its answer, in the background
//!    ([`SplitGroups::release_spanning`]), the recorded outcome is sent to
//!    every participant (`ResolveKeys`), which resolves its prepared
//!    entries and releases the transaction's locks, and the nodes where it
//!    only locked are told to release them (`ReleaseKeys`). The commit
//!    pipeline waits for no other node after the decision; a read at a
//!    participant at or above the prepare timestamp waits for the outcome.
//!
//! A transaction that ends without deciding (a failure between the
//! phases, a rollback after preparing) is aborted at the coordinator
//! first, then resolved. A participant whose transaction stays prepared
//! (this node died, or a message was lost) asks the first split's leader
//! for the outcome after a few seconds (`Settle`): a transaction that
//! leader is not committing is aborted then, the first decision being
//! final.
//!
//! A write of the commit timestamp into a row of a split led elsewhere is
//! prepared there as a template (`twophase::template`) and stamped when
//! the outcome is applied. Not carried across nodes: the commit timestamp
//! in a key column of such a row (its split is unknown until the commit;
//! the database refuses it).
//!
//! A refusal before the decision (a lock or read refused because a split
//! moved or has no leader) did nothing anywhere, and is answered as
//! `LedElsewhere`, so that a gateway does not wait for an outcome lookup.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rowtree_kv::{ElsewhereCommit, ElsewhereWrite, RemoteBatch, RemoteRead, TxnRef};

use super::{held_in, in_parallel, leader_name, Elsewhere, Refusal, SplitGroups, LOCALLY};
use crate::command::{Command, Write};
use crate::raft::GroupCommits;
use crate::twophase::{GlobalTxnId, Outcome, Prepare};

/// How many times a lock asks again where its split's leader moved.
const LOCK_ATTEMPTS: usize = 4;

/// How long a lock is waited for in all, asking again every few seconds
/// (the node holding it answers [`Refusal::Waiting`] meanwhile).
const LOCK_WAIT: Duration = Duration::from_secs(60);

/// What a transaction run here holds at other nodes.
#[derive(Debug, Default)]
pub(crate) struct Spanning {
    /// Keys locked elsewhere, and the node holding each lock.
    points: HashMap<Vec<u8>, u64>,
    /// Ranges locked elsewhere: start, end, node.
    ranges: Vec<(Vec<u8>, Option<Vec<u8>>, u64)>,
    /// Every node that granted the transaction a lock.
    locked_at: BTreeSet<u64>,
    /// Once prepared: the nodes that prepared writes, and whether each was
    /// told the outcome.
    prepared: BTreeMap<u64, bool>,
    /// Whether the prepares were sent (the transaction is in flight here
    /// until it is decided or released).
    preparing: bool,
}

impl Spanning {
    /// The node holding the lock of `key`, if it was locked elsewhere.
    fn node_of(&self, key: &[u8]) -> Option<u64> {
        if let Some(node) = self.points.get(key) {
            return Some(*node);
        }
        self.ranges
            .iter()
            .find(|(start, end, _)| {
                start.as_slice() <= key && end.as_deref().is_none_or(|e| key < e)
            })
            .map(|(_, _, node)| *node)
    }

    /// Every node that holds something of the transaction.
    fn nodes(&self) -> BTreeSet<u64> {
        self.points
            .values()
            .copied()
            .chain(self.ranges.iter().map(|(_, _, n)| *n))
            .chain(self.prepared.keys().copied())
            .collect()
    }
}

/// Where a part of the key space is led ([`SplitGroups::led_around`]).
struct Led {
    /// Its leader; `None`: this node.
    node: Option<u64>,
    start: Vec<u8>,
    limit: Option<Vec<u8>>,
}

/// The end of a key's one-key range.
fn key_end(key: &[u8]) -> Vec<u8> {
    [key, &[0]].concat()
}

impl SplitGroups {
    /// Where the part of the key space holding `key` (`before`: the keys
    /// just below it) is led, if not by this node, and that part's range
    /// (one split's): `(None, ..)` if this node serves it.
    fn led_around(&self, key: &[u8], before: bool) -> rowtree_kv::Result<Led> {
        if let Some(group) = self.held_around(key, before) {
            let d = group.descriptor();
            if group.serves() {
                return Ok(Led {
                    node: None,
                    start: d.start,
                    limit: d.limit,
                });
            }
            return match group.current_leader() {
                Some(node) if node != group.node_id() => Ok(Led {
                    node: Some(node),
                    start: d.start,
                    limit: d.limit,
                }),
                // Refused before anything was done for the key (so
                // `LedElsewhere`, as `From<Refusal>` says).
                _ => Err(rowtree_kv::Error::LedElsewhere(format!(
                    "{} is led by {}: retry",
                    group.split_id(),
                    leader_name(&group)
                ))),
            };
        }
        let elsewhere = self.elsewhere_or_err()?;
        let found = elsewhere.locate(key, before)?;
        match found.leader {
            Some(node) => Ok(Led {
                node: Some(node),
                start: found.start,
                limit: found.limit,
            }),
            None => {
                elsewhere.forget(key);
                Err(rowtree_kv::Error::LedElsewhere(format!(
                    "the split holding key {} has no known leader: retry",
                    crate::replica::hex(key)
                )))
            }
        }
    }

    /// [`SplitGroups::led_around`] the key `at`: its leader (`None`: this
    /// node) and how far the part led so reaches.
    fn led_at(&self, at: &[u8]) -> rowtree_kv::Result<(Option<u64>, Option<Vec<u8>>)> {
        let led = self.led_around(at, false)?;
        Ok((led.node, led.limit))
    }

    fn elsewhere_or_err(&self) -> rowtree_kv::Result<&Arc<dyn Elsewhere>> {
        self.elsewhere.get().ok_or_else(|| {
            rowtree_kv::Error::Replication(
                "this node cannot reach the nodes leading the other splits".into(),
            )
        })
    }

    /// [`Replication::locked_elsewhere`](rowtree_kv::Replication::locked_elsewhere): the parts of `[start, end)` in
    /// splits this node holds no replica of, or does not serve.
    pub(super) fn spans_locked_elsewhere(
        &self,
        start: &[u8],
        end: Option<&[u8]>,
    ) -> Vec<rowtree_kv::KeySpan> {
        if !self.spans_nodes() {
            return Vec::new();
        }
        let mut spans = self.gaps(start, end);
        for group in self.overlapping(start, end) {
            if !group.serves() {
                spans.push(super::reads::clip(&group, start, end));
            }
        }
        spans.sort();
        spans
    }

    /// Whether a transaction run here may reach splits led by other
    /// nodes: this node can call them, leads the database's first split,
    /// which decides such transactions, and is not serving another node's
    /// read. If not, what it does not lead is refused, as before remote
    /// locking.
    pub(super) fn spans_nodes(&self) -> bool {
        self.elsewhere.get().is_some()
            && !LOCALLY.with(std::cell::Cell::get)
            && self.groups.read()[0].serves()
    }

    /// [`Replication::written_elsewhere`](rowtree_kv::Replication::written_elsewhere).
    pub(super) fn is_written_elsewhere(&self, txn: TxnRef, key: &[u8]) -> bool {
        if let Some(spanning) = self.spanning.lock().get(&txn.id) {
            if spanning.node_of(key).is_some() {
                return true;
            }
        }
        !self
            .spans_locked_elsewhere(key, Some(&key_end(key)))
            .is_empty()
    }

    /// [`Replication::lock_elsewhere`](rowtree_kv::Replication::lock_elsewhere): the lock, taken at the node leading
    /// each part of the range (cut at split edges), and remembered.
    pub(super) fn lock_spanning(
        &self,
        txn: TxnRef,
        start: &[u8],
        end: Option<&[u8]>,
        point: bool,
        exclusive: bool,
    ) -> rowtree_kv::Result<()> {
        let elsewhere = self.elsewhere_or_err()?.clone();
        if point {
            let node = self.lock_piece(&*elsewhere, txn, start, None, true, exclusive)?;
            if let Some(node) = node {
                let mut spanning = self.spanning.lock();
                let spanning = spanning.entry(txn.id).or_default();
                spanning.points.insert(start.to_vec(), node);
                spanning.locked_at.insert(node);
            }
            return Ok(());
        }
        let mut at = start.to_vec();
        loop {
            if end.is_some_and(|e| at.as_slice() >= e) {
                return Ok(());
            }
            let (_, limit) = self.led_at(&at)?;
            let piece_end = match (limit, end) {
                (Some(l), Some(e)) => Some(l.min(e.to_vec())),
                (l, e) => l.or(e.map(<[u8]>::to_vec)),
            };
            let node = self.lock_piece(
                &*elsewhere,
                txn,
                &at,
                piece_end.as_deref(),
                false,
                exclusive,
            )?;
            if let Some(node) = node {
                let mut spanning = self.spanning.lock();
                let spanning = spanning.entry(txn.id).or_default();
                spanning.ranges.push((at.clone(), piece_end.clone(), node));
                spanning.locked_at.insert(node);
            }
            match piece_end {
                Some(next) => at = next,
                None => return Ok(()),
            }
        }
    }

    /// Locks one piece (inside one split) at its leader, asking again
    /// while the leader moves or the lock is waited for. `None`: this node
    /// serves the piece now (the caller's own lock covers it).
    fn lock_piece(
        &self,
        elsewhere: &dyn Elsewhere,
        txn: TxnRef,
        start: &[u8],
        end: Option<&[u8]>,
        point: bool,
        exclusive: bool,
    ) -> rowtree_kv::Result<Option<u64>> {
        let deadline = Instant::now() + LOCK_WAIT;
        let mut moved = 0;
        loop {
            let node = match self.led_at(start) {
                Ok((node, _)) => node,
                // The split has no leader this node knows of (an election
                // is under way): ask again shortly, then refuse, having
                // done nothing (see below).
                Err(rowtree_kv::Error::Replication(why) | rowtree_kv::Error::LedElsewhere(why)) => {
                    if moved + 1 < LOCK_ATTEMPTS {
                        moved += 1;
                        std::thread::sleep(Duration::from_millis(25 << moved));
                        continue;
                    }
                    return Err(rowtree_kv::Error::LedElsewhere(format!(
                        "a lock of the transaction, which did nothing, found no leader: {why}"
                    )));
                }
                Err(e) => return Err(e),
            };
            let Some(node) = node else {
                return Ok(None);
            };
            let holds = self
                .spanning
                .lock()
                .get(&txn.id)
                .is_some_and(|s| s.locked_at.contains(&node));
            match elsewhere.lock_at(node, txn, start, end, point, exclusive, holds) {
                Ok(()) => return Ok(Some(node)),
                Err(Refusal::Waiting) if Instant::now() < deadline => {}
                Err(Refusal::Moved(why)) if moved + 1 < LOCK_ATTEMPTS => {
                    moved += 1;
                    tracing::debug!(node, "a lock's split moved: {why}");
                    elsewhere.forget(start);
                    std::thread::sleep(Duration::from_millis(25 << moved));
                }
                // Nothing is decided before the locks are all taken: a
                // transaction refused a lock did nothing anywhere. Its
                // answer says so, so that a gateway neither takes it for a
                // lost answer (and looks its outcome up until the tag's
                // deadline) nor keeps the client waiting: a split still
                // moving is a refusal a single-use commit is sent again
                // after, and a lock call that failed aborts the
                // transaction.
                Err(Refusal::Moved(why)) => {
                    return Err(rowtree_kv::Error::LedElsewhere(format!(
                        "a lock of the transaction, which did nothing, was refused: {why}"
                    )))
                }
                Err(Refusal::Failed(why)) => {
                    return Err(rowtree_kv::Error::Aborted(format!(
                        "a lock at node {node} failed ({why}); retry the transaction"
                    )))
                }
                Err(refusal) => return Err(refusal.into()),
            }
        }
    }

    /// [`Replication::prepare_elsewhere`](rowtree_kv::Replication::prepare_elsewhere).
    pub(super) fn prepare_spanning(
        &self,
        txn: TxnRef,
        writes: Vec<ElsewhereWrite>,
    ) -> rowtree_kv::Result<u64> {
        let elsewhere = self.elsewhere_or_err()?.clone();
        let first = self.groups()[0].clone();
        if !first.serves() {
            return Err(rowtree_kv::Error::LedElsewhere(format!(
                "this node no longer leads the database's first split (led by {}), which \
                 decides transactions that span nodes: retry",
                leader_name(&first)
            )));
        }
        let mut by_node: BTreeMap<u64, Vec<ElsewhereWrite>> = BTreeMap::new();
        {
            let mut spanning = self.spanning.lock();
            let spanning = spanning.entry(txn.id).or_default();
            for w in writes {
                let Some(node) = spanning.node_of(&w.key) else {
                    return Err(rowtree_kv::Error::Aborted(format!(
                        "the key {} was locked where its split was led before; retry the \
                         transaction",
                        crate::replica::hex(&w.key)
                    )));
                };
                by_node.entry(node).or_default().push(w);
            }
            // A node where the transaction only read is asked too, with no
            // writes: it confirms the locks are still held.
            for node in &spanning.locked_at {
                by_node.entry(*node).or_default();
            }
            spanning.preparing = true;
        }
        // A node given a write of the commit timestamp gets every value as
        // a template (`twophase::template`), stamped there at the commit.
        let by_node: BTreeMap<u64, (Vec<Write>, bool)> = by_node
            .into_iter()
            .map(|(node, writes)| {
                let pending = writes.iter().any(|w| !w.stamp.is_empty());
                let writes = writes
                    .into_iter()
                    .map(|w| {
                        let value = match (w.value, pending) {
                            (Some(row), true) => Some(crate::twophase::template(&w.stamp, &row)),
                            (value, _) => value,
                        };
                        (w.key, value)
                    })
                    .collect();
                (node, (writes, pending))
            })
            .collect();
        let global = GlobalTxnId(txn.id);
        self.in_flight.lock().insert(global);
        let coordinator = first.split_id();
        let participants = vec![coordinator];
        let answers: Vec<(u64, Result<u64, Refusal>)> = std::thread::scope(|scope| {
            let handles: Vec<_> = by_node
                .iter()
                .map(|(node, (writes, pending))| {
                    let elsewhere = &elsewhere;
                    let participants = &participants;
                    let node = *node;
                    let pending = *pending;
                    scope.spawn(move || {
                        let answer = elsewhere.prepare_at(
                            node,
                            txn,
                            coordinator,
                            participants,
                            writes,
                            pending,
                        );
                        (node, answer)
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or((0, Err(Refusal::Failed("a prepare thread panicked".into()))))
                })
                .collect()
        });
        let mut highest = 0;
        let mut refused = None;
        {
            let mut spanning = self.spanning.lock();
            let spanning = spanning.entry(txn.id).or_default();
            for (node, answer) in answers {
                // A node that did not answer may still have prepared: it is
                // told the outcome as those that did.
                spanning.prepared.insert(node, false);
                match answer {
                    Ok(ts) => highest = highest.max(ts),
                    Err(refusal) => {
                        refused.get_or_insert((node, refusal));
                    }
                }
            }
        }
        if let Some((node, refusal)) = refused {
            // Nothing is decided: abort now, so that the participants that
            // prepared let go at once.
            self.abort_spanning(txn);
            return Err(match refusal {
                Refusal::Aborted(why) => {
                    rowtree_kv::Error::Aborted(format!("node {node} did not prepare: {why}"))
                }
                other => rowtree_kv::Error::Aborted(format!(
                    "node {node} did not prepare ({other}); retry the transaction"
                )),
            });
        }
        crate::failpoints::crash_point(crate::failpoints::AFTER_PREPARE);
        Ok(highest)
    }

    /// [`Replication::confirm_elsewhere`](rowtree_kv::Replication::confirm_elsewhere):
    /// every node that granted the transaction a lock confirms it still
    /// holds them all (`PrepareKeys` with no writes), in parallel.
    pub(super) fn confirm_spanning(&self, txn: TxnRef) -> rowtree_kv::Result<u64> {
        let nodes: Vec<u64> = match self.spanning.lock().get(&txn.id) {
            Some(s) => s.locked_at.iter().copied().collect(),
            None => return Ok(0),
        };
        if nodes.is_empty() {
            return Ok(0);
        }
        let elsewhere = self.elsewhere_or_err()?.clone();
        let coordinator = self.groups()[0].split_id();
        let answers: Vec<(u64, Result<u64, Refusal>)> = std::thread::scope(|scope| {
            let handles: Vec<_> = nodes
                .iter()
                .map(|node| {
                    let elsewhere = &elsewhere;
                    let node = *node;
                    scope.spawn(move || {
                        (
                            node,
                            elsewhere.prepare_at(node, txn, coordinator, &[], &[], false),
                        )
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join().unwrap_or((
                        0,
                        Err(Refusal::Failed("a confirming thread panicked".into())),
                    ))
                })
                .collect()
        });
        let mut highest = 0;
        for (node, answer) in answers {
            match answer {
                Ok(ts) => highest = highest.max(ts),
                Err(Refusal::Aborted(why)) => {
                    return Err(rowtree_kv::Error::Aborted(format!(
                        "node {node} no longer holds the transaction's locks: {why}"
                    )))
                }
                Err(other) => {
                    return Err(rowtree_kv::Error::Aborted(format!(
                        "node {node} did not confirm the transaction's locks ({other}); retry \
                         the transaction"
                    )))
                }
            }
        }
        Ok(highest)
    }

    /// Aborts a transaction prepared elsewhere and not decided (the first
    /// decision stands if there was one), tells the participants, and
    /// forgets it.
    fn abort_spanning(&self, txn: TxnRef) {
        let global = GlobalTxnId(txn.id);
        let groups = self.groups();
        if groups[0].serves() {
            let now = groups[0].clock().now_nanos();
            let _ = groups[0].propose(
                None,
                Command::Decide {
                    txn: global,
                    outcome: Outcome::Abort { at: now },
                    writes: Vec::new(),
                },
            );
        }
        let outcome = self.outcome(&groups, 0, global).ok().flatten();
        self.tell_outcome(txn, outcome);
        self.in_flight.lock().remove(&global);
    }

    /// Tells the participants not told yet the outcome (if known; else
    /// they settle it themselves), and the other nodes holding locks to
    /// let go; forgets the transaction.
    fn tell_outcome(&self, txn: TxnRef, outcome: Option<Outcome>) {
        let Some(spanning) = self.spanning.lock().remove(&txn.id) else {
            return;
        };
        let Some(elsewhere) = self.elsewhere.get() else {
            return;
        };
        let global = GlobalTxnId(txn.id);
        let mut release: BTreeSet<u64> = spanning.nodes();
        for (node, told) in &spanning.prepared {
            release.remove(node);
            if *told {
                continue;
            }
            let Some(outcome) = outcome else { continue };
            if let Err(e) = elsewhere.resolve_at(*node, global, outcome) {
                tracing::debug!(%global, node, "a participant was not told the outcome: {e}");
            }
        }
        for node in release {
            if let Err(e) = elsewhere.release_at(node, global) {
                tracing::debug!(%global, node, "a node did not release a transaction: {e}");
            }
        }
    }

    /// Commits `writes` (this node's part of a transaction that prepared
    /// writes elsewhere) at `e.ts` as the decision of its two-phase
    /// commit, then tells the participants the outcome.
    pub(super) fn commit_elsewhere(
        &self,
        groups: &[Arc<GroupCommits>],
        e: &ElsewhereCommit,
        writes: Vec<Write>,
    ) -> Result<(), String> {
        let global = GlobalTxnId(e.txn.id);
        let mut parts: BTreeMap<usize, Vec<Write>> = BTreeMap::new();
        // The first split decides, written or not.
        parts.insert(0, Vec::new());
        for (key, value) in writes {
            let Some(i) = held_in(groups, &key) else {
                return Err(format!(
                    "a commit writes key {}, which this node holds no replica of",
                    crate::replica::hex(&key)
                ));
            };
            parts.entry(i).or_default().push((key, value));
        }
        let decided = self.two_phase_of(groups, global, e.ts, &mut parts);
        let outcome = self.outcome(groups, 0, global).ok().flatten();
        tracing::debug!(
            txn = %global,
            ts = e.ts,
            outcome = ?outcome,
            "decided a transaction that prepared writes at other nodes"
        );
        if matches!(outcome, Some(Outcome::Commit { .. })) {
            crate::failpoints::crash_point(crate::failpoints::AFTER_DECIDE);
        }
        if outcome.is_some() {
            // Decided: a participant asking now is told the outcome. The
            // participants are told in the background once the client has
            // its answer ([`SplitGroups::release_spanning`]): the commit
            // pipeline does not wait for other nodes, and a read there at
            // or above a prepare timestamp waits for the outcome anyway.
            self.in_flight.lock().remove(&global);
        }
        decided
    }

    /// [`Replication::release_elsewhere`](rowtree_kv::Replication::release_elsewhere): in the background, aborts the
    /// transaction if it prepared and was not decided, tells the
    /// participants not told yet, and releases the other nodes' locks.
    pub(super) fn release_spanning(self: &Arc<Self>, txn: TxnRef) {
        let undecided = match self.spanning.lock().get(&txn.id) {
            None => return,
            Some(s) => s.preparing,
        };
        let groups = Arc::downgrade(self);
        let runtime = self.groups()[0].runtime().clone();
        runtime.spawn_blocking(move || {
            let Some(groups) = groups.upgrade() else {
                return;
            };
            let global = GlobalTxnId(txn.id);
            if undecided && groups.in_flight.lock().contains(&global) {
                groups.abort_spanning(txn);
            } else {
                let all = groups.groups();
                let outcome = groups.outcome(&all, 0, global).ok().flatten();
                groups.tell_outcome(txn, outcome);
            }
        });
    }

    /// [`Replication::read_elsewhere`](rowtree_kv::Replication::read_elsewhere) of a read under locks: from the
    /// leader of the split holding the read's first key (in its order),
    /// clipped to that split.
    pub(super) fn read_led(&self, read: &RemoteRead) -> rowtree_kv::Result<RemoteBatch> {
        let elsewhere = self.elsewhere_or_err()?.clone();
        let (key, before) = read.first_key();
        let Led { node, start, limit } = self.led_around(&key, before)?;
        let Some(node) = node else {
            return Err(rowtree_kv::Error::Replication(
                "this node leads the keys of a read under locks sent elsewhere; retry".into(),
            ));
        };
        let (clipped, resume_at_edge) = read.clipped(&start, limit.as_deref());
        let mut batch = self.read_at_leader(&*elsewhere, node, &key, &clipped)?;
        if batch.resume.is_none() {
            batch.resume = resume_at_edge;
        }
        Ok(batch)
    }

    fn read_at_leader(
        &self,
        elsewhere: &dyn Elsewhere,
        node: u64,
        key: &[u8],
        read: &RemoteRead,
    ) -> rowtree_kv::Result<RemoteBatch> {
        match elsewhere.read_at(node, read) {
            Ok(batch) => Ok(batch),
            Err(refusal) => {
                if matches!(refusal, Refusal::Moved(_)) {
                    elsewhere.forget(key);
                }
                Err(refusal.into())
            }
        }
    }

    // --- The participant's side (`node::participant` calls these). ---

    /// The groups holding `[start, end)` (`point`: the key `start`), with
    /// their terms, if this node serves all of it; else why not.
    pub(crate) fn serving(
        &self,
        start: &[u8],
        end: Option<&[u8]>,
        point: bool,
    ) -> Result<Vec<(rowtree_kv::SplitId, u64)>, Refusal> {
        let end_key;
        let end = if point {
            end_key = key_end(start);
            Some(end_key.as_slice())
        } else {
            end
        };
        if let Some((gap, _)) = self.gaps(start, end).first() {
            return Err(Refusal::Moved(format!(
                "node {} holds no replica of key {}",
                self.node_id(),
                crate::replica::hex(gap)
            )));
        }
        let mut recovered = false;
        loop {
            let unsettled = self.unsettled.lock().clone();
            let mut out = Vec::new();
            let mut orphaned = None;
            for group in self.overlapping(start, end) {
                if !group.serves() {
                    return Err(Refusal::Moved(format!(
                        "{} is led by {}",
                        group.split_id(),
                        leader_name(&group)
                    )));
                }
                // A transaction prepared under the split's previous leader
                // (another node, or this node's previous process) holds no
                // lock in this node's table: until it is resolved, a lock
                // granted here would let a read miss its writes. The set
                // `unsettled` is what the last recovery could not resolve;
                // a leader that just took the split may not have run one.
                if unsettled.contains(&group.split_id()) || self.has_orphans(&group) {
                    orphaned = Some(group.split_id());
                    break;
                }
                out.push((group.split_id(), group.term()));
            }
            match orphaned {
                None => return Ok(out),
                Some(_) if !recovered => {
                    recovered = true;
                    if let Err(e) = self.recover() {
                        tracing::debug!("recovering prepared transactions before a lock: {e}");
                    }
                }
                Some(split) => {
                    return Err(Refusal::Failed(format!(
                        "{split} holds a transaction its previous leader prepared, not resolved \
                         yet"
                    )))
                }
            }
        }
    }

    /// Whether `group` holds a transaction prepared in it that is neither
    /// committing through this node nor held for another node's proxy
    /// here: one its previous leader prepared.
    fn has_orphans(&self, group: &GroupCommits) -> bool {
        group
            .prepared()
            .iter()
            .any(|p| !self.in_flight.lock().contains(&p.txn) && !self.holds_for_other(p.txn))
    }

    fn node_id(&self) -> u64 {
        self.groups.read()[0].node_id()
    }

    /// Prepares `writes` of `txn` (run by another node) in the groups this
    /// node leads, each in the term its locks were taken in (`terms`);
    /// `pending`: the values are templates waiting for the commit
    /// timestamp ([`crate::twophase::template`]). Returns the highest
    /// prepare timestamp, once every entry is applied.
    pub(crate) fn prepare_for(
        &self,
        txn: GlobalTxnId,
        coordinator: rowtree_kv::SplitId,
        participants: &[rowtree_kv::SplitId],
        writes: Vec<Write>,
        pending: bool,
        terms: &BTreeMap<rowtree_kv::SplitId, u64>,
    ) -> Result<u64, Refusal> {
        let _gate = self.gate.read();
        let groups = self.groups();
        let mut parts: BTreeMap<usize, Vec<Write>> = BTreeMap::new();
        for (key, value) in writes {
            let Some(i) = held_in(&groups, &key) else {
                return Err(Refusal::Aborted(format!(
                    "node {} holds no replica of key {} any more",
                    self.node_id(),
                    crate::replica::hex(&key)
                )));
            };
            parts.entry(i).or_default().push((key, value));
        }
        for i in parts.keys() {
            let group = &groups[*i];
            let split = group.split_id();
            if !group.serves() || terms.get(&split) != Some(&group.term()) {
                return Err(Refusal::Aborted(format!(
                    "the transaction's locks on {split} were lost (its leader changed since)"
                )));
            }
        }
        // The splits it only read under locks too.
        self.check_terms(&groups, terms)?;
        self.held_for_others.lock().insert(txn, Instant::now());
        let mut all: Vec<rowtree_kv::SplitId> = participants.to_vec();
        all.extend(parts.keys().map(|i| groups[*i].split_id()));
        all.sort_unstable();
        all.dedup();
        let highest = parking_lot::Mutex::new(0u64);
        let writes_here = !parts.is_empty();
        let result = in_parallel(parts.into_iter().collect(), |(i, writes)| {
            let group = &groups[i];
            let ts = group.prepare_ts(txn);
            let locks = writes
                .iter()
                .map(|(k, _)| {
                    (
                        rowtree_txn::lock::LockTarget::key(k.clone()),
                        rowtree_txn::lock::LockMode::Exclusive,
                    )
                })
                .collect();
            let prepare = Prepare {
                txn,
                ts,
                coordinator,
                participants: all.clone(),
                writes,
                pending,
                locks,
            };
            let proposed = group.propose(Some(ts), Command::Prepare(prepare));
            group.prepared_or_dropped(txn);
            proposed?;
            let mut h = highest.lock();
            *h = (*h).max(ts);
            Ok(())
        });
        match result {
            Ok(()) => {
                if writes_here {
                    crate::failpoints::crash_point(crate::failpoints::PARTICIPANT_PREPARED);
                }
                Ok(highest.into_inner())
            }
            // A proposal not answered may still be applied: the
            // transaction stays held here, to be resolved or settled.
            Err(e) => Err(Refusal::Failed(e)),
        }
    }

    /// Whether this node still leads each split of `terms` in the term
    /// given (the term its locks there were taken in): a lease that moved,
    /// even if it came back, left them behind.
    fn check_terms(
        &self,
        groups: &[Arc<GroupCommits>],
        terms: &BTreeMap<rowtree_kv::SplitId, u64>,
    ) -> Result<(), Refusal> {
        for (split, term) in terms {
            let held = groups
                .iter()
                .find(|g| g.split_id() == *split)
                .is_some_and(|g| g.serves() && g.term() == *term);
            if !held {
                return Err(Refusal::Aborted(format!(
                    "the transaction's locks on {split} were lost (its leader changed since)"
                )));
            }
        }
        Ok(())
    }

    /// Confirms for another node's transaction, which writes nothing here,
    /// that the locks it took here in `terms` are still held (see
    /// [`Replication::confirm_elsewhere`](rowtree_kv::Replication::confirm_elsewhere));
    /// the answer is this node's clock, which the transaction's commit
    /// timestamp must exceed.
    pub(crate) fn confirm_for(
        &self,
        terms: &BTreeMap<rowtree_kv::SplitId, u64>,
    ) -> Result<u64, Refusal> {
        let _gate = self.gate.read();
        let groups = self.groups();
        self.check_terms(&groups, terms)?;
        Ok(groups[0].clock().now_nanos())
    }

    /// Resolves `txn` (prepared here for another node) with `outcome` in
    /// every group this node leads that holds it prepared.
    pub(crate) fn resolve_for(&self, txn: GlobalTxnId, outcome: Outcome) -> Result<(), String> {
        let groups = self.groups();
        let holding: Vec<usize> = groups
            .iter()
            .enumerate()
            .filter(|(_, g)| g.leads() && g.prepared().iter().any(|p| p.txn == txn))
            .map(|(i, _)| i)
            .collect();
        in_parallel(holding, |i| self.resolve(&groups, i, txn, outcome))?;
        self.held_for_others.lock().remove(&txn);
        Ok(())
    }

    /// The outcome of `txn` for a participant that asks (this node leads
    /// the first split, which decides): `None` while this node commits it;
    /// else the decision, aborting it first if there was none.
    pub(crate) fn settle(&self, txn: GlobalTxnId) -> Result<Option<Outcome>, Refusal> {
        let groups = self.groups();
        let first = &groups[0];
        if !first.serves() {
            return Err(Refusal::Moved(format!(
                "the database's first split is led by {}",
                leader_name(first)
            )));
        }
        if self.in_flight.lock().contains(&txn) {
            return Ok(None);
        }
        let now = first.clock().now_nanos();
        first
            .propose(
                None,
                Command::Decide {
                    txn,
                    outcome: Outcome::Abort { at: now },
                    writes: Vec::new(),
                },
            )
            .map_err(Refusal::Failed)?;
        match self.outcome(&groups, 0, txn) {
            Ok(Some(outcome)) => Ok(Some(outcome)),
            Ok(None) => Err(Refusal::Failed(format!(
                "the first split records no outcome of {txn}"
            ))),
            Err(e) => Err(Refusal::Failed(e)),
        }
    }

    /// The outcome of `txn`, prepared in a group led here, asked of the
    /// first split's leader (or settled here if this node leads it).
    pub(super) fn settle_with_coordinator(
        &self,
        txn: GlobalTxnId,
    ) -> Result<Option<Outcome>, Refusal> {
        let groups = self.groups();
        if let Ok(Some(outcome)) = self.outcome(&groups, 0, txn) {
            return Ok(Some(outcome));
        }
        if groups[0].serves() {
            return self.settle(txn);
        }
        let Some(leader) = groups[0].current_leader() else {
            return Err(Refusal::Failed(
                "the database's first split has no leader at the moment".into(),
            ));
        };
        let elsewhere = self
            .elsewhere
            .get()
            .ok_or_else(|| Refusal::Failed("this node cannot reach the others".into()))?;
        elsewhere.settle_at(leader, txn)
    }

    /// Settles the transactions this node prepared for other nodes and
    /// still holds, either more than `after` ago (their node died, or its
    /// answer was lost) or, whenever prepared, among `orphaned` (the node
    /// running them is known to be gone): each is resolved with the
    /// outcome the first split's leader gives. Returns those resolved.
    ///
    /// Asking early is safe: the first split's leader answers a
    /// transaction still in flight there with no outcome, and decides one
    /// it has no record of as aborted, first in its log, so that a late
    /// commit decision of the same transaction can no longer win.
    pub(crate) fn settle_held(
        &self,
        after: Duration,
        orphaned: &std::collections::BTreeSet<GlobalTxnId>,
    ) -> Vec<GlobalTxnId> {
        let stale: Vec<GlobalTxnId> = self
            .held_for_others
            .lock()
            .iter()
            .filter(|(txn, at)| at.elapsed() >= after || orphaned.contains(txn))
            .map(|(txn, _)| *txn)
            .collect();
        let mut resolved = Vec::new();
        for txn in stale {
            match self.settle_with_coordinator(txn) {
                Ok(Some(outcome)) => match self.resolve_for(txn, outcome) {
                    Ok(()) => {
                        tracing::debug!(
                            %txn,
                            ?outcome,
                            node_gone = orphaned.contains(&txn),
                            "settled a transaction prepared here for another node"
                        );
                        resolved.push(txn);
                    }
                    Err(e) => tracing::debug!(%txn, "resolving a settled transaction: {e}"),
                },
                Ok(None) => {}
                Err(e) => tracing::debug!(%txn, "settling a transaction prepared here: {e}"),
            }
        }
        resolved
    }

    /// Resolves what a previous leader of the groups this node leads left
    /// prepared ([`SplitGroups::recover`]), if anything: run by the
    /// participant's tending, so that a split refusing locks for want of
    /// an outcome does not wait for a read or a commit to settle it.
    pub(crate) fn settle_orphans(&self) {
        if let Err(e) = self.recover_orphans() {
            tracing::debug!("resolving transactions a previous leader prepared: {e}");
        }
    }

    /// Forgets that `txn` is held here for another node (its locks were
    /// released, or its prepare never happened).
    pub(crate) fn forget_held(&self, txn: GlobalTxnId) {
        self.held_for_others.lock().remove(&txn);
    }

    /// Whether `txn` is held here for another node.
    pub(crate) fn holds_for_other(&self, txn: GlobalTxnId) -> bool {
        self.held_for_others.lock().contains_key(&txn)
    }
}
