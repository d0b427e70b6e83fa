//! acp-metrics: what `acp-conductor serve` counts, as Prometheus metric families, and their
//! text exposition for the admin listener's `/metrics`. Each family is a plain counter, gauge
//! or histogram on atomics, held by the layer that sees the event (the transport, the driver,
//! the links, the chains) and moved there; nothing here waits, allocates per message or knows
//! a transport, a chain or a routing rule. Labels are closed sets ([`labels`]).
//!
//! Counting is off unless [`enable`] was called (by `serve`): [`get`] is then `None` and every
//! layer skips its counting, so `acp-conductor run` pays one branch per event at most.

#![deny(clippy::print_stdout)]

pub mod labels;
mod method;

use std::collections::HashMap;
use std::sync::OnceLock;
use std::sync::atomic::AtomicU64;

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use labels::{
    ChainLabels, ChainState, ComponentEvent, ComponentLabels, Direction, LinkKind, LinkLabels,
    MethodLabels, Profile, ProfileLabels, Refusal, RefusalLabels, ReloadLabels, ReloadOutcome,
    ResumeLabels, ResumeOutcome,
};
pub use method::method_label;
pub use prometheus_client::metrics::gauge::Gauge;

/// The content type of [`Metrics::encode`]'s text.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

type Histograms = Family<MethodLabels, Histogram, fn() -> Histogram>;

/// Every family `serve` exposes.
pub struct Metrics {
    registry: Registry,
    connections_open: Family<ProfileLabels, Gauge>,
    connections_opened: Family<ProfileLabels, Counter>,
    connections_refused: Family<RefusalLabels, Counter>,
    resumes: Family<ResumeLabels, Counter>,
    chains: Family<ChainLabels, Gauge>,
    components: Family<ComponentLabels, Counter>,
    request_duration: Histograms,
    /// Bytes queued toward peers and not yet written, every link of every chain.
    pub queued_bytes: Gauge,
    /// Links whose reader is paused because a queue they feed is full.
    pub links_paused: Gauge,
    /// Client requests that have not been answered yet, every connection.
    pub turns_in_flight: Gauge,
    /// 1 while `serve` drains.
    pub draining: Gauge,
    reloads: Family<ReloadLabels, Counter>,
    /// Spans of the OpenTelemetry export dropped rather than slowing routing (acp-otel).
    pub otlp_spans_dropped: Counter,
    links: [LinkMeter; 4],
    component_kinds: OnceLock<HashMap<String, &'static str>>,
}

/// The counters of one kind of link, resolved once so that counting a message is two
/// atomic adds.
#[derive(Debug, Clone, Default)]
pub struct LinkMeter {
    pub messages_in: Counter<u64, AtomicU64>,
    pub bytes_in: Counter<u64, AtomicU64>,
    pub messages_out: Counter<u64, AtomicU64>,
    pub bytes_out: Counter<u64, AtomicU64>,
}

impl LinkMeter {
    /// One frame of `len` bytes read from the link.
    pub fn read(&self, len: usize) {
        self.messages_in.inc();
        self.bytes_in.inc_by(len as u64);
    }

    /// One frame of `len` bytes queued toward the link.
    pub fn written(&self, len: usize) {
        self.messages_out.inc();
        self.bytes_out.inc_by(len as u64);
    }
}

static METRICS: OnceLock<Metrics> = OnceLock::new();

/// Turns counting on for this process and returns the families.
pub fn enable() -> &'static Metrics {
    METRICS.get_or_init(Metrics::new)
}

/// The families, if counting is on.
pub fn get() -> Option<&'static Metrics> {
    METRICS.get()
}

fn latency_histogram() -> Histogram {
    // 1 ms to about 17 minutes, each bucket 4 times the one before: a prompt's turn can take
    // minutes, an `initialize` a millisecond.
    Histogram::new(exponential_buckets(0.001, 4.0, 11))
}

