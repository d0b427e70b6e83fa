//! `POST /reload` on the admin listener: the operator asks `serve` to read its configuration
//! again and hears what came of it. Carries the ask and the answer; knows nothing of
//! configurations (whoever runs the chains reloads, `acp-conductor`'s `serve/reload.rs`).

use tokio::sync::{mpsc, oneshot};

/// Asks that may wait while a reload is under way; more get 503.
const WAITING_ASKS: usize = 4;

/// What came of one reload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReloadAnswer {
    /// The new configuration runs from now on; a line per change.
    Applied(Vec<String>),
    /// The file runs the same chain: nothing happened.
    Unchanged,
    /// The file could not be used, for this reason (each problem at its line and column):
    /// nothing changed.
    Rejected(String),
}

/// One operator's ask, with where its answer goes.
pub struct ReloadAsk {
    answer: oneshot::Sender<ReloadAnswer>,
}

impl ReloadAsk {
    pub fn answer(self, answer: ReloadAnswer) {
        let _ = self.answer.send(answer);
    }
}

/// The reloading side: the asks, as they come.
pub struct ReloadAsks(mpsc::Receiver<ReloadAsk>);

impl ReloadAsks {
    /// The next ask; `None` once the admin listener is gone (or never was).
    pub async fn next(&mut self) -> Option<ReloadAsk> {
        self.0.recv().await
    }
}

/// The admin listener's side: sends asks and waits for their answers.
#[derive(Clone)]
pub struct ReloadAsker(mpsc::Sender<ReloadAsk>);

/// Why an ask got no answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum AskError {
    #[error("other reloads are waiting; ask again once they are done")]
    Busy,
    #[error("serve does not reload its configuration now (it is stopping)")]
    Gone,
}

impl ReloadAsker {
    /// Asks for a reload and waits for what came of it.
    pub(super) async fn ask(&self) -> Result<ReloadAnswer, AskError> {
        let (answer, answered) = oneshot::channel();
        self.0
            .try_send(ReloadAsk { answer })
            .map_err(|error| match error {
                mpsc::error::TrySendError::Full(_) => AskError::Busy,
                mpsc::error::TrySendError::Closed(_) => AskError::Gone,
            })?;
        answered.await.map_err(|_| AskError::Gone)
    }
}

/// A channel for reload asks: the asker goes to [`Server::listen`](super::Server::listen),
/// the asks to whoever reloads.
pub fn reload_asks() -> (ReloadAsker, ReloadAsks) {
    let (asks, received) = mpsc::channel(WAITING_ASKS);
    (ReloadAsker(asks), ReloadAsks(received))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_ask_hears_its_answer_and_asks_past_the_queue_are_busy() {
        let (asker, mut asks) = reload_asks();
        let waiting = tokio::spawn({
            let asker = asker.clone();
            async move { asker.ask().await }
        });
        let ask = asks.next().await.expect("the ask arrives");
        ask.answer(ReloadAnswer::Unchanged);
        assert_eq!(waiting.await.unwrap(), Ok(ReloadAnswer::Unchanged));

        // The queue full (nobody takes asks), the next is refused at once.
        for _ in 0..WAITING_ASKS {
            let (answer, _) = oneshot::channel();
            asker
                .0
                .try_send(ReloadAsk { answer })
                .expect("room in the queue");
        }
        assert_eq!(asker.ask().await, Err(AskError::Busy));
        drop(asks);
        assert_eq!(asker.ask().await, Err(AskError::Gone));
    }
}
