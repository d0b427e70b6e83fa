//! The client's requests a served connection has not answered yet: what a drain waits for
//! before it closes the connection, and where each answer's latency at the editor link is
//! taken. Knows envelopes (a request's id and method, a response's id), never the chain.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use acp_wire::Envelope;
use tokio::sync::watch;

/// One connection's unanswered client requests, by id as the client wrote it (the chain
/// answers with the id byte for byte). Touched by the connection's transport tasks only,
/// for requests and responses; notifications pass without taking the lock.
#[derive(Debug)]
pub(super) struct InFlight {
    waiting: Mutex<HashMap<String, Waiting>>,
    count: watch::Sender<usize>,
}

#[derive(Debug)]
struct Waiting {
    method: String,
    since: Instant,
}

impl InFlight {
    pub(super) fn new() -> Arc<InFlight> {
        Arc::new(InFlight {
            waiting: Mutex::new(HashMap::new()),
            count: watch::Sender::new(0),
        })
    }

    /// A message from the client, on its way to the chain.
    pub(super) fn heard_from_client(&self, message: &[u8]) {
        if let Ok(Envelope::Request { id, method, .. }) = acp_wire::parse(message) {
            let waiting = Waiting {
                method: method.to_owned(),
                since: Instant::now(),
            };
            let mut table = self.waiting.lock().expect("in flight");
            if table.insert(id.get().to_owned(), waiting).is_none() {
                self.count.send_replace(table.len());
                if let Some(metrics) = acp_metrics::get() {
                    metrics.turns_in_flight.inc();
                }
            }
        }
    }

    /// A message from the chain, on its way to the client: an answer ends its request.
    pub(super) fn going_to_client(&self, message: &[u8]) {
        if *self.count.borrow() == 0 {
            return;
        }
        if let Ok(Envelope::Response { id, .. }) = acp_wire::parse(message) {
            let mut table = self.waiting.lock().expect("in flight");
            if let Some(waiting) = table.remove(id.get()) {
                self.count.send_replace(table.len());
                if let Some(metrics) = acp_metrics::get() {
                    metrics.turns_in_flight.dec();
                    metrics
                        .request_duration(&waiting.method)
                        .observe(waiting.since.elapsed().as_secs_f64());
                }
            }
        }
    }

    /// Returns once no request is waiting for its answer.
    pub(super) async fn none(&self) {
        let mut count = self.count.subscribe();
        let _ = count.wait_for(|n| *n == 0).await;
    }

    #[cfg(test)]
    fn count(&self) -> usize {
        *self.count.borrow()
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let left = self.waiting.get_mut().map(|t| t.len()).unwrap_or(0);
        if left > 0
            && let Some(metrics) = acp_metrics::get()
        {
            metrics.turns_in_flight.dec_by(left as i64);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_request_is_in_flight_until_its_answer_goes_out() {
        let in_flight = InFlight::new();
        in_flight.heard_from_client(
            br#"{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{}}"#,
        );
        in_flight.heard_from_client(br#"{"jsonrpc":"2.0","method":"session/cancel","params":{}}"#);
        assert_eq!(in_flight.count(), 1);
        in_flight.going_to_client(br#"{"jsonrpc":"2.0","method":"session/update","params":{}}"#);
        in_flight.going_to_client(br#"{"jsonrpc":"2.0","id":2,"result":{}}"#);
        assert_eq!(in_flight.count(), 1, "an answer to another id");
        let none = tokio::spawn({
            let in_flight = in_flight.clone();
            async move { in_flight.none().await }
        });
        tokio::task::yield_now().await;
        assert!(!none.is_finished());
        in_flight
            .going_to_client(br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":"x"}}"#);
        assert_eq!(in_flight.count(), 0);
        tokio::time::timeout(std::time::Duration::from_secs(1), none)
            .await
            .expect("none() returns once nothing is in flight")
            .unwrap();
    }
}
