//! The admin APIs: instances, databases and their schemas, and the
//! long-running operations they answer with.
//!
//! Like Google's emulator, there is one instance configuration,
//! `emulator-config`, and any configuration name is accepted when creating
//! an instance. Unlike the emulator, everything is kept on disk (see
//! [`crate::registry`]). Schema changes run in order on a blocking thread;
//! an `UpdateDatabaseDdl` operation's metadata lists the statements, a
//! commit timestamp for each one applied and a progress entry per statement,
//! and a failure at statement *k* leaves statements before *k* applied, as
//! in Spanner.

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use googleapis_tonic_google_longrunning::google::longrunning as lro;
use googleapis_tonic_google_spanner_admin_database_v1::google::spanner::admin::database::v1 as dpb;
use googleapis_tonic_google_spanner_admin_instance_v1::google::spanner::admin::instance::v1 as ipb;
use tonic::{Request, Response, Status};

use crate::api::database_admin::database_admin_server::DatabaseAdmin;
use crate::api::instance_admin::instance_admin_server::InstanceAdmin;
use crate::api::operations::operations_server::Operations as OperationsService;
use crate::operations::{any, Operations};
use crate::registry::{self, now_nanos, DatabaseMeta, Hosted, InstanceMeta, Registry};
use crate::status;
use rowtree_types::Dialect;

/// How long an admin request waits for its work before answering with a
/// running operation.
const INLINE_WAIT: Duration = Duration::from_secs(2);

/// The one instance configuration.
const CONFIG_ID: &str = "emulator-config";

use crate::registry::timestamp_pb as ts;

fn op_id() -> String {
    format!("_auto_op_{}", uuid::Uuid::new_v4().simple())
}

/// Pages a list: `page_token` is the offset of the first item.
fn page<T>(items: Vec<T>, page_size: i32, page_token: &str) -> Result<(Vec<T>, String), Status> {
    let start: usize = if page_token.is_empty() {
        0
    } else {
        page_token
            .parse()
            .map_err(|_| Status::invalid_argument(format!("Invalid page token: {page_token}")))?
    };
    let size = if page_size <= 0 {
        usize::MAX
    } else {
        page_size as usize
    };
    let total = items.len();
    let out: Vec<T> = items.into_iter().skip(start).take(size).collect();
    let next = if start.saturating_add(out.len()) < total {
        (start + out.len()).to_string()
    } else {
        String::new()
    };
    Ok((out, next))
}

/// The admin services share the registry and the operation store.
#[derive(Clone)]
pub struct Admin {
    pub registry: Arc<Registry>,
    pub operations: Arc<Operations>,
    /// On a cluster node: where requests about a database another node
    /// leads go (schema changes, split points, their operations).
    pub(crate) forwarder: Option<Arc<crate::forward::Forwarder>>,
}

fn instance_pb(m: &InstanceMeta) -> ipb::Instance {
    ipb::Instance {
        name: m.name.clone(),
        config: m.config.clone(),
        display_name: m.display_name.clone(),
        node_count: m.node_count,
        processing_units: m.processing_units,
        state: ipb::instance::State::Ready as i32,
        labels: m.labels.clone().into_iter().collect(),
        create_time: Some(ts(m.create_time)),
        update_time: Some(ts(m.update_time)),
        edition: m.edition,
        ..Default::default()
    }
}

fn config_pb(project: &str) -> ipb::InstanceConfig {
    ipb::InstanceConfig {
        name: format!("{project}/instanceConfigs/{CONFIG_ID}"),
        display_name: "Emulator Instance Config".to_string(),
        config_type: ipb::instance_config::Type::GoogleManaged as i32,
        replicas: vec![ipb::ReplicaInfo {
            location: "local".to_string(),
            r#type: ipb::replica_info::ReplicaType::ReadWrite as i32,
            default_leader_location: true,
        }],
        leader_options: vec!["local".to_string()],
        state: ipb::instance_config::State::Ready as i32,
        ..Default::default()
    }
}

fn database_pb(h: &Hosted) -> dpb::Database {
    let catalog = h.db.catalog();
    let option = |name: &str| {
        catalog
            .database_option(name)
            .map(|v| v.trim_matches('\'').to_string())
    };
    dpb::Database {
        name: h.meta.name.clone(),
        state: dpb::database::State::Ready as i32,
        create_time: Some(ts(h.meta.create_time)),
        version_retention_period: option("version_retention_period")
            .unwrap_or_else(|| "1h".to_string()),
        earliest_version_time: Some(ts(h
            .db
            .oldest_readable_timestamp()
            .max(h.meta.create_time as u64) as i64)),
        default_leader: option("default_leader").unwrap_or_default(),
        // The database's own record decides; the registry mirrors it.
        database_dialect: match h.db.dialect() {
            Dialect::GoogleSql => dpb::DatabaseDialect::GoogleStandardSql as i32,
            Dialect::PostgreSql => dpb::DatabaseDialect::Postgresql as i32,
        },
        enable_drop_protection: h.meta.enable_drop_protection,
        ..Default::default()
    }
}

