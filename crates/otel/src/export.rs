//! The export thread: ended spans wait in a bounded queue, go out in batches over OTLP/HTTP,
//! and are dropped and counted when the queue is full or an export fails. Knows no chain.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use opentelemetry_otlp::SpanExporter;
use opentelemetry_sdk::trace::{SpanData, SpanExporter as _};

/// Ended spans that may wait for the export thread; more are dropped.
pub const QUEUE: usize = 2048;
/// Most spans in one export.
const MAX_BATCH: usize = 512;
/// How long the first span of a batch waits for more before the batch goes.
const BATCH_WAIT: Duration = Duration::from_millis(500);
/// The drop warning is logged at most this often.
const WARN_EVERY: Duration = Duration::from_secs(60);

/// Spans (and messages that would have made them) lost on the way to the collector: counted
/// in `acp_otlp_spans_dropped_total` under `serve`, and logged at most once a minute.
#[derive(Debug, Default)]
pub struct Lost {
    count: AtomicU64,
    last_warning: Mutex<Option<Instant>>,
}

impl Lost {
    /// `n` more were lost, because of `why`.
    pub fn add(&self, n: u64, why: &str) {
        if n == 0 {
            return;
        }
        let total = self.count.fetch_add(n, Ordering::Relaxed) + n;
        if let Some(metrics) = acp_metrics::get() {
            metrics.otlp_spans_dropped.inc_by(n);
        }
        let Ok(mut last) = self.last_warning.lock() else {
            return;
        };
        let now = Instant::now();
        if last.is_none_or(|at| now.duration_since(at) >= WARN_EVERY) {
            *last = Some(now);
            tracing::warn!("OpenTelemetry: {total} spans dropped so far ({why})");
        }
    }

    pub fn total(&self) -> u64 {
        self.count.load(Ordering::Relaxed)
    }
}

/// The producer's end of the export queue: pushing never waits.
#[derive(Debug, Clone)]
pub struct ExportQueue {
    tx: SyncSender<SpanData>,
    lost: Arc<Lost>,
}

impl ExportQueue {
    /// Queues `span`, or drops and counts it when the queue is full.
    pub fn push(&self, span: SpanData) {
        match self.tx.try_send(span) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) => self.lost.add(1, "the export queue is full"),
            Err(TrySendError::Disconnected(_)) => self.lost.add(1, "the exporter has stopped"),
        }
    }
}

/// Starts the export thread; it ends (after exporting what is queued) once every
/// [`ExportQueue`] is dropped, and then sends on `done`.
pub fn spawn(
    exporter: SpanExporter,
    capacity: usize,
    lost: Arc<Lost>,
    done: mpsc::Sender<()>,
) -> std::io::Result<ExportQueue> {
    let (tx, rx) = mpsc::sync_channel(capacity);
    let queue = ExportQueue {
        tx,
        lost: lost.clone(),
    };
    // The exporter's HTTP client (reqwest) needs a runtime: a one-thread one of its own, on
    // this thread, which starts nothing and never runs a chain.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    std::thread::Builder::new()
        .name("otlp-export".to_owned())
        .spawn(move || {
            while let Some(batch) = next_batch(&rx) {
                let n = batch.len() as u64;
                if let Err(error) = runtime.block_on(exporter.export(batch)) {
                    lost.add(n, &format!("export failed: {error}"));
                }
            }
            let _ = exporter.shutdown();
            let _ = done.send(());
        })?;
    Ok(queue)
}

/// The next batch: the first span, and those that follow within [`BATCH_WAIT`], up to
/// [`MAX_BATCH`]; `None` once the queue is closed and empty.
fn next_batch(rx: &mpsc::Receiver<SpanData>) -> Option<Vec<SpanData>> {
    let first = rx.recv().ok()?;
    let until = Instant::now() + BATCH_WAIT;
    let mut batch = vec![first];
    while batch.len() < MAX_BATCH {
        let left = until.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(span) => batch.push(span),
            Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => break,
        }
    }
    Some(batch)
}
