//! `serve`'s admin listener as an operator's tools see it: plain GETs and POSTs, `/metrics`
//! read by a Prometheus text parser (`prometheus-parse`).

use std::time::{Duration, Instant};

use acp_conductor_tests::editor::patience;

use super::http::agent;
use super::server::Server;

pub struct Admin {
    base: String,
    token: Option<String>,
}

impl Admin {
    pub fn of(server: &Server) -> Admin {
        Admin {
            base: format!("http://{}", server.admin_addr()),
            token: None,
        }
    }

    pub fn with_token(&self, token: &str) -> Admin {
        Admin {
            base: self.base.clone(),
            token: Some(token.to_string()),
        }
    }

    fn call(&self, method: &str, path: &str) -> (u16, String) {
        let url = format!("{}{path}", self.base);
        let agent = agent();
        let bearer = self.token.as_ref().map(|token| format!("Bearer {token}"));
        let response = match method {
            "POST" => {
                let mut request = agent.post(&url);
                if let Some(bearer) = &bearer {
                    request = request.header("Authorization", bearer);
                }
                request.send_empty()
            }
            _ => {
                let mut request = agent.get(&url);
                if let Some(bearer) = &bearer {
                    request = request.header("Authorization", bearer);
                }
                request.call()
            }
        };
        let mut response = response.unwrap_or_else(|e| panic!("{method} {url}: {e}"));
        let status = response.status().as_u16();
        (
            status,
            response.body_mut().read_to_string().unwrap_or_default(),
        )
    }

    pub fn get(&self, path: &str) -> (u16, String) {
        self.call("GET", path)
    }

    pub fn post(&self, path: &str) -> (u16, String) {
        self.call("POST", path)
    }

    /// Waits until `path` answers `status`.
    pub fn wait_for(&self, path: &str, status: u16) {
        let deadline = Instant::now() + patience();
        loop {
            let (got, body) = self.get(path);
            if got == status {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{path} still answers {got} {body}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn metrics(&self) -> Metrics {
        let (status, text) = self.get("/metrics");
        assert_eq!(status, 200, "{text}");
        let scrape = prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_string())))
            .unwrap_or_else(|e| panic!("/metrics does not parse ({e}):\n{text}"));
        Metrics { text, scrape }
    }

    /// The metrics once `done` holds of them.
    pub fn wait_until(&self, done: impl Fn(&Metrics) -> bool) -> Metrics {
        let deadline = Instant::now() + patience();
        loop {
            let metrics = self.metrics();
            if done(&metrics) {
                return metrics;
            }
            assert!(Instant::now() < deadline, "never came:\n{}", metrics.text);
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// One scrape of `/metrics`.
pub struct Metrics {
    pub text: String,
    scrape: prometheus_parse::Scrape,
}

impl Metrics {
    /// Whether a sample of `name` is there.
    pub fn has(&self, name: &str) -> bool {
        self.scrape.samples.iter().any(|s| s.metric == name)
    }

    /// The value of the sample `name` whose labels include `labels`; panics if none.
    pub fn value(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        self.scrape
            .samples
            .iter()
            .find(|s| s.metric == name && labels.iter().all(|(k, v)| s.labels.get(k) == Some(*v)))
            .map(|s| match &s.value {
                prometheus_parse::Value::Counter(v)
                | prometheus_parse::Value::Gauge(v)
                | prometheus_parse::Value::Untyped(v) => *v,
                other => panic!("{name} is not a plain value: {other:?}"),
            })
            .unwrap_or_else(|| panic!("no sample {name} {labels:?} in:\n{}", self.text))
    }

    /// How many observations the histogram `name` has for `method`.
    pub fn histogram_count(&self, name: &str, method: &str) -> f64 {
        self.scrape
            .samples
            .iter()
            .find(|s| s.metric == name && s.labels.get("method") == Some(method))
            .map(|s| match &s.value {
                prometheus_parse::Value::Histogram(buckets) => {
                    buckets.last().map(|b| b.count).unwrap_or(0.0)
                }
                other => panic!("{name} is not a histogram: {other:?}"),
            })
            .unwrap_or(0.0)
    }
}