/// A database other nodes of a cluster hold, as its registry entry
/// describes it (its options are its replicas' to tell: GetDatabase is
/// answered there).
fn placed_pb(m: &DatabaseMeta) -> dpb::Database {
    dpb::Database {
        name: m.name.clone(),
        state: dpb::database::State::Ready as i32,
        create_time: Some(ts(m.create_time)),
        database_dialect: if m.dialect == dpb::DatabaseDialect::Postgresql as i32 {
            dpb::DatabaseDialect::Postgresql as i32
        } else {
            dpb::DatabaseDialect::GoogleStandardSql as i32
        },
        enable_drop_protection: m.enable_drop_protection,
        ..Default::default()
    }
}

fn project_of(name: &str) -> Result<&str, Status> {
    let parts: Vec<&str> = name.splitn(3, '/').collect();
    if parts.len() >= 2 && parts[0] == "projects" && !parts[1].is_empty() {
        Ok(&name[..parts[0].len() + 1 + parts[1].len()])
    } else {
        Err(Status::invalid_argument(format!(
            "Invalid project name: {name}"
        )))
    }
}

/// The database id in `CREATE DATABASE name`: quoted in the dialect's
/// way if at all (`` `name` `` in GoogleSQL, `"name"` in PostgreSQL).
fn create_statement_id(statement: &str, dialect: Dialect) -> Result<String, Status> {
    let words: Vec<&str> = statement.split_whitespace().collect();
    let quote = match dialect {
        Dialect::GoogleSql => '`',
        Dialect::PostgreSql => '"',
    };
    match words.as_slice() {
        [c, d, name] if c.eq_ignore_ascii_case("CREATE") && d.eq_ignore_ascii_case("DATABASE") => {
            let id = match name.strip_prefix(quote).and_then(|n| n.strip_suffix(quote)) {
                Some(quoted) => quoted.to_string(),
                // PostgreSQL folds an unquoted name to lower case.
                None if dialect == Dialect::PostgreSql => name.to_lowercase(),
                None => name.to_string(),
            };
            let id = id.as_str();
            registry::check_database_id(id)?;
            Ok(id.to_string())
        }
        _ => Err(Status::invalid_argument(format!(
            "Invalid CREATE DATABASE statement: {statement}; expected CREATE DATABASE name"
        ))),
    }
}

/// The status for a failed DDL statement: its code, the statement's text
/// and number when there are several.
fn ddl_status(e: &rowtree_db::DdlError, statements: &[String]) -> Status {
    let text = statements
        .get(e.statement)
        .map(String::as_str)
        .unwrap_or("");
    let position = e
        .offset
        .filter(|o| *o <= text.len())
        .map(|o| format!(" [at {}]", rowtree_parser::Position::of(text, o)))
        .unwrap_or_default();
    status::status(e.error.code(), format!("{}{position}", e.error))
}

/// Sends a request about a database on to the node that serves it, if
/// that is not this one (a cluster node's; see `forward.rs`), and returns
/// its answer: `need` is `Leader` or `Replica` (`forward::Need`).
macro_rules! forward_admin {
    ($self:ident, $request:ident, $database:expr, $need:ident, $method:ident) => {
        if let Some(channel) =
            $self.forward_to($database, $request.metadata(), crate::forward::Need::$need)?
        {
            return crate::forward::relayed(
                Admin::admin_client(channel)
                    .$method(crate::forward::onward($request))
                    .await,
            );
        }
    };
}

impl Admin {
    /// A channel to the node leading `database`, if a request about it
    /// goes there (a cluster node's; see `forward.rs`).
    fn forward_to(
        &self,
        database: &str,
        metadata: &tonic::metadata::MetadataMap,
        need: crate::forward::Need,
    ) -> Result<Option<tonic::transport::Channel>, Status> {
        match &self.forwarder {
            Some(f) => f.target(database, metadata, need),
            None => Ok(None),
        }
    }

