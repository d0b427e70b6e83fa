//! Why `serve` refuses to start: what its command line names cannot be used. Each is shown
//! after `acp-conductor serve: ` and exits with EX_CONFIG; none is decided on later.

use std::path::PathBuf;

use rustls::pki_types::pem;

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("cannot use --listen {listen}: {source} (write HOST:PORT)")]
    Listen {
        listen: String,
        #[source]
        source: std::io::Error,
    },
    #[error("--listen {0} names no address")]
    NoAddress(String),
    #[error(
        "--listen {0} is reachable from other machines: give --token-file FILE (a file \
         holding the bearer token clients must send), or listen on a loopback address \
         such as 127.0.0.1"
    )]
    NotLoopbackWithoutToken(String),
    #[error(
        "--admin-listen {0} is reachable from other machines: give --token-file FILE (the \
         admin endpoints then need the same bearer token), or listen on a loopback address"
    )]
    AdminNotLoopbackWithoutToken(String),
    #[error("--replica {0}: write 1 to 32 ASCII letters, digits, `_` or `.`")]
    Replica(String),
    #[error("cannot read the token file {}: {source}", path.display())]
    TokenUnreadable {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the token file {} is empty", .0.display())]
    TokenEmpty(PathBuf),
    #[error(
        "the token in {} must be printable ASCII without spaces (it is sent in an HTTP header)",
        .0.display()
    )]
    TokenNotPrintable(PathBuf),
    #[error("--allow-origin {0} is not a valid origin")]
    Origin(String),
    #[error("cannot read certificates from {}: {source}", path.display())]
    Certificates {
        path: PathBuf,
        #[source]
        source: pem::Error,
    },
    #[error("{} holds no certificate", .0.display())]
    NoCertificate(PathBuf),
    #[error("cannot read a private key from {}: {source}", path.display())]
    PrivateKey {
        path: PathBuf,
        #[source]
        source: pem::Error,
    },
    #[error("TLS: {0}")]
    Tls(#[source] rustls::Error),
    #[error("TLS with {} and {}: {source}", cert.display(), key.display())]
    TlsCertificate {
        cert: PathBuf,
        key: PathBuf,
        #[source]
        source: rustls::Error,
    },
}

/// Why `serve` could not listen once its plan was checked.
#[derive(Debug, thiserror::Error)]
pub enum ListenError {
    #[error("cannot listen on {addrs:?}: {source}")]
    Bind {
        addrs: Vec<std::net::SocketAddr>,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot listen: {0}")]
    Tls(#[source] std::io::Error),
}
