//! `rowtree serve --demo`, the README's first command: the real binary
//! serves, the demo database answers a gRPC client's queries (the client of
//! `crates/check`, which speaks Spanner's wire API as client libraries do),
//! and a second run over the same data directory keeps the data instead of
//! creating it again.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};

use rowtree_check::client::{Client, Selector, Statement};
use rowtree_check::wire::Value;

const DATABASE: &str = "projects/demo-project/instances/demo-instance/databases/demo-db";

/// A running `rowtree serve --demo`, killed when dropped.
struct Demo {
    child: Child,
    /// What it printed on standard output, up to the end of the banner.
    banner: String,
    /// The gRPC address the banner names.
    addr: SocketAddr,
}

impl Drop for Demo {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `rowtree serve --demo` with `location` and reads its banner.
fn start(location: &[&str]) -> Demo {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rowtree"))
        .args(["serve", "--demo", "--port", "0", "--http-port", "0"])
        .args(location)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start rowtree serve --demo");
    let stdout = child.stdout.take().expect("stdout");
    let mut demo = Demo {
        child,
        banner: String::new(),
        addr: "0.0.0.0:0".parse().expect("an address"),
    };
    for line in BufReader::new(stdout).lines() {
        let line = line.expect("read the banner");
        demo.banner.push_str(&line);
        demo.banner.push('\n');
        if let Some(rest) = line.trim().strip_prefix("export SPANNER_EMULATOR_HOST=") {
            let host = rest.split_whitespace().next().expect("an address");
            demo.addr = host.parse().expect("the banner's address");
        }
        if line.contains("Stop with Ctrl-C") {
            break;
        }
    }
    assert_ne!(
        demo.addr.port(),
        0,
        "no address in the banner:\n{}",
        demo.banner
    );
    demo
}

fn strings(row: &[Value]) -> Vec<&str> {
    row.iter().map(|v| v.as_str().unwrap_or("?")).collect()
}

/// Queries the demo database over gRPC: the albums it holds, and the
/// banner's query through the interleaved join.
async fn assert_answers(demo: &Demo) {
    let client = Client::connect(demo.addr).await.expect("connect");
    let session = client.create_session(DATABASE).await.expect("a session");
    let count = client
        .execute_sql(
            &session,
            &Statement::new("SELECT COUNT(*) FROM Albums"),
            Selector::strong(),
        )
        .await
        .expect("count the albums");
    assert_eq!(count.single_int().expect("one INT64"), 7);

    let query = demo
        .banner
        .split("execute_sql('")
        .nth(1)
        .and_then(|rest| rest.split("')").next())
        .expect("the banner shows a query");
    let rows = client
        .execute_sql(&session, &Statement::new(query), Selector::strong())
        .await
        .expect("the banner's query");
    assert_eq!(rows.rows.len(), 7);
    assert_eq!(strings(&rows.rows[0]), ["Chiara", "Lind", "Glass Orchard"]);
    assert_eq!(strings(&rows.rows[6]), ["Dev", "Santos", "Late Trains"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_demo_in_memory_answers_a_client() {
    let demo = start(&["--in-memory"]);
    assert!(
        demo.banner.contains("created with 4 singers and 7 albums"),
        "{}",
        demo.banner
    );
    assert!(
        demo.banner.contains("GOOGLE_CLOUD_PROJECT=demo-project"),
        "{}",
        demo.banner
    );
    assert_answers(&demo).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_demo_keeps_its_database_in_a_data_directory() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data_dir = dir.path().to_str().expect("a UTF-8 path");
    let first = start(&["--data-dir", data_dir]);
    assert!(first.banner.contains("created with"), "{}", first.banner);
    drop(first);

    let second = start(&["--data-dir", data_dir]);
    assert!(
        second.banner.contains("kept from an earlier run"),
        "{}",
        second.banner
    );
    assert_answers(&second).await;
}
