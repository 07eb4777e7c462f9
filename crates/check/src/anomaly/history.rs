//! Histories of list-append transactions, and the checker that finds
//! isolation anomalies in them.
//!
//! The workload (in [`super::list_append`]) gives every key a list and has
//! transactions read lists and append unique elements to them. Because an
//! element is appended once and a list only grows, a read shows exactly
//! which writes came before it, and the history can be checked without
//! knowing how the database works inside (the idea of Kingsbury and Alvaro's
//! Elle checker, implemented here in our own terms):
//!
//! 1. **Version order.** Every read of a key must be a prefix of the longest
//!    read of that key; the longest read is then the order in which the
//!    appends took effect. Reads that disagree are an *incompatible order*;
//!    an element twice in one list is a *duplicate*.
//! 2. **Dependencies** between committed transactions, from that order:
//!    `T1 -ww-> T2` when T2 appended the element right after T1's;
//!    `T1 -wr-> T2` when T2 read a list ending in T1's element;
//!    `T1 -rw-> T2` when T1 read a list that T2's element extended.
//!    A cycle of these is a serializability violation (G0 with only ww
//!    edges, G1c with ww and wr, G2 once an rw edge is involved).
//! 3. **What was read must have been written by a committed transaction**
//!    (an element of a failed transaction seen is an *aborted read*, G1a),
//!    and not as an intermediate state (a list ending in an element its
//!    transaction appended before another to the same key is an
//!    *intermediate read*, G1b). A transaction reads its own appends.
//! 4. **Nothing acknowledged is lost:** every element a committed
//!    transaction appended is in the final read of its key.
//! 5. **External consistency,** with the commit timestamps Spanner returns:
//!    every dependency edge goes forward in timestamp order, and a
//!    transaction that started after another finished has a later
//!    timestamp (real-time order). Stale reads at a timestamp `t` see
//!    exactly the appends committed at or before `t`.
//!
//! Transactions whose outcome is unknown (the server was killed before it
//! answered) may or may not have committed: their elements may appear, and
//! are then treated as committed, but they are never required to.

use std::collections::{HashMap, HashSet};
use std::fmt;

/// A key of the list-append workload.
pub type Key = i64;
/// An element appended to a list; unique in a history.
pub type Elem = i64;
/// Nanoseconds: commit and read timestamps (since the Unix epoch) and the
/// client's monotonic clock for invocation and completion.
pub type Nanos = i128;

/// One operation of a transaction, with its result once known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// Appends an element to the key's list.
    Append(Key, Elem),
    /// Reads the key's list (the result, once the read ran).
    Read(Key, Option<Vec<Elem>>),
}

/// How a transaction ended, as the client saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The commit was acknowledged (or a read-only transaction answered).
    Committed,
    /// The database refused it (aborted, an error): it had no effect.
    Failed,
    /// No answer (the connection broke, the server was killed): it may or
    /// may not have committed.
    Unknown,
}

/// A transaction of the history.
#[derive(Debug, Clone)]
pub struct Txn {
    pub ops: Vec<Op>,
    pub outcome: Outcome,
    /// When the client started it and when it got the answer (client's
    /// monotonic clock).
    pub invoked: Nanos,
    pub completed: Nanos,
    /// The commit timestamp (read-write) or read timestamp (read-only),
    /// when the database returned one.
    pub timestamp: Option<Nanos>,
    /// A read-only transaction at a timestamp chosen by the client (a stale
    /// read): its reads must show exactly what was committed by then.
    pub stale: bool,
}

impl Anomaly {
    /// The transactions it names, by index.
    pub fn txns(&self) -> Vec<usize> {
        match self {
            Anomaly::IncompatibleOrder { .. }
            | Anomaly::Duplicate { .. }
            | Anomaly::LostOwnWrite { .. } => Vec::new(),
            Anomaly::PhantomElement { reader, .. } | Anomaly::StaleRead { reader, .. } => {
                vec![*reader]
            }
            Anomaly::AbortedRead { writer, reader, .. }
            | Anomaly::IntermediateRead { writer, reader, .. } => vec![*writer, *reader],
            Anomaly::LostAppend { writer, .. } => vec![*writer],
            Anomaly::Cycle { txns, .. } => txns.clone(),
            Anomaly::TimestampOrder { from, to, .. } => vec![*from, *to],
            Anomaly::RealTimeOrder { earlier, later } => vec![*earlier, *later],
        }
    }
}

