//! The database handle: storage, the split map, the schema, and the
//! machinery transactions share (locks, the commit pipeline, sequences).
//!
//! # A commit's life
//!
//! 1. A read-write transaction reads under shared locks and buffers its
//!    mutations ([`crate::ReadWriteTransaction`]).
//! 2. At commit, the mutations are resolved against the latest data under
//!    exclusive locks into row writes and index writes ([`crate::write`]).
//! 3. The writes go to the commit pipeline, which gives the commit its
//!    timestamp, writes the MVCC versions of a whole group of commits in one
//!    batch with one fsync through the router (the one write path to
//!    storage), publishes the new visible timestamp and wakes the
//!    committers (group commit).
//! 4. The transaction releases its locks.
//!
//! Schema changes take the schema gate exclusively, so no commit is between
//! steps 2 and 3 while a DDL statement validates data or backfills an index.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use parking_lot::{Mutex, RwLock};
use rowtree_kv::{
    BalancerConfig, CommitGroup, KeyAligner, LoadHistory, ManagerConfig, NodeGate, NodeId,
    Replication, Router, SplitEvent, SplitManager, SplitMap, SplitPolicy,
};
use rowtree_schema::{Catalog, ViewAnalyzer};

use crate::observer::SchemaObserver;
use crate::outcome::{self, OutcomeTag, OUTCOME_PREFIX, OUTCOME_RETENTION};
use rowtree_storage::{
    Durability, Engine, FjallEngine, FjallOptions, MemoryEngine, Mvcc, WriteBatch,
};
use rowtree_txn::{
    Clock, CommitOptions, CommitPipeline, LockManager, SystemClock, TimestampOracle,
};

use rowtree_types::Dialect;

use crate::error::{Error, Result};
use crate::gate::SchemaGate;
use crate::sequences::Sequences;

/// What the commit pipeline writes for one commit, in the same storage batch
/// as the rest of its group.
pub(crate) struct CommitWrites {
    /// The commit timestamp.
    pub ts: u64,
    /// Row and index writes (`None` deletes), stored as versions at `ts`.
    pub data: Vec<(Vec<u8>, Option<Vec<u8>>)>,
    /// Metadata written with them, unversioned (`None` deletes): a schema
    /// change's DDL log entry and sequence state, so the statement and its
    /// data are durable together or not at all.
    pub meta: Vec<(Vec<u8>, Option<Vec<u8>>)>,
    /// The transaction prepared writes at other nodes: this commit decides
    /// them ([`crate::elsewhere`]).
    pub elsewhere: Option<rowtree_kv::ElsewhereCommit>,
}

impl CommitWrites {
    /// A commit of row and index writes only.
    pub fn data(ts: u64, data: Vec<(Vec<u8>, Option<Vec<u8>>)>) -> CommitWrites {
        CommitWrites {
            ts,
            data,
            meta: Vec::new(),
            elsewhere: None,
        }
    }
}

/// The commit pipeline's flush: makes a group of commits durable through
/// [`Router::write_commits`], the commit path's one way to storage (this
/// engine, or a cluster's replicated log): each commit's row writes as
/// versions at its timestamp, its metadata unversioned, and the newest
/// commit timestamp, so a reopened database's timestamps keep increasing.
/// (The splits written to were charged when each commit was resolved.) The
/// error is the storage or replication failure's text; the pipeline fails
/// every commit of the group with it.
fn write_group(router: &Router, groups: Vec<CommitWrites>) -> rowtree_txn::Result<()> {
    let mut group = CommitGroup::default();
    let mut max_ts = 0;
    for commit in groups {
        max_ts = max_ts.max(commit.ts);
        group.commits.push(rowtree_kv::Commit {
            ts: commit.ts,
            writes: commit.data,
        });
        group.meta.extend(commit.meta);
        group.elsewhere.extend(commit.elsewhere);
    }
    group
        .meta
        .push((META_LAST_TS.to_vec(), Some(max_ts.to_be_bytes().to_vec())));
    router.write_commits(group).map_err(commit_error)
}

/// A failure of the router's commit path as the commit pipeline reports it:
/// a replicated log's failure is `Unavailable`, its refusal to propose
/// writes to a split led elsewhere `Refused`, anything else a storage
/// failure.
fn commit_error(e: rowtree_kv::Error) -> rowtree_txn::Error {
    match e {
        rowtree_kv::Error::Replication(message) => rowtree_txn::Error::Unavailable(message),
        rowtree_kv::Error::LedElsewhere(message) => rowtree_txn::Error::Refused(message),
        rowtree_kv::Error::Aborted(reason) => rowtree_txn::Error::Aborted { reason },
        other => rowtree_txn::Error::Storage(other.to_string()),
    }
}

/// The schema the DDL log behind `router` describes: every statement
/// replayed in order into an empty catalog of `dialect`, proto
/// descriptors installed before the statement they came with.
fn load_catalog(router: &Router, dialect: Dialect) -> Result<Catalog> {
    let mut protos = std::collections::HashMap::new();
    for item in router.meta_scan(META_PROTOS_PREFIX) {
        let (key, bytes) = item?;
        protos.insert(key[META_PROTOS_PREFIX.len()..].to_vec(), bytes);
    }
    let mut catalog = Catalog::new_in(dialect);
    for item in router.meta_scan(META_DDL_PREFIX) {
        let (key, text) = item?;
        if let Some(bytes) = protos.get(&key[META_DDL_PREFIX.len()..]) {
            let bundle = rowtree_types::ProtoBundle::decode(bytes)
                .map_err(|e| Error::internal(format!("stored proto descriptors: {e}")))?;
            catalog = catalog
                .with_proto_descriptors(Arc::new(bundle))
                .map_err(|e| Error::internal(format!("stored proto descriptors: {e}")))?;
        }
        let text = String::from_utf8(text).map_err(|_| Error::internal("corrupt DDL log entry"))?;
        let stmt = rowtree_parser::parse_statement_in(dialect, &text)
            .map_err(|e| Error::internal(format!("stored DDL does not parse: {e}: {text}")))?;
        let (next, _) = catalog
            .apply(&stmt)
            .map_err(|e| Error::internal(format!("stored DDL does not apply: {e}: {text}")))?;
        catalog = next;
    }
    Ok(catalog)
}

/// Commit counters of a database since it was opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CommitStats {
    /// Durable commits.
    pub commits: u64,
    /// Group flushes (one fsync each).
    pub flushes: u64,
    /// Commits that wrote to more than one split.
    pub multi_split_commits: u64,
}