impl Metrics {
    fn new() -> Metrics {
        let mut registry = Registry::with_prefix("acp");
        let connections_open = Family::<ProfileLabels, Gauge>::default();
        registry.register(
            "connections_open",
            "Client connections open now, by transport profile",
            connections_open.clone(),
        );
        let connections_opened = Family::<ProfileLabels, Counter>::default();
        registry.register(
            "connections_opened",
            "Client connections opened (each started a chain), by transport profile",
            connections_opened.clone(),
        );
        let connections_refused = Family::<RefusalLabels, Counter>::default();
        registry.register(
            "connections_refused",
            "Requests refused before reaching a chain, by reason",
            connections_refused.clone(),
        );
        let resumes = Family::<ResumeLabels, Counter>::default();
        registry.register(
            "resumes",
            "Attempts to resume a dropped stream or WebSocket, by transport profile and outcome",
            resumes.clone(),
        );
        let chains = Family::<ChainLabels, Gauge>::default();
        registry.register("chains", "Chains running now, by state", chains.clone());
        let components = Family::<ComponentLabels, Counter>::default();
        registry.register(
            "component_events",
            "Components started, failed, restarted and bypassed, by component name and kind",
            components.clone(),
        );
        let link_family = Family::<LinkLabels, Counter>::default();
        registry.register(
            "messages",
            "Messages the chains read from (in) and queued toward (out) their links, by kind of link",
            link_family.clone(),
        );
        let bytes_family = Family::<LinkLabels, Counter>::default();
        registry.register(
            "message_bytes",
            "Bytes of the messages counted by acp_messages, by kind of link and direction",
            bytes_family.clone(),
        );
        let links = LinkKind::ALL.map(|link| {
            let counter = |family: &Family<LinkLabels, Counter>, direction| {
                family.get_or_create_owned(&LinkLabels { link, direction })
            };
            LinkMeter {
                messages_in: counter(&link_family, Direction::In),
                bytes_in: counter(&bytes_family, Direction::In),
                messages_out: counter(&link_family, Direction::Out),
                bytes_out: counter(&bytes_family, Direction::Out),
            }
        });
        let request_duration = Histograms::new_with_constructor(latency_histogram);
        registry.register(
            "request_duration_seconds",
            "Time from a client's request reaching serve to its answer leaving, by ACP method (other for the rest)",
            request_duration.clone(),
        );
        let queued_bytes = Gauge::default();
        registry.register(
            "queued_bytes",
            "Bytes queued toward peers and not yet written, every link of every chain",
            queued_bytes.clone(),
        );
        let links_paused = Gauge::default();
        registry.register(
            "links_paused",
            "Links whose reader is paused because a queue they feed is over queue_limit",
            links_paused.clone(),
        );
        let turns_in_flight = Gauge::default();
        registry.register(
            "requests_in_flight",
            "Client requests not answered yet, every connection",
            turns_in_flight.clone(),
        );
        let draining = Gauge::default();
        registry.register(
            "draining",
            "1 while serve drains (SIGTERM or POST /drain), else 0",
            draining.clone(),
        );
        let reloads = Family::<ReloadLabels, Counter>::default();
        registry.register(
            "reloads",
            "Reloads of the configuration (SIGHUP, or a change on disk with watch), by outcome",
            reloads.clone(),
        );
        for outcome in ReloadOutcome::ALL {
            reloads.get_or_create_owned(&ReloadLabels { outcome });
        }
        let otlp_spans_dropped = Counter::default();
        registry.register(
            "otlp_spans_dropped",
            "Spans of the OpenTelemetry export dropped (queue full, export failed) rather than slowing routing",
            otlp_spans_dropped.clone(),
        );
        for state in [ChainState::Running, ChainState::Draining] {
            chains.get_or_create_owned(&ChainLabels { state });
        }
        for reason in [
            Refusal::ConnectionLimit,
            Refusal::Draining,
            Refusal::Unauthorized,
            Refusal::Origin,
        ] {
            connections_refused.get_or_create_owned(&RefusalLabels { reason });
        }
        for profile in [Profile::WebSocket, Profile::Http] {
            connections_open.get_or_create_owned(&ProfileLabels { profile });
            connections_opened.get_or_create_owned(&ProfileLabels { profile });
        }
        Metrics {
            registry,
            connections_open,
            connections_opened,
            connections_refused,
            resumes,
            chains,
            components,
            request_duration,
            queued_bytes,
            links_paused,
            turns_in_flight,
            draining,
            reloads,
            otlp_spans_dropped,
            links,
            component_kinds: OnceLock::new(),
        }
    }

