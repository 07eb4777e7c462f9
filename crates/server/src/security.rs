//! Who may talk to the server: TLS, a bearer token, and the rule that keeps
//! an exposed server from being an open one.
//!
//! Spanner's API has no access control of its own here: whoever reaches the
//! port can read, change and drop every database. On a loopback address
//! (127.0.0.0/8, `::1`) only this machine can reach it, which is why
//! `rowtree serve` listens on 127.0.0.1 by default and needs nothing more.
//! Anywhere else (`0.0.0.0`, `::`, a LAN address) [`check_exposure`] refuses
//! to start unless both protections are configured, or `insecure` says the
//! operator wants an open server anyway:
//!
//! ```text
//!   address      TLS and token   insecure   Server::start
//!   ----------   -------------   --------   --------------------------------------
//!   loopback     any             any        serves (TLS and token are opt-in)
//!   other        both            any        serves
//!   other        one or none     no         refuses: SecurityError::Exposed
//!   other        one or none     yes        serves, with a warning naming what is open
//! ```
//!
//! The two protections, and why both:
//!
//! - **TLS** ([`Tls`]): a certificate chain and its private key, PEM, served
//!   by rustls with the pure-Rust `ring` provider, on the gRPC port (HTTP/2)
//!   and on the key visualizer's HTTP port (HTTP/1.1) alike. Without it
//!   queries, rows and the token itself cross the network in clear text.
//! - **A bearer token** ([`Token`]): every gRPC request must carry the
//!   metadata `authorization: Bearer <token>`, which is how Spanner's client
//!   libraries send an OAuth access token: give them credentials holding the
//!   token (Python: `google.oauth2.credentials.Credentials(token)`). gRPC
//!   clients attach such call credentials only to TLS channels, so a token
//!   without TLS serves only clients that set the header themselves. A
//!   request without the right token is UNAUTHENTICATED. The key visualizer
//!   takes the same token as `Authorization: Bearer <token>`, or as the
//!   password of HTTP Basic authentication (any user name), which is what a
//!   browser prompts for after the `401` it gets first.
//!
//! Tokens are compared in constant time ([`subtle`]), so how long a refusal
//! takes says nothing about how much of a guess was right.

use std::fmt;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use subtle::ConstantTimeEq as _;
use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::pem::PemObject as _;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// How long a client may take over its TLS handshake before it is dropped.
pub(crate) const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// What protects the server's ports ([`Config::security`](crate::Config::security)).
/// The default is nothing, which is right for loopback only: see
/// [`check_exposure`].
#[derive(Debug, Clone, Default)]
pub struct Security {
    /// Serve TLS on both ports (`rowtree serve --tls-cert --tls-key`).
    pub tls: Option<Tls>,
    /// Require this bearer token on both ports (`--auth-token-file`).
    pub token: Option<Token>,
    /// Allow a non-loopback address without TLS or without a token
    /// (`--insecure`); the server then starts with a warning.
    pub insecure: bool,
}

/// Why the security configuration cannot be used. Every variant asks the
/// operator to fix the configuration; nothing here is worth retrying.
#[derive(Debug, thiserror::Error)]
pub enum SecurityError {
    /// A non-loopback address without TLS or without a token, and no
    /// `insecure`.
    #[error(
        "refusing to listen on {addr}, which is not a loopback address, without {missing}: \
         anyone who can reach it could read, change and drop every database. \
         Configure {} (see rowtree serve --help), or pass --insecure to serve it unprotected anyway",
        missing.flags()
    )]
    Exposed { addr: SocketAddr, missing: Missing },
    /// A certificate, key or token file cannot be read.
    #[error("cannot read {what} {}: {source}", path.display())]
    Read {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    /// The token file holds no usable token.
    #[error("the auth token file {}: {problem}", path.display())]
    Token { path: PathBuf, problem: TokenError },
    /// The certificate or key is not usable PEM, or they do not belong together.
    #[error("TLS: {0}")]
    Tls(String),
}

/// What a non-loopback address lacks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Missing {
    Tls,
    Token,
    Both,
}

impl Missing {
    /// What is missing, or `None` when TLS and a token are both configured.
    fn of(security: &Security) -> Option<Missing> {
        match (security.tls.is_some(), security.token.is_some()) {
            (true, true) => None,
            (false, true) => Some(Missing::Tls),
            (true, false) => Some(Missing::Token),
            (false, false) => Some(Missing::Both),
        }
    }

