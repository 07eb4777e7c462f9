//! Declares the four gRPC services Rowtree serves — Spanner's data API, its
//! database and instance admin APIs, and long-running operations — with
//! `tonic_build::manual`, over the message types of the maintained
//! `googleapis-tonic-*` crates. No `.proto` file is compiled: each method is
//! named here with its route and its request and response types, and tonic
//! generates the server trait and router. Methods not listed (backups,
//! instance partitions, IAM, ...) are answered with UNIMPLEMENTED by the
//! generated router.

use tonic_build::manual::{Builder, Method, Service};

const SPANNER: &str = "::googleapis_tonic_google_spanner_v1::google::spanner::v1";
const DATABASE: &str =
    "::googleapis_tonic_google_spanner_admin_database_v1::google::spanner::admin::database::v1";
const INSTANCE: &str =
    "::googleapis_tonic_google_spanner_admin_instance_v1::google::spanner::admin::instance::v1";
const LRO: &str = "::googleapis_tonic_google_longrunning::google::longrunning";

/// `(rust name, route, request, response, server streaming)`.
type Rpc = (&'static str, &'static str, String, String, bool);

fn service(package: &str, name: &str, rpcs: Vec<Rpc>) -> Service {
    let mut builder = Service::builder().name(name).package(package);
    for (method, route, input, output, streaming) in rpcs {
        let mut m = Method::builder()
            .name(method)
            .route_name(route)
            .input_type(input)
            .output_type(output)
            .codec_path("::tonic_prost::ProstCodec");
        if streaming {
            m = m.server_streaming();
        }
        builder = builder.method(m.build());
    }
    builder.build()
}

fn rpc(method: &'static str, route: &'static str, pkg: &str, input: &str, output: &str) -> Rpc {
    let path = |t: &str| {
        if t == "()" {
            "crate::api::Empty".to_string()
        } else if t.starts_with("::") {
            t.to_string()
        } else {
            format!("{pkg}::{t}")
        }
    };
    (method, route, path(input), path(output), false)
}

fn streaming(mut r: Rpc) -> Rpc {
    r.4 = true;
    r
}

