//! The paths the full session must make the conductor write, per kind of link: each method
//! and update kind, plain or wrapped, as the judge describes the line that carried it.

use super::links::LinkKind;

/// The client→agent methods the conversation sends, after `initialize`.
pub const CLIENT_METHODS: [&str; 13] = [
    "authenticate",
    "session/new",
    "session/set_mode",
    "session/set_config_option",
    "session/prompt",
    "session/list",
    "session/load",
    "session/resume",
    "session/fork",
    "session/close",
    "session/delete",
    "_conformance/status",
    "logout",
];

/// The agent→client requests the every-path turn sends.
pub const AGENT_REQUESTS: [&str; 10] = [
    "session/request_permission",
    "fs/read_text_file",
    "fs/write_text_file",
    "terminal/create",
    "terminal/output",
    "terminal/wait_for_exit",
    "terminal/kill",
    "terminal/release",
    "elicitation/create",
    "_conformance/lint",
];

/// Every `SessionUpdate` kind of schema 1.20 (with the suite's unstable features).
pub const UPDATE_KINDS: [&str; 21] = [
    "user_message_chunk",
    "agent_message_chunk",
    "agent_thought_chunk",
    "tool_call",
    "tool_call_update",
    "plan",
    "plan_update",
    "plan_removed",
    "available_commands_update",
    "current_mode_update",
    "config_option_update",
    "session_info_update",
    "usage_update",
    "notice",
    "compaction_update",
    "compaction_summary_chunk",
    "prompt_suggestions_update",
    "cursor_update",
    "subagent_update",
    "session_message",
    "session_message_chunk",
];

/// The agent→client notifications of the every-path turn besides `session/update`.
const AGENT_NOTIFICATIONS: [&str; 3] = [
    "elicitation/complete",
    "$/cancel_request",
    "_conformance/progress",
];

/// The client→agent notifications of the conversation.
const CLIENT_NOTIFICATIONS: [&str; 3] =
    ["session/cancel", "$/cancel_request", "_conformance/focus"];

/// One expected line: on a link of `kind`, described by text containing `what`.
pub type Path = (LinkKind, String);

/// Toward the editor: every result, update, agent request and agent notification.
pub fn toward_editor(kind: LinkKind) -> Vec<Path> {
    let mut paths = vec![(kind, "error of session/prompt".to_string())];
    for method in CLIENT_METHODS {
        paths.push((kind, format!("result of {method}")));
    }
    for update in UPDATE_KINDS {
        paths.push((kind, format!("notification session/update {update}")));
    }
    for method in AGENT_REQUESTS {
        paths.push((kind, format!("request {method}")));
    }
    for notification in AGENT_NOTIFICATIONS {
        paths.push((kind, format!("notification {notification}")));
    }
    paths
}

/// Toward the agent (plain, or wrapped in `proxy/successor` toward a parent conductor):
/// every client request and notification, and the results of the agent's requests.
pub fn toward_agent(kind: LinkKind) -> Vec<Path> {
    let mut paths = vec![(kind, "request initialize".to_string())];
    for method in CLIENT_METHODS {
        paths.push((kind, format!("request {method}")));
    }
    for notification in CLIENT_NOTIFICATIONS {
        paths.push((kind, format!("notification {notification}")));
    }
    for method in AGENT_REQUESTS {
        paths.push((kind, format!("result of {method}")));
    }
    paths.push((kind, "error of session/request_permission".to_string()));
    paths
}

/// The editor's and the agent's links.
pub fn ends() -> Vec<Path> {
    let mut paths = toward_editor(LinkKind::Editor);
    paths.extend(toward_agent(LinkKind::Agent));
    paths
}

/// What a proxy of the dialect whose successor method is `successor` gets: the editor's
/// side plain after its own initialize, the agent's side wrapped, and the answers to what
/// it passes on either way.
pub fn through_proxy(successor: &str) -> Vec<Path> {
    let proxy = LinkKind::Proxy;
    let initialize = successor.replace("successor", "initialize");
    let mut paths = vec![
        (proxy, format!("request {initialize}")),
        (proxy, format!("result of initialize in {successor}")),
    ];
    for method in CLIENT_METHODS {
        paths.push((proxy, format!("request {method}")));
        paths.push((proxy, format!("result of {method} in {successor}")));
    }
    for notification in CLIENT_NOTIFICATIONS {
        paths.push((proxy, format!("notification {notification}")));
    }
    for update in UPDATE_KINDS {
        paths.push((
            proxy,
            format!("notification session/update {update} in {successor}"),
        ));
    }
    for method in AGENT_REQUESTS {
        paths.push((proxy, format!("request {method} in {successor}")));
        paths.push((proxy, format!("result of {method}")));
    }
    for notification in AGENT_NOTIFICATIONS {
        paths.push((proxy, wrapped_unless_cancel(notification, successor)));
    }
    paths.push((proxy, "error of session/request_permission".to_string()));
    paths.push((proxy, format!("error of session/prompt in {successor}")));
    paths
}

/// What a conductor in proxy mode writes to its parent: the editor's side of the
/// conversation plain, the agent's side wrapped.
pub fn toward_parent() -> Vec<Path> {
    let parent = LinkKind::Parent;
    let mut paths = vec![(parent, "result of proxy/initialize".to_string())];
    paths.extend(toward_editor(parent));
    paths.extend(toward_agent(parent).into_iter().map(|(kind, what)| {
        match what.strip_prefix("notification ") {
            Some(notification) => (kind, wrapped_unless_cancel(notification, "proxy/successor")),
            None => (kind, format!("{what} in proxy/successor")),
        }
    }));
    paths
}

/// How `notification` travels between a conductor and a proxy (or its parent) on the agent's
/// side: wrapped in `successor`, except `$/cancel_request`, which is hop-scoped and plain
/// (schema 1.20: it names that hop's request and is never wrapped).
fn wrapped_unless_cancel(notification: &str, successor: &str) -> String {
    if notification == "$/cancel_request" {
        format!("notification {notification}")
    } else {
        format!("notification {notification} in {successor}")
    }
}

/// Text found in no line the conductor writes: a `$/cancel_request` wrapped in either
/// dialect's `proxy/successor`.
pub const NEVER_WRAPPED_CANCEL: [&str; 2] = [
    "notification $/cancel_request in proxy/successor",
    "notification $/cancel_request in _proxy/successor",
];