impl Txn {
    /// One line: each operation (a read as its list's length and last
    /// three elements), the outcome, the timestamp, and whether stale.
    pub fn brief(&self) -> String {
        let ops: Vec<String> = self
            .ops
            .iter()
            .map(|op| match op {
                Op::Append(k, e) => format!("append {e} to {k}"),
                Op::Read(k, None) => format!("read {k}: -"),
                Op::Read(k, Some(list)) => {
                    let tail = &list[list.len().saturating_sub(3)..];
                    format!("read {k}: {} elements, ending {tail:?}", list.len())
                }
            })
            .collect();
        format!(
            "{}; {:?} at {:?}{}",
            ops.join(", "),
            self.outcome,
            self.timestamp,
            if self.stale { " (stale)" } else { "" }
        )
    }
}

/// Which kind of dependency an edge is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dep {
    /// Write-write: the second appended right after the first.
    Ww,
    /// Write-read: the second read the first's append as the last element.
    Wr,
    /// Read-write (anti-dependency): the second appended right after what
    /// the first read.
    Rw,
}

/// An anomaly found in a history. Transactions are named by their index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Anomaly {
    /// Two reads of a key that are not prefixes of one another.
    IncompatibleOrder {
        key: Key,
        a: Vec<Elem>,
        b: Vec<Elem>,
    },
    /// An element appears twice in a list.
    Duplicate { key: Key, elem: Elem },
    /// A read saw an element no transaction appended.
    PhantomElement { key: Key, elem: Elem, reader: usize },
    /// G1a: a read saw an element of a failed transaction.
    AbortedRead {
        key: Key,
        elem: Elem,
        writer: usize,
        reader: usize,
    },
    /// G1b: a read saw an element its writer appended before another
    /// element to the same key in the same transaction.
    IntermediateRead {
        key: Key,
        elem: Elem,
        writer: usize,
        reader: usize,
    },
    /// A transaction's read of a key did not end with its own earlier
    /// append to that key.
    LostOwnWrite { key: Key, txn: usize },
    /// An acknowledged append is missing from the final read of its key.
    LostAppend { key: Key, elem: Elem, writer: usize },
    /// A cycle of dependencies among committed transactions.
    Cycle {
        kind: &'static str,
        txns: Vec<usize>,
        deps: Vec<Dep>,
    },
    /// A dependency edge that goes backwards in timestamp order.
    TimestampOrder { from: usize, to: usize, dep: Dep },
    /// A transaction that started after another had finished got an
    /// earlier (or equal) timestamp.
    RealTimeOrder { earlier: usize, later: usize },
    /// A read at a timestamp saw an element committed after it, or missed
    /// one committed before it.
    StaleRead {
        key: Key,
        reader: usize,
        detail: String,
    },
}

impl fmt::Display for Anomaly {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self:?}")
    }
}

/// What [`check`] found.
#[derive(Debug, Default)]
pub struct Report {
    /// Transactions by outcome.
    pub committed: usize,
    pub failed: usize,
    pub unknown: usize,
    /// Dependency edges found among committed transactions.
    pub edges: usize,
    /// Appends checked against the final reads.
    pub appends_checked: usize,
    pub anomalies: Vec<Anomaly>,
}

impl Report {
    /// Whether the history is free of anomalies.
    pub fn ok(&self) -> bool {
        self.anomalies.is_empty()
    }
}

