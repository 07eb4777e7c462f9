//! After each restart: everything read back in one snapshot, every commit
//! sent so far judged against it (acknowledged ones whole, the others all
//! or nothing), and `A` compared with its index.

use std::collections::{BTreeMap, BTreeSet};

use super::Run;
use crate::client::{Client, ResultSet, Selector, Statement, TxnMode};
use crate::error::Result;
use crate::wire::{KeySet, Value};

/// The rows read back after a restart.
struct Snapshot {
    /// `A`: id → (writer, payload).
    a: BTreeMap<i64, (Option<i64>, Option<String>)>,
    /// `B`: id → payload.
    b: BTreeMap<i64, Option<String>>,
    /// Index mismatches between `A` and `AByWriter` (SQL and Read paths).
    index_mismatches: u64,
}

impl Run {
    /// Reads everything back and judges every commit sent so far.
    pub(super) async fn verify(&mut self, cycle: usize) -> Result<()> {
        let session = self.client.create_session(&self.database).await?;
        let snap = snapshot(&self.client, &session).await?;
        self.client.delete_session(&session).await?;
        self.report.rows = snap.a.len() as u64;
        self.report.index_mismatches += snap.index_mismatches;

        let mut written = BTreeSet::new();
        for (i, r) in self.records.iter().enumerate() {
            let in_a = r.ids.iter().filter(|id| snap.a.contains_key(id)).count();
            let in_b = r.ids.iter().filter(|id| snap.b.contains_key(id)).count();
            let whole = in_a == r.ids.len() && in_b == r.ids.len();
            let none = in_a == 0 && in_b == 0;
            written.extend(r.ids.iter().copied());
            if r.cycle == cycle {
                if !whole && !none {
                    self.report.half_applied += 1;
                }
                if r.acked {
                    if whole {
                        self.report.verified += 1;
                    }
                } else if r.aborted {
                    if !none {
                        self.report.aborted_applied += 1;
                    }
                } else {
                    self.report.in_doubt += 1;
                    if whole {
                        self.report.in_doubt_applied += 1;
                    }
                }
            }
            if r.acked && !whole && self.lost.insert(i) {
                self.report.lost += 1;
            }
        }
        // Rows whose two copies disagree: an update applied to one table only.
        for (id, (_, payload)) in &snap.a {
            if snap.b.get(id).is_some_and(|p| p != payload) {
                self.report.half_applied += 1;
            }
        }
        let phantoms = snap
            .a
            .keys()
            .chain(snap.b.keys())
            .filter(|id| !written.contains(id))
            .collect::<BTreeSet<_>>()
            .len();
        // Counted fresh each cycle: report the latest count.
        self.report.phantoms = phantoms as u64;
        Ok(())
    }
}

/// `A`, `B`, and `A` through its index, in one read-only snapshot.
async fn snapshot(client: &Client, session: &str) -> Result<Snapshot> {
    let txn = client.begin(session, TxnMode::ReadOnlyStrong).await?;
    let at = || Selector::Id(txn.clone());
    let a_rows = client
        .streaming_read(
            session,
            "A",
            None,
            &["Id", "Writer", "Payload"],
            &KeySet::All,
            at(),
        )
        .await?;
    let b_rows = client
        .streaming_read(session, "B", None, &["Id", "Payload"], &KeySet::All, at())
        .await?;
    let by_sql = client
        .execute_streaming_sql(
            session,
            &Statement::new("SELECT Id, Writer FROM A@{FORCE_INDEX=AByWriter}"),
            at(),
        )
        .await?;
    let by_read = client
        .streaming_read(
            session,
            "A",
            Some("AByWriter"),
            &["Id", "Writer"],
            &KeySet::All,
            at(),
        )
        .await?;
    let text = |v: &Value| v.as_str().map(str::to_string);
    let mut a = BTreeMap::new();
    for r in &a_rows.rows {
        if let Some(id) = r[0].as_i64() {
            a.insert(id, (r[1].as_i64(), text(&r[2])));
        }
    }
    let mut b = BTreeMap::new();
    for r in &b_rows.rows {
        if let Some(id) = r[0].as_i64() {
            b.insert(id, text(&r[1]));
        }
    }
    let table: BTreeSet<(i64, Option<i64>)> = a.iter().map(|(id, (w, _))| (*id, *w)).collect();
    let pairs = |rs: &ResultSet| -> BTreeSet<(i64, Option<i64>)> {
        rs.rows
            .iter()
            .filter_map(|r| Some((r[0].as_i64()?, r[1].as_i64())))
            .collect()
    };
    let index_mismatches = [pairs(&by_sql), pairs(&by_read)]
        .iter()
        .map(|idx| table.symmetric_difference(idx).count() as u64)
        .sum::<u64>()
        // Duplicated entries would vanish in a set: compare counts too.
        + by_sql.rows.len().abs_diff(a.len()) as u64
        + by_read.rows.len().abs_diff(a.len()) as u64;
    Ok(Snapshot {
        a,
        b,
        index_mismatches,
    })
}
