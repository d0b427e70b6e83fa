//! The two lines a person reads at `info`: one when the chain is up (each component: how it
//! was launched, its dialect, how long it took to start) and one when the run ends (why, how
//! long it ran, how many requests were answered with errors). Keeps timestamps and counts
//! for them; decides nothing about routing.
//!
//! A component's start time is from its launch to the first message it sent: a proxy's
//! forwarded `initialize`, the agent's answer to it. That covers an `npx` fetching a package
//! or a WASM module compiling, which is what a person waiting for an editor wants to see.

use std::fmt::Write as _;
use std::time::Duration;

use acp_wire::successor::Dialect;
use std::time::Instant;

use super::components::{LaunchKind, Launched};
use super::recovery::Health;
use super::{Components, Role, Router, RunState};
use crate::link::LinkId;

/// What the run log has gathered so far.
#[derive(Debug)]
pub(super) struct RunLog {
    /// When the router was made, just after the components were launched.
    created: Instant,
    /// When each chain link first sent something, until the chain is up.
    first_heard: Vec<Option<Instant>>,
    up: bool,
    /// Why the run ends: the first reason given wins.
    ending: Option<String>,
    answers: Answers,
}

impl RunLog {
    /// The log of a router made at `created`.
    pub(super) fn new(created: Instant) -> Self {
        RunLog {
            created,
            first_heard: Vec::new(),
            up: false,
            ending: None,
            answers: Answers::default(),
        }
    }
}

/// Responses the conductor wrote, by who had asked.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Answers {
    /// The editor's requests (in proxy mode, the parent conductor's).
    pub editor: u64,
    pub editor_errors: u64,
    /// Requests of proxies, the agent and its MCP clients.
    pub components: u64,
    pub component_errors: u64,
}

/// How a run ended, for the line that says so (the caller knows how long it ran).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndOfRun {
    pub why: String,
    /// Who the editor is: `editor`, or in proxy mode `parent conductor`.
    pub editor: String,
    pub answers: Answers,
}

impl EndOfRun {
    /// The line logged when the run is over, after `ran`.
    pub fn describe(&self, ran: Duration) -> String {
        let a = &self.answers;
        format!(
            "chain ended after {}: {}; requests answered with an error: {} of {} from the {}, {} of {} from components",
            human(ran),
            self.why,
            a.editor_errors,
            a.editor,
            self.editor,
            a.component_errors,
            a.components,
        )
    }
}

/// One component as the chain-up line shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComponentUp {
    pub name: String,
    pub role: Role,
    pub launched: Option<Launched>,
    /// Proxies only.
    pub dialect: Option<Dialect>,
    /// From its launch to its first message.
    pub ready_after: Option<Duration>,
    pub bypassed: bool,
}

/// The line logged when the chain is up, `after` its components were launched.
pub fn chain_up_line(after: Duration, components: &[ComponentUp]) -> String {
    let mut line = format!("chain up after {}:", human(after));
    if components.is_empty() {
        line.push_str(" no components");
    }
    for (i, c) in components.iter().enumerate() {
        let sep = if i == 0 { " " } else { " → " };
        let _ = write!(line, "{sep}{} ({}", c.name, c.role.noun());
        match &c.launched {
            Some(Launched { kind, .. }) => match kind {
                LaunchKind::Native { pid } => push_pid(&mut line, "native", *pid),
                LaunchKind::Builtin { pid } => push_pid(&mut line, "builtin", *pid),
                LaunchKind::Wasm { module } => {
                    let _ = write!(line, ", wasm {}", module.display());
                }
                LaunchKind::Remote { url } => {
                    let _ = write!(line, ", remote {url}");
                }
                LaunchKind::Shared => line.push_str(", shared by every connection"),
            },
            None => line.push_str(", not started"),
        }
        match c.dialect {
            Some(Dialect::Rfd) => line.push_str(", dialect proxy/*"),
            Some(Dialect::Underscore) => line.push_str(", dialect _proxy/*"),
            None => {}
        }
        if c.bypassed {
            line.push_str(", bypassed after it failed");
        } else if let Some(ready) = c.ready_after {
            let _ = write!(line, ", started in {}", human(ready));
        }
        line.push(')');
    }
    line
}

fn push_pid(line: &mut String, kind: &str, pid: Option<i32>) {
    match pid {
        Some(pid) => {
            let _ = write!(line, ", {kind} pid {pid}");
        }
        None => {
            let _ = write!(line, ", {kind}");
        }
    }
}

/// `850ms`, `4.2s`, `3m07s`.
fn human(d: Duration) -> String {
    let ms = d.as_millis();
    if ms < 1000 {
        format!("{ms}ms")
    } else if ms < 60_000 {
        format!("{:.1}s", d.as_secs_f64())
    } else {
        let s = d.as_secs();
        format!("{}m{:02}s", s / 60, s % 60)
    }
}

impl<C: Components> Router<C> {
    /// Frames arrived on `link`: the first ones say when its component had started.
    pub(super) fn heard_from(&mut self, link: LinkId) {
        let now = self.now;
        let log = &mut self.run_log;
        if log.up {
            return;
        }
        if log.first_heard.len() <= link.0 {
            log.first_heard.resize(link.0 + 1, None);
        }
        log.first_heard[link.0].get_or_insert(now);
    }

