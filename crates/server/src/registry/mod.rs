//! Instances and databases: what `rowtree serve` hosts, and where.
//!
//! A server holds any number of instances (`projects/P/instances/I`), each
//! with any number of databases (`.../databases/D`). Each database is one
//! [`rowtree_db::Database`] with a directory of its own under
//! `DATA_DIR/databases/<uuid>` (a fresh directory per creation, so a
//! database dropped and created again under the same name never meets the
//! old files). The list of instances and databases, with their metadata
//! (labels, create times, drop protection, proto descriptors), is the
//! document `DATA_DIR/registry.json`, rewritten atomically (temporary file,
//! fsync, rename) on every change; a restart reads it and opens every
//! database, so instances, databases, schemas and data all survive.
//!
//! With `--in-memory` the same structures hold memory-engine databases and
//! nothing is written.
//!
//! # Locking
//!
//! Every data request looks its database up here, so lookups must never
//! wait on disk work. A change (create, update, drop) takes the `writer`
//! lock, which orders changes, and works on a copy of the state: opening a
//! new database's files and writing `registry.json` (with its fsyncs)
//! happen under `writer` alone. Only when the document is durable does the
//! change swap its copy in, under the `state` lock that lookups take for a
//! moment. A lookup therefore sees a change only once it survives a
//! restart, and never waits for one.
//!
//! `registry.json` carries its own format version ([`REGISTRY_FORMAT_VERSION`],
//! the field `format_version`), written when the data directory is created
//! and checked when it is opened, as each database checks its own
//! (`rowtree_db::format`): a document without one was written before the
//! field existed and is version 1 (the field is added); any other version is
//! refused with [`UnsupportedRegistryFormat`] before a database is opened.
//! `docs/architecture/on-disk-format.md` describes the whole directory.
//!
//! # In a cluster
//!
//! On a node of a cluster (`rowtree serve --cluster`) the document lives in
//! the cluster's placement group instead of `registry.json`, so every node
//! serves the same instances and databases; each database is a Raft group
//! replicated on a few nodes. [`cluster`] says how changes and lookups work
//! there.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;
use rowtree_db::Database;
use serde::{Deserialize, Serialize};
use tonic::Status;

use crate::status;

pub mod cluster;

/// An instance's metadata, as clients see it (`google.spanner.admin.instance.v1.Instance`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct InstanceMeta {
    pub name: String,
    pub config: String,
    pub display_name: String,
    pub node_count: i32,
    pub processing_units: i32,
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    /// Nanoseconds since the epoch.
    pub create_time: i64,
    pub update_time: i64,
    #[serde(default)]
    pub edition: i32,
}

/// A database's metadata (`google.spanner.admin.database.v1.Database`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DatabaseMeta {
    pub name: String,
    /// Directory under `DATA_DIR/databases` (empty in memory).
    pub dir: String,
    pub create_time: i64,
    #[serde(default)]
    pub enable_drop_protection: bool,
    /// The proto descriptors given at create / DDL time, base64.
    #[serde(default)]
    pub proto_descriptors: String,
    /// `DatabaseDialect` (1 = GoogleSQL, 2 = PostgreSQL), mirroring the
    /// dialect the database records itself (`rowtree_db::Database::dialect`).
    #[serde(default = "google_sql")]
    pub dialect: i32,
    /// In a cluster: the Raft group that holds the database. Absent in a
    /// single process's `registry.json`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<GroupMeta>,
}

/// The Raft group of a database in a cluster.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct GroupMeta {
    /// The group's id, unique in the cluster (1 and up).
    pub id: u64,
    /// The nodes holding a replica, every one a voter.
    pub members: Vec<u64>,
    /// The node that created the database and started its group.
    pub bootstrap: u64,
    /// The node that should lead the group once the database is made (the
    /// creating node hands the leadership over; 0: no preference), so that
    /// databases' leaders spread over the nodes.
    #[serde(default)]
    pub leader: u64,
    /// The nodes named members after the group was made (replacements of
    /// dead or removed nodes, moves by load). Such a node makes its
    /// replica of the database's first split empty for an image: the
    /// group's log from its start need not hold every row the split holds
    /// (a merge takes in its neighbour's rows without writing them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub joined: Vec<u64>,
}

