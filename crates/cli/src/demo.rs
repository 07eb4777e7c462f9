//! `rowtree serve --demo`: a server with a database ready to query.
//!
//! The quickest way to see what Rowtree is for: Spanner's gRPC API on the
//! emulator's address, with an instance and a database already there, so an
//! official client library can query it at once. [`set_up`] creates the
//! instance [`INSTANCE`] in project [`PROJECT`] and the database
//! [`DATABASE`] in it, unless they exist (a data directory kept from an
//! earlier `--demo` run keeps its data and whatever was changed since). The
//! schema follows the shape of Spanner's getting-started samples: singers,
//! their albums interleaved in each singer's row tree (so a singer and their
//! albums are one contiguous key range), and a secondary index by album
//! title; a few rows make the queries answer something. [`banner`] says how
//! to connect.

use std::net::SocketAddr;

use rowtree_server::registry::{InstanceMeta, Registry};
use rowtree_sql::{Params, Session};

/// The demo's project id.
pub const PROJECT: &str = "demo-project";
/// The demo's instance id.
pub const INSTANCE: &str = "demo-instance";
/// The demo's database id.
pub const DATABASE: &str = "demo-db";

/// The demo schema.
const SCHEMA: &[&str] = &[
    "CREATE TABLE Singers (
       SingerId INT64 NOT NULL,
       FirstName STRING(1024),
       LastName STRING(1024),
     ) PRIMARY KEY (SingerId)",
    "CREATE TABLE Albums (
       SingerId INT64 NOT NULL,
       AlbumId INT64 NOT NULL,
       AlbumTitle STRING(MAX),
       MarketingBudget INT64,
     ) PRIMARY KEY (SingerId, AlbumId),
       INTERLEAVE IN PARENT Singers ON DELETE CASCADE",
    "CREATE INDEX AlbumsByAlbumTitle ON Albums (AlbumTitle) STORING (MarketingBudget)",
];

/// The demo rows: four singers, seven albums.
const ROWS: &[&str] = &[
    "INSERT INTO Singers (SingerId, FirstName, LastName) VALUES
       (1, 'Ada', 'Moreau'), (2, 'Bram', 'Okafor'), (3, 'Chiara', 'Lind'), (4, 'Dev', 'Santos')",
    "INSERT INTO Albums (SingerId, AlbumId, AlbumTitle, MarketingBudget) VALUES
       (1, 1, 'Northern Lines', 120000), (1, 2, 'Paper Boats', 45000),
       (2, 1, 'Low Tide', 80000), (2, 2, 'Signal Fires', NULL), (2, 3, 'Copper', 30000),
       (3, 1, 'Glass Orchard', 150000), (4, 1, 'Late Trains', 60000)",
];

/// A query to try: every singer with their albums.
pub const QUERY: &str = "SELECT s.FirstName, s.LastName, a.AlbumTitle \
     FROM Singers AS s JOIN Albums AS a ON a.SingerId = s.SingerId \
     ORDER BY s.LastName, a.AlbumTitle";

/// `projects/P/instances/I`.
pub fn instance_name() -> String {
    format!("projects/{PROJECT}/instances/{INSTANCE}")
}

/// `projects/P/instances/I/databases/D`.
pub fn database_name() -> String {
    format!("{}/databases/{DATABASE}", instance_name())
}

/// Creates the demo instance and database with its schema and rows, unless
/// the database exists already. Returns whether it created it.
pub fn set_up(registry: &Registry) -> Result<bool, String> {
    let instance = instance_name();
    let database = database_name();
    if registry.database(&database).is_ok() {
        return Ok(false);
    }
    if registry.instance(&instance).is_err() {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as i64);
        registry
            .create_instance(InstanceMeta {
                name: instance.clone(),
                config: format!("projects/{PROJECT}/instanceConfigs/emulator-config"),
                display_name: "Rowtree demo".into(),
                node_count: 1,
                processing_units: 1000,
                labels: Default::default(),
                create_time: now,
                update_time: now,
                edition: 0,
            })
            .map_err(|s| format!("creating the demo instance: {}", s.message()))?;
    }
    // Dialect 1: GoogleSQL.
    let hosted = registry
        .create_database(&database, b"", 1)
        .map_err(|s| format!("creating the demo database: {}", s.message()))?;
    hosted
        .db
        .apply_ddl(SCHEMA)
        .map_err(|e| format!("the demo schema: {e}"))?;
    let mut session = Session::new(hosted.db.clone());
    for statement in ROWS {
        session
            .execute(statement, &Params::new())
            .map_err(|e| format!("the demo rows: {e}"))?;
    }
    Ok(true)
}

/// What `rowtree serve --demo` prints once it serves: the names, and how to
/// connect an official client library.
pub fn banner(grpc: SocketAddr, keyviz: Option<String>, created: bool) -> String {
    let database = database_name();
    let state = if created {
        "created with 4 singers and 7 albums"
    } else {
        "kept from an earlier run"
    };
    let mut out = format!(
        "Rowtree demo: Spanner's gRPC API on {grpc}, with a database ready to query.\n\
         \n\
         \x20 project   {PROJECT}\n\
         \x20 instance  {INSTANCE}\n\
         \x20 database  {DATABASE} ({state}): tables Singers and Albums\n\
         \x20           (Albums interleaved in Singers), index AlbumsByAlbumTitle\n\
         \n\
         Connect an official Spanner client library as to Google's emulator:\n\
         \n\
         \x20 export SPANNER_EMULATOR_HOST={grpc} GOOGLE_CLOUD_PROJECT={PROJECT}\n\
         \n\
         and try a query, e.g. in Python (pip install google-cloud-spanner):\n\
         \n\
         \x20 python3 -c \"from google.cloud import spanner; \
         db = spanner.Client().instance('{INSTANCE}').database('{DATABASE}'); \
         print(db.run_in_transaction(lambda t: list(t.execute_sql('{QUERY}'))))\"\n"
    );
    if let Some(url) = keyviz {
        out.push_str(&format!("\nKey visualizer: {url}/keyviz/{database}\n"));
    }
    out.push_str("\nexamples/python and examples/node are complete programs. Stop with Ctrl-C.\n");
    out
}
