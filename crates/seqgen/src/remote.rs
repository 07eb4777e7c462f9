//! Any Spanner-API endpoint as a [`Store`]: `rowtree serve`, Google's
//! emulator, or a Spanner instance reached the emulator's way (plain gRPC,
//! no credentials).
//!
//! It speaks through `gcloud-spanner`, an existing Rust client library for
//! Spanner, unmodified: Rowtree serves Spanner's gRPC API, so a client
//! written for Spanner is the honest test that the generators work against
//! any endpoint. The generators are synchronous (worker threads, as the
//! article's tool uses), so a [`Remote`] owns a small Tokio runtime and
//! blocks on each call; call it from ordinary threads, not from inside an
//! async task.
//!
//! A transaction attempt is `BeginTransaction`, the reads, and `Commit`
//! with the buffered mutations (or `Rollback`). An attempt that the server
//! aborts (a lost lock conflict) is retried by [`Store::run`] with the
//! same backoff as the embedded store.

use gcloud_gax::conn::Environment;
use gcloud_gax::grpc::{Code as GrpcCode, Status};
use gcloud_googleapis::spanner::admin::database::v1::{
    CreateDatabaseRequest, UpdateDatabaseDdlRequest,
};
use gcloud_googleapis::spanner::admin::instance::v1::{CreateInstanceRequest, Instance};
use gcloud_spanner::admin::client::Client as AdminClient;
use gcloud_spanner::admin::AdminClientConfig;
use gcloud_spanner::client::{Client, ClientConfig, Error as ClientError};
use gcloud_spanner::key::Key;
use gcloud_spanner::mutation::insert_or_update;
use gcloud_spanner::reader::RowIterator;
use gcloud_spanner::row::Row;
use gcloud_spanner::statement::Statement;
use gcloud_spanner::transaction_rw::ReadWriteTransaction;
use rowtree_types::{Code, Timestamp};

use crate::backoff::{retry_aborted, RetryPolicy};
use crate::error::{Error, Result};
use crate::store::{Committed, Store, Txn, SEQUENCES_TABLE};

/// A database on a Spanner-API endpoint.
pub struct Remote {
    runtime: tokio::runtime::Runtime,
    client: Client,
    admin: AdminClient,
    database: String,
    retry: RetryPolicy,
}

fn status(e: Status) -> Error {
    let code = Code::ALL
        .get(e.code() as usize)
        .copied()
        .unwrap_or(Code::Unknown);
    Error::Database {
        code,
        message: e.message().to_string(),
    }
}

fn client_error(e: ClientError) -> Error {
    match e {
        ClientError::GRPC(s) => status(s),
        other => Error::Database {
            code: Code::Unavailable,
            message: other.to_string(),
        },
    }
}

/// Splits `projects/P/instances/I/databases/D` into its instance's name
/// and the database id.
fn split_database(database: &str) -> Result<(String, String)> {
    let parts: Vec<&str> = database.split('/').collect();
    match parts.as_slice() {
        ["projects", p, "instances", i, "databases", d]
            if !p.is_empty() && !i.is_empty() && !d.is_empty() =>
        {
            Ok((format!("projects/{p}/instances/{i}"), d.to_string()))
        }
        _ => Err(Error::Config(format!(
            "a database is named projects/PROJECT/instances/INSTANCE/databases/DATABASE; \
             got {database:?}"
        ))),
    }
}

impl Remote {
    /// Connects to `database` (`projects/P/instances/I/databases/D`) on the
    /// endpoint `host:port`.
    pub fn connect(endpoint: &str, database: &str) -> Result<Remote> {
        split_database(database)?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("seqgen-remote")
            .enable_all()
            .build()
            .map_err(|e| Error::Config(format!("cannot start the client runtime: {e}")))?;
        let environment = || Environment::Emulator(endpoint.to_string());
        let (client, admin) = runtime.block_on(async {
            let client = Client::new(
                database.to_string(),
                ClientConfig {
                    environment: environment(),
                    ..ClientConfig::default()
                },
            )
            .await
            .map_err(client_error)?;
            let admin = AdminClient::new(AdminClientConfig {
                environment: environment(),
                ..AdminClientConfig::default()
            })
            .await
            .map_err(|e| Error::Database {
                code: Code::Unavailable,
                message: format!("cannot connect to {endpoint}: {e}"),
            })?;
            Ok::<_, Error>((client, admin))
        })?;
        Ok(Remote {
            runtime,
            client,
            admin,
            database: database.to_string(),
            retry: RetryPolicy::FAST,
        })
    }

