//! `doctor --probe`: the chain started for real, as `run` starts it, and initialized as an
//! editor would; each component timed from its start (or from when `initialize` reached it)
//! to its answer. Everything is stopped before this returns. Must not route anything itself:
//! the router does, and this only watches the links' events.
//!
//! Every component's `on_failure` is `fail` for the probe, so that the first failure is the
//! one reported, not hidden by a restart or a bypass.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use serde_json::Value;
use tokio::sync::mpsc;

use crate::config::{Config, Mode, OnFailure};
use crate::run::{Watcher, run_chain};
use acp_drivers::component::shared::SharedProxies;
use acp_drivers::runtime::MainThread;
use acp_link::event::Event;
use acp_link::{LinkEvent, LinkId};
use acp_router::topology::ChainMode;

/// How one component did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ComponentProbe {
    /// "proxy `p1`", "agent `gemini`".
    pub(crate) label: String,
    pub(crate) startup_timeout: Duration,
    pub(crate) outcome: Outcome,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// It answered `initialize` `took` after it was sent to it (or after the chain started,
    /// for the first component).
    Answered { took: Duration },
    /// It answered with an error of its own.
    Refused { took: Duration, message: String },
    /// It failed: it exited, or did not answer within its startup timeout.
    Failed { reason: String, stderr: Vec<String> },
    /// It passed on the failure of a component after it.
    PassedOnFailure,
    /// `initialize` never reached it: a component before it failed first.
    NotReached,
}

impl Outcome {
    pub(crate) fn is_problem(&self) -> bool {
        matches!(self, Outcome::Refused { .. } | Outcome::Failed { .. })
    }
}

/// What the watcher saw, in the order of the chain's positions from 1.
#[derive(Debug, Default)]
struct Timeline {
    started: Option<Instant>,
    links: Vec<LinkId>,
    sent: Vec<Option<Instant>>,
    answered: Vec<Option<(Instant, Option<String>)>>,
    exited: Vec<Option<(String, Vec<String>)>>,
    /// The last stderr lines of components stopped after the editor had its answer: a
    /// component that never answered may have said why there.
    stopped_stderr: Vec<Vec<String>>,
    /// The editor has its answer: what ends now is the probe stopping the chain.
    over: bool,
}

#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Timeline>>);

impl Watcher for Shared {
    fn chain(&mut self, components: &[(LinkId, String)]) {
        let mut timeline = self.0.lock().expect("timeline");
        let now = Instant::now();
        timeline.started = Some(now);
        timeline.links = components.iter().map(|(link, _)| *link).collect();
        timeline.sent = vec![None; components.len()];
        if let Some(first) = timeline.sent.first_mut() {
            *first = Some(now);
        }
        timeline.answered = vec![None; components.len()];
        timeline.exited = vec![None; components.len()];
        timeline.stopped_stderr = vec![Vec::new(); components.len()];
    }

    fn event(&mut self, event: &Event) {
        let mut timeline = self.0.lock().expect("timeline");
        let now = Instant::now();
        match event {
            Event::Link {
                link,
                event: LinkEvent::Frames(frames),
            } => {
                let Some(index) = timeline.links.iter().position(|l| l == link) else {
                    return;
                };
                for frame in frames {
                    timeline.frame(index, frame, now);
                }
            }
            Event::Exited {
                link,
                reason,
                stderr_tail,
                ..
            } => {
                let Some(index) = timeline.links.iter().position(|l| l == link) else {
                    return;
                };
                if timeline.over {
                    timeline.stopped_stderr[index].clone_from(stderr_tail);
                } else if timeline.exited[index].is_none() {
                    timeline.exited[index] = Some((reason.clone(), stderr_tail.clone()));
                }
            }
            _ => {}
        }
    }
}

impl Timeline {
    /// A frame from the component at `index`: its answer to `initialize`, or the
    /// `initialize` it passes on to its successor.
    fn frame(&mut self, index: usize, frame: &Bytes, now: Instant) {
        let Ok(message) = serde_json::from_slice::<Value>(frame) else {
            return;
        };
        let method = message.get("method").and_then(Value::as_str);
        if let Some(method) = method {
            let wrapped_initialize = matches!(method, "proxy/successor" | "_proxy/successor")
                && message.pointer("/params/method").and_then(Value::as_str) == Some("initialize");
            if wrapped_initialize
                && let Some(next) = self.sent.get_mut(index + 1)
                && next.is_none()
            {
                *next = Some(now);
            }
            return;
        }
        if self.answered[index].is_some() || message.get("id").is_none() {
            return;
        }
        match message.get("error") {
            // A proxy that does not know `proxy/initialize` is asked again with
            // `_proxy/initialize`; its answer to that one counts.
            Some(error) if error.get("code").and_then(Value::as_i64) == Some(-32601) => {}
            Some(error) => {
                let text = error
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("(no message)")
                    .to_owned();
                self.answered[index] = Some((now, Some(text)));
            }
            None if message.get("result").is_some() => self.answered[index] = Some((now, None)),
            None => {}
        }
    }
}

