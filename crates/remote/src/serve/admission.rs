//! Connections admitted up to the limit and handed over whole: the transports ask for a
//! place, then hand each admitted connection's ends to whoever runs its chain. Knows no chain.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};

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
        },
        Arrivals { queue, room, max },
    )
}

impl Admission {
    /// A place for a new connection's chain; `None` at the connection limit.
    pub(super) fn admit(&self) -> Option<Admitted> {
        match self.room.clone().try_acquire_owned() {
            Ok(permit) => Some(Admitted { _place: permit }),
            Err(_) => {
                tracing::warn!(
                    "refused a connection: {} are being served (--max-connections)",
                    self.max
                );
                None
            }
        }
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