    /// Creates the instance and the database of `database` on `endpoint`
    /// unless they exist, then connects.
    pub fn connect_creating(endpoint: &str, database: &str) -> Result<Remote> {
        let (instance, database_id) = split_database(database)?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Error::Config(format!("cannot start the client runtime: {e}")))?;
        runtime.block_on(async {
            let admin = AdminClient::new(AdminClientConfig {
                environment: Environment::Emulator(endpoint.to_string()),
                ..AdminClientConfig::default()
            })
            .await
            .map_err(|e| Error::Database {
                code: Code::Unavailable,
                message: format!("cannot connect to {endpoint}: {e}"),
            })?;
            let (project, instance_id) = instance
                .split_once("/instances/")
                .expect("checked by split_database");
            let created = admin
                .instance()
                .create_instance(
                    CreateInstanceRequest {
                        parent: project.to_string(),
                        instance_id: instance_id.to_string(),
                        instance: Some(Instance {
                            name: instance.clone(),
                            config: format!("{project}/instanceConfigs/emulator-config"),
                            display_name: instance_id.to_string(),
                            node_count: 1,
                            ..Default::default()
                        }),
                    },
                    None,
                )
                .await;
            match created {
                Ok(mut op) => {
                    op.wait(None).await.map_err(status)?;
                }
                Err(e) if e.code() == GrpcCode::AlreadyExists => {}
                Err(e) => return Err(status(e)),
            }
            let created = admin
                .database()
                .create_database(
                    CreateDatabaseRequest {
                        parent: instance.clone(),
                        create_statement: format!("CREATE DATABASE `{database_id}`"),
                        ..Default::default()
                    },
                    None,
                )
                .await;
            match created {
                Ok(mut op) => {
                    op.wait(None).await.map_err(status)?;
                }
                Err(e) if e.code() == GrpcCode::AlreadyExists => {}
                Err(e) => return Err(status(e)),
            }
            Ok(())
        })?;
        drop(runtime);
        Remote::connect(endpoint, database)
    }

    /// Retries aborted transactions under `retry` (default
    /// [`RetryPolicy::FAST`]).
    pub fn with_retry(mut self, retry: RetryPolicy) -> Remote {
        self.retry = retry;
        self
    }

    /// The database's full name.
    pub fn database(&self) -> &str {
        &self.database
    }
}

/// The one row a read or query returns, reading the stream to its end.
///
/// Dropping a result stream before its end cancels the call (an HTTP/2
/// RST_STREAM) while the server may already have sent the rest; with tens
/// of threads doing that at once, the client's HTTP/2 layer ends up
/// treating those late frames as errors and closes the whole connection
/// (GOAWAY `ENHANCE_YOUR_CALM`, "too_many_internal_resets"), failing every
/// transaction on it. Reading to the end also surfaces an error the server
/// sends after the row.
async fn only_row<T: gcloud_spanner::reader::Reader>(
    rows: &mut RowIterator<'_, T>,
) -> Result<Option<Row>> {
    let first = rows.next().await.map_err(status)?;
    let mut extra = 0usize;
    while rows.next().await.map_err(status)?.is_some() {
        extra += 1;
    }
    if extra > 0 {
        return Err(Error::Database {
            code: Code::Internal,
            message: format!(
                "expected at most one row, the server returned {}",
                extra + 1
            ),
        });
    }
    Ok(first)
}

/// One attempt of a read-write transaction on the endpoint.
struct RemoteTxn<'a> {
    runtime: &'a tokio::runtime::Runtime,
    tx: &'a mut ReadWriteTransaction,
}