    /// A client of the database admin service at `channel`.
    fn admin_client(
        channel: tonic::transport::Channel,
    ) -> dpb::database_admin_client::DatabaseAdminClient<tonic::transport::Channel> {
        dpb::database_admin_client::DatabaseAdminClient::new(channel)
            .max_decoding_message_size(crate::MAX_MESSAGE)
            .max_encoding_message_size(crate::MAX_REQUEST)
    }

    /// Where a request about operation `name` goes, if not here: the node
    /// leading its database, when this node does not know the operation
    /// (it was started there).
    fn operation_elsewhere(
        &self,
        name: &str,
        metadata: &tonic::metadata::MetadataMap,
    ) -> Result<Option<lro::operations_client::OperationsClient<tonic::transport::Channel>>, Status>
    {
        if self.forwarder.is_none()
            || !name.contains("/databases/")
            || self.operations.get(name).is_ok()
        {
            return Ok(None);
        }
        Ok(self
            .forward_to(
                crate::forward::database_of(name),
                metadata,
                crate::forward::Need::Leader,
            )?
            .map(lro::operations_client::OperationsClient::new))
    }

    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> Result<T, Status> + Send + 'static,
    ) -> Result<T, Status> {
        tokio::task::spawn_blocking(f)
            .await
            .map_err(|e| Status::internal(format!("the request failed: {e}")))?
    }

    /// Registers operation `name` as already done with `response` (work
    /// that finished inside the request).
    fn done_operation(
        &self,
        name: &str,
        metadata: prost_types::Any,
        response: prost_types::Any,
    ) -> Result<lro::Operation, Status> {
        self.operations.start(name, metadata);
        self.operations.finish(name, Ok(response));
        self.operations.get(name)
    }

    /// Starts `work` on a blocking thread under operation `name` and waits
    /// up to [`INLINE_WAIT`] for it.
    async fn run_operation(
        &self,
        name: String,
        metadata: prost_types::Any,
        work: impl FnOnce(&Operations, &str) -> Result<prost_types::Any, Status> + Send + 'static,
    ) -> Result<lro::Operation, Status> {
        self.operations.start(&name, metadata);
        let ops = self.operations.clone();
        let op_name = name.clone();
        tokio::task::spawn_blocking(move || {
            let result =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(&ops, &op_name)))
                    .unwrap_or_else(|_| Err(Status::internal("the operation failed unexpectedly")));
            ops.finish(&op_name, result);
        });
        self.operations.wait(&name, INLINE_WAIT).await
    }

    fn ddl_metadata(
        database: &str,
        statements: &[String],
        done: &[(i64, i64)],
    ) -> prost_types::Any {
        let md = dpb::UpdateDatabaseDdlMetadata {
            database: database.to_string(),
            statements: statements.to_vec(),
            commit_timestamps: done.iter().map(|(_, end)| ts(*end)).collect(),
            progress: statements
                .iter()
                .enumerate()
                .map(|(i, _)| match done.get(i) {
                    Some((start, end)) => dpb::OperationProgress {
                        progress_percent: 100,
                        start_time: Some(ts(*start)),
                        end_time: Some(ts(*end)),
                    },
                    None => dpb::OperationProgress::default(),
                })
                .collect(),
            ..Default::default()
        };
        any(
            "google.spanner.admin.database.v1.UpdateDatabaseDdlMetadata",
            &md,
        )
    }
}

#[tonic::async_trait]
impl InstanceAdmin for Admin {
    async fn list_instance_configs(
        &self,
        request: Request<ipb::ListInstanceConfigsRequest>,
    ) -> Result<Response<ipb::ListInstanceConfigsResponse>, Status> {
        let project = project_of(&request.get_ref().parent)?;
        Ok(Response::new(ipb::ListInstanceConfigsResponse {
            instance_configs: vec![config_pb(project)],
            next_page_token: String::new(),
        }))
    }

    async fn get_instance_config(
        &self,
        request: Request<ipb::GetInstanceConfigRequest>,
    ) -> Result<Response<ipb::InstanceConfig>, Status> {
        let name = &request.get_ref().name;
        let project = project_of(name)?;
        let mut config = config_pb(project);
        // Any configuration name is accepted, as by the emulator.
        config.name = name.clone();
        Ok(Response::new(config))
    }

