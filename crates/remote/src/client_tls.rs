//! The TLS client configuration every HTTPS client of the conductor uses: rustls with the
//! *ring* provider and the Mozilla roots of `webpki-roots`. Must not know what is fetched.

use std::sync::Arc;

use rustls::ClientConfig;

/// A client configuration offering `alpn` (`h2`, `http/1.1` for HTTP; `http/1.1` only for a
/// WebSocket upgrade, which HTTP/2 cannot carry here).
pub fn client_config(alpn: &[&[u8]]) -> Result<Arc<ClientConfig>, rustls::Error> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    let mut config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    Ok(Arc::new(config))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_configuration_offers_what_it_is_asked_to() {
        let config = client_config(&[b"h2", b"http/1.1"]).expect("a TLS configuration");
        assert_eq!(
            config.alpn_protocols,
            [b"h2".to_vec(), b"http/1.1".to_vec()]
        );
        let config = client_config(&[b"http/1.1"]).expect("a TLS configuration");
        assert_eq!(config.alpn_protocols, [b"http/1.1".to_vec()]);
    }
}
