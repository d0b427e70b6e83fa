//! Where `serve` listens: the address (loopback or not decides whether a token is required),
//! and TLS through rustls when a certificate is given. Hands accepted streams to axum, which
//! speaks HTTP/1.1 (with WebSocket upgrades) and HTTP/2 on them.

use std::net::{SocketAddr, ToSocketAddrs};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use rustls::ServerConfig;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;

use super::error::ServeError;

/// How long a client gets to finish the TLS handshake.
const HANDSHAKE_LIMIT: Duration = Duration::from_secs(10);
/// Finished handshakes waiting for axum to take them.
const HANDSHAKEN_QUEUE: usize = 64;

/// The addresses `listen` names (`127.0.0.1:8080`, `[::1]:0`, `localhost:8080`).
pub(super) fn resolve(listen: &str) -> Result<Vec<SocketAddr>, ServeError> {
    let addrs: Vec<SocketAddr> = listen
        .to_socket_addrs()
        .map_err(|source| ServeError::Listen {
            listen: listen.to_string(),
            source,
        })?
        .collect();
    if addrs.is_empty() {
        return Err(ServeError::NoAddress(listen.to_string()));
    }
    Ok(addrs)
}

/// Whether every address is on this machine only.
pub(super) fn all_loopback(addrs: &[SocketAddr]) -> bool {
    addrs.iter().all(|addr| addr.ip().is_loopback())
}

/// The server side of TLS from PEM files: the certificate chain and its private key,
/// offering HTTP/2 and HTTP/1.1.
pub(super) fn tls_config(cert: &Path, key: &Path) -> Result<Arc<ServerConfig>, ServeError> {
    let certs = CertificateDer::pem_file_iter(cert)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|source| ServeError::Certificates {
            path: cert.to_path_buf(),
            source,
        })?;
    if certs.is_empty() {
        return Err(ServeError::NoCertificate(cert.to_path_buf()));
    }
    let private_key =
        PrivateKeyDer::from_pem_file(key).map_err(|source| ServeError::PrivateKey {
            path: key.to_path_buf(),
            source,
        })?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(ServeError::Tls)?
        .with_no_client_auth()
        .with_single_cert(certs, private_key)
        .map_err(|source| ServeError::TlsCertificate {
            cert: cert.to_path_buf(),
            key: key.to_path_buf(),
            source,
        })?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// Accepted TLS connections: each handshake runs in a task of its own, so a slow client
/// holds up no one else.
pub(super) struct TlsListener {
    local: SocketAddr,
    handshaken: mpsc::Receiver<(TlsStream<TcpStream>, SocketAddr)>,
}

impl TlsListener {
    pub(super) fn new(listener: TcpListener, config: Arc<ServerConfig>) -> std::io::Result<Self> {
        let local = listener.local_addr()?;
        let (done, handshaken) = mpsc::channel(HANDSHAKEN_QUEUE);
        let acceptor = TlsAcceptor::from(config);
        acp_link::transport::spawn(async move {
            loop {
                let (mut tcp, peer) = match listener.accept().await {
                    Ok(accepted) => accepted,
                    Err(error) => {
                        // Out of descriptors, usually: wait rather than spin.
                        tracing::warn!("accept failed: {error}");
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        continue;
                    }
                };
                if done.is_closed() {
                    return;
                }
                super::no_delay(&mut tcp);
                let acceptor = acceptor.clone();
                let done = done.clone();
                acp_link::transport::spawn(async move {
                    match tokio::time::timeout(HANDSHAKE_LIMIT, acceptor.accept(tcp)).await {
                        Ok(Ok(tls)) => {
                            let _ = done.send((tls, peer)).await;
                        }
                        Ok(Err(error)) => tracing::debug!(%peer, "TLS handshake failed: {error}"),
                        Err(_) => tracing::debug!(%peer, "TLS handshake timed out"),
                    }
                });
            }
        });
        Ok(TlsListener { local, handshaken })
    }
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.handshaken.recv().await {
            Some(accepted) => accepted,
            // The accept task only ends once this listener is gone.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> std::io::Result<SocketAddr> {
        Ok(self.local)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_is_told_apart() {
        assert!(all_loopback(&resolve("127.0.0.1:0").unwrap()));
        assert!(all_loopback(&resolve("[::1]:0").unwrap()));
        assert!(!all_loopback(&resolve("0.0.0.0:0").unwrap()));
        assert!(!all_loopback(&resolve("192.0.2.1:80").unwrap()));
        assert!(resolve("no-port").is_err());
    }
}
