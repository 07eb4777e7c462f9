//! Statements: SQL queries and DML, run in the transaction a request
//! selected.
//!
//! [`run_statement`] is the one place a statement runs: in a snapshot, a
//! held read-only or read-write transaction (a statement aborted by
//! wound-wait ends its transaction, freeing its locks), or a partitioned
//! DML transaction (`partitioned.rs`). It hands rows to a [`RowOut`] as the
//! SQL executor produces them and returns the row type and statistics
//! (plan, profile, row count). ExecuteSql and ExecuteStreamingSql
//! ([`execute`]), ExecuteBatchDml ([`batch_dml`]) and PartitionQuery
//! ([`partition_query`]) are built on it. When ExecuteSql or
//! ExecuteBatchDml began a read-write transaction and fails before
//! returning it, the transaction is forgotten: the client begins one
//! explicitly when it retries.

use googleapis_tonic_google_spanner_v1::google::spanner::v1 as pb;
use rowtree_sql::{ExecuteResult, QueryMode, TxnRef};
use rowtree_types::{Code, Type, Value};
use tonic::Status;

use super::partitioned::run_partitioned_dml;
use super::results::{decode_token, Collect, Outcome, RowOut};
use super::selectors::Selected;
use super::sessions::SessionState;
use super::transactions::{end_aborted, TxnState};
use crate::convert;
use crate::status;

/// The SQL layer's mode for a request's `query_mode`: PLAN plans only;
/// PROFILE and the WITH_STATS modes run with statistics.
fn query_mode(mode: i32) -> QueryMode {
    match pb::execute_sql_request::QueryMode::try_from(mode) {
        Ok(pb::execute_sql_request::QueryMode::Plan) => QueryMode::Plan,
        Ok(pb::execute_sql_request::QueryMode::Profile)
        | Ok(pb::execute_sql_request::QueryMode::WithStats)
        | Ok(pb::execute_sql_request::QueryMode::WithPlanAndStats) => QueryMode::Profile,
        _ => QueryMode::Normal,
    }
}

/// A described plan as Spanner's plan nodes (see [`crate::query_plan`]).
fn plan_pb(tree: &rowtree_sql::PlanTree) -> pb::QueryPlan {
    crate::query_plan::to_pb(tree)
}

/// A profile's statistics as the `query_stats` Spanner returns (strings,
/// times in milliseconds).
fn query_stats_pb(stats: &rowtree_sql::QueryStats) -> prost_types::Struct {
    let s = |v: String| prost_types::Value {
        kind: Some(prost_types::value::Kind::StringValue(v)),
    };
    let mut fields = std::collections::BTreeMap::new();
    fields.insert(
        "rows_returned".to_string(),
        s(stats.rows_returned.to_string()),
    );
    fields.insert(
        "rows_scanned".to_string(),
        s(stats.rows_scanned.to_string()),
    );
    fields.insert(
        "splits_touched".to_string(),
        s(stats.splits_touched.to_string()),
    );
    fields.insert(
        "elapsed_time".to_string(),
        s(format!("{:.2} msecs", stats.elapsed.as_secs_f64() * 1000.0)),
    );
    fields.insert(
        "cpu_time".to_string(),
        s(format!("{:.2} msecs", stats.elapsed.as_secs_f64() * 1000.0)),
    );
    prost_types::Struct {
        fields: fields.into_iter().collect(),
    }
}

