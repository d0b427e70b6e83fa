//! `[conductor] otlp` (else `OTEL_EXPORTER_OTLP_ENDPOINT`): the process's OpenTelemetry export
//! under `run` and `serve`, started before the first chain and flushed after the last. Knows no chain.

use std::time::Duration;

use crate::config::Config;

/// How long the end of the process waits for the last spans to be sent.
const FLUSH_WAIT: Duration = Duration::from_secs(3);

/// Starts the export when the configuration (or the environment) names an endpoint. A
/// collector that cannot be reached never stops a run; an endpoint that cannot be used is
/// logged and nothing is exported.
pub(crate) fn start(config: &Config) {
    let Some(endpoint) = acp_otel::endpoint(config.conductor.otlp.as_deref()) else {
        return;
    };
    let secrets = crate::run::secrets_of(config);
    match acp_otel::start(&endpoint, &secrets, &config.conductor.trace.redact) {
        Ok(otlp) => tracing::info!("exporting spans over OTLP/HTTP to {}", otlp.url),
        Err(error) => tracing::error!("OpenTelemetry export off: {error}"),
    }
}

/// Ends the spans still open and sends what is queued, waiting a bounded time.
pub(crate) fn finish() {
    if let Some(otlp) = acp_otel::get() {
        otlp.shutdown(FLUSH_WAIT);
    }
}