/// Starts the chain of `config`, initializes it and stops it; each component's outcome in
/// chain order. Children are started from `main`'s thread, as in `run` (see `runtime.rs`).
pub(crate) async fn probe(main: MainThread, config: &Config) -> Vec<ComponentProbe> {
    let mut config = config.clone();
    for proxy in &mut config.proxies {
        proxy.failure.on_failure = OnFailure::Fail;
    }
    config.agent_failure.on_failure = OnFailure::Fail;
    // A probe is not the run the trace file is for: it would overwrite it.
    config.conductor.trace.file = None;
    let mode = match config.conductor.mode {
        Mode::Agent => ChainMode::Agent,
        Mode::Proxy => ChainMode::Proxy,
    };
    let mut labels: Vec<(String, Duration)> = config
        .proxies
        .iter()
        .map(|proxy| {
            (
                format!("proxy `{}`", proxy.name),
                proxy.failure.startup_timeout,
            )
        })
        .collect();
    if mode == ChainMode::Agent {
        let name = config
            .agent
            .as_ref()
            .map_or("agent", crate::config::AgentSpec::name)
            .to_owned();
        labels.push((
            format!("agent `{name}`"),
            config.agent_failure.startup_timeout,
        ));
    }
    // Longer than any deadline the router keeps, so that its answer comes first.
    let patience = labels
        .iter()
        .map(|(_, timeout)| *timeout)
        .max()
        .unwrap_or_default()
        + Duration::from_secs(5);

    let shared = Shared::default();
    let (to_link, from_editor) = mpsc::unbounded_channel::<Bytes>();
    let (to_editor, from_link) = mpsc::channel::<Bytes>(64);
    let editor = tokio::spawn({
        let shared = shared.clone();
        async move {
            let mut from_link = from_link;
            let view = play_editor(mode, &to_link, &mut from_link, patience).await;
            // Before the editor's side closes, which stops the chain: exits from now on
            // are the probe's doing.
            shared.0.lock().expect("timeline").over = true;
            drop(to_link);
            // Read on until the chain has stopped, as an editor that is still there would.
            while from_link.recv().await.is_some() {}
            view
        }
    });
    run_chain(
        main,
        &config,
        mode,
        move |links| links.messages(from_editor, to_editor),
        Some(Box::new(shared.clone())),
        &SharedProxies::none(),
        crate::signals::ChainStops::Signals,
        None,
    )
    .await;
    let answer = match tokio::time::timeout(Duration::from_secs(5), editor).await {
        Ok(Ok(view)) => view,
        _ => EditorView::NoAnswer,
    };
    let timeline = std::mem::take(&mut *shared.0.lock().expect("timeline"));
    outcomes(&labels, &timeline, &answer)
}

/// What the editor heard back.
#[derive(Debug)]
enum EditorView {
    Answered,
    /// The chain answered with an error; the failed component's name and why, when the
    /// error says (`data.component`, `data.reason`, `data.stderr`).
    Failed {
        message: String,
        component: Option<String>,
        reason: Option<String>,
        stderr: Vec<String>,
    },
    NoAnswer,
}

/// Sends `initialize` (`proxy/initialize` to a conductor in proxy mode) and waits for the
/// answer; meanwhile answers what the chain asks of the editor: in proxy mode, the
/// `initialize` the last proxy sends its successor gets a stand-in agent's answer. Closes
/// the editor's side once answered, which ends the run.
async fn play_editor(
    mode: ChainMode,
    to_link: &mpsc::UnboundedSender<Bytes>,
    from_link: &mut mpsc::Receiver<Bytes>,
    patience: Duration,
) -> EditorView {
    let method = match mode {
        ChainMode::Agent => "initialize",
        ChainMode::Proxy => "proxy/initialize",
    };
    let params = serde_json::json!({
        "protocolVersion": 1,
        "clientCapabilities": {
            "fs": { "readTextFile": false, "writeTextFile": false },
            "terminal": false
        },
        "clientInfo": { "name": "acp-conductor doctor", "version": env!("CARGO_PKG_VERSION") }
    });
    let request =
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let _ = to_link.send(Bytes::from(request.to_string()));
    let deadline = tokio::time::Instant::now() + patience;
    loop {
        let frame = match tokio::time::timeout_at(deadline, from_link.recv()).await {
            Ok(Some(frame)) => frame,
            Ok(None) | Err(_) => return EditorView::NoAnswer,
        };
        let Ok(message) = serde_json::from_slice::<Value>(&frame) else {
            continue;
        };
        if let Some(method) = message.get("method").and_then(Value::as_str) {
            if let Some(id) = message.get("id") {
                let reply = stand_in_answer(method, &message, id);
                let _ = to_link.send(Bytes::from(reply.to_string()));
            }
            continue;
        }
        if message.get("id") != Some(&Value::from(1)) {
            continue;
        }
        return match message.get("error") {
            None => EditorView::Answered,
            Some(error) => {
                let data = error.get("data");
                let text = |key: &str| {
                    data.and_then(|d| d.get(key))
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                };
                EditorView::Failed {
                    message: error
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("(no message)")
                        .to_owned(),
                    component: text("component"),
                    reason: text("reason"),
                    stderr: data
                        .and_then(|d| d.get("stderr"))
                        .and_then(Value::as_array)
                        .map(|lines| {
                            lines
                                .iter()
                                .filter_map(Value::as_str)
                                .map(str::to_owned)
                                .collect()
                        })
                        .unwrap_or_default(),
                }
            }
        };
    }
}

