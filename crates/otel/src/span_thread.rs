//! The span thread: takes every chain's trace items (tagged by chain), builds each chain's
//! spans and queues the ended ones for export. Never waits on the exporter; knows no HTTP.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::mpsc::RecvTimeoutError;
use std::time::Duration;

use acp_trace::{Item, Redactor, TaggedItems};
use opentelemetry_sdk::trace::IdGenerator;

use crate::export::{ExportQueue, Lost};
use crate::span_tree::{ChainSpans, Clock};

/// The tag of the item that stops the thread (chains are numbered from 0 up).
pub const STOP: u64 = u64::MAX;
/// How often the thread looks at the count of messages its queue dropped.
const LOOK: Duration = Duration::from_secs(1);

pub struct SpanThread {
    pub items: TaggedItems,
    pub queue: ExportQueue,
    pub lost: Arc<Lost>,
    pub ids: Arc<dyn IdGenerator>,
    pub redactor: Option<Arc<Redactor>>,
}

impl SpanThread {
    /// Until the [`STOP`] item: then every chain's open spans end, and the export queue is
    /// let go (the export thread then sends what is left and ends).
    pub fn run(self) {
        let mut chains: HashMap<u64, ChainSpans> = HashMap::new();
        let mut ended = Vec::new();
        let mut dropped_seen = 0;
        loop {
            let (tag, item) = match self.items.recv_timeout(LOOK) {
                Ok(tagged) => tagged,
                Err(RecvTimeoutError::Timeout) => {
                    self.count_dropped(&mut dropped_seen, &mut chains);
                    continue;
                }
                Err(RecvTimeoutError::Disconnected) => break,
            };
            if tag == STOP {
                break;
            }
            let is_end = matches!(item, Item::End { .. });
            let chain = chains.entry(tag).or_insert_with(|| {
                ChainSpans::new(Clock::now(), self.ids.clone(), self.redactor.clone())
            });
            chain.item(item, &mut ended);
            if is_end {
                if let Some(chain) = chains.remove(&tag) {
                    self.lost
                        .add(chain.skipped, "too many requests open in one chain");
                }
                self.count_dropped(&mut dropped_seen, &mut chains);
            }
            for span in ended.drain(..) {
                self.queue.push(span);
            }
        }
        let at = std::time::Instant::now();
        for (_, mut chain) in chains.drain() {
            chain.item(
                Item::End {
                    at,
                    reason: String::new(),
                },
                &mut ended,
            );
        }
        for span in ended.drain(..) {
            self.queue.push(span);
        }
    }

    /// Messages the item queue dropped (the thread was behind) are lost spans too.
    fn count_dropped(&self, seen: &mut u64, chains: &mut HashMap<u64, ChainSpans>) {
        let dropped = self.items.dropped();
        self.lost
            .add(dropped - *seen, "the span thread fell behind the chains");
        *seen = dropped;
        for chain in chains.values_mut() {
            self.lost.add(
                std::mem::take(&mut chain.skipped),
                "too many requests open in one chain",
            );
        }
    }
}