impl Txn for RemoteTxn<'_> {
    fn read_next_value(&mut self, name: &str) -> Result<Option<i64>> {
        let tx = &mut *self.tx;
        self.runtime.block_on(async {
            let mut rows = tx
                .read(
                    SEQUENCES_TABLE,
                    &["next_value"],
                    Key::new(&name.to_string()),
                )
                .await
                .map_err(status)?;
            match only_row(&mut rows).await? {
                None => Ok(None),
                Some(row) => row.column::<i64>(0).map(Some).map_err(|e| Error::Database {
                    code: Code::FailedPrecondition,
                    message: format!("sequences.next_value of {name:?}: {e}"),
                }),
            }
        })
    }

    fn write_next_value(&mut self, name: &str, next_value: i64) -> Result<()> {
        self.tx.buffer_write(vec![insert_or_update(
            SEQUENCES_TABLE,
            &["name", "next_value"],
            &[&name.to_string(), &next_value],
        )]);
        Ok(())
    }

    fn next_bit_reversed_value(&mut self, sequence: &str) -> Result<i64> {
        let valid = sequence
            .chars()
            .enumerate()
            .all(|(i, c)| c == '_' || c.is_ascii_alphabetic() || (i > 0 && c.is_ascii_digit()));
        if sequence.is_empty() || !valid {
            return Err(Error::Config(format!(
                "{sequence:?} is not a sequence name (letters, digits and _, not starting with a digit)"
            )));
        }
        let tx = &mut *self.tx;
        self.runtime.block_on(async {
            let statement = Statement::new(format!(
                "SELECT GET_NEXT_SEQUENCE_VALUE(SEQUENCE {sequence})"
            ));
            let mut rows = tx.query(statement).await.map_err(status)?;
            let row = only_row(&mut rows).await?.ok_or_else(|| Error::Database {
                code: Code::Internal,
                message: "GET_NEXT_SEQUENCE_VALUE returned no row".into(),
            })?;
            row.column::<i64>(0).map_err(|e| Error::Database {
                code: Code::Internal,
                message: format!("GET_NEXT_SEQUENCE_VALUE: {e}"),
            })
        })
    }
}

impl Store for Remote {
    fn run<T>(&self, body: &mut dyn FnMut(&mut dyn Txn) -> Result<T>) -> Result<Committed<T>> {
        retry_aborted(self.retry, || {
            let mut tx = self
                .runtime
                .block_on(self.client.begin_read_write_transaction())
                .map_err(client_error)?;
            let outcome = body(&mut RemoteTxn {
                runtime: &self.runtime,
                tx: &mut tx,
            });
            match outcome {
                Ok(value) => self
                    .runtime
                    .block_on(tx.end::<T, ClientError>(Ok(value), None))
                    .map_err(client_error)
                    .map(|(result, value)| Committed {
                        value,
                        commit_timestamp: result
                            .timestamp
                            .and_then(|t| {
                                Timestamp::from_nanos(
                                    t.seconds as i128 * 1_000_000_000 + t.nanos as i128,
                                )
                            })
                            .unwrap_or(Timestamp::MIN),
                    }),
                Err(e) => {
                    // Roll the attempt back (a cancelled status makes the
                    // client send Rollback rather than leave it to expire).
                    let _ = self.runtime.block_on(tx.end::<(), ClientError>(
                        Err(ClientError::GRPC(Status::new(
                            GrpcCode::Cancelled,
                            "the transaction body failed",
                        ))),
                        None,
                    ));
                    Err(e)
                }
            }
        })
    }

    fn apply_ddl(&self, statements: &[&str]) -> Result<()> {
        self.runtime.block_on(async {
            let mut op = self
                .admin
                .database()
                .update_database_ddl(
                    UpdateDatabaseDdlRequest {
                        database: self.database.clone(),
                        statements: statements.iter().map(|s| s.to_string()).collect(),
                        ..Default::default()
                    },
                    None,
                )
                .await
                .map_err(status)?;
            op.wait(None).await.map_err(status)?;
            Ok(())
        })
    }

    fn has_table(&self, table: &str) -> Result<bool> {
        self.runtime.block_on(async {
            let mut tx = self.client.single().await.map_err(client_error)?;
            let mut statement = Statement::new(
                "SELECT COUNT(*) FROM INFORMATION_SCHEMA.TABLES \
                 WHERE TABLE_SCHEMA = '' AND LOWER(TABLE_NAME) = LOWER(@t)",
            );
            statement.add_param("t", &table.to_string());
            let mut rows = tx.query(statement).await.map_err(status)?;
            let count = match only_row(&mut rows).await? {
                Some(row) => row.column::<i64>(0).map_err(|e| Error::Database {
                    code: Code::Internal,
                    message: e.to_string(),
                })?,
                None => 0,
            };
            Ok(count > 0)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn database_names_are_checked() {
        assert_eq!(
            split_database("projects/p/instances/i/databases/d").unwrap(),
            ("projects/p/instances/i".to_string(), "d".to_string())
        );
        for bad in [
            "",
            "d",
            "projects/p/instances/i",
            "projects//instances/i/databases/d",
        ] {
            assert!(
                matches!(split_database(bad), Err(Error::Config(_))),
                "{bad}"
            );
        }
    }
}