/// Database settings.
#[derive(Clone)]
pub struct Options {
    /// How long old versions stay readable (Spanner's
    /// `version_retention_period`, default one hour). Reads at older
    /// timestamps fail; versions older than this are garbage collected.
    pub version_retention: Duration,
    /// How often the garbage collector runs.
    pub gc_interval: Duration,
    /// How often the TTL task deletes the expired rows of tables with a row
    /// deletion policy (default a minute; see [`crate::ttl`]).
    pub ttl_interval: Duration,
    /// For experiments: keep old versions at most this long, whatever the
    /// database's `version_retention_period` says (which Spanner bounds
    /// below by one hour). A cap of a second makes every garbage-collection
    /// pass remove versions, which is how the kill check crashes the server
    /// in the middle of one. `None` (the default): no cap.
    pub max_version_retention: Option<Duration>,
    /// The clock (injected so tests can drive time).
    pub clock: Arc<dyn Clock>,
    /// Block cache of the disk engine, in bytes.
    pub cache_bytes: u64,
    /// How large each keyspace's in-memory write buffer (memtable) grows
    /// before it is written out as a table file (default 64 MiB). Fixed
    /// when the database's directory is created. With the block cache, this
    /// is most of a database's memory: a busy database's RSS grows until
    /// its write buffers are full, then stays level.
    pub memtable_bytes: u64,
    /// When splits are split by load and merged (see
    /// `docs/design/splits.md`).
    pub split_policy: SplitPolicy,
    /// When splits move between nodes.
    pub balancer: BalancerConfig,
    /// Nodes `0..nodes` serve splits (default 1).
    pub nodes: u32,
    /// Each node's capacity in reads per second (a written row costs as
    /// much as 22,500/3,500 reads): accesses wait for their split's node
    /// ([`rowtree_kv::NodeGate`]). `None`: unlimited with one node, a full
    /// node (22,500 reads/s) with several.
    pub node_capacity: Option<f64>,
    /// How often the split manager runs (splits, merges, moves, and the
    /// minute roll-ups of the load history).
    pub split_interval: Duration,
    /// Binds view queries when DDL creates or changes a view, or alters a
    /// table a view reads. The SQL layer sits above this crate and provides
    /// one (`rowtree_sql::database_options()`); `None` validates views
    /// structurally only (see [`rowtree_schema::ViewAnalyzer`]).
    pub view_analyzer: Option<Arc<dyn ViewAnalyzer>>,
    /// Told of every schema change: after each DDL batch that changed the
    /// schema (also one that failed part-way), with the schema before and
    /// after it. The server hangs its schema advisor here, so that every
    /// DDL change, whichever protocol sent it, is checked and its new
    /// findings logged. `None`: nobody is told.
    pub schema_observer: Option<Arc<dyn SchemaObserver>>,
    /// The SQL dialect a *new* database is created in (recorded in its
    /// metadata, see [`crate::format`]). An existing database keeps the
    /// dialect it recorded whatever this says: the dialect is fixed for a
    /// database's life.
    pub dialect: Dialect,
    /// Where commits become durable: `None` (the default) on this
    /// database's own engine; in a cluster node, the replicated log of the
    /// database's split group, which applies them to this engine before a
    /// commit is acknowledged (see [`rowtree_kv::replication`]).
    pub replication: Option<Arc<dyn Replication>>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            version_retention: Duration::from_secs(3600),
            gc_interval: Duration::from_secs(60),
            ttl_interval: Duration::from_secs(60),
            max_version_retention: None,
            clock: Arc::new(SystemClock),
            cache_bytes: 64 << 20,
            memtable_bytes: 64 << 20,
            split_policy: SplitPolicy::default(),
            balancer: BalancerConfig::default(),
            nodes: 1,
            node_capacity: None,
            split_interval: Duration::from_secs(1),
            view_analyzer: None,
            schema_observer: None,
            dialect: Dialect::GoogleSql,
            replication: None,
        }
    }
}

impl std::fmt::Debug for Options {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Options")
            .field("version_retention", &self.version_retention)
            .field("gc_interval", &self.gc_interval)
            .field("ttl_interval", &self.ttl_interval)
            .field("max_version_retention", &self.max_version_retention)
            .field("cache_bytes", &self.cache_bytes)
            .field("memtable_bytes", &self.memtable_bytes)
            .field("split_policy", &self.split_policy)
            .field("balancer", &self.balancer)
            .field("nodes", &self.nodes)
            .field("node_capacity", &self.node_capacity)
            .field("split_interval", &self.split_interval)
            .field("view_analyzer", &self.view_analyzer.is_some())
            .field("schema_observer", &self.schema_observer.is_some())
            .field("dialect", &self.dialect)
            .field("replicated", &self.replication.is_some())
            .finish()
    }
}

/// A cluster node's id, and the other nodes' split load histories of the
/// database, each with its node.
type PeerHistories = (NodeId, Vec<(NodeId, LoadHistory)>);

pub(crate) struct Inner {
    /// The one door to storage: row reads and writes, metadata, maintenance.
    pub router: Arc<Router>,
    pub catalog: RwLock<Arc<Catalog>>,
    /// Commits hold it shared from resolution to durability; DDL holds it
    /// exclusively.
    pub schema_gate: Arc<SchemaGate>,
    /// Serialises DDL statements.
    pub ddl_lock: Mutex<()>,
    pub locks: LockManager,
    /// Drawn at random when the database opened: with a lock handle's id,
    /// how other nodes know a transaction of this one
    /// ([`crate::elsewhere::txn_ref`]).
    pub incarnation: u64,
    pub pipeline: CommitPipeline<CommitWrites>,
    pub sequences: Sequences,
    pub options: Options,
    /// The dialect the database was created in, read from its metadata.
    pub dialect: Dialect,
    /// Commits whose writes touched more than one split.
    pub multi_split_commits: std::sync::atomic::AtomicU64,
    /// Splits, merges and moves the router's splits as the load changes.
    pub splits: SplitManager,
    /// The key layout the split manager aligns boundaries to (follows DDL).
    aligner: Arc<CatalogAligner>,
    /// When the load history was last persisted (nanoseconds).
    history_saved_at: std::sync::atomic::AtomicU64,
    /// On a cluster node serving the database's sessions: this node's id
    /// and the other nodes' latest split load histories
    /// ([`Database::set_peer_histories`]).
    peer_histories: Mutex<Option<PeerHistories>>,
    /// The split manager's [`SplitManager::generation`] when the split map
    /// was last saved (held while saving, so saves never reorder).
    split_map_saved: Mutex<u64>,
    stop: Arc<AtomicBool>,
    gc_thread: Mutex<Option<JoinHandle<()>>>,
    ttl_thread: Mutex<Option<JoinHandle<()>>>,
    split_thread: Mutex<Option<JoinHandle<()>>>,
    /// State the layers above keep per database (see [`Database::extension`]),
    /// one value per type.
    extensions: RwLock<Vec<Arc<dyn std::any::Any + Send + Sync>>>,
}

