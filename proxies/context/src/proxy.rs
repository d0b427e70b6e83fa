//! The context proxy's hooks: learn each session's `cwd` and the agent's prompt capabilities,
//! then add the configured context to a session's first (or every) prompt, after the user's
//! blocks or before them.

use std::collections::HashSet;
use std::io::Read;
use std::path::Path;

use proxy_kit::json::{array_items, array_of, set_member};
use proxy_kit::session::SessionDirectories;
use proxy_kit::{Peers, Proxy, RawValue, Request, RequestAction, ResponseAction};
use serde::Deserialize;

use crate::blocks::{ContextFile, PromptContents, Style, context_blocks};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Mode {
    /// On the first prompt of each session.
    Once,
    /// On every prompt.
    Every,
}

/// Where the context goes in the prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Placement {
    /// After the user's blocks: agents that title a session from the start of its first
    /// prompt (claude-agent-acp) see what the user wrote, not the team's rules.
    After,
    /// Before the user's blocks.
    Before,
}

#[derive(Debug, Clone)]
pub struct Config {
    /// Paths as given: absolute, or relative to the session's `cwd`.
    pub files: Vec<String>,
    pub rules: Vec<String>,
    pub mode: Mode,
    pub placement: Placement,
    /// Larger files are reported and skipped, not injected.
    pub max_file_bytes: u64,
}

pub struct ContextProxy {
    config: Config,
    /// From the agent's `promptCapabilities.embeddedContext`; text until told otherwise.
    embedded_context: bool,
    sessions: SessionDirectories,
    /// Sessions that already had their first prompt.
    prompted: HashSet<String>,
}

impl ContextProxy {
    pub fn new(mut config: Config) -> Self {
        dedup(&mut config.files);
        dedup(&mut config.rules);
        ContextProxy {
            config,
            embedded_context: false,
            sessions: SessionDirectories::new(),
            prompted: HashSet::new(),
        }
    }

    fn on_prompt(&mut self, request: &Request<'_>) -> RequestAction<Self> {
        let Ok(params) = request.parse_params::<PromptParams>() else {
            proxy_kit::warn!(
                "session/prompt {} without a readable sessionId; passed on unchanged",
                request.id()
            );
            return RequestAction::Forward;
        };
        let first = self.prompted.insert(params.session_id.clone());
        if self.config.mode == Mode::Once && !first {
            return RequestAction::Forward;
        }
        let (Some(raw_params), Some(prompt)) = (request.params(), params.prompt) else {
            return RequestAction::Forward;
        };
        let Some(items) = array_items(prompt) else {
            proxy_kit::warn!(
                "session/prompt {}: `prompt` is not an array; passed on unchanged",
                request.id()
            );
            return RequestAction::Forward;
        };
        let cwd = self.sessions.cwd(&params.session_id);
        let files = load_files(
            &self.config.files,
            cwd,
            self.config.max_file_bytes,
            &params.session_id,
        );
        let style = if self.embedded_context {
            Style::Resource
        } else {
            Style::Text
        };
        let blocks = context_blocks(
            &files,
            &self.config.rules,
            style,
            &PromptContents::of(&items),
        );
        if blocks.is_empty() {
            proxy_kit::info!(
                "session {}: nothing to add to this prompt",
                params.session_id
            );
            return RequestAction::Forward;
        }
        proxy_kit::info!(
            "session {}: added {} context block(s) as {} ({} file(s), {} rule(s))",
            params.session_id,
            blocks.len(),
            if style == Style::Resource {
                "embedded resources"
            } else {
                "text"
            },
            files.len(),
            self.config.rules.len()
        );
        let context = blocks.iter().map(|b| &**b);
        let prompt = match self.config.placement {
            Placement::After => array_of(items.into_iter().chain(context)),
            Placement::Before => array_of(context.chain(items)),
        };
        RequestAction::ForwardModified(set_member(raw_params, &["prompt"], &prompt))
    }
}

#[derive(Deserialize)]
struct PromptParams<'a> {
    #[serde(rename = "sessionId")]
    session_id: String,
    #[serde(borrow)]
    prompt: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct InitializeResult {
    #[serde(rename = "agentCapabilities", default)]
    agent_capabilities: AgentCapabilities,
}

#[derive(Deserialize, Default)]
struct AgentCapabilities {
    #[serde(rename = "promptCapabilities", default)]
    prompt_capabilities: PromptCapabilities,
}

#[derive(Deserialize, Default)]
struct PromptCapabilities {
    #[serde(rename = "embeddedContext", default)]
    embedded_context: bool,
}