    async fn list_instances(
        &self,
        request: Request<ipb::ListInstancesRequest>,
    ) -> Result<Response<ipb::ListInstancesResponse>, Status> {
        let r = request.get_ref();
        let prefix = format!("{}/instances/", project_of(&r.parent)?);
        let filter = label_filter(&r.filter);
        let items: Vec<ipb::Instance> = self
            .registry
            .instances()
            .iter()
            .filter(|i| i.name.starts_with(&prefix))
            .filter(|i| match &filter {
                Some((k, v)) => i
                    .labels
                    .get(k)
                    .is_some_and(|x| v.as_ref().is_none_or(|v| v == x)),
                None => true,
            })
            .map(instance_pb)
            .collect();
        let (instances, next_page_token) = page(items, r.page_size, &r.page_token)?;
        Ok(Response::new(ipb::ListInstancesResponse {
            instances,
            next_page_token,
            unreachable: Vec::new(),
        }))
    }

    async fn get_instance(
        &self,
        request: Request<ipb::GetInstanceRequest>,
    ) -> Result<Response<ipb::Instance>, Status> {
        let meta = self.registry.instance(&request.get_ref().name)?;
        Ok(Response::new(instance_pb(&meta)))
    }

    async fn create_instance(
        &self,
        request: Request<ipb::CreateInstanceRequest>,
    ) -> Result<Response<lro::Operation>, Status> {
        let r = request.into_inner();
        let project = project_of(&r.parent)?.to_string();
        registry::check_instance_id(&r.instance_id)?;
        let name = format!("{project}/instances/{}", r.instance_id);
        registry::check_instance_name(&name)?;
        let given = r.instance.unwrap_or_default();
        let now = now_nanos();
        let (node_count, processing_units) = match (given.node_count, given.processing_units) {
            (0, 0) => (1, 1000),
            (n, 0) => (n, n * 1000),
            (0, p) => ((p / 1000).max(1), p),
            (n, p) => (n, p),
        };
        let meta = InstanceMeta {
            name: name.clone(),
            config: if given.config.is_empty() {
                format!("{project}/instanceConfigs/{CONFIG_ID}")
            } else {
                given.config.clone()
            },
            display_name: if given.display_name.is_empty() {
                r.instance_id.clone()
            } else {
                given.display_name.clone()
            },
            node_count,
            processing_units,
            labels: given.labels.into_iter().collect(),
            create_time: now,
            update_time: now,
            edition: given.edition,
        };
        let registry = self.registry.clone();
        let created = meta.clone();
        self.blocking(move || registry.create_instance(created))
            .await?;
        let md = ipb::CreateInstanceMetadata {
            instance: Some(instance_pb(&meta)),
            start_time: Some(ts(now)),
            end_time: Some(ts(now_nanos())),
            ..Default::default()
        };
        let md = any(
            "google.spanner.admin.instance.v1.CreateInstanceMetadata",
            &md,
        );
        let op_name = format!("{name}/operations/{}", op_id());
        Ok(Response::new(self.done_operation(
            &op_name,
            md,
            any(
                "google.spanner.admin.instance.v1.Instance",
                &instance_pb(&meta),
            ),
        )?))
    }

    async fn update_instance(
        &self,
        request: Request<ipb::UpdateInstanceRequest>,
    ) -> Result<Response<lro::Operation>, Status> {
        let r = request.into_inner();
        let given = r
            .instance
            .ok_or_else(|| Status::invalid_argument("instance is required"))?;
        let mut meta = self.registry.instance(&given.name)?;
        let paths = r.field_mask.map(|m| m.paths).unwrap_or_default();
        if paths.is_empty() {
            return Err(Status::invalid_argument(
                "field_mask must name the fields to update",
            ));
        }
        for p in &paths {
            match p.as_str() {
                "display_name" => meta.display_name = given.display_name.clone(),
                "node_count" => {
                    meta.node_count = given.node_count;
                    meta.processing_units = given.node_count * 1000;
                }
                "processing_units" => {
                    meta.processing_units = given.processing_units;
                    meta.node_count = (given.processing_units / 1000).max(1);
                }
                "labels" => meta.labels = given.labels.clone().into_iter().collect(),
                "edition" => meta.edition = given.edition,
                "config" => {
                    return Err(Status::invalid_argument(
                        "An instance's config cannot be changed",
                    ))
                }
                other => {
                    return Err(Status::invalid_argument(format!(
                        "Unknown or unsupported field in the mask: {other}"
                    )))
                }
            }
        }
        meta.update_time = now_nanos();
        let registry = self.registry.clone();
        let updated = meta.clone();
        self.blocking(move || registry.update_instance(updated))
            .await?;
        let md = ipb::UpdateInstanceMetadata {
            instance: Some(instance_pb(&meta)),
            start_time: Some(ts(meta.update_time)),
            end_time: Some(ts(now_nanos())),
            ..Default::default()
        };
        let op_name = format!("{}/operations/{}", meta.name, op_id());
        Ok(Response::new(self.done_operation(
            &op_name,
            any(
                "google.spanner.admin.instance.v1.UpdateInstanceMetadata",
                &md,
            ),
            any(
                "google.spanner.admin.instance.v1.Instance",
                &instance_pb(&meta),
            ),
        )?))
    }

