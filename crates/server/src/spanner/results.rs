//! Results: how rows reach the client, whole or streamed, and how a broken
//! stream resumes.
//!
//! Statements and reads produce rows into a [`RowOut`]: a [`Collect`] for
//! the unary calls ([`unary`] makes one `ResultSet` of it), a [`Chunker`]
//! for the streaming ones ([`stream`] runs the work on a blocking thread and
//! sends `PartialResultSet`s as they fill). The chunker sends the metadata
//! first, flushes every [`FLUSH_BYTES`] or so, splits a string longer than
//! [`CHUNK_BYTES`] across messages (`chunked_value`), and puts a resume
//! token on each message that ends on a row boundary: the count of rows
//! sent so far and, for a single-use snapshot, its read timestamp
//! ([`encode_token`]). A request that brings the token back runs again in
//! the same snapshot and skips the rows already sent. Both sinks stop at
//! the client's deadline (`limits.rs`).
//!
//! The last message does not set `last` (the field is optional, and clients
//! must not rely on it). A client that stops reading at `last` drops the
//! stream before the status trailers arrive, which cancels it with the
//! trailers already in flight; gcloud-spanner does, and with tens of
//! threads its HTTP/2 layer counted those late frames as errors until it
//! closed the whole connection (GOAWAY `ENHANCE_YOUR_CALM`). Without
//! `last` every client reads to the end of the stream, trailers included.

use std::pin::Pin;
use std::time::Instant;

use googleapis_tonic_google_spanner_v1::google::spanner::v1 as pb;
use rowtree_types::{Dialect, Type, Value};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Response, Status};

use super::limits::check_deadline;
use super::threads::run;
use crate::convert;

/// A string value longer than this is split across `PartialResultSet`s.
pub const CHUNK_BYTES: usize = 1 << 20;
/// A `PartialResultSet` is sent once its values reach about this size.
pub(super) const FLUSH_BYTES: usize = 256 << 10;

/// A server stream of `T`s, as tonic wants it.
pub(super) type Stream<T> =
    Pin<Box<dyn tokio_stream::Stream<Item = Result<T, Status>> + Send + 'static>>;

/// What a statement produced, ready to encode.
pub(super) struct Outcome {
    pub(super) columns: Vec<(String, Type)>,
    pub(super) stats: Option<pb::ResultSetStats>,
}

/// Where rows go as they are produced.
pub(super) trait RowOut {
    fn row(&mut self, columns: &[(String, Type)], row: Vec<Value>) -> Result<(), Status>;
    /// The transaction this request began, for the result's metadata.
    fn begun(&mut self, _txn: Option<&pb::Transaction>) {}
    /// The read timestamp of the single-use snapshot the statement reads in
    /// (resume tokens carry it).
    fn snapshot(&mut self, _read_ts: u64) {}
    /// The dialect of the database the rows come from: the metadata's
    /// types carry PostgreSQL's annotations in a PostgreSQL database.
    fn dialect(&mut self, _dialect: Dialect) {}
}

/// A resume token: the rows already sent, and for a single-use snapshot its
/// read timestamp, so that the resumed request reads the same data.
fn encode_token(rows: u64, snapshot: Option<u64>) -> Vec<u8> {
    let mut t = rows.to_be_bytes().to_vec();
    if let Some(ts) = snapshot {
        t.extend_from_slice(&ts.to_be_bytes());
    }
    t
}

/// The rows to skip and the snapshot to read at, from a resume token.
pub(super) fn decode_token(token: &[u8]) -> Result<(u64, Option<u64>), Status> {
    let word = |b: &[u8]| u64::from_be_bytes(b.try_into().expect("8 bytes"));
    match token.len() {
        0 => Ok((0, None)),
        8 => Ok((word(token), None)),
        16 => Ok((word(&token[..8]), Some(word(&token[8..])))),
        _ => Err(Status::invalid_argument("Invalid resume token")),
    }
}

/// Collects rows for a unary `ResultSet`.
#[derive(Default)]
pub(super) struct Collect {
    pub(super) rows: Vec<prost_types::ListValue>,
    pub(super) deadline: Option<Instant>,
    pub(super) dialect: Dialect,
}