fn main() {
    let op = format!("{LRO}::Operation");
    let op = op.as_str();
    let spanner = service(
        "google.spanner.v1",
        "Spanner",
        vec![
            rpc(
                "create_session",
                "CreateSession",
                SPANNER,
                "CreateSessionRequest",
                "Session",
            ),
            rpc(
                "batch_create_sessions",
                "BatchCreateSessions",
                SPANNER,
                "BatchCreateSessionsRequest",
                "BatchCreateSessionsResponse",
            ),
            rpc(
                "get_session",
                "GetSession",
                SPANNER,
                "GetSessionRequest",
                "Session",
            ),
            rpc(
                "list_sessions",
                "ListSessions",
                SPANNER,
                "ListSessionsRequest",
                "ListSessionsResponse",
            ),
            rpc(
                "delete_session",
                "DeleteSession",
                SPANNER,
                "DeleteSessionRequest",
                "()",
            ),
            rpc(
                "execute_sql",
                "ExecuteSql",
                SPANNER,
                "ExecuteSqlRequest",
                "ResultSet",
            ),
            streaming(rpc(
                "execute_streaming_sql",
                "ExecuteStreamingSql",
                SPANNER,
                "ExecuteSqlRequest",
                "PartialResultSet",
            )),
            rpc(
                "execute_batch_dml",
                "ExecuteBatchDml",
                SPANNER,
                "ExecuteBatchDmlRequest",
                "ExecuteBatchDmlResponse",
            ),
            rpc("read", "Read", SPANNER, "ReadRequest", "ResultSet"),
            streaming(rpc(
                "streaming_read",
                "StreamingRead",
                SPANNER,
                "ReadRequest",
                "PartialResultSet",
            )),
            rpc(
                "begin_transaction",
                "BeginTransaction",
                SPANNER,
                "BeginTransactionRequest",
                "Transaction",
            ),
            rpc(
                "commit",
                "Commit",
                SPANNER,
                "CommitRequest",
                "CommitResponse",
            ),
            rpc("rollback", "Rollback", SPANNER, "RollbackRequest", "()"),
            rpc(
                "partition_query",
                "PartitionQuery",
                SPANNER,
                "PartitionQueryRequest",
                "PartitionResponse",
            ),
            rpc(
                "partition_read",
                "PartitionRead",
                SPANNER,
                "PartitionReadRequest",
                "PartitionResponse",
            ),
            streaming(rpc(
                "batch_write",
                "BatchWrite",
                SPANNER,
                "BatchWriteRequest",
                "BatchWriteResponse",
            )),
        ],
    );
    let database = service(
        "google.spanner.admin.database.v1",
        "DatabaseAdmin",
        vec![
            rpc(
                "list_databases",
                "ListDatabases",
                DATABASE,
                "ListDatabasesRequest",
                "ListDatabasesResponse",
            ),
            rpc(
                "create_database",
                "CreateDatabase",
                DATABASE,
                "CreateDatabaseRequest",
                op,
            ),
            rpc(
                "get_database",
                "GetDatabase",
                DATABASE,
                "GetDatabaseRequest",
                "Database",
            ),
            rpc(
                "update_database",
                "UpdateDatabase",
                DATABASE,
                "UpdateDatabaseRequest",
                op,
            ),
            rpc(
                "update_database_ddl",
                "UpdateDatabaseDdl",
                DATABASE,
                "UpdateDatabaseDdlRequest",
                op,
            ),
            rpc(
                "drop_database",
                "DropDatabase",
                DATABASE,
                "DropDatabaseRequest",
                "()",
            ),
            rpc(
                "get_database_ddl",
                "GetDatabaseDdl",
                DATABASE,
                "GetDatabaseDdlRequest",
                "GetDatabaseDdlResponse",
            ),
            rpc(
                "list_database_operations",
                "ListDatabaseOperations",
                DATABASE,
                "ListDatabaseOperationsRequest",
                "ListDatabaseOperationsResponse",
            ),
            rpc(
                "add_split_points",
                "AddSplitPoints",
                DATABASE,
                "AddSplitPointsRequest",
                "AddSplitPointsResponse",
            ),
        ],
    );
    let instance = service(
        "google.spanner.admin.instance.v1",
        "InstanceAdmin",
        vec![
            rpc(
                "list_instance_configs",
                "ListInstanceConfigs",
                INSTANCE,
                "ListInstanceConfigsRequest",
                "ListInstanceConfigsResponse",
            ),
            rpc(
                "get_instance_config",
                "GetInstanceConfig",
                INSTANCE,
                "GetInstanceConfigRequest",
                "InstanceConfig",
            ),
            rpc(
                "list_instances",
                "ListInstances",
                INSTANCE,
                "ListInstancesRequest",
                "ListInstancesResponse",
            ),
            rpc(
                "get_instance",
                "GetInstance",
                INSTANCE,
                "GetInstanceRequest",
                "Instance",
            ),
            rpc(
                "create_instance",
                "CreateInstance",
                INSTANCE,
                "CreateInstanceRequest",
                op,
            ),
            rpc(
                "update_instance",
                "UpdateInstance",
                INSTANCE,
                "UpdateInstanceRequest",
                op,
            ),
            rpc(
                "delete_instance",
                "DeleteInstance",
                INSTANCE,
                "DeleteInstanceRequest",
                "()",
            ),
        ],
    );
    let operations = service(
        "google.longrunning",
        "Operations",
        vec![
            rpc(
                "list_operations",
                "ListOperations",
                LRO,
                "ListOperationsRequest",
                "ListOperationsResponse",
            ),
            rpc(
                "get_operation",
                "GetOperation",
                LRO,
                "GetOperationRequest",
                "Operation",
            ),
            rpc(
                "delete_operation",
                "DeleteOperation",
                LRO,
                "DeleteOperationRequest",
                "()",
            ),
            rpc(
                "cancel_operation",
                "CancelOperation",
                LRO,
                "CancelOperationRequest",
                "()",
            ),
            rpc(
                "wait_operation",
                "WaitOperation",
                LRO,
                "WaitOperationRequest",
                "Operation",
            ),
        ],
    );
    Builder::new()
        .build_client(false)
        .build_transport(false)
        .compile(&[spanner, database, instance, operations]);
}
