//! acp-otel: the conductor's OpenTelemetry export (`[conductor] otlp`). Every chain's trace
//! points become spans, a span per request per hop ([`span_tree`]), sent over OTLP/HTTP.
//!
//! A chain's producers (the core's trace points, the links' write loops) feed a
//! [`acp_trace::TraceSink`] as for the trace file, tagged with the chain's number
//! ([`Otlp::chain`]); the span thread ([`span_thread`]) builds the spans and queues the ended
//! ones; the export thread ([`export`]) batches them to the collector. Both queues are
//! bounded and drop (and count) rather than wait: routing never waits on the collector.
//! With no endpoint, nothing of this exists ([`get`] is `None`) and a chain's producers hold
//! no sink for it. Knows nothing of the config file, the chain's components or routing.

#![deny(clippy::print_stdout)]

mod attributes;
pub mod export;
pub mod span_thread;
pub mod span_tree;
pub mod trace_context;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use acp_trace::{Redactor, TaggedSinks, TraceSink};
use opentelemetry_otlp::{Protocol, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::{RandomIdGenerator, SpanExporter as _};

pub use export::Lost;

/// Bytes of messages that may wait for the span thread before new ones are dropped.
pub const ITEM_BUDGET: usize = 8 << 20;
/// How long one export may take before it is given up (and its spans counted as dropped).
pub const EXPORT_TIMEOUT: Duration = Duration::from_secs(10);
/// The environment variable read when the configuration names no endpoint.
pub const ENDPOINT_VARIABLE: &str = "OTEL_EXPORTER_OTLP_ENDPOINT";

/// The export, running: what chains take their sinks from.
#[derive(Debug)]
pub struct Otlp {
    sinks: TaggedSinks,
    next_chain: AtomicU64,
    lost: Arc<Lost>,
    /// The export thread's end, once the span thread has been stopped.
    done: Mutex<Option<mpsc::Receiver<()>>>,
    /// Where traces go (`…/v1/traces`).
    pub url: String,
}

static OTLP: OnceLock<Otlp> = OnceLock::new();

/// Why the export could not start.
#[derive(Debug, thiserror::Error)]
pub enum OtelError {
    #[error("`otlp` {endpoint:?} is not an http:// or https:// URL with a host")]
    Endpoint { endpoint: String },
    #[error("cannot make the OTLP exporter: {0}")]
    Exporter(String),
    #[error("cannot start the OpenTelemetry threads: {0}")]
    Thread(#[from] std::io::Error),
    #[error("OpenTelemetry export was already started in this process")]
    Started,
}

/// The traces URL for an OTLP/HTTP base endpoint (`http://collector:4318` becomes
/// `http://collector:4318/v1/traces`, as the OTLP exporter specification says for
/// `OTEL_EXPORTER_OTLP_ENDPOINT`).
pub fn traces_url(endpoint: &str) -> Result<String, OtelError> {
    let refused = || OtelError::Endpoint {
        endpoint: endpoint.to_owned(),
    };
    let url = url::Url::parse(endpoint).map_err(|_| refused())?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none_or(str::is_empty) {
        return Err(refused());
    }
    Ok(format!("{}/v1/traces", endpoint.trim_end_matches('/')))
}

/// The endpoint to export to: the configuration's, else [`ENDPOINT_VARIABLE`]'s (when set
/// and not empty), else none.
pub fn endpoint(configured: Option<&str>) -> Option<String> {
    configured.map(str::to_owned).or_else(|| {
        std::env::var(ENDPOINT_VARIABLE)
            .ok()
            .filter(|value| !value.trim().is_empty())
    })
}

/// Starts exporting to `endpoint` (a base URL, see [`traces_url`]) for this process, every
/// string attribute redacted with `secrets` (literal values) and `patterns`.
pub fn start(
    endpoint: &str,
    secrets: &[String],
    patterns: &[String],
) -> Result<&'static Otlp, OtelError> {
    if OTLP.get().is_some() {
        return Err(OtelError::Started);
    }
    let url = traces_url(endpoint)?;
    let redactor = Redactor::new(secrets, patterns)
        .map_err(|error| OtelError::Exporter(error.to_string()))?
        .map(Arc::new);
    let tls = acp_remote::client_tls::client_config(&[b"h2", b"http/1.1"])
        .map_err(|error| OtelError::Exporter(error.to_string()))?;
    let client = reqwest::Client::builder()
        .timeout(EXPORT_TIMEOUT)
        .user_agent(concat!("acp-conductor/", env!("CARGO_PKG_VERSION")))
        .tls_backend_preconfigured((*tls).clone())
        .build()
        .map_err(|error| OtelError::Exporter(error.to_string()))?;
    let mut exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_http_client(client)
        .with_endpoint(url.clone())
        .with_protocol(Protocol::HttpBinary)
        .with_timeout(EXPORT_TIMEOUT)
        .build()
        .map_err(|error| OtelError::Exporter(error.to_string()))?;
    // `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES` are read by the builder; the service
    // is `acp-conductor` unless the former names another.
    let resource = match std::env::var("OTEL_SERVICE_NAME") {
        Ok(name) if !name.trim().is_empty() => Resource::builder().build(),
        _ => Resource::builder()
            .with_service_name("acp-conductor")
            .build(),
    };
    exporter.set_resource(&resource);
    let lost = Arc::new(Lost::default());
    let (done_tx, done) = mpsc::channel();
    let queue = export::spawn(exporter, export::QUEUE, lost.clone(), done_tx)?;
    let (sinks, items) = acp_trace::tagged_channel(ITEM_BUDGET);
    let thread = span_thread::SpanThread {
        items,
        queue,
        lost: lost.clone(),
        ids: Arc::new(RandomIdGenerator::default()),
        redactor,
    };
    std::thread::Builder::new()
        .name("otel".to_owned())
        .spawn(move || thread.run())?;
    let otlp = Otlp {
        sinks,
        next_chain: AtomicU64::new(0),
        lost,
        done: Mutex::new(Some(done)),
        url,
    };
    OTLP.set(otlp).map_err(|_| OtelError::Started)?;
    Ok(OTLP.get().expect("just set"))
}

/// The export, if this process exports.
pub fn get() -> Option<&'static Otlp> {
    OTLP.get()
}

impl Otlp {
    /// The sink one chain's producers feed; [`TraceSink::end`] at the chain's end ends its
    /// open spans.
    pub fn chain(&self) -> TraceSink {
        let tag = self.next_chain.fetch_add(1, Ordering::Relaxed);
        self.sinks.sink(tag)
    }

    /// Spans dropped so far.
    pub fn dropped(&self) -> u64 {
        self.lost.total()
    }

    /// Ends every open span, exports what is queued and stops, waiting at most `wait`.
    pub fn shutdown(&self, wait: Duration) {
        let Some(done) = self.done.lock().ok().and_then(|mut done| done.take()) else {
            return;
        };
        self.sinks.sink(span_thread::STOP).end(String::new());
        if done.recv_timeout(wait).is_err() {
            tracing::warn!("OpenTelemetry: the last spans were not sent within {wait:?}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_traces_url_is_the_base_endpoint_and_v1_traces() {
        assert_eq!(
            traces_url("http://collector:4318").unwrap(),
            "http://collector:4318/v1/traces"
        );
        assert_eq!(
            traces_url("https://otel.example/base/").unwrap(),
            "https://otel.example/base/v1/traces"
        );
        for refused in ["collector:4318", "ftp://c/", "http://", "", "not a url"] {
            assert!(traces_url(refused).is_err(), "{refused}");
        }
    }
}