    /// The editor has been answered its `initialize`: the chain is up; says so once.
    pub(super) fn chain_up(&mut self) {
        if std::mem::replace(&mut self.run_log.up, true) {
            return;
        }
        let now = self.now;
        let components: Vec<ComponentUp> = (1..self.positions.len())
            .map(|position| {
                let link = self.at(position);
                let state = &self.links[link];
                let launched = self.components.launched(position);
                let heard = self.run_log.first_heard.get(link.0).copied().flatten();
                ComponentUp {
                    name: state.name.clone(),
                    role: state.role,
                    dialect: (state.role == Role::Proxy).then_some(state.dialect),
                    ready_after: launched
                        .as_ref()
                        .zip(heard)
                        .map(|(l, heard)| heard.saturating_duration_since(l.at)),
                    launched,
                    bypassed: matches!(self.positions[position].health, Health::Bypassed),
                }
            })
            .collect();
        let since = components
            .iter()
            .filter_map(|c| c.launched.as_ref().map(|l| l.at))
            .min()
            .unwrap_or(self.run_log.created);
        tracing::info!("{}", chain_up_line(now - since, &components));
        self.run_log.first_heard = Vec::new();
    }

    /// Records why the run is ending, unless an earlier reason was recorded.
    pub(super) fn ending(&mut self, why: impl Into<String>) {
        self.run_log.ending.get_or_insert_with(|| why.into());
    }

    /// A response (an error or not) written to `to`, which had asked.
    pub(super) fn count_answer(&mut self, to: LinkId, error: bool) {
        let a = &mut self.run_log.answers;
        let (all, errors) = if self.links.contains(to) && self.links[to].role == Role::Editor {
            (&mut a.editor, &mut a.editor_errors)
        } else {
            (&mut a.components, &mut a.component_errors)
        };
        *all += 1;
        *errors += u64::from(error);
    }

    /// Why and how the run ended, once [`run`](Self::run) has returned.
    pub fn end_of_run(&self) -> EndOfRun {
        let why = self
            .run_log
            .ending
            .clone()
            .unwrap_or_else(|| match self.state {
                RunState::Failed(ref f) => f.message.clone(),
                _ => "every link closed".to_string(),
            });
        EndOfRun {
            why,
            editor: self.links[self.editor()].name.clone(),
            answers: self.run_log.answers,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    fn at(ms: u64, base: Instant) -> Instant {
        base + Duration::from_millis(ms)
    }

    #[test]
    fn the_chain_up_line_names_each_component_how_it_runs_and_how_long_it_took() {
        let base = Instant::now();
        let components = [
            ComponentUp {
                name: "context".into(),
                role: Role::Proxy,
                launched: Some(Launched {
                    kind: LaunchKind::Native { pid: Some(4242) },
                    at: at(0, base),
                }),
                dialect: Some(Dialect::Rfd),
                ready_after: Some(Duration::from_millis(12)),
                bypassed: false,
            },
            ComponentUp {
                name: "notes".into(),
                role: Role::Proxy,
                launched: Some(Launched {
                    kind: LaunchKind::Wasm {
                        module: PathBuf::from("/opt/notes.wasm"),
                    },
                    at: at(1, base),
                }),
                dialect: Some(Dialect::Underscore),
                ready_after: Some(Duration::from_millis(1530)),
                bypassed: false,
            },
            ComponentUp {
                name: "lint".into(),
                role: Role::Proxy,
                launched: None,
                dialect: Some(Dialect::Rfd),
                ready_after: None,
                bypassed: true,
            },
            ComponentUp {
                name: "demo".into(),
                role: Role::Agent,
                launched: Some(Launched {
                    kind: LaunchKind::Builtin { pid: Some(4250) },
                    at: at(2, base),
                }),
                dialect: None,
                ready_after: Some(Duration::from_secs(125)),
                bypassed: false,
            },
        ];
        assert_eq!(
            chain_up_line(Duration::from_millis(2048), &components),
            "chain up after 2.0s: context (proxy, native pid 4242, dialect proxy/*, started in 12ms) \
             → notes (proxy, wasm /opt/notes.wasm, dialect _proxy/*, started in 1.5s) \
             → lint (proxy, not started, dialect proxy/*, bypassed after it failed) \
             → demo (agent, builtin pid 4250, started in 2m05s)"
        );
        assert_eq!(
            chain_up_line(Duration::ZERO, &[]),
            "chain up after 0ms: no components"
        );
    }

    #[test]
    fn the_end_line_says_why_how_long_and_how_many_errors() {
        let end = EndOfRun {
            why: "the editor closed the conductor's stdin".into(),
            editor: "editor".into(),
            answers: Answers {
                editor: 41,
                editor_errors: 2,
                components: 3,
                component_errors: 0,
            },
        };
        assert_eq!(
            end.describe(Duration::from_millis(12_345)),
            "chain ended after 12.3s: the editor closed the conductor's stdin; requests answered with an error: \
             2 of 41 from the editor, 0 of 3 from components"
        );
        let nested = EndOfRun {
            why: "the conductor received SIGTERM".into(),
            editor: "parent conductor".into(),
            answers: Answers::default(),
        };
        assert_eq!(
            nested.describe(Duration::from_secs(187)),
            "chain ended after 3m07s: the conductor received SIGTERM; requests answered with an error: \
             0 of 0 from the parent conductor, 0 of 0 from components"
        );
    }
}