/// Checks a history. `final_reads` are the keys' lists read after every
/// transaction finished (with no writes running): what must contain every
/// acknowledged append.
pub fn check(txns: &[Txn], final_reads: &HashMap<Key, Vec<Elem>>) -> Report {
    let mut report = Report::default();
    for t in txns {
        match t.outcome {
            Outcome::Committed => report.committed += 1,
            Outcome::Failed => report.failed += 1,
            Outcome::Unknown => report.unknown += 1,
        }
    }
    let mut anomalies = Vec::new();

    // Who appended each element, and where in its transaction.
    let mut writer: HashMap<Elem, (usize, Key)> = HashMap::new();
    for (i, t) in txns.iter().enumerate() {
        for op in &t.ops {
            if let Op::Append(k, e) = op {
                writer.insert(*e, (i, *k));
            }
        }
    }
    let visible = |i: usize| txns[i].outcome != Outcome::Failed;
    // The reads that count: those of committed transactions, and the final ones.
    let mut reads: Vec<(usize, Key, &Vec<Elem>)> = Vec::new();
    for (i, t) in txns.iter().enumerate() {
        if t.outcome != Outcome::Committed {
            continue;
        }
        for op in &t.ops {
            if let Op::Read(k, Some(list)) = op {
                reads.push((i, *k, list));
            }
        }
    }

    // 1. Version order per key: the longest read (the final one included),
    //    which every other read must be a prefix of.
    let mut order: HashMap<Key, Vec<Elem>> = HashMap::new();
    let all_reads = reads
        .iter()
        .map(|(_, k, l)| (*k, *l))
        .chain(final_reads.iter().map(|(k, l)| (*k, l)));
    for (k, list) in all_reads {
        let longest = order.entry(k).or_default();
        if list.len() > longest.len() {
            if !list.starts_with(longest) {
                anomalies.push(Anomaly::IncompatibleOrder {
                    key: k,
                    a: longest.clone(),
                    b: list.clone(),
                });
            }
            *longest = list.clone();
        } else if !longest.starts_with(list) {
            anomalies.push(Anomaly::IncompatibleOrder {
                key: k,
                a: longest.clone(),
                b: list.clone(),
            });
        }
    }
    for (k, list) in &order {
        let mut seen = HashSet::new();
        for e in list {
            if !seen.insert(*e) {
                anomalies.push(Anomaly::Duplicate { key: *k, elem: *e });
            }
        }
    }
    let position: HashMap<(Key, Elem), usize> = order
        .iter()
        .flat_map(|(k, list)| list.iter().enumerate().map(move |(i, e)| ((*k, *e), i)))
        .collect();

    // 3. Every element read was appended, by a transaction that did not
    //    fail, as its last append to that key.
    let last_append: HashMap<(usize, Key), Elem> = txns
        .iter()
        .enumerate()
        .flat_map(|(i, t)| {
            t.ops.iter().filter_map(move |op| match op {
                Op::Append(k, e) => Some(((i, *k), *e)),
                Op::Read(..) => None,
            })
        })
        .collect();
    for &(reader, k, list) in &reads {
        for e in list {
            match writer.get(e) {
                None => anomalies.push(Anomaly::PhantomElement {
                    key: k,
                    elem: *e,
                    reader,
                }),
                Some(&(w, _)) if !visible(w) => anomalies.push(Anomaly::AbortedRead {
                    key: k,
                    elem: *e,
                    writer: w,
                    reader,
                }),
                Some(_) => {}
            }
        }
        if let Some(e) = list.last() {
            if let Some(&(w, _)) = writer.get(e) {
                if w != reader && last_append.get(&(w, k)) != Some(e) {
                    anomalies.push(Anomaly::IntermediateRead {
                        key: k,
                        elem: *e,
                        writer: w,
                        reader,
                    });
                }
            }
        }
    }
    // A transaction's reads end with its own earlier appends to the key.
    for (i, t) in txns.iter().enumerate() {
        if t.outcome != Outcome::Committed {
            continue;
        }
        let mut own: HashMap<Key, Elem> = HashMap::new();
        for op in &t.ops {
            match op {
                Op::Append(k, e) => {
                    own.insert(*k, *e);
                }
                Op::Read(k, Some(list)) => {
                    if let Some(e) = own.get(k) {
                        if list.last() != Some(e) {
                            anomalies.push(Anomaly::LostOwnWrite { key: *k, txn: i });
                        }
                    }
                }
                Op::Read(_, None) => {}
            }
        }
    }

    // 4. Every acknowledged append is in the final read of its key.
    let finally: HashSet<(Key, Elem)> = final_reads
        .iter()
        .flat_map(|(k, list)| list.iter().map(move |e| (*k, *e)))
        .collect();
    for (i, t) in txns.iter().enumerate() {
        if t.outcome != Outcome::Committed {
            continue;
        }
        for op in &t.ops {
            if let Op::Append(k, e) = op {
                report.appends_checked += 1;
                if !finally.contains(&(*k, *e)) {
                    anomalies.push(Anomaly::LostAppend {
                        key: *k,
                        elem: *e,
                        writer: i,
                    });
                }
            }
        }
    }

    // 2. Dependencies among committed transactions (and unknown ones whose
    //    elements were seen: they committed).
    let took_effect = |i: usize| match txns[i].outcome {
        Outcome::Committed => true,
        Outcome::Failed => false,
        Outcome::Unknown => txns[i]
            .ops
            .iter()
            .any(|op| matches!(op, Op::Append(k, e) if position.contains_key(&(*k, *e)))),
    };
    let mut edges: HashSet<(usize, usize, Dep)> = HashSet::new();
    let mut add = |from: usize, to: usize, dep: Dep| {
        if from != to && took_effect(from) && took_effect(to) {
            edges.insert((from, to, dep));
        }
    };
    for (k, list) in &order {
        for pair in list.windows(2) {
            if let (Some(&(a, _)), Some(&(b, _))) = (writer.get(&pair[0]), writer.get(&pair[1])) {
                add(a, b, Dep::Ww);
            }
        }
        let _ = k;
    }
    for &(reader, k, list) in &reads {
        if let Some(&(w, _)) = list.last().and_then(|e| writer.get(e)) {
            add(w, reader, Dep::Wr);
        }
        let next = order.get(&k).and_then(|o| o.get(list.len()));
        if let Some(&(w, _)) = next.and_then(|e| writer.get(e)) {
            add(reader, w, Dep::Rw);
        }
    }
    report.edges = edges.len();
    anomalies.extend(cycles(txns.len(), &edges));

    // 5. External consistency with the timestamps the database returned.
    for &(from, to, dep) in &edges {
        if let (Some(a), Some(b)) = (txns[from].timestamp, txns[to].timestamp) {
            // A read-only transaction reading at exactly a commit's
            // timestamp sees it: wr may be equal, every other edge forward.
            let forward = if dep == Dep::Wr { a <= b } else { a < b };
            // A reader at `a` that missed a commit at `b` needs a < b,
            // which is the rw case above; equal timestamps of two
            // read-write transactions never happen.
            if !forward {
                anomalies.push(Anomaly::TimestampOrder { from, to, dep });
            }
        }
    }
    anomalies.extend(real_time(txns));
    anomalies.extend(stale_reads(txns, &writer));

    report.anomalies = anomalies;
    report
}