/// The [`KeyAligner`] of the database's current schema: a
/// [`crate::keys::Aligner`] replaced after every schema change.
struct CatalogAligner(RwLock<Arc<crate::keys::Aligner>>);

impl KeyAligner for CatalogAligner {
    fn root_row(&self, key: &[u8]) -> Option<Vec<u8>> {
        let aligner = self.0.read().clone();
        aligner.root_row(key)
    }

    fn row(&self, key: &[u8]) -> Option<Vec<u8>> {
        let aligner = self.0.read().clone();
        aligner.row(key)
    }
}

/// Split sizes for size-based splitting, read from storage: every stored
/// version, through [`Router::scan_stored`], which charges no split (this is
/// bookkeeping, not load). Measuring a split means scanning it, so a split
/// is measured only once it has taken at least half the size limit in
/// writes since it was created, and again after each further quarter of the
/// limit: a database of small splits is never scanned for this. (Data loaded
/// before the process started counts only once it is written to again.)
struct StoredSizes {
    router: Arc<Router>,
    limit: u64,
    /// Per split: the bytes written when it was last measured.
    measured: Mutex<std::collections::HashMap<rowtree_kv::SplitId, u64>>,
}

impl rowtree_kv::SplitSizes for StoredSizes {
    fn size(&self, split: &rowtree_kv::Split) -> Option<(u64, Vec<u8>)> {
        let written = split.stats.snapshot().bytes_written;
        if written < self.limit / 2 {
            return None;
        }
        {
            let mut measured = self.measured.lock();
            if let Some(last) = measured.get(&split.id) {
                if written < last.saturating_add(self.limit / 4) {
                    return None;
                }
            }
            measured.insert(split.id, written);
        }
        // One pass: the total, and a key every 1/256 of the limit, from
        // which the median is picked.
        let step = (self.limit / 256).max(1);
        let mut total = 0u64;
        let mut marks: Vec<(u64, Vec<u8>)> = Vec::new();
        let mut next_mark = 0u64;
        for item in self
            .router
            .scan_stored(&split.start, split.limit.as_deref())
        {
            let (key, value) = item.ok()?;
            if total >= next_mark {
                // Stored keys are a row key and an 8-byte version suffix.
                let row = key[..key.len().saturating_sub(8)].to_vec();
                marks.push((total, row));
                next_mark = total + step;
            }
            total += (key.len() + value.len()) as u64;
        }
        let median = marks
            .iter()
            .find(|(at, _)| *at >= total / 2)
            .or(marks.last())
            .map(|(_, k)| k.clone())?;
        Some((total, median))
    }
}

/// A Rowtree database: one schema and its data, on disk or in memory.
///
/// Cheap to clone; all clones share the same database. The background
/// garbage collector stops when the last clone is dropped.
#[derive(Clone)]
pub struct Database {
    pub(crate) inner: Arc<Inner>,
}

/// A handle to a [`Database`] that does not keep it open: for a
/// background task that serves the database while it is open (a cluster
/// node's closed-timestamp ticker) and must stop once every
/// [`Database`] handle is gone.
#[derive(Clone)]
pub struct WeakDatabase(std::sync::Weak<Inner>);

impl WeakDatabase {
    /// The database, if it is still open.
    pub fn upgrade(&self) -> Option<Database> {
        self.0.upgrade().map(|inner| Database { inner })
    }
}

impl Database {
    /// A handle that does not keep the database open.
    pub fn downgrade(&self) -> WeakDatabase {
        WeakDatabase(Arc::downgrade(&self.inner))
    }

    /// Whether `other` is a handle to this very database (not merely one
    /// with the same name, dropped and created again meanwhile).
    pub fn same_database(&self, other: &Database) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

/// The metadata key of the newest commit timestamp, written with every
/// group of commits: a database reopened resumes its timestamps above it.
/// Only a hint on a cluster node, whose hybrid clock is fed every applied
/// commit's timestamp, so a node that commits without leading the split
/// that carries the metadata may leave it out.
pub const META_LAST_TS: &[u8] = b"commit/last_ts";
/// The split manager's load history (JSON, [`LoadHistory::to_bytes`]).
const META_SPLIT_HISTORY: &[u8] = b"splits/history";
/// The split map with the manager's manual split points and mergeable
/// boundaries (JSON, [`rowtree_kv::SplitsRecord::to_bytes`]), saved
/// whenever it changes.
const META_SPLIT_MAP: &[u8] = b"splits/map";
/// How often the load history is persisted (and on drop).
const HISTORY_SAVE_INTERVAL: u64 = 60_000_000_000;
/// How long a manual split point lives by default, and at most.
pub const DEFAULT_SPLIT_POINT_EXPIRY: Duration = Duration::from_secs(10 * 24 * 3600);
/// The longest a manual split point may live.
pub const MAX_SPLIT_POINT_EXPIRY: Duration = Duration::from_secs(30 * 24 * 3600);
pub(crate) const META_DDL_PREFIX: &[u8] = b"ddl/";
/// Proto descriptors (a serialized `FileDescriptorSet`) under the schema
/// version of the statement they were given with.
pub(crate) const META_PROTOS_PREFIX: &[u8] = b"protos/";

impl Database {
    /// Opens (or creates) a durable database in `dir`. A directory in an
    /// on-disk format this build does not read is refused with
    /// [`Error::UnsupportedFormat`] (see [`crate::format`]).
    pub fn open(dir: impl AsRef<Path>) -> Result<Database> {
        Self::open_with(dir, Options::default())
    }

    /// Opens (or creates) a durable database in `dir` with `options`.
    pub fn open_with(dir: impl AsRef<Path>, options: Options) -> Result<Database> {
        let engine = Self::open_engine(dir, &options)?;
        Self::with_engine(engine, options)
    }