    async fn delete_instance(
        &self,
        request: Request<ipb::DeleteInstanceRequest>,
    ) -> Result<Response<()>, Status> {
        let name = request.into_inner().name;
        let registry = self.registry.clone();
        self.blocking(move || registry.delete_instance(&name))
            .await?;
        Ok(Response::new(()))
    }
}

/// `labels.KEY:VALUE` or `labels.KEY` (Spanner's list filter, the part
/// clients use).
fn label_filter(filter: &str) -> Option<(String, Option<String>)> {
    let f = filter.trim().strip_prefix("labels.")?;
    match f.split_once(':') {
        Some((k, v)) if v != "*" => Some((k.to_string(), Some(v.to_string()))),
        Some((k, _)) => Some((k.to_string(), None)),
        None => Some((f.to_string(), None)),
    }
}

#[tonic::async_trait]
impl DatabaseAdmin for Admin {
    async fn list_databases(
        &self,
        request: Request<dpb::ListDatabasesRequest>,
    ) -> Result<Response<dpb::ListDatabasesResponse>, Status> {
        let r = request.get_ref();
        self.registry.instance(&r.parent)?;
        let mut items: Vec<dpb::Database> = self
            .registry
            .databases(&r.parent)
            .iter()
            .map(database_pb)
            .collect();
        // On a cluster node, those only other nodes hold, from the registry.
        items.extend(self.registry.elsewhere(&r.parent).iter().map(placed_pb));
        items.sort_by(|a, b| a.name.cmp(&b.name));
        let (databases, next_page_token) = page(items, r.page_size, &r.page_token)?;
        Ok(Response::new(dpb::ListDatabasesResponse {
            databases,
            next_page_token,
        }))
    }

    async fn create_database(
        &self,
        request: Request<dpb::CreateDatabaseRequest>,
    ) -> Result<Response<lro::Operation>, Status> {
        let r = request.into_inner();
        let dialect = match dpb::DatabaseDialect::try_from(r.database_dialect) {
            Ok(dpb::DatabaseDialect::Postgresql) => Dialect::PostgreSql,
            Ok(_) => Dialect::GoogleSql,
            Err(_) => {
                return Err(Status::invalid_argument(format!(
                    "Invalid database dialect: {}",
                    r.database_dialect
                )))
            }
        };
        self.registry.instance(&r.parent)?;
        let id = create_statement_id(&r.create_statement, dialect)?;
        let name = format!("{}/databases/{id}", r.parent);
        let registry = self.registry.clone();
        let (created, protos, dialect) = (
            name.clone(),
            r.proto_descriptors.clone(),
            r.database_dialect,
        );
        let hosted = self
            .blocking(move || registry.create_database(&created, &protos, dialect))
            .await?;
        let md = any(
            "google.spanner.admin.database.v1.CreateDatabaseMetadata",
            &dpb::CreateDatabaseMetadata {
                database: name.clone(),
            },
        );
        // An empty database's schema is applied at once, so a bad statement
        // fails the request itself (as in Spanner, which validates first).
        let registry = self.registry.clone();
        let statements = r.extra_statements;
        let protos = r.proto_descriptors;
        let hosted = self
            .blocking(move || {
                let texts: Vec<&str> = statements.iter().map(String::as_str).collect();
                // The descriptors resolve the PROTO and ENUM types of the
                // statements (and are stored with the first of them).
                let protos = (!protos.is_empty() && !texts.is_empty()).then_some(protos.as_slice());
                if let Err(e) = hosted
                    .db
                    .apply_ddl_all_or_nothing_with_protos(&texts, protos)
                {
                    let _ = registry.drop_database(&hosted.meta.name);
                    return Err(ddl_status(&e, &statements));
                }
                registry.settle(&hosted.meta.name);
                registry.database(&hosted.meta.name)
            })
            .await?;
        let op_name = format!("{name}/operations/{}", op_id());
        Ok(Response::new(self.done_operation(
            &op_name,
            md,
            any(
                "google.spanner.admin.database.v1.Database",
                &database_pb(&hosted),
            ),
        )?))
    }

