//! The task that owns a shared proxy's one instance: has the supervisor start it (again,
//! after it exited, when a chain attaches), moves frames between it and every attached chain
//! through `Routes`, and fails every chain attached when the instance ends.
//!
//! Backpressure: when the instance's input queue is over its limit the hub stops taking
//! frames from the chains until it drains; a chain that does not take what the proxy sent
//! it within the write timeout is failed alone, so that it cannot hold up the others longer.

use std::collections::HashMap;
use std::time::Duration;

use bytes::Bytes;
use tokio::sync::mpsc;

use super::{Command, ProxySupervisor};
use crate::component::{StartError, Started};
use acp_link::event::Event;
use acp_link::{Link, LinkEvent, Queued};
use acp_remote::client::Ended;
use acp_router::shared_proxy::{Connection, Delivery, Routes};

/// A chain attached to the proxy: where the proxy's messages for it go, and why it was let
/// go when the hub ends it.
struct Attachment {
    to_chain: mpsc::Sender<Bytes>,
    ended: Ended,
}

pub(super) struct Hub<S> {
    name: String,
    /// Starts and stops the instance; its events arrive on `events`.
    supervisor: S,
    events: mpsc::Receiver<Event>,
    /// The running instance: its link and how to stop it.
    proxy: Option<Started>,
    attachments: HashMap<Connection, Attachment>,
    routes: Routes,
    write_timeout: Duration,
    /// The instance's input queue is over its limit: take nothing from the chains.
    congested: bool,
    /// A reload replaced or removed the proxy: the hub ends when no chain is attached.
    retired: bool,
}

impl<S: ProxySupervisor> Hub<S> {
    pub(super) fn new(
        name: String,
        supervisor: S,
        events: mpsc::Receiver<Event>,
        write_timeout: Duration,
    ) -> Hub<S> {
        Hub {
            routes: Routes::new(&name),
            name,
            supervisor,
            events,
            proxy: None,
            attachments: HashMap::new(),
            write_timeout,
            congested: false,
            retired: false,
        }
    }

    /// Runs until `commands` says stop (or every handle is gone), or, once retired, until no
    /// chain is attached; then stops the instance.
    /// Runs on the main thread: `supervisor` starts children (see `runtime.rs`).
    pub(super) async fn run(
        mut self,
        mut commands: mpsc::UnboundedReceiver<Command>,
        mut frames: mpsc::Receiver<(Connection, Bytes)>,
    ) {
        if let Err(reason) = self.start() {
            tracing::error!(component = %self.name, "the shared proxy did not start: {reason}");
        }
        loop {
            let mut out = Vec::new();
            tokio::select! {
                biased;
                command = commands.recv() => match command {
                    Some(Command::Attach { connection, to_chain, ended }) => {
                        self.attach(connection, to_chain, ended);
                    }
                    Some(Command::Detach(connection)) => {
                        self.attachments.remove(&connection);
                        self.routes.detach(connection, &mut out);
                    }
                    Some(Command::Retire) => self.retired = true,
                    None | Some(Command::Stop) => break,
                },
                Some(event) = self.events.recv() => self.on_event(event, &mut out),
                Some((connection, frame)) = frames.recv(), if !self.congested => {
                    self.routes.route_from_connection(connection, frame, &mut out);
                }
            }
            self.deliver(out).await;
            if self.retired && self.attachments.is_empty() {
                tracing::info!(component = %self.name, "stopping the shared proxy a reload replaced: no chain uses it");
                break;
            }
        }
        self.stop().await;
    }

    /// Starts the instance, unless it is running.
    fn start(&mut self) -> Result<(), StartError> {
        if self.proxy.is_some() {
            return Ok(());
        }
        let started = self.supervisor.start()?;
        tracing::info!(component = %self.name, "shared proxy started");
        self.proxy = Some(started);
        self.routes = Routes::new(&self.name);
        self.congested = false;
        Ok(())
    }