    /// The durable engine [`Database::open_with`] opens in `dir`, sized by
    /// `options`, for a caller that must look at what it holds before the
    /// database opens over it ([`Database::with_engine`]): a cluster node
    /// reads which split groups a database's replicas were cut into.
    pub fn open_engine(dir: impl AsRef<Path>, options: &Options) -> Result<Arc<dyn Engine>> {
        let engine = FjallEngine::open(
            dir.as_ref(),
            FjallOptions {
                cache_size: options.cache_bytes,
                memtable_size: options.memtable_bytes,
                ..FjallOptions::default()
            },
        )?;
        Ok(Arc::new(engine))
    }

    /// A database held in memory only, for tests and experiments.
    pub fn in_memory() -> Database {
        Self::with_engine(Arc::new(MemoryEngine::new()), Options::default())
            .expect("an empty in-memory database always opens")
    }

    /// A database held in memory with `options`.
    pub fn in_memory_with(options: Options) -> Database {
        Self::with_engine(Arc::new(MemoryEngine::new()), options)
            .expect("an empty in-memory database always opens")
    }

    /// A database over any storage engine.
    pub fn with_engine(engine: Arc<dyn Engine>, options: Options) -> Result<Database> {
        // Every access to storage goes through the router, from the first
        // one on (see the kv crate): build it before reading anything.
        let splits = Arc::new(SplitMap::new());
        let router_clock = options.clock.clone();
        let router_clock: rowtree_kv::RouterClock = Arc::new(move || router_clock.now_nanos());
        let mut router =
            Router::with_clock(Mvcc::new(engine), splits.clone(), router_clock.clone());
        let nodes = options.nodes.max(1);
        let capacity = match options.node_capacity {
            Some(c) => Some(c),
            None if nodes > 1 => Some(rowtree_kv::nodes::FULL_NODE_READS_PER_SECOND),
            None => None,
        };
        if let Some(capacity) = capacity {
            router = router.with_gate(Arc::new(NodeGate::with_time(
                capacity,
                router_clock,
                Arc::new(std::thread::sleep),
            )));
        }
        if let Some(replication) = &options.replication {
            router = router.with_replication(replication.clone());
        }
        let router = Arc::new(router);

        // The format first: a directory this build cannot read is left alone.
        let created = crate::format::check(&router)?;
        // Then the dialect, which the DDL log is replayed in.
        let created = created && router.meta_scan(META_DDL_PREFIX).next().is_none();
        let dialect = crate::format::dialect(&router, created.then_some(options.dialect))?;
        let catalog = load_catalog(&router, dialect)?;
        let last_ts = match router.meta_get(META_LAST_TS)? {
            Some(b) if b.len() == 8 => u64::from_be_bytes(b.try_into().expect("8 bytes")),
            _ => 0,
        };

        // Start the clock of visible timestamps no earlier than now, so a
        // read on a fresh database has a meaningful timestamp.
        let now_micros = options.clock.now_nanos() / 1000 * 1000;
        let last_ts = last_ts.max(now_micros);
        // A database created just now holds no row version, and its
        // commits take timestamps above `last_ts`, so the garbage
        // collector need not read it all to learn that. Not so for a
        // replica: entries and snapshots from its group bring versions
        // with older timestamps.
        if created && !router.replicated() {
            router.starts_empty(last_ts);
        }
        splits.observe_time(options.clock.now_nanos());
        let aligner = Arc::new(CatalogAligner(RwLock::new(Arc::new(
            crate::keys::Aligner::new(&catalog),
        ))));
        let manager = SplitManager::new(
            splits,
            ManagerConfig {
                policy: options.split_policy.clone(),
                balancer: options.balancer.clone(),
                nodes,
            },
            aligner.clone(),
        )
        .with_sizes(Arc::new(StoredSizes {
            router: router.clone(),
            limit: options.split_policy.size_limit,
            measured: Mutex::new(std::collections::HashMap::new()),
        }));
        let manager = match &options.replication {
            Some(replication) => manager.with_replication(replication.clone()),
            None => manager,
        };
        if let Some(bytes) = router.meta_get(META_SPLIT_HISTORY)? {
            match LoadHistory::from_bytes(&bytes) {
                Ok(history) => manager.set_history(history),
                Err(e) => tracing::warn!("ignoring the stored split load history: {e}"),
            }
        }
        restore_split_map(
            &router,
            &manager,
            &crate::keys::Aligner::new(&catalog),
            options.clock.now_nanos(),
        )?;
        let split_map_saved = manager.generation();
        let opened_at = options.clock.now_nanos();
        let flush_router = router.clone();
        // In a cluster, a group's timestamps are issued only once the node
        // may assign them (it holds the split's lease).
        let gate: Option<rowtree_txn::CommitGate> = router.replicated().then(|| {
            let router = router.clone();
            let gate: rowtree_txn::CommitGate =
                Arc::new(move || router.ready_to_commit().map_err(commit_error));
            gate
        });
        let pipeline = CommitPipeline::gated(
            TimestampOracle::resume(options.clock.clone(), last_ts),
            CommitOptions::default(),
            gate,
            move |groups: Vec<CommitWrites>| write_group(&flush_router, groups),
        )?;
        let stop = Arc::new(AtomicBool::new(false));
        let inner = Arc::new(Inner {
            sequences: Sequences::new(router.clone()),
            router,
            catalog: RwLock::new(Arc::new(catalog)),
            schema_gate: Arc::default(),
            ddl_lock: Mutex::new(()),
            locks: LockManager::new(),
            incarnation: rand::random(),
            pipeline,
            options,
            dialect,
            multi_split_commits: std::sync::atomic::AtomicU64::new(0),
            splits: manager,
            aligner,
            history_saved_at: std::sync::atomic::AtomicU64::new(opened_at),
            peer_histories: Mutex::new(None),
            split_map_saved: Mutex::new(split_map_saved),
            stop: stop.clone(),
            gc_thread: Mutex::new(None),
            ttl_thread: Mutex::new(None),
            split_thread: Mutex::new(None),
            extensions: RwLock::new(Vec::new()),
        });
        let db = Database { inner };
        db.refresh_split_points();
        db.start_gc();
        db.start_ttl();
        db.start_split_manager();
        Ok(db)
    }

    /// The current schema.
    pub fn catalog(&self) -> Arc<Catalog> {
        self.inner.catalog.read().clone()
    }