/// Runs a statement in `selected`, sending rows to `out`.
pub(super) fn run_statement(
    session: &SessionState,
    selected: &mut Selected,
    sql: &str,
    params: &rowtree_sql::Params,
    mode: QueryMode,
    out: &mut dyn RowOut,
) -> Result<Outcome, Status> {
    let mut failed: Option<Status> = None;
    let mut sink = |columns: &[(String, Type)], row: Vec<Value>| {
        if failed.is_none() {
            if let Err(e) = out.row(columns, row) {
                failed = Some(e);
            }
        }
        failed.is_none()
    };
    let result = match selected {
        Selected::Snapshot { ro, .. } => {
            rowtree_sql::execute_in(TxnRef::ReadOnly(ro), sql, params, mode, Some(&mut sink))
        }
        Selected::Held { id, slot, .. } => {
            let mut state = slot.state.lock();
            match &mut *state {
                TxnState::ReadOnly(ro) => rowtree_sql::execute_in(
                    TxnRef::ReadOnly(ro),
                    sql,
                    params,
                    mode,
                    Some(&mut sink),
                ),
                TxnState::ReadWrite(txn) => {
                    let r = rowtree_sql::execute_in(
                        TxnRef::ReadWrite(txn),
                        sql,
                        params,
                        mode,
                        Some(&mut sink),
                    );
                    if let Err(e) = &r {
                        if e.code == Code::Aborted {
                            end_aborted(&mut state, &e.message);
                        }
                    }
                    r
                }
                TxnState::PartitionedDml => {
                    drop(state);
                    return run_partitioned_dml(&session.db, sql, params).map(|count| Outcome {
                        columns: Vec::new(),
                        stats: Some(pb::ResultSetStats {
                            row_count: Some(pb::result_set_stats::RowCount::RowCountLowerBound(
                                count as i64,
                            )),
                            ..Default::default()
                        }),
                    });
                }
                TxnState::Ended(code, message) => {
                    let _ = id;
                    return Err(status::status(*code, message.clone()));
                }
            }
        }
    };
    if let Some(e) = failed {
        return Err(e);
    }
    let executed = result.map_err(status::from_sql)?;
    let plan = executed.plan.as_ref().map(plan_pb);
    Ok(match executed.result {
        ExecuteResult::Query(q) => Outcome {
            columns: q.columns,
            stats: Some(pb::ResultSetStats {
                query_plan: plan,
                query_stats: (mode == QueryMode::Profile).then(|| query_stats_pb(&q.stats)),
                row_count: None,
            }),
        },
        ExecuteResult::Dml {
            row_count,
            returning,
        } => {
            let columns = match returning {
                Some(r) => {
                    for row in r.rows {
                        out.row(&r.columns, row)?;
                    }
                    r.columns
                }
                None => Vec::new(),
            };
            Outcome {
                columns,
                stats: Some(pb::ResultSetStats {
                    query_plan: plan,
                    query_stats: None,
                    row_count: Some(pb::result_set_stats::RowCount::RowCountExact(
                        row_count as i64,
                    )),
                }),
            }
        }
        ExecuteResult::Ddl | ExecuteResult::Transaction(_) => {
            return Err(Status::invalid_argument(
                "Only queries and DML are allowed here",
            ))
        }
    })
}

/// Runs a statement for ExecuteSql / ExecuteStreamingSql: resolves the
/// transaction, executes, and on failure forgets a transaction this
/// request began.
pub(super) fn execute(
    session: &SessionState,
    r: &pb::ExecuteSqlRequest,
    out: &mut dyn RowOut,
) -> Result<(Outcome, Option<pb::Transaction>), Status> {
    let params = convert::params_from_proto(r.params.as_ref(), &r.param_types)?;
    let (_, pinned) = decode_token(&r.resume_token)?;
    let mut selected = session.select_pinned(r.transaction.as_ref(), pinned)?;
    out.dialect(session.db.dialect());
    match &selected {
        Selected::Held { begun, .. } => out.begun(begun.as_ref()),
        Selected::Snapshot { report, ro } => {
            out.begun(report.as_ref());
            out.snapshot(ro.read_timestamp());
        }
    }
    let result = run_statement(
        session,
        &mut selected,
        &r.sql,
        &params,
        query_mode(r.query_mode),
        out,
    );
    match selected {
        Selected::Held { id, begun, slot } => match result {
            Ok(o) => Ok((o, begun)),
            Err(e) => {
                if begun.is_some() {
                    if let TxnState::ReadWrite(_) = &*slot.state.lock() {
                        session.forget(&id);
                    }
                }
                Err(e)
            }
        },
        Selected::Snapshot { report, .. } => result.map(|o| (o, report)),
    }
}

