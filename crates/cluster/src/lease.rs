//! Leases: which replica of a split may serve strong reads and assign
//! commit timestamps, and during which interval of time.
//!
//! Raft alone does not say who may answer a read: a leader that a partition
//! has cut off still believes it leads until it hears of a newer term, and
//! meanwhile the majority side elects another leader that takes new
//! writes. A read served by the old leader would miss them. A lease closes
//! that gap with time instead of a round of messages per read:
//!
//! * A [`Lease`] is an interval of timestamps `[start, expiry)` on one
//!   split, held by one node, and numbered: lease `seq` replaces lease
//!   `seq - 1`. It is written to the split's log
//!   ([`Command::Lease`](crate::Command::Lease)) by the Raft leader, so
//!   every replica agrees on the chain, and a proposal that names a lease
//!   other than the current one as the one it replaces is ignored when
//!   applied (two leaders of different terms raced; the first in the log
//!   won).
//! * A node takes over from another holder only from the old lease's
//!   expiry plus the maximum clock offset ε ([`LeaseRules::max_offset`]):
//!   with every clock within ε of every other (the node's clock guard
//!   enforces it), the old holder's clock has passed its expiry by the time
//!   the new holder's reads `start`, so the two never serve at once, in
//!   real time or in timestamps.
//! * A holder serves only while its own clock reads a time inside the
//!   interval ([`Lease::status`]). A lease it has not reached yet is
//!   [`LeaseStatus::NotStarted`]: the holder waits.
//! * The holder extends its lease before it runs out ([`LeaseKeeper`]
//!   renews once less than half is left); an extension keeps the start and
//!   moves the expiry, and needs no wait.
//! * A lease belongs to the process that took it. A node that restarts
//!   finds its old lease in its replica's applied state but does not use
//!   it: its replica may not have applied everything the old process
//!   acknowledged. It takes a new lease, which it may use only after the
//!   old one's expiry plus ε, and only once the new lease's log entry is
//!   applied locally, which puts every earlier entry in its data.
//!
//! Timestamps here are nanoseconds on the node's clock, as commit
//! timestamps are.

use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::error::DecodeError;
use crate::wire::{put_varint, Reader};

/// One lease on one split (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Lease {
    /// The lease's number in the split's chain of leases; the first is 1.
    pub seq: u64,
    /// The node holding it.
    pub holder: u64,
    /// The first timestamp the holder may serve at (nanoseconds).
    pub start: u64,
    /// The first timestamp it may no longer serve at.
    pub expiry: u64,
}

/// Whether a node may serve under a lease at a time on its clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeaseStatus {
    /// The node holds the lease and its clock is inside it.
    Valid,
    /// Another node holds the lease.
    NotHolder,
    /// The node holds the lease, but its clock has not reached the start.
    NotStarted,
    /// The node held the lease; its clock has passed the expiry.
    Expired,
}

impl Lease {
    /// Whether `node`, whose clock reads `clock`, may serve under this
    /// lease now.
    pub fn status(&self, node: u64, clock: u64) -> LeaseStatus {
        if self.holder != node {
            LeaseStatus::NotHolder
        } else if clock < self.start {
            LeaseStatus::NotStarted
        } else if clock >= self.expiry {
            LeaseStatus::Expired
        } else {
            LeaseStatus::Valid
        }
    }
}

impl Lease {
    /// Appends the lease's binary form (`seq holder start expiry`, four
    /// varints), as log entries and the applied state carry it.
    pub(crate) fn encode_into(&self, out: &mut Vec<u8>) {
        for v in [self.seq, self.holder, self.start, self.expiry] {
            put_varint(out, v);
        }
    }

    /// Reads a lease written by [`Lease::encode_into`].
    pub(crate) fn decode_from(r: &mut Reader<'_>) -> Result<Lease, DecodeError> {
        Ok(Lease {
            seq: r.varint()?,
            holder: r.varint()?,
            start: r.varint()?,
            expiry: r.varint()?,
        })
    }
}

impl fmt::Display for Lease {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "lease {} of node {} [{}, {})",
            self.seq, self.holder, self.start, self.expiry
        )
    }
}

/// How long leases last and how far apart clocks may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeaseRules {
    /// The length of a new or extended lease.
    pub duration: Duration,
    /// The maximum offset between any two nodes' clocks (ε).
    pub max_offset: Duration,
}

impl LeaseRules {
    fn duration_nanos(&self) -> u64 {
        u64::try_from(self.duration.as_nanos()).unwrap_or(u64::MAX)
    }

