//! The guard's hooks: read the requests the policy is about, apply its decisions and log each
//! one with the rule that made it. The policy's rules themselves live in `policy`.

use std::collections::BTreeSet;
use std::path::PathBuf;

use proxy_kit::json::{array_items, array_of, set_member, to_raw};
use proxy_kit::session::SessionDirectories;
use proxy_kit::{
    Notification, NotificationAction, Peers, Proxy, RawValue, Request, RequestAction, RpcError,
    error_code,
};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::policy::{Access, Decision, Policy, Verdict};
use crate::tool_calls::{ToolCallFields, ToolCalls};

/// The JSON-RPC error code of a request the policy refuses.
pub const DENIED: i64 = -32000;

pub struct ToolGuard {
    policy: Policy,
    sessions: SessionDirectories,
    tool_calls: ToolCalls,
}

impl ToolGuard {
    pub fn new(policy: Policy) -> Self {
        ToolGuard {
            policy,
            sessions: SessionDirectories::new(),
            tool_calls: ToolCalls::default(),
        }
    }

    fn on_permission(&mut self, request: &Request<'_>) -> RequestAction<Self> {
        let params = match request.parse_params::<PermissionParams>() {
            Ok(params) => params,
            Err(e) => {
                proxy_kit::warn!(
                    "ask: permission request {} not understood ({e}); the editor asks the user",
                    request.id()
                );
                return RequestAction::Forward;
            }
        };
        let cwd = self.sessions.cwd(&params.session_id);
        let call = self
            .tool_calls
            .facts(&params.session_id, params.tool_call, cwd);
        let what = format!(
            "permission for {:?} (kind {}, {} location(s)) in session {}",
            call.title.as_deref().unwrap_or(""),
            call.kind.as_deref().unwrap_or("other"),
            call.locations.len() + usize::from(call.unresolved_locations),
            params.session_id
        );
        let Some(rule) = self.policy.permission(&call, cwd) else {
            proxy_kit::info!("ask: {what}: no permission rule matches; the editor asks the user");
            return RequestAction::Forward;
        };
        let label = &rule.label;
        match rule.decision {
            Decision::Ask => {
                proxy_kit::info!("ask: {what} by {label}; the editor asks the user");
                RequestAction::Forward
            }
            Decision::Allow => match choose(&params.options, "allow_once", "allow_always") {
                Some(option) => {
                    proxy_kit::info!("allow: {what} by {label} (option {option:?})");
                    RequestAction::respond(selected(option))
                }
                None => {
                    proxy_kit::warn!(
                        "ask: {what} is allowed by {label}, but no allow option is offered; the editor asks the user"
                    );
                    RequestAction::Forward
                }
            },
            Decision::Deny => match choose(&params.options, "reject_once", "reject_always") {
                Some(option) => {
                    proxy_kit::info!("deny: {what} by {label} (option {option:?})");
                    RequestAction::respond(selected(option))
                }
                None => {
                    proxy_kit::info!(
                        "deny: {what} by {label} (no reject option offered; answered `cancelled`)"
                    );
                    RequestAction::respond(cancelled())
                }
            },
        }
    }

    fn on_file(&mut self, request: &Request<'_>, access: Access) -> RequestAction<Self> {
        let method = request.method();
        let params = match request.parse_params::<FileParams>() {
            Ok(params) => params,
            Err(e) => return unreadable(method, &e),
        };
        let verb = match access {
            Access::Read => "read of",
            Access::Write => "write to",
        };
        let shown = params.path.display();
        if !params.path.is_absolute() {
            let rule = "ACP (paths must be absolute)";
            proxy_kit::info!("deny: {method} {shown} by {rule}");
            return deny(
                format!("{verb} {shown}"),
                rule,
                json!({ "path": params.path, "rule": rule }),
            );
        }
        let path = proxy_kit::path::normalize(&params.path);
        let cwd = self.sessions.cwd(&params.session_id);
        match self.policy.file_access(access, &path, cwd) {
            Verdict::Allow { rule } => {
                proxy_kit::info!("allow: {method} {} by {rule}", path.display());
                RequestAction::Forward
            }
            Verdict::Deny { rule } => {
                proxy_kit::info!("deny: {method} {} by {rule}", path.display());
                let data = json!({ "path": path, "rule": rule });
                deny(format!("{verb} {}", path.display()), &rule, data)
            }
        }
    }

