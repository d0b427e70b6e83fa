//! The demo agent's way out: a bounded queue of JSON-RPC lines and the one task that writes them
//! to the client in queue order. Knows how lines are encoded, not what they mean to the agent.

use std::io;

use acp_wire::encode::{self, Call};
use acp_wire::{Outcome, RawValue};
use serde_json::Value;
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

use super::RpcError;

/// The writer has stopped (its error, if any, is what `serve` reports).
#[derive(Debug)]
pub(super) struct WriterGone;

/// The sending side of the line queue, shared by the read loop and the turns: whatever they
/// queue reaches the client in that order, so a turn's updates precede its response.
#[derive(Clone)]
pub(super) struct LineWriter {
    lines: mpsc::Sender<Vec<u8>>,
}

impl LineWriter {
    /// A writer holding up to `capacity` lines, and the queue [`write_lines`] empties.
    pub(super) fn new(capacity: usize) -> (LineWriter, mpsc::Receiver<Vec<u8>>) {
        let (lines, queue) = mpsc::channel(capacity);
        (LineWriter { lines }, queue)
    }

    /// Resolves once [`write_lines`] has stopped: nobody will see anything queued any more.
    pub(super) async fn closed(&self) {
        self.lines.closed().await;
    }

    async fn send(&self, mut line: Vec<u8>) -> Result<(), WriterGone> {
        line.push(b'\n');
        self.lines.send(line).await.map_err(|_| WriterGone)
    }

    pub(super) async fn respond(&self, id: &RawValue, result: &Value) -> Result<(), WriterGone> {
        let result = raw(result);
        let mut line = Vec::new();
        encode::response(&mut line, id.get(), Outcome::Result(&result));
        self.send(line).await
    }

    pub(super) async fn respond_error(&self, id: &str, error: &RpcError) -> Result<(), WriterGone> {
        let mut line = Vec::new();
        encode::error_response(&mut line, id, error.code, &error.message, None);
        self.send(line).await
    }

    pub(super) async fn notify(&self, method: &str, params: &Value) -> Result<(), WriterGone> {
        self.call(None, method, params).await
    }

    pub(super) async fn request(
        &self,
        id: u64,
        method: &str,
        params: &Value,
    ) -> Result<(), WriterGone> {
        self.call(Some(&id.to_string()), method, params).await
    }

    async fn call(&self, id: Option<&str>, method: &str, params: &Value) -> Result<(), WriterGone> {
        let params = raw(params);
        let mut line = Vec::new();
        let call = Call::Plain {
            method,
            params: Some(&params),
        };
        encode::call(&mut line, id, call);
        self.send(line).await
    }
}

fn raw(value: &Value) -> Box<RawValue> {
    serde_json::value::to_raw_value(value).expect("a serde_json::Value always serializes")
}

/// Writes queued lines to `output` until every [`LineWriter`] is gone, then flushes and shuts
/// `output` down.
pub(super) async fn write_lines<W: AsyncWrite + Unpin>(
    mut output: W,
    mut queue: mpsc::Receiver<Vec<u8>>,
) -> io::Result<()> {
    while let Some(line) = queue.recv().await {
        output.write_all(&line).await?;
        // Flush only when nothing else is waiting: a burst of chunks costs one flush.
        if queue.is_empty() {
            output.flush().await?;
        }
    }
    output.flush().await?;
    output.shutdown().await
}