    /// The `rowtree serve` flags that would supply it.
    fn flags(self) -> &'static str {
        match self {
            Missing::Tls => "--tls-cert and --tls-key",
            Missing::Token => "--auth-token-file",
            Missing::Both => "--tls-cert, --tls-key and --auth-token-file",
        }
    }
}

impl fmt::Display for Missing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Missing::Tls => "TLS",
            Missing::Token => "an auth token",
            Missing::Both => "TLS and an auth token",
        })
    }
}

/// What [`check_exposure`] allows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exposure {
    /// Every address is a loopback address: only this machine can connect.
    Loopback,
    /// Some address is not loopback, and TLS and a token protect it.
    Protected,
    /// Some addresses are not loopback and lack `missing`, allowed by
    /// `insecure`. [`Exposure::warning`] says what that exposes.
    Insecure {
        addrs: Vec<SocketAddr>,
        missing: Missing,
    },
}

impl Exposure {
    /// The warning to log when starting, for [`Exposure::Insecure`].
    pub fn warning(&self) -> Option<String> {
        let Exposure::Insecure { addrs, missing } = self else {
            return None;
        };
        let addrs = addrs
            .iter()
            .map(|a| a.to_string())
            .collect::<Vec<_>>()
            .join(" and ");
        let open = "anyone who can reach the server can read, change and drop every database \
                    and see the key visualizer";
        let clear = "queries, rows and everything else cross the network in clear text, \
                     readable and alterable on the way";
        Some(match missing {
            Missing::Both => format!(
                "--insecure: serving on {addrs} (not loopback) without TLS and without an auth token: {open}; {clear}"
            ),
            Missing::Token => format!(
                "--insecure: serving on {addrs} (not loopback) without an auth token: {open}"
            ),
            Missing::Tls => format!(
                "--insecure: serving on {addrs} (not loopback) without TLS: {clear}, the auth token included"
            ),
        })
    }
}

/// The one rule for exposed servers: refuses a non-loopback address among
/// `addrs` (the gRPC and HTTP addresses) unless `security` has TLS and a
/// token, or `insecure`. An IPv4-mapped IPv6 loopback address
/// (`::ffff:127.0.0.1`) counts as loopback, which it is.
pub fn check_exposure(
    addrs: &[SocketAddr],
    security: &Security,
) -> Result<Exposure, SecurityError> {
    let exposed: Vec<SocketAddr> = addrs
        .iter()
        .copied()
        .filter(|a| !a.ip().to_canonical().is_loopback())
        .collect();
    if exposed.is_empty() {
        return Ok(Exposure::Loopback);
    }
    match Missing::of(security) {
        None => Ok(Exposure::Protected),
        Some(missing) if security.insecure => Ok(Exposure::Insecure {
            addrs: exposed,
            missing,
        }),
        Some(missing) => Err(SecurityError::Exposed {
            addr: exposed[0],
            missing,
        }),
    }
}

/// A certificate chain and private key to serve TLS with, checked when
/// loaded: both parse, and the key belongs to the certificate.
#[derive(Clone)]
pub struct Tls {
    cert_pem: Arc<[u8]>,
    key_pem: Arc<[u8]>,
    /// The rustls configuration of the key visualizer's HTTP/1.1 port.
    http: Arc<rustls::ServerConfig>,
}

impl fmt::Debug for Tls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tls").finish_non_exhaustive()
    }
}

impl Tls {
    /// From PEM text: `cert_pem` holds the certificate chain, the server's
    /// own certificate first; `key_pem` its private key (PKCS#8, PKCS#1 or
    /// SEC1).
    pub fn from_pem(cert_pem: &[u8], key_pem: &[u8]) -> Result<Tls, SecurityError> {
        Tls::load(cert_pem, key_pem, "the certificate", "the private key")
    }

    /// From PEM files (`rowtree serve --tls-cert FILE --tls-key FILE`).
    pub fn from_files(cert: &Path, key: &Path) -> Result<Tls, SecurityError> {
        let read = |what, path: &Path| {
            std::fs::read(path).map_err(|source| SecurityError::Read {
                what,
                path: path.to_path_buf(),
                source,
            })
        };
        let cert_pem = read("the TLS certificate", cert)?;
        let key_pem = read("the TLS private key", key)?;
        Tls::load(
            &cert_pem,
            &key_pem,
            &format!("the certificate file {}", cert.display()),
            &format!("the private key file {}", key.display()),
        )
    }