impl RowOut for Collect {
    fn row(&mut self, columns: &[(String, Type)], row: Vec<Value>) -> Result<(), Status> {
        check_deadline(self.deadline, self.rows.len() as u64)?;
        self.rows.push(prost_types::ListValue {
            values: convert::row_to_proto(&row, columns),
        });
        Ok(())
    }

    fn dialect(&mut self, dialect: Dialect) {
        self.dialect = dialect;
    }
}

/// Builds `PartialResultSet`s and sends them down a stream.
pub(super) struct Chunker {
    tx: mpsc::Sender<Result<pb::PartialResultSet, Status>>,
    /// The row type, known from the first row (or the end).
    columns: Option<Vec<(String, Type)>>,
    txn: Option<pb::Transaction>,
    metadata_sent: bool,
    values: Vec<prost_types::Value>,
    bytes: usize,
    rows_sent: u64,
    /// Rows to skip (a resumed request).
    skip: u64,
    /// The single-use snapshot's read timestamp, for resume tokens.
    snapshot: Option<u64>,
    seen: u64,
    /// [`CHUNK_BYTES`], smaller in tests.
    pub(super) chunk_bytes: usize,
    deadline: Option<Instant>,
    dialect: Dialect,
}

fn approx_size(v: &prost_types::Value) -> usize {
    use prost_types::value::Kind;
    match &v.kind {
        Some(Kind::StringValue(s)) => s.len() + 2,
        Some(Kind::ListValue(l)) => l.values.iter().map(approx_size).sum::<usize>() + 2,
        _ => 8,
    }
}

impl Chunker {
    pub(super) fn new(
        tx: mpsc::Sender<Result<pb::PartialResultSet, Status>>,
        skip: u64,
    ) -> Chunker {
        Chunker {
            tx,
            columns: None,
            txn: None,
            metadata_sent: false,
            values: Vec::new(),
            bytes: 0,
            rows_sent: 0,
            skip,
            snapshot: None,
            seen: 0,
            chunk_bytes: CHUNK_BYTES,
            deadline: None,
            dialect: Dialect::GoogleSql,
        }
    }

    /// The metadata, in the first message only.
    fn metadata(&mut self) -> Option<pb::ResultSetMetadata> {
        if self.metadata_sent {
            return None;
        }
        self.metadata_sent = true;
        let columns = self.columns.clone().unwrap_or_default();
        Some(pb::ResultSetMetadata {
            transaction: self.txn.clone(),
            ..convert::metadata(&columns, self.dialect)
        })
    }

    fn send(&mut self, message: pb::PartialResultSet) -> Result<(), Status> {
        self.tx
            .blocking_send(Ok(message))
            .map_err(|_| Status::cancelled("The client cancelled the request"))
    }

    /// Sends the buffered values; `row_boundary` says whether they end a row
    /// (then the message carries a resume token).
    fn flush(&mut self, row_boundary: bool, chunked: bool) -> Result<(), Status> {
        let message = pb::PartialResultSet {
            metadata: self.metadata(),
            values: std::mem::take(&mut self.values),
            chunked_value: chunked,
            resume_token: if row_boundary && !chunked {
                encode_token(self.skip + self.rows_sent, self.snapshot)
            } else {
                Vec::new()
            },
            ..Default::default()
        };
        self.bytes = 0;
        self.send(message)
    }

    fn push_value(&mut self, v: prost_types::Value) -> Result<(), Status> {
        use prost_types::value::Kind;
        if let Some(Kind::StringValue(s)) = &v.kind {
            if s.len() > self.chunk_bytes {
                let mut rest = s.as_str();
                while rest.len() > self.chunk_bytes {
                    let mut cut = self.chunk_bytes;
                    while !rest.is_char_boundary(cut) {
                        cut -= 1;
                    }
                    let (piece, tail) = rest.split_at(cut);
                    self.values.push(prost_types::Value {
                        kind: Some(Kind::StringValue(piece.to_string())),
                    });
                    self.flush(false, true)?;
                    rest = tail;
                }
                self.bytes += rest.len();
                self.values.push(prost_types::Value {
                    kind: Some(Kind::StringValue(rest.to_string())),
                });
                return Ok(());
            }
        }
        self.bytes += approx_size(&v);
        self.values.push(v);
        Ok(())
    }

