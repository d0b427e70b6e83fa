//! The handles the driver acts on for the core, by link id: each link's outbox (where its
//! frames are queued) and read gate (how its reader is paused). Knows no routing.

use std::sync::Arc;

use bytes::Bytes;

use acp_link::{Link, LinkId, Outbox, Queued, ReadGate};

/// Every link of the run the core was told of, by id; a closed link keeps an outbox that
/// drops what is sent to it.
#[derive(Debug, Default)]
pub(super) struct LinkHandles(Vec<Option<Handles>>);

#[derive(Debug)]
struct Handles {
    outbox: Outbox,
    gate: Arc<ReadGate>,
}

impl LinkHandles {
    pub(super) fn keep(&mut self, link: Link) {
        let i = link.id.0;
        if self.0.len() <= i {
            self.0.resize_with(i + 1, || None);
        }
        self.0[i] = Some(Handles {
            outbox: link.outbox,
            gate: link.gate,
        });
    }

    fn get(&self, link: LinkId) -> &Handles {
        self.0[link.0]
            .as_ref()
            .expect("a link the driver told the core of")
    }

    pub(super) fn send(&self, to: LinkId, frame: Bytes) -> Queued {
        self.get(to).outbox.send(frame)
    }

    pub(super) fn pause(&self, link: LinkId) {
        self.get(link).gate.pause();
    }

    pub(super) fn resume(&self, link: LinkId) {
        self.get(link).gate.resume();
    }

    /// Nothing more goes to `link`: dropping its outbox lets its writer finish the queue and
    /// close the output.
    pub(super) fn close(&mut self, link: LinkId) {
        if let Some(handles) = &mut self.0[link.0] {
            handles.outbox = Outbox::closed();
        }
    }
}