    fn on_terminal(&mut self, request: &Request<'_>) -> RequestAction<Self> {
        let params = match request.parse_params::<TerminalParams>() {
            Ok(params) => params,
            Err(e) => return unreadable(request.method(), &e),
        };
        let line = std::iter::once(params.command.as_str())
            .chain(params.args.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" ");
        match self.policy.command(&line) {
            Verdict::Allow { rule } => {
                proxy_kit::info!("allow: terminal/create {line:?} by {rule}");
                RequestAction::Forward
            }
            Verdict::Deny { rule } => {
                proxy_kit::info!("deny: terminal/create {line:?} by {rule}");
                let data = json!({ "command": line, "rule": rule });
                deny(format!("command {line:?}"), &rule, data)
            }
        }
    }

    fn on_prompt(&mut self, request: &Request<'_>) -> RequestAction<Self> {
        let (Some(raw_params), Ok(params)) =
            (request.params(), request.parse_params::<PromptParams>())
        else {
            proxy_kit::warn!(
                "session/prompt {} not understood; passed on without redaction",
                request.id()
            );
            return RequestAction::Forward;
        };
        let Some(items) = array_items(params.prompt) else {
            proxy_kit::warn!(
                "session/prompt {}: `prompt` is not an array; passed on without redaction",
                request.id()
            );
            return RequestAction::Forward;
        };
        let mut rules = BTreeSet::new();
        let redacted: Vec<Option<Box<RawValue>>> = items
            .iter()
            .map(|item| {
                let (path, text): (&[&str], String) =
                    match serde_json::from_str::<Block>(item.get()) {
                        Ok(Block {
                            kind,
                            text: Some(text),
                            ..
                        }) if kind == "text" => (&["text"], text),
                        Ok(Block {
                            kind,
                            resource: Some(ResourceText { text: Some(text) }),
                            ..
                        }) if kind == "resource" => (&["resource", "text"], text),
                        _ => return None,
                    };
                let (clean, hits) = self.policy.redact(&text)?;
                rules.extend(hits);
                Some(set_member(item, path, &to_raw(&clean)))
            })
            .collect();
        let changed = redacted.iter().filter(|r| r.is_some()).count();
        if changed == 0 {
            return RequestAction::Forward;
        }
        proxy_kit::info!(
            "redact: session/prompt of session {}: {changed} block(s) by {}",
            params.session_id,
            rules.into_iter().collect::<Vec<_>>().join(", ")
        );
        let prompt = array_of(
            items
                .iter()
                .zip(&redacted)
                .map(|(original, new)| new.as_deref().unwrap_or(original)),
        );
        RequestAction::ForwardModified(set_member(raw_params, &["prompt"], &prompt))
    }
}

impl Proxy for ToolGuard {
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
        if request.method() == "session/prompt" && !self.policy.redactions.is_empty() {
            return self.on_prompt(request);
        }
        RequestAction::Forward
    }

    fn on_agent_request(
        &mut self,
        _peers: &mut Peers<Self>,
        request: &Request<'_>,
    ) -> RequestAction<Self> {
        match request.method() {
            "session/request_permission" => self.on_permission(request),
            "fs/read_text_file" => self.on_file(request, Access::Read),
            "fs/write_text_file" => self.on_file(request, Access::Write),
            "terminal/create" => self.on_terminal(request),
            _ => RequestAction::Forward,
        }
    }

    fn on_agent_notification(
        &mut self,
        _peers: &mut Peers<Self>,
        notification: &Notification<'_>,
    ) -> NotificationAction {
        if notification.method() == "session/update"
            && let Some(params) = notification.params()
        {
            self.tool_calls.observe(params.get());
        }
        NotificationAction::Forward
    }
}