    fn load(
        cert_pem: &[u8],
        key_pem: &[u8],
        cert_name: &str,
        key_name: &str,
    ) -> Result<Tls, SecurityError> {
        let chain = CertificateDer::pem_slice_iter(cert_pem)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| SecurityError::Tls(format!("{cert_name} is not valid PEM: {e}")))?;
        if chain.is_empty() {
            return Err(SecurityError::Tls(format!(
                "{cert_name} holds no PEM CERTIFICATE block"
            )));
        }
        let key = PrivateKeyDer::from_pem_slice(key_pem).map_err(|e| {
            SecurityError::Tls(format!("{key_name} holds no usable PEM private key: {e}"))
        })?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut http = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| SecurityError::Tls(e.to_string()))?
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .map_err(|e| {
                SecurityError::Tls(format!(
                    "{cert_name} and {key_name} cannot serve TLS together: {e}"
                ))
            })?;
        http.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Tls {
            cert_pem: cert_pem.into(),
            key_pem: key_pem.into(),
            http: Arc::new(http),
        })
    }

    /// tonic's configuration for the gRPC port (HTTP/2).
    pub(crate) fn grpc(&self) -> tonic::transport::ServerTlsConfig {
        tonic::transport::ServerTlsConfig::new()
            .identity(tonic::transport::Identity::from_pem(
                &self.cert_pem,
                &self.key_pem,
            ))
            .timeout(HANDSHAKE_TIMEOUT)
    }

    /// The rustls configuration for the key visualizer's port (HTTP/1.1).
    pub(crate) fn http(&self) -> Arc<rustls::ServerConfig> {
        self.http.clone()
    }

    /// The certificate and key as a rustls server configuration, for other
    /// ports that speak TLS themselves (the PostgreSQL port sets its own
    /// ALPN protocol on a copy).
    pub fn rustls_config(&self) -> Arc<rustls::ServerConfig> {
        self.http.clone()
    }
}

/// Why a token file's contents are not a token.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    #[error("holds no token (it is empty or only whitespace)")]
    Empty,
    #[error("holds characters a header cannot carry: a token is printable ASCII without spaces")]
    NotHeaderSafe,
}

/// The bearer token clients must present. Its `Debug` form hides it.
#[derive(Clone)]
pub struct Token(Arc<str>);

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token(<hidden>)")
    }
}

/// Why a request is refused; its text is the UNAUTHENTICATED message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Denied {
    #[error(
        "this server requires an auth token: send `authorization: Bearer <token>` \
         (the token of the server's --auth-token-file)"
    )]
    NoCredentials,
    #[error("the authorization header must be `Bearer <token>`")]
    UnknownScheme,
    #[error("the auth token is not valid for this server")]
    WrongToken,
}

impl Token {
    /// `text` trimmed of surrounding whitespace (a file's final newline).
    pub fn new(text: &str) -> Result<Token, TokenError> {
        let token = text.trim();
        if token.is_empty() {
            return Err(TokenError::Empty);
        }
        if !token.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(TokenError::NotHeaderSafe);
        }
        Ok(Token(token.into()))
    }

    /// The trimmed contents of `path` (`rowtree serve --auth-token-file`).
    pub fn from_file(path: &Path) -> Result<Token, SecurityError> {
        let text = std::fs::read_to_string(path).map_err(|source| SecurityError::Read {
            what: "the auth token file",
            path: path.to_path_buf(),
            source,
        })?;
        Token::new(&text).map_err(|problem| SecurityError::Token {
            path: path.to_path_buf(),
            problem,
        })
    }

    /// Constant-time equality with what a client presented (the lengths
    /// may differ, and that alone is not secret).
    /// Whether `presented` is this token (compared in constant time): the
    /// PostgreSQL port checks a password with it.
    pub fn matches(&self, presented: &[u8]) -> bool {
        self.is(presented)
    }

    fn is(&self, presented: &[u8]) -> bool {
        self.0.as_bytes().ct_eq(presented).into()
    }

    /// Admits a gRPC request by its `authorization` metadata.
    pub(crate) fn admit_bearer(&self, authorization: Option<&[u8]>) -> Result<(), Denied> {
        let value = authorization.ok_or(Denied::NoCredentials)?;
        let presented = credentials(value, b"bearer").ok_or(Denied::UnknownScheme)?;
        if self.is(presented) {
            Ok(())
        } else {
            Err(Denied::WrongToken)
        }
    }

    /// Admits an HTTP request by its `Authorization` header: `Bearer
    /// <token>`, or `Basic` with the token as the password.
    pub(crate) fn admit_http(&self, authorization: Option<&[u8]>) -> Result<(), Denied> {
        let value = authorization.ok_or(Denied::NoCredentials)?;
        if let Some(encoded) = credentials(value, b"basic") {
            let decoded = base64::engine::general_purpose::STANDARD
                .decode(encoded)
                .map_err(|_| Denied::WrongToken)?;
            let password = match decoded.iter().position(|&b| b == b':') {
                Some(colon) => &decoded[colon + 1..],
                None => return Err(Denied::WrongToken),
            };
            return if self.is(password) {
                Ok(())
            } else {
                Err(Denied::WrongToken)
            };
        }
        self.admit_bearer(Some(value))
    }
}