    /// The last message: remaining values and the statistics.
    pub(super) fn finish(mut self, stats: Option<pb::ResultSetStats>) -> Result<(), Status> {
        let message = pb::PartialResultSet {
            metadata: self.metadata(),
            values: std::mem::take(&mut self.values),
            resume_token: encode_token(self.skip + self.rows_sent, self.snapshot),
            stats,
            ..Default::default()
        };
        self.send(message)
    }
}

impl RowOut for Chunker {
    fn begun(&mut self, txn: Option<&pb::Transaction>) {
        self.txn = txn.cloned();
    }

    fn snapshot(&mut self, read_ts: u64) {
        self.snapshot = Some(read_ts);
    }

    fn dialect(&mut self, dialect: Dialect) {
        self.dialect = dialect;
    }

    fn row(&mut self, columns: &[(String, Type)], row: Vec<Value>) -> Result<(), Status> {
        if self.columns.is_none() {
            self.columns = Some(columns.to_vec());
        }
        self.seen += 1;
        check_deadline(self.deadline, self.seen)?;
        if self.seen <= self.skip {
            return Ok(());
        }
        for v in convert::row_to_proto(&row, columns) {
            self.push_value(v)?;
        }
        self.rows_sent += 1;
        if self.bytes >= FLUSH_BYTES {
            self.flush(true, false)?;
        }
        Ok(())
    }
}

/// A unary ExecuteSql or Read: `work` fills a [`Collect`] (stopping at
/// the client's deadline) and the rows become one `ResultSet`.
pub(super) async fn unary(
    inline: bool,
    deadline: Option<Instant>,
    work: impl FnOnce(&mut Collect) -> Result<(Outcome, Option<pb::Transaction>), Status>
        + Send
        + 'static,
) -> Result<Response<pb::ResultSet>, Status> {
    run(inline, move || {
        let mut rows = Collect {
            deadline,
            ..Collect::default()
        };
        let (outcome, begun) = work(&mut rows)?;
        Ok(Response::new(pb::ResultSet {
            metadata: Some(pb::ResultSetMetadata {
                transaction: begun,
                ..convert::metadata(&outcome.columns, rows.dialect)
            }),
            rows: rows.rows,
            stats: outcome.stats,
            ..Default::default()
        }))
    })
    .await
}

/// Runs `work` on a blocking thread that streams `PartialResultSet`s; the
/// resume token says how many rows to skip.
pub(super) fn stream(
    resume_token: &[u8],
    deadline: Option<Instant>,
    work: impl FnOnce(&mut Chunker) -> Result<(Outcome, Option<pb::Transaction>), Status>
        + Send
        + 'static,
) -> Stream<pb::PartialResultSet> {
    let (tx, rx) = mpsc::channel(4);
    let skip = decode_token(resume_token)
        .map(|(rows, _)| rows)
        .unwrap_or(0);
    let err_tx = tx.clone();
    tokio::task::spawn_blocking(move || {
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let mut chunker = Chunker::new(tx, skip);
            chunker.deadline = deadline;
            // The metadata goes with the first message: the row type is
            // known from the first row, or from the outcome if none.
            let r = work(&mut chunker);
            match r {
                Ok((outcome, _)) => {
                    if chunker.columns.is_none() {
                        chunker.columns = Some(outcome.columns);
                    }
                    chunker.finish(outcome.stats)
                }
                Err(e) => Err(e),
            }
        }));
        let result =
            outcome.unwrap_or_else(|_| Err(Status::internal("The request failed unexpectedly")));
        if let Err(e) = result {
            let _ = err_tx.blocking_send(Err(e));
        }
    });
    Box::pin(ReceiverStream::new(rx))
}