    /// The schema as Spanner's GetDatabaseDdl prints it, in the database's
    /// dialect.
    pub fn ddl(&self) -> Vec<String> {
        self.catalog().ddl_in(self.dialect())
    }

    /// The database's one value of type `T`, made by `make` the first
    /// time it is asked for and shared by every clone of the database.
    ///
    /// The layers above keep per-database state here that the database
    /// itself knows nothing about (the SQL layer's statement cache): it
    /// lives and dies with the database, so two databases in one process
    /// never share it.
    pub fn extension<T: Send + Sync + 'static>(&self, make: impl FnOnce() -> T) -> Arc<T> {
        let find = |all: &[Arc<dyn std::any::Any + Send + Sync>]| {
            all.iter().find_map(|e| e.clone().downcast::<T>().ok())
        };
        if let Some(found) = find(&self.inner.extensions.read()) {
            return found;
        }
        let mut all = self.inner.extensions.write();
        if let Some(found) = find(&all) {
            return found;
        }
        let made = Arc::new(make());
        all.push(made.clone());
        made
    }

    /// The SQL dialect the database was created in: its DDL is parsed and
    /// printed in it.
    pub fn dialect(&self) -> Dialect {
        self.inner.dialect
    }

    /// Whether reads and commits wait for simulated node capacity
    /// ([`Options::node_capacity`]). Such a wait puts the calling thread to
    /// sleep, so a caller that must not block (an asynchronous task on an
    /// event loop) should hand this database's work to a thread that may;
    /// [`ReadWriteTransaction::try_start_commit`](crate::ReadWriteTransaction::try_start_commit)
    /// does so by reporting that it would wait.
    pub fn node_gated(&self) -> bool {
        self.inner.router.gated()
    }

    /// Whether a snapshot read begun now may block its thread: reads wait
    /// for simulated node capacity ([`Database::node_gated`]), or for a
    /// cluster split's lease (a replicated database), or a strong
    /// read would wait for a group flush that is running late (the commit
    /// pipeline's `visible_ts` lags the clock by more than
    /// `rowtree_txn::commit::MAX_STRONG_LAG`; a read at an exact staleness
    /// shorter than that lag waits too). A caller that must not block (an
    /// event loop serving other connections) hands such a read to a thread
    /// that may; otherwise a strong read does not wait.
    pub fn reads_may_block(&self) -> bool {
        let now = self.inner.options.clock.now_nanos() / 1_000 * 1_000;
        // A replicated database's reads may wait for the split's lease.
        self.node_gated()
            || self.inner.router.replicated()
            || self.inner.pipeline.strong_read_waits(now)
    }

    /// The newest timestamp at which every commit is visible (strong reads
    /// read here).
    pub fn visible_timestamp(&self) -> u64 {
        self.inner.pipeline.visible_ts()
    }

    /// The split map and router every read and write goes through.
    pub fn router(&self) -> &Router {
        &self.inner.router
    }

    /// Reloads the schema from the DDL log in storage, for a database whose
    /// log is written by others: a cluster node whose replica applied
    /// schema changes committed by another node reloads before it serves
    /// as the group's leader. Returns whether the schema changed. Waits for
    /// a schema change running here to finish.
    pub fn reload_schema(&self) -> Result<bool> {
        let changed = {
            let _serial = self.inner.ddl_lock.lock();
            self.reload_catalog()?
        };
        if changed {
            self.refresh_split_points();
        }
        Ok(changed)
    }

    /// [`Database::reload_schema`]'s reload, for a caller holding the DDL
    /// lock (which then refreshes the split points itself, as every schema
    /// change does).
    pub(crate) fn reload_catalog(&self) -> Result<bool> {
        let loaded = load_catalog(&self.inner.router, self.inner.dialect)?;
        let mut catalog = self.inner.catalog.write();
        let changed = loaded.ddl() != catalog.ddl();
        if changed {
            *catalog = Arc::new(loaded);
        }
        Ok(changed)
    }

    /// Whether a metadata key belongs to the schema (the DDL log and the
    /// proto descriptors given with it): a cluster replica that writes one
    /// tells the database to [`Database::reload_schema`].
    pub fn is_schema_key(key: &[u8]) -> bool {
        key.starts_with(META_DDL_PREFIX) || key.starts_with(META_PROTOS_PREFIX)
    }

    /// Makes this database's commit timestamps from now on greater than
    /// `ts`, learnt from another node (a cluster node resolving another
    /// node's transaction at its commit timestamp: the next commit of the
    /// same keys here must come after it).
    pub fn observe_timestamp(&self, ts: u64) {
        self.inner.pipeline.observe(ts);
    }

    /// The database's lock table. A cluster node takes locks in it on
    /// behalf of transactions run by other nodes (whose keys fall in the
    /// splits it leads), under handles of their own priority; the
    /// database's own transactions use it through their handles.
    pub fn lock_table(&self) -> &rowtree_txn::LockManager {
        &self.inner.locks
    }

    /// Records that a cluster replica applied commits up to timestamp
    /// `ts` to this database's engine: later commit timestamps are above
    /// it, and strong reads see them (see
    /// `rowtree_txn::CommitPipeline::observe_applied`).
    pub fn observe_applied(&self, ts: u64) {
        self.inner.pipeline.observe_applied(ts);
    }

    /// The router, shared: for a cluster replica that applies its log's
    /// entries to this database's engine through the same router (so
    /// garbage collection sees the versions it writes).
    pub fn shared_router(&self) -> Arc<Router> {
        self.inner.router.clone()
    }

    /// Puts a split boundary at the start of every root-level object (root
    /// tables and non-interleaved indexes), so each starts its own split.
    pub(crate) fn refresh_split_points(&self) {
        let catalog = self.catalog();
        *self.inner.aligner.0.write() = Arc::new(crate::keys::Aligner::new(&catalog));
        for t in catalog.tables().filter(|t| t.parent.is_none()) {
            self.inner
                .router
                .splits()
                .add_split_point(&crate::keys::object_range(t.id).0);
        }
        for ix in catalog.indexes().filter(|ix| ix.interleave_in.is_none()) {
            self.inner
                .router
                .splits()
                .add_split_point(&crate::keys::object_range(ix.id).0);
        }
        if let Err(e) = self.inner.save_split_map() {
            tracing::warn!("saving the split map failed: {e}");
        }
    }

