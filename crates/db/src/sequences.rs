//! Bit-reversed sequences: unique, well-spread INT64 values.
//!
//! A sequence is a counter (starting at `start_with_counter`, default 1)
//! whose value is handed out bit-reversed: `((c as u64).reverse_bits() >> 1)`
//! keeps the sign bit 0 and sends successive counters to far-apart places in
//! the key space, so a key made of them never hotspots. Values inside the
//! sequence's skip range are passed over.
//!
//! Like Spanner's, these sequences are not transactional: a value handed out
//! to a transaction that later aborts is never handed out again. Counters
//! live in memory and are made durable in blocks: before handing out counter
//! `c`, the store records a high-water mark `>= c` in the metadata space, so
//! after a crash the counter resumes above every value possibly used (a gap,
//! never a duplicate; Spanner promises uniqueness, not contiguity).

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;
use rowtree_kv::{CommitGroup, Router};
use rowtree_schema::{Catalog, Sequence, SequenceId};

use crate::error::{Error, Result};

/// How many counters one durable reservation covers.
const RESERVE_BLOCK: u64 = 1000;

/// The bit-reversed value of counter `c`.
pub fn bit_reversed_positive(counter: u64) -> i64 {
    (counter.reverse_bits() >> 1) as i64
}

#[derive(Debug, Clone, Copy)]
struct State {
    /// The next counter to hand out.
    next: u64,
    /// Counters below this are covered by a durable reservation.
    reserved: u64,
    /// Whether any value was handed out (GET_INTERNAL_SEQUENCE_STATE is NULL before).
    used: bool,
}

/// The counters of every sequence of one database.
pub(crate) struct Sequences {
    /// Where the reservations are kept (the metadata space, through the
    /// router like every access to storage).
    router: Arc<Router>,
    states: Mutex<HashMap<SequenceId, State>>,
}

fn meta_key(id: SequenceId) -> Vec<u8> {
    let mut k = b"seq/".to_vec();
    k.extend_from_slice(&id.to_be_bytes());
    k
}

impl Sequences {
    pub fn new(router: Arc<Router>) -> Sequences {
        Sequences {
            router,
            states: Mutex::new(HashMap::new()),
        }
    }

    fn load(&self, seq: &Sequence) -> Result<State> {
        let stored = self.router.meta_get(&meta_key(seq.id))?;
        let start = seq.start_with_counter.max(1) as u64;
        Ok(match stored {
            Some(bytes) if bytes.len() == 9 => {
                let mut b = [0u8; 8];
                b.copy_from_slice(&bytes[..8]);
                let mark = u64::from_be_bytes(b);
                State {
                    next: mark.max(start),
                    reserved: mark,
                    used: bytes[8] == 1,
                }
            }
            _ => State {
                next: start,
                reserved: 0,
                used: false,
            },
        })
    }

    fn persist(&self, id: SequenceId, mark: u64, used: bool) -> Result<()> {
        // Through the commit path, so that in a cluster a reservation is
        // replicated and a new leader never hands out a reserved value again.
        self.router.write_commits(CommitGroup::meta(vec![(
            meta_key(id),
            Some(stored_state(mark, used)),
        )]))?;
        Ok(())
    }

    /// The next value of `name`.
    pub fn next_value(&self, catalog: &Catalog, name: &str) -> Result<i64> {
        let seq = catalog
            .sequence(name)
            .ok_or_else(|| Error::not_found(format!("Sequence not found: {name}")))?;
        let mut states = self.states.lock();
        let state = match states.get(&seq.id) {
            Some(s) => *s,
            None => self.load(seq)?,
        };
        let mut s = state;
        loop {
            let c = s.next;
            if c == u64::MAX >> 1 {
                return Err(Error::OutOfRange {
                    message: format!("Sequence {name} is exhausted"),
                });
            }
            s.next += 1;
            let v = bit_reversed_positive(c);
            let skipped = seq.skip_range.is_some_and(|(lo, hi)| lo <= v && v <= hi);
            if !skipped {
                if s.next > s.reserved {
                    let mark = s.next + RESERVE_BLOCK;
                    self.persist(seq.id, mark, true)?;
                    s.reserved = mark;
                }
                s.used = true;
                states.insert(seq.id, s);
                return Ok(v);
            }
        }
    }

    /// GET_INTERNAL_SEQUENCE_STATE: the last counter handed out, or `None`.
    pub fn state(&self, catalog: &Catalog, name: &str) -> Result<Option<i64>> {
        let seq = catalog
            .sequence(name)
            .ok_or_else(|| Error::not_found(format!("Sequence not found: {name}")))?;
        let mut states = self.states.lock();
        let s = match states.get(&seq.id) {
            Some(s) => *s,
            None => {
                let s = self.load(seq)?;
                states.insert(seq.id, s);
                s
            }
        };
        Ok(s.used.then_some(s.next as i64 - 1))
    }

    /// Applies a schema change's sequence changes: `commit` must write the
    /// metadata writes it is given durably (with the statement's log entry);
    /// then the counters in memory follow. They stay locked throughout, so
    /// no value is handed out between the two.
    pub fn change(
        &self,
        changes: &[SequenceChange],
        commit: impl FnOnce(Vec<(Vec<u8>, Option<Vec<u8>>)>) -> Result<()>,
    ) -> Result<()> {
        let mut states = self.states.lock();
        let writes = changes
            .iter()
            .map(|change| match *change {
                SequenceChange::Reset { id, counter } => {
                    (meta_key(id), Some(stored_state(counter, false)))
                }
                SequenceChange::Drop(id) => (meta_key(id), None),
            })
            .collect();
        commit(writes)?;
        for change in changes {
            match *change {
                SequenceChange::Reset { id, counter } => {
                    states.insert(
                        id,
                        State {
                            next: counter,
                            reserved: counter,
                            used: false,
                        },
                    );
                }
                SequenceChange::Drop(id) => {
                    states.remove(&id);
                }
            }
        }
        Ok(())
    }
}

/// A change of a sequence's stored state made by a schema change.
#[derive(Debug, Clone, Copy)]
pub(crate) enum SequenceChange {
    /// Restart the counter (CREATE SEQUENCE, RESTART COUNTER WITH).
    Reset { id: SequenceId, counter: u64 },
    /// Forget a dropped sequence.
    Drop(SequenceId),
}

/// The stored form of a sequence's state: the high-water mark, then whether
/// a value was handed out.
fn stored_state(mark: u64, used: bool) -> Vec<u8> {
    let mut v = mark.to_be_bytes().to_vec();
    v.push(u8::from(used));
    v
}

#[cfg(test)]
mod tests {
    use super::bit_reversed_positive;

    #[test]
    fn spec_values() {
        assert_eq!(bit_reversed_positive(1), 4611686018427387904);
        assert_eq!(bit_reversed_positive(3), 6917529027641081856);
        assert_eq!(bit_reversed_positive(6), 3458764513820540928);
        assert_eq!(bit_reversed_positive(101), 5980780305148018688);
    }
}