    /// Every family in the text exposition format.
    pub fn encode(&self) -> String {
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &self.registry)
            .expect("writing to a String cannot fail");
        text
    }

    /// A connection was opened (and its chain started) on `profile`.
    pub fn connection_opened(&self, profile: Profile) {
        let labels = ProfileLabels { profile };
        self.connections_opened.get_or_create(&labels).inc();
        self.connections_open.get_or_create(&labels).inc();
    }

    /// A connection opened on `profile` has ended.
    pub fn connection_closed(&self, profile: Profile) {
        self.connections_open
            .get_or_create(&ProfileLabels { profile })
            .dec();
    }

    pub fn refused(&self, reason: Refusal) {
        self.connections_refused
            .get_or_create(&RefusalLabels { reason })
            .inc();
    }

    /// A client tried to resume a stream or socket of a `profile` connection.
    pub fn resume(&self, profile: Profile, outcome: ResumeOutcome) {
        self.resumes
            .get_or_create(&ResumeLabels { profile, outcome })
            .inc();
    }

    /// The gauge of chains in `state`.
    pub fn chains(&self, state: ChainState) -> Gauge {
        self.chains.get_or_create_owned(&ChainLabels { state })
    }

    /// The counter of reloads that ended in `outcome`.
    pub fn reloads(&self, outcome: ReloadOutcome) -> Counter {
        self.reloads.get_or_create_owned(&ReloadLabels { outcome })
    }

    /// The kind of each component by name (`native`, `wasm`, `remote`, `shared`), from the
    /// config; set once, before any chain starts.
    pub fn set_component_kinds(&self, kinds: HashMap<String, &'static str>) {
        let _ = self.component_kinds.set(kinds);
    }

    /// `event` happened to the component named `component`.
    pub fn component(&self, component: &str, event: ComponentEvent) {
        let kind = self
            .component_kinds
            .get()
            .and_then(|kinds| kinds.get(component).copied())
            .unwrap_or("unknown");
        self.components
            .get_or_create(&ComponentLabels {
                component: component.to_owned(),
                kind,
                event,
            })
            .inc();
    }

    /// The counters of links of `kind`.
    pub fn link(&self, kind: LinkKind) -> &LinkMeter {
        &self.links[kind as usize]
    }

    /// The latency histogram of requests named `method` (any text: unknown names are `other`).
    pub fn request_duration(&self, method: &str) -> Histogram {
        self.request_duration.get_or_create_owned(&MethodLabels {
            method: method_label(method),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(metrics: &Metrics) -> prometheus_parse::Scrape {
        let text = metrics.encode();
        prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_owned())))
            .expect("the exposition parses")
    }

    fn value(scrape: &prometheus_parse::Scrape, name: &str, labels: &[(&str, &str)]) -> f64 {
        scrape
            .samples
            .iter()
            .find(|s| s.metric == name && labels.iter().all(|(k, v)| s.labels.get(k) == Some(*v)))
            .map(|s| match s.value {
                prometheus_parse::Value::Counter(v)
                | prometheus_parse::Value::Gauge(v)
                | prometheus_parse::Value::Untyped(v) => v,
                _ => f64::NAN,
            })
            .unwrap_or_else(|| panic!("no sample {name} {labels:?}"))
    }

    #[test]
    fn counts_appear_in_the_exposition_with_bounded_labels() {
        let metrics = Metrics::new();
        metrics.set_component_kinds(HashMap::from([("guard".to_owned(), "native")]));
        metrics.connection_opened(Profile::WebSocket);
        metrics.refused(Refusal::Draining);
        metrics.resume(Profile::Http, ResumeOutcome::RefusedBuffer);
        metrics.component("guard", ComponentEvent::Started);
        metrics.link(LinkKind::Agent).read(10);
        metrics.link(LinkKind::Agent).written(4);
        metrics.request_duration("_vendor/free text").observe(0.002);
        metrics.reloads(ReloadOutcome::Applied).inc();
        let scrape = parsed(&metrics);
        assert_eq!(
            value(&scrape, "acp_reloads_total", &[("outcome", "applied")]),
            1.0
        );
        assert_eq!(
            value(&scrape, "acp_reloads_total", &[("outcome", "rejected")]),
            0.0
        );
        let ws = [("profile", "websocket")];
        assert_eq!(value(&scrape, "acp_connections_opened_total", &ws), 1.0);
        assert_eq!(value(&scrape, "acp_connections_open", &ws), 1.0);
        assert_eq!(
            value(
                &scrape,
                "acp_connections_refused_total",
                &[("reason", "draining")]
            ),
            1.0
        );
        assert_eq!(
            value(
                &scrape,
                "acp_component_events_total",
                &[
                    ("component", "guard"),
                    ("kind", "native"),
                    ("event", "started")
                ]
            ),
            1.0
        );
        assert_eq!(
            value(
                &scrape,
                "acp_resumes_total",
                &[("profile", "http"), ("outcome", "refused_buffer")]
            ),
            1.0
        );
        let agent_in = [("link", "agent"), ("direction", "in")];
        assert_eq!(value(&scrape, "acp_messages_total", &agent_in), 1.0);
        assert_eq!(value(&scrape, "acp_message_bytes_total", &agent_in), 10.0);
        let text = metrics.encode();
        assert!(text.contains("method=\"other\""), "{text}");
        assert!(!text.contains("free text"), "{text}");
    }
}