    /// Every split with its key range, node and load counters.
    pub fn split_stats(&self) -> Vec<rowtree_kv::SplitSnapshot> {
        self.inner.router.stats_snapshot()
    }

    /// Commit counters: commits, group flushes (fsyncs), and commits that
    /// spanned several splits (two-phase commits in a distributed setting).
    pub fn commit_stats(&self) -> CommitStats {
        let p = self.inner.pipeline.stats();
        CommitStats {
            commits: p.commits,
            flushes: p.flushes,
            multi_split_commits: self.inner.multi_split_commits.load(Ordering::Relaxed),
        }
    }

    /// Adds a split boundary at a (possibly partial) key of a table or
    /// index, as Spanner's AddSplitPoints does (pre-splitting), that the
    /// split manager keeps for [`DEFAULT_SPLIT_POINT_EXPIRY`] (10 days).
    /// Returns whether a new boundary was made.
    pub fn add_split_point(
        &self,
        table_or_index: &str,
        key: &[rowtree_types::Value],
    ) -> Result<bool> {
        let now = self.inner.options.clock.now_nanos();
        let expires_at = now.saturating_add(DEFAULT_SPLIT_POINT_EXPIRY.as_nanos() as u64);
        self.add_split_point_until(table_or_index, key, expires_at)
    }

    /// Like [`Database::add_split_point`], with the boundary kept (never
    /// merged away) until `expires_at` (nanoseconds since the epoch), at
    /// most [`MAX_SPLIT_POINT_EXPIRY`] (30 days) from now. An expiry in the
    /// past is refused. The boundary and its expiry are stored with the
    /// split map before this returns, so they survive a restart; an error
    /// saving it is returned (the boundary exists in memory all the same).
    pub fn add_split_point_until(
        &self,
        table_or_index: &str,
        key: &[rowtree_types::Value],
        expires_at: u64,
    ) -> Result<bool> {
        let (now, expires_at) = self.split_point_expiry(expires_at)?;
        let catalog = self.catalog();
        let (table, index) = match catalog.index(table_or_index) {
            Some(ix) => {
                let t = catalog
                    .table_by_id(ix.table)
                    .ok_or_else(|| Error::internal("table vanished"))?;
                (t.name.clone(), Some(ix.name.clone()))
            }
            None => (table_or_index.to_string(), None),
        };
        let target = crate::target::Target::resolve(&catalog, &table, index.as_deref())?;
        let key = target.coerce_key(key)?;
        let point = crate::keys::encode_prefix(&target.levels, &key)?;
        let made = self.inner.splits.add_split_point(now, &point, expires_at);
        self.inner.save_split_map()?;
        Ok(made)
    }

    /// Now, and a split point's expiry `expires_at` capped at
    /// [`MAX_SPLIT_POINT_EXPIRY`] from now; an expiry in the past is
    /// refused.
    fn split_point_expiry(&self, expires_at: u64) -> Result<(u64, u64)> {
        let now = self.inner.options.clock.now_nanos();
        if expires_at <= now {
            return Err(Error::InvalidArgument {
                message: "the expiration time of a split point must be in the future".into(),
            });
        }
        let capped = expires_at.min(now.saturating_add(MAX_SPLIT_POINT_EXPIRY.as_nanos() as u64));
        Ok((now, capped))
    }

    /// A manual split point at the encoded key `key` (a boundary
    /// [`Database::add_split_point_until`] made from a table's key), kept
    /// until `expires_at` within the same limits: what a cluster node leading
    /// the split that holds `key` is asked by the node that took a client's
    /// AddSplitPoints. Returns `true` if a new boundary was made.
    pub fn add_split_point_key(&self, key: &[u8], expires_at: u64) -> Result<bool> {
        let (now, expires_at) = self.split_point_expiry(expires_at)?;
        let made = self.inner.splits.add_split_point(now, key, expires_at);
        self.inner.save_split_map()?;
        Ok(made)
    }

    /// The tables and indexes with rows in the key range `[start, limit)`
    /// (`None`: to the end of the key space), by name, sorted: the
    /// `AFFECTED_TABLES` of a split. Interleaved tables and indexes live in
    /// their root table's key range.
    pub fn tables_in_range(&self, start: &[u8], limit: Option<&[u8]>) -> Vec<String> {
        let catalog = self.catalog();
        let root_of = |mut id: rowtree_schema::TableId| {
            while let Some(p) = catalog.table_by_id(id).and_then(|t| t.parent.as_ref()) {
                id = p.table;
            }
            id
        };
        let overlaps = |object: u32| {
            let (lo, hi) = crate::keys::object_range(object);
            limit.is_none_or(|l| lo.as_slice() < l) && hi.is_none_or(|h| start < h.as_slice())
        };
        let mut names: Vec<String> = catalog
            .tables()
            .filter(|t| overlaps(root_of(t.id)))
            .map(|t| t.name.clone())
            .chain(
                catalog
                    .indexes()
                    .filter(|ix| match ix.interleave_in {
                        Some(parent) => overlaps(root_of(parent)),
                        None => overlaps(ix.id),
                    })
                    .map(|ix| ix.name.clone()),
            )
            .collect();
        names.sort();
        names.dedup();
        names
    }

    /// The split manager: splits by load, merges, moves between nodes.
    pub fn split_manager(&self) -> &SplitManager {
        &self.inner.splits
    }

    /// The split load history (`SPANNER_SYS.SPLIT_STATS_TOP_*`, the key
    /// visualizer): this database's own, or on a cluster node that was
    /// given the other nodes' ([`Database::set_peer_histories`]), all of
    /// them side by side, each row labelled with the node that served it.
    pub fn split_history(&self) -> LoadHistory {
        let local = self.inner.splits.history().clone();
        match &*self.inner.peer_histories.lock() {
            None => local,
            Some((me, peers)) => LoadHistory::merged(
                std::iter::once((*me, &local)).chain(peers.iter().map(|(n, h)| (*n, h))),
            ),
        }
    }

    /// The history of the requests this database served itself (on a
    /// cluster node: of the splits it led), what a node hands to the one
    /// that gathers them.
    pub fn local_split_history(&self) -> LoadHistory {
        self.inner.splits.history().clone()
    }

    /// Tells the database, on a cluster node, its node's id and the latest
    /// split load histories of the other nodes serving it (each from
    /// their [`Database::local_split_history`]), which
    /// [`Database::split_history`] then includes.
    pub fn set_peer_histories(&self, me: NodeId, peers: Vec<(NodeId, LoadHistory)>) {
        *self.inner.peer_histories.lock() = Some((me, peers));
    }

