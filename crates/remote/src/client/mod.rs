//! The client side of ACP's remote transport: a component reached at a URL becomes a
//! message-framed link, each WebSocket text message or SSE event one JSON-RPC message.
//!
//! [`open`] starts connecting at once and hands back the two halves a link needs
//! ([`acp_link::MessageSource`], [`acp_link::MessageSink`]): the sink waits for the
//! connection before its first send, the source before its first read, so the link exists
//! (and the router can queue frames for it) while the connection is being made. Why the
//! connection ended, first reason first, is kept in [`Ended`] for the component's exit report.
//!
//! - `websocket.rs`: `ws://`, `wss://`: one socket, text messages both ways.
//! - `http_sse.rs`: `http://`, `https://`: one POST per message out, SSE streams in
//!   (`sse_stream.rs`), with the connection and session headers of `remote::protocol`.
//! - `resumption.rs`: resuming a dropped connection: the server's window, the backoff, the
//!   messages to send again.
//! - `tls.rs`: the TLS configuration both use (rustls, the webpki roots).
//! - `error.rs`: why a connection could not be made or was lost.

mod error;
mod http_sse;
mod resumption;
mod sse_stream;
mod websocket;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::oneshot;

use crate::RemoteSpec;
use crate::protocol::{Transport, shown_url};

pub use error::{ConnectionError, Stream};
pub use http_sse::{HttpSink, HttpSource};
pub use websocket::{WsSink, WsSource};

/// How long connecting (TCP, TLS, the upgrade or the `initialize` POST's connection) may
/// take before the component counts as unreachable.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Why a remote component's connection ended; the first reason given wins, later ones are
/// consequences of it.
#[derive(Debug, Clone, Default)]
pub struct Ended(Arc<Mutex<Option<String>>>);

impl Ended {
    pub fn set(&self, reason: impl Into<String>) {
        let mut slot = self.0.lock().expect("ended lock");
        if slot.is_none() {
            *slot = Some(reason.into());
        }
    }

    pub fn reason(&self) -> Option<String> {
        self.0.lock().expect("ended lock").clone()
    }
}

/// Why a remote component's configured URL and headers cannot make a request.
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    #[error("header `{0}` is not a valid HTTP header name")]
    HeaderName(String),
    #[error("the value of header `{0}` is not valid")]
    HeaderValue(String),
}

/// Where to connect and what to send with it, as the transports use it.
#[derive(Clone)]
pub struct Target {
    pub url: url::Url,
    /// What errors and logs show of the URL (no credentials).
    pub shown: String,
    pub headers: http::HeaderMap,
    /// The longest message accepted from the server.
    pub max_message: usize,
}

impl Target {
    /// `spec`'s URL and headers; `max_message` bounds what the server may send at once.
    pub fn of(spec: &RemoteSpec, max_message: usize) -> Result<Target, TargetError> {
        let mut headers = http::HeaderMap::new();
        for (name, value) in &spec.headers {
            // Checked when the configuration was loaded; the value is never shown.
            let name = http::HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| TargetError::HeaderName(name.clone()))?;
            let mut value = http::HeaderValue::from_str(value)
                .map_err(|_| TargetError::HeaderValue(name.to_string()))?;
            value.set_sensitive(true);
            headers.append(name, value);
        }
        Ok(Target {
            url: spec.url.clone(),
            shown: shown_url(&spec.url),
            headers,
            max_message,
        })
    }
}

/// A connection being made, as the two halves of a link.
pub enum Connection {
    WebSocket(WsSource, WsSink),
    Http(HttpSource, HttpSink),
}

/// Starts connecting to `target`; must be called inside the runtime. The source ends (and
/// the connection is dropped) once `stop` resolves, whether sent or dropped: that is how an
/// instance that does not close on its own is ended.
pub fn open(target: Target, ended: Ended, stop: oneshot::Receiver<()>) -> Connection {
    match Transport::of_scheme(target.url.scheme()) {
        Some(Transport::WebSocket) => {
            let (source, sink) = websocket::open(target, ended, stop);
            Connection::WebSocket(source, sink)
        }
        // The configuration accepts no other scheme.
        Some(Transport::StreamableHttp) | None => {
            let (source, sink) = http_sse::open(target, ended, stop);
            Connection::Http(source, sink)
        }
    }
}
