//! `grpc`: arbitrary bytes as Spanner data API requests, into the server.
//!
//! The first byte picks the message and the handler; the rest is decoded
//! as that protobuf message (bytes that do not decode are skipped):
//!
//! | `data[0] % 7` | message | handler |
//! |---|---|---|
//! | 0 | `ExecuteSqlRequest` | `ExecuteSql` |
//! | 1 | `ExecuteSqlRequest` | `ExecuteStreamingSql` |
//! | 2 | `ReadRequest` | `Read` |
//! | 3 | `ReadRequest` | `StreamingRead` |
//! | 4 | `CommitRequest` | `Commit` |
//! | 5 | `BatchWriteRequest` | `BatchWrite` |
//! | 6 | `ExecuteBatchDmlRequest` | `ExecuteBatchDml` |
//!
//! Each input gets a fresh in-memory database with a small schema and a
//! few rows, behind the real `SpannerService`, so a crash reproduces from
//! its input alone. An empty `session` field is filled with a real session,
//! and an empty transaction id with a read-write transaction begun for the
//! request, so decoded messages reach past the name checks. The conversions
//! of `rowtree_server::convert` also run directly, and every value they
//! accept must survive the trip back to the wire and in again.
//!
//! The server turns a panic inside a request into INTERNAL, but libFuzzer's
//! panic hook aborts first, so any panic is reported.
//!
//! `ROWTREE_FUZZ_GRPC_SEEDS=DIR` makes the target write well-formed seed
//! inputs to DIR and exit (`fuzz/seed-corpus` does this).

#![no_main]

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use googleapis_tonic_google_spanner_v1::google::spanner::v1 as pb;
use libfuzzer_sys::fuzz_target;
use pb::transaction_options::{Mode, ReadOnly, ReadWrite};
use pb::transaction_selector::Selector;
use prost::Message;
use prost_types::value::Kind;
use prost_types::{ListValue, Struct};
use rowtree_server::api::spanner::spanner_server::Spanner;
use rowtree_server::convert;
use rowtree_server::registry::{InstanceMeta, Registry};
use rowtree_server::spanner::SpannerService;
use rowtree_types::Type;
use tokio_stream::StreamExt;
use tonic::Request;

const INSTANCE: &str = "projects/p/instances/fuzz";
const DATABASE: &str = "projects/p/instances/fuzz/databases/fuzzdb";

/// Messages past this add run time, not new shapes.
const MAX_INPUT: usize = 16 * 1024;

const SCHEMA: &[&str] = &[
    "CREATE TABLE Users (
       Id INT64 NOT NULL,
       Name STRING(MAX),
       Tags ARRAY<STRING(MAX)>,
       Doc JSON,
       Born DATE,
       Seen TIMESTAMP OPTIONS (allow_commit_timestamp = true),
       Raw BYTES(MAX),
       Amount NUMERIC,
       Score FLOAT64,
     ) PRIMARY KEY (Id)",
    "CREATE INDEX UsersByName ON Users (Name)",
    "CREATE TABLE Posts (
       Id INT64 NOT NULL,
       PostId INT64 NOT NULL,
       Title STRING(100),
     ) PRIMARY KEY (Id, PostId DESC), INTERLEAVE IN PARENT Users ON DELETE CASCADE",
];

const ROWS: &[&str] = &[
    "INSERT INTO Users (Id, Name, Tags, Doc, Born, Raw, Amount, Score)
     VALUES (1, 'ann', ['a', NULL], JSON '{\"a\": [1]}', DATE '2000-01-01', b'\\x00', NUMERIC '1.5', 0.5),
            (2, NULL, [], NULL, NULL, NULL, NULL, CAST('nan' AS FLOAT64))",
    "INSERT INTO Posts (Id, PostId, Title) VALUES (1, 1, 'p'), (1, 2, NULL)",
];

struct Env {
    runtime: tokio::runtime::Runtime,
    registry: Arc<Registry>,
    service: SpannerService,
}

fn env() -> &'static Env {
    static ENV: OnceLock<Env> = OnceLock::new();
    ENV.get_or_init(|| {
        let registry = Arc::new(Registry::open(None, rowtree_sql::database_options()).expect("registry"));
        registry
            .create_instance(InstanceMeta {
                name: INSTANCE.into(),
                config: "projects/p/instanceConfigs/emulator-config".into(),
                display_name: "fuzz".into(),
                node_count: 1,
                processing_units: 1000,
                labels: Default::default(),
                create_time: 1,
                update_time: 1,
                edition: 0,
            })
            .expect("instance");
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        Env {
            runtime,
            service: SpannerService::new(registry.clone()),
            registry,
        }
    })
}

