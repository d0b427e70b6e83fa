//! Connections admitted up to the limit and handed over whole: the transports ask for a
//! place, then hand each admitted connection's ends to whoever runs its chain; once draining,
//! none is admitted. Knows no chain.

use std::sync::Arc;
use std::time::Duration;

use acp_metrics::labels::Refusal;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc, watch};

use super::client_link::{FromClient, ToClient};
use super::ids::ConnectionId;

/// A place for one more chain, held until that chain has stopped.
#[derive(Debug)]
pub struct Admitted {
    _place: OwnedSemaphorePermit,
}

/// An admitted connection, handed to whoever runs its chain: the chain's editor link is
/// made of its two ends; dropping `admitted` when the chain has stopped frees its place.
pub struct NewConnection {
    pub id: ConnectionId,
    pub from_client: FromClient,
    pub to_client: ToClient,
    pub admitted: Admitted,
}

/// The transports' handle: admits connections up to the limit and hands them over.
#[derive(Clone)]
pub struct Admission {
    arrivals: mpsc::UnboundedSender<NewConnection>,
    room: Arc<Semaphore>,
    max: usize,
    draining: watch::Sender<bool>,
}

/// Where admitted connections arrive, for whoever runs their chains.
pub struct Arrivals {
    queue: mpsc::UnboundedReceiver<NewConnection>,
    room: Arc<Semaphore>,
    max: usize,
}

/// The handle for the transports and where what they admit arrives, `max` at a time.
pub fn admission(max: usize) -> (Admission, Arrivals) {
    let (arrivals, queue) = mpsc::unbounded_channel();
    let room = Arc::new(Semaphore::new(max));
    (
        Admission {
            arrivals,
            room: room.clone(),
            max,
            draining: watch::Sender::new(false),
        },
        Arrivals { queue, room, max },
    )
}

impl Admission {
    /// A place for a new connection's chain; refused at the connection limit or while
    /// draining.
    pub(super) fn admit(&self) -> Result<Admitted, Refusal> {
        if self.is_draining() {
            tracing::info!("refused a connection: draining");
            count_refusal(Refusal::Draining);
            return Err(Refusal::Draining);
        }
        match self.room.clone().try_acquire_owned() {
            Ok(permit) => Ok(Admitted { _place: permit }),
            Err(_) => {
                tracing::warn!(
                    "refused a connection: {} are being served (--max-connections)",
                    self.max
                );
                count_refusal(Refusal::ConnectionLimit);
                Err(Refusal::ConnectionLimit)
            }
        }
    }

    /// Admits no more connections: the open ones go on (each closes once it has no request
    /// in flight, see `client_link`). True the first time.
    pub fn drain(&self) -> bool {
        !self.draining.send_replace(true)
    }

    pub fn is_draining(&self) -> bool {
        *self.draining.borrow()
    }

    /// Changes when draining starts.
    pub fn draining(&self) -> watch::Receiver<bool> {
        self.draining.subscribe()
    }

    /// Connections admitted whose chains have not stopped yet.
    pub fn open(&self) -> usize {
        self.max - self.room.available_permits()
    }

    /// Returns once no admitted connection holds its place (every chain has stopped); for
    /// a drain, when no more are admitted.
    pub async fn all_closed(&self) {
        let everyone = self.room.acquire_many(self.max as u32).await;
        drop(everyone);
    }

    /// Whether a new connection would be admitted now: not draining, and below the limit.
    pub fn ready(&self) -> bool {
        !self.is_draining() && self.room.available_permits() > 0
    }

    /// Hands connection `id` over to have its chain started; false when serving stops.
    pub(super) fn start(
        &self,
        admitted: Admitted,
        id: ConnectionId,
        from_client: FromClient,
        to_client: ToClient,
    ) -> bool {
        self.arrivals
            .send(NewConnection {
                id,
                from_client,
                to_client,
                admitted,
            })
            .is_ok()
    }
}

/// The answer to a request refused a connection: 503, saying why.
pub(super) fn refused(refusal: Refusal) -> Response {
    let why = match refusal {
        Refusal::Draining => "draining: this server takes no new connections\n",
        _ => "too many connections\n",
    };
    (StatusCode::SERVICE_UNAVAILABLE, why).into_response()
}

fn count_refusal(reason: Refusal) {
    if let Some(metrics) = acp_metrics::get() {
        metrics.refused(reason);
    }
}

impl Arrivals {
    /// The next admitted connection; `None` once every transport handle is gone.
    pub async fn next(&mut self) -> Option<NewConnection> {
        self.queue.recv().await
    }

    /// No more connections are taken; then waits up to `grace` for every admitted one's
    /// place to be freed, and says how many were still held when it gave up.
    pub async fn close(mut self, grace: Duration) -> Result<(), usize> {
        self.queue.close();
        let everyone = self.room.acquire_many(self.max as u32);
        match tokio::time::timeout(grace, everyone).await {
            Ok(_) => Ok(()),
            Err(_) => Err(self.max - self.room.available_permits()),
        }
    }
}