    /// Every split event so far (the last 10,000), oldest first.
    pub fn split_events(&self) -> Vec<SplitEvent> {
        self.inner.splits.events()
    }

    /// Runs the split manager's periodic work at the clock's time now (the
    /// background thread does this every [`Options::split_interval`]),
    /// saves the split map if anything in it changed, and persists the load
    /// history if it was last saved a minute ago or more. Returns what
    /// changed.
    pub fn tick_splits(&self) -> Vec<SplitEvent> {
        let now = self.inner.options.clock.now_nanos();
        let events = self.inner.splits.tick(now);
        if let Err(e) = self.inner.save_split_map() {
            tracing::warn!("saving the split map failed: {e}");
        }
        let saved = self.inner.history_saved_at.load(Ordering::Relaxed);
        if now.saturating_sub(saved) >= HISTORY_SAVE_INTERVAL {
            self.inner.history_saved_at.store(now, Ordering::Relaxed);
            if let Err(e) = self.inner.save_split_history() {
                tracing::warn!("saving the split load history failed: {e}");
            }
        }
        events
    }

    fn start_split_manager(&self) {
        let handle =
            self.spawn_periodic("rowtree-splits", self.inner.options.split_interval, |db| {
                for event in db.tick_splits() {
                    log_split_event(&event);
                }
            });
        *self.inner.split_thread.lock() = handle;
    }

    /// A background thread that runs `pass` every `interval` until the
    /// database is dropped (it holds only a weak reference; dropping the
    /// database sets `stop` and unparks it).
    fn spawn_periodic(
        &self,
        name: &str,
        interval: Duration,
        pass: impl Fn(Database) + Send + 'static,
    ) -> Option<JoinHandle<()>> {
        let weak = Arc::downgrade(&self.inner);
        let stop = self.inner.stop.clone();
        std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                let mut next = std::time::Instant::now() + interval;
                while !stop.load(Ordering::Relaxed) {
                    let now = std::time::Instant::now();
                    if now < next {
                        std::thread::park_timeout(next - now);
                        continue;
                    }
                    next = now + interval;
                    let Some(inner) = weak.upgrade() else { break };
                    pass(Database { inner });
                }
            })
            .ok()
    }

    /// How long old versions stay readable: the database option
    /// `version_retention_period` if set (ALTER DATABASE), else
    /// [`Options::version_retention`]; at most
    /// [`Options::max_version_retention`] when that is set.
    pub fn version_retention(&self) -> Duration {
        let period = self
            .catalog()
            .version_retention()
            .unwrap_or(self.inner.options.version_retention);
        match self.inner.options.max_version_retention {
            Some(cap) => period.min(cap),
            None => period,
        }
    }

    /// The oldest timestamp that may still be read.
    pub fn oldest_readable_timestamp(&self) -> u64 {
        let now = self.inner.options.clock.now_nanos();
        now.saturating_sub(self.version_retention().as_nanos() as u64)
    }

    /// Runs one garbage-collection pass now: versions no read may need any
    /// more (older than the retention period and shadowed) are removed.
    ///
    /// Each pass logs a start and an end line (target `rowtree_db::gc`, at
    /// debug level; the end at info when it removed something), so a log
    /// shows whether a crash came in the middle of one.
    pub fn collect_garbage(&self) -> Result<()> {
        let horizon = self.gc_horizon();
        let started = std::time::Instant::now();
        tracing::debug!(target: "rowtree_db::gc", horizon, "gc pass started");
        let stats = self.inner.router.collect_garbage(horizon, usize::MAX)?;
        let ms = started.elapsed().as_secs_f64() * 1e3;
        if stats.versions_deleted > 0 {
            tracing::info!(
                target: "rowtree_db::gc",
                removed = stats.versions_deleted,
                examined = stats.versions_examined,
                ms,
                "gc pass ended"
            );
        } else {
            tracing::debug!(
                target: "rowtree_db::gc",
                examined = stats.versions_examined,
                ms,
                "gc pass ended"
            );
        }
        Ok(())
    }

    /// The commit timestamp recorded under `tag` if this replica applied
    /// that commit (see [`crate::outcome`]); `None` says nothing final by
    /// itself (the commit may still be on its way).
    pub fn recorded_outcome(&self, tag: &OutcomeTag) -> Result<Option<u64>> {
        Ok(self
            .inner
            .router
            .meta_get(&tag.key())?
            .and_then(|v| outcome::recorded_ts(&v)))
    }

    /// Deletes the outcomes recorded more than [`OUTCOME_RETENTION`] ago
    /// (by their tags' `not_after`), locally, as garbage collection does
    /// with versions; returns how many. Part of the periodic pass.
    pub fn prune_outcomes(&self) -> Result<usize> {
        let now = self.inner.options.clock.now_nanos();
        let cutoff = now.saturating_sub(OUTCOME_RETENTION.as_nanos() as u64);
        let mut batch = WriteBatch::new();
        for item in self.inner.router.meta_scan(OUTCOME_PREFIX) {
            let (key, _) = item?;
            match outcome::key_not_after(&key) {
                Some(t) if t >= cutoff => break,
                _ => self.inner.router.stage_meta(&mut batch, key, None),
            }
        }
        let n = batch.len();
        if n > 0 {
            self.inner.router.write(batch, Durability::Buffered)?;
        }
        Ok(n)
    }

    /// The periodic pass: [`collect_garbage`](Self::collect_garbage) unless
    /// no version was written since the last complete pass at a timestamp
    /// its horizon has now reached, in which case there is nothing to
    /// delete and reading the whole database to find that out is skipped
    /// (`rowtree_kv::gc_watch`). Returns whether a pass ran.
    pub fn collect_garbage_if_needed(&self) -> Result<bool> {
        self.prune_outcomes()?;
        let horizon = self.gc_horizon();
        if !self.inner.router.garbage_possible(horizon) {
            tracing::debug!(target: "rowtree_db::gc", horizon, "gc pass skipped: no new garbage possible");
            return Ok(false);
        }
        self.collect_garbage()?;
        Ok(true)
    }

    /// The horizon of a pass starting now: no read may need a version
    /// shadowed at or below it.
    fn gc_horizon(&self) -> u64 {
        self.oldest_readable_timestamp()
            .min(self.visible_timestamp())
    }

    fn start_gc(&self) {
        let handle = self.spawn_periodic("rowtree-gc", self.inner.options.gc_interval, |db| {
            if let Err(e) = db.collect_garbage_if_needed() {
                tracing::warn!("garbage collection failed: {e}");
            }
        });
        *self.inner.gc_thread.lock() = handle;
    }

    fn start_ttl(&self) {
        let handle = self.spawn_periodic("rowtree-ttl", self.inner.options.ttl_interval, |db| {
            if let Err(e) = db.delete_expired_rows() {
                tracing::warn!("deleting expired rows failed: {e}");
            }
        });
        *self.inner.ttl_thread.lock() = handle;
    }
}