    async fn get_database(
        &self,
        request: Request<dpb::GetDatabaseRequest>,
    ) -> Result<Response<dpb::Database>, Status> {
        forward_admin!(
            self,
            request,
            &request.get_ref().name,
            Replica,
            get_database
        );
        let hosted = self.registry.database(&request.get_ref().name)?;
        Ok(Response::new(database_pb(&hosted)))
    }

    async fn update_database(
        &self,
        request: Request<dpb::UpdateDatabaseRequest>,
    ) -> Result<Response<lro::Operation>, Status> {
        let name = request.get_ref().database.as_ref().map(|d| d.name.clone());
        if let Some(name) = name {
            forward_admin!(self, request, &name, Replica, update_database);
        }
        let r = request.into_inner();
        let given = r
            .database
            .clone()
            .ok_or_else(|| Status::invalid_argument("database is required"))?;
        let paths = r.update_mask.clone().map(|m| m.paths).unwrap_or_default();
        for p in &paths {
            if p != "enable_drop_protection" {
                return Err(Status::invalid_argument(format!(
                    "Only enable_drop_protection can be updated, not {p}"
                )));
            }
        }
        let registry = self.registry.clone();
        let (database, protect) = (given.name.clone(), given.enable_drop_protection);
        let change = paths.iter().any(|p| p == "enable_drop_protection");
        let hosted = self
            .blocking(move || {
                registry.update_database(&database, |m: &mut DatabaseMeta| {
                    if change {
                        m.enable_drop_protection = protect;
                    }
                })
            })
            .await?;
        let md = dpb::UpdateDatabaseMetadata {
            request: Some(r),
            progress: Some(dpb::OperationProgress {
                progress_percent: 100,
                start_time: Some(ts(now_nanos())),
                end_time: Some(ts(now_nanos())),
            }),
            cancel_time: None,
        };
        let op_name = format!("{}/operations/{}", given.name, op_id());
        Ok(Response::new(self.done_operation(
            &op_name,
            any(
                "google.spanner.admin.database.v1.UpdateDatabaseMetadata",
                &md,
            ),
            any(
                "google.spanner.admin.database.v1.Database",
                &database_pb(&hosted),
            ),
        )?))
    }

    async fn update_database_ddl(
        &self,
        request: Request<dpb::UpdateDatabaseDdlRequest>,
    ) -> Result<Response<lro::Operation>, Status> {
        forward_admin!(
            self,
            request,
            &request.get_ref().database,
            Leader,
            update_database_ddl
        );
        let r = request.into_inner();
        let hosted = self.registry.database(&r.database)?;
        if r.statements.is_empty() {
            return Err(Status::invalid_argument("No statements given"));
        }
        let id = if r.operation_id.is_empty() {
            op_id()
        } else {
            r.operation_id.clone()
        };
        let op_name = format!("{}/operations/{id}", r.database);
        if self.operations.get(&op_name).is_ok() {
            return Err(Status::already_exists(format!(
                "Operation already exists: {op_name}"
            )));
        }
        if !r.proto_descriptors.is_empty() {
            let encoded = base64::engine::general_purpose::STANDARD.encode(&r.proto_descriptors);
            let registry = self.registry.clone();
            let database = r.database.clone();
            self.blocking(move || {
                registry.update_database(&database, |m| m.proto_descriptors = encoded)
            })
            .await?;
        }
        let statements = r.statements.clone();
        let database = r.database.clone();
        let md = Admin::ddl_metadata(&database, &statements, &[]);
        let mut protos = (!r.proto_descriptors.is_empty()).then(|| r.proto_descriptors.clone());
        let op = self
            .run_operation(op_name, md, move |ops, op_name| {
                let mut done = Vec::new();
                for (i, text) in statements.iter().enumerate() {
                    let start = now_nanos();
                    // New descriptors take effect with the first statement.
                    let given = protos.take();
                    if let Err(mut e) = hosted.db.apply_ddl_with_protos(&[text], given.as_deref()) {
                        e.statement = i;
                        return Err(ddl_status(&e, &statements));
                    }
                    done.push((start, hosted.db.visible_timestamp() as i64));
                    ops.set_metadata(op_name, Admin::ddl_metadata(&database, &statements, &done));
                }
                Ok(any("google.protobuf.Empty", &()))
            })
            .await?;
        Ok(Response::new(op))
    }

    async fn drop_database(
        &self,
        request: Request<dpb::DropDatabaseRequest>,
    ) -> Result<Response<()>, Status> {
        let name = request.into_inner().database;
        let registry = self.registry.clone();
        self.blocking(move || registry.drop_database(&name)).await?;
        Ok(Response::new(()))
    }

