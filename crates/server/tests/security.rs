//! Exposed servers (`Config::security`): the refusal of a non-loopback
//! address without TLS and a token, the token on every gRPC request and on
//! the key visualizer, and TLS with a self-signed certificate made here.
//! Every server listens on 127.0.0.1; the non-loopback cases are refused, or
//! (with `insecure`) fail to bind an address this machine does not have,
//! before anything listens.

use std::sync::Arc;

use googleapis_tonic_google_spanner_admin_instance_v1::google::spanner::admin::instance::v1 as ipb;
use ipb::instance_admin_client::InstanceAdminClient;
use rowtree_server::security::{Security, Tls, Token};
use rowtree_server::{Config, Server};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::pem::PemObject as _;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint};
use tonic::Code;

const PROJECT: &str = "projects/p";
const TOKEN: &str = "a-long-random-token-0123456789";

/// A certificate for `localhost` and 127.0.0.1, signed by itself, and its
/// key, as PEM.
fn self_signed() -> (String, String) {
    let c =
        rcgen::generate_simple_self_signed(vec!["localhost".to_string(), "127.0.0.1".to_string()])
            .unwrap();
    (c.cert.pem(), c.signing_key.serialize_pem())
}

fn config(addr: &str, http: Option<&str>, security: Security) -> Config {
    Config {
        addr: addr.parse().unwrap(),
        http_addr: http.map(|a| a.parse().unwrap()),
        security,
        ..Config::default()
    }
}

fn token() -> Option<Token> {
    Some(Token::new(TOKEN).unwrap())
}

/// `ListInstances`, with `authorization` metadata when given.
async fn list_instances(
    channel: Channel,
    authorization: Option<&str>,
) -> Result<ipb::ListInstancesResponse, tonic::Status> {
    let value: Option<tonic::metadata::AsciiMetadataValue> =
        authorization.map(|a| a.parse().unwrap());
    let mut client =
        InstanceAdminClient::with_interceptor(channel, move |mut req: tonic::Request<()>| {
            if let Some(v) = &value {
                req.metadata_mut().insert("authorization", v.clone());
            }
            Ok(req)
        });
    client
        .list_instances(ipb::ListInstancesRequest {
            parent: PROJECT.into(),
            ..Default::default()
        })
        .await
        .map(|r| r.into_inner())
}