/// Puts back the split map saved by [`Inner::save_split_map`], if there is
/// one and it is valid; otherwise the map stays the default one (a record
/// that does not decode or validate is ignored with a warning: splits serve
/// requests, they hold no data, so a bad record must not keep the database
/// from opening). Besides the checks of [`rowtree_kv::SplitsRecord`] (a
/// complete cover of the key space), no boundary may lie inside a row of
/// the schema (`aligner`): row scans are cut at split limits, and rely on
/// no stored row key being a proper prefix of one (see
/// [`SplitMap::add_split_point`]). Either way new split ids start above
/// every id the load history mentions.
fn restore_split_map(
    router: &Router,
    manager: &SplitManager,
    aligner: &crate::keys::Aligner,
    now: u64,
) -> Result<()> {
    let history_next = manager.history().max_split_id().map_or(0, |id| id.0 + 1);
    let restored = match router.meta_get(META_SPLIT_MAP)? {
        None => false,
        Some(bytes) => {
            let record =
                rowtree_kv::SplitsRecord::from_bytes(&bytes).and_then(|record| {
                    match record
                        .splits
                        .iter()
                        .find(|s| extends_a_row_key(aligner, &s.start))
                    {
                        Some(s) => Err(rowtree_kv::Error::CorruptSplitMap(format!(
                            "split {} starts inside a row",
                            s.id
                        ))),
                        None => Ok(record),
                    }
                });
            match record.and_then(|r| manager.restore(r, now)) {
                Ok(()) => true,
                Err(e) => {
                    tracing::warn!("ignoring the stored split map, starting from the default: {e}");
                    false
                }
            }
        }
    };
    if !restored && history_next > 1 {
        // The default map's one split would be id 1, which the history
        // may name: start it above.
        manager.restore(rowtree_kv::SplitsRecord::whole(history_next, now), now)?;
    }
    manager.map().reserve_ids(history_next);
    Ok(())
}

/// Whether a row key of the schema is a proper prefix of `key`: a complete
/// row (its levels' object ids and key columns) followed by the row end
/// marker and more bytes.
fn extends_a_row_key(aligner: &crate::keys::Aligner, key: &[u8]) -> bool {
    aligner
        .level_prefixes(key)
        .iter()
        .any(|row| key.len() > row.len() + 1 && key[row.len()] == rowtree_encoding::ROW_END)
}

impl Inner {
    /// Writes the split map (with the manager's manual split points and
    /// mergeable boundaries) to the Meta space if it changed since it was
    /// last written: one record in one atomic batch, so a crash leaves the
    /// old map or the new one.
    fn save_split_map(&self) -> Result<()> {
        let mut saved = self.split_map_saved.lock();
        // The generation is read before the record: a change in between is
        // in the record and is saved again next time, never lost.
        let generation = self.splits.generation();
        if generation == *saved {
            return Ok(());
        }
        let bytes = self.splits.to_record().to_bytes();
        let mut batch = WriteBatch::new();
        self.router
            .stage_meta(&mut batch, META_SPLIT_MAP.to_vec(), Some(bytes));
        self.router.write(batch, Durability::Sync)?;
        *saved = generation;
        Ok(())
    }

    /// Writes the split load history to the Meta space.
    fn save_split_history(&self) -> Result<()> {
        let bytes = self.splits.history().to_bytes();
        let mut batch = WriteBatch::new();
        self.router
            .stage_meta(&mut batch, META_SPLIT_HISTORY.to_vec(), Some(bytes));
        self.router.write(batch, Durability::Sync)?;
        Ok(())
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for thread in [&self.gc_thread, &self.ttl_thread, &self.split_thread] {
            if let Some(h) = thread.lock().take() {
                h.thread().unpark();
                if h.thread().id() != std::thread::current().id() {
                    let _ = h.join();
                }
            }
        }
        if let Err(e) = self.save_split_history() {
            tracing::warn!("saving the split load history failed: {e}");
        }
        if let Err(e) = self.save_split_map() {
            tracing::warn!("saving the split map failed: {e}");
        }
    }
}

impl Database {
    /// Every live key at the latest visible timestamp, decoded into its
    /// object (table or index) and key values, in key order. Shows how row
    /// trees and indexes are laid out; meant for tests and debugging.
    pub fn dump(&self) -> Result<Vec<crate::keys::DecodedKey>> {
        let catalog = self.catalog();
        let ts = self.visible_timestamp();
        let mut out = Vec::new();
        for item in self.inner.router.scan_uncharged(
            std::ops::Bound::Unbounded,
            std::ops::Bound::Unbounded,
            ts,
            false,
        ) {
            let (key, _) = item?;
            if let Some((object, values)) = crate::keys::decode_key(&catalog, &key)? {
                out.push((key, object, values));
            }
        }
        Ok(out)
    }
}

/// Logs what the split manager's background pass changed or found (the
/// operator's view of load splits; `SPANNER_SYS.SPLIT_STATS_TOP_*` keeps
/// the numbers).
fn log_split_event(event: &SplitEvent) {
    match event {
        SplitEvent::Split {
            parent,
            key,
            reason,
            ..
        } => tracing::info!(
            split = %parent,
            at = %hex_key(key),
            reason = ?reason,
            "split cut in two"
        ),
        SplitEvent::Merge { left, right, .. } => {
            tracing::info!(%left, %right, "cold neighbouring splits merged")
        }
        SplitEvent::Unsplittable { split, reason, .. } => tracing::info!(
            %split,
            %reason,
            "a hot split cannot be usefully cut"
        ),
        _ => {}
    }
}

/// A key in lowercase hex, for logs.
fn hex_key(key: &[u8]) -> String {
    key.iter().map(|b| format!("{b:02x}")).collect()
}