    async fn get_database_ddl(
        &self,
        request: Request<dpb::GetDatabaseDdlRequest>,
    ) -> Result<Response<dpb::GetDatabaseDdlResponse>, Status> {
        forward_admin!(
            self,
            request,
            &request.get_ref().database,
            Replica,
            get_database_ddl
        );
        let hosted = self.registry.database(&request.get_ref().database)?;
        let proto_descriptors = base64::engine::general_purpose::STANDARD
            .decode(&hosted.meta.proto_descriptors)
            .unwrap_or_default();
        Ok(Response::new(dpb::GetDatabaseDdlResponse {
            statements: hosted.db.ddl(),
            proto_descriptors,
        }))
    }

    async fn list_database_operations(
        &self,
        request: Request<dpb::ListDatabaseOperationsRequest>,
    ) -> Result<Response<dpb::ListDatabaseOperationsResponse>, Status> {
        let r = request.get_ref();
        self.registry.instance(&r.parent)?;
        let items: Vec<lro::Operation> = self
            .operations
            .list_under(&r.parent)
            .into_iter()
            .filter(|op| op.name.contains("/databases/"))
            .filter(|op| operation_matches(op, &r.filter))
            .collect();
        let (operations, next_page_token) = page(items, r.page_size, &r.page_token)?;
        Ok(Response::new(dpb::ListDatabaseOperationsResponse {
            operations,
            next_page_token,
        }))
    }

    async fn add_split_points(
        &self,
        request: Request<dpb::AddSplitPointsRequest>,
    ) -> Result<Response<dpb::AddSplitPointsResponse>, Status> {
        forward_admin!(
            self,
            request,
            &request.get_ref().database,
            Leader,
            add_split_points
        );
        let r = request.into_inner();
        let hosted = self.registry.database(&r.database)?;
        self.blocking(move || {
            let catalog = hosted.db.catalog();
            for points in &r.split_points {
                let target = if points.index.is_empty() {
                    &points.table
                } else {
                    &points.index
                };
                let (table, index) = if points.index.is_empty() {
                    (points.table.as_str(), None)
                } else {
                    let ix = catalog.index(&points.index).ok_or_else(|| {
                        Status::not_found(format!("Index not found: {}", points.index))
                    })?;
                    let t = catalog
                        .table_by_id(ix.table)
                        .map(|t| t.name.as_str())
                        .unwrap_or_default();
                    (t, Some(points.index.as_str()))
                };
                let types = crate::convert::key_types(&catalog, table, index)?;
                // Spanner's default expiry is 10 days, at most 30 (clamped
                // by the database); an expiry in the past is refused there.
                let expires_at = points.expire_time.as_ref().map(|t| {
                    u64::try_from(i128::from(t.seconds) * 1_000_000_000 + i128::from(t.nanos))
                        .unwrap_or(0)
                });
                for key in &points.keys {
                    let parts = key.key_parts.clone().unwrap_or_default().values;
                    if parts.len() > types.len() {
                        return Err(Status::invalid_argument(format!(
                            "A split point of {target} has {} key parts; the key has {}",
                            parts.len(),
                            types.len()
                        )));
                    }
                    let values = parts
                        .iter()
                        .zip(&types)
                        .map(|(v, t)| crate::convert::value_from_proto(v, t))
                        .collect::<Result<Vec<_>, _>>()?;
                    match expires_at {
                        Some(at) => hosted.db.add_split_point_until(target, &values, at),
                        None => hosted.db.add_split_point(target, &values),
                    }
                    .map_err(status::from_db)?;
                }
            }
            Ok(())
        })
        .await?;
        Ok(Response::new(dpb::AddSplitPointsResponse {}))
    }
}

/// The filters clients send to ListDatabaseOperations: an operation's
/// metadata type (`metadata.@type:...`) and `done`, joined with AND.
fn operation_matches(op: &lro::Operation, filter: &str) -> bool {
    if filter.trim().is_empty() {
        return true;
    }
    filter
        .split(" AND ")
        .map(|c| c.trim().trim_matches(|ch| ch == '(' || ch == ')').trim())
        .all(|clause| {
            if let Some(t) = clause.strip_prefix("metadata.@type:") {
                let t = t.trim().trim_start_matches("type.googleapis.com/");
                op.metadata
                    .as_ref()
                    .is_some_and(|m| m.type_url.ends_with(t))
            } else if let Some(v) = clause.strip_prefix("done:") {
                op.done == (v.trim() == "true")
            } else {
                true
            }
        })
}