/// `GET path` over HTTP/1.1 on `stream`: (status, the response head, body).
async fn http_get<S: AsyncRead + AsyncWrite + Unpin>(
    mut stream: S,
    path: &str,
    authorization: Option<&str>,
) -> (u16, String, String) {
    let auth = authorization
        .map(|a| format!("Authorization: {a}\r\n"))
        .unwrap_or_default();
    let req = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\n{auth}Connection: close\r\n\r\n");
    stream.write_all(req.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    // A TLS peer may close without close_notify; what was read counts.
    let _ = stream.read_to_end(&mut raw).await;
    let text = String::from_utf8(raw).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    (status, head.to_string(), body.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_non_loopback_address_needs_tls_and_a_token_or_insecure() {
    let (cert, key) = self_signed();
    let tls = Tls::from_pem(cert.as_bytes(), key.as_bytes()).unwrap();
    for addr in ["0.0.0.0:0", "[::]:0", "192.0.2.1:0"] {
        let e = match Server::start(config(addr, None, Security::default())).await {
            Ok(s) => {
                s.shutdown().await.unwrap();
                panic!("started on {addr} unprotected");
            }
            Err(e) => e,
        };
        assert!(e.contains(&format!("refusing to listen on {addr}")), "{e}");
        assert!(
            e.contains("--tls-cert, --tls-key and --auth-token-file"),
            "{e}"
        );
        assert!(e.contains("--insecure"), "{e}");
    }
    // Half the protection is refused too, naming the other half.
    let half = Security {
        tls: Some(tls.clone()),
        ..Security::default()
    };
    let e = Server::start(config("0.0.0.0:0", None, half))
        .await
        .err()
        .unwrap();
    assert!(e.contains("without an auth token"), "{e}");
    // The key visualizer's address counts as much as the gRPC one.
    let e = Server::start(config(
        "127.0.0.1:0",
        Some("0.0.0.0:0"),
        Security::default(),
    ))
    .await
    .err()
    .unwrap();
    assert!(e.contains("refusing to listen on 0.0.0.0:0"), "{e}");

    // With `insecure` (or with TLS and a token) the rule lets the address
    // through: the start goes on to bind it, which here fails because
    // 192.0.2.1 (TEST-NET-1) is no address of this machine, so nothing
    // listens off loopback.
    let allowed = [
        Security {
            insecure: true,
            ..Security::default()
        },
        Security {
            tls: Some(tls),
            token: token(),
            insecure: false,
        },
    ];
    for security in allowed {
        let e = match Server::start(config("192.0.2.1:0", None, security)).await {
            Ok(s) => {
                s.shutdown().await.unwrap();
                panic!("192.0.2.1 is an address of this machine: cannot test safely");
            }
            Err(e) => e,
        };
        assert!(e.starts_with("cannot listen on 192.0.2.1:0"), "{e}");
    }

    // And on loopback `insecure` changes nothing: the server starts.
    let insecure = Security {
        insecure: true,
        ..Security::default()
    };
    let server = Server::start(config("127.0.0.1:0", None, insecure))
        .await
        .unwrap();
    let channel = Endpoint::from_shared(format!("http://{}", server.local_addr))
        .unwrap()
        .connect()
        .await
        .unwrap();
    list_instances(channel, None).await.unwrap();
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_a_token_every_request_needs_it() {
    let security = Security {
        token: token(),
        ..Security::default()
    };
    let server = Server::start(config("127.0.0.1:0", Some("127.0.0.1:0"), security))
        .await
        .unwrap();
    let channel = Endpoint::from_shared(format!("http://{}", server.local_addr))
        .unwrap()
        .connect()
        .await
        .unwrap();

    let refused = [
        (None, "requires an auth token"),
        (Some("Bearer wrong-token"), "not valid"),
        (Some(&format!("Bearer {TOKEN}x")[..]), "not valid"),
        (Some(TOKEN), "must be `Bearer <token>`"),
    ];
    for (authorization, message) in refused {
        let e = list_instances(channel.clone(), authorization)
            .await
            .unwrap_err();
        assert_eq!(e.code(), Code::Unauthenticated, "{authorization:?}: {e:?}");
        assert!(e.message().contains(message), "{authorization:?}: {e:?}");
    }
    let bearer = format!("Bearer {TOKEN}");
    list_instances(channel.clone(), Some(&bearer))
        .await
        .unwrap();

    // The key visualizer: 401 with challenges, then the header or Basic.
    let http = server.http_addr.unwrap();
    let connect = || async move { tokio::net::TcpStream::connect(http).await.unwrap() };
    let (status, head, body) = http_get(connect().await, "/", None).await;
    assert_eq!(status, 401, "{head}");
    let head = head.to_ascii_lowercase();
    assert!(head.contains("www-authenticate: bearer"), "{head}");
    assert!(head.contains("www-authenticate: basic"), "{head}");
    assert!(body.contains("requires an auth token"), "{body}");
    let (status, _, _) = http_get(connect().await, "/", Some("Bearer nope")).await;
    assert_eq!(status, 401);
    let (status, _, body) = http_get(connect().await, "/", Some(&bearer)).await;
    assert_eq!(status, 200);
    assert!(body.contains("Rowtree: key visualizer"), "{body}");
    use base64::Engine as _;
    let basic = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("me:{TOKEN}"))
    );
    let (status, _, _) = http_get(connect().await, "/", Some(&basic)).await;
    assert_eq!(status, 200);

    drop(channel);
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_with_a_self_signed_certificate() {
    let (cert, key) = self_signed();
    let security = Security {
        tls: Some(Tls::from_pem(cert.as_bytes(), key.as_bytes()).unwrap()),
        token: token(),
        insecure: false,
    };
    let server = Server::start(config("127.0.0.1:0", Some("127.0.0.1:0"), security))
        .await
        .unwrap();
    let url = format!("https://{}", server.local_addr);
    let trusting = ClientTlsConfig::new()
        .ca_certificate(Certificate::from_pem(&cert))
        .domain_name("localhost");
    let channel = Endpoint::from_shared(url.clone())
        .unwrap()
        .tls_config(trusting)
        .unwrap()
        .connect()
        .await
        .expect("a client that trusts the certificate connects");
    let bearer = format!("Bearer {TOKEN}");

    // A whole admin round trip over TLS: create an instance, list it.
    let mut admin = InstanceAdminClient::with_interceptor(channel.clone(), {
        let value: tonic::metadata::MetadataValue<_> = bearer.parse().unwrap();
        move |mut req: tonic::Request<()>| {
            req.metadata_mut().insert("authorization", value.clone());
            Ok(req)
        }
    });
    admin
        .create_instance(ipb::CreateInstanceRequest {
            parent: PROJECT.into(),
            instance_id: "tls".into(),
            instance: Some(ipb::Instance {
                config: format!("{PROJECT}/instanceConfigs/emulator-config"),
                display_name: "tls".into(),
                node_count: 1,
                ..Default::default()
            }),
        })
        .await
        .unwrap();
    let listed = list_instances(channel.clone(), Some(&bearer))
        .await
        .unwrap();
    let names: Vec<_> = listed.instances.iter().map(|i| i.name.as_str()).collect();
    assert_eq!(names, [format!("{PROJECT}/instances/tls")]);
    // TLS does not replace the token.
    let e = list_instances(channel.clone(), None).await.unwrap_err();
    assert_eq!(e.code(), Code::Unauthenticated, "{e:?}");

    // A client that does not trust the certificate, and one without TLS,
    // get nowhere.
    let untrusting = Endpoint::from_shared(url)
        .unwrap()
        .tls_config(ClientTlsConfig::new().domain_name("localhost"))
        .unwrap()
        .connect()
        .await;
    assert!(
        untrusting.is_err(),
        "connected without trusting the certificate"
    );
    let plain = Endpoint::from_shared(format!("http://{}", server.local_addr))
        .unwrap()
        .connect()
        .await;
    if let Ok(plain) = plain {
        // The TCP connection may open; no request gets through.
        assert!(list_instances(plain, Some(&bearer)).await.is_err());
    }

    // The key visualizer serves HTTPS with the same certificate.
    let http = server.http_addr.unwrap();
    let mut roots = rustls::RootCertStore::empty();
    let der = rustls::pki_types::CertificateDer::from_pem_slice(cert.as_bytes()).unwrap();
    roots.add(der).unwrap();
    let client = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(client));
    let tcp = tokio::net::TcpStream::connect(http).await.unwrap();
    let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
    let stream = connector.connect(name, tcp).await.expect("TLS handshake");
    let (status, _, body) = http_get(stream, "/", Some(&bearer)).await;
    assert_eq!(status, 200);
    assert!(body.contains("projects/p/instances/tls"), "{body}");
    // Plain HTTP on the TLS port gets no page.
    let mut tcp = tokio::net::TcpStream::connect(http).await.unwrap();
    tcp.write_all(b"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut raw = Vec::new();
    let _ = tcp.read_to_end(&mut raw).await;
    assert!(!String::from_utf8_lossy(&raw).contains("200 OK"));

    drop(channel);
    drop(admin);
    server.shutdown().await.unwrap();
    assert!(
        tokio::net::TcpStream::connect(http).await.is_err(),
        "the HTTPS port is closed after shutdown"
    );
}