/// The editor's answer to a request from the chain during the probe.
fn stand_in_answer(method: &str, message: &Value, id: &Value) -> Value {
    let wrapped = message.pointer("/params/method").and_then(Value::as_str);
    if matches!(method, "proxy/successor" | "_proxy/successor") && wrapped == Some("initialize") {
        return serde_json::json!({
            "jsonrpc": "2.0",
            "id": id,
            "result": {
                "protocolVersion": 1,
                "agentCapabilities": {},
                "authMethods": [],
                "agentInfo": { "name": "acp-conductor doctor (stand-in successor)", "version": env!("CARGO_PKG_VERSION") }
            }
        });
    }
    serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": { "code": -32601, "message": format!("`{method}` is not answered during doctor --probe") }
    })
}

/// Each component's outcome from what the watcher and the editor saw.
fn outcomes(
    labels: &[(String, Duration)],
    timeline: &Timeline,
    answer: &EditorView,
) -> Vec<ComponentProbe> {
    let name_of = |label: &str| {
        label
            .split_once('`')
            .map(|(_, rest)| rest.trim_end_matches('`').to_owned())
    };
    // The component the chain's error blames, else the last one that exited or never
    // answered though `initialize` reached it.
    let blamed: Option<usize> = match answer {
        EditorView::Failed {
            component: Some(component),
            ..
        } => labels
            .iter()
            .position(|(label, _)| name_of(label).as_deref() == Some(component)),
        _ => None,
    }
    .or_else(|| {
        (0..labels.len()).rev().find(|&index| {
            timeline.exited.get(index).is_some_and(Option::is_some)
                || (timeline.sent.get(index).is_some_and(Option::is_some)
                    && timeline.answered.get(index).is_some_and(Option::is_none))
        })
    });
    labels
        .iter()
        .enumerate()
        .map(|(index, (label, startup_timeout))| {
            let sent = timeline.sent.get(index).copied().flatten();
            let answered = timeline.answered.get(index).cloned().flatten();
            let outcome = match (sent, answered) {
                (Some(sent), Some((at, None))) => Outcome::Answered {
                    took: at.saturating_duration_since(sent),
                },
                (Some(_), Some(_)) if blamed.is_some_and(|b| b > index) => Outcome::PassedOnFailure,
                (Some(sent), Some((at, Some(message)))) => Outcome::Refused {
                    took: at.saturating_duration_since(sent),
                    message,
                },
                _ if blamed == Some(index) || timeline.exited[index].is_some() => {
                    failed(index, *startup_timeout, timeline, answer)
                }
                (None, _) => Outcome::NotReached,
                (Some(_), None) if blamed.is_some_and(|b| b > index) => Outcome::PassedOnFailure,
                (Some(_), None) => failed(index, *startup_timeout, timeline, answer),
            };
            ComponentProbe {
                label: label.clone(),
                startup_timeout: *startup_timeout,
                outcome,
            }
        })
        .collect()
}

fn failed(
    index: usize,
    startup_timeout: Duration,
    timeline: &Timeline,
    answer: &EditorView,
) -> Outcome {
    match failure(index, startup_timeout, timeline, answer) {
        Outcome::Failed { reason, stderr } if stderr.is_empty() => Outcome::Failed {
            reason,
            stderr: timeline.stopped_stderr[index].clone(),
        },
        other => other,
    }
}

/// Why the component at `index` failed, from the chain's error, else its exit.
fn failure(
    index: usize,
    startup_timeout: Duration,
    timeline: &Timeline,
    answer: &EditorView,
) -> Outcome {
    if let EditorView::Failed {
        reason: Some(reason),
        stderr,
        ..
    } = answer
        && let Some((exit_reason, _)) = &timeline.exited[index]
        && exit_reason != reason
    {
        // The router's reason is the one it acted on; it is the more telling one.
        return Outcome::Failed {
            reason: reason.clone(),
            stderr: stderr.clone(),
        };
    }
    if let Some((reason, stderr)) = &timeline.exited[index] {
        return Outcome::Failed {
            reason: reason.clone(),
            stderr: stderr.clone(),
        };
    }
    match answer {
        EditorView::Failed {
            reason,
            stderr,
            message,
            ..
        } => Outcome::Failed {
            reason: reason.clone().unwrap_or_else(|| message.clone()),
            stderr: stderr.clone(),
        },
        _ => Outcome::Failed {
            reason: format!(
                "did not answer `initialize` within its startup timeout ({})",
                crate::config::format_duration(startup_timeout)
            ),
            stderr: Vec::new(),
        },
    }
}