    fn offset_nanos(&self) -> u64 {
        u64::try_from(self.max_offset.as_nanos()).unwrap_or(u64::MAX)
    }

    /// The lease `node` proposes at `clock` to follow `current` (`None`:
    /// the split has had no lease). `extend` says that `node` holds
    /// `current` in this process: then the new lease keeps its start and
    /// ends a whole duration from now. Otherwise it starts no earlier than
    /// `current`'s expiry plus ε.
    pub fn next(&self, current: Option<&Lease>, node: u64, clock: u64, extend: bool) -> Lease {
        let duration = self.duration_nanos();
        let (seq, start) = match current {
            None => (1, clock),
            Some(c) if extend && c.holder == node => (c.seq + 1, c.start),
            Some(c) => (
                c.seq + 1,
                clock.max(c.expiry.saturating_add(self.offset_nanos())),
            ),
        };
        let expiry = clock.max(start).saturating_add(duration);
        Lease {
            seq,
            holder: node,
            start,
            expiry,
        }
    }
}

/// The current lease of one replica, as its applied state has it: shared
/// between the replica (which sets it as entries apply) and the node's
/// code that serves (which reads it). Cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct LeaseView(Arc<Mutex<Option<Lease>>>);

impl LeaseView {
    /// The current lease, if the split has had one.
    pub fn get(&self) -> Option<Lease> {
        *self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn set(&self, lease: Option<Lease>) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = lease;
    }
}

/// What [`LeaseKeeper::proposal`] says to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Renewal {
    /// The held lease is valid and has more than half its length left.
    Keep,
    /// Propose this lease, replacing the current one (whose `seq` is
    /// `lease.seq - 1`).
    Propose(Lease),
}

/// One node's leases on one split: the lease it took in this process, and
/// the decision when to propose the next. The caller (the split's Raft
/// leader on that node) proposes what [`LeaseKeeper::proposal`] returns,
/// and once the entry is applied locally reports it with
/// [`LeaseKeeper::applied`].
#[derive(Debug, Clone)]
pub struct LeaseKeeper {
    node: u64,
    rules: LeaseRules,
    held: Option<Lease>,
    /// Set by [`LeaseKeeper::release`]: the node is handing the split over
    /// and takes no lease again.
    released: bool,
}

impl LeaseKeeper {
    /// A keeper for `node`, holding nothing.
    pub fn new(node: u64, rules: LeaseRules) -> LeaseKeeper {
        LeaseKeeper {
            node,
            rules,
            held: None,
            released: false,
        }
    }

    /// Gives the split up, as a node that is stopping does: from now on
    /// [`LeaseKeeper::proposal`] proposes nothing. Returns the lease to
    /// propose in place of the held one, if this node holds the current
    /// lease: the same lease ending at `until` (at most its expiry), so
    /// that the next holder may start at `until` plus ε instead of the
    /// full expiry plus ε. A lease that has not started by `until` (a new
    /// holder's, waiting out the lease before it) ends one nanosecond
    /// after its start: no replica takes a lease that ends before it
    /// starts, and nothing was served under it. The caller must have
    /// served nothing at or above `until`, and serve nothing more.
    ///
    /// The lease held is let go here, whatever becomes of the proposal: a
    /// proposal that times out may still be committed, and the next holder
    /// may then start at `until` plus ε, while this node's replica (cut
    /// off, say) still shows the old lease as current. So nothing is
    /// served under it again, even after [`LeaseKeeper::resume`]; only the
    /// shorter lease, once [`LeaseKeeper::applied`] says it is current.
    pub fn release(&mut self, current: Option<Lease>, until: u64) -> Option<Lease> {
        self.released = true;
        let held = self.held_current(current.as_ref());
        self.held = None;
        let held = held?;
        Some(Lease {
            seq: held.seq + 1,
            expiry: until.clamp(held.start + 1, held.expiry),
            ..held
        })
    }

    /// Takes leases again after a [`LeaseKeeper::release`] that did not
    /// hand the split over for good (a lease moved by load: if this node
    /// leads again later, it serves again). The lease given up stays
    /// given up: a new one is proposed when needed.
    pub fn resume(&mut self) {
        self.released = false;
    }

    /// Whether [`LeaseKeeper::release`] was called.
    pub fn released(&self) -> bool {
        self.released
    }

    /// The lease taken in this process, whether or not it is still current
    /// or valid (to serve, ask [`LeaseKeeper::serving`]).
    pub fn held(&self) -> Option<Lease> {
        self.held
    }