#[tonic::async_trait]
impl OperationsService for Admin {
    async fn list_operations(
        &self,
        request: Request<lro::ListOperationsRequest>,
    ) -> Result<Response<lro::ListOperationsResponse>, Status> {
        let r = request.get_ref();
        let items = self.operations.list(&r.name);
        let (operations, next_page_token) = page(items, r.page_size, &r.page_token)?;
        Ok(Response::new(lro::ListOperationsResponse {
            operations,
            next_page_token,
            unreachable: Vec::new(),
        }))
    }

    async fn get_operation(
        &self,
        request: Request<lro::GetOperationRequest>,
    ) -> Result<Response<lro::Operation>, Status> {
        if let Some(mut to) =
            self.operation_elsewhere(&request.get_ref().name, request.metadata())?
        {
            return crate::forward::relayed(
                to.get_operation(crate::forward::onward(request)).await,
            );
        }
        Ok(Response::new(self.operations.get(&request.get_ref().name)?))
    }

    async fn delete_operation(
        &self,
        request: Request<lro::DeleteOperationRequest>,
    ) -> Result<Response<()>, Status> {
        if let Some(mut to) =
            self.operation_elsewhere(&request.get_ref().name, request.metadata())?
        {
            return crate::forward::relayed(
                to.delete_operation(crate::forward::onward(request)).await,
            );
        }
        self.operations.delete(&request.get_ref().name)?;
        Ok(Response::new(()))
    }

    async fn cancel_operation(
        &self,
        request: Request<lro::CancelOperationRequest>,
    ) -> Result<Response<()>, Status> {
        if let Some(mut to) =
            self.operation_elsewhere(&request.get_ref().name, request.metadata())?
        {
            return crate::forward::relayed(
                to.cancel_operation(crate::forward::onward(request)).await,
            );
        }
        let op = self.operations.get(&request.get_ref().name)?;
        if op.done {
            return Err(Status::failed_precondition(format!(
                "Operation {} has already finished",
                op.name
            )));
        }
        // Schema changes run statement by statement and cannot be stopped
        // half way through one; Spanner also makes cancellation best effort.
        Err(Status::failed_precondition(format!(
            "Operation {} cannot be cancelled: its statements are being applied",
            op.name
        )))
    }

    async fn wait_operation(
        &self,
        request: Request<lro::WaitOperationRequest>,
    ) -> Result<Response<lro::Operation>, Status> {
        if let Some(mut to) =
            self.operation_elsewhere(&request.get_ref().name, request.metadata())?
        {
            return crate::forward::relayed(
                to.wait_operation(crate::forward::onward(request)).await,
            );
        }
        let r = request.get_ref();
        let timeout = r
            .timeout
            .map(|d| {
                Duration::from_secs(d.seconds.max(0) as u64)
                    + Duration::from_nanos(d.nanos.max(0) as u64)
            })
            .unwrap_or(Duration::from_secs(60));
        Ok(Response::new(self.operations.wait(&r.name, timeout).await?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages() {
        let (a, next) = page(vec![1, 2, 3, 4, 5], 2, "").unwrap();
        assert_eq!((a, next.as_str()), (vec![1, 2], "2"));
        let (b, next) = page(vec![1, 2, 3, 4, 5], 2, "4").unwrap();
        assert_eq!((b, next.as_str()), (vec![5], ""));
        assert!(page(vec![1], 1, "x").is_err());
    }

    #[test]
    fn create_statement() {
        assert_eq!(
            create_statement_id("CREATE DATABASE `my-db`", Dialect::GoogleSql).unwrap(),
            "my-db"
        );
        assert_eq!(
            create_statement_id("create database abc", Dialect::GoogleSql).unwrap(),
            "abc"
        );
        assert!(create_statement_id("CREATE TABLE x", Dialect::GoogleSql).is_err());
        // PostgreSQL quotes with double quotes and folds unquoted names.
        assert_eq!(
            create_statement_id("CREATE DATABASE \"my-db\"", Dialect::PostgreSql).unwrap(),
            "my-db"
        );
        assert_eq!(
            create_statement_id("CREATE DATABASE Abc", Dialect::PostgreSql).unwrap(),
            "abc"
        );
        assert!(create_statement_id("CREATE DATABASE `abc`", Dialect::PostgreSql).is_err());
    }

    #[test]
    fn filters() {
        assert_eq!(
            label_filter("labels.a:b"),
            Some(("a".into(), Some("b".into())))
        );
        assert_eq!(label_filter(""), None);
    }
}
