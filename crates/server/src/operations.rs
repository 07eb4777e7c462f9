//! Long-running operations (`google.longrunning.Operations`).
//!
//! Admin requests that take time in Spanner — creating an instance or a
//! database, changing a schema — answer with an `Operation` that clients
//! poll (`GetOperation`) or wait on (`WaitOperation`) until it is `done`
//! with a response or an error. Here each such request starts its work on
//! a blocking thread and registers an operation; the request itself waits
//! briefly for the work, so small changes come back already done and the
//! client does not need to poll, while a long index backfill returns at once
//! and reports its progress in the operation's metadata.
//!
//! Operations live in memory: after a restart their names are unknown
//! (NOT_FOUND), as the work they described has finished or been abandoned.

use std::collections::BTreeMap;
use std::time::Duration;

use googleapis_tonic_google_longrunning::google::longrunning::{operation, Operation};
use parking_lot::Mutex;
use prost::Message;
use tokio::sync::watch;
use tonic::Status;

use crate::status;

/// Packs a message as `google.protobuf.Any`.
pub fn any<M: Message>(type_name: &str, message: &M) -> prost_types::Any {
    prost_types::Any {
        type_url: format!("type.googleapis.com/{type_name}"),
        value: message.encode_to_vec(),
    }
}

/// The operation store.
pub struct Operations {
    ops: Mutex<BTreeMap<String, Operation>>,
    changed: watch::Sender<u64>,
}

impl Default for Operations {
    fn default() -> Self {
        Operations {
            ops: Mutex::new(BTreeMap::new()),
            changed: watch::channel(0).0,
        }
    }
}

impl Operations {
    /// Registers a running operation.
    pub fn start(&self, name: &str, metadata: prost_types::Any) -> Operation {
        let op = Operation {
            name: name.to_string(),
            metadata: Some(metadata),
            done: false,
            result: None,
        };
        self.ops.lock().insert(name.to_string(), op.clone());
        self.notify();
        op
    }

    /// Replaces a running operation's metadata (progress).
    pub fn set_metadata(&self, name: &str, metadata: prost_types::Any) {
        if let Some(op) = self.ops.lock().get_mut(name) {
            op.metadata = Some(metadata);
        }
        self.notify();
    }

    /// Marks an operation done with its response or error.
    pub fn finish(&self, name: &str, result: Result<prost_types::Any, Status>) {
        if let Some(op) = self.ops.lock().get_mut(name) {
            op.done = true;
            op.result = Some(match result {
                Ok(response) => operation::Result::Response(response),
                Err(e) => operation::Result::Error(status::to_rpc(&e)),
            });
        }
        self.notify();
    }

    fn notify(&self) {
        self.changed.send_modify(|v| *v += 1);
    }

    pub fn get(&self, name: &str) -> Result<Operation, Status> {
        self.ops
            .lock()
            .get(name)
            .cloned()
            .ok_or_else(|| Status::not_found(format!("Operation not found: {name}")))
    }

    /// Operations whose names start with `prefix/operations/`.
    pub fn list(&self, prefix: &str) -> Vec<Operation> {
        let prefix = format!("{}/operations/", prefix.trim_end_matches("/operations"));
        self.ops
            .lock()
            .values()
            .filter(|op| op.name.starts_with(&prefix))
            .cloned()
            .collect()
    }

    /// All operations under an instance (its own and its databases').
    pub fn list_under(&self, instance: &str) -> Vec<Operation> {
        let prefix = format!("{instance}/");
        self.ops
            .lock()
            .values()
            .filter(|op| op.name.starts_with(&prefix))
            .cloned()
            .collect()
    }

    pub fn delete(&self, name: &str) -> Result<(), Status> {
        self.ops
            .lock()
            .remove(name)
            .map(|_| ())
            .ok_or_else(|| Status::not_found(format!("Operation not found: {name}")))
    }

    /// Waits until the operation is done or `timeout` passes, then returns it.
    pub async fn wait(&self, name: &str, timeout: Duration) -> Result<Operation, Status> {
        let mut rx = self.changed.subscribe();
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let op = self.get(name)?;
            if op.done {
                return Ok(op);
            }
            if tokio::time::timeout_at(deadline, rx.changed())
                .await
                .is_err()
            {
                return self.get(name);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn wait_returns_when_done() {
        let ops = std::sync::Arc::new(Operations::default());
        ops.start("i/operations/1", any("google.protobuf.Empty", &()));
        let o2 = ops.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(20)).await;
            o2.finish("i/operations/1", Ok(any("google.protobuf.Empty", &())));
        });
        let op = ops
            .wait("i/operations/1", Duration::from_secs(5))
            .await
            .unwrap();
        assert!(op.done);
        let not_done = {
            ops.start("i/operations/2", any("google.protobuf.Empty", &()));
            ops.wait("i/operations/2", Duration::from_millis(10))
                .await
                .unwrap()
        };
        assert!(!not_done.done);
        assert_eq!(ops.list("i").len(), 2);
        ops.finish("i/operations/2", Err(Status::invalid_argument("bad")));
        let op = ops.get("i/operations/2").unwrap();
        match op.result {
            Some(operation::Result::Error(e)) => {
                assert_eq!(e.code, tonic::Code::InvalidArgument as i32)
            }
            other => panic!("{other:?}"),
        }
    }
}