    /// The lease taken in this process, if it is still the current one
    /// (`current`, from the replica's [`LeaseView`]).
    fn held_current(&self, current: Option<&Lease>) -> Option<Lease> {
        self.held.filter(|h| current == Some(h))
    }

    /// What to do at `clock` given the split's current lease: keep the
    /// held lease (valid with more than half its length left, or not
    /// started yet: the node waits for it), or propose a new one (to take
    /// the split, or to extend a lease with less than half its length
    /// left).
    pub fn proposal(&self, current: Option<Lease>, clock: u64) -> Renewal {
        if self.released {
            return Renewal::Keep;
        }
        let held = self.held_current(current.as_ref());
        if let Some(h) = held {
            let left = h.expiry.saturating_sub(clock);
            match h.status(self.node, clock) {
                LeaseStatus::NotStarted => return Renewal::Keep,
                LeaseStatus::Valid if left > self.rules.duration_nanos() / 2 => {
                    return Renewal::Keep
                }
                _ => {}
            }
        }
        let extend = held.is_some_and(|h| clock < h.expiry);
        Renewal::Propose(self.rules.next(current.as_ref(), self.node, clock, extend))
    }

    /// Records that `proposed` was applied on this node's replica, whose
    /// current lease is now `current`: if that is `proposed`, the node
    /// holds it. Returns whether it does.
    pub fn applied(&mut self, proposed: Lease, current: Option<Lease>) -> bool {
        if current == Some(proposed) {
            self.held = Some(proposed);
            true
        } else {
            false
        }
    }