    fn attach(&mut self, connection: Connection, to_chain: mpsc::Sender<Bytes>, ended: Ended) {
        if let Err(reason) = self.start() {
            // Dropping `to_chain` ends the chain's link: the chain hears of the failure.
            ended.set(reason.to_string());
            return;
        }
        self.routes.attach(connection);
        self.attachments
            .insert(connection, Attachment { to_chain, ended });
        tracing::debug!(
            component = %self.name,
            connection,
            attached = self.routes.attached(),
            "a chain attached to the shared proxy"
        );
    }

    fn current_link(&self) -> Option<&Link> {
        self.proxy.as_ref().map(|p| &p.link)
    }

    fn on_event(&mut self, event: Event, out: &mut Vec<Delivery>) {
        let current = self.current_link().map(|l| l.id);
        match event {
            Event::Link { link, event } if Some(link) == current => match event {
                LinkEvent::Frames(frames) => {
                    for frame in frames {
                        self.routes.route_from_proxy(frame, out);
                    }
                }
                LinkEvent::Drained => self.congested = false,
                LinkEvent::TooLong(error) => {
                    tracing::warn!(component = %self.name, "dropped a message from the shared proxy: {error}");
                }
                LinkEvent::WriteFailed { reason, .. } => {
                    tracing::warn!(component = %self.name, "writing to the shared proxy failed: {reason}; stopping it");
                    if let Some(proxy) = &self.proxy {
                        tokio::spawn(self.supervisor.stop(proxy.instance.clone()));
                    }
                }
                // Its exit follows.
                LinkEvent::Closed(_) => {}
            },
            Event::Exited { link, reason, .. } if Some(link) == current => {
                tracing::warn!(
                    component = %self.name,
                    chains = self.attachments.len(),
                    "the shared proxy {reason}; every chain attached to it hears of it"
                );
                if let Some(gone) = self.proxy.take() {
                    // What its process group may have left behind is ended too.
                    tokio::spawn(self.supervisor.stop(gone.instance));
                }
                for (_, attachment) in self.attachments.drain() {
                    attachment
                        .ended
                        .set(format!("(one process shared by every connection) {reason}"));
                }
                self.routes = Routes::new(&self.name);
                self.congested = false;
            }
            _ => {}
        }
    }

    async fn deliver(&mut self, out: Vec<Delivery>) {
        for delivery in out {
            match delivery {
                Delivery::ToProxy(frame) => {
                    if let Some(link) = self.current_link()
                        && link.outbox.send(frame) == Queued::Congested
                    {
                        self.congested = true;
                    }
                }
                Delivery::ToConnection(connection, frame) => {
                    let Some(attachment) = self.attachments.get(&connection) else {
                        continue;
                    };
                    let sent = attachment.to_chain.send(frame);
                    if tokio::time::timeout(self.write_timeout, sent)
                        .await
                        .is_err()
                    {
                        self.let_go(connection);
                    }
                }
            }
        }
    }

    /// Fails one chain that stopped taking what the proxy sends it.
    fn let_go(&mut self, connection: Connection) {
        let Some(attachment) = self.attachments.remove(&connection) else {
            return;
        };
        attachment.ended.set(format!(
            "was let go: its chain took nothing the shared proxy sent it for {:?}",
            self.write_timeout
        ));
        let mut out = Vec::new();
        self.routes.detach(connection, &mut out);
        // Only frames to the proxy come of a detach.
        for delivery in out {
            if let (Delivery::ToProxy(frame), Some(link)) = (delivery, self.current_link()) {
                link.outbox.send(frame);
            }
        }
    }

    /// Closes the instance's input and waits for it to stop, as a chain stops its own.
    async fn stop(&mut self) {
        self.attachments.clear();
        if let Some(Started { link, instance }) = self.proxy.take() {
            drop(link);
            self.supervisor.stop(instance).await;
        }
    }
}
