//! One GET of a whole file over HTTP(S), bounded in time and size, with the conductor's one
//! HTTP client and TLS configuration. Must not know what the file is or where it is kept.
//!
//! The registry fetch and a `wasm` URL's download both use it; each turns [`GetError`] into
//! its own error, which names the URL.

use std::time::Duration;

use crate::client_tls;

/// How long the whole GET may take (connecting and reading the body included), and how many
/// bytes the body may have.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    pub timeout: Duration,
    pub max_size: u64,
}

/// Why a GET gave no body. The `reqwest` errors carry no URL: the caller's message names it.
#[derive(Debug, thiserror::Error)]
pub enum GetError {
    /// TLS could not be set up, so nothing was sent.
    #[error("cannot set up TLS: {0}")]
    Tls(#[source] rustls::Error),
    /// The request could not be made, or was not answered with success.
    #[error("{0}")]
    Request(#[source] reqwest::Error),
    /// The answer's body broke off.
    #[error("{0}")]
    Body(#[source] reqwest::Error),
    /// The body is (or announced itself as) larger than [`Bounds::max_size`].
    #[error("the body is larger than {limit} bytes")]
    TooLarge { limit: u64 },
}

/// The body of `url`, read whole; refused as soon as it is known to exceed `bounds.max_size`.
pub async fn get(url: &str, bounds: Bounds) -> Result<Vec<u8>, GetError> {
    let tls = client_tls::client_config(&[b"h2", b"http/1.1"]).map_err(GetError::Tls)?;
    let request = |error: reqwest::Error| GetError::Request(error.without_url());
    let client = reqwest::Client::builder()
        .timeout(bounds.timeout)
        .user_agent(concat!("acp-conductor/", env!("CARGO_PKG_VERSION")))
        .tls_backend_preconfigured((*tls).clone())
        .build()
        .map_err(request)?;
    let mut response = client
        .get(url)
        .send()
        .await
        .and_then(reqwest::Response::error_for_status)
        .map_err(request)?;
    let too_large = GetError::TooLarge {
        limit: bounds.max_size,
    };
    if response
        .content_length()
        .is_some_and(|length| length > bounds.max_size)
    {
        return Err(too_large);
    }
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|error| GetError::Body(error.without_url()))?
    {
        if (body.len() + chunk.len()) as u64 > bounds.max_size {
            return Err(too_large);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}