/// Cycles of the dependency graph: one per strongly connected component
/// with more than one transaction, named by the kinds of edge in it.
fn cycles(n: usize, edges: &HashSet<(usize, usize, Dep)>) -> Vec<Anomaly> {
    let mut out: Vec<Vec<(usize, Dep)>> = vec![Vec::new(); n];
    for &(a, b, d) in edges {
        out[a].push((b, d));
    }
    let components = strongly_connected(&out);
    let mut found = Vec::new();
    for component in components.into_iter().filter(|c| c.len() > 1) {
        let members: HashSet<usize> = component.iter().copied().collect();
        let deps: HashSet<Dep> = component
            .iter()
            .flat_map(|&a| {
                out[a]
                    .iter()
                    .filter(|(b, _)| members.contains(b))
                    .map(|(_, d)| *d)
            })
            .collect();
        let kind = if deps.contains(&Dep::Rw) {
            "G2 (anti-dependency cycle)"
        } else if deps.contains(&Dep::Wr) {
            "G1c (circular information flow)"
        } else {
            "G0 (write cycle)"
        };
        let mut txns = component;
        txns.sort_unstable();
        let mut deps: Vec<Dep> = deps.into_iter().collect();
        deps.sort_by_key(|d| *d as u8);
        found.push(Anomaly::Cycle { kind, txns, deps });
    }
    found
}