fn google_sql() -> i32 {
    1
}

/// `DatabaseDialect::Postgresql`.
const POSTGRESQL: i32 = 2;

/// The format of `registry.json` this build reads and writes.
pub const REGISTRY_FORMAT_VERSION: u32 = 1;

/// `registry.json` is in a format this build does not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{path} is in registry format version {found}, but this build of Rowtree reads format \
     version {supported} only; open the data directory with a Rowtree that reads version {found}"
)]
pub struct UnsupportedRegistryFormat {
    /// The document's path.
    pub path: PathBuf,
    /// The version the document records.
    pub found: u32,
    /// [`REGISTRY_FORMAT_VERSION`].
    pub supported: u32,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Document {
    /// Absent in documents written before the field existed (version 1).
    #[serde(default)]
    format_version: Option<u32>,
    instances: Vec<InstanceMeta>,
    databases: Vec<DatabaseMeta>,
    /// In a cluster: the id the next database's group gets.
    #[serde(default, skip_serializing_if = "is_zero")]
    next_group: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Document {
    /// Refuses a document this build cannot read; see the module docs.
    fn check_format(&self, path: &Path) -> Result<(), UnsupportedRegistryFormat> {
        match self.format_version.unwrap_or(1) {
            REGISTRY_FORMAT_VERSION => Ok(()),
            found => Err(UnsupportedRegistryFormat {
                path: path.to_path_buf(),
                found,
                supported: REGISTRY_FORMAT_VERSION,
            }),
        }
    }
}

/// An open database with its metadata.
#[derive(Clone)]
pub struct Hosted {
    pub meta: DatabaseMeta,
    pub db: Database,
}

#[derive(Clone)]
struct State {
    instances: BTreeMap<String, InstanceMeta>,
    databases: BTreeMap<String, Hosted>,
    /// On a cluster node: the databases placed on other nodes only.
    elsewhere: BTreeMap<String, DatabaseMeta>,
}

/// The server's instances and databases.
pub struct Registry {
    dir: Option<PathBuf>,
    /// What lookups read; held only to read or to swap in a change.
    state: Mutex<State>,
    /// Orders changes, and is held across their disk work (see the module
    /// docs).
    writer: Mutex<()>,
    options: rowtree_db::Options,
    /// On a cluster node: where the document lives, and the databases'
    /// groups ([`cluster`]).
    cluster: Option<cluster::Replicated>,
}

/// `projects/P/instances/I` of a database name, or None if malformed.
pub fn instance_of(database: &str) -> Option<&str> {
    let idx = database.find("/databases/")?;
    Some(&database[..idx])
}

/// Spanner's rules for an instance id: 2 to 64 characters, starting with a
/// lower-case letter, lower-case letters, digits and `-`, not ending with `-`.
pub fn check_instance_id(id: &str) -> Result<(), Status> {
    let ok = (2..=64).contains(&id.len())
        && id.starts_with(|c: char| c.is_ascii_lowercase())
        && id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !id.ends_with('-');
    if ok {
        Ok(())
    } else {
        Err(Status::invalid_argument(format!(
            "Invalid instance id: {id}. The id must be 2 to 64 characters long, start with a \
             lower-case letter, contain only lower-case letters, digits and '-', and not end \
             with '-'"
        )))
    }
}

/// Checks `projects/P/instances/I`.
pub fn check_instance_name(name: &str) -> Result<(), Status> {
    let parts: Vec<&str> = name.split('/').collect();
    if parts.len() == 4
        && parts[0] == "projects"
        && parts[2] == "instances"
        && !parts[1].is_empty()
        && !parts[3].is_empty()
    {
        Ok(())
    } else {
        Err(Status::invalid_argument(format!(
            "Invalid instance name: {name}"
        )))
    }
}

/// Checks `projects/P/instances/I/databases/D` and Spanner's rules for the
/// database id: 2 to 30 characters, starting with a letter, lower-case
/// letters, digits, `_` and `-`, not ending with `_` or `-`.
pub fn check_database_name(name: &str) -> Result<(), Status> {
    let parts: Vec<&str> = name.split('/').collect();
    if !(parts.len() == 6
        && parts[0] == "projects"
        && parts[2] == "instances"
        && parts[4] == "databases")
    {
        return Err(Status::invalid_argument(format!(
            "Invalid database name: {name}"
        )));
    }
    check_database_id(parts[5])
}

/// Spanner's rules for a database id.
pub fn check_database_id(id: &str) -> Result<(), Status> {
    let ok = (2..=30).contains(&id.len())
        && id.starts_with(|c: char| c.is_ascii_lowercase())
        && id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
        && !id.ends_with(['_', '-']);
    if ok {
        Ok(())
    } else {
        Err(Status::invalid_argument(format!(
            "Invalid database id: {id}. The id must be 2 to 30 characters long, start with a \
             lower-case letter, contain only lower-case letters, digits, '_' and '-', and not \
             end with '_' or '-'"
        )))
    }
}

/// Nanoseconds since the epoch as `google.protobuf.Timestamp`.
pub(crate) fn timestamp_pb(nanos: i64) -> prost_types::Timestamp {
    prost_types::Timestamp {
        seconds: nanos.div_euclid(1_000_000_000),
        nanos: nanos.rem_euclid(1_000_000_000) as i32,
    }
}

pub(crate) fn now_nanos() -> i64 {
    chrono::Utc::now().timestamp_nanos_opt().unwrap_or(0)
}

impl Registry {
    /// Opens (or creates) the registry in `dir`, opening every database it
    /// lists; `None` keeps everything in memory. A `registry.json` (or a
    /// database) in a format this build does not read is refused, naming
    /// both versions.
    pub fn open(dir: Option<&Path>, options: rowtree_db::Options) -> Result<Registry, String> {
        let mut state = State {
            instances: BTreeMap::new(),
            databases: BTreeMap::new(),
            elsewhere: BTreeMap::new(),
        };
        // Whether registry.json must be (re)written with the format version:
        // a new data directory, or a document from before the field.
        let mut record_format = false;
        if let Some(dir) = dir {
            std::fs::create_dir_all(dir.join("databases"))
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
            let path = dir.join("registry.json");
            if path.exists() {
                let text = std::fs::read_to_string(&path)
                    .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
                let doc: Document = serde_json::from_str(&text)
                    .map_err(|e| format!("{} is damaged: {e}", path.display()))?;
                doc.check_format(&path).map_err(|e| e.to_string())?;
                record_format = doc.format_version.is_none();
                for i in doc.instances {
                    state.instances.insert(i.name.clone(), i);
                }
                for d in doc.databases {
                    let path = dir.join("databases").join(&d.dir);
                    let db = Database::open_with(&path, with_advice(&options, &d.name))
                        .map_err(|e| format!("cannot open database {}: {e}", d.name))?;
                    tracing::info!(database = %d.name, "opened");
                    state
                        .databases
                        .insert(d.name.clone(), Hosted { meta: d, db });
                }
            } else {
                record_format = true;
            }
        }
        let registry = Registry {
            dir: dir.map(Path::to_path_buf),
            state: Mutex::new(state),
            writer: Mutex::new(()),
            options,
            cluster: None,
        };
        if record_format {
            registry
                .save(&registry.state.lock())
                .map_err(|e| e.message().to_string())?;
        }
        Ok(registry)
    }

    /// Makes a change: `change` edits a copy of the state (it may do disk
    /// work: nothing but other changes waits for it), the copy is written to
    /// `registry.json`, and only then replaces the state lookups read.
    fn mutate<T>(&self, change: impl FnOnce(&mut State) -> Result<T, Status>) -> Result<T, Status> {
        let _writer = self.writer.lock();
        let mut next = self.state.lock().clone();
        let out = change(&mut next)?;
        self.save(&next)?;
        let before = std::mem::replace(&mut *self.state.lock(), next);
        // A dropped database's last handle may go with the old state, and
        // closing a database waits for its threads: not under the lock.
        drop(before);
        Ok(out)
    }

    fn save(&self, state: &State) -> Result<(), Status> {
        let Some(dir) = &self.dir else { return Ok(()) };
        let doc = Document {
            format_version: Some(REGISTRY_FORMAT_VERSION),
            instances: state.instances.values().cloned().collect(),
            databases: state.databases.values().map(|h| h.meta.clone()).collect(),
            next_group: 0,
        };
        let text =
            serde_json::to_string_pretty(&doc).map_err(|e| Status::internal(e.to_string()))?;
        let tmp = dir.join("registry.json.tmp");
        let write = || -> std::io::Result<()> {
            use std::io::Write;
            let mut f = std::fs::File::create(&tmp)?;
            f.write_all(text.as_bytes())?;
            f.sync_data()?;
            std::fs::rename(&tmp, dir.join("registry.json"))?;
            std::fs::File::open(dir)?.sync_all()
        };
        write().map_err(|e| Status::internal(format!("cannot write the registry: {e}")))
    }

    pub fn instances(&self) -> Vec<InstanceMeta> {
        self.state.lock().instances.values().cloned().collect()
    }

    pub fn instance(&self, name: &str) -> Result<InstanceMeta, Status> {
        let found = self.state.lock().instances.get(name).cloned();
        match (found, &self.cluster) {
            (Some(meta), _) => Ok(meta),
            // Made through another node a moment ago: the stored document
            // has it before this node follows it.
            (None, Some(c)) => c.stored_instance(name)?.ok_or_else(|| {
                status::not_found("google.spanner.admin.instance.v1.Instance", name)
            }),
            (None, None) => Err(status::not_found(
                "google.spanner.admin.instance.v1.Instance",
                name,
            )),
        }
    }

    pub fn create_instance(&self, meta: InstanceMeta) -> Result<(), Status> {
        if let Some(c) = &self.cluster {
            return c.create_instance(self, meta);
        }
        self.mutate(|state| {
            if state.instances.contains_key(&meta.name) {
                return Err(Status::already_exists(format!(
                    "Instance already exists: {}",
                    meta.name
                )));
            }
            state.instances.insert(meta.name.clone(), meta);
            Ok(())
        })
    }

    pub fn update_instance(&self, meta: InstanceMeta) -> Result<(), Status> {
        if let Some(c) = &self.cluster {
            return c.update_instance(self, meta);
        }
        self.mutate(|state| {
            if !state.instances.contains_key(&meta.name) {
                return Err(status::not_found(
                    "google.spanner.admin.instance.v1.Instance",
                    &meta.name,
                ));
            }
            state.instances.insert(meta.name.clone(), meta);
            Ok(())
        })
    }

    /// Deletes an instance and every database in it.
    pub fn delete_instance(&self, name: &str) -> Result<(), Status> {
        if let Some(c) = &self.cluster {
            return c.delete_instance(self, name);
        }
        let dirs = self.mutate(|state| {
            if !state.instances.contains_key(name) {
                return Err(status::not_found(
                    "google.spanner.admin.instance.v1.Instance",
                    name,
                ));
            }
            let prefix = format!("{name}/databases/");
            if let Some(protected) = state
                .databases
                .values()
                .find(|h| h.meta.name.starts_with(&prefix) && h.meta.enable_drop_protection)
            {
                return Err(Status::failed_precondition(format!(
                    "Cannot delete instance {name}: database {} has drop protection enabled",
                    protected.meta.name
                )));
            }
            state.instances.remove(name);
            let doomed: Vec<String> = state
                .databases
                .keys()
                .filter(|k| k.starts_with(&prefix))
                .cloned()
                .collect();
            let mut dirs = Vec::new();
            for d in doomed {
                if let Some(h) = state.databases.remove(&d) {
                    dirs.push(h.meta.dir);
                }
            }
            Ok(dirs)
        })?;
        for d in dirs {
            self.remove_dir(&d);
        }
        Ok(())
    }

    pub fn databases(&self, instance: &str) -> Vec<Hosted> {
        let prefix = format!("{instance}/databases/");
        self.state
            .lock()
            .databases
            .iter()
            .filter(|(k, _)| k.starts_with(&prefix))
            .map(|(_, v)| v.clone())
            .collect()
    }

    /// On a cluster node: the databases of `instance` that other nodes
    /// hold and this one does not (as of the last [`Registry::follow`]).
    pub fn elsewhere(&self, instance: &str) -> Vec<DatabaseMeta> {
        let prefix = format!("{instance}/databases/");
        self.state
            .lock()
            .elsewhere
            .range(prefix.clone()..)
            .take_while(|(k, _)| k.starts_with(&prefix))
            .map(|(_, m)| m.clone())
            .collect()
    }

    /// On a cluster node: the group of database `name` if it is placed on
    /// other nodes only (as of the last [`Registry::follow`]).
    pub fn placed_elsewhere(&self, name: &str) -> Option<GroupMeta> {
        self.state.lock().elsewhere.get(name)?.group.clone()
    }

    /// Whether a database exists (cheaper than [`Registry::database`]).
    pub fn has_database(&self, name: &str) -> bool {
        self.state.lock().databases.contains_key(name)
    }

    /// On a cluster node, for a database this node holds: what names its
    /// sessions ([`crate::spanner`]'s session names carry a code made
    /// with it), the cluster's id and the database's group, so that any
    /// node serving the database knows a session another node made, and
    /// not one of a database dropped since (a database made again under
    /// the same name has another group). `None` on a single process, and
    /// for a database this node does not hold.
    pub(crate) fn session_key(&self, name: &str) -> Option<Vec<u8>> {
        let c = self.cluster.as_ref()?;
        let group = self
            .state
            .lock()
            .databases
            .get(name)?
            .meta
            .group
            .as_ref()?
            .id;
        let cluster_id = c.cluster_id();
        if cluster_id.is_empty() {
            return None;
        }
        let mut key = cluster_id.into_bytes();
        key.push(0);
        key.extend_from_slice(&group.to_be_bytes());
        Some(key)
    }

    pub fn database(&self, name: &str) -> Result<Hosted, Status> {
        let found = self.state.lock().databases.get(name).cloned();
        match (found, &self.cluster) {
            (Some(hosted), _) => Ok(hosted),
            (None, Some(c)) => Err(c.not_here(name)?),
            (None, None) => Err(status::not_found(
                "google.spanner.admin.database.v1.Database",
                name,
            )),
        }
    }

    /// Creates an empty database (the caller applies its DDL, then calls
    /// [`Registry::drop_database`] if that fails).
    pub fn create_database(
        &self,
        name: &str,
        proto_descriptors: &[u8],
        dialect: i32,
    ) -> Result<Hosted, Status> {
        check_database_name(name)?;
        if let Some(c) = &self.cluster {
            return c.create_database(self, name, proto_descriptors, dialect);
        }
        let instance = instance_of(name).unwrap_or_default().to_string();
        // The directory made for the database, removed again if the change
        // fails after making it (registry.json could not be written).
        let mut made = None;
        let created = self.mutate(|state| {
            if !state.instances.contains_key(&instance) {
                return Err(status::not_found(
                    "google.spanner.admin.instance.v1.Instance",
                    &instance,
                ));
            }
            if state.databases.contains_key(name) {
                return Err(Status::already_exists(format!(
                    "Database already exists: {name}"
                )));
            }
            // The database records its dialect itself (so every opener
            // knows it); the registry mirrors it for the admin API.
            let options = rowtree_db::Options {
                dialect: if dialect == POSTGRESQL {
                    rowtree_types::Dialect::PostgreSql
                } else {
                    rowtree_types::Dialect::GoogleSql
                },
                ..with_advice(&self.options, name)
            };
            let (dir, db) = match &self.dir {
                Some(root) => {
                    let dir = uuid::Uuid::new_v4().simple().to_string();
                    made = Some(dir.clone());
                    let db = Database::open_with(root.join("databases").join(&dir), options)
                        .map_err(status::from_db)?;
                    (dir, db)
                }
                None => (String::new(), Database::in_memory_with(options)),
            };
            use base64::Engine as _;
            let meta = DatabaseMeta {
                name: name.to_string(),
                dir,
                create_time: now_nanos(),
                enable_drop_protection: false,
                proto_descriptors: base64::engine::general_purpose::STANDARD
                    .encode(proto_descriptors),
                dialect: if dialect == 0 { 1 } else { dialect },
                group: None,
            };
            let hosted = Hosted { meta, db };
            state.databases.insert(name.to_string(), hosted.clone());
            Ok(hosted)
        });
        if let (Err(_), Some(dir)) = (&created, made) {
            self.remove_dir(&dir);
        }
        created
    }

    /// Changes a database's metadata.
    pub fn update_database(
        &self,
        name: &str,
        f: impl FnOnce(&mut DatabaseMeta),
    ) -> Result<Hosted, Status> {
        if let Some(c) = &self.cluster {
            return c.update_database(self, name, f);
        }
        self.mutate(|state| {
            let hosted = state.databases.get_mut(name).ok_or_else(|| {
                status::not_found("google.spanner.admin.database.v1.Database", name)
            })?;
            f(&mut hosted.meta);
            Ok(hosted.clone())
        })
    }

    /// Drops a database: it disappears at once; its files go when the last
    /// session using it lets go (they are unlinked now).
    pub fn drop_database(&self, name: &str) -> Result<(), Status> {
        if let Some(c) = &self.cluster {
            return c.drop_database(self, name);
        }
        let hosted = self.mutate(|state| {
            match state.databases.get(name) {
                None => {
                    return Err(status::not_found(
                        "google.spanner.admin.database.v1.Database",
                        name,
                    ))
                }
                Some(h) if h.meta.enable_drop_protection => {
                    return Err(Status::failed_precondition(format!(
                        "Cannot drop database {name}: drop protection is enabled"
                    )))
                }
                Some(_) => {}
            }
            Ok(state.databases.remove(name).expect("checked above"))
        })?;
        self.remove_dir(&hosted.meta.dir);
        Ok(())
    }

    fn remove_dir(&self, dir: &str) {
        if let (Some(root), false) = (&self.dir, dir.is_empty()) {
            let path = root.join("databases").join(dir);
            if let Err(e) = std::fs::remove_dir_all(&path) {
                tracing::warn!(path = %path.display(), error = %e, "could not remove a dropped database's files");
            }
        }
    }

    /// Once a database is made (its schema applied): on a cluster node,
    /// hands its group's leadership to the node the registry prefers.
    /// Blocks; nothing on a single process.
    pub fn settle(&self, name: &str) {
        if let (Some(c), Ok(hosted)) = (&self.cluster, self.database(name)) {
            c.settle(&hosted);
        }
    }

    /// Every open database (for shutdown and background work).
    pub fn all(&self) -> Vec<Hosted> {
        self.state.lock().databases.values().cloned().collect()
    }
}

/// The shared handle services hold.
pub type SharedRegistry = Arc<Registry>;

/// `options` with the schema advisor watching the database `name`'s DDL
/// (see [`crate::advice`]).
fn with_advice(options: &rowtree_db::Options, name: &str) -> rowtree_db::Options {
    rowtree_db::Options {
        schema_observer: Some(std::sync::Arc::new(crate::advice::AdviceLog {
            database: name.to_string(),
        })),
        ..options.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn instance(name: &str) -> InstanceMeta {
        InstanceMeta {
            name: name.into(),
            config: "projects/p/instanceConfigs/emulator-config".into(),
            display_name: "test".into(),
            node_count: 1,
            processing_units: 1000,
            labels: BTreeMap::new(),
            create_time: 1,
            update_time: 1,
            edition: 0,
        }
    }

    #[test]
    fn databases_survive_a_restart() {
        let dir = tempfile::tempdir().unwrap();
        {
            let r = Registry::open(Some(dir.path()), Default::default()).unwrap();
            r.create_instance(instance("projects/p/instances/i"))
                .unwrap();
            let h = r
                .create_database("projects/p/instances/i/databases/db1", b"desc", 1)
                .unwrap();
            h.db.apply_ddl(&["CREATE TABLE T (K INT64) PRIMARY KEY (K)"])
                .unwrap();
            h.db.write(vec![rowtree_db::Mutation::insert(
                "T",
                &["K"],
                vec![vec![rowtree_db::Value::Int64(7)]],
            )])
            .unwrap();
        }
        let r = Registry::open(Some(dir.path()), Default::default()).unwrap();
        assert_eq!(r.instances().len(), 1);
        let h = r.database("projects/p/instances/i/databases/db1").unwrap();
        assert_eq!(h.db.ddl().len(), 1);
        let rows =
            h.db.read(&rowtree_db::ReadRequest::new(
                "T",
                &["K"],
                rowtree_db::KeySet::all(),
            ))
            .unwrap();
        assert_eq!(rows, vec![vec![rowtree_db::Value::Int64(7)]]);
        r.drop_database("projects/p/instances/i/databases/db1")
            .unwrap();
        assert!(r.database("projects/p/instances/i/databases/db1").is_err());
    }

    fn registry_format(dir: &Path) -> serde_json::Value {
        let text = std::fs::read_to_string(dir.join("registry.json")).unwrap();
        serde_json::from_str::<serde_json::Value>(&text).unwrap()["format_version"].clone()
    }

    #[test]
    fn a_new_data_directory_records_its_format_and_reopens() {
        let dir = tempfile::tempdir().unwrap();
        drop(Registry::open(Some(dir.path()), Default::default()).unwrap());
        assert_eq!(registry_format(dir.path()), REGISTRY_FORMAT_VERSION);
        Registry::open(Some(dir.path()), Default::default()).unwrap();
    }

    #[test]
    fn a_registry_from_before_the_format_version_opens_as_version_1() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("registry.json"),
            r#"{"instances": [], "databases": []}"#,
        )
        .unwrap();
        Registry::open(Some(dir.path()), Default::default()).unwrap();
        assert_eq!(registry_format(dir.path()), 1);
    }

    #[test]
    fn a_newer_registry_format_is_refused_naming_both_versions() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("registry.json");
        let newer = REGISTRY_FORMAT_VERSION + 1;
        let text = format!(r#"{{"format_version": {newer}, "instances": [], "databases": []}}"#);
        std::fs::write(&path, &text).unwrap();
        let doc: Document = serde_json::from_str(&text).unwrap();
        assert_eq!(
            doc.check_format(&path),
            Err(UnsupportedRegistryFormat {
                path: path.clone(),
                found: newer,
                supported: REGISTRY_FORMAT_VERSION,
            })
        );
        let err = Registry::open(Some(dir.path()), Default::default())
            .err()
            .unwrap();
        assert!(
            err.contains(&format!("registry format version {newer}"))
                && err.contains(&format!("format version {REGISTRY_FORMAT_VERSION} only")),
            "{err}"
        );
        // Refused without rewriting the document.
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
    }

    #[test]
    fn names_are_checked() {
        assert!(check_database_id("ab").is_ok());
        assert!(check_database_id("a").is_err());
        assert!(check_database_id("1ab").is_err());
        assert!(check_database_id("ab-").is_err());
        assert!(check_database_id("Ab").is_err());
        assert!(check_instance_id("i").is_err());
        assert!(check_instance_id("my-instance-1").is_ok());
        assert!(check_instance_id("my_instance").is_err());
        assert!(check_database_name("projects/p/instances/i/databases/db").is_ok());
        assert!(check_database_name("projects/p/databases/db").is_err());
        let r = Registry::open(None, Default::default()).unwrap();
        let e = r
            .create_database("projects/p/instances/x/databases/db", b"", 1)
            .err()
            .unwrap();
        assert_eq!(e.code(), tonic::Code::NotFound);
    }

    /// A lookup neither waits for a change in progress nor sees it before
    /// it is written: the change works on a copy under its own lock.
    #[test]
    fn lookups_do_not_wait_for_a_change_and_see_it_once_written() {
        let dir = tempfile::tempdir().unwrap();
        let r = Arc::new(Registry::open(Some(dir.path()), Default::default()).unwrap());
        r.create_instance(instance("projects/p/instances/i"))
            .unwrap();
        let db = "projects/p/instances/i/databases/db1";
        r.create_database(db, b"", 1).unwrap();

        let (started_tx, started) = std::sync::mpsc::channel();
        let (finish, finish_rx) = std::sync::mpsc::channel::<()>();
        let changer = {
            let r = r.clone();
            std::thread::spawn(move || {
                r.mutate(|state| {
                    state.instances.remove("projects/p/instances/i");
                    started_tx.send(()).unwrap();
                    // A slow change: opening files, writing, syncing.
                    finish_rx.recv().unwrap();
                    Ok(())
                })
                .unwrap();
            })
        };
        started.recv().unwrap();
        // While the change runs, lookups answer at once, from the state
        // before it.
        let (answer_tx, answer) = std::sync::mpsc::channel();
        {
            let r = r.clone();
            std::thread::spawn(move || {
                let seen = (
                    r.has_database(db),
                    r.database(db).is_ok(),
                    r.instance("projects/p/instances/i").is_ok(),
                    r.instances().len(),
                );
                answer_tx.send(seen).unwrap();
            });
        }
        let seen = answer
            .recv_timeout(std::time::Duration::from_secs(10))
            .expect("a lookup waited for the change in progress");
        assert_eq!(seen, (true, true, true, 1));
        finish.send(()).unwrap();
        changer.join().unwrap();
        assert!(r.instance("projects/p/instances/i").is_err());
        let text = std::fs::read_to_string(dir.path().join("registry.json")).unwrap();
        assert!(!text.contains("\"projects/p/instances/i\""), "{text}");
    }

    /// A database whose creation cannot be recorded is not created: no
    /// entry, and no directory left behind.
    #[test]
    fn a_creation_that_cannot_be_written_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let r = Registry::open(Some(dir.path()), Default::default()).unwrap();
        r.create_instance(instance("projects/p/instances/i"))
            .unwrap();
        // registry.json is written through registry.json.tmp: a directory
        // there makes the write fail.
        std::fs::create_dir(dir.path().join("registry.json.tmp")).unwrap();
        let db = "projects/p/instances/i/databases/db1";
        let e = r.create_database(db, b"", 1).err().unwrap();
        assert_eq!(e.code(), tonic::Code::Internal, "{e:?}");
        assert!(e.message().contains("cannot write the registry"), "{e:?}");
        assert!(!r.has_database(db));
        let left: Vec<_> = std::fs::read_dir(dir.path().join("databases"))
            .unwrap()
            .collect();
        assert!(left.is_empty(), "{left:?}");
        // Once the registry can be written again, the same name works.
        std::fs::remove_dir(dir.path().join("registry.json.tmp")).unwrap();
        r.create_database(db, b"", 1).unwrap();
        assert!(r.has_database(db));
    }
}