/// A request with a deadline, so a statement that runs long stops as it
/// would for a client that gave up.
fn request<T>(message: T) -> Request<T> {
    let mut r = Request::new(message);
    r.metadata_mut()
        .insert("grpc-timeout", "5S".parse().expect("valid header"));
    r
}

/// The fresh database and a session on it.
async fn setup(env: &Env) -> String {
    let hosted = env
        .registry
        .create_database(DATABASE, b"", 1)
        .expect("create database");
    hosted.db.apply_ddl(SCHEMA).expect("schema");
    let mut session = rowtree_sql::Session::new(hosted.db.clone());
    for sql in ROWS {
        session
            .execute(sql, &Default::default())
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    env.service
        .create_session(request(pb::CreateSessionRequest {
            database: DATABASE.into(),
            session: None,
        }))
        .await
        .expect("session")
        .into_inner()
        .name
}

async fn teardown(env: &Env, session: &str) {
    let _ = env
        .service
        .delete_session(request(pb::DeleteSessionRequest {
            name: session.into(),
        }))
        .await;
    env.registry.drop_database(DATABASE).expect("drop database");
}

/// A read-write transaction's id, for a request that names an empty one.
async fn begin(env: &Env, session: &str) -> Vec<u8> {
    env.service
        .begin_transaction(request(pb::BeginTransactionRequest {
            session: session.into(),
            options: Some(read_write()),
            ..Default::default()
        }))
        .await
        .map(|r| r.into_inner().id)
        .unwrap_or_default()
}

fn read_write() -> pb::TransactionOptions {
    pb::TransactionOptions {
        mode: Some(Mode::ReadWrite(ReadWrite::default())),
        ..Default::default()
    }
}

async fn fill_selector(env: &Env, session: &str, t: &mut Option<pb::TransactionSelector>) {
    if let Some(pb::TransactionSelector {
        selector: Some(Selector::Id(id)),
    }) = t
    {
        if id.is_empty() {
            *id = begin(env, session).await;
        }
    }
}

fn fill_session(field: &mut String, session: &str) {
    if field.is_empty() {
        *field = session.to_string();
    }
}

/// Drains a streaming response; the stream's errors are expected.
async fn drain<T>(
    result: Result<
        tonic::Response<
            std::pin::Pin<Box<dyn tokio_stream::Stream<Item = Result<T, tonic::Status>> + Send>>,
        >,
        tonic::Status,
    >,
) {
    if let Ok(response) = result {
        let mut stream = response.into_inner();
        while stream.next().await.is_some() {}
    }
}

/// Values the server accepted go back to the wire and in again unchanged.
fn check_round_trip(name: &str, ty: &Type, value: &rowtree_types::Value) {
    let wire = convert::value_to_proto(value, ty);
    let back = convert::value_from_proto(&wire, ty).unwrap_or_else(|e| {
        panic!("{name}: {value:?} as {ty} went out as {wire:?}, which is refused: {e}")
    });
    assert_eq!(
        convert::value_to_proto(&back, ty),
        wire,
        "{name}: {value:?} as {ty} came back as {back:?}"
    );
    let _ = convert::type_from_proto(&convert::type_to_proto(ty))
        .unwrap_or_else(|e| panic!("{ty} does not survive the wire: {e}"));
}

fn check_params(params: Option<&Struct>, types: &HashMap<String, pb::Type>) {
    if let Ok(params) = convert::params_from_proto(params, types) {
        for (name, (ty, value)) in &params {
            check_round_trip(name, ty, value);
        }
    }
}

fn check_mutations(mutations: &[pb::Mutation], catalog: &rowtree_schema::Catalog) {
    let _ = convert::mutations_from_proto(mutations, catalog);
}

async fn run(env: &Env, kind: u8, body: &[u8]) {
    let session = setup(env).await;
    let s = session.as_str();
    let catalog = env
        .registry
        .database(DATABASE)
        .expect("database")
        .db
        .catalog();
    match kind % 7 {
        k @ (0 | 1) => {
            let Ok(mut r) = pb::ExecuteSqlRequest::decode(body) else {
                return teardown(env, s).await;
            };
            fill_session(&mut r.session, s);
            fill_selector(env, s, &mut r.transaction).await;
            check_params(r.params.as_ref(), &r.param_types);
            if k == 0 {
                let _ = env.service.execute_sql(request(r)).await;
            } else {
                drain(env.service.execute_streaming_sql(request(r)).await).await;
            }
        }
        k @ (2 | 3) => {
            let Ok(mut r) = pb::ReadRequest::decode(body) else {
                return teardown(env, s).await;
            };
            fill_session(&mut r.session, s);
            fill_selector(env, s, &mut r.transaction).await;
            if let Some(ks) = &r.key_set {
                let index = (!r.index.is_empty()).then_some(r.index.as_str());
                if let Ok(types) = convert::key_types(&catalog, &r.table, index) {
                    let _ = convert::key_set_from_proto(ks, &types);
                    let _ = convert::index_key_set_from_proto(ks, &types);
                }
            }
            if k == 2 {
                let _ = env.service.read(request(r)).await;
            } else {
                drain(env.service.streaming_read(request(r)).await).await;
            }
        }
        4 => {
            let Ok(mut r) = pb::CommitRequest::decode(body) else {
                return teardown(env, s).await;
            };
            fill_session(&mut r.session, s);
            if let Some(pb::commit_request::Transaction::TransactionId(id)) = &mut r.transaction {
                if id.is_empty() {
                    *id = begin(env, s).await;
                }
            }
            check_mutations(&r.mutations, &catalog);
            let _ = env.service.commit(request(r)).await;
        }
        5 => {
            let Ok(mut r) = pb::BatchWriteRequest::decode(body) else {
                return teardown(env, s).await;
            };
            fill_session(&mut r.session, s);
            for group in &r.mutation_groups {
                check_mutations(&group.mutations, &catalog);
            }
            drain(env.service.batch_write(request(r)).await).await;
        }
        _ => {
            let Ok(mut r) = pb::ExecuteBatchDmlRequest::decode(body) else {
                return teardown(env, s).await;
            };
            fill_session(&mut r.session, s);
            fill_selector(env, s, &mut r.transaction).await;
            for statement in &r.statements {
                check_params(statement.params.as_ref(), &statement.param_types);
            }
            let _ = env.service.execute_batch_dml(request(r)).await;
        }
    }
    teardown(env, s).await;
}

fuzz_target!(
    init: {
        if let Some(dir) = std::env::var_os("ROWTREE_FUZZ_GRPC_SEEDS") {
            write_seeds(std::path::Path::new(&dir));
            std::process::exit(0);
        }
        env();
    },
    |data: &[u8]| {
        let Some((&kind, body)) = data.split_first() else {
            return;
        };
        if body.len() > MAX_INPUT {
            return;
        }
        let env = env();
        env.runtime.block_on(run(env, kind, body));
    }
);

// ---------------------------------------------------------------------------
// Seeds: one well-formed request of each shape the clients send.

fn string(s: &str) -> prost_types::Value {
    prost_types::Value {
        kind: Some(Kind::StringValue(s.into())),
    }
}

fn number(n: f64) -> prost_types::Value {
    prost_types::Value {
        kind: Some(Kind::NumberValue(n)),
    }
}

fn null() -> prost_types::Value {
    prost_types::Value {
        kind: Some(Kind::NullValue(0)),
    }
}

fn list(values: Vec<prost_types::Value>) -> ListValue {
    ListValue { values }
}

fn list_value(values: Vec<prost_types::Value>) -> prost_types::Value {
    prost_types::Value {
        kind: Some(Kind::ListValue(list(values))),
    }
}

fn ty(code: pb::TypeCode) -> pb::Type {
    pb::Type {
        code: code as i32,
        ..Default::default()
    }
}

fn array_of(element: pb::Type) -> pb::Type {
    pb::Type {
        code: pb::TypeCode::Array as i32,
        array_element_type: Some(Box::new(element)),
        ..Default::default()
    }
}

fn sql(
    sql: &str,
    params: Vec<(&str, prost_types::Value, Option<pb::Type>)>,
) -> pb::ExecuteSqlRequest {
    let mut fields = std::collections::BTreeMap::new();
    let mut types = HashMap::new();
    for (name, value, t) in params {
        fields.insert(name.to_string(), value);
        if let Some(t) = t {
            types.insert(name.to_string(), t);
        }
    }
    pb::ExecuteSqlRequest {
        sql: sql.into(),
        params: (!fields.is_empty()).then_some(Struct { fields }),
        param_types: types,
        ..Default::default()
    }
}

fn selector(selector: Selector) -> Option<pb::TransactionSelector> {
    Some(pb::TransactionSelector {
        selector: Some(selector),
    })
}

fn write(table: &str, columns: &[&str], rows: Vec<Vec<prost_types::Value>>) -> pb::mutation::Write {
    pb::mutation::Write {
        table: table.into(),
        columns: columns.iter().map(|c| c.to_string()).collect(),
        values: rows.into_iter().map(list).collect(),
    }
}

fn mutation(op: pb::mutation::Operation) -> pb::Mutation {
    pb::Mutation {
        operation: Some(op),
    }
}

fn key_range(start: Vec<prost_types::Value>, end: Vec<prost_types::Value>) -> pb::KeyRange {
    pb::KeyRange {
        start_key_type: Some(pb::key_range::StartKeyType::StartClosed(list(start))),
        end_key_type: Some(pb::key_range::EndKeyType::EndOpen(list(end))),
    }
}

fn mutations() -> Vec<pb::Mutation> {
    use pb::mutation::Operation as Op;
    vec![
        mutation(Op::Insert(write(
            "Users",
            &[
                "Id", "Name", "Tags", "Doc", "Born", "Seen", "Raw", "Amount", "Score",
            ],
            vec![vec![
                string("3"),
                string("cy"),
                list_value(vec![string("x"), null()]),
                string("{\"k\":[true,null,1.5]}"),
                string("2024-02-29"),
                string("spanner.commit_timestamp()"),
                string("AAE="),
                string("-1.000000001"),
                string("Infinity"),
            ]],
        ))),
        mutation(Op::InsertOrUpdate(write(
            "Posts",
            &["Id", "PostId", "Title"],
            vec![vec![string("3"), number(7.0), string("t")]],
        ))),
        mutation(Op::Update(write(
            "Users",
            &["Id", "Score"],
            vec![vec![string("1"), number(-0.0)]],
        ))),
        mutation(Op::Replace(write(
            "users",
            &["id", "name"],
            vec![vec![string("2"), null()]],
        ))),
        mutation(Op::Delete(pb::mutation::Delete {
            table: "Posts".into(),
            key_set: Some(pb::KeySet {
                keys: vec![list(vec![string("1"), string("2")])],
                ranges: vec![key_range(vec![string("1")], vec![string("2")])],
                all: false,
            }),
        })),
    ]
}

fn seeds() -> Vec<(String, u8, Vec<u8>)> {
    use pb::TypeCode as T;
    let mut out: Vec<(String, u8, Vec<u8>)> = Vec::new();
    let mut add = |name: &str, kind: u8, bytes: Vec<u8>| out.push((name.into(), kind, bytes));

    let queries = [
        sql(
            "SELECT Id, Name, Tags, Doc FROM Users WHERE Id = @id",
            vec![("id", string("1"), Some(ty(T::Int64)))],
        ),
        sql(
            "SELECT @s AS s, @n AS n, @f AS f, @b AS b, @a AS a",
            vec![
                ("s", string("x"), None),
                ("n", number(3.0), None),
                ("f", number(1.5), None),
                (
                    "b",
                    prost_types::Value {
                        kind: Some(Kind::BoolValue(true)),
                    },
                    None,
                ),
                ("a", list_value(vec![number(1.0), null()]), None),
            ],
        ),
        sql(
            "SELECT @raw AS r, @d AS d, @t AS t, @num AS n, @j AS j, @fl AS f",
            vec![
                ("raw", string("aGk="), Some(ty(T::Bytes))),
                ("d", string("2000-02-29"), Some(ty(T::Date))),
                (
                    "t",
                    string("2016-01-25T15:10:10.555555-05:00"),
                    Some(ty(T::Timestamp)),
                ),
                ("num", string("1e-9"), Some(ty(T::Numeric))),
                ("j", string("{\"a\":[1,2]}"), Some(ty(T::Json))),
                ("fl", string("NaN"), Some(ty(T::Float32))),
            ],
        ),
        sql(
            "SELECT p.a FROM UNNEST(@arr) AS p",
            vec![(
                "arr",
                list_value(vec![list_value(vec![string("1"), string("x")])]),
                Some(array_of(pb::Type {
                    code: T::Struct as i32,
                    struct_type: Some(pb::StructType {
                        fields: vec![
                            pb::struct_type::Field {
                                name: "a".into(),
                                r#type: Some(ty(T::Int64)),
                            },
                            pb::struct_type::Field {
                                name: "b".into(),
                                r#type: Some(ty(T::String)),
                            },
                        ],
                    }),
                    ..Default::default()
                })),
            )],
        ),
        sql(
            "SELECT u.Name, p.Title FROM Users u JOIN Posts p ON u.Id = p.Id ORDER BY p.PostId",
            vec![],
        ),
    ];
    for (i, q) in queries.iter().enumerate() {
        add(&format!("query-{i}"), 0, q.encode_to_vec());
        add(&format!("query-stream-{i}"), 1, q.encode_to_vec());
    }
    let mut profile = queries[0].clone();
    profile.query_mode = pb::execute_sql_request::QueryMode::Profile as i32;
    add("query-profile", 0, profile.encode_to_vec());
    let mut stale = queries[4].clone();
    stale.transaction = selector(Selector::SingleUse(pb::TransactionOptions {
        mode: Some(Mode::ReadOnly(ReadOnly {
            return_read_timestamp: true,
            timestamp_bound: Some(
                pb::transaction_options::read_only::TimestampBound::ExactStaleness(
                    prost_types::Duration {
                        seconds: 0,
                        nanos: 1000,
                    },
                ),
            ),
        })),
        ..Default::default()
    }));
    add("query-stale", 1, stale.encode_to_vec());

    let mut dml = sql(
        "UPDATE Users SET Name = @name WHERE Id = @id THEN RETURN Id, Name",
        vec![
            ("id", string("1"), Some(ty(T::Int64))),
            ("name", string("new"), Some(ty(T::String))),
        ],
    );
    dml.transaction = selector(Selector::Begin(read_write()));
    add("dml-begin", 0, dml.encode_to_vec());
    let mut dml = sql(
        "INSERT INTO Posts (Id, PostId, Title) VALUES (@id, 9, 'x')",
        vec![("id", string("2"), Some(ty(T::Int64)))],
    );
    dml.transaction = selector(Selector::Id(Vec::new()));
    add("dml-in-transaction", 0, dml.encode_to_vec());

    let reads = [
        pb::ReadRequest {
            table: "Users".into(),
            columns: vec!["Id".into(), "Name".into(), "Doc".into(), "Tags".into()],
            key_set: Some(pb::KeySet {
                keys: vec![list(vec![string("1")])],
                ..Default::default()
            }),
            ..Default::default()
        },
        pb::ReadRequest {
            table: "Posts".into(),
            columns: vec!["Id".into(), "PostId".into(), "Title".into()],
            key_set: Some(pb::KeySet {
                ranges: vec![key_range(vec![string("1")], vec![string("1"), string("1")])],
                ..Default::default()
            }),
            limit: 1,
            ..Default::default()
        },
        pb::ReadRequest {
            table: "Users".into(),
            index: "UsersByName".into(),
            columns: vec!["Id".into(), "Name".into()],
            key_set: Some(pb::KeySet {
                keys: vec![list(vec![string("ann")])],
                all: true,
                ..Default::default()
            }),
            transaction: selector(Selector::Id(Vec::new())),
            ..Default::default()
        },
    ];
    for (i, r) in reads.iter().enumerate() {
        add(&format!("read-{i}"), 2, r.encode_to_vec());
        add(&format!("read-stream-{i}"), 3, r.encode_to_vec());
    }

    let commit = pb::CommitRequest {
        mutations: mutations(),
        return_commit_stats: true,
        transaction: Some(pb::commit_request::Transaction::SingleUseTransaction(
            read_write(),
        )),
        ..Default::default()
    };
    add("commit-single-use", 4, commit.encode_to_vec());
    let commit = pb::CommitRequest {
        mutations: mutations(),
        transaction: Some(pb::commit_request::Transaction::TransactionId(Vec::new())),
        ..Default::default()
    };
    add("commit-in-transaction", 4, commit.encode_to_vec());

    let batch = pb::BatchWriteRequest {
        mutation_groups: mutations()
            .into_iter()
            .map(|m| pb::batch_write_request::MutationGroup { mutations: vec![m] })
            .collect(),
        ..Default::default()
    };
    add("batch-write", 5, batch.encode_to_vec());

    let batch_dml = pb::ExecuteBatchDmlRequest {
        transaction: selector(Selector::Begin(read_write())),
        statements: vec![
            pb::execute_batch_dml_request::Statement {
                sql: "UPDATE Users SET Score = Score + 1 WHERE TRUE".into(),
                ..Default::default()
            },
            pb::execute_batch_dml_request::Statement {
                sql: "DELETE FROM Posts WHERE Id = @id".into(),
                params: Some(Struct {
                    fields: [("id".to_string(), string("1"))].into_iter().collect(),
                }),
                param_types: [("id".to_string(), ty(T::Int64))].into_iter().collect(),
            },
        ],
        seqno: 1,
        ..Default::default()
    };
    add("batch-dml", 6, batch_dml.encode_to_vec());
    out
}

fn write_seeds(dir: &std::path::Path) {
    std::fs::create_dir_all(dir).expect("seed directory");
    for (name, kind, body) in seeds() {
        let mut bytes = vec![kind];
        bytes.extend(body);
        std::fs::write(dir.join(name), bytes).expect("write a seed");
    }
}
