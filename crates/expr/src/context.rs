//! What an expression needs from outside the row: [`EvalContext`].

use std::rc::Rc;

use rowtree_types::{Timestamp, Uuid, Value};

use crate::membership::{InSet, SetId};

use crate::Result;

/// Everything evaluation needs that is not a pure function of the row.
///
/// Injected by the caller so that clocks, sequences and commit timestamps are
/// deterministic in tests and owned by the transaction layer in production.
pub trait EvalContext {
    /// The statement's `CURRENT_TIMESTAMP()`: one fixed instant per statement.
    fn now(&self) -> Timestamp;

    /// `GET_NEXT_SEQUENCE_VALUE(SEQUENCE s)`: advances the sequence and
    /// returns its next (bit-reversed) value.
    fn next_sequence_value(&mut self, sequence: &str) -> Result<i64>;

    /// `GET_INTERNAL_SEQUENCE_STATE(SEQUENCE s)`: the sequence's counter, or
    /// `None` if no value has been handed out yet.
    fn sequence_state(&mut self, sequence: &str) -> Result<Option<i64>>;

    /// `PENDING_COMMIT_TIMESTAMP()`: the db layer returns a placeholder value
    /// that it replaces with the commit timestamp at commit.
    fn pending_commit_timestamp(&mut self) -> Result<Value>;

    /// `GENERATE_UUID()`: a random (version 4) UUID in its 36-character
    /// lowercase text form. Override to make tests deterministic.
    fn generate_uuid(&mut self) -> String {
        uuid::Uuid::new_v4().to_string()
    }

    /// `NEW_UUID()`: a random (version 4, RFC 4122 variant) UUID value.
    /// Override to make tests deterministic.
    fn new_uuid(&mut self) -> Uuid {
        Uuid::from_u128(uuid::Uuid::new_v4().as_u128())
    }

    /// The value of query parameter `@name`, if bound.
    fn param(&self, name: &str) -> Option<Value> {
        let _ = name;
        None
    }

    /// The value of subquery `id` (an id handed out by
    /// [`crate::Scope::bind_subquery`]) for the outer row `row`: the scalar
    /// (or NULL) of a scalar subquery, a BOOL for `EXISTS`, an ARRAY for
    /// `ARRAY(SELECT ..)` and for the candidates of `IN (SELECT ..)`.
    fn subquery(&mut self, id: usize, row: &[Value]) -> Result<Value> {
        let _ = (id, row);
        Err(crate::Error::invalid("subqueries are not supported here"))
    }

    /// The set of candidates kept for the row-independent `IN` `id`
    /// ([`crate::InSet`]), if one was kept.
    fn in_set(&self, id: SetId) -> Option<Rc<InSet>> {
        let _ = id;
        None
    }

    /// Whether this context keeps `IN` sets for the statement (then `IN`
    /// builds one on its first evaluation and gives it to
    /// [`EvalContext::keep_in_set`]). By default it does not, and every
    /// evaluation compares with the candidates in turn.
    fn keeps_in_sets(&self) -> bool {
        false
    }

    /// Keeps `set` for the `IN` `id` until the statement ends; may refuse
    /// it past the statement's memory budget.
    fn keep_in_set(&mut self, id: SetId, set: Rc<InSet>) -> Result<()> {
        let _ = (id, set);
        Ok(())
    }
}
