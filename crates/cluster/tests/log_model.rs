//! The log store against a model: random sequences of the operations
//! openraft makes (appends, truncations, purges, votes) and restarts, on
//! a real fjall engine, after each of which the store must say exactly
//! what a plain in-memory log says.

use std::collections::BTreeMap;

use openraft::storage::{IOFlushed, RaftLogReader, RaftLogStorage};
use openraft::type_config::TypeConfigExt;
use openraft::EntryPayload;
use proptest::prelude::*;
use rowtree_cluster::raft::{
    to_raft_log_id, Entry, GroupId, LogStore, RaftLogId, TypeConfig, Vote,
};
use rowtree_cluster::{Command, LogId};

#[derive(Debug, Clone)]
enum Op {
    /// Append this many entries after the last one, in the current term.
    Append(u8),
    /// A new term (the entries after it are the new leader's).
    NewTerm,
    /// Keep the first `fraction` of the present entries, drop the rest.
    Truncate(prop::sample::Index),
    /// Purge the first `fraction` of the present entries.
    Purge(prop::sample::Index),
    Vote(u64, bool),
    /// Close the store and open it again.
    Restart,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (1u8..6).prop_map(Op::Append),
        1 => Just(Op::NewTerm),
        1 => any::<prop::sample::Index>().prop_map(Op::Truncate),
        1 => any::<prop::sample::Index>().prop_map(Op::Purge),
        1 => (1u64..5, any::<bool>()).prop_map(|(n, c)| Op::Vote(n, c)),
        1 => Just(Op::Restart),
    ]
}

fn entry(term: u64, index: u64) -> Entry {
    openraft::Entry {
        log_id: to_raft_log_id(LogId::new(term, index)),
        payload: if index.is_multiple_of(3) {
            EntryPayload::Blank
        } else {
            EntryPayload::Normal(Command::ClosedTs(term * 1000 + index))
        },
    }
}

#[derive(Default)]
struct Model {
    entries: BTreeMap<u64, Entry>,
    purged: Option<RaftLogId>,
    vote: Option<Vote>,
    term: u64,
}

impl Model {
    fn next_index(&self) -> u64 {
        match (self.entries.keys().next_back(), self.purged) {
            (Some(&last), _) => last + 1,
            (None, Some(p)) => p.index + 1,
            (None, None) => 0,
        }
    }
}

async fn check(store: &LogStore, model: &Model) -> Result<(), TestCaseError> {
    let mut log = store.group(GroupId(3));
    let entries = log.try_get_log_entries(..).await.unwrap();
    prop_assert_eq!(
        &entries,
        &model.entries.values().cloned().collect::<Vec<_>>()
    );
    let state = log.get_log_state().await.unwrap();
    prop_assert_eq!(state.last_purged_log_id, model.purged);
    let last = model
        .entries
        .values()
        .next_back()
        .map(|e| e.log_id)
        .or(model.purged);
    prop_assert_eq!(state.last_log_id, last);
    prop_assert_eq!(log.read_vote().await.unwrap(), model.vote);
    // A neighbouring group, written alongside, is untouched.
    let other = store
        .group(GroupId(4))
        .try_get_log_entries(..)
        .await
        .unwrap();
    prop_assert_eq!(other, vec![entry(1, 0)]);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn the_log_store_behaves_as_a_plain_log(ops in prop::collection::vec(op(), 1..40)) {
        let dir = tempfile::tempdir().unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let mut store = LogStore::open(dir.path()).unwrap();
            let append = |store: &LogStore, group: u64, entries: Vec<Entry>| {
                let mut log = store.group(GroupId(group));
                async move {
                    let (tx, rx) = TypeConfig::oneshot();
                    log.append(entries, IOFlushed::signal(tx)).await.unwrap();
                    rx.await.unwrap().unwrap();
                }
            };
            append(&store, 4, vec![entry(1, 0)]).await;
            let mut model = Model { term: 1, ..Model::default() };
            for op in ops {
                let mut log = store.group(GroupId(3));
                match op {
                    Op::Append(n) => {
                        let from = model.next_index();
                        let new: Vec<_> = (from..from + n as u64).map(|i| entry(model.term, i)).collect();
                        for e in &new {
                            model.entries.insert(e.log_id.index, e.clone());
                        }
                        append(&store, 3, new).await;
                    }
                    Op::NewTerm => model.term += 1,
                    Op::Truncate(at) => {
                        // Truncate after one of the present entries, or
                        // (openraft's `None`) everything.
                        let keys: Vec<u64> = model.entries.keys().copied().collect();
                        if keys.is_empty() {
                            continue;
                        }
                        let i = at.index(keys.len() + 1);
                        let after = (i > 0).then(|| model.entries[&keys[i - 1]].log_id);
                        if after.is_none() && model.purged.is_some() {
                            // openraft never truncates into purged entries.
                            continue;
                        }
                        log.truncate_after(after).await.unwrap();
                        model.entries.retain(|&k, _| after.is_some_and(|a| k <= a.index));
                    }
                    Op::Purge(at) => {
                        let keys: Vec<u64> = model.entries.keys().copied().collect();
                        if keys.is_empty() {
                            continue;
                        }
                        let id = model.entries[&keys[at.index(keys.len())]].log_id;
                        log.purge(id).await.unwrap();
                        model.entries.retain(|&k, _| k > id.index);
                        model.purged = Some(id);
                    }
                    Op::Vote(term, committed) => {
                        let vote = openraft::Vote {
                            leader_id: openraft::impls::leader_id_std::LeaderId { term, voted_for: 2 },
                            committed,
                        };
                        log.save_vote(&vote).await.unwrap();
                        model.vote = Some(vote);
                    }
                    Op::Restart => {
                        drop(log);
                        drop(store);
                        store = LogStore::open(dir.path()).unwrap();
                    }
                }
                check(&store, &model).await?;
            }
            Ok::<(), TestCaseError>(())
        })?;
    }
}
