//! The handles the driver acts on for the core, by link id: each link's outbox (where its
//! frames are queued), read gate (how its reader is paused) and, when `serve` counts, the
//! counters of its kind of peer. Knows no routing.

use std::sync::Arc;

use bytes::Bytes;

use acp_link::{Link, LinkId, Outbox, Queued, ReadGate};
use acp_metrics::LinkMeter;
use acp_metrics::labels::LinkKind;

/// Every link of the run the core was told of, by id; a closed link keeps an outbox that
/// drops what is sent to it.
#[derive(Debug, Default)]
pub(super) struct LinkHandles(Vec<Option<Handles>>);

#[derive(Debug)]
struct Handles {
    outbox: Outbox,
    gate: Arc<ReadGate>,
    /// The counters of the link's kind, when metrics are on: two atomic adds per frame.
    meter: Option<&'static LinkMeter>,
    /// Paused by the core, and counted in `acp_links_paused`.
    paused: bool,
}

impl LinkHandles {
    pub(super) fn keep(&mut self, link: Link, kind: LinkKind) {
        let i = link.id.0;
        if self.0.len() <= i {
            self.0.resize_with(i + 1, || None);
        }
        self.0[i] = Some(Handles {
            outbox: link.outbox,
            gate: link.gate,
            meter: acp_metrics::get().map(|metrics| metrics.link(kind)),
            paused: false,
        });
    }

    /// Counts `frames` read from `link`.
    pub(super) fn read(&self, link: LinkId, frames: &[Bytes]) {
        if let Some(Some(Handles {
            meter: Some(meter), ..
        })) = self.0.get(link.0)
        {
            for frame in frames {
                meter.read(frame.len());
            }
        }
    }

    fn get(&self, link: LinkId) -> &Handles {
        self.0[link.0]
            .as_ref()
            .expect("a link the driver told the core of")
    }

    pub(super) fn send(&self, to: LinkId, frame: Bytes) -> Queued {
        let handles = self.get(to);
        if let Some(meter) = handles.meter {
            meter.written(frame.len());
        }
        handles.outbox.send(frame)
    }

    pub(super) fn pause(&mut self, link: LinkId) {
        let handles = self.get_mut(link);
        handles.gate.pause();
        if !handles.paused {
            handles.paused = true;
            count_paused(1);
        }
    }

    pub(super) fn resume(&mut self, link: LinkId) {
        let handles = self.get_mut(link);
        handles.gate.resume();
        if handles.paused {
            handles.paused = false;
            count_paused(-1);
        }
    }

    fn get_mut(&mut self, link: LinkId) -> &mut Handles {
        self.0[link.0]
            .as_mut()
            .expect("a link the driver told the core of")
    }

    /// Nothing more goes to `link`: dropping its outbox lets its writer finish the queue and
    /// close the output.
    pub(super) fn close(&mut self, link: LinkId) {
        if let Some(handles) = &mut self.0[link.0] {
            handles.outbox = Outbox::closed();
        }
    }
}

impl Drop for LinkHandles {
    /// The run is over: its links no longer count as paused.
    fn drop(&mut self) {
        let paused = self.0.iter().flatten().filter(|h| h.paused).count();
        if paused > 0 {
            count_paused(-(paused as i64));
        }
    }
}

fn count_paused(by: i64) {
    if let Some(metrics) = acp_metrics::get() {
        metrics.links_paused.inc_by(by);
    }
}
