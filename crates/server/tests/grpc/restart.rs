//! What a restart keeps: instances, databases, schemas, rows and indexes.

use crate::*;
use rowtree_server::{Config, Server};

const SINGERS: &str =
    "CREATE TABLE Singers (Id INT64 NOT NULL, Name STRING(MAX), Age INT64) PRIMARY KEY (Id)";
const ALL: &str = "SELECT Id, Name, Age FROM Singers ORDER BY Id";

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn everything_survives_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let env = start_in(dir.path()).await;
    let inst = env.instance("inst").await;
    let db = env.database(&inst, "music", &[SINGERS]).await;
    let gone = env.database(&inst, "gone", &[SINGERS]).await;
    let s = env.session(&db).await;

    // Mutations in a single-use transaction.
    let cols = ["Id", "Name", "Age"];
    let first = vec![row![1, "Ann", 30], row![2, "Bob", 40], row![3, "Cy", 50]];
    env.write(&s, vec![upsert("Singers", &cols, first)]).await;

    // DML in a read-write transaction begun inline, then mutations at commit.
    let rs = env
        .execute(
            &s,
            "INSERT INTO Singers (Id, Name, Age) VALUES (4, 'Dee', 60)",
            Some(begin_with(read_write())),
        )
        .await
        .unwrap();
    assert_eq!(row_count(&rs), 1);
    let id = rs.metadata.unwrap().transaction.unwrap().id;
    assert_eq!(
        env.dml(&s, &id, "UPDATE Singers SET Age = Age + 1 WHERE Id <= 2")
            .await,
        2
    );
    let more = upsert("Singers", &cols, vec![row![5, "Eve", 70]]);
    env.commit_id(&s, &id, vec![more]).await.unwrap();

    // An index, created over existing rows.
    let op = env
        .ddl(&db, &["CREATE INDEX SingersByName ON Singers(Name)"], "")
        .await
        .unwrap();
    assert!(op_error(&op).is_none(), "{op:?}");
    env.dbs()
        .drop_database(dpb::DropDatabaseRequest {
            database: gone.clone(),
        })
        .await
        .unwrap();
    let expected = vec!["1|Ann|31", "2|Bob|41", "3|Cy|50", "4|Dee|60", "5|Eve|70"];
    assert_eq!(env.query(&s, ALL).await, expected);
    let ddl_before = env.ddl_of(&db).await;
    env.stop().await;

    // Restart on the same directory.
    let env = start_in(dir.path()).await;
    let instance = env
        .instances()
        .get_instance(ipb::GetInstanceRequest {
            name: inst.clone(),
            field_mask: None,
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(instance.display_name, "inst");
    let listed = env
        .dbs()
        .list_databases(dpb::ListDatabasesRequest {
            parent: inst.clone(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let names: Vec<&str> = listed.databases.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, vec![db.as_str()]);
    let get_gone = env
        .dbs()
        .get_database(dpb::GetDatabaseRequest { name: gone.clone() })
        .await;
    expect_err(get_gone, Code::NotFound, "");

    let ddl = env.ddl_of(&db).await;
    assert_eq!(ddl, ddl_before);
    assert!(
        ddl.iter().any(|d| d.contains("CREATE TABLE Singers")),
        "{ddl:?}"
    );
    assert!(
        ddl.iter().any(|d| d.contains("CREATE INDEX SingersByName")),
        "{ddl:?}"
    );

    // Sessions live in memory: the old one is gone.
    let old = env.execute(&s, "SELECT 1", None).await;
    expect_err(old, Code::NotFound, "Session not found");
    let s = env.session(&db).await;
    assert_eq!(env.query(&s, ALL).await, expected);

    // The index holds the rows (a read through it, in name order).
    let by_name = env
        .spanner()
        .read(read_all(&s, "Singers", "SingersByName", &["Name", "Id"]))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        rows(&by_name),
        vec!["Ann|1", "Bob|2", "Cy|3", "Dee|4", "Eve|5"]
    );
    let forced = env
        .query(
            &s,
            "SELECT Id FROM Singers@{FORCE_INDEX=SingersByName} WHERE Name = 'Dee'",
        )
        .await;
    assert_eq!(forced, vec!["4"]);

    // Writes go on after the restart, and the index follows them.
    env.write(&s, vec![upsert("Singers", &cols, vec![row![6, "Al", 20]])])
        .await;
    let forced = env
        .query(
            &s,
            "SELECT Id FROM Singers@{FORCE_INDEX=SingersByName} WHERE Name < 'B' ORDER BY Name",
        )
        .await;
    assert_eq!(forced, vec!["6", "1"]);

    // A database created again under the dropped name starts empty.
    let again = env.database(&inst, "gone", &[]).await;
    assert_eq!(again, gone);
    assert!(env.ddl_of(&gone).await.is_empty());
    env.stop().await;

    // And a second restart still has it all.
    let env = start_in(dir.path()).await;
    let s = env.session(&db).await;
    assert_eq!(env.query(&s, ALL).await.len(), 6);
    assert!(env.ddl_of(&gone).await.is_empty());
    env.stop().await;
}

/// Shutdown does not wait for clients to hang up, and a data directory in
/// use is not opened by a second server.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn shutdown_with_a_connected_client() {
    let dir = tempfile::tempdir().unwrap();
    let env = start_in(dir.path()).await;
    let inst = env.instance("inst").await;
    let db = env.database(&inst, "db", &[SINGERS]).await;
    let s = env.session(&db).await;
    // A client that stays connected, with a read-write transaction open.
    let mut client = env.spanner();
    let id = env.begin_rw(&s).await;
    env.dml(&s, &id, "INSERT INTO Singers (Id, Name) VALUES (1, 'Ann')")
        .await;
    let Env {
        server, channel, ..
    } = env;
    within(15, server.shutdown()).await.unwrap();
    let after = client
        .execute_sql(pb::ExecuteSqlRequest {
            session: s.clone(),
            sql: "SELECT 1".into(),
            ..Default::default()
        })
        .await;
    assert!(after.is_err(), "served after shutdown");
    drop((client, channel));

    // The uncommitted insert is gone after a restart; the schema is there.
    let env = start_in(dir.path()).await;
    let s = env.session(&db).await;
    assert!(env.query(&s, ALL).await.is_empty());
    env.stop().await;
}

/// Two servers writing one data directory would corrupt it: the second must
/// refuse to start while the first holds it.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_data_directory_in_use_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let env = start_in(dir.path()).await;
    let inst = env.instance("inst").await;
    env.database(&inst, "db", &[SINGERS]).await;
    let second = Server::start(Config {
        data_dir: Some(dir.path().to_path_buf()),
        addr: "127.0.0.1:0".parse().unwrap(),
        cache_bytes: 8 << 20,
        http_addr: None,
        ..Config::default()
    })
    .await;
    let refused = second.is_err();
    if let Ok(second) = second {
        second.shutdown().await.unwrap();
    }
    env.stop().await;
    assert!(refused, "a second server opened a data directory in use");
}