    /// The lease this node may serve under at `clock`: the one it took in
    /// this process, if it is still the split's current lease and `clock`
    /// is inside it.
    pub fn serving(&self, current: Option<Lease>, clock: u64) -> Option<Lease> {
        self.held_current(current.as_ref())
            .filter(|h| h.status(self.node, clock) == LeaseStatus::Valid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn rules() -> LeaseRules {
        LeaseRules {
            duration: Duration::from_millis(1000),
            max_offset: Duration::from_millis(20),
        }
    }

    #[test]
    fn status_is_valid_only_inside_the_interval_and_only_for_the_holder() {
        let l = Lease {
            seq: 1,
            holder: 2,
            start: 100,
            expiry: 200,
        };
        assert_eq!(l.status(1, 150), LeaseStatus::NotHolder);
        assert_eq!(l.status(2, 99), LeaseStatus::NotStarted);
        assert_eq!(l.status(2, 100), LeaseStatus::Valid);
        assert_eq!(l.status(2, 199), LeaseStatus::Valid);
        assert_eq!(l.status(2, 200), LeaseStatus::Expired);
    }

    #[test]
    fn a_new_holder_starts_after_the_old_expiry_plus_the_offset() {
        let r = rules();
        let first = r.next(None, 1, 5_000 * MS, false);
        assert_eq!((first.seq, first.start), (1, 5_000 * MS));
        assert_eq!(first.expiry, 6_000 * MS);
        // Node 2 takes over while node 1's lease runs.
        let second = r.next(Some(&first), 2, 5_500 * MS, false);
        assert_eq!(second.seq, 2);
        assert_eq!(second.start, 6_020 * MS);
        assert_eq!(second.expiry, 7_020 * MS);
        // Long after it ran out: from now.
        let late = r.next(Some(&first), 2, 9_000 * MS, false);
        assert_eq!(late.start, 9_000 * MS);
        // Node 1 itself, in a new process (no extension): the same wait.
        let again = r.next(Some(&first), 1, 5_500 * MS, false);
        assert_eq!(again.start, 6_020 * MS);
    }

    #[test]
    fn an_extension_keeps_the_start_and_moves_the_expiry() {
        let r = rules();
        let first = r.next(None, 1, 5_000 * MS, false);
        let ext = r.next(Some(&first), 1, 5_700 * MS, true);
        assert_eq!(
            ext,
            Lease {
                seq: 2,
                holder: 1,
                start: 5_000 * MS,
                expiry: 6_700 * MS
            }
        );
    }

    #[test]
    fn the_keeper_renews_at_half_and_serves_only_its_own_current_lease() {
        let mut k = LeaseKeeper::new(1, rules());
        let Renewal::Propose(first) = k.proposal(None, 5_000 * MS) else {
            panic!("nothing held: propose");
        };
        // Not applied yet: nothing to serve under.
        assert_eq!(k.serving(Some(first), 5_100 * MS), None);
        assert!(k.applied(first, Some(first)));
        assert_eq!(k.serving(Some(first), 5_100 * MS), Some(first));
        assert_eq!(k.proposal(Some(first), 5_400 * MS), Renewal::Keep);
        // Past half: an extension.
        let Renewal::Propose(ext) = k.proposal(Some(first), 5_600 * MS) else {
            panic!("less than half left: extend");
        };
        assert_eq!(
            (ext.seq, ext.start, ext.expiry),
            (2, first.start, 6_600 * MS)
        );
        // Another node's lease won the race: the keeper holds nothing.
        let other = rules().next(Some(&first), 3, 5_600 * MS, false);
        assert!(!k.applied(ext, Some(other)));
        assert_eq!(k.serving(Some(other), 5_700 * MS), None);
        // And its next proposal waits for that lease's expiry plus ε.
        let Renewal::Propose(next) = k.proposal(Some(other), 5_700 * MS) else {
            panic!("propose");
        };
        assert_eq!(next.start, other.expiry + 20 * MS);
        // Once it holds that one, it waits for it without proposing again.
        assert!(k.applied(next, Some(next)));
        assert_eq!(k.proposal(Some(next), 5_800 * MS), Renewal::Keep);
        assert_eq!(k.serving(Some(next), 5_800 * MS), None);
        assert_eq!(k.serving(Some(next), next.start), Some(next));
    }

    #[test]
    fn a_released_lease_ends_early_and_the_next_holder_starts_from_there() {
        let r = rules();
        let mut k = LeaseKeeper::new(1, r);
        let Renewal::Propose(first) = k.proposal(None, 5_000 * MS) else {
            panic!("propose");
        };
        assert!(k.applied(first, Some(first)));
        let released = k.release(Some(first), 5_300 * MS).expect("held: released");
        assert_eq!(
            released,
            Lease {
                seq: 2,
                holder: 1,
                start: 5_000 * MS,
                expiry: 5_300 * MS
            }
        );
        // Released: no proposal again, and nothing served past the end.
        assert!(k.released());
        assert_eq!(k.proposal(Some(first), 5_900 * MS), Renewal::Keep);
        assert!(k.applied(released, Some(released)));
        assert_eq!(k.serving(Some(released), 5_300 * MS), None);
        // The next holder waits ε past the release, not past 6_000.
        let next = r.next(Some(&released), 2, 5_301 * MS, false);
        assert_eq!(next.start, 5_320 * MS);
        // The end never moves outside the lease.
        let mut late = LeaseKeeper::new(1, r);
        assert!(late.applied(first, Some(first)));
        assert_eq!(
            late.release(Some(first), 9_000 * MS).unwrap().expiry,
            first.expiry
        );
        // A lease not started yet (node 2's, waiting out node 1's) ends
        // just after its start, never before it: a replica refuses a lease
        // that ends before it starts, and its group would stop.
        let mut waiting = LeaseKeeper::new(2, r);
        let Renewal::Propose(second) = waiting.proposal(Some(first), 5_500 * MS) else {
            panic!("propose");
        };
        assert!(waiting.applied(second, Some(second)));
        let early = waiting.release(Some(second), 5_600 * MS).unwrap();
        assert_eq!(
            (early.start, early.expiry),
            (second.start, second.start + 1)
        );
        // A release whose entry was never applied here (its proposal timed
        // out, and may still be committed elsewhere) leaves nothing to
        // serve under, even once the keeper takes leases again: the next
        // lease it proposes waits out the one it gave up, plus ε.
        let mut lost = LeaseKeeper::new(1, r);
        assert!(lost.applied(first, Some(first)));
        assert!(lost.release(Some(first), 5_300 * MS).is_some());
        lost.resume();
        assert_eq!(lost.serving(Some(first), 5_400 * MS), None);
        let Renewal::Propose(again) = lost.proposal(Some(first), 5_400 * MS) else {
            panic!("propose");
        };
        assert_eq!(again.start, first.expiry + 20 * MS);
        // A node holding nothing releases nothing, but still stops.
        let mut none = LeaseKeeper::new(3, r);
        assert_eq!(none.release(Some(first), 5_300 * MS), None);
        assert_eq!(none.proposal(Some(first), 9_000 * MS), Renewal::Keep);
    }

    #[test]
    fn a_stored_lease_of_the_node_is_not_used_by_a_new_process() {
        let r = rules();
        let stored = r.next(None, 1, 5_000 * MS, false);
        let k = LeaseKeeper::new(1, r);
        assert_eq!(k.serving(Some(stored), 5_100 * MS), None);
        let Renewal::Propose(next) = k.proposal(Some(stored), 5_100 * MS) else {
            panic!("propose");
        };
        assert_eq!(next.start, stored.expiry + 20 * MS);
    }
}
