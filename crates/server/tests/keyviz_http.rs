//! The key visualizer's HTTP server (`Config::http_addr`).

use rowtree_server::{Config, Server};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const DB: &str = "projects/p/instances/inst/databases/shop";

/// `GET path` over HTTP/1.1: (status, content type, body).
async fn get(addr: std::net::SocketAddr, path: &str) -> (u16, String, String) {
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    let req = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    s.write_all(req.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).await.unwrap();
    let text = String::from_utf8(raw).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    let content_type = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-type: ")
                .map(str::to_string)
        })
        .unwrap_or_default();
    (status, content_type, body.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serves_the_database_list_pages_and_data() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("databases")).unwrap();
    std::fs::write(
        dir.path().join("registry.json"),
        format!(
            r#"{{"instances":[{{"name":"projects/p/instances/inst","config":"c","display_name":"inst",
            "node_count":1,"processing_units":1000,"create_time":0,"update_time":0}}],
            "databases":[{{"name":"{DB}","dir":"shop","create_time":0}}]}}"#
        ),
    )
    .unwrap();
    let server = Server::start(Config {
        data_dir: Some(dir.path().to_path_buf()),
        addr: "127.0.0.1:0".parse().unwrap(),
        cache_bytes: 8 << 20,
        http_addr: Some("127.0.0.1:0".parse().unwrap()),
        ..Config::default()
    })
    .await
    .expect("the server starts");
    let http = server.http_addr.expect("the HTTP server runs");

    let (status, ty, body) = get(http, "/").await;
    assert_eq!(status, 200);
    assert!(ty.starts_with("text/html"), "{ty}");
    assert!(body.contains(&format!("href=\"/keyviz/{DB}\"")), "{body}");

    let (status, ty, body) = get(http, &format!("/keyviz/{DB}")).await;
    assert_eq!(status, 200);
    assert!(ty.starts_with("text/html"), "{ty}");
    assert!(
        body.contains("<title>Key Visualizer: projects/p/instances/inst/databases/shop</title>")
    );
    assert!(body.contains("id=\"keyviz-data\""));

    let (status, ty, body) = get(http, &format!("/keyviz/{DB}/data.json?granularity=hour")).await;
    assert_eq!(status, 200);
    assert_eq!(ty, "application/json");
    let data: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(data["granularity"], "hour");
    assert_eq!(data["metrics"].as_array().unwrap().len(), 6);

    let (status, _, _) = get(http, "/keyviz/projects/p/instances/inst/databases/nope").await;
    assert_eq!(status, 404);
    let (status, _, _) = get(http, &format!("/keyviz/{DB}?granularity=week")).await;
    assert_eq!(status, 400);

    server.shutdown().await.unwrap();
    assert!(
        tokio::net::TcpStream::connect(http).await.is_err(),
        "the HTTP port is closed after shutdown"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_taken_http_port_fails_the_start() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let r = Server::start(Config {
        addr: "127.0.0.1:0".parse().unwrap(),
        http_addr: Some(taken.local_addr().unwrap()),
        ..Config::default()
    })
    .await;
    match r {
        Ok(s) => {
            s.shutdown().await.unwrap();
            panic!("started on a taken port");
        }
        Err(e) => assert!(e.contains("key visualizer HTTP port"), "{e}"),
    }
}