/// The credentials of an `authorization` value with `scheme` (lowercase;
/// schemes compare case-insensitively), trimmed.
fn credentials<'v>(value: &'v [u8], scheme: &[u8]) -> Option<&'v [u8]> {
    let space = value.iter().position(|&b| b == b' ')?;
    if !value[..space].eq_ignore_ascii_case(scheme) {
        return None;
    }
    Some(value[space + 1..].trim_ascii())
}

/// The gRPC interceptor in front of every service: with a token configured,
/// a request without it never reaches a service.
#[derive(Debug, Clone)]
pub(crate) struct Authenticator {
    pub token: Option<Token>,
}

impl tonic::service::Interceptor for Authenticator {
    fn call(&mut self, request: tonic::Request<()>) -> Result<tonic::Request<()>, tonic::Status> {
        if let Some(token) = &self.token {
            let authorization = request
                .metadata()
                .get("authorization")
                .map(|v| v.as_bytes());
            token
                .admit_bearer(authorization)
                .map_err(|denied| tonic::Status::unauthenticated(denied.to_string()))?;
        }
        Ok(request)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    fn token() -> Token {
        Token::new("s3cret\n").unwrap()
    }

    /// A self-signed certificate for localhost and its key, as PEM.
    fn self_signed() -> (String, String) {
        let c = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
        (c.cert.pem(), c.signing_key.serialize_pem())
    }

    fn security(tls: bool, token: bool, insecure: bool) -> Security {
        Security {
            tls: tls.then(|| {
                let (cert, key) = self_signed();
                Tls::from_pem(cert.as_bytes(), key.as_bytes()).unwrap()
            }),
            token: token.then(self::token),
            insecure,
        }
    }

    #[test]
    fn loopback_needs_nothing() {
        for a in [
            "127.0.0.1:9010",
            "127.3.4.5:1",
            "[::1]:9010",
            "[::ffff:127.0.0.1]:1",
        ] {
            assert_eq!(
                check_exposure(&[addr(a)], &Security::default()).unwrap(),
                Exposure::Loopback,
                "{a}"
            );
        }
    }

    #[test]
    fn a_non_loopback_address_is_refused_naming_what_is_missing() {
        for a in [
            "0.0.0.0:9010",
            "[::]:9010",
            "192.168.1.20:9010",
            "[::ffff:10.0.0.1]:1",
        ] {
            let e = check_exposure(&[addr(a)], &security(false, false, false)).unwrap_err();
            let text = e.to_string();
            assert!(
                matches!(
                    e,
                    SecurityError::Exposed {
                        missing: Missing::Both,
                        ..
                    }
                ),
                "{a}: {e:?}"
            );
            assert!(
                text.contains(&format!("refusing to listen on {a}")),
                "{text}"
            );
            assert!(
                text.contains("--tls-cert, --tls-key and --auth-token-file"),
                "{text}"
            );
            assert!(text.contains("--insecure"), "{text}");
        }
        let e = check_exposure(&[addr("0.0.0.0:1")], &security(false, true, false)).unwrap_err();
        assert!(
            matches!(
                e,
                SecurityError::Exposed {
                    missing: Missing::Tls,
                    ..
                }
            ),
            "{e:?}"
        );
        assert!(e.to_string().contains("without TLS:"), "{e}");
        assert!(
            e.to_string().contains("Configure --tls-cert and --tls-key"),
            "{e}"
        );
        let e = check_exposure(&[addr("0.0.0.0:1")], &security(true, false, false)).unwrap_err();
        assert!(
            matches!(
                e,
                SecurityError::Exposed {
                    missing: Missing::Token,
                    ..
                }
            ),
            "{e:?}"
        );
        assert!(e.to_string().contains("Configure --auth-token-file"), "{e}");
    }

    #[test]
    fn tls_and_a_token_protect_a_non_loopback_address() {
        let exposure = check_exposure(&[addr("0.0.0.0:9010")], &security(true, true, false));
        assert_eq!(exposure.unwrap(), Exposure::Protected);
    }

    #[test]
    fn the_http_address_counts_too() {
        let e = check_exposure(
            &[addr("127.0.0.1:9010"), addr("0.0.0.0:9020")],
            &Security::default(),
        )
        .unwrap_err();
        assert!(
            matches!(e, SecurityError::Exposed { addr, .. } if addr.port() == 9020),
            "{e:?}"
        );
    }

    #[test]
    fn insecure_allows_it_with_a_warning_naming_what_is_open() {
        let exposure = check_exposure(
            &[addr("0.0.0.0:9010"), addr("127.0.0.1:9020")],
            &security(false, false, true),
        )
        .unwrap();
        assert_eq!(
            exposure,
            Exposure::Insecure {
                addrs: vec![addr("0.0.0.0:9010")],
                missing: Missing::Both
            }
        );
        let warning = exposure.warning().unwrap();
        assert!(warning.contains("0.0.0.0:9010"), "{warning}");
        assert!(
            warning.contains("without TLS and without an auth token"),
            "{warning}"
        );
        let with_token = check_exposure(&[addr("[::]:1")], &security(false, true, true)).unwrap();
        assert!(with_token.warning().unwrap().contains("without TLS:"));
        assert_eq!(Exposure::Loopback.warning(), None);
    }

    #[test]
    fn unusable_certificates_and_keys_are_refused() {
        let (cert, key) = self_signed();
        let (_, other_key) = self_signed();
        let e = Tls::from_pem(b"not pem", key.as_bytes()).unwrap_err();
        assert!(e.to_string().contains("no PEM CERTIFICATE block"), "{e}");
        let e = Tls::from_pem(cert.as_bytes(), cert.as_bytes()).unwrap_err();
        assert!(e.to_string().contains("no usable PEM private key"), "{e}");
        let e = Tls::from_pem(cert.as_bytes(), other_key.as_bytes()).unwrap_err();
        assert!(e.to_string().contains("cannot serve TLS together"), "{e}");
    }

    #[test]
    fn tokens_are_trimmed_and_must_be_header_safe() {
        assert_eq!(Token::new("  \n").unwrap_err(), TokenError::Empty);
        assert_eq!(Token::new("a b").unwrap_err(), TokenError::NotHeaderSafe);
        assert_eq!(Token::new("é").unwrap_err(), TokenError::NotHeaderSafe);
        assert!(token().is(b"s3cret"));
        assert_eq!(format!("{:?}", token()), "Token(<hidden>)");
    }

    #[test]
    fn an_empty_token_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, "\n").unwrap();
        let e = Token::from_file(&path).unwrap_err();
        assert!(
            matches!(
                e,
                SecurityError::Token {
                    problem: TokenError::Empty,
                    ..
                }
            ),
            "{e:?}"
        );
        assert!(e.to_string().contains("holds no token"), "{e}");
        let e = Token::from_file(&dir.path().join("missing")).unwrap_err();
        assert!(matches!(e, SecurityError::Read { .. }), "{e:?}");
    }

    #[test]
    fn bearer_and_basic_credentials() {
        let t = token();
        assert_eq!(t.admit_bearer(None), Err(Denied::NoCredentials));
        assert_eq!(t.admit_bearer(Some(b"Bearer s3cret")), Ok(()));
        assert_eq!(t.admit_bearer(Some(b"bearer  s3cret ")), Ok(()));
        assert_eq!(
            t.admit_bearer(Some(b"Bearer s3cre")),
            Err(Denied::WrongToken)
        );
        assert_eq!(
            t.admit_bearer(Some(b"Bearer s3cretX")),
            Err(Denied::WrongToken)
        );
        assert_eq!(t.admit_bearer(Some(b"s3cret")), Err(Denied::UnknownScheme));
        // gRPC takes only Bearer; HTTP also Basic with the token as password.
        let basic = format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode("anyone:s3cret")
        );
        assert_eq!(
            t.admit_bearer(Some(basic.as_bytes())),
            Err(Denied::UnknownScheme)
        );
        assert_eq!(t.admit_http(Some(basic.as_bytes())), Ok(()));
        assert_eq!(t.admit_http(Some(b"Bearer s3cret")), Ok(()));
        let wrong = format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode("s3cret:nope")
        );
        assert_eq!(
            t.admit_http(Some(wrong.as_bytes())),
            Err(Denied::WrongToken)
        );
        assert_eq!(t.admit_http(None), Err(Denied::NoCredentials));
    }
}