/// ExecuteBatchDml: the statements in order, in a read-write transaction,
/// stopping at the first that fails (its status is the response's; the
/// result sets before it are returned).
pub(super) fn batch_dml(
    session: &SessionState,
    r: &pb::ExecuteBatchDmlRequest,
) -> Result<pb::ExecuteBatchDmlResponse, Status> {
    if r.statements.is_empty() {
        return Err(Status::invalid_argument(
            "No statements in batch DML request",
        ));
    }
    let mut selected = session.select(r.transaction.as_ref())?;
    let (id, begun) =
        match &selected {
            Selected::Held { id, begun, slot } => {
                if !matches!(
                    &*slot.state.lock(),
                    TxnState::ReadWrite(_) | TxnState::Ended(..)
                ) {
                    return Err(Status::invalid_argument(
                        "Batch DML runs in read-write transactions only",
                    ));
                }
                (id.clone(), begun.clone())
            }
            Selected::Snapshot { .. } => return Err(Status::invalid_argument(
                "DML statements may not be performed in single-use transactions, to avoid replay",
            )),
        };
    let mut result_sets = Vec::new();
    let mut failure = None;
    for (i, st) in r.statements.iter().enumerate() {
        let outcome =
            convert::params_from_proto(st.params.as_ref(), &st.param_types).and_then(|params| {
                let mut rows = Collect::default();
                run_statement(
                    session,
                    &mut selected,
                    &st.sql,
                    &params,
                    QueryMode::Normal,
                    &mut rows,
                )
                .map(|o| (o, rows))
            });
        match outcome {
            Ok((o, rows)) => {
                let metadata = if i == 0 {
                    Some(pb::ResultSetMetadata {
                        transaction: begun.clone(),
                        ..convert::metadata(&o.columns, session.db.dialect())
                    })
                } else {
                    Some(convert::metadata(&o.columns, session.db.dialect()))
                };
                result_sets.push(pb::ResultSet {
                    metadata,
                    rows: rows.rows,
                    stats: o.stats,
                    ..Default::default()
                });
            }
            Err(e) => {
                failure = Some(e);
                break;
            }
        }
    }
    if failure.is_some() && result_sets.is_empty() && begun.is_some() {
        // The transaction this request began is not returned: the
        // client begins one explicitly when it retries.
        session.forget(&id);
    }
    Ok(pb::ExecuteBatchDmlResponse {
        result_sets,
        status: Some(
            failure
                .as_ref()
                .map(status::to_rpc)
                .unwrap_or_else(status::rpc_ok),
        ),
        precommit_token: None,
    })
}

/// PartitionQuery: checks the query by planning it in the transaction and
/// answers one partition, the whole query (Spanner may return any number).
pub(super) fn partition_query(
    session: &SessionState,
    r: &pb::PartitionQueryRequest,
) -> Result<pb::PartitionResponse, Status> {
    let params = convert::params_from_proto(r.params.as_ref(), &r.param_types)?;
    let mut selected = session.select(r.transaction.as_ref())?;
    let (txn, begun) = match &selected {
        Selected::Held { id, begun, .. } => (id.clone(), begun.clone()),
        Selected::Snapshot { .. } => {
            return Err(Status::invalid_argument(
                "PartitionQuery needs a read-only transaction id or begin",
            ))
        }
    };
    run_statement(
        session,
        &mut selected,
        &r.sql,
        &params,
        QueryMode::Plan,
        &mut Collect::default(),
    )?;
    // One partition: the whole query (Spanner may return any number).
    Ok(pb::PartitionResponse {
        partitions: vec![pb::Partition {
            partition_token: [b"q".as_slice(), &txn].concat(),
        }],
        transaction: begun,
    })
}
