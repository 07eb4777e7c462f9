//! The schema gate: commits pass it shared, a schema change exclusively.
//!
//! A commit resolves its mutations against one schema (which indexes to write, which
//! constraints to check) and must be durable before the schema can change, or a DDL
//! statement that, say, backfills a new index could miss a write that was resolved
//! without it. So a commit holds the gate shared from resolution until its writes are
//! durable, and a DDL statement holds it exclusively while it applies.
//!
//! Why not a plain read-write lock: a commit now waits for durability in an asynchronous
//! task ([`crate::transaction::PendingCommit`]), possibly moved between threads, and if
//! that task is dropped mid-wait the gate must stay held until the commit, which proceeds
//! anyway, is durable. So the shared hold is an owned, `Send` value
//! ([`SharedPass`]) that can travel with the commit (and even be released by the commit
//! pipeline's thread). A waiting schema change keeps new commits out, so DDL is not
//! starved by a steady stream of commits.

use std::sync::Arc;

use parking_lot::{Condvar, Mutex};

#[derive(Default)]
struct State {
    /// Commits holding the gate.
    shared: usize,
    /// A schema change holds the gate.
    exclusive: bool,
    /// Schema changes waiting for it (new commits wait behind them).
    waiting_exclusive: usize,
}

/// The gate between commits and schema changes (see the module docs).
#[derive(Default)]
pub(crate) struct SchemaGate {
    state: Mutex<State>,
    changed: Condvar,
}

/// A commit's shared hold of the gate; dropping it lets go.
pub(crate) struct SharedPass {
    gate: Arc<SchemaGate>,
}

/// A schema change's exclusive hold of the gate; dropping it lets go.
pub(crate) struct ExclusivePass<'a> {
    gate: &'a SchemaGate,
}

impl SchemaGate {
    /// Passes shared, waiting while a schema change holds or waits for the gate.
    pub fn shared(self: &Arc<Self>) -> SharedPass {
        let mut state = self.state.lock();
        while state.exclusive || state.waiting_exclusive > 0 {
            self.changed.wait(&mut state);
        }
        state.shared += 1;
        SharedPass { gate: self.clone() }
    }

    /// Passes shared if that needs no waiting.
    pub fn try_shared(self: &Arc<Self>) -> Option<SharedPass> {
        let mut state = self.state.lock();
        if state.exclusive || state.waiting_exclusive > 0 {
            return None;
        }
        state.shared += 1;
        Some(SharedPass { gate: self.clone() })
    }

    /// Passes exclusively, once every commit holding the gate has let go.
    pub fn exclusive(&self) -> ExclusivePass<'_> {
        let mut state = self.state.lock();
        state.waiting_exclusive += 1;
        while state.exclusive || state.shared > 0 {
            self.changed.wait(&mut state);
        }
        state.waiting_exclusive -= 1;
        state.exclusive = true;
        ExclusivePass { gate: self }
    }
}

impl Drop for SharedPass {
    fn drop(&mut self) {
        let mut state = self.gate.state.lock();
        state.shared -= 1;
        if state.shared == 0 && state.waiting_exclusive > 0 {
            drop(state);
            self.gate.changed.notify_all();
        }
    }
}

impl Drop for ExclusivePass<'_> {
    fn drop(&mut self) {
        self.gate.state.lock().exclusive = false;
        self.gate.changed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Duration;

    #[test]
    fn shared_passes_coexist_and_keep_a_schema_change_out() {
        let gate = Arc::new(SchemaGate::default());
        let a = gate.shared();
        let b = gate.try_shared().expect("no schema change: no waiting");
        let changed = Arc::new(AtomicBool::new(false));
        let ddl = {
            let (gate, changed) = (gate.clone(), changed.clone());
            std::thread::spawn(move || {
                let _pass = gate.exclusive();
                changed.store(true, Ordering::SeqCst);
            })
        };
        std::thread::sleep(Duration::from_millis(20));
        assert!(!changed.load(Ordering::SeqCst));
        // A waiting schema change keeps new commits out.
        assert!(gate.try_shared().is_none());
        // The last shared pass may be dropped on another thread.
        drop(a);
        std::thread::spawn(move || drop(b)).join().unwrap();
        ddl.join().unwrap();
        assert!(changed.load(Ordering::SeqCst));
        assert!(gate.try_shared().is_some());
    }
}