#[derive(Deserialize)]
struct PermissionParams {
    #[serde(rename = "sessionId")]
    session_id: String,
    #[serde(rename = "toolCall", default)]
    tool_call: ToolCallFields,
    options: Vec<PermissionOption>,
}

#[derive(Deserialize)]
struct PermissionOption {
    #[serde(rename = "optionId")]
    option_id: String,
    kind: String,
}

#[derive(Deserialize)]
struct FileParams {
    #[serde(rename = "sessionId")]
    session_id: String,
    path: PathBuf,
}

#[derive(Deserialize)]
struct TerminalParams {
    command: String,
    #[serde(default)]
    args: Vec<String>,
}

#[derive(Deserialize)]
struct PromptParams<'a> {
    #[serde(rename = "sessionId")]
    session_id: String,
    #[serde(borrow)]
    prompt: &'a RawValue,
}

#[derive(Deserialize)]
struct Block {
    #[serde(rename = "type")]
    kind: String,
    text: Option<String>,
    resource: Option<ResourceText>,
}

#[derive(Deserialize)]
struct ResourceText {
    text: Option<String>,
}

/// The id of the first option of kind `preferred`, else of the first of kind `fallback`.
/// `_once` is preferred so the policy, not the agent's memory, decides the next time too.
fn choose<'a>(options: &'a [PermissionOption], preferred: &str, fallback: &str) -> Option<&'a str> {
    let of_kind = |kind: &str| {
        options
            .iter()
            .find(|o| o.kind == kind)
            .map(|o| o.option_id.as_str())
    };
    of_kind(preferred).or_else(|| of_kind(fallback))
}

/// A permission outcome, members in the order the ACP docs show them.
#[derive(Serialize)]
struct PermissionResult<'a> {
    outcome: Outcome<'a>,
}

#[derive(Serialize)]
struct Outcome<'a> {
    outcome: &'static str,
    #[serde(rename = "optionId", skip_serializing_if = "Option::is_none")]
    option_id: Option<&'a str>,
}

fn selected(option: &str) -> PermissionResult<'_> {
    PermissionResult {
        outcome: Outcome {
            outcome: "selected",
            option_id: Some(option),
        },
    }
}

fn cancelled() -> PermissionResult<'static> {
    PermissionResult {
        outcome: Outcome {
            outcome: "cancelled",
            option_id: None,
        },
    }
}

/// `data` is written with its keys in alphabetical order, so the bytes are the same
/// whether or not serde_json's `preserve_order` is enabled in the build.
fn deny(what: String, rule: &str, data: serde_json::Value) -> RequestAction<ToolGuard> {
    RequestAction::Fail(
        RpcError::new(DENIED, format!("tool-guard: {what} denied by {rule}")).with_data(data),
    )
}

/// A guarded request whose params cannot be read is refused: it cannot be checked.
fn unreadable(method: &str, error: &serde_json::Error) -> RequestAction<ToolGuard> {
    proxy_kit::info!("deny: {method} with unreadable params ({error})");
    RequestAction::Fail(RpcError::new(
        error_code::INVALID_PARAMS,
        format!("tool-guard: cannot check {method}: {error}"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(kinds: &[&str]) -> Vec<PermissionOption> {
        kinds
            .iter()
            .enumerate()
            .map(|(i, k)| PermissionOption {
                option_id: format!("{i}-{k}"),
                kind: k.to_string(),
            })
            .collect()
    }

    #[test]
    fn once_options_are_preferred_over_always() {
        let o = options(&["allow_always", "reject_always", "allow_once", "reject_once"]);
        assert_eq!(
            choose(&o, "allow_once", "allow_always"),
            Some("2-allow_once")
        );
        assert_eq!(
            choose(&o, "reject_once", "reject_always"),
            Some("3-reject_once")
        );
        let always = options(&["reject_always", "allow_always"]);
        assert_eq!(
            choose(&always, "allow_once", "allow_always"),
            Some("1-allow_always")
        );
        assert_eq!(
            choose(&options(&["allow_once"]), "reject_once", "reject_always"),
            None
        );
    }
}