impl Proxy for ContextProxy {
    fn on_editor_request(
        &mut self,
        _peers: &mut Peers<Self>,
        request: &Request<'_>,
    ) -> RequestAction<Self> {
        if let Some(action) = self
            .sessions
            .track(request, |me: &mut Self| &mut me.sessions)
        {
            return action;
        }
        match request.method() {
            "initialize" => RequestAction::forward_then(|me: &mut Self, _, response| {
                if let Some(Ok(result)) = response.parse_result::<InitializeResult>() {
                    me.embedded_context = result
                        .agent_capabilities
                        .prompt_capabilities
                        .embedded_context;
                    proxy_kit::info!(
                        "agent {} embedded context; context goes in as {}",
                        if me.embedded_context {
                            "accepts"
                        } else {
                            "does not accept"
                        },
                        if me.embedded_context {
                            "resource blocks"
                        } else {
                            "text"
                        }
                    );
                }
                ResponseAction::Forward
            }),
            "session/prompt" => self.on_prompt(request),
            _ => RequestAction::Forward,
        }
    }
}

/// Reads the configured files for one prompt. Each path counts once (two spellings of one
/// file are one file); missing, unreadable, oversized or non-UTF-8 files are logged and skipped.
fn load_files(
    sources: &[String],
    cwd: Option<&Path>,
    max_bytes: u64,
    session: &str,
) -> Vec<ContextFile> {
    let mut seen = HashSet::new();
    let mut files = Vec::new();
    for source in sources {
        let given = Path::new(source);
        let path = match (given.is_absolute(), cwd) {
            (true, _) => proxy_kit::path::normalize(given),
            (false, Some(cwd)) => proxy_kit::path::resolve(cwd, given),
            (false, None) => {
                proxy_kit::warn!(
                    "session {session}: cwd unknown, so relative context file {source} is skipped"
                );
                continue;
            }
        };
        if !seen.insert(path.clone()) {
            continue;
        }
        match read_text(&path, max_bytes) {
            Ok(text) => files.push(ContextFile {
                source: source.clone(),
                path,
                text,
            }),
            Err(reason) => proxy_kit::warn!("context file {} skipped: {reason}", path.display()),
        }
    }
    files
}

fn read_text(path: &Path, max_bytes: u64) -> Result<String, Skipped> {
    let file = std::fs::File::open(path)?;
    let mut bytes = Vec::new();
    // One byte over the limit is enough to know the file is too large.
    file.take(max_bytes + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max_bytes {
        return Err(Skipped::TooLarge(max_bytes));
    }
    String::from_utf8(bytes).map_err(|_| Skipped::NotText)
}

/// Why a context file is left out (and a warning says so).
#[derive(Debug, thiserror::Error)]
enum Skipped {
    #[error("{0}")]
    Unreadable(#[from] std::io::Error),
    #[error("larger than {0} bytes")]
    TooLarge(u64),
    #[error("not UTF-8 text")]
    NotText,
}

fn dedup(items: &mut Vec<String>) {
    let mut seen = HashSet::new();
    items.retain(|item| seen.insert(item.clone()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dedup_keeps_first_occurrences_in_order() {
        let mut v = vec![
            "b".to_string(),
            "a".into(),
            "b".into(),
            "c".into(),
            "a".into(),
        ];
        dedup(&mut v);
        assert_eq!(v, ["b", "a", "c"]);
    }

    #[test]
    fn files_load_once_per_resolved_path_and_problems_are_skipped() {
        let dir = std::env::temp_dir().join(format!("context-proxy-unit-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("docs")).unwrap();
        std::fs::write(dir.join("AGENTS.md"), "agents").unwrap();
        std::fs::write(dir.join("big.md"), "0123456789").unwrap();
        std::fs::write(dir.join("bin.md"), [0xff, 0xfe]).unwrap();
        let sources: Vec<String> = [
            "AGENTS.md",
            "docs/../AGENTS.md",
            "missing.md",
            "big.md",
            "bin.md",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let files = load_files(&sources, Some(&dir), 6, "s");
        assert_eq!(
            files,
            [ContextFile {
                source: "AGENTS.md".into(),
                path: dir.join("AGENTS.md"),
                text: "agents".into()
            }]
        );
        let absolute = dir.join("AGENTS.md").to_string_lossy().into_owned();
        assert_eq!(load_files(&[absolute], None, 100, "s").len(), 1);
        assert!(load_files(&["AGENTS.md".into()], None, 100, "s").is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
