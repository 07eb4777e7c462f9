//! Fail points: places in a node's code where a test makes the node crash
//! at a chosen step of a protocol (two-phase commit, split, merge), so
//! that what the other nodes do about it can be checked (the steps in
//! question are too short to hit with a `kill -9` from outside).
//!
//! They are compiled only with this crate's `failpoints` feature (which
//! `rowtree-cli`'s feature of the same name turns on); without it each is
//! an empty inline function. A point is set by name through the `fail`
//! crate (`fail::cfg`); `rowtree serve` built with the feature sets those
//! named in `ROWTREE_FAILPOINTS` at start, e.g.
//! `ROWTREE_FAILPOINTS='cluster::2pc::after_prepare=return'`.
//!
//! Every point here is a crash point: the action `return` ends the
//! process on the spot, with exit status 134 and no destructor run
//! (`std::process::exit`: nothing more reaches its disk or the network,
//! as with `kill -9`; not `abort`, which could leave a core file).
//! `sleep(ms)` stalls the step instead, and the rest of the `fail` crate's
//! grammar holds (`1*return`: crash at the first pass only, `20%return`:
//! at one pass in five).
//!
//! | point | where | a crash there leaves |
//! |---|---|---|
//! | [`AFTER_PREPARE`] | at the node running a transaction that spans nodes, once every participant has prepared, before the decision | writes prepared at the participants with no decision: they must settle it as aborted |
//! | [`AFTER_DECIDE`] | there, once the first split has recorded the commit decision, before any participant is told | a decided commit that the participants must learn from the first split's (new) leader |
//! | [`PARTICIPANT_PREPARED`] | at a participant, once its `Prepare` entries are applied, before it answers the node running the transaction | a prepare the coordinator never heard of: it aborts the transaction, and the participant's leader (the restarted node, or another) settles the orphaned entry with the first split |
//! | [`SPLIT_AFTER_SPLIT_AT`] | at the leader cutting a split in two, once its `SplitAt` entry is applied, before it waits for the new split's group | a split whose new right group each node makes from its replica, the crashed one when it starts again |
//! | [`MERGE_AFTER_FREEZE`] | at the node merging a split into its left neighbour, once the right split's `Freeze` entry is applied, before the `Merge` | a frozen split, refusing writes, that the next leader of both splits must merge (or the restarted node, trying the merge again) |

/// Name of the point after the prepare phase (see the module docs).
pub const AFTER_PREPARE: &str = "cluster::2pc::after_prepare";

/// Name of the point after the commit decision (see the module docs).
pub const AFTER_DECIDE: &str = "cluster::2pc::after_decide";

/// Name of the point at a participant after its prepare (see the module
/// docs).
pub const PARTICIPANT_PREPARED: &str = "cluster::2pc::participant_prepared";

/// Name of the point in a split after the `SplitAt` entry (see the module
/// docs).
pub const SPLIT_AFTER_SPLIT_AT: &str = "cluster::split::after_split_at";

/// Name of the point in a merge after the freeze (see the module docs).
pub const MERGE_AFTER_FREEZE: &str = "cluster::merge::after_freeze";

/// Passes the crash point `name`: ends the process if it is set to
/// `return` (after saying so on standard error).
#[cfg(feature = "failpoints")]
#[inline]
pub(crate) fn crash_point(name: &str) {
    fail::fail_point!(name, |_| {
        eprintln!("fail point {name}: the process ends here");
        std::process::exit(134)
    });
}

/// Without the `failpoints` feature a point is nothing.
#[cfg(not(feature = "failpoints"))]
#[inline(always)]
pub(crate) fn crash_point(_name: &str) {}