/// Tarjan's strongly connected components, without recursion (histories
/// have thousands of transactions).
fn strongly_connected(out: &[Vec<(usize, Dep)>]) -> Vec<Vec<usize>> {
    let n = out.len();
    let mut index = vec![usize::MAX; n];
    let mut low = vec![0usize; n];
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    let mut components = Vec::new();
    let mut next = 0;
    for root in 0..n {
        if index[root] != usize::MAX {
            continue;
        }
        // (node, next edge to look at)
        let mut work = vec![(root, 0usize)];
        while let Some(&mut (v, ref mut edge)) = work.last_mut() {
            if *edge == 0 && index[v] == usize::MAX {
                index[v] = next;
                low[v] = next;
                next += 1;
                stack.push(v);
                on_stack[v] = true;
            }
            if let Some(&(w, _)) = out[v].get(*edge) {
                *edge += 1;
                if index[w] == usize::MAX {
                    work.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            work.pop();
            if let Some(&(parent, _)) = work.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == index[v] {
                let mut component = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    component.push(w);
                    if w == v {
                        break;
                    }
                }
                components.push(component);
            }
        }
    }
    components
}

/// Committed transactions that started after another finished must have a
/// later timestamp. A sweep over completion times: for each transaction,
/// the largest timestamp of those that finished before it started.
fn real_time(txns: &[Txn]) -> Vec<Anomaly> {
    let mut done: Vec<(Nanos, Nanos, usize)> = txns
        .iter()
        .enumerate()
        .filter(|(_, t)| t.outcome == Outcome::Committed && !t.stale)
        .filter_map(|(i, t)| t.timestamp.map(|ts| (t.completed, ts, i)))
        .collect();
    done.sort_unstable();
    let mut started: Vec<(Nanos, Nanos, usize)> = txns
        .iter()
        .enumerate()
        .filter(|(_, t)| t.outcome == Outcome::Committed && !t.stale)
        .filter_map(|(i, t)| t.timestamp.map(|ts| (t.invoked, ts, i)))
        .collect();
    started.sort_unstable();
    let mut found = Vec::new();
    let mut max: Option<(Nanos, usize)> = None;
    let mut d = 0;
    for (invoked, ts, later) in started {
        while d < done.len() && done[d].0 < invoked {
            if max.is_none_or(|(m, _)| done[d].1 > m) {
                max = Some((done[d].1, done[d].2));
            }
            d += 1;
        }
        if let Some((m, earlier)) = max {
            // A read-only transaction may share the timestamp of the
            // commit it follows; a read-write one needs a later one.
            let reads_only = txns[later].ops.iter().all(|op| matches!(op, Op::Read(..)));
            if ts < m || (ts == m && !reads_only) {
                found.push(Anomaly::RealTimeOrder { earlier, later });
            }
        }
    }
    found
}

/// Stale reads see exactly the appends committed at or before their
/// timestamp (those of transactions with a known commit timestamp).
fn stale_reads(txns: &[Txn], writer: &HashMap<Elem, (usize, Key)>) -> Vec<Anomaly> {
    let mut found = Vec::new();
    // Each key's committed appends with their commit timestamps.
    let mut committed: HashMap<Key, Vec<(Nanos, Elem, usize)>> = HashMap::new();
    for (w, wt) in txns.iter().enumerate() {
        let (Outcome::Committed, Some(ts)) = (wt.outcome, wt.timestamp) else {
            continue;
        };
        for op in &wt.ops {
            if let Op::Append(k, e) = op {
                committed.entry(*k).or_default().push((ts, *e, w));
            }
        }
    }
    for (reader, t) in txns.iter().enumerate() {
        let (true, Outcome::Committed, Some(at)) = (t.stale, t.outcome, t.timestamp) else {
            continue;
        };
        for op in &t.ops {
            let Op::Read(k, Some(list)) = op else {
                continue;
            };
            for e in list {
                if let Some(ts) = writer.get(e).and_then(|(w, _)| txns[*w].timestamp) {
                    if ts > at {
                        found.push(Anomaly::StaleRead {
                            key: *k,
                            reader,
                            detail: format!("saw {e}, committed at {ts}, after the read's {at}"),
                        });
                    }
                }
            }
            let seen: HashSet<Elem> = list.iter().copied().collect();
            for &(ts, e, w) in committed.get(k).into_iter().flatten() {
                if ts <= at && !seen.contains(&e) {
                    found.push(Anomaly::StaleRead {
                        key: *k,
                        reader,
                        detail: format!(
                            "missed {e} of transaction {w}, committed at {ts}, before the read's {at}"
                        ),
                    });
                }
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A committed read-write transaction at timestamp `ts`, running over
    /// [ts*10, ts*10+5] on the client's clock.
    fn rw(ts: Nanos, ops: Vec<Op>) -> Txn {
        Txn {
            ops,
            outcome: Outcome::Committed,
            invoked: ts * 10,
            completed: ts * 10 + 5,
            timestamp: Some(ts),
            stale: false,
        }
    }

    fn read(k: Key, list: &[Elem]) -> Op {
        Op::Read(k, Some(list.to_vec()))
    }

    fn finals(lists: &[(Key, &[Elem])]) -> HashMap<Key, Vec<Elem>> {
        lists.iter().map(|(k, l)| (*k, l.to_vec())).collect()
    }

    #[test]
    fn a_serial_history_is_clean() {
        let txns = vec![
            rw(1, vec![read(1, &[]), Op::Append(1, 10)]),
            rw(
                2,
                vec![read(1, &[10]), Op::Append(1, 11), Op::Append(2, 20)],
            ),
            rw(3, vec![read(1, &[10, 11]), read(2, &[20])]),
        ];
        let r = check(&txns, &finals(&[(1, &[10, 11]), (2, &[20])]));
        assert!(r.ok(), "{:?}", r.anomalies);
        assert_eq!(r.committed, 3);
        assert!(r.edges >= 3);
        assert_eq!(r.appends_checked, 3);
    }

    #[test]
    fn a_write_skew_is_a_g2_cycle() {
        // Each reads both keys empty and appends to one: no serial order
        // explains both reads.
        let txns = vec![
            rw(1, vec![read(1, &[]), read(2, &[]), Op::Append(1, 10)]),
            rw(2, vec![read(1, &[]), read(2, &[]), Op::Append(2, 20)]),
        ];
        let r = check(&txns, &finals(&[(1, &[10]), (2, &[20])]));
        assert!(
            r.anomalies
                .iter()
                .any(|a| matches!(a, Anomaly::Cycle { kind, .. } if kind.starts_with("G2"))),
            "{:?}",
            r.anomalies
        );
    }

    #[test]
    fn circular_information_flow_is_g1c() {
        // Each reads the other's append: T0 -wr-> T1 -wr-> T0.
        let txns = vec![
            rw(1, vec![Op::Append(1, 10), read(2, &[20])]),
            rw(2, vec![Op::Append(2, 20), read(1, &[10])]),
        ];
        let r = check(&txns, &finals(&[(1, &[10]), (2, &[20])]));
        assert!(
            r.anomalies
                .iter()
                .any(|a| matches!(a, Anomaly::Cycle { kind, .. } if kind.starts_with("G1c"))),
            "{:?}",
            r.anomalies
        );
    }

    #[test]
    fn lost_and_aborted_and_intermediate_writes_are_found() {
        let mut failed = rw(2, vec![Op::Append(1, 11)]);
        failed.outcome = Outcome::Failed;
        let txns = vec![
            rw(
                1,
                vec![Op::Append(1, 10), Op::Append(1, 12), Op::Append(2, 20)],
            ),
            failed,
            // Reads the failed transaction's 11, and T0's intermediate 10.
            rw(3, vec![read(1, &[10, 11])]),
            rw(4, vec![read(1, &[10])]),
        ];
        // The final read lost T0's append to key 2.
        let r = check(&txns, &finals(&[(1, &[10, 11, 12]), (2, &[])]));
        let has = |f: fn(&Anomaly) -> bool| r.anomalies.iter().any(f);
        assert!(has(|a| matches!(a, Anomaly::AbortedRead { elem: 11, .. })));
        assert!(has(|a| matches!(
            a,
            Anomaly::IntermediateRead { elem: 10, .. }
        )));
        assert!(has(|a| matches!(
            a,
            Anomaly::LostAppend {
                key: 2,
                elem: 20,
                ..
            }
        )));
    }

    #[test]
    fn disagreeing_reads_and_duplicates_are_found() {
        let txns = vec![
            rw(1, vec![Op::Append(1, 10)]),
            rw(2, vec![Op::Append(1, 11)]),
            rw(3, vec![read(1, &[10, 11])]),
            rw(4, vec![read(1, &[11, 10])]),
        ];
        let r = check(&txns, &finals(&[(1, &[10, 11, 10])]));
        assert!(r
            .anomalies
            .iter()
            .any(|a| matches!(a, Anomaly::IncompatibleOrder { .. })));
        assert!(r
            .anomalies
            .iter()
            .any(|a| matches!(a, Anomaly::Duplicate { elem: 10, .. })));
    }

    #[test]
    fn timestamps_must_follow_dependencies_and_real_time() {
        // T1 read T0's append but has the earlier timestamp.
        let mut t0 = rw(5, vec![Op::Append(1, 10)]);
        t0.completed = 10;
        let mut t1 = rw(3, vec![read(1, &[10])]);
        t1.invoked = 20;
        t1.completed = 30;
        let r = check(&[t0, t1], &finals(&[(1, &[10])]));
        assert!(r
            .anomalies
            .iter()
            .any(|a| matches!(a, Anomaly::TimestampOrder { dep: Dep::Wr, .. })));
        assert!(r.anomalies.iter().any(|a| matches!(
            a,
            Anomaly::RealTimeOrder {
                earlier: 0,
                later: 1
            }
        )));
    }

    #[test]
    fn unknown_outcomes_may_go_either_way() {
        let mut maybe_a = rw(1, vec![Op::Append(1, 10)]);
        maybe_a.outcome = Outcome::Unknown;
        let mut maybe_b = rw(2, vec![Op::Append(1, 11)]);
        maybe_b.outcome = Outcome::Unknown;
        // 10 took effect, 11 did not: both fine.
        let r = check(
            &[maybe_a, maybe_b, rw(3, vec![read(1, &[10])])],
            &finals(&[(1, &[10])]),
        );
        assert!(r.ok(), "{:?}", r.anomalies);
        assert_eq!(r.unknown, 2);
    }

    #[test]
    fn stale_reads_see_exactly_their_snapshot() {
        let mut stale = rw(15, vec![read(1, &[10])]);
        stale.stale = true;
        let txns = vec![
            rw(10, vec![Op::Append(1, 10)]),
            rw(20, vec![Op::Append(1, 11)]),
            stale,
        ];
        assert!(check(&txns, &finals(&[(1, &[10, 11])])).ok());
        // Missing the append committed at 10, or seeing the one at 20.
        let mut early = txns.clone();
        early[2].ops = vec![read(1, &[])];
        assert!(check(&early, &finals(&[(1, &[10, 11])]))
            .anomalies
            .iter()
            .any(|a| matches!(a, Anomaly::StaleRead { .. })));
        let mut late = txns;
        late[2].ops = vec![read(1, &[10, 11])];
        assert!(check(&late, &finals(&[(1, &[10, 11])]))
            .anomalies
            .iter()
            .any(|a| matches!(a, Anomaly::StaleRead { .. })));
    }

    #[test]
    fn long_cycles_are_found_without_recursion() {
        // 50,000 transactions in a ww chain closed into a cycle by the
        // last reading... a chain T0 -> T1 -> ... that the final order
        // contradicts: every Ti appends to key 1, and T0 also read key 1
        // ending in the last element.
        let n = 50_000;
        let mut txns: Vec<Txn> = (0..n)
            .map(|i| rw(i as Nanos + 1, vec![Op::Append(1, i)]))
            .collect();
        txns[0].ops.push(read(1, &(0..n).collect::<Vec<_>>()));
        let r = check(&txns, &finals(&[(1, &(0..n).collect::<Vec<_>>())]));
        assert!(r
            .anomalies
            .iter()
            .any(|a| matches!(a, Anomaly::Cycle { txns, .. } if txns.len() == n as usize)));
    }
}
